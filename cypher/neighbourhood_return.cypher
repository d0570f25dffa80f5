// The end of neighbourhood.cypher: every fact read, once, and each read as the
// sequence numbers of its facts; and what changed in the names (names_changed.cypher,
// written in where NAMES_CHANGED stands).
WITH at, memory, first, old, second, third
CALL (first, old, second, third, at) {
  UNWIND [g IN first | g.rs] + [g IN first | g.crowd] + [g IN old | g.rs]
    + [g IN second | g.rs] + [g IN second | g.hub] + [g IN second | g.past]
    + [g IN third | g.rs] + [g IN third | g.hub] AS rs
  UNWIND rs AS r
  WITH DISTINCT r
  // (each fact as a list, in the order of Fact's fields: a map per fact sent its ten
  // keys' names with every fact, and took longer to write and to read)
  RETURN collect([
    startNode(r).name, type(r), endNode(r).name, r.seq, r.valid_from,
    CASE WHEN r.valid_to > at THEN null ELSE r.valid_to END,
    r.speaker, r.turn_id, r.fact_id, r.text
  ]) AS facts
}
NAMES_CHANGED
RETURN at, facts, memory, changed,
  [g IN first | {key: g.key, seqs: [r IN g.rs | r.seq], crowd: [r IN g.crowd | r.seq],
    wanted: g.wanted}] AS first,
  [g IN old | {key: g.key, seqs: [r IN g.rs | r.seq]}] AS old,
  [g IN second | {key: g.key, seqs: [r IN g.rs | r.seq], hub: [r IN g.hub | r.seq], read: g.read,
    past: [r IN g.past | r.seq]}] AS second,
  [g IN third | {key: g.key, seqs: [r IN g.rs | r.seq], hub: [r IN g.hub | r.seq], cut: g.cut}] AS third
