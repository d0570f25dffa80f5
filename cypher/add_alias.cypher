// Register another name for an entity and index its stems; the memory's names counter
// advances and stamps the entity (see names_changed.cypher), alias new or not (a retry
// of a write whose commit went unanswered must leave the same state).
MATCH (m:CtxneoMemory {ns: $ns})
SET m.names = coalesce(m.names, 0) + 1
MERGE (e:Entity {ns: $ns, name: $entity})
  ON CREATE SET e.search = $entity_search, e.aliases = []
SET e.changed = m.names
WITH m, e
CALL (e) {
  WITH e WHERE NOT $phrase IN e.aliases
  SET e.aliases = e.aliases + $phrase, e.search = e.search + ' ' + $phrase_search
}
RETURN m.names AS names, m.epoch AS epoch
