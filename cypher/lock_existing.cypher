// Take the namespace's write lock without making a memory node: for a reader
// that wants a consistent view (an export). No row when there is no memory.
MATCH (m:CtxneoMemory {ns: $ns})
SET m._lock = true
REMOVE m._lock
RETURN m.seq AS seq, m.multi AS multi
