// Create facts between entities merged just before in the same transaction
// (merge_entities, which gave their element ids: $facts carry them as sid and oid).
// Otherwise as create_facts.cypher.
UNWIND $facts AS f
MATCH (s) WHERE elementId(s) = f.sid
MATCH (o) WHERE elementId(o) = f.oid
CREATE (s)-[r:$(f.predicate) {seq: f.seq, valid_from: f.valid_from}]->(o)
SET r.valid_to = f.valid_to, r.speaker = f.speaker, r.turn_id = f.turn_id, r.fact_id = f.fact_id,
    r.text = f.text, r.write_id = $write_id
