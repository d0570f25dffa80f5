// Close facts: valid_to is the sequence number of the write that ended them,
// closed_by its id (see find_write). The subject is matched on its own first:
// written as one pattern with an untyped end, the planner scanned every entity
// of the namespace for each close (894,500 rows for 500 closes at 10k facts),
// so a write's cost grew with the memory.
UNWIND $closes AS c
MATCH (s:Entity {ns: $ns, name: c.s}) USING INDEX SEEK s:Entity(ns, name)
MATCH (s)-[r:$(c.p)]->()
WHERE r.seq = c.seq
SET r.valid_to = c.at, r.closed_by = $write_id
