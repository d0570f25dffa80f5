// The bounded neighbourhood of a question's anchors, in one round trip: what the
// reader's walk reads (see ctxneo/stores/neighbourhood.py for the plan), each read
// with exactly the meaning of facts_of.cypher for one entity, so that the reader can
// be served from it as if it had asked the store read by read:
//  - first: each anchor's facts, current and closed, newest $first_limit;
//  - old: the ends of the anchors' closed facts, with their current facts (below);
//  - second: the ends the anchors' current facts reach (the $ends best: through the
//    relations the question names best ($relevance), then the newest), each with its
//    newest $later_limit facts (current only, or with history when $later_history),
//    and, for an end whose read filled that limit but that has at most $hub_degree
//    facts, its current facts of the $best relations (a bigger hub's are left to the
//    walk's own read, narrowed to their types: filtering them would read them all);
//  - third: the ends those facts reach, as the walk chooses them: the $ends best, by the
//    relevance of the two relations that reach them, and every end of a shape of at most
//    $small ends (a shape is an anchor and the two relations walked from it, each in its
//    direction: the walk goes on from every shape of few ends, a chain's middle relation
//    being often unnamed), each with its facts of the $best relations, newest $hub_limit
//    (history included when $later_history), but not a hub's (more than $hub_degree
//    facts: filtering by type would read them all);
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
  UNWIND $names AS name
  MATCH (e:Entity {ns: $ns, name: name}) USING INDEX SEEK e:Entity(ns, name)
  CALL (e, at) {
    MATCH (e)-[r]-()
    WHERE r.valid_from <= at
    WITH DISTINCT r ORDER BY r.seq DESC LIMIT $first_limit
    RETURN collect(r) AS rs
  }
  RETURN collect({key: name, rs: rs}) AS first
}
CALL (first, at, seen) {
  // old: when a slot's past may be asked ($later_history), the $ends best ends of the
  // anchors' closed facts, each with its current facts, newest $later_limit (what an
  // earlier value holds now: "the shed the crate was first in: who has its keys?")
  UNWIND first AS g
  UNWIND g.rs AS r
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
CALL (first, seen) {
  UNWIND first AS g
  UNWIND g.rs AS r
  WITH g, r WHERE r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen)
  UNWIND [startNode(r), endNode(r)] AS n
  WITH g, n, r WHERE NOT n.name IN $names
  WITH n, max(coalesce($relevance[type(r)], 0.0)) AS rel, max(r.seq) AS newest,
    collect(DISTINCT [g.key, type(r), endNode(r) = n]) AS shapes
  ORDER BY rel DESC, newest DESC LIMIT $ends
  RETURN collect({n: n, rel: rel, shapes: shapes}) AS ends1
}
CALL (ends1, at, seen) {
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
  RETURN collect({key: e.name, rel: rel, shapes: shapes, rs: rs, hub: hub, read: read}) AS second
}
CALL (second, at, seen) {
  UNWIND second AS g
  UNWIND g.rs + g.hub AS r
  WITH g, r WHERE r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen)
  UNWIND [startNode(r), endNode(r)] AS n
  WITH g, n, r WHERE n.name <> g.key AND NOT n.name IN $names
  UNWIND g.shapes AS shape
  WITH shape + [[type(r), endNode(r) = n]] AS shape, n,
    g.rel + coalesce($relevance[type(r)], 0.0) AS rel, r.seq AS seq
  WITH shape, collect(DISTINCT n) AS ns, max(rel) AS rel, max(seq) AS newest
  UNWIND ns AS n
  WITH n, max(rel) AS rel, max(newest) AS newest, max(CASE WHEN size(ns) <= $small THEN 1 ELSE 0 END) = 1 AS few
  ORDER BY rel DESC, newest DESC
  WITH collect({n: n, few: few}) AS ranked
  UNWIND range(0, size(ranked) - 1) AS i
  WITH ranked[i] AS end, i WHERE i < $ends OR end.few
  WITH end.n AS n LIMIT 2 * $ends
  WITH n WHERE COUNT { (n)--() } <= $hub_degree
  CALL (n, at, seen) {
    MATCH (n)-[r]-()
    WHERE type(r) IN $best AND r.valid_from <= at
    AND ($later_history OR r.valid_from <= seen AND (r.valid_to IS NULL OR r.valid_to > seen))
    WITH DISTINCT r ORDER BY r.seq DESC LIMIT $hub_limit
    RETURN collect(r) AS rs
  }
  RETURN collect({key: n.name, rs: rs}) AS third
}
