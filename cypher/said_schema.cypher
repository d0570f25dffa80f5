// Run at start-up beside the schema (not part of an export's schema). (The full-text
// index over the words facts were said in, by which a question's words find the
// entities people spoke of that way, is made by search_schema.cypher.)
// The entities changed since a client's copy of the names (see ctxneo/stores/names.py):
// `changed` is the memory's `names` counter of the last write that changed what finds
// an entity (its creation, an alias, the words its facts were said in).
CREATE INDEX ctxneo_entity_changed IF NOT EXISTS
FOR (e:Entity) ON (e.ns, e.changed)
