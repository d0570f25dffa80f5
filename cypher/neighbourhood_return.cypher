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
  RETURN collect({
    s: startNode(r).name, p: type(r), o: endNode(r).name, seq: r.seq,
    valid_from: r.valid_from,
    valid_to: CASE WHEN r.valid_to > at THEN null ELSE r.valid_to END,
    speaker: r.speaker, turn_id: r.turn_id, fact_id: r.fact_id, text: r.text
  }) AS facts
}
NAMES_CHANGED
RETURN at, facts, memory, changed,
  [g IN first | {key: g.key, seqs: [r IN g.rs | r.seq], crowd: [r IN g.crowd | r.seq],
    wanted: g.wanted}] AS first,
  [g IN old | {key: g.key, seqs: [r IN g.rs | r.seq]}] AS old,
  [g IN second | {key: g.key, seqs: [r IN g.rs | r.seq], hub: [r IN g.hub | r.seq], read: g.read,
    past: [r IN g.past | r.seq]}] AS second,
  [g IN third | {key: g.key, seqs: [r IN g.rs | r.seq], hub: [r IN g.hub | r.seq], cut: g.cut}] AS third
