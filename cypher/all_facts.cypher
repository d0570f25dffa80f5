// Every fact of the namespace, current and closed, in sequence order.
MATCH (s:Entity {ns: $ns})-[r]->(o:Entity)
RETURN s.name AS s, type(r) AS p, o.name AS o, r.seq AS seq, r.valid_from AS valid_from,
       r.valid_to AS valid_to, r.speaker AS speaker, r.turn_id AS turn_id, r.fact_id AS fact_id, r.text AS text
ORDER BY seq
