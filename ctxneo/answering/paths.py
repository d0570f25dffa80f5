"""Stage 3, candidate paths by shape: one, two and three hops, siblings, described subjects.

Walks start at the linked entities, each hop in either direction. Work is
bounded by what the question asks, never by a node's degree: a hop is only
walked on from when its predicate or the entity it reaches explains a word of
the question that the walk has not used yet, and from the second hop on only
the predicates the question speaks of are read (through the stores' indexes),
so a genre or a year with thousands of facts is never scanned wholesale. When
the question names no entity but a relation ("the dataset that currently has
an anomaly"), facts of that predicate anchor the walk instead. On the last
hop, a walk whose hops so far are not justified cannot score one hop on, so
it is not walked on (and a middle only such walks reach is not read).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from ctxneo.answering.candidates import Candidates
from ctxneo.answering.entities import Link
from ctxneo.answering.scoring import HOP_NAMED, Path, Scoring
from ctxneo.model import Fact
from ctxneo.stores.base import Store

DESCRIBED_FACTS = 25
#: Facts of any predicate read per middle entity at the second hop.
ANY_PREDICATE = 24
#: Walks kept going at each hop: those of the best few shapes (predicates and
#: directions), so a hub's many neighbours never multiply into the next hop's work.
BEAM_SHAPES = 3
MAX_HOPS = 3
_SEQ = operator.attrgetter("seq")


def best(paths: Sequence[Path]) -> Path | None:
    """The walk of the least :meth:`Path.order`, the first of equals."""
    if isinstance(paths, Candidates):
        return paths.best()
    return min(paths, key=Path.order) if paths else None


def entity_paths(
    store: Store, ctx: Scoring, anchors: Sequence[Link], as_of: int | None
) -> Candidates:
    """Paths from the linked entities, one hop, then two and three while they can explain more."""
    paths = Candidates()
    if not anchors:
        return paths
    names = [lk.entity for lk in anchors]
    adjacent = store.facts_of(names, as_of=as_of, history=ctx.lenient)
    if as_of is not None:  # closed facts count when lenient, but none from after as_of
        adjacent = [f for f in adjacent if f.seq <= as_of]
    if ctx.lenient and (as_of is not None or any(f.valid_to is not None for f in adjacent)):
        ctx.strict_differs = True  # a strict reading reads other facts
    # An anchor that is never a subject is a value ("severe root intrusion"):
    # stepping from it to what has it needs no other word of the question.
    ctx.values = {n for n in names if not any(f.subject == n for f in adjacent)}
    frontier: list[Walk] = []
    for fact in adjacent:
        for anchor in names:
            if anchor in (fact.subject, fact.object) and fact.subject != fact.object:
                ctx.score(anchor, (fact,), paths)
                if fact.valid_at(as_of) and ctx.first_hop_explained(anchor, fact):
                    out = fact.subject == anchor
                    far = fact.object if out else fact.subject
                    direction = "out" if out else "in"
                    frontier.append(
                        (anchor, (fact,), far, (anchor, far), (direction,), (fact.predicate,))
                    )
    for hop in range(2, MAX_HOPS + 1):
        top = best(paths)
        if not frontier or (top is not None and not ctx.could_improve(top)):
            break  # no word of the question is left for a longer walk to explain
        frontier = _walk_on(store, ctx, _beam(ctx, frontier), as_of, paths, last=hop == MAX_HOPS)
    return paths


#: A walk in progress: its anchor, facts walked, the entity reached, and (for scoring it
#: without walking it again) the entities passed, the direction and predicate of each hop.
Walk = tuple[str, tuple[Fact, ...], str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def _beam(ctx: Scoring, frontier: list[Walk]) -> list[Walk]:
    """The walks of the :data:`BEAM_SHAPES` best shapes: all values of a relation stay
    together, and the work of the next hop is bounded by what the question asks."""
    keys = [
        (anchor, tuple([(f.predicate, f.subject == far) for f in walked]))
        for anchor, walked, far, *_ in frontier
    ]
    if len(set(keys)) <= BEAM_SHAPES:
        return frontier  # every shape is kept: no need to rank them
    shapes: dict[tuple[object, ...], float] = {}
    for (anchor, walked, far, _, _, predicates), shape in zip(frontier, keys, strict=True):
        score = ctx.partial(anchor, walked, far, predicates)
        if score > shapes.get(shape, -1.0):
            shapes[shape] = score
    kept = set(sorted(shapes, key=lambda k: (-shapes[k], str(k)))[:BEAM_SHAPES])
    return [w for w, shape in zip(frontier, keys, strict=True) if shape in kept]


def _walk_on(
    store: Store,
    ctx: Scoring,
    frontier: list[Walk],
    as_of: int | None,
    paths: Candidates,
    *,
    last: bool,
) -> list[Walk]:
    """One more hop from every walk in ``frontier``; scored walks go into ``paths``."""
    named = {p for p, found in ctx.predicates.items() if max(found.values()) >= HOP_NAMED}
    # Middles by the relation they were reached through: going back out by that same
    # relation is a sibling ("the same director as X"), walked only when the question
    # says so; otherwise a genre reached from a film would hand back all its films.
    by_relation: dict[str, set[str]] = {}
    for _, walked, far, *_ in frontier:
        by_relation.setdefault(walked[-1].predicate, set()).add(far)
    # On the last hop, a walk that cannot score one hop on is not walked on, and a middle
    # only such walks reach is not read. (A middle that is read is read as before, for
    # every relation it was reached by: its facts do not depend on which walks go on.)
    if last:
        frontier = [w for w in frontier if ctx.goes_on(w[0], w[3], w[4], w[5])]
        if not frontier:
            return []
    middles_of = {w[2] for w in frontier}
    reads: list[list[Fact]] = []
    for came_by, reached in sorted(by_relation.items()):
        middles = reached & middles_of
        wanted = named | {came_by} if ctx.q.sibling else named - {came_by}
        if wanted and middles:
            reads.append(store.facts_of(sorted(middles), as_of=as_of, predicates=sorted(wanted)))
    # At the second hop a few facts of any predicate are read too: the answer's kind
    # alone may justify that hop ("which *team* ..."), and a hub adds only those few.
    if len(frontier[0][1]) == 1 and _asks_a_kind(ctx):
        middles_all = sorted({w[2] for w in frontier})
        reads.append(store.facts_of(middles_all, as_of=as_of, limit=ANY_PREDICATE))
    # The facts on from each middle, newest first.
    onward: dict[str, list[Fact]] = {far: [] for far in middles_of}
    for fact in _newest_first(reads):
        if fact.subject in onward:
            onward[fact.subject].append(fact)
        if fact.object != fact.subject and fact.object in onward:
            onward[fact.object].append(fact)
    following: list[Walk] = []
    spent = {anchor: set(link.positions) for anchor, link in ctx.anchors.items()}
    for anchor, walked, far, ends, directions, predicates in frontier:
        nexts = onward[far]
        if not nexts:
            continue
        seen = {f.seq for f in walked}
        step = ctx.extending(anchor, walked, ends, directions, predicates, paths)
        for nxt in nexts:
            if nxt.seq in seen:
                continue
            out = nxt.subject == far
            end = nxt.object if out else nxt.subject
            scored = step(nxt, out, end)
            if not last and (scored or ctx.onward(spent[anchor], nxt, end)):
                following.append(
                    (
                        anchor,
                        (*walked, nxt),
                        end,
                        (*ends, end),
                        (*directions, "out" if out else "in"),
                        (*predicates, nxt.predicate),
                    )
                )
    return following


def _newest_first(reads: list[list[Fact]]) -> list[Fact]:
    """The facts of several reads (each newest first), each once, newest first (sequence
    numbers are unique)."""
    if len(reads) == 1:
        return reads[0]
    merged: dict[int, Fact] = {}
    for facts in reads:
        merged.update(zip(map(_SEQ, facts), facts, strict=True))
    return sorted(merged.values(), key=_SEQ, reverse=True)


def _asks_a_kind(ctx: Scoring) -> bool:
    """Whether the question asks for a kind of answer ("which *team*", "when", "who"), so
    that a few facts of any relation are worth reading at the second hop."""
    q = ctx.q
    return bool(q.type_positions or q.shape or q.asks_person)


def needs_description(ctx: Scoring, top: Path | None) -> bool:
    """Whether the question may describe its subject by a relation instead of naming it:
    it names no entity we found a path from, or leaves a predicate it names unexplained."""
    if top is None:
        return bool(ctx.predicates)
    wanted = {pos for m in ctx.predicates.values() for pos, s in m.items() if s >= 0.99}
    return bool(wanted) and not wanted <= top.explained


def described_paths(store: Store, ctx: Scoring, as_of: int | None, paths: Candidates) -> None:
    """Paths anchored on facts of the predicates the question names best, into ``paths``."""
    ranked = sorted(ctx.predicates.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
    for predicate, _ in ranked[:2]:
        described = store.facts_with_predicate(predicate, as_of=as_of, limit=DESCRIBED_FACTS)
        pivots = sorted({f.subject for f in described} | {f.object for f in described})
        # On from the described facts, as on from a named entity: the relations the
        # question names, and a few of any kind when it asks for a kind of answer.
        named = sorted(
            p
            for p, found in ctx.predicates.items()
            if max(found.values()) >= HOP_NAMED and (ctx.q.sibling or p != predicate)
        )
        reads: list[list[Fact]] = []
        if pivots and named:
            reads.append(store.facts_of(pivots, as_of=as_of, predicates=named))
        if pivots and _asks_a_kind(ctx):
            reads.append(store.facts_of(pivots, as_of=as_of, limit=ANY_PREDICATE))
        onward = {pivot: [] for pivot in pivots}  # (only the pivots are walked on from)
        for fact in _newest_first(reads):
            if fact.subject in onward:
                onward[fact.subject].append(fact)
            if fact.object in onward:
                onward[fact.object].append(fact)
        for fact in described:
            ctx.score_described(fact, onward, paths)
