// Advance the counter and record the predicates seen and declared multi-valued.
MATCH (m:CtxneoMemory {ns: $ns})
SET m.seq = $seq, m.multi = $multi, m.predicates = $predicates
