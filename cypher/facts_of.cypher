// Facts touching each entity (either direction), current or valid at $as_of
// (or all, with $history), newest first, at most $limit per entity. Of some
// predicates only, the pattern is narrowed to their types (cypher.with_types).
// Pinned to $at when given (one question's reads see one state), else to the
// namespace's sequence number as this read starts (`at`): a write
// committing while the read walks the graph adds facts after `at` (left out) and
// closes facts after `at` (shown as they stood), so the read sees it whole or
// not at all, never an old value closed with its successor missing. The write
// numbered `at` itself may still be being applied: facts it closed come back as
// witnesses (see current_of.cypher), not answers.
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
WITH CASE WHEN $at IS NULL THEN coalesce(m.seq, 0) ELSE $at END AS at,
     coalesce(m.last_write_from, m.seq, 0) AS since
WITH at, since, CASE WHEN $as_of IS NULL OR $as_of > at THEN at ELSE $as_of END AS seen
UNWIND $names AS name
MATCH (e:Entity {ns: $ns, name: name}) USING INDEX SEEK e:Entity(ns, name)
CALL (e, at, seen, since) {
  MATCH (e)-[r]-()
  WHERE r.valid_from <= at
  AND ($history OR r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen))
  WITH DISTINCT r
  RETURN r, false AS witness ORDER BY r.seq DESC LIMIT $limit
  UNION
  MATCH (e)-[r]-()
  WHERE NOT $history AND r.valid_to >= since AND r.valid_to <= at
  RETURN DISTINCT r, true AS witness
}
WITH DISTINCT r, witness, at, since
RETURN startNode(r).name AS s, type(r) AS p, endNode(r).name AS o, r.seq AS seq,
       r.valid_from AS valid_from, CASE WHEN r.valid_to > at THEN null ELSE r.valid_to END AS valid_to,
       r.speaker AS speaker, r.turn_id AS turn_id, r.fact_id AS fact_id, r.text AS text,
       at, since, witness
ORDER BY seq DESC
