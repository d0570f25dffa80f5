"""Stage 3, candidate readings: every way the memory could answer the question.

From each anchor the reader walks one to three facts, each hop in either
direction, and groups the walks by their shape (the anchor and the hops'
predicates and directions): the ends of one shape are its values, one or many.
When the question names a relation but no entity that has it ("what's
containment at?"), the subjects of that relation's facts are anchors too,
unnamed ones. Each shape is then offered in every form it can take:

- **value**: the current values at its end;
- **count**: how many there are;
- **none**: a relation whose every value was retracted;
- **earlier**: a value its last hop held before (the previous one, the first, or
  the one before a value the question names), across a join too, and what such a
  value holds now, one relation on ("the shed the crate was first in: who has its
  keys?");
- **speaker**: who stated its last fact (or the fact holding a value the
  question names);
- **yes/no**: whether a value the question names holds now; a stale one is
  answered "no" with the value that holds now and since when; a value it states in
  words is judged both ways, the ranker weighing how its words stand for the value
  ("finished" for "completed" is a yes, "open" for "closed" a no);
- **intersection**: values two anchors' shapes share ("the shipment from Nordvik
  that is delayed").

A value the question names is read from its own side too: "who had command
before Pike?" is the slot Pike is a value of, read back one value; "is Dublin
still in scope?" is whether the fact holding Dublin is still current.

Work is bounded by what the question asks, not by the memory: the first hop reads
the anchors' facts (their history too); further hops go on from small ends and
from the shapes whose relation the question's words name best, and a hub is read
only through the predicates the question names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter, eq, itemgetter
from typing import NamedTuple

from ctxneo.answering.linking import LINK_FEATURES, Anchor, relation_words, says_a_look_alike
from ctxneo.answering.match import STATE_WORDS, Matcher
from ctxneo.model import Fact, render_values
from ctxneo.stores.base import DescribedAsk, Store, Vocabulary
from ctxneo.stores.neighbourhood import Plan, View
from ctxneo.text import tokens

#: Anchors walked from, at most, and the least link probability walked from.
MAX_ANCHORS = 5
MIN_ANCHOR_P = 0.03
#: Facts read per entity at the first hop (history included) and at later hops.
FIRST_HOP_LIMIT = 200
LATER_HOP_LIMIT = 40
HUB_LIMIT = 200
#: Ends of a shape at most this many are always walked on; bigger shapes only when
#: their relation is among the best named.
SMALL = 8
BEST_SHAPES = 4
FRONTIER = 80
PATHS_PER_SHAPE = 300
#: Walks one further hop may add in all, whatever the degrees met.
STEP_BUDGET = 800
#: How surely an entity must be named for the question to be about its own value of a
#: relation (see :func:`_held_by`).
CLAIM_SUBJECT_P = 0.5
#: Shapes read in every form and ranked, best named first.
MAX_SHAPES = 25
#: Predicates read through a hub, best named first.
HUB_PREDICATES = 4
#: Relations the question names this well (and at most this many) anchor their subjects.
DESCRIBED_RELEVANCE = 0.6
DESCRIBED_PREDICATES = 3
DESCRIBED_FACTS = 30
DESCRIBED_SUBJECTS = 6
#: On a remote store, the relations whose few subjects are read ahead with the question's
#: vocabulary: those the words name best before the anchors' words are set aside (which
#: can only lower how well a relation is named), so the walk's are among them unless an
#: anchor's words were what named one. As many as the walk reads: the server plans each
#: relation's part of the statement anew for each set (~80 ms a part, measured), and
#: reading more ahead cost more in planning than the round trip it saves.
DESCRIBED_AHEAD = DESCRIBED_PREDICATES

#: Ends read ahead at each further hop on a remote store (the walk goes on from at most
#: FRONTIER of them, chosen by what it finds, so the read ahead takes more).
ENDS_AHEAD = 120
#: Relations whose relevance the read ahead is told (which ends it reads first); the rest
#: come after.
RANKED_AHEAD = 64

#: Where a walk's reads are served from: the store, or a question's view of it.
Reads = Store | View

#: An anchor no word of the question names: a subject of a relation the question names.
_UNNAMED = tuple(0.0 for _ in LINK_FEATURES)


class Hop(NamedTuple):
    """One step of a walk. (A named tuple, not a dataclass: shapes are keyed by their hops,
    hundreds of thousands of times a question on a hub, and a tuple hashes and compares
    in C.)"""

    predicate: str
    forward: bool  # the walk goes from subject to object

    def end(self, fact: Fact) -> str:
        return fact.object if self.forward else fact.subject


@dataclass(slots=True)
class Shape:
    """The walks of one anchor and sequence of hops, grouped: one path per end reached."""

    anchor: Anchor
    hops: tuple[Hop, ...]
    paths: list[tuple[Fact, ...]] = field(default_factory=list)
    ends: list[str] = field(default_factory=list)
    relevance: float = 0.0
    described: int = 0  # >0: the anchor is a subject of a named relation, and how many share it

    @property
    def key(self) -> tuple[str, tuple[Hop, ...]]:
        return (self.anchor.entity, self.hops)

    def values(self) -> tuple[str, ...]:
        """Distinct ends, in the order their last facts were written (by the first fact of
        each end, and by name between ends of one fact)."""
        # (sorted (number, end) pairs: an end's first pair holds its first number, and the
        # first pairs come in the order asked; made in C, as a hub's shapes hold 300 walks)
        pairs = sorted(zip(map(_SEQ, map(_LAST, self.paths)), self.ends, strict=True))
        return tuple(dict.fromkeys(map(_SECOND, pairs)))

    def nodes(self, i: int) -> tuple[str, ...]:
        """The entities path ``i`` passes through, anchor first, end last."""
        out = [self.anchor.entity]
        at = self.anchor.entity
        for fact in self.paths[i]:
            at = fact.object if fact.subject == at else fact.subject
            out.append(at)
        return tuple(out)


@dataclass(slots=True)
class Candidate:
    """One reading: a shape in one form, with its answer and the facts it rests on."""

    form: str  # value, count, none, earlier, speaker, yesno
    variant: str  # previous/first/before (earlier), yes/no (yesno), claimed (speaker)
    shape: Shape
    values: tuple[str, ...]
    evidence: tuple[Fact, ...]
    answer: str
    claim: Anchor | None = None
    partner: Shape | None = None
    slot: tuple[Fact, ...] = ()  # the slot read (earlier, yes/no, none), oldest first
    from_value: bool = False  # read from the side of the value the question names
    stated: bool = False  # a verdict on a value the question states in words, not a name
    #: A "yes" to a stated value that is not the current one's words: the question may
    #: say the current value in other words ("finished" for "completed").
    alike: bool = False
    #: An earlier value's own relation, read on from it: its slot is the first hop's.
    onward: bool = False
    features: list[float] = field(default_factory=list)
    score: float = 0.0

    @property
    def name(self) -> str:
        """How the question was read, for ``Answer.reading``."""
        hops = ("one-hop", "two-hop", "three-hop")[len(self.shape.hops) - 1]
        if self.partner is not None:
            hops = "intersection"
        if self.form == "value":
            return hops
        if self.form == "earlier":
            return f"history:{self.variant}"
        if self.form == "speaker":
            return "provenance"
        return f"{self.form}:{hops}"


#: Each predicate's two hops, made once (a walk takes hundreds of thousands of steps a
#: question on a hub, and making a named tuple costs more than finding one).
_FORWARD: dict[str, Hop] = {}
_BACKWARD: dict[str, Hop] = {}


def _hop(predicate: str, forward: bool) -> Hop:
    made = _FORWARD if forward else _BACKWARD
    hop = made.get(predicate)
    if hop is None:
        if len(made) > 100_000:  # (bounded: predicates are few, but a memory is not ours)
            made.clear()
        hop = made[predicate] = Hop(predicate, forward)
    return hop


def _step(fact: Fact, at: str) -> list[tuple[Hop, str]]:
    """The hops a fact offers from ``at``: forward to its object, back to its subject."""
    out = []
    if fact.subject == at:
        out.append((_hop(fact.predicate, True), fact.object))
    if fact.object == at:
        out.append((_hop(fact.predicate, False), fact.subject))
    return out


#: One step a walk may take: (the fact's number, the hop, the node it reaches, the fact).
Step = tuple[int, Hop, str, Fact]


Slot = tuple[str, Hop]  # (the node a hop starts from, the hop)


class Walker:
    """Walks the store from the anchors and keeps the shapes (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        matcher: Matcher,
        anchors: Sequence[Anchor],
        as_of: int | None,
        vocabulary: Vocabulary,
        *,
        slots: bool = True,
    ) -> None:
        self.store: Reads = store
        self._remote = store
        self._slots = slots  # the question may ask for a slot's past (earlier, yes/no, speaker)
        self.vocabulary = vocabulary
        self.matcher = matcher
        self.as_of = as_of
        self.anchors = [a for a in anchors if a.p >= MIN_ANCHOR_P][:MAX_ANCHORS]
        self.shapes: dict[tuple[str, tuple[Hop, ...]], Shape] = {}
        #: Every fact of a slot, current and closed, oldest first, for the slots read whole.
        self.slots: dict[Slot, list[Fact]] = {}
        self._read_whole: set[tuple[str, str | None]] = set()
        self._ranked: list[tuple[float, str]] | None = None
        self._named_or_relation: frozenset[int] | None = None

    def ranked_predicates(self) -> list[tuple[float, str]]:
        """Every predicate of the memory with how well the question names it, best first
        (read once per question)."""
        if self._ranked is None:
            excluded = frozenset(p for a in self.anchors if a.p >= 0.5 for p in a.positions)
            self._ranked = sorted(
                ((self.matcher.relevance(p, excluded), p) for p in self.vocabulary.predicates),
                key=lambda x: (-x[0], x[1]),
            )
        return self._ranked

    def current(self, fact: Fact) -> bool:
        return fact.valid_at(self.as_of)

    def relevance(self, shape: Shape) -> float:
        excluded = shape.anchor.positions
        scores = [self.matcher.relevance(h.predicate, excluded) for h in shape.hops]
        return sum(scores) / len(scores)

    def plan(self) -> Plan:
        """What :meth:`walk` will read, in outline (see :mod:`ctxneo.stores.neighbourhood`)."""
        ranked = self.ranked_predicates()[:RANKED_AHEAD]
        return Plan(
            anchors=tuple(
                dict.fromkeys([*(a.entity for a in self.anchors), *self._described_ahead()])
            ),
            as_of=self.as_of,
            first_limit=FIRST_HOP_LIMIT,
            later_limit=LATER_HOP_LIMIT,
            later_history=self._slots,
            hub_limit=HUB_LIMIT,
            best=tuple(self._best_predicates()),
            relevance={p: round(r, 6) for r, p in ranked},
            ends=ENDS_AHEAD,
            small=SMALL,
            walked=tuple(dict.fromkeys(a.entity for a in self.anchors)),
            relevance_of=self._relevance_of([p for _, p in ranked]),
            shapes=BEST_SHAPES,
            paths=PATHS_PER_SHAPE,
            frontier=FRONTIER,
            budget=STEP_BUDGET,
        )

    def _relevance_of(self, predicates: Sequence[str]) -> dict[str, dict[str, float]]:
        """How well the question names each relation for each anchor walked from, as
        :meth:`relevance` weighs a shape's hops (a shape's anchor is the first anchor of
        its entity)."""
        out: dict[str, dict[str, float]] = {}
        for a in self.anchors:
            if a.entity not in out:
                out[a.entity] = {p: self.matcher.relevance(p, a.positions) for p in predicates}
        return out

    def _described_ahead(self) -> list[str]:
        """The subjects of the described relations that the vocabulary's round trip read
        ahead, when the question may ask for a slot's past: read as anchors in the same
        statement, the histories of their slots are read with the rest (else a round trip
        of their own). Only a remote store plans; what it serves stays exact either way."""
        ahead = self.vocabulary.described
        if not self._slots or ahead is None:
            return []
        out: dict[str, None] = {}
        for predicate in self._described_wanted():
            subjects = dict.fromkeys(f.subject for f in ahead.facts.get(predicate, ()))
            if len(subjects) <= DESCRIBED_SUBJECTS:
                out.update(subjects)
        return list(out)

    def walk(self) -> list[Shape]:
        names = list(dict.fromkeys(a.entity for a in self.anchors))
        if self._remote.reads_ahead and (names or self._described_wanted()):
            # One round trip on a remote store for what the walk reads.
            found = self._remote.neighbourhood(self.plan())
            if found is not None:
                self.store = View(  # type: ignore[assignment]
                    self._remote,  # type: ignore[arg-type]
                    found,
                    self.vocabulary.described,
                )
        if names:
            facts = self.store.facts_of(
                names, as_of=self.as_of, history=True, limit=FIRST_HOP_LIMIT
            )
            facts += self._crowded_out(names, facts)
            self._keep_slots(facts, names, None)
            by_entity = _by_entity(facts, set(names))
            for anchor in self.anchors:
                for f in sorted(by_entity.get(anchor.entity, ()), key=lambda f: f.seq):
                    if self.current(f):
                        for hop, end in _step(f, anchor.entity):
                            self._add(anchor, (hop,), (f,), end)
        self._described()
        level = [s for s in self.shapes.values() if s.paths]
        for s in level:
            s.relevance = self.relevance(s)
        level = [s for s in level if not s.described]  # (a relation's subjects: one hop)
        second = self._extend(level, everything=True)
        self._extend(second, everything=False)
        self._through_anchors()
        shapes = [s for s in self.shapes.values() if s.paths]
        # Only the best-named shapes are read in every form and ranked: on a small memory
        # that is all of them; a hub's hundreds of shapes are cut to what the words name.
        shapes.sort(key=lambda s: (-(s.relevance + 0.5 * s.anchor.p), len(s.hops), s.key[0]))
        return shapes[:MAX_SHAPES]

    def _through_anchors(self) -> None:
        """Walks from an anchor through another anchor a fact ties it to: "when is the
        part for the fault on MV Orla due?" is the fault's two-hop walk, read from MV Orla
        through the fact that ties the two (three facts, the tie among the evidence). The
        third hop reads only the best-named relations of a few shapes' ends; these walks
        are the other anchor's own, already read, so they cost no read."""
        names = {a.entity for a in self.anchors}
        shapes = [s for s in self.shapes.values() if s.paths and not s.described]
        onward: dict[str, list[Shape]] = {}
        for s in shapes:
            if len(s.hops) == 2:
                onward.setdefault(s.anchor.entity, []).append(s)
        for tie in shapes:
            if len(tie.hops) != 1:
                continue
            start = tie.anchor.entity
            grown: dict[tuple[Hop, ...], Shape] = {}
            for path, end in zip(tie.paths, tie.ends, strict=True):
                if end == start or end not in names:
                    continue
                for s in onward.get(end, ()):
                    hops = (*tie.hops, *s.hops)
                    old = self.shapes.get((start, hops))
                    have = {tuple(f.seq for f in p) for p in old.paths} if old else set()
                    for i, (p, e) in enumerate(zip(s.paths, s.ends, strict=True)):
                        walk = (*path, *p)
                        if start in s.nodes(i) or tuple(f.seq for f in walk) in have:
                            continue
                        grown[hops] = self._add(tie.anchor, hops, walk, e)
            for shape in grown.values():
                shape.relevance = self.relevance(shape)  # (of its anchor and hops alone)

    def _add(
        self,
        anchor: Anchor,
        hops: tuple[Hop, ...],
        path: tuple[Fact, ...],
        end: str,
        then: Fact | None = None,
    ) -> Shape:
        """Keep a walk ``path`` (and ``then`` one more fact: the longer path is made only
        when the shape keeps it, as most of a hub's walks are not)."""
        key = (anchor.entity, hops)
        shape = self.shapes.get(key)
        if shape is None:
            shape = self.shapes[key] = Shape(anchor, hops)
        if len(shape.paths) < PATHS_PER_SHAPE:
            shape.paths.append(path if then is None else (*path, then))
            shape.ends.append(end)
        return shape

    def _described(self) -> None:
        """Subjects of the relations the question names best, as unnamed anchors."""
        named = {a.entity for a in self.anchors}
        wanted = self._described_wanted()
        if not wanted:
            return
        # A relation of many subjects does not single one out: the store returns
        # nothing for one that holds for more than DESCRIBED_SUBJECTS.
        found = self.store.facts_of_few_subjects(
            wanted, max_subjects=DESCRIBED_SUBJECTS, as_of=self.as_of, limit=DESCRIBED_FACTS
        )
        for predicate in wanted:
            facts = found[predicate]
            subjects = {f.subject for f in facts}
            for f in sorted(facts, key=lambda f: f.seq):
                if f.subject in named:
                    continue  # walked from already, as a named anchor
                anchor = Anchor(f.subject, frozenset(), 0.0, False, _UNNAMED, 0.0)
                shape = self._add(anchor, (Hop(predicate, True),), (f,), f.object)
                shape.described = len(subjects)

    def _crowded_out(self, names: Sequence[str], facts: Sequence[Fact]) -> list[Fact]:
        """The facts of a hub's first read left out by its limit, of the relations the
        question names best that the read holds none of: a hub's newest facts may all be of
        one relation ("Hub HAS_MEMBER ..." ten thousand times), and an older fact of
        another ("Hub OWNED_BY Team") must not be crowded out by them."""
        out: list[Fact] = []
        for name in names:
            mine = [f for f in facts if name in (f.subject, f.object)]
            if len(mine) < FIRST_HOP_LIMIT:
                continue
            held = {f.predicate for f in mine}
            wanted = [p for p in self._best_predicates() if p not in held]
            if wanted:
                out += self.store.facts_of(
                    [name],
                    as_of=self.as_of,
                    history=True,
                    limit=FIRST_HOP_LIMIT,
                    predicates=wanted,
                )
        read = {f.seq for f in facts}
        return list({f.seq: f for f in out if f.seq not in read}.values())

    def _described_wanted(self) -> list[str]:
        """The relations named well enough for their few subjects to be anchors."""
        return [
            predicate
            for relevance, predicate in self.ranked_predicates()[:DESCRIBED_PREDICATES]
            if relevance >= DESCRIBED_RELEVANCE
        ]

    def _extend(self, level: list[Shape], *, everything: bool) -> list[Shape]:
        """Walk one hop further from a bounded frontier of ``level``'s ends."""
        ranked = sorted(level, key=lambda s: (-s.relevance, len(s.ends), s.key[0]))
        # The best-named shapes, and every shape of few ends: a chain's middle relations
        # are often not named at all ("which van does the Elm Court boiler's engineer
        # use" names the boiler and the van, not the job between them), only its last
        # (at the third hop, read only through the best-named relations).
        chosen = ranked[:BEST_SHAPES]
        chosen += [s for s in ranked[BEST_SHAPES:] if len(set(s.ends)) <= SMALL]
        frontier = list(dict.fromkeys(e for s in chosen for e in s.ends))[:FRONTIER]
        if not frontier:
            return []
        # Every relation of a few ends (an unnamed hop: "where is the parcel" through
        # whoever carries it); only the named relations of the many ends of a hub.
        few = list(dict.fromkeys(e for s in chosen if len(set(s.ends)) <= SMALL for e in s.ends))[
            :FRONTIER
        ]
        facts = (
            self.store.facts_of(few, as_of=self.as_of, limit=LATER_HOP_LIMIT)
            if everything and few
            else []
        )
        # The named relations of the ends not read whole: the ends of big shapes, and
        # ends whose facts filled the first read (a hub met through a small shape).
        whole: set[str] = set()
        if facts:
            counts = _touching(facts)
            whole = {e for e in few if counts[e] < LATER_HOP_LIMIT}
        rest = [e for e in frontier if e not in whole]
        if rest:
            hub = self.store.facts_of(
                rest, as_of=self.as_of, limit=HUB_LIMIT, predicates=self._best_predicates()
            )
            if facts:
                read = set(map(_SEQ, facts))
                facts += [f for f in hub if f.seq not in read]
            else:  # (the third hop reads only these: nothing to leave out)
                facts = hub
        # The steps each end offers, made once per end (ends recur across walks and
        # shapes). (Only the ends the walk goes on from are looked up: the facts' other
        # ends are most of them, and are not indexed.)
        offered = _offered(facts, {e for s in chosen for e in s.ends})
        grown: dict[tuple[str, tuple[Hop, ...]], Shape] = {}
        budget = STEP_BUDGET
        shapes = self.shapes
        for s in chosen:
            start = s.anchor.entity
            # This shape's walks one hop on, by that hop: the shape's paths and ends (held
            # apart, as the loop below is the walk's most repeated).
            onto: dict[Hop, tuple[list[tuple[Fact, ...]], list[str]]] = {}
            for path, end in zip(s.paths, s.ends, strict=True):
                steps = offered.get(end)
                if steps is None:
                    continue
                # (what Shape.nodes gives, for one path)
                passed = {start}
                at = start
                for x in path:
                    at = x.object if x.subject == at else x.subject
                    passed.add(at)
                walked = {x.seq for x in path}  # (a fact is its seq: no field-wise compare)
                for seq, hop, nxt, f in steps:
                    if seq in walked or nxt in passed:
                        continue
                    held = onto.get(hop)
                    if held is None:
                        key = (start, (*s.hops, hop))
                        shape = shapes.get(key)
                        if shape is None:
                            shape = shapes[key] = Shape(s.anchor, key[1])
                        shape.described = s.described
                        grown[key] = shape
                        held = onto[hop] = (shape.paths, shape.ends)
                    paths, ends = held
                    if len(paths) < PATHS_PER_SHAPE:
                        paths.append((*path, f))
                        ends.append(nxt)
                    budget -= 1
                if budget <= 0:
                    break  # (the rest of a hub's walks: bounded work, whatever the degree)
            if budget <= 0:
                break
        for shape in grown.values():
            shape.relevance = self.relevance(shape)
        return list(grown.values())

    def _best_predicates(self) -> list[str]:
        """The predicates the question's words name best, read through hubs."""
        return [p for _, p in self.ranked_predicates()[:HUB_PREDICATES]]

    def _keep_slots(
        self, facts: Iterable[Fact], nodes: Iterable[str], predicate: str | None
    ) -> None:
        """Keep the whole slots of ``nodes`` that ``facts`` (read with history) hold."""
        wanted = set(nodes)
        slots = self.slots
        forward, backward = _FORWARD, _BACKWARD
        if self.as_of is not None:
            # (as of an earlier point, a fact stated after it had not been said: no slot
            # holds it, or a slot with nothing said yet would read as every value withdrawn)
            facts = [f for f in facts if f.valid_from <= self.as_of]
        for f in sorted(facts, key=_SEQ):
            # Subject first, then object (not a set's order, which moves with the hash
            # seed): the slots' order is the order their readings are offered in, and
            # ties between readings are ranked in that order. From the subject: forward,
            # and back too along a self-loop; from the object: back (what _step gives).
            subject, obj = f.subject, f.object
            if subject in wanted:
                hop = forward.get(f.predicate) or _hop(f.predicate, True)
                slots.setdefault((subject, hop), []).append(f)
                if obj == subject:
                    hop = backward.get(f.predicate) or _hop(f.predicate, False)
                    slots.setdefault((subject, hop), []).append(f)
            if obj in wanted and obj != subject:
                hop = backward.get(f.predicate) or _hop(f.predicate, False)
                slots.setdefault((obj, hop), []).append(f)
        self._read_whole |= {(n, predicate) for n in wanted}

    def read_slots(self, wanted: Iterable[Slot]) -> None:
        """Read the whole history of these slots, in one read for those not read yet."""
        missing = {
            (node, hop.predicate)
            for node, hop in wanted
            if (node, None) not in self._read_whole
            and (node, hop.predicate) not in self._read_whole
        }
        if not missing:
            return
        nodes = sorted({n for n, _ in missing})
        predicates = sorted({p for _, p in missing})
        facts = self.store.facts_of(
            nodes, as_of=self.as_of, history=True, limit=FIRST_HOP_LIMIT, predicates=predicates
        )
        for predicate in predicates:
            self._keep_slots(
                [f for f in facts if f.predicate == predicate],
                [n for n, p in missing if p == predicate],
                predicate,
            )

    def slot(self, node: str, hop: Hop) -> list[Fact]:
        return self.slots.get((node, hop), [])

    def named_or_relation(self) -> frozenset[int]:
        """The question's positions that name an entity walked from or a relation in
        memory (read once per question)."""
        if self._named_or_relation is None:
            named = frozenset(p for a in self.anchors for p in a.positions)
            self._named_or_relation = named | relation_words(
                self.matcher, self.vocabulary.predicates
            )
        return self._named_or_relation

    def current_facts(self, entities: Sequence[str]) -> list[Fact]:
        """The current facts of ``entities`` (the ends of a slot's closed facts, which the
        walk does not go on from: see :func:`onward`)."""
        if not entities:
            return []
        return self.store.facts_of(list(entities), as_of=self.as_of, limit=LATER_HOP_LIMIT)


