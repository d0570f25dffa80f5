// The last statement of a load: the counter, the predicates, and the load's id,
// by which a load whose commit went unanswered is recognised; every fact is this
// transaction's (see set_memory.cypher); a new epoch, so that every client's copy of the
// names is read again (see names_changed.cypher).
MATCH (m:CtxneoMemory {ns: $ns})
SET m.seq = $seq, m.multi = $multi, m.predicates = $predicates, m.load_id = $load_id,
    m.last_write_from = 1, m.names = 1, m.epoch = randomUUID()
