// Every fact of a subject (and predicate), current and closed, oldest first; the
// newest $limit when given. Pinned to the namespace's sequence number as the read
// starts, or to $at (see facts_of.cypher): a supersession in flight is seen whole
// or not at all; `at` and `since` let the reader tell a read that met the last
// write, which may still be being applied (see current_of.cypher).
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
WITH coalesce($at, m.seq, 0) AS at, coalesce(m.last_write_from, m.seq, 0) AS since
MATCH (s:Entity {ns: $ns, name: $subject})-[r]->(o:Entity) USING INDEX SEEK s:Entity(ns, name)
WHERE ($predicate IS NULL OR type(r) = $predicate) AND r.valid_from <= at
WITH s, r, o, at, since ORDER BY r.seq DESC LIMIT coalesce($limit, 9223372036854775807)
RETURN s.name AS s, type(r) AS p, o.name AS o, r.seq AS seq, r.valid_from AS valid_from,
       CASE WHEN r.valid_to > at THEN null ELSE r.valid_to END AS valid_to,
       r.speaker AS speaker, r.turn_id AS turn_id, r.fact_id AS fact_id, r.text AS text,
       at, since, false AS witness
ORDER BY seq