def described_ahead(
    matcher: Matcher, predicates: Sequence[str] | None, as_of: int | None
) -> DescribedAsk | None:
    """What a remote store reads ahead with a question's vocabulary for the walk's described
    relations (:meth:`Walker._described`), chosen from the predicates it last saw: the
    :data:`DESCRIBED_AHEAD` best named with no word set aside, and any named as well as
    the last of them (twice as many at most), each named at least as well as the walk
    requires. ``None`` in process (``predicates`` is None) or when no relation is named
    that well.

    (A cut never splits relations named equally well: which of them the walk keeps
    depends on the anchors' words, not known yet; splitting them sent a quarter of the
    scale workload's questions back for the one left out.)"""
    if not predicates:
        return None
    named = sorted(((matcher.relevance(p), p) for p in predicates), key=lambda x: (-x[0], x[1]))
    last = named[min(DESCRIBED_AHEAD, len(named)) - 1][0]
    wanted = [p for r, p in named if r >= last and r >= DESCRIBED_RELEVANCE][: 2 * DESCRIBED_AHEAD]
    if not wanted:
        return None
    # (sorted: one statement text, and one server plan, per set of relations)
    return DescribedAsk(tuple(sorted(wanted)), DESCRIBED_SUBJECTS, as_of, DESCRIBED_FACTS)


