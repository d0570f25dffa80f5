// The newest $limit facts of one relationship type (written in by with_type) in this
// namespace, current or valid at $as_of, when it holds for at most $max_subjects
// subjects; nothing when it holds for more. Starts from the type's relationships
// and stops at the subject one too many, so a widespread relation costs little.
CALL () {
  MATCH (s)-[r:`TYPE`]->()
  WHERE s.ns = $ns
    AND (($as_of IS NULL AND r.valid_to IS NULL)
      OR ($as_of IS NOT NULL AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)))
  WITH DISTINCT s LIMIT $max_subjects + 1
  RETURN collect(s) AS subjects
}
WITH subjects WHERE size(subjects) <= $max_subjects
CALL (subjects) {
  UNWIND subjects AS s
  MATCH (s)-[r:`TYPE`]->(o)
  WHERE ($as_of IS NULL AND r.valid_to IS NULL)
     OR ($as_of IS NOT NULL AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of))
  RETURN s, r, o ORDER BY r.seq DESC LIMIT $limit
}
RETURN s.name AS s, type(r) AS p, o.name AS o, r.seq AS seq, r.valid_from AS valid_from,
       r.valid_to AS valid_to, r.speaker AS speaker, r.turn_id AS turn_id, r.fact_id AS fact_id, r.text AS text
