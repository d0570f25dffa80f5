// The entities a batch of facts needs, each merged once on the constrained (ns, name) key.
UNWIND $entities AS e
MERGE (n:Entity {ns: $ns, name: e.name})
  ON CREATE SET n.search = e.search, n.aliases = []
// The words the batch's new facts were said in, for the entities they name (first $said_cap kept).
WITH n, e WHERE size(e.said) > 0
SET n.said = (coalesce(n.said, []) + [x IN e.said WHERE NOT x IN coalesce(n.said, [])])[..$said_cap]
SET n.said_search = reduce(acc = '', x IN n.said | acc + ' ' + $tag + '_' + x)