_SEQ = attrgetter("seq")
_LAST = itemgetter(-1)
_SECOND = itemgetter(1)
_subject = attrgetter("subject")
_object = attrgetter("object")
_first = itemgetter(0)


def _distinct(facts: Iterable[Fact]) -> tuple[Fact, ...]:
    """Each fact once, first seen first. (By its number, which names it, in C: a dict of
    facts calls Fact.__hash__ for every one, and a list's evidence is hundreds of facts.)"""
    facts = list(facts)
    seqs = list(map(_SEQ, facts))
    # Each number to its first fact (the last written of the reversed pairs), in the
    # order the numbers are first seen.
    first = dict(zip(reversed(seqs), reversed(facts), strict=True))
    return tuple(map(first.__getitem__, dict.fromkeys(seqs)))


def _touching(facts: Sequence[Fact]) -> Counter[str]:
    """How many of ``facts`` touch each entity (a self-loop once). (Counted in C: a
    further hop's read holds a thousand facts on a hub, and a loop over them in Python
    was a tenth of the hop.)"""
    counts = Counter(map(_subject, facts))
    counts.update(map(_object, facts))
    if any(map(eq, map(_subject, facts), map(_object, facts))):
        counts.subtract(f.object for f in facts if f.object == f.subject)
    return counts


