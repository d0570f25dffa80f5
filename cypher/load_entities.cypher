// A loaded memory's entities, with their index stems and aliases, and each one's
// element id (create_facts finds them by it), in one record.
UNWIND $entities AS e
CREATE (n:Entity {ns: $ns, name: e.name})
SET n.search = e.search, n.aliases = e.aliases, n.said = e.said, n.said_search = e.said_search,
    n.changed = 1
RETURN collect(e.name) AS names, collect(elementId(n)) AS ids
