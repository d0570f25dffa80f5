// Facts of one predicate in this namespace, current or valid at $as_of, newest first.
// Pinned to the namespace's sequence number as the read starts (see facts_of.cypher).
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
WITH coalesce(m.seq, 0) AS at
WITH at, CASE WHEN $as_of IS NULL OR $as_of > at THEN at ELSE $as_of END AS seen
MATCH (s:Entity)-[r:$($predicate)]->(o:Entity)
WHERE s.ns = $ns
  AND r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen)
RETURN s.name AS s, type(r) AS p, o.name AS o, r.seq AS seq, r.valid_from AS valid_from,
       CASE WHEN r.valid_to > at THEN null ELSE r.valid_to END AS valid_to,
       r.speaker AS speaker, r.turn_id AS turn_id, r.fact_id AS fact_id, r.text AS text
ORDER BY seq DESC
LIMIT $limit
