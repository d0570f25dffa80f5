// The entities a batch of facts needs, each merged once on the constrained (ns, name) key.
UNWIND $entities AS e
MERGE (n:Entity {ns: $ns, name: e.name})
  ON CREATE SET n.search = e.search, n.aliases = []
