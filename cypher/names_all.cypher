// Everything that finds an entity in a namespace, for a client's copy of it
// (ctxneo/stores/names.py): each entity's name, aliases and said stems, oldest change
// first, unless there are more than $max (the copy is then not kept: questions are linked
// by the full-text indexes); and the memory node as names_changed.cypher describes it,
// read first (a write met half-way is read again).
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
WITH {epoch: m.epoch, names: coalesce(m.names, 0), predicates: coalesce(m.predicates, []),
  multi: coalesce(m.multi, [])} AS memory
CALL () {
  MATCH (e:Entity {ns: $ns})
  RETURN count(e) AS entities
}
CALL (entities) {
  OPTIONAL MATCH (e:Entity {ns: $ns}) WHERE entities <= $max
  WITH e ORDER BY coalesce(e.changed, 0), e.name
  RETURN [x IN collect(e) | {name: x.name, aliases: x.aliases, said: x.said}] AS all
}
RETURN memory, entities, all
