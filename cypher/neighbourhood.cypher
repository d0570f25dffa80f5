// The bounded neighbourhood of a question's anchors, in one round trip: what the
// reader's walk reads (see ctxneo/stores/neighbourhood.py for the plan), each read
// with exactly the meaning of facts_of.cypher for one entity, so that the reader can
// be served from it as if it had asked the store read by read:
//  - first: each anchor's facts, current and closed, newest $first_limit; and for an
//    anchor walked from that filled it, its facts of the $best relations that read
//    holds none of, the same way (`crowd`);
//  - old: the ends of the anchors' closed facts, with their current facts (below);
//  - second: the ends the anchors' current facts reach (the $ends best: through the
//    relations the question names best ($relevance), then the newest; and every end
//    the walk goes on from, `level`, wherever it ranks), each with its
//    newest $later_limit facts (current only, or with history when $later_history),
//    and, for an end whose read filled that limit but that has at most $hub_degree
//    facts, its current facts of the $best relations (a bigger hub's are left to the
//    walk's own read, narrowed to their types: filtering them would read them all),
//    and, when $later_history, if it is an end the walk goes on from, its newest
//    $hub_limit facts with history (`past`: the slots of the walks through it);
//  - third: the ends those facts reach, chosen as the walk chooses them (`level`, then
//    the block that reads them): the shapes (an anchor and the relations walked from it,
//    each in its direction) ranked by how well the question names their relations for
//    their anchor ($relevance_of), the $shapes best and every shape of at most $small
//    ends (the walk goes on from every shape of few ends, a chain's middle relation
//    being often unnamed), their ends in the order of their walks; the first $ends,
//    each with its facts of the $best relations, newest $hub_limit (when
//    $later_history: of every relation, with history, and the $best relations' current
//    facts too when that read filled its limit), but not a hub's (more than
//    $hub_degree facts: filtering by type would read them all);
// (The described relations are read by facts_of_few_subjects.cypher: a relationship
// type written in here made this text, and its plan, one per combination of them.)
// Every read is pinned to one sequence number, `at` ($at when given, else the
// namespace's as the statement starts), so one question sees one state of the memory.
// A fact appears once in `facts`; the groups name the facts of each read by seq. The
// memory node's names counter, epoch, predicates and multi-valued predicates are read
// with `at` (`memory`), for the entities changed since a client's copy of the names
// (names_changed.cypher, in neighbourhood_return.cypher).
OPTIONAL MATCH (m:CtxneoMemory {ns: $ns})
WITH m, CASE WHEN $at IS NULL THEN coalesce(m.seq, 0) ELSE $at END AS at
WITH at, CASE WHEN $as_of IS NULL OR $as_of > at THEN at ELSE $as_of END AS seen,
  {epoch: m.epoch, names: coalesce(m.names, 0), predicates: coalesce(m.predicates, []),
   multi: coalesce(m.multi, [])} AS memory
