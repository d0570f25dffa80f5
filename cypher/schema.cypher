// Run at start-up by every client; IF NOT EXISTS makes it idempotent.
// (ns, name) is unique per entity, so MERGE cannot duplicate an entity even
// under concurrent writers; one memory node per namespace holds the sequence
// counter and serializes that namespace's writes.
CREATE CONSTRAINT ctxneo_entity_key IF NOT EXISTS
FOR (e:Entity) REQUIRE (e.ns, e.name) IS UNIQUE;
CREATE CONSTRAINT ctxneo_memory_ns IF NOT EXISTS
FOR (m:CtxneoMemory) REQUIRE m.ns IS UNIQUE;
CREATE FULLTEXT INDEX ctxneo_entity_search IF NOT EXISTS
FOR (e:Entity) ON EACH [e.search]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}}
