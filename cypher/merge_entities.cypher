// The entities a batch of facts needs, each merged once on the constrained (ns, name)
// key, and each one's element id: create_facts finds them by it, a seek on the
// node itself where a lookup by name is an index seek per end of every fact.
UNWIND $entities AS e
MERGE (n:Entity {ns: $ns, name: e.name})
  ON CREATE SET n.search = e.search, n.aliases = []
WITH n, e
// The words the batch's new facts were said in, for the entities they name (first $said_cap kept).
CALL (n, e) {
  WITH * WHERE size(e.said) > 0
  SET n.said = (coalesce(n.said, []) + [x IN e.said WHERE NOT x IN coalesce(n.said, [])])[..$said_cap]
  SET n.said_search = reduce(acc = '', x IN n.said | acc + ' ' + $tag + '_' + x)
}
// (one row: a record per entity costs the client more than the list)
RETURN collect(e.name) AS names, collect(elementId(n)) AS ids
