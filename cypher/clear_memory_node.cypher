// The last step of a clear, one transaction under the namespace's write lock (taken
// first, as every write takes it): what writes made while the batches before it ran,
// then the memory node. A write waiting on the lock then finds no memory node and,
// retried, starts the cleared namespace afresh; none can leave a fact of the memory
// before the clear beside the counter of the one after it.
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
SET m._lock = true
WITH m
CALL {
  MATCH (e:Entity {ns: $ns})
  DETACH DELETE e
}
DELETE m
