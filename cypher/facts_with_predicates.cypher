// Facts of each of several predicates in this namespace, current or valid at $as_of,
// newest first, at most $limit per predicate: one round trip for what a question's
// relation words name.
UNWIND $predicates AS predicate
CALL (predicate) {
  MATCH (s:Entity)-[r:$(predicate)]->(o:Entity)
  WHERE s.ns = $ns
    AND (($as_of IS NULL AND r.valid_to IS NULL)
      OR ($as_of IS NOT NULL AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)))
  RETURN s, r, o ORDER BY r.seq DESC LIMIT $limit
}
RETURN s.name AS s, type(r) AS p, o.name AS o, r.seq AS seq, r.valid_from AS valid_from,
       r.valid_to AS valid_to, r.speaker AS speaker, r.turn_id AS turn_id, r.fact_id AS fact_id, r.text AS text
ORDER BY p, seq DESC
