// One current fact of one relationship type (written in by with_type) in this
// namespace: an example of how the predicate is used.
CALL () {
  MATCH (s)-[r:`TYPE`]->(o) USING SCAN r:`TYPE`
  WHERE s.ns = $ns AND r.valid_to IS NULL
  RETURN s, r, o LIMIT 1
}
RETURN s.name AS s, type(r) AS p, o.name AS o, r.seq AS seq, r.valid_from AS valid_from,
       r.valid_to AS valid_to, r.speaker AS speaker, r.turn_id AS turn_id, r.fact_id AS fact_id, r.text AS text