CALL (at) {
  // (an anchor the memory has no entity of, as the asker of a first-person question may
  // be, is read too: it has no facts, and the walk is served that without a read)
  UNWIND $names AS name
  OPTIONAL MATCH (e:Entity {ns: $ns, name: name}) USING INDEX SEEK e:Entity(ns, name)
  CALL (e, at) {
    MATCH (e)-[r]-()
    WHERE r.valid_from <= at
    WITH DISTINCT r ORDER BY r.seq DESC LIMIT $first_limit
    RETURN collect(r) AS rs
  }
  // crowd: an anchor the walk walks from whose read filled its limit (a hub), its
  // facts of the $best relations that read holds none of, with history, newest
  // $first_limit (the walk's read of those its other relations crowded out:
  // Walker._crowded_out); not a hub of more than $hub_degree facts, whose facts
  // filtered by type would be read all (the walk's own read of them is typed)
  WITH name, e, at, rs, CASE WHEN size(rs) >= $first_limit
    AND (size($walked) = 0 OR name IN $walked) AND COUNT { (e)--() } <= $hub_degree
    THEN [p IN $best WHERE NOT p IN [r IN rs | type(r)]] ELSE [] END AS wanted
  CALL (e, at, wanted) {
    WITH e, at, wanted WHERE size(wanted) > 0
    MATCH (e)-[r]-()
    WHERE type(r) IN wanted AND r.valid_from <= at
    WITH DISTINCT r ORDER BY r.seq DESC LIMIT $first_limit
    RETURN collect(r) AS crowd
  }
  RETURN collect({key: name, rs: rs, crowd: crowd, wanted: wanted}) AS first
}
CALL (first, seen) {
  // The walk's first hop as it goes on (Walker._extend): the one-hop shapes of the
  // anchors it walks from ($walked), ranked by how well the question names their
  // relation for their anchor ($relevance_of), then by how few walks they hold (at most
  // $paths counted), their anchor's name and their oldest fact; the $shapes best and
  // every shape of at most $small ends are chosen, and the first $frontier ends of
  // those, in that order, each shape's oldest fact first, and the first $frontier of
  // the chosen shapes of few ends, are the ends walked on from.
  UNWIND first AS g
  WITH g WHERE size($walked) = 0 OR g.key IN $walked
  UNWIND g.rs + g.crowd AS r  // (the walk steps along the crowded-out facts too)
  WITH g, r WHERE r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen)
  UNWIND [s IN [[true, endNode(r)], [false, startNode(r)]]
    WHERE CASE WHEN s[0] THEN startNode(r).name ELSE endNode(r).name END = g.key] AS step
  WITH [g.key, type(r), step[0]] AS shape, step[1].name AS e, r.seq AS seq
  ORDER BY seq
  WITH shape, collect(e) AS ends, count(DISTINCT e) AS distinct, min(seq) AS oldest
  WITH shape, ends, distinct, oldest,
    coalesce(coalesce($relevance_of[shape[0]], $relevance)[shape[1]], 0.0) AS rel
  ORDER BY rel DESC, CASE WHEN size(ends) < $paths THEN size(ends) ELSE $paths END,
    shape[0], oldest
  WITH collect({shape: shape, ends: ends, few: distinct <= $small}) AS ranked
  WITH [i IN range(0, size(ranked) - 1) WHERE i < $shapes OR ranked[i].few | ranked[i]] AS chosen
  WITH chosen, reduce(acc = [], e IN reduce(all = [], c IN chosen | all + c.ends) |
      CASE WHEN size(acc) >= $frontier OR e IN acc THEN acc ELSE acc + e END) AS frontier
  // (and the first $frontier ends of the shapes of few ends, read whole by the walk)
  WITH chosen, frontier, reduce(acc = [], e IN reduce(all = [], c IN chosen |
      all + CASE WHEN c.few THEN c.ends ELSE [] END) |
      CASE WHEN size(acc) >= $frontier OR e IN acc THEN acc ELSE acc + e END) AS few
  RETURN {
    shapes: [c IN chosen | c.shape],
    ends: frontier + [e IN few WHERE NOT e IN frontier]
  } AS level
}
CALL (first, at, seen) {
  // old: when a slot's past may be asked ($later_history), the $ends best ends of the
  // anchors' closed facts, each with its current facts, newest $later_limit (what an
  // earlier value holds now: "the shed the crate was first in: who has its keys?")
  UNWIND first AS g
  UNWIND g.rs + g.crowd AS r
  WITH r WHERE $later_history AND r.valid_to IS NOT NULL AND r.valid_to <= seen
  UNWIND [startNode(r), endNode(r)] AS n
  WITH n, r WHERE NOT n.name IN $names
  WITH n, max(coalesce($relevance[type(r)], 0.0)) AS rel, max(r.seq) AS newest
  ORDER BY rel DESC, newest DESC LIMIT $ends
  CALL (n, at, seen) {
    MATCH (n)-[r]-()
    WHERE r.valid_from <= at AND r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen)
    WITH DISTINCT r ORDER BY r.seq DESC LIMIT $later_limit
    RETURN collect(r) AS rs
  }
  RETURN collect({key: n.name, rs: rs}) AS old
}
CALL (first, seen, level) {
  UNWIND first AS g
  UNWIND g.rs + g.crowd AS r
  WITH g, r WHERE r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen)
  UNWIND [startNode(r), endNode(r)] AS n
  WITH g, n, r WHERE NOT n.name IN $names
  WITH n, max(coalesce($relevance[type(r)], 0.0)) AS rel, max(r.seq) AS newest,
    collect(DISTINCT [g.key, type(r), endNode(r) = n, r.seq]) AS shapes
  ORDER BY rel DESC, newest DESC
  WITH collect({n: n, rel: rel, shapes: shapes}) AS ranked
  // (and every end the walk goes on from: an unnamed relation's few ends rank last)
  RETURN [i IN range(0, size(ranked) - 1)
    WHERE i < $ends OR ranked[i].n.name IN level.ends | ranked[i]] AS ends1
}
CALL (ends1, level, at, seen) {
  UNWIND ends1 AS end
  WITH end.n AS e, end.rel AS rel, end.shapes AS shapes
  CALL (e, at, seen) {
    MATCH (e)-[r]-()
    WHERE r.valid_from <= at
    AND ($later_history OR r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen))
    WITH DISTINCT r ORDER BY r.seq DESC LIMIT $later_limit
    RETURN collect(r) AS rs
  }
  WITH e, rel, shapes, rs, size(rs) >= $later_limit AND COUNT { (e)--() } <= $hub_degree AS read
  CALL (e, read, seen) {
    // (the filter before the MATCH: a row it drops expands nothing)
    WITH e, seen WHERE read
    MATCH (e)-[r]-()
    WHERE type(r) IN $best
    AND r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen)
    WITH DISTINCT r ORDER BY r.seq DESC LIMIT $hub_limit
    RETURN collect(r) AS hub
  }
  CALL (e, read, level, at) {
    // past: when a slot's past may be asked, the ends walked on from whose read filled
    // its limit, newest $hub_limit with history (the slots of the walks through them)
    WITH e, at WHERE read AND $later_history AND e.name IN level.ends
    MATCH (e)-[r]-()
    WHERE r.valid_from <= at
    WITH DISTINCT r ORDER BY r.seq DESC LIMIT $hub_limit
    RETURN collect(r) AS past
  }
  RETURN collect({key: e.name, rel: rel, shapes: shapes, rs: rs, hub: hub, read: read,
    past: past}) AS second
}
CALL (second, level, at, seen) {
  // The walk's third hop, as it chooses its ends (Walker._extend again): the two-hop
  // shapes grown from the chosen one-hop shapes through the ends walked on from, ranked
  // by the mean of how well the question names their two relations for their anchor,
  // then as above; each shape's ends in the order of its walks (the anchor's fact, then
  // the end's, oldest first); the first $ends of the $shapes best and of every shape of
  // at most $small ends. (The walk reads the first $frontier of them: the rest is room
  // for where its choice and this one differ.)
  // (An end walked on from steps along every fact read that touches it, its own read's
  // and another end's, as the walk's steps are all the facts it read of an end.)
  UNWIND second AS g
  WITH g WHERE g.key IN level.ends
  UNWIND g.rs + g.hub AS r
  WITH g, r WHERE r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen)
  UNWIND [startNode(r), endNode(r)] AS x
  WITH g, r, x.name AS m WHERE m IN level.ends
  WITH m, collect(DISTINCT r) AS steps, collect(CASE WHEN m = g.key THEN g.shapes END) AS own
  WITH m, steps, own[0] AS shapes WHERE shapes IS NOT NULL
  UNWIND shapes AS s1
  WITH m, steps, s1, [s1[0], s1[1], s1[2]] AS shape WHERE shape IN level.shapes
  // (the steps of the walk that reached m: not back along its own fact, nor to a node
  // it passed)
  WITH m, s1, shape, [r IN steps WHERE r.seq <> s1[3] AND NOT
    (CASE WHEN startNode(r).name = m THEN endNode(r) ELSE startNode(r) END).name IN [m, s1[0]]]
    AS steps
  // The walks go on in the order of their shapes' ranks and their anchors' facts, until
  // $budget steps are taken: the walks after that go no further.
  WITH m, s1, steps,
    [i IN range(0, size(level.shapes) - 1) WHERE level.shapes[i] = shape][0] AS rank
  ORDER BY rank, s1[3]
  WITH collect({m: m, s1: s1, steps: steps}) AS walks
  UNWIND [i IN range(0, size(walks) - 1)
    WHERE reduce(n = 0, w IN walks[0..i] | n + size(w.steps)) < $budget | walks[i]] AS w
  UNWIND w.steps AS r
  WITH w.s1 AS s1, r,
    CASE WHEN startNode(r).name = w.m THEN endNode(r) ELSE startNode(r) END AS n
  WITH [s1[0], s1[1], s1[2], type(r), endNode(r) = n] AS shape, n,
    s1[3] * 4294967296 + r.seq AS walk
  WITH shape, n, min(walk) AS walk, count(*) AS walks
  ORDER BY walk
  WITH shape, collect(n) AS ends, sum(walks) AS walks, min(walk) AS oldest,
    coalesce($relevance_of[shape[0]], $relevance) AS rel
  WITH ends, walks, oldest, shape[0] AS anchor,
    (coalesce(rel[shape[1]], 0.0) + coalesce(rel[shape[3]], 0.0)) / 2.0 AS rel
  ORDER BY rel DESC, CASE WHEN walks < $paths THEN walks ELSE $paths END, anchor, oldest
  WITH collect({ends: ends, few: size(ends) <= $small}) AS ranked
  UNWIND range(0, size(ranked) - 1) AS i
  WITH ranked[i] AS c, i WHERE i < $shapes OR ranked[i].few
  UNWIND range(0, size(c.ends) - 1) AS j
  WITH c.ends[j] AS n, i * 1000000 + j AS pos, c.few AS few
  WITH n, min(pos) AS pos, max(CASE WHEN few THEN 1 ELSE 0 END) = 1 AS few
  ORDER BY pos
  WITH collect({n: n, few: few}) AS ends
  UNWIND range(0, size(ends) - 1) AS i
  WITH ends[i] AS end, i WHERE i < $ends OR end.few
  WITH end.n AS n LIMIT 2 * $ends
  WITH n WHERE COUNT { (n)--() } <= $hub_degree
  CALL (n, at, seen) {
    // (every relation when a slot's past may be asked: the slots of the walks through n)
    MATCH (n)-[r]-()
    WHERE ($later_history OR type(r) IN $best) AND r.valid_from <= at
    AND ($later_history OR r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen))
    WITH DISTINCT r ORDER BY r.seq DESC LIMIT $hub_limit
    RETURN collect(r) AS rs
  }
  WITH n, rs, $later_history AND size(rs) >= $hub_limit AS cut
  CALL (n, cut, seen) {
    // (that read cut by its limit: the $best relations' current facts, as without it)
    WITH n, seen WHERE cut
    MATCH (n)-[r]-()
    WHERE type(r) IN $best
    AND r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen)
    WITH DISTINCT r ORDER BY r.seq DESC LIMIT $hub_limit
    RETURN collect(r) AS hub
  }
  RETURN collect({key: n.name, rs: rs, hub: hub, cut: cut}) AS third
}
