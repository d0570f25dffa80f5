// Open a write (a batch or a retraction): take the namespace's write lock (SET on
// its memory node) and, in the same round trip, read the current facts of the
// write's (subject, predicate) keys, which cannot change before it commits. A key
// of a predicate multi-valued before this write reads only the values the write
// states (a batch into a hub costs the batch, not the hub's degree); every key
// carries its objects and the memory node decides. Each fact comes with its
// element id, by which write_apply closes it without finding it again. The index
// is named: a plan made while the namespace was nearly empty may scan it instead.
MERGE (m:CtxneoMemory {ns: $ns})
  ON CREATE SET m.seq = 0, m.multi = [], m.predicates = []
SET m._lock = true
REMOVE m._lock
WITH m
CALL (m) {
  UNWIND $keys AS key
  WITH key WHERE key.objects IS NULL OR NOT key.p IN m.multi
  // Collected first, so no plan expands a key's subject before knowing it is read whole.
  WITH collect(key) AS keys
  UNWIND keys AS key
  MATCH (s:Entity {ns: $ns, name: key.s})-[r]->(o:Entity)
  USING INDEX s:Entity(ns, name)
  WHERE type(r) = key.p AND r.valid_to IS NULL
  RETURN collect({id: elementId(r), s: s.name, p: type(r), o: o.name, seq: r.seq,
                  valid_from: r.valid_from, valid_to: r.valid_to, speaker: r.speaker,
                  turn_id: r.turn_id, fact_id: r.fact_id, text: r.text}) AS whole
}
CALL (m) {
  UNWIND $keys AS key
  WITH key WHERE key.objects IS NOT NULL AND key.p IN m.multi
  WITH collect(key) AS keys
  UNWIND keys AS key
  MATCH (s:Entity {ns: $ns, name: key.s})
  USING INDEX s:Entity(ns, name)
  // The subject found first, then each object and the facts between the two, read
  // from the end with fewer relationships (not by expanding a hub object).
  CALL (s, key) {
    UNWIND key.objects AS name
    MATCH (o:Entity {ns: $ns, name: name})
    USING INDEX o:Entity(ns, name)
    MATCH (s)-[r]->(o)
    WHERE type(r) = key.p AND r.valid_to IS NULL
    RETURN r, o
  }
  RETURN collect({id: elementId(r), s: s.name, p: type(r), o: o.name, seq: r.seq,
                  valid_from: r.valid_from, valid_to: r.valid_to, speaker: r.speaker,
                  turn_id: r.turn_id, fact_id: r.fact_id, text: r.text}) AS some
}
RETURN m.seq AS seq, m.multi AS multi, m.predicates AS predicates, whole + some AS current
