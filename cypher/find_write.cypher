// The facts one write created or closed, found by the id the client gave it:
// how a write whose commit went unanswered is recognised when it is retried
// (run under the namespace lock, so a commit still in flight is seen).
UNWIND $keys AS key
MATCH (s:Entity {ns: $ns, name: key.s})-[r:$(key.p)]->(o:Entity) USING INDEX SEEK s:Entity(ns, name)
WHERE r.write_id = $write_id OR r.closed_by = $write_id
RETURN s.name AS s, type(r) AS p, o.name AS o, r.seq AS seq, r.valid_from AS valid_from,
       r.valid_to AS valid_to, r.speaker AS speaker, r.turn_id AS turn_id, r.fact_id AS fact_id, r.text AS text,
       coalesce(r.write_id = $write_id, false) AS created
ORDER BY seq
