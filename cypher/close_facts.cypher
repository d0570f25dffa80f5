// Close facts: valid_to is the sequence number of the write that ended them,
// closed_by its id (see find_write).
UNWIND $closes AS c
MATCH (s:Entity {ns: $ns, name: c.s})-[r:$(c.p)]->()
WHERE r.seq = c.seq
SET r.valid_to = c.at, r.closed_by = $write_id
