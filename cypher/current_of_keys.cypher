// The current facts of each (subject, predicate) key, read under the lock. A key
// with `objects` (a multi-valued predicate: a write only needs to know whether
// its own values are current) reads the facts between the subject and those
// objects alone, so a batch into a hub costs the batch, not the hub's degree. Keys come
// grouped by subject: one index seek per subject, not per key.
UNWIND $subjects AS subject
MATCH (s:Entity {ns: $ns, name: subject.s}) USING INDEX SEEK s:Entity(ns, name)
UNWIND subject.keys AS key
CALL (s, key) {
  WITH s, key WHERE key.objects IS NULL
  MATCH (s)-[r:$(key.p)]->(o:Entity)
  WHERE r.valid_to IS NULL
  RETURN r, o
  UNION
  WITH s, key WHERE key.objects IS NOT NULL
  UNWIND key.objects AS name
  MATCH (o:Entity {ns: $ns, name: name}) USING INDEX SEEK o:Entity(ns, name)
  MATCH (s)-[r:$(key.p)]->(o)
  WHERE r.valid_to IS NULL
  RETURN r, o
}
RETURN s.name AS s, type(r) AS p, o.name AS o, r.seq AS seq, r.valid_from AS valid_from,
       r.valid_to AS valid_to, r.speaker AS speaker, r.turn_id AS turn_id, r.fact_id AS fact_id, r.text AS text
