// The end of vocabulary_words.cypher: the predicates in use and those declared
// multi-valued.
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
RETURN hits, said, coalesce(m.predicates, []) AS predicates, coalesce(m.multi, []) AS multi
