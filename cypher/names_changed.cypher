// What a client's copy of the names (ctxneo/stores/names.py) needs to stay current,
// read with the question it serves (in neighbourhood_return.cypher, or after
// names_since.cypher): the entities changed since the copy's position ($since: their
// `changed` stamp is above it), at most $changed_max (a copy that would need more is
// read again whole). The memory's counter, epoch, predicates and multi-valued
// predicates (`memory`) are read before them: a write met half-way is read again.
CALL () {
  OPTIONAL MATCH (e:Entity {ns: $ns}) WHERE e.changed > $since
  WITH e LIMIT $changed_max
  RETURN [x IN collect(e) | {name: x.name, aliases: x.aliases, said: x.said}] AS changed
}