def _offered(facts: Iterable[Fact], wanted: set[str]) -> dict[str, list[Step]]:
    """The steps the facts offer from each of ``wanted``, oldest fact first: forward to
    the object of a fact it is the subject of, back to the subject of one it is the object
    of (a self-loop both, forward first). Made in one pass over the facts (of distinct
    numbers), the walk's most repeated work on a hub; an entity offered no step is left
    out."""
    out: dict[str, list[Step]] = {}
    forward, backward = _FORWARD, _BACKWARD
    for f in facts:
        subject, obj = f.subject, f.object
        if subject in wanted:
            step = (f.seq, forward.get(f.predicate) or _hop(f.predicate, True), obj, f)
            found = out.get(subject)
            if found is None:
                out[subject] = [step]
            else:
                found.append(step)
        if obj in wanted:
            step = (f.seq, backward.get(f.predicate) or _hop(f.predicate, False), subject, f)
            found = out.get(obj)
            if found is None:
                out[obj] = [step]
            else:
                found.append(step)
    for found in out.values():
        if len(found) > 1:
            found.sort(key=_first)  # (stable: a self-loop's two steps keep their order)
    return out


def _by_entity(facts: Iterable[Fact], wanted: set[str]) -> dict[str, list[Fact]]:
    """The facts that touch each of ``wanted``, in the order given."""
    out: dict[str, list[Fact]] = {}
    for f in facts:
        if f.subject in wanted:
            out.setdefault(f.subject, []).append(f)
        if f.object in wanted and f.object != f.subject:
            out.setdefault(f.object, []).append(f)
    return out


