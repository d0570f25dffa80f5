// The changes to a namespace's names since a client's copy of them, alone: the memory
// node as names_changed.cypher (which follows) describes it.
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
WITH {epoch: m.epoch, names: coalesce(m.names, 0), predicates: coalesce(m.predicates, []),
  multi: coalesce(m.multi, [])} AS memory
