// Every namespace on the server (every memory node's, and any entity's without
// one), with its counts; $ns is not used: this looks across namespaces.
CALL {
  MATCH (m:CtxneoMemory) RETURN m.ns AS ns
  UNION
  MATCH (e:Entity) RETURN DISTINCT e.ns AS ns
}
CALL {
  WITH ns
  MATCH (e:Entity {ns: ns})
  RETURN count(e) AS entities
}
CALL {
  WITH ns
  MATCH (:Entity {ns: ns})-[r]->()
  RETURN count(r) AS facts, count(CASE WHEN r.valid_to IS NULL THEN 1 END) AS current_facts
}
OPTIONAL MATCH (m:CtxneoMemory {ns: ns})
RETURN ns, facts, current_facts, entities, coalesce(m.seq, 0) AS last_seq
ORDER BY ns
