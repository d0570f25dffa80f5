// The namespace's predicates and multi-valued predicates.
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
RETURN coalesce(m.predicates, []) AS predicates, coalesce(m.multi, []) AS multi
