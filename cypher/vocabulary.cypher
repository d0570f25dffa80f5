// What a question's words can meet, in one round trip: the entities whose
// stems match (full-text index, this namespace's tag) and the predicates in use.
CALL {
  CALL db.index.fulltext.queryNodes('ctxneo_entity_search', $query, {limit: $limit})
  YIELD node, score
  WHERE node.ns = $ns
  RETURN collect({name: node.name, aliases: node.aliases}) AS hits
}
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
RETURN hits, coalesce(m.predicates, []) AS predicates
