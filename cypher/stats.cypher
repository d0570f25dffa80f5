// Counts for one namespace.
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
CALL {
  MATCH (e:Entity {ns: $ns})
  RETURN count(e) AS entities
}
CALL {
  MATCH (s:Entity {ns: $ns})-[r]->()
  RETURN count(r) AS facts, count(CASE WHEN r.valid_to IS NULL THEN 1 END) AS current_facts
}
RETURN facts, current_facts, entities, size(coalesce(m.predicates, [])) AS predicates,
       coalesce(m.seq, 0) AS last_seq