def readings(
    walker: Walker,
    shapes: Sequence[Shape],
    claims: Sequence[Anchor],
    forms: frozenset[str],
    stated: frozenset[str] = frozenset(),
) -> list[Candidate]:
    """Every form of every shape (see the module docstring): values always, and the
    ``forms`` among count, speaker, earlier and yesno (the question may ask for).
    ``stated`` holds the stems of the question's words, for verdicts on values it states
    without naming an entity ("is the payment $1,786 now?")."""
    out: list[Candidate] = []
    last_slots: dict[int, list[Slot]] = {}
    reached: dict[int, dict[str, tuple[Fact, ...]]] = {}  # shape -> slot node -> walk to it
    slots = bool(forms & {"earlier", "yesno", "speaker"})
    named = _named(walker)
    if slots:
        for i, s in enumerate(shapes):
            reached[i] = walks = _walks_to_slots(s)
            last_slots[i] = [(node, s.hops[-1]) for node in walks]
        backward = [
            (f.subject, Hop(hop.predicate, True))
            for c in claims
            for (node, hop), facts in list(walker.slots.items())
            if node == c.entity and not hop.forward and len(facts) <= SMALL
            for f in facts
        ]
        walker.read_slots([k for ks in last_slots.values() for k in ks] + backward)
    for i, s in enumerate(shapes):
        values = s.values()
        evidence = _distinct(chain.from_iterable(s.paths))
        out.append(Candidate("value", "", s, values, evidence, render_values(values)))
        if "count" in forms:
            shown = f"{len(values)} ({render_values(values)})"
            out.append(Candidate("count", "", s, values, evidence, shown))
        speakers = tuple(dict.fromkeys(p[-1].speaker for p in s.paths if p[-1].speaker))
        if speakers and "speaker" in forms:
            last = tuple(dict.fromkeys(p[-1] for p in s.paths))
            out.append(Candidate("speaker", "", s, speakers, last, render_values(speakers)))
        for node, hop in last_slots.get(i, ()):
            if len(s.hops) == 1 and s.anchor.entity not in named and _held_by(walker, named, hop):
                continue  # (an unnamed subject's slot, when the question names its own)
            slot = walker.slot(node, hop)
            if slot:
                made = _slot_readings(walker, s, hop, slot, values, claims, forms)
                if "yesno" in forms and stated:
                    made += _stated_verdicts(walker, s, hop, slot, claims, stated)
                if len(s.hops) == 1:
                    made += onward(walker, s, [c for c in made if c.form == "earlier"])
                out += _joined(made, reached[i][node])
    if slots:
        out += _value_side(walker, claims, forms, named)
    return out


