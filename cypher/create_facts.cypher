// Create facts between entities merged just before (merge_entities). The
// relationship type is the fact's predicate, validated before it gets here; the
// write's id marks them (null for a load, which is recognised by its memory node).
UNWIND $facts AS f
MATCH (s:Entity {ns: $ns, name: f.subject}) USING INDEX SEEK s:Entity(ns, name)
MATCH (o:Entity {ns: $ns, name: f.object}) USING INDEX SEEK o:Entity(ns, name)
CREATE (s)-[r:$(f.predicate) {seq: f.seq, valid_from: f.valid_from}]->(o)
SET r.valid_to = f.valid_to, r.speaker = f.speaker, r.turn_id = f.turn_id, r.fact_id = f.fact_id,
    r.text = f.text, r.write_id = $write_id
