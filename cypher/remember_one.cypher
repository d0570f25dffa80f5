// One fact, one statement (the common case of remember): lock the namespace,
// merge both entities, and unless the current value is the same, close the
// current one (for a single-valued predicate) and create the new fact, marked with
// the write's id (see find_write). A fact created advances the names counter and stamps
// both entities with it (see names_changed.cypher); what it changed in them is returned
// for the client's copy of the names.
MERGE (m:CtxneoMemory {ns: $ns})
  ON CREATE SET m.seq = 0, m.multi = [], m.predicates = []
SET m._lock = true
// A clear may have deleted the memory node while this write waited for its lock: then
// nothing is written (no row), and the write, run again, starts the namespace afresh.
WITH m WHERE m.seq IS NOT NULL
REMOVE m._lock
SET m.epoch = coalesce(m.epoch, randomUUID())
MERGE (s:Entity {ns: $ns, name: $s})
  ON CREATE SET s.search = $s_search, s.aliases = []
MERGE (o:Entity {ns: $ns, name: $o})
  ON CREATE SET o.search = $o_search, o.aliases = []
WITH m, s, o
OPTIONAL MATCH (s)-[same:$($p)]->(o) WHERE same.valid_to IS NULL
WITH m, s, o, head(collect(same)) AS same
// A fact that says its predicate is multi-valued says so even when it changes nothing else.
SET m.multi = CASE WHEN $multi AND NOT $p IN m.multi THEN m.multi + $p ELSE m.multi END
WITH m, s, o, same
CALL (m, s, o, same) {
  WITH * WHERE same IS NULL
  SET m.predicates = CASE WHEN $p IN m.predicates THEN m.predicates ELSE m.predicates + $p END,
      m.seq = m.seq + 1, m.names = coalesce(m.names, 0) + 1
  SET m.last_write_from = m.seq
  WITH m, s, o
  CALL (m, s) {
    WITH * WHERE NOT $p IN m.multi
    MATCH (s)-[old:$($p)]->() WHERE old.valid_to IS NULL
    SET old.valid_to = m.seq
  }
  CREATE (s)-[r:$($p)]->(o)
  SET r.seq = m.seq, r.valid_from = m.seq, r.speaker = $speaker, r.turn_id = $turn_id,
      r.fact_id = $fact_id, r.text = $text, r.write_id = $write_id
  // The words the fact was said in name both its entities (the first $said_cap kept).
  SET s.said = (coalesce(s.said, []) + [x IN $said WHERE NOT x IN coalesce(s.said, [])])[..$said_cap]
  SET o.said = (coalesce(o.said, []) + [x IN $said WHERE NOT x IN coalesce(o.said, [])])[..$said_cap]
  SET s.said_search = reduce(acc = '', x IN s.said | acc + ' ' + $tag + '_' + x),
      o.said_search = reduce(acc = '', x IN o.said | acc + ' ' + $tag + '_' + x)
  // (both stamped: either may be new; see names_changed.cypher)
  SET s.changed = m.names, o.changed = m.names
}
WITH s, o, same IS NULL AS created, m.names AS names, m.epoch AS epoch,
  m.predicates AS predicates, m.multi AS multi
MATCH (s)-[r:$($p)]->(o) WHERE r.valid_to IS NULL
RETURN s.name AS s, type(r) AS p, o.name AS o, r.seq AS seq, r.valid_from AS valid_from,
       r.valid_to AS valid_to, r.speaker AS speaker, r.turn_id AS turn_id, r.fact_id AS fact_id, r.text AS text,
       created, names, epoch, s.said AS s_said, o.said AS o_said, predicates, multi
