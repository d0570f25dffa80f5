// Every fact of a subject (and predicate), current and closed, oldest first.
MATCH (s:Entity {ns: $ns, name: $subject})-[r]->(o:Entity)
WHERE $predicate IS NULL OR type(r) = $predicate
RETURN s.name AS s, type(r) AS p, o.name AS o, r.seq AS seq, r.valid_from AS valid_from,
       r.valid_to AS valid_to, r.speaker AS speaker, r.turn_id AS turn_id, r.fact_id AS fact_id, r.text AS text
ORDER BY seq
