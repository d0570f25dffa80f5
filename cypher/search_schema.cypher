// Run at start-up before schema.cypher: the full-text indexes by which a question's
// words find entities on the server, eventually consistent, so that a write's commit
// does not wait for Lucene (creating an Entity node took 3.3 ms against 1.1 ms for a
// node of another label). A read that searches them first waits for what was
// committed before it (vocabulary_words.cypher). Not
// part of an export's schema, whose statements stay fixed (a script exported before is
// checked against them): schema.cypher creates ctxneo_entity_search IF NOT EXISTS, so
// where this one ran first it leaves it as it is. (A server whose indexes were made
// before keeps them consistent: correct, and its writes as slow as they were.)
CREATE FULLTEXT INDEX ctxneo_entity_search IF NOT EXISTS
FOR (e:Entity) ON EACH [e.search]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace', `fulltext.eventually_consistent`: true}};
CREATE FULLTEXT INDEX ctxneo_said_search IF NOT EXISTS
FOR (e:Entity) ON EACH [e.said_search]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace', `fulltext.eventually_consistent`: true}}
