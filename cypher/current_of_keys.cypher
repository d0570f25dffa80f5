// The current facts of each (subject, predicate) key, read under the lock.
UNWIND $keys AS key
MATCH (s:Entity {ns: $ns, name: key.s})-[r:$(key.p)]->(o:Entity)
WHERE r.valid_to IS NULL
RETURN s.name AS s, type(r) AS p, o.name AS o, r.seq AS seq, r.valid_from AS valid_from,
       r.valid_to AS valid_to, r.speaker AS speaker, r.turn_id AS turn_id, r.fact_id AS fact_id, r.text AS text
