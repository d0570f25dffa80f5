// A loaded memory's entities, with their index stems and aliases.
UNWIND $entities AS e
CREATE (n:Entity {ns: $ns, name: e.name})
SET n.search = e.search, n.aliases = e.aliases, n.said = e.said, n.said_search = e.said_search
