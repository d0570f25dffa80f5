// The newest $limit facts of one relationship type (written in by with_type) in this
// namespace, current or valid at $as_of, when it holds for at most $max_subjects
// subjects; nothing when it holds for more. Starts from the type's relationships
// and stops at the subject one too many, so a widespread relation costs little.
// Pinned to $at when given, else to the namespace's sequence number as the read
// starts (see facts_of.cypher).
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
WITH CASE WHEN $at IS NULL THEN coalesce(m.seq, 0) ELSE $at END AS at
WITH at, CASE WHEN $as_of IS NULL OR $as_of > at THEN at ELSE $as_of END AS seen
CALL (seen) {
  MATCH (s)-[r:`TYPE`]->() USING SCAN r:`TYPE`
  WHERE s.ns = $ns AND r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen)
  WITH DISTINCT s LIMIT $max_subjects + 1
  RETURN collect(s) AS subjects
}
WITH at, seen, subjects WHERE size(subjects) <= $max_subjects
CALL (subjects, seen) {
  UNWIND subjects AS s
  MATCH (s)-[r:`TYPE`]->(o)
  WHERE r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen)
  RETURN s, r, o ORDER BY r.seq DESC LIMIT $limit
}
RETURN s.name AS s, type(r) AS p, o.name AS o, r.seq AS seq, r.valid_from AS valid_from,
       CASE WHEN r.valid_to > at THEN null ELSE r.valid_to END AS valid_to,
       r.speaker AS speaker, r.turn_id AS turn_id, r.fact_id AS fact_id, r.text AS text
