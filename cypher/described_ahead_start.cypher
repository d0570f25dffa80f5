// After vocabulary_words.cypher, when the question's described relations are read in the
// same round trip (see described_ahead.cypher): the sequence number they are read at.
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
WITH hits, said, m, coalesce(m.seq, 0) AS at
WITH hits, said, m, at, CASE WHEN $as_of IS NULL OR $as_of > at THEN at ELSE $as_of END AS seen
