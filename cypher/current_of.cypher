// The current facts of a subject, of one predicate when $predicate is given, oldest
// first. Pinned to the namespace's sequence number as the read starts, or to $at
// (see facts_of.cypher): a supersession committing after it is seen whole or not
// at all. One committed at `at` itself may still be being applied as this read
// runs, its successor not yet visible: rows closed by the last write (from
// `since` on) come back as witnesses, so that the reader can tell it met that
// write and read again (Neo4jStore._read_settled); they are not answers.
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
WITH coalesce($at, m.seq, 0) AS at, coalesce(m.last_write_from, m.seq, 0) AS since
MATCH (s:Entity {ns: $ns, name: $subject})-[r]->(o:Entity) USING INDEX SEEK s:Entity(ns, name)
WHERE ($predicate IS NULL OR type(r) = $predicate) AND r.valid_from <= at
  AND (r.valid_to IS NULL OR r.valid_to > at OR r.valid_to >= since)
RETURN s.name AS s, type(r) AS p, o.name AS o, r.seq AS seq, r.valid_from AS valid_from,
       CASE WHEN r.valid_to > at THEN null ELSE r.valid_to END AS valid_to,
       r.speaker AS speaker, r.turn_id AS turn_id, r.fact_id AS fact_id, r.text AS text,
       at, since, r.valid_to IS NOT NULL AND r.valid_to <= at AS witness
ORDER BY seq
