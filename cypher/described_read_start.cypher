// A question's described relations read on their own (its names are linked in process:
// see ctxneo/stores/names.py), before its neighbourhood: the sequence number they are
// read at, then one described_ahead.cypher part per relation and
// described_read_return.cypher.
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
WITH coalesce(m.seq, 0) AS at
WITH at, CASE WHEN $as_of IS NULL OR $as_of > at THEN at ELSE $as_of END AS seen
