// Open a write transaction: take the namespace's write lock (SET on its memory
// node) before anything is read, so the current facts read next cannot change
// before this transaction commits. Returns the counter and the declared
// multi-valued predicates, and the names counter and epoch (see names_changed.cypher;
// a memory node made before epochs is given one by its first write).
MERGE (m:CtxneoMemory {ns: $ns})
  ON CREATE SET m.seq = 0, m.multi = [], m.predicates = []
SET m._lock = true
// A clear may have deleted the memory node while this write waited for its lock: then
// nothing is written (no row), and the write, run again, starts the namespace afresh.
WITH m WHERE m.seq IS NOT NULL
REMOVE m._lock
SET m.epoch = coalesce(m.epoch, randomUUID())
RETURN m.seq AS seq, m.multi AS multi, m.predicates AS predicates, m.load_id AS load_id,
  coalesce(m.names, 0) AS names, m.epoch AS epoch