#: Relations read on from an earlier value, at most (the best named by the question).
ONWARD_RELATIONS = 4


def onward(walker: Walker, s: Shape, earlier: Sequence[Candidate]) -> list[Candidate]:
    """What an earlier value holds now: "the chamber T-110 was first in: who's booking it
    now?" is the first value of T-110's slot, then that chamber's current booker. The walk
    goes on only from current values; this goes one relation on from an earlier one, in
    the earlier reading's variant, for the relations the question names best."""
    hop = s.hops[-1]
    now = set(s.values())
    ends = list(dict.fromkeys(c.values[0] for c in earlier if c.values and c.values[0] not in now))
    if not ends:
        return []
    by: dict[tuple[str, Hop], list[tuple[Fact, str]]] = {}
    for f in walker.current_facts(ends):
        for node in dict.fromkeys(n for n in (f.subject, f.object) if n in ends):
            for nxt, end in _step(f, node):
                if nxt.predicate == hop.predicate and nxt.forward != hop.forward:
                    continue  # back along the slot's own relation: its other holders
                by.setdefault((node, nxt), []).append((f, end))
    best: dict[str, list[Hop]] = {}
    for node, nxt in sorted(
        by, key=lambda k: (-walker.matcher.relevance(k[1].predicate, s.anchor.positions), k)
    ):
        if len(best.setdefault(node, [])) < ONWARD_RELATIONS:
            best[node].append(nxt)
    out = []
    for c in earlier:
        node = c.values[0] if c.values else None
        for nxt in best.get(node or "", ()):
            facts = sorted(by[(node, nxt)], key=lambda x: x[0].seq)  # type: ignore[index]
            shape = Shape(s.anchor, (hop, nxt))
            for f, end in facts:
                shape.paths.append((c.evidence[0], f))
                shape.ends.append(end)
            shape.relevance = walker.relevance(shape)
            values = shape.values()
            evidence = _distinct([c.evidence[0], *(f for f, _ in facts), *c.evidence[1:]])
            out.append(
                Candidate(
                    "earlier",
                    c.variant,
                    shape,
                    values,
                    evidence,
                    render_values(values),
                    claim=c.claim,
                    slot=c.slot,
                    onward=True,
                )
            )
    return out


def _walks_to_slots(s: Shape) -> dict[str, tuple[Fact, ...]]:
    """The entities ``s``'s last hop leaves from (its slots' nodes), in the order of its
    walks, each with the facts of the first walk that reaches it: how a slot across a join
    is tied to the anchor (none for one hop)."""
    out: dict[str, tuple[Fact, ...]] = {}
    for path, end in zip(s.paths, s.ends, strict=True):
        last = path[-1]
        node = last.subject if last.object == end else last.object
        if node not in out:
            out[node] = path[:-1]
    return out


def _joined(made: list[Candidate], path: tuple[Fact, ...]) -> list[Candidate]:
    """A slot's readings with the walk that reaches the slot after their own facts: the
    evidence of an earlier value, verdict or speaker across a join holds what ties the
    slot to the entity the question names, not only the slot's facts (which stay first)."""
    if path:
        for c in made:
            held = {f.seq for f in c.evidence}
            c.evidence = (*c.evidence, *(f for f in path if f.seq not in held))
    return made


def _slot_readings(
    walker: Walker,
    s: Shape,
    hop: Hop,
    slot: list[Fact],
    values: tuple[str, ...],
    claims: Sequence[Anchor],
    forms: frozenset[str],
) -> list[Candidate]:
    out: list[Candidate] = []
    current = [f for f in slot if walker.current(f)]
    if "earlier" in forms:
        held_on = hop.predicate in walker.vocabulary.multi and walker.matcher.q.history != "first"
        out += _earlier(s, hop, slot, current, claims, held_on=held_on)
    for c in claims:
        if c.entity == s.anchor.entity:
            continue
        held = [f for f in slot if hop.end(f) == c.entity]
        if held and held[-1].speaker and "speaker" in forms:
            f = held[-1]
            out.append(
                Candidate(
                    "speaker",
                    "claimed",
                    s,
                    (f.speaker,),
                    (f,),
                    f.speaker,
                    claim=c,
                    slot=tuple(slot),
                )
            )
        if "yesno" in forms and c.positions:
            out.append(_verdict(s, hop, c, values, slot, current))
    return out


def replaced(slot: Sequence[Fact]) -> bool:
    """Whether a newer value of the slot closed one of its values (not only withdrawals)."""
    seqs = {f.seq for f in slot}
    return any(f.valid_to in seqs for f in slot)


def _none(
    s: Shape, hop: Hop, slot: list[Fact], current: list[Fact], multi: frozenset[str]
) -> Candidate | None:
    """Every value of a multi-valued slot retracted (none closed by a newer value): "none".
    (A single value retracted leaves the memory not knowing what holds now: no reading.)"""
    if current or not slot or hop.predicate not in multi:
        return None
    if replaced(slot):
        return None  # superseded, not retracted: its last value is an earlier value
    return Candidate("none", "", s, (), tuple(slot), "none", slot=tuple(slot))


