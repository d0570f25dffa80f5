"""Stage 4, scoring: how much of the question a candidate path explains.

A path is a walk of facts from an anchor (an entity the question names, or a
fact the question describes by its predicate) to an answer. Each question
position it explains counts once, at its best strength: the anchor's name,
each hop's predicate words, the name of an entity in the middle ("the
*clause* whose..."), the answer itself when it fits the "which X" noun or
the shape asked for ("when" -> a date), and the sibling cue ("the *same*
director as") for a hop that returns to the relation it came by. Every hop
must explain something (or, for the last, be what the question asks for), and
each hop after the first costs a little, so the question, not a label,
decides how far to walk.

A three-hop question may score thousands of walks, so what walks share is
read once per question: what a shape of walk (anchor, predicates,
directions) explains (:class:`_Base`), what an entity explains as a middle
or as an answer (:class:`_End`), and the ways on from a walk in progress
(:class:`_Hop`). A walk whose entities name no word scores as its shape
does, with the same sums in the same order (so the same floats); the others
go through the general rule (:meth:`Scoring._finish_named`). Scored walks go
into :class:`~ctxneo.answering.candidates.Candidates`, which builds a
:class:`Path` only for the walks a reading uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from ctxneo.answering.entities import Link, cover, name_parts
from ctxneo.answering.question import Question
from ctxneo.answering.relations import Relations
from ctxneo.answering.values import has_shape, person_like
from ctxneo.model import Fact

if TYPE_CHECKING:
    from ctxneo.answering.candidates import Candidates, _Rows

HOP_COST = 0.5
MIDDLE_WEIGHT = 0.9
TYPE_WEIGHT = 0.8
SHAPE_MISMATCH = 0.5
ECHO_PENALTY = 0.5
SIBLING_WEIGHT = 1.0
PERSON_WEIGHT = 0.4
#: On a walk of several hops, how well each hop's predicate must match a question word.
HOP_NAMED = 0.6


#: Whether a name has a shape or reads as a person's, whatever the question: read once.
_shaped = lru_cache(maxsize=65_536)(has_shape)
_person_like = lru_cache(maxsize=65_536)(person_like)


@dataclass(frozen=True, slots=True)
class Path:
    """A candidate: facts walked from an anchor to the answer end."""

    anchor: str | None  # None: anchored on a predicate the question names
    facts: tuple[Fact, ...]
    ends: tuple[str, ...]  # anchor/pivot, middles..., answer
    directions: tuple[str, ...]  # "out" (subject -> object) or "in", per hop
    score: float
    explained: frozenset[int]
    backward: bool = False  # a history question answered against the (subject, predicate) slot
    relation: tuple[float, ...] = ()  # per hop: the strength of its predicate's best match
    sibling: bool = False  # two hops through one relation: "the same director as X"
    strengths: tuple[tuple[int, float], ...] = ()  # each explained position, how well
    slot_named: bool = False  # the last relation, or its value, is named by the question

    @property
    def answer(self) -> str:
        return self.ends[-1]

    @property
    def last(self) -> Fact:
        return self.facts[-1]

    @property
    def shape(self) -> tuple[object, ...]:
        """Paths of one shape answer together: the values of a multi-valued relation."""
        return (self.anchor, tuple(f.predicate for f in self.facts), self.directions)

    def order(self) -> tuple[object, ...]:
        return (
            -self.score,
            len(self.facts),
            self.backward,
            -max(f.seq for f in self.facts),
            self.answer,
        )


@dataclass(frozen=True, slots=True)
class _Claims:
    """What a walk's relations explain, whatever entities it passes through."""

    explained: dict[int, float]
    relation: tuple[float, ...]
    named: tuple[bool, ...]  # per hop: its relation is named by the question
    sibling: bool
    kind: dict[int, float]  # "which X" positions the last relation names


@dataclass(frozen=True, slots=True)
class _End:
    """What an entity explains as a walk's answer, whatever the walk."""

    typed: dict[int, float]  # the kind or shape asked for ("which *team*", "when")
    echo: tuple[tuple[int, float], ...]  # an identifier's name words outside the "which X" noun
    mismatch: bool  # not of the shape asked for ("when" and no date)


_NONE: dict[int, float] = {}  # (shared, never written: what most names explain)
_PLAIN = _End({}, (), False)
_MISMATCHED = _End({}, (), True)


