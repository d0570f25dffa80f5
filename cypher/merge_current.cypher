// A batch's first read, under the lock: every entity its facts name, merged once on the
// constrained (ns, name) key, with its element id (create_facts finds the ends by it, a
// seek on the node itself), and, for a subject, the current facts of the batch's
// (subject, predicate) keys, read from the merged node (one index seek per name: read by
// name, each subject would be sought a second time). An entity merged for a fact that
// turns out to re-state a current value already existed, so merging every name first
// creates no entity a fact does not need. An entity made is stamped with the write's
// names counter ($names: see names_changed.cypher).
// A key with `objects` (a predicate multi-valued before this write: the write only
// needs to know whether its own values are current) reads the facts between the
// subject and those objects alone, so a batch into a hub costs the batch, not the hub's
// degree.
UNWIND $entities AS e
MERGE (n:Entity {ns: $ns, name: e.name})
  ON CREATE SET n.search = e.search, n.aliases = [], n.changed = $names
WITH n, e
CALL (n, e) {
  UNWIND e.keys AS key
  CALL (n, key) {
    WITH n, key WHERE key.objects IS NULL
    MATCH (n)-[r:$(key.p)]->(o:Entity)
    WHERE r.valid_to IS NULL
    RETURN r, o
    UNION
    WITH n, key WHERE key.objects IS NOT NULL
    UNWIND key.objects AS name
    MATCH (o:Entity {ns: $ns, name: name}) USING INDEX SEEK o:Entity(ns, name)
    MATCH (n)-[r:$(key.p)]->(o)
    WHERE r.valid_to IS NULL
    RETURN r, o
  }
  RETURN collect({p: type(r), o: o.name, seq: r.seq, valid_from: r.valid_from,
                  valid_to: r.valid_to, speaker: r.speaker, turn_id: r.turn_id,
                  fact_id: r.fact_id, text: r.text}) AS current
}
// (one row: a record per entity costs the client more than the lists)
RETURN collect(e.name) AS names, collect(elementId(n)) AS ids, collect(current) AS current
