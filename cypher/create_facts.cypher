// Create facts between entities made or merged just before in the same transaction
// (merge_entities or load_entities, which gave their element ids: $facts carry them
// as sid and oid; finding a node by its id is a seek on the node itself, where a
// lookup by name is an index seek per end of every fact). The relationship type is
// the fact's predicate, validated before it gets here; the write's id marks them
// (null for a load, which is recognised by its memory node).
UNWIND $facts AS f
MATCH (s) WHERE elementId(s) = f.sid
MATCH (o) WHERE elementId(o) = f.oid
CREATE (s)-[r:$(f.predicate) {seq: f.seq, valid_from: f.valid_from}]->(o)
SET r.valid_to = f.valid_to, r.speaker = f.speaker, r.turn_id = f.turn_id, r.fact_id = f.fact_id,
    r.text = f.text, r.write_id = $write_id
