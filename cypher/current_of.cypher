// The current facts of a subject, of one predicate when $predicate is given, oldest
// first. Pinned to the namespace's sequence number as the read starts (see
// facts_of.cypher): a supersession in flight is seen whole or not at all.
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
WITH coalesce(m.seq, 0) AS at
MATCH (s:Entity {ns: $ns, name: $subject})-[r]->(o:Entity) USING INDEX SEEK s:Entity(ns, name)
WHERE ($predicate IS NULL OR type(r) = $predicate)
  AND r.valid_from <= at AND (r.valid_to IS NULL OR r.valid_to > at)
RETURN s.name AS s, type(r) AS p, o.name AS o, r.seq AS seq, r.valid_from AS valid_from,
       null AS valid_to, r.speaker AS speaker, r.turn_id AS turn_id, r.fact_id AS fact_id, r.text AS text
ORDER BY seq
