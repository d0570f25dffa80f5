// The rest of a write, in one statement (one round trip whatever the batch): close
// the facts write_read found, by element id (checked against their sequence number
// and namespace), merge each entity the new facts name once, create the facts
// between them (by position in that list: no second lookup of each end; a fact
// made and closed within the batch is created closed) and advance the counter.
// The write's id marks what it created or closed (see find_write). The
// relationship type is the fact's predicate, validated before it gets here.
CALL () {
  UNWIND $closes AS c
  MATCH (s:Entity)-[r]->()
  WHERE elementId(r) = c.id AND r.seq = c.seq AND s.ns = $ns
  SET r.valid_to = c.at, r.closed_by = $write_id
}
CALL () {
  UNWIND $entities AS e
  MERGE (n:Entity {ns: $ns, name: e.name})
    ON CREATE SET n.search = e.search, n.aliases = []
  // The words the new facts were said in, for the entities they name (first $said_cap kept).
  FOREACH (_ IN CASE WHEN size(e.said) > 0 THEN [1] ELSE [] END |
    SET n.said = (coalesce(n.said, []) + [x IN e.said WHERE NOT x IN coalesce(n.said, [])])[..$said_cap]
    SET n.said_search = reduce(acc = '', x IN n.said | acc + ' ' + $tag + '_' + x)
  )
  // In the list's order, which the facts' positions refer to.
  WITH n, e ORDER BY e.i
  RETURN collect(n) AS nodes
}
CALL (nodes) {
  UNWIND $facts AS f
  WITH nodes[f.s] AS s, nodes[f.o] AS o, f
  CREATE (s)-[r:$(f.p)]->(o)
  SET r.seq = f.seq, r.valid_from = f.seq, r.valid_to = f.valid_to, r.speaker = f.speaker,
      r.turn_id = f.turn_id, r.fact_id = f.fact_id, r.text = f.text, r.write_id = $write_id
}
MATCH (m:CtxneoMemory {ns: $ns})
SET m.seq = $seq, m.multi = $multi, m.predicates = $predicates
