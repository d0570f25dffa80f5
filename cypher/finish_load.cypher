// The last statement of a load: the counter, the predicates, and the load's id,
// by which a load whose commit went unanswered is recognised.
MATCH (m:CtxneoMemory {ns: $ns})
SET m.seq = $seq, m.multi = $multi, m.predicates = $predicates, m.load_id = $load_id
