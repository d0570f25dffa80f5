// Facts touching each entity (either direction), current or valid at $as_of
// (or all, with $history), of the $predicates when given, newest first, at most
// $limit per entity.
UNWIND $names AS name
MATCH (e:Entity {ns: $ns, name: name})
CALL {
  WITH e
  MATCH (e)-[r]-()
  WHERE ($predicates IS NULL OR type(r) IN $predicates)
  AND ($history
     OR ($as_of IS NULL AND r.valid_to IS NULL)
     OR ($as_of IS NOT NULL AND r.valid_from <= $as_of AND (r.valid_to IS NULL OR r.valid_to > $as_of)))
  WITH DISTINCT r
  RETURN r ORDER BY r.seq DESC LIMIT $limit
}
WITH DISTINCT r
RETURN startNode(r).name AS s, type(r) AS p, endNode(r).name AS o, r.seq AS seq,
       r.valid_from AS valid_from, r.valid_to AS valid_to, r.speaker AS speaker,
       r.turn_id AS turn_id, r.fact_id AS fact_id, r.text AS text
ORDER BY seq DESC