@dataclass(frozen=True, slots=True)
class _Base:
    """What every walk of one shape explains when none of its entities names a word."""

    claims: _Claims
    total: float  # the sum of the explained strengths
    keys: frozenset[int]
    strengths: tuple[tuple[int, float], ...]
    #: (inner hops justified, last hop justified), without and with the first hop justified
    oks: tuple[tuple[bool, bool], tuple[bool, bool]]


class _Hop:
    """One way on from a walk in progress, by a predicate in a direction: its shape, what
    the shape explains, and the classes (by score) of the walks it has scored."""

    __slots__ = ("base", "classes", "oks", "plain", "shape")

    def __init__(
        self,
        base: _Base | None,
        shape: tuple[str | None, tuple[str, ...], tuple[str, ...]],
        oks: tuple[bool, bool],
        plain: float,
    ) -> None:
        self.base = base
        self.shape = shape
        self.oks = oks
        self.plain = plain  # the score of a walk whose answer neither echoes nor mismatches
        self.classes: dict[float, _Rows] = {}


def is_sibling(first: Fact, second: Fact, d1: str, d2: str) -> bool:
    """Two hops through the same relation back out of the middle: X -P-> M <-P- Y."""
    return first.predicate == second.predicate and d1 != d2


class Scoring:
    """Scores candidate paths against one question."""

    def __init__(
        self,
        q: Question,
        predicates: dict[str, dict[int, float]],
        mentioned: set[str],
        anchors: dict[str, Link],
        relations: Relations,
        by_word: dict[str, list[dict[int, float]]] | None = None,
    ) -> None:
        self.q = q
        self.relations = relations
        self.predicates = predicates
        # Per predicate word, the positions it explains: one hop uses each word once.
        self.by_word = by_word if by_word is not None else {p: [m] for p, m in predicates.items()}
        self.mentioned = mentioned
        self.anchors = anchors
        self.lenient = False  # allow named answers and closed facts
        #: Whether a lenient reading met something a strict one reads otherwise (a named
        #: answer, an answer's own name, an identifier's echo, a closed fact): if not, the
        #: strict reading would walk and score exactly as the lenient one did.
        self.strict_differs = False
        self.values: set[str] = set()
        self._names: dict[str, tuple[float, dict[int, float]]] = {}
        self._shapes: dict[tuple[object, ...], _Claims | None] = {}
        # The stems on the "which X" words, and those positions in the order they are read
        # when a name explains none of them.
        self._type_stems = frozenset(
            n for n, at in q.at.items() if any(p in q.type_positions for p in at)
        )
        self._untyped = q.type_positions - {}.keys()
        # Per question, computed once however many walks pass through or end at an entity:
        # the positions a middle's name explains, what an answer end explains, and what
        # every walk of one shape explains when its entities add nothing.
        self._middles: dict[str, dict[int, float]] = {}
        self._ends: dict[str, _End] = {}
        self._bases: dict[tuple[object, ...], _Base | None] = {}
        self._starts: dict[str | None, tuple[tuple[tuple[int, float], ...], frozenset[int]]] = {}
        self._partials: dict[tuple[str, tuple[str, ...]], tuple[dict[int, float], float]] = {}
        self._ways: dict[tuple[object, ...], tuple[dict[str, _Hop], dict[str, _Hop]]] = {}
        self._ways_for: Candidates | None = None
        self._justified: dict[tuple[object, ...], bool] = {}
        # Where the question asks for a value's shape ("when", "what date"), the
        # question word and its noun are explained by a value of that shape.
        self._shape_positions = {p: TYPE_WEIGHT for p in q.type_positions}
        if q.hint is not None:
            self._shape_positions[q.hint.pos] = TYPE_WEIGHT
        self._sibling = {p: SIBLING_WEIGHT for p in q.sibling_positions}

    def _name(self, name: str) -> tuple[float, dict[int, float]]:
        """How much of a node's name the question covers, and the positions it explains."""
        found = self._names.get(name)
        if found is None:
            c = cover(self.q, name)
            found = self._names[name] = c.coverage, c.positions
        return found

    def _person(self, answer: str) -> dict[int, float]:
        """ "who ...": a person's name is the kind of answer asked for (weakly: names abound)."""
        q = self.q
        if q.asks_person and q.wh is not None and q.shape is None and _person_like(answer):
            return {q.wh.pos: PERSON_WEIGHT}
        return {}

    def _middle(self, name: str) -> dict[int, float]:
        """Positions the name of an entity in the middle of a walk explains (never the
        "which X" noun: that names the answer's kind, not a middle's)."""
        found = self._middles.get(name)
        if found is None:
            type_positions = self.q.type_positions
            named = self._name(name)[1]
            found = self._middles[name] = (
                {p: s for p, s in named.items() if p not in type_positions} if named else _NONE
            )
        return found

    def _end(self, answer: str) -> _End:
        """What an answer end explains, whatever the walk that reaches it (but a person,
        asked of one hop only, and the answer's own name, asked by lenient readings)."""
        found = self._ends.get(answer)
        if found is None:
            found = self._ends[answer] = self._read_end(answer)
        return found

    def _read_end(self, answer: str) -> _End:
        """The question positions the answer itself explains ("which *team*" ->
        ``Payments_Team``, "which *race*" -> "county council election", "*when*" -> a
        date), the words an identifier answer echoes, and whether it has the wrong shape."""
        q = self.q
        type_positions = q.type_positions
        stems, identifier, acronyms = name_parts(answer)
        typed: dict[int, float] = {}
        if type_positions:
            # The name is read only when a part of it may be on a "which X" word: a prose
            # name's parts go only to words of their own stems.
            if identifier or acronyms or not self._type_stems.isdisjoint(stems):
                typed = {
                    p: st * TYPE_WEIGHT
                    for p, st in self._name(answer)[1].items()
                    if p in type_positions
                }
                missing = type_positions - typed.keys()
            else:
                missing = self._untyped
            for p in missing:
                asked = q.words[p]
                best = self.relations.name(asked.word, asked.stem, answer)
                if best:
                    typed[p] = best * TYPE_WEIGHT
        shape = q.shape
        shaped = shape is not None and _shaped(answer, shape)
        if shaped:
            for p, w in self._shape_positions.items():
                typed[p] = max(typed.get(p, 0.0), w)
        echo = (
            tuple((p, s) for p, s in self._name(answer)[1].items() if p not in type_positions)
            if identifier
            else ()
        )
        mismatch = shape is not None and not shaped
        if typed or echo:
            return _End(typed, echo, mismatch)
        return _MISMATCHED if mismatch else _PLAIN  # most answers: one record for all

    def _start(self, anchor: str | None) -> tuple[tuple[tuple[int, float], ...], frozenset[int]]:
        """An anchor's name positions, sorted, and as a set: what its walks start with."""
        found = self._starts.get(anchor)
        if found is None:
            positions = self.anchors[anchor].positions if anchor is not None else {}
            found = self._starts[anchor] = (tuple(sorted(positions.items())), frozenset(positions))
        return found

    def explained_strength(self, path: Path) -> dict[int, float]:
        """How well the path explains each question position it explains."""
        return dict(path.strengths)

    def could_improve(self, best: Path) -> bool:
        """Whether some question word that anything could explain is still unexplained."""
        explainable = set(self.q.type_positions) | self.q.sibling_positions
        for found in self.predicates.values():
            explainable |= {p for p, s in found.items() if s >= HOP_NAMED}
        if self.q.hint is not None and self.q.shape is not None:
            explainable.add(self.q.hint.pos)
        for link in self.anchors.values():  # a middle may be named ("the *drug lot* for X")
            explainable |= link.positions.keys()
        return not explainable <= best.explained

    def onward(self, spent: set[int], fact: Fact, far: str) -> bool:
        """Whether a hop could be the inner part of a justified longer path: its predicate or
        the entity it reaches explains a word that ``spent`` (what came before) does not."""
        return bool(
            self.predicates.get(fact.predicate, {}).keys() - spent
            or self._name(far)[1].keys() - spent
        )

    def partial(
        self,
        anchor: str,
        walked: tuple[Fact, ...],
        far: str,
        predicates: tuple[str, ...] | None = None,
    ) -> float:
        """A quick measure of how much of the question a walk in progress explains: its hops'
        best predicate matches and the name of the entity it has reached (``predicates``:
        its hops' predicates, when known)."""
        if predicates is None:
            predicates = tuple(f.predicate for f in walked)
        spent = self.anchors[anchor].positions
        key = (anchor, predicates)
        by_relation = self._partials.get(key)
        if by_relation is None:
            relations: dict[int, float] = {}
            for predicate in predicates:
                for pos, s in self.predicates.get(predicate, {}).items():
                    if pos not in spent and s > relations.get(pos, 0.0):
                        relations[pos] = s
            by_relation = self._partials[key] = (relations, sum(relations.values()))
        named = self._name(far)[1]
        if not named:
            return by_relation[1]  # the walk's relations alone (the same sum)
        explained = dict(by_relation[0])
        for pos, s in named.items():
            if pos not in spent and s * MIDDLE_WEIGHT > explained.get(pos, 0.0):
                explained[pos] = s * MIDDLE_WEIGHT
        return sum(explained.values())

    def first_hop_explained(self, anchor: str, fact: Fact) -> bool:
        """Whether a first hop from ``anchor`` could start a justified longer path."""
        spent = set(self.anchors[anchor].positions)
        far = fact.object if fact.subject == anchor else fact.subject
        return (
            self.onward(spent, fact, far)
            or (anchor in self.values and fact.object == anchor)
            or bool(self.q.sibling and self.predicates.get(fact.predicate))
        )

    def score(self, anchor: str, facts: tuple[Fact, ...], found: Candidates) -> bool:
        """Score the walk of ``facts`` from ``anchor`` into ``found``; whether it scored."""
        ends = [anchor]
        directions = []
        for fact in facts:
            here = ends[-1]
            if fact.subject == here:
                ends.append(fact.object)
                directions.append("out")
            elif fact.object == here:
                ends.append(fact.subject)
                directions.append("in")
            else:
                return False
        if len(set(ends)) != len(ends):
            return False
        from_value = anchor in self.values and directions[0] == "in"
        return self._finish(anchor, facts, tuple(ends), tuple(directions), from_value, found)

    def goes_on(
        self,
        anchor: str,
        ends: tuple[str, ...],
        directions: tuple[str, ...],
        predicates: tuple[str, ...],
    ) -> bool:
        """Whether some walk one hop longer than this one (from ``anchor`` through ``ends``,
        by ``predicates`` in ``directions``) may score: not when an entity repeats, nor when
        its hops so far are not justified and no entity on it names a word."""
        if len(set(ends)) != len(ends):
            return False
        from_value = anchor in self.values and directions[0] == "in"
        key = (anchor, predicates, directions, from_value)
        justified = self._justified.get(key)
        if justified is None:
            # A hop's claims depend only on the hops before it and the walk's length, so
            # any last hop tells whether these are justified: "" is no predicate at all.
            start, anchor_positions = self._start(anchor)
            base = self._base((*predicates, ""), (*directions, "out"), start, anchor_positions)
            justified = self._justified[key] = base is not None and base.oks[from_value][0]
        return justified or any(self._middle(e) for e in ends[1:])

    def extending(
        self,
        anchor: str | None,
        walked: tuple[Fact, ...],
        ends: tuple[str, ...],
        directions: tuple[str, ...],
        predicates: tuple[str, ...],
        found: Candidates,
        described: bool = False,
    ) -> Callable[[Fact, bool, str], bool]:
        """A scorer of the walks one hop longer than ``walked`` (from ``anchor`` through
        ``ends``): ``step(fact, out, end)`` is :meth:`score` of ``walked + (fact,)``, whose
        last hop goes ``out`` (or in) to ``end``, into ``found``.

        Everything a hop's walks share is read once: the anchor's words, the names of
        the entities passed, each (predicate, direction) shape's claims. A walk scores
        as its shape does unless one of its entities names a word (see :meth:`_finish`).
        A ``described`` walk starts at a fact the question describes (``anchor`` None):
        its first hop is justified, and its two ends may be one entity.
        """
        lenient = self.lenient
        mentioned = self.mentioned
        known = self._ends
        start, anchor_positions = self._start(anchor)
        hops = len(walked) + 1
        distinct = described or len(set(ends)) == len(ends)
        middles_named = any(self._middle(e) for e in ends[1:])
        from_value = described or (anchor in self.values and directions[0] == "in")
        backward_in = self.q.history is not None
        spent = HOP_COST * (hops - 1)
        # The ways on (by direction: in, out; then predicate) are the same for every walk of
        # this shape into ``found``.
        if self._ways_for is not found:
            self._ways, self._ways_for = {}, found
        shape_key = (anchor, predicates, directions, described)
        onward = self._ways.get(shape_key)
        if onward is None:
            onward = self._ways[shape_key] = ({}, {})

        def hop(predicate: str, out: bool) -> _Hop:
            by = (*predicates, predicate)
            to = (*directions, "out" if out else "in")
            key = (start, by, to)
            if key not in self._bases:
                self._bases[key] = self._base(by, to, start, anchor_positions)
            base = self._bases[key]
            found = onward[out][predicate] = _Hop(
                base,
                (anchor, by, to),
                base.oks[from_value] if base else (False, False),
                round(base.total - spent, 6) if base else 0.0,
            )
            return found

        def step(fact: Fact, out: bool, end: str) -> bool:
            if not distinct or end in ends:
                return False
            if end in mentioned:
                if not lenient:
                    return False
                self.strict_differs = True
            h = onward[out].get(fact.predicate) or hop(fact.predicate, out)
            base = h.base
            if base is None:
                return False
            if middles_named:
                return self._finish_named(
                    anchor, (*walked, fact), (*ends, end), h.shape[2], from_value, base, found
                )
            inner_ok, last_ok = h.oks
            if not inner_ok:
                return False
            e = known.get(end) or self._end(end)
            if lenient and (e.echo or self._name(end)[1]):
                self.strict_differs = True
                return self._finish_named(
                    anchor, (*walked, fact), (*ends, end), h.shape[2], from_value, base, found
                )
            if e.typed:
                return self._finish_named(
                    anchor, (*walked, fact), (*ends, end), h.shape[2], from_value, base, found
                )
            if not last_ok:
                return False
            if (lenient or not e.echo) and not e.mismatch:
                score = h.plain  # round(base.total - spent, 6): nothing less, the same float
            else:
                score = base.total - spent
                if not lenient:
                    score -= ECHO_PENALTY * sum(s for p, s in e.echo if p not in anchor_positions)
                if e.mismatch:
                    score -= SHAPE_MISMATCH
                score = round(score, 6)
            rows = h.classes.get(score)
            if rows is None:
                rows = h.classes[score] = found.rows(h.shape, score, base, backward_in and not out)
            found.add_row(rows, walked, ends, fact, end)
            return True

        return step

    def score_described(self, fact: Fact, onward: dict[str, list[Fact]], found: Candidates) -> None:
        """Paths that start at a fact the question describes by its predicate.

        One hop answers with an end of the fact itself: the object when the
        question's noun is the predicate ("what *partitioning strategy* ..."),
        else the subject ("which dataset has an anomaly"). Two hops go on from
        the subject ("which team owns the dataset that has an anomaly").
        """
        # The value is asked for when the question's noun is the predicate ("what
        # partitioning strategy"), or when it asks for a value's shape ("when ...").
        asks_value = bool(self.q.type_positions & set(self.predicates.get(fact.predicate, {}))) or (
            self.q.shape is not None and has_shape(fact.object, self.q.shape)
        )
        if asks_value:
            self._finish(None, (fact,), (fact.subject, fact.object), ("out",), True, found)
        else:
            self._finish(None, (fact,), (fact.object, fact.subject), ("in",), True, found)
        walked, predicates = (fact,), (fact.predicate,)
        for pivot, other, direction in (
            (fact.subject, fact.object, "in"),
            (fact.object, fact.subject, "out"),
        ):
            nexts = onward.get(pivot)
            if not nexts:
                continue
            step = self.extending(
                None, walked, (other, pivot), (direction,), predicates, found, described=True
            )
            for nxt in nexts:
                if nxt.seq == fact.seq:
                    continue
                out = nxt.subject == pivot
                far = nxt.object if out else nxt.subject
                if far in (pivot, other):
                    continue
                step(nxt, out, far)

    def _claims(
        self,
        predicates: tuple[str, ...],
        directions: tuple[str, ...],
        start: tuple[tuple[int, float], ...],
        hops: int,
    ) -> _Claims | None:
        """What the relations of a walk explain, alone: computed once per shape of walk,
        since every walk of a shape (all values of a relation) explains the same words."""
        key = (predicates, directions, start, hops)
        if key in self._shapes:
            return self._shapes[key]
        explained = dict(start)
        anchor_positions = set(explained)
        q = self.q
        weak_hint = q.wh.pos if q.wh is not None and q.wh.word in ("who", "whom") else -1

        def claim(predicate: str) -> float:
            """Each word of the hop's predicate explains its best question word not yet
            explained as well: a relation named twice ("films *directed* by the *director*
            of X") is two hops. Returns the strongest match the hop made."""
            chosen: list[tuple[float, float, int]] = []
            for per_word in self.by_word.get(predicate, ()):
                gains = [
                    (s - explained.get(pos, 0.0), s, pos)
                    for pos, s in per_word.items()
                    if pos not in anchor_positions
                ]
                if gains:
                    chosen.append(max(gains))
            spots = [pos for _, _, pos in chosen]
            if len(chosen) > 1 and any(min(spots) < p < max(spots) for p in anchor_positions):
                # One relation is said in one place: words on both sides of a name are two
                # mentions ("movies *starred* by Scar *actors*"), so the hop takes the best.
                chosen = [max(chosen, key=lambda c: (c[1], -c[2]))]
            strongest = 0.0
            for gain, s, pos in chosen:
                # A hop names its relation even by a word another hop explains better ("gets
                # its *water* from" names both); "who" alone names none.
                if pos != weak_hint:
                    strongest = max(strongest, s)
                if gain > 0:
                    explained[pos] = s
            return strongest

        named: list[bool] = []
        relation: list[float] = []
        sibling = False
        result: _Claims | None = None
        for i, predicate in enumerate(predicates):
            if i and predicates[i - 1] == predicate and directions[i - 1] != directions[i]:
                # Back out through the relation we came by: justified by the sibling cue
                # ("the *same* director as"), or by the relation named a second time.
                again = claim(predicate)
                relation.append(again)
                if not q.sibling and again < HOP_NAMED:
                    break
                sibling = True
                for pos, w in self._sibling.items():
                    if pos not in anchor_positions and w > explained.get(pos, 0.0):
                        explained[pos] = w
                named.append(True)
                continue
            # A hop whose predicate the question names is justified even when another
            # hop explains that word better ("gets its *water* from" for both hops). On a
            # walk of several hops each must be named clearly: faint likenesses of meaning
            # add up over a long walk and would let it outscore the short one asked for.
            least = HOP_NAMED if hops > 1 else 0.0
            before = dict(explained)
            relation.append(claim(predicate))
            gained = explained != before
            named.append(relation[-1] >= least and (gained or relation[-1] > 0))
        else:
            # The relation the answer is reached by names its kind too: "what *part* ..."
            # is answered by the one PLAYED_BY someone, whatever else it explains.
            kind = {
                p: w
                for p, w in self.predicates.get(predicates[-1], {}).items()
                if p in q.type_positions and p not in anchor_positions
            }
            result = _Claims(explained, tuple(relation), tuple(named), sibling, kind)
        self._shapes[key] = result
        return result

    def _base(
        self,
        predicates: tuple[str, ...],
        directions: tuple[str, ...],
        start: tuple[tuple[int, float], ...],
        anchor_positions: frozenset[int],
    ) -> _Base | None:
        """What every walk of one shape explains when none of its entities adds a word."""
        claims = self._claims(predicates, directions, start, len(predicates))
        if claims is None:
            return None
        explained = dict(claims.explained)
        kind_named = False
        for pos, s in claims.kind.items():  # as _finish adds them, at weight 1
            if pos not in anchor_positions and s > explained.get(pos, 0.0):
                kind_named = True
                explained[pos] = s
        oks: list[tuple[bool, bool]] = []
        for first_ok in (False, True):
            hop_ok = list(claims.named)
            hop_ok[0] = hop_ok[0] or first_ok
            oks.append((all(hop_ok[:-1]), kind_named or hop_ok[-1]))
        return _Base(
            claims,
            sum(explained.values()),
            frozenset(explained),
            tuple(sorted(explained.items())),
            (oks[0], oks[1]),
        )

    def _finish(
        self,
        anchor: str | None,
        facts: tuple[Fact, ...],
        ends: tuple[str, ...],
        directions: tuple[str, ...],
        first_ok: bool,
        found: Candidates,
    ) -> bool:
        """Score a walk into ``found``; whether it scored."""
        answer = ends[-1]
        lenient = self.lenient
        if answer in self.mentioned:
            if not lenient:
                return False
            self.strict_differs = True
        # The words naming the anchor are spent: nothing else explains them again.
        start, anchor_positions = self._start(anchor)
        predicates = tuple(f.predicate for f in facts)
        key = (start, predicates, directions)
        try:
            base = self._bases[key]
        except KeyError:
            base = self._bases[key] = self._base(predicates, directions, start, anchor_positions)
        if base is None:
            return False
        hops = len(facts)
        if hops > 1 and any(self._middle(ends[i]) for i in range(1, hops)):
            return self._finish_named(anchor, facts, ends, directions, first_ok, base, found)
        # Most walks: no entity on the walk names a word, so the walk explains what its
        # shape does (the same sums as in _finish_named, in the same order).
        inner_ok, last_ok = base.oks[first_ok]
        if not inner_ok:
            return False  # checked first: most candidates fail here, before the answer is read
        end = self._end(answer)
        if lenient and (end.echo or self._name(answer)[1]):
            self.strict_differs = True
            return self._finish_named(anchor, facts, ends, directions, first_ok, base, found)
        if end.typed or (hops == 1 and anchor is not None and self._person(answer)):
            return self._finish_named(anchor, facts, ends, directions, first_ok, base, found)
        if not last_ok:
            return False
        score = base.total - HOP_COST * (hops - 1)
        if not lenient:
            score -= ECHO_PENALTY * sum(s for p, s in end.echo if p not in anchor_positions)
        if end.mismatch:
            score -= SHAPE_MISMATCH
        backward = self.q.history is not None and directions[-1] == "in"
        rows = found.rows((anchor, predicates, directions), round(score, 6), base, backward)
        found.add_row(rows, facts[:-1], ends[:-1], facts[-1], answer)
        return True

    def _finish_named(
        self,
        anchor: str | None,
        facts: tuple[Fact, ...],
        ends: tuple[str, ...],
        directions: tuple[str, ...],
        first_ok: bool,
        base: _Base,
        found: Candidates,
    ) -> bool:
        """:meth:`_finish` for a walk some of whose entities explain words of the question."""
        claims = base.claims
        anchor_positions = self._start(anchor)[1]
        explained = dict(claims.explained)

        def add(found: dict[int, float], weight: float = 1.0) -> bool:
            gained = False
            for pos, s in found.items():
                if pos not in anchor_positions and s * weight > explained.get(pos, 0.0):
                    gained = True
                    explained[pos] = s * weight
            return gained

        relation, sibling = claims.relation, claims.sibling
        hop_ok = list(claims.named)
        for i in range(len(facts) - 1):  # the entity in the middle of a join: "the *clause* whose"
            hop_ok[i] = add(self._middle(ends[i + 1]), MIDDLE_WEIGHT) or hop_ok[i]
        hop_ok[0] = hop_ok[0] or first_ok
        if not all(hop_ok[:-1]):
            return False
        end = self._end(ends[-1])
        hop_ok[-1] = add(end.typed) or hop_ok[-1]
        hop_ok[-1] = add(claims.kind) or hop_ok[-1]
        # The kind of answer alone justifies only one hop from a named entity: among its
        # facts, the one whose value is a person answers "who" ("who has 10X2 now?").
        if len(facts) == 1 and anchor is not None:
            hop_ok[-1] = add(self._person(ends[-1])) or hop_ok[-1]
        echo = 0.0
        # The last relation is named by the question, or its value is: a history question
        # asks about the slot it names ("what did X start with", "before it moved to Y").
        slot_named = claims.named[-1] and claims.relation[-1] > 0
        if self.lenient:
            if end.echo or self._name(ends[-1])[1]:
                self.strict_differs = True
            # Asking who stated a value, or what came before it, names the value.
            coverage, strengths = self._name(ends[-1])
            value_named = add(strengths, coverage)
            hop_ok[-1] = value_named or hop_ok[-1]
            slot_named = slot_named or value_named
        if not hop_ok[-1]:
            return False
        if not self.lenient:
            # An entity partly named outside the "which X" noun is what the question
            # talks about, not what it asks for ("who's redlining *the clause*").
            echo = sum(s for p, s in end.echo if p not in anchor_positions)
        score = sum(explained.values()) - HOP_COST * (len(facts) - 1)
        score -= ECHO_PENALTY * echo
        if end.mismatch:
            score -= SHAPE_MISMATCH
        backward = self.q.history is not None and directions[-1] == "in"
        score = round(score, 6)  # equal explanations must tie exactly, whatever the float order
        found.add(
            Path(
                anchor,
                facts,
                ends,
                directions,
                score,
                frozenset(explained),
                backward,
                relation,
                sibling,
                tuple(sorted(explained.items())),
                slot_named,
            )
        )
        return True