def _earlier(
    s: Shape,
    hop: Hop,
    slot: list[Fact],
    current: list[Fact],
    claims: Sequence[Anchor],
    *,
    held_on: bool = False,
) -> list[Candidate]:
    """Earlier values of a slot: the first, the previous, the one before a named value.

    ``held_on``: the slot holds several values at once and the question does not ask for
    the first: a value held still is not what it held before ("what did the van carry
    before?" asks for what came off, not for what it has carried from the start)."""
    out: list[Candidate] = []
    if len(slot) == len(current):
        return out  # nothing was ever replaced or withdrawn: no earlier value
    now = {f.seq for f in current}
    held = {hop.end(f) for f in current} if held_on else set()
    if hop.end(slot[0]) not in held:
        out.append(_before(s, hop, "first", slot[0], slot))
    if current:
        # The value held last before those held now: the one closed last (of a
        # single-valued slot, the one the current value replaced; of a multi-valued one,
        # the one taken off last, which may have been stated after a value still held,
        # and is not held again).
        closed = [f for f in slot if f.seq not in now and hop.end(f) not in held]
        if closed:
            last = max(closed, key=lambda f: (f.valid_to or 0, f.seq))
            out.append(_before(s, hop, "previous", last, slot))
    else:
        out.append(_before(s, hop, "previous", slot[-1], slot))
    for c in claims:
        at = next((i for i, f in enumerate(slot) if hop.end(f) == c.entity), None)
        if at:
            out.append(_before(s, hop, "before", slot[at - 1], slot, claim=c))
    return out


def _before(
    s: Shape, hop: Hop, variant: str, fact: Fact, slot: list[Fact], claim: Anchor | None = None
) -> Candidate:
    value = hop.end(fact)
    after = [f for f in slot if f.seq > fact.seq][:1]
    return Candidate(
        "earlier", variant, s, (value,), (fact, *after), value, claim=claim, slot=tuple(slot)
    )


def _verdict(
    s: Shape,
    hop: Hop,
    claim: Anchor,
    values: Sequence[str],
    slot: list[Fact],
    current: list[Fact],
    *,
    from_value: bool = False,
) -> Candidate:
    """Yes when the named value holds now; otherwise no, with what holds and since when.
    Only of a value the question names by words of its name (an anchor with positions):
    one found by words said of it alone ("Atlas will use Oracle") is not what "does
    Atlas use Cassandra?" claims."""
    now = sorted(current, key=lambda f: f.seq)
    holding = [f for f in now if hop.end(f) == claim.entity]
    if holding:
        return Candidate(
            "yesno",
            "yes",
            s,
            (claim.entity,),
            (holding[-1],),
            "yes",
            claim=claim,
            slot=tuple(slot),
            from_value=from_value,
        )
    shown, answer = _no(hop, now)
    stale = [f for f in slot if hop.end(f) == claim.entity]
    if stale and (closed := closing_of(stale[-1], slot)) is not None and closed.turn_id is not None:
        answer += f"; {claim.entity} until turn {closed.turn_id}"
    return Candidate(
        "yesno",
        "no",
        s,
        shown,
        tuple(dict.fromkeys([*now, *stale[-1:]])),
        answer,
        claim=claim,
        slot=tuple(slot),
        from_value=from_value,
    )


def said(value: str, stems: frozenset[str]) -> bool:
    """Whether a question states a value: every content word of it is among the
    question's stems ("$1,812" in "is it $1,812 now?", not in "is it 1,786?"; a signed
    number's with its sign: "-18" is not said by "is it 18?")."""
    words = [t.value_stem for t in tokens(value) if not t.stop or t.word in STATE_WORDS]
    return bool(words) and all(w in stems for w in words)


def _stated_verdicts(
    walker: Walker,
    s: Shape,
    hop: Hop,
    slot: list[Fact],
    claims: Sequence[Anchor],
    stems: frozenset[str],
) -> list[Candidate]:
    """A yes/no question that states a value rather than naming an entity (an amount, a
    date, a word no entity is named by): yes when a current value of the slot is stated,
    otherwise no, with what holds now, and yes too: the words may say the current value
    otherwise ("is 2207 finished?" of a status "completed"); the ranker weighs the two by
    how alike the words and the value are (see the features ``stated_*``). (A value the
    question names as an entity is a claim, judged by :func:`_verdict`.)"""
    if any(hop.end(f) == c.entity for f in slot for c in claims if c.positions):
        return []
    now = sorted((f for f in slot if walker.current(f)), key=lambda f: f.seq)
    if not now:
        return []
    stated = [f for f in now if said(hop.end(f), stems)]
    if stated:
        f = stated[-1]
        return [
            Candidate("yesno", "yes", s, (hop.end(f),), (f,), "yes", slot=tuple(slot), stated=True)
        ]
    shown, answer = _no(hop, now)
    out = [Candidate("yesno", "no", s, shown, tuple(now), answer, slot=tuple(slot), stated=True)]
    # The current value said in other words, unless the question says the value's own
    # words with another mark: then it states a look-alike of the value ("is box 44 in
    # stack room A?" of Stack_Room_B), and the verdict is no.
    if _states_in_words(walker) and not any(
        says_a_look_alike(walker.matcher.q.words, v) for v in shown
    ):
        out.append(
            Candidate(
                "yesno",
                "yes",
                s,
                shown,
                tuple(now),
                "yes",
                slot=tuple(slot),
                stated=True,
                alike=True,
            )
        )
    return out


def _states_in_words(walker: Walker) -> bool:
    """Whether the question has words that may say a value in other words: words that
    name no entity it is read from and no relation in memory ("is job 12 *finished*?";
    not "is Tomasz Wren operating F-12?", all names and a relation's verb)."""
    return bool(walker.matcher.stated_words(walker.named_or_relation()))


def _no(hop: Hop, now: list[Fact]) -> tuple[tuple[str, ...], str]:
    """A "no" verdict's values and words: what holds now (oldest first) and since when."""
    shown = tuple(dict.fromkeys(hop.end(f) for f in now))
    if not shown:
        return shown, "no: nothing holds now"
    # (since when one value holds: a list's values each began at their own turn)
    single = len(shown) == 1 and now[-1].turn_id is not None
    since = f" since turn {now[-1].turn_id}" if single else ""
    return shown, f"no: {render_values(shown)}{since}"


