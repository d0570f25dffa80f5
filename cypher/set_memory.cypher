// Advance the counter and record the predicates seen and declared multi-valued, and
// the first number this transaction gave ($first; null keeps the last one): a read
// that meets a fact made or closed from it on may be meeting this commit while
// the server is still applying it, and reads again (see current_of.cypher). A write
// that changed what finds an entity advances the names counter ($names; null keeps
// it: see names_changed.cypher).
MATCH (m:CtxneoMemory {ns: $ns})
SET m.seq = $seq, m.multi = $multi, m.predicates = $predicates,
    m.last_write_from = coalesce($first, m.last_write_from), m.names = coalesce($names, m.names)
