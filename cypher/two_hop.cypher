// Two-hop paths from each entity, each hop in either direction, in one MATCH:
// (a)-[r1]-(m)-[r2]-(b) with both facts current (or valid at $as_of), the
// middle (one of $through, when given) and far end distinct from the start.
// Newest first.
UNWIND $names AS name
MATCH (a:Entity {ns: $ns, name: name})-[r1]-(m:Entity)-[r2]-(b:Entity)
WHERE m <> a AND b <> a AND ($through IS NULL OR m.name IN $through)
  AND (($as_of IS NULL AND r1.valid_to IS NULL AND r2.valid_to IS NULL)
    OR ($as_of IS NOT NULL
        AND r1.valid_from <= $as_of AND (r1.valid_to IS NULL OR r1.valid_to > $as_of)
        AND r2.valid_from <= $as_of AND (r2.valid_to IS NULL OR r2.valid_to > $as_of)))
WITH DISTINCT r1, r2
RETURN startNode(r1).name AS s1, type(r1) AS p1, endNode(r1).name AS o1, r1.seq AS seq1,
       r1.valid_from AS vf1, r1.valid_to AS vt1, r1.speaker AS sp1, r1.turn_id AS t1,
       r1.fact_id AS f1,
       startNode(r2).name AS s2, type(r2) AS p2, endNode(r2).name AS o2, r2.seq AS seq2,
       r2.valid_from AS vf2, r2.valid_to AS vt2, r2.speaker AS sp2, r2.turn_id AS t2,
       r2.fact_id AS f2
ORDER BY seq1 DESC, seq2 DESC
LIMIT $limit