def closing_of(fact: Fact, slot: Sequence[Fact]) -> Fact | None:
    """The fact of the slot that closed ``fact``, when a newer value did."""
    return next((f for f in slot if f.seq == fact.valid_to), None)


def _value_side(
    walker: Walker, claims: Sequence[Anchor], forms: frozenset[str], named: set[str]
) -> list[Candidate]:
    """Readings from a value the question names: the slots it is (or was) a value of, but
    not another subject's when the question names (``named``) a subject of the relation
    (:func:`_held_by`)."""
    out: list[Candidate] = []
    for c in claims:
        for (node, back), facts in list(walker.slots.items()):
            if node != c.entity or back.forward or len(facts) > SMALL:
                continue  # (a value of many subjects is a kind, not the value of one slot)
            hop = Hop(back.predicate, True)
            for subject in dict.fromkeys(f.subject for f in facts):
                if subject not in named and _held_by(walker, named - {c.entity}, hop):
                    continue  # (the question names another subject of this relation)
                slot = walker.slot(subject, hop)
                if not slot:
                    continue
                current = [f for f in slot if walker.current(f)]
                held = [f for f in facts if f.subject == subject]
                shape = Shape(c, (back,), [(held[-1],)], [subject])
                values = tuple(dict.fromkeys(hop.end(f) for f in current))
                if "yesno" in forms and c.positions:
                    out.append(_verdict(shape, hop, c, values, slot, current, from_value=True))
                at = next((i for i, f in enumerate(slot) if hop.end(f) == c.entity), None)
                if at and "earlier" in forms:
                    cand = _before(shape, hop, "before", slot[at - 1], slot, claim=c)
                    cand.from_value = True
                    out.append(cand)
                if (none := _none(shape, hop, slot, current, walker.vocabulary.multi)) is not None:
                    none.from_value = True
                    out.append(none)
    return out


def _named(walker: Walker) -> set[str]:
    """The entities the question surely names by their names."""
    return {a.entity for a in walker.anchors if a.p >= CLAIM_SUBJECT_P and a.coverage > 0}


def _held_by(walker: Walker, named: set[str], hop: Hop) -> bool:
    """Whether a named entity has a value now in this relation: the question asks about
    its slot, not about that of a subject it does not name (a subject the words describe,
    a look-alike, another subject of the value it names: "is Ana on bus 310?" is not
    answered by bus 301's driver being Ana)."""
    return any(walker.current(f) for n in named for f in walker.slot(n, hop))


def nones(walker: Walker) -> list[Candidate]:
    """ "none" readings of the anchors' own slots whose every value was retracted."""
    out = []
    for a in walker.anchors:
        for (node, hop), slot in list(walker.slots.items()):
            if node != a.entity:
                continue
            current = [f for f in slot if walker.current(f)]
            shape = Shape(a, (hop,), [(slot[-1],)], [hop.end(slot[-1])])
            if (none := _none(shape, hop, slot, current, walker.vocabulary.multi)) is not None:
                out.append(none)
    return out


def withdrawn(
    walker: Walker, claims: Sequence[Anchor], forms: frozenset[str], stated: frozenset[str]
) -> list[Candidate]:
    """Verdicts on a relation of a named entity whose every value was withdrawn (none
    replaced): "is Sam still carrying the will?" once that fact was retracted is "no",
    not a question memory cannot answer. Asked of a value the question names (a claim)
    that the slot held, or, for a question that reads as yes/no (``stated``), of the
    relation itself. Its earlier values are what they were: "what was its priority at
    first?" is answered by the first of them, withdrawn or not, as of a slot with a value
    now."""
    if not forms & {"yesno", "earlier"}:
        return []
    named = _named(walker)
    out: list[Candidate] = []
    for (node, hop), slot in list(walker.slots.items()):
        if node not in named or not slot or any(walker.current(f) for f in slot):
            continue
        anchor = next(a for a in walker.anchors if a.entity == node)
        shape = Shape(anchor, (hop,), [(slot[-1],)], [hop.end(slot[-1])])
        if "earlier" in forms and hop.forward:
            out += _earlier(shape, hop, slot, [], claims)
        if "yesno" not in forms or replaced(slot):
            continue  # replaced, then withdrawn: what holds is unknown, not "nothing"
        held = [
            c
            for c in claims
            if c.positions and c.entity != node and any(hop.end(f) == c.entity for f in slot)
        ]
        for c in held:
            last = [f for f in slot if hop.end(f) == c.entity][-1]
            answer = f"no: nothing holds now ({c.entity} withdrawn)"
            out.append(
                Candidate("yesno", "no", shape, (), (last,), answer, claim=c, slot=tuple(slot))
            )
        if stated and not held:
            gone = render_values(tuple(dict.fromkeys(hop.end(f) for f in slot)))
            answer = f"no: nothing holds now ({gone} withdrawn)"
            out.append(
                Candidate(
                    "yesno", "no", shape, (), (slot[-1],), answer, slot=tuple(slot), stated=True
                )
            )
    return out


def intersections(shapes: Sequence[Shape], limit: int = 12) -> list[Candidate]:
    """Values two anchors' shapes share, when fewer than either shape has."""
    best = sorted((s for s in shapes if not s.described), key=lambda s: (-s.relevance, s.key[0]))[
        :limit
    ]
    out = []
    for i, a in enumerate(best):
        va = set(a.ends)
        for b in best[i + 1 :]:
            if b.anchor.entity == a.anchor.entity:
                continue
            vb = set(b.ends)
            both = va & vb
            if not both or (len(both) >= len(va) and len(both) >= len(vb)):
                continue
            values = tuple(v for v in a.values() if v in both)
            evidence = tuple(
                dict.fromkeys(
                    f
                    for s in (a, b)
                    for p, e in zip(s.paths, s.ends, strict=True)
                    if e in both
                    for f in p
                )
            )
            out.append(
                Candidate("value", "", a, values, evidence, render_values(values), partner=b)
            )
    return out
