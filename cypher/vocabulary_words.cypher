// What a question's words can meet, in one round trip: the entities whose name
// stems match (full-text index, this namespace's tag) and the entities whose facts were
// said in words that hold each stem (every one, for a stem said of at most $said_max
// of them). Followed by vocabulary_return.cypher (the predicates in use and those
// declared multi-valued), or by described_ahead*.cypher. The indexes are eventually
// consistent (search_schema.cypher): the read first waits for the writes committed
// before it (this client's, whose bookmark it started after, and others').
CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
CALL () {
  CALL db.index.fulltext.queryNodes('ctxneo_entity_search', $query, {limit: $limit})
  YIELD node, score
  WHERE node.ns = $ns
  RETURN collect({name: node.name, aliases: node.aliases}) AS hits
}
CALL () {
  UNWIND $said_terms AS term
  CALL (term) {
    CALL db.index.fulltext.queryNodes('ctxneo_said_search', term.query, {limit: $said_max + 1})
    YIELD node
    WHERE node.ns = $ns
    RETURN collect({name: node.name, aliases: node.aliases}) AS nodes
  }
  RETURN collect({key: term.key, nodes: nodes}) AS said
}
