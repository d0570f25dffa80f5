"""Answer a question from the graph: question -> evidence path -> answer.

The answerer sees the question text and the asking speaker, nothing else. It

1. links the entities the question mentions (an index lookup, then name
   coverage) and matches its words to the memory's predicates;
2. gathers candidate paths of one and two facts, each hop in either
   direction, from the linked entities; when the question describes an entity
   by a relation instead ("the dataset that has an anomaly"), the facts of
   that predicate anchor the path instead;
3. scores each path by how much of the question it explains: the anchor's
   name, each hop's predicate words, the middle entity's name, and the noun
   after "which"/"what" found in the answer's name. A hop must explain
   something, and a second hop costs a little, so the question alone decides
   whether a join is needed;
4. reads the cues: history words ("originally", "before it changed to X")
   answer from the (subject, predicate) history; "who set / decided /
   reported" answers with the speaker who stated the fact.

Ties are broken by a fixed rule: higher score, fewer hops, (for history
questions) the (subject, predicate) reading before the reverse one, newer
evidence, then answer text, so answers do not depend on hash seeds or store
order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ctxneo.linking import (
    STATED,
    Lexicon,
    Link,
    Question,
    cover,
    has_shape,
    link_entities,
    lookup_keys,
    match_predicate,
    person_like,
    read_question,
    word_match,
)
from ctxneo.model import UNKNOWN, Answer, Fact, Reading
from ctxneo.stores.base import Store
from ctxneo.text import is_identifier, name_stems

MAX_ANCHORS = 4
CANDIDATES = 24  # entities the index proposes per question, best first
DESCRIBED_FACTS = 25
SECOND_HOP_COST = 0.5
MIDDLE_WEIGHT = 0.9
TYPE_WEIGHT = 0.8
SHAPE_MISMATCH = 0.5
ECHO_PENALTY = 0.5
_FIRST_PERSON = {"i", "me", "my", "mine", "we", "us", "our"}


@dataclass(frozen=True, slots=True)
class Path:
    """A candidate: facts walked from an anchor to the answer end."""

    anchor: str | None  # None: anchored on a predicate the question names
    facts: tuple[Fact, ...]
    ends: tuple[str, ...]  # anchor/pivot, (middle,) answer
    directions: tuple[str, ...]  # "out" (subject -> object) or "in", per hop
    score: float
    explained: frozenset[int]
    backward: bool = False  # a history question answered against the (subject, predicate) slot

    @property
    def answer(self) -> str:
        return self.ends[-1]

    @property
    def last(self) -> Fact:
        return self.facts[-1]

    @property
    def shape(self) -> tuple[object, ...]:
        return (self.anchor, tuple(f.predicate for f in self.facts), self.directions)

    def order(self) -> tuple[object, ...]:
        return (
            -self.score,
            len(self.facts),
            self.backward,
            -max(f.seq for f in self.facts),
            self.answer,
        )


class Answerer:
    """Answers questions over one store."""

    def __init__(self, store: Store, lexicon: Lexicon | None = None) -> None:
        self.store = store
        self.lexicon = lexicon or Lexicon.default()

    def ask(
        self,
        text: str,
        *,
        speaker: str | None = None,
        as_of: int | None = None,
        k: int = 1,
        min_confidence: float | None = None,
        max_tokens: int | None = None,
        topic: str | None = None,
    ) -> Answer:
        """Answer ``text``; ``speaker`` resolves "I"/"my"; ``as_of`` reads the past."""
        # Interim: the readings, confidence and abstention arrive with the new pipeline.
        found = self._ask(text, speaker=speaker, as_of=as_of)
        if not found.known:
            return replace(found, reason=found.reading.removeprefix("unknown: "))
        reading = Reading(found.answer, found.values, found.evidence, 1.0, found.reading)
        return replace(found, confidence=1.0, readings=(reading,))

    def _ask(self, text: str, *, speaker: str | None = None, as_of: int | None = None) -> Answer:
        q = read_question(text)
        hits, vocabulary = self.store.vocabulary(lookup_keys(q), limit=CANDIDATES)
        links = link_entities(q, hits)
        if speaker and any(t.word in _FIRST_PERSON for t in q.words):
            mine = {t.pos: 1.0 for t in q.words if t.word in _FIRST_PERSON}
            links = [Link(speaker, speaker, 1.0, mine, True), *links]
        # A name met only in the "which X" noun is the answer's kind, not where to start.
        anchors = [lk for lk in links if lk.exact or not lk.positions.keys() <= q.type_positions]
        anchors = anchors[:MAX_ANCHORS]
        predicates = {p: m for p in vocabulary if (m := match_predicate(q, p, self.lexicon))}
        mentioned = {lk.entity for lk in links if lk.coverage >= 0.999}
        verb = _verb(q, anchors)
        if (
            q.asks_speaker
            and q.hint is not None
            and verb is not None
            and q.words[verb].stem in STATED
            and not any(verb in m for m in predicates.values())
        ):
            # "Who caught X": the "who" is whoever said it, not an owner relation.
            hint = q.hint.pos
            predicates = {
                p: kept
                for p, found in predicates.items()
                if (kept := {k: v for k, v in found.items() if k != hint})
            }
        ctx = _Scoring(q, predicates, mentioned, {lk.entity: lk for lk in anchors}, self.lexicon)

        # Who-questions may ask for the agent who stated a fact rather than for a
        # value: read them leniently first (stated values may be named, closed
        # facts count), then decide from the best path which reading it is.
        lenient = q.asks_speaker or q.history is not None
        best, paths = self._best(ctx, anchors, as_of, lenient)
        if best is None:
            return self._only_relation(text, anchors, as_of)
        provenance = q.asks_speaker and self._asks_who_said(ctx, best)
        if q.asks_speaker and not provenance and q.history is None:
            best, paths = self._best(ctx, anchors, as_of, False)
            if best is None:
                return _unknown(text, "no fact answers the question")

        if q.history is not None:
            return self._from_history(q, best, provenance, mentioned, as_of)
        # Every path of the best one's shape and score is an answer too: the
        # values of a multi-valued predicate, or all the X that have P.
        group = sorted(
            (
                p
                for p in paths
                if p.shape == best.shape
                and abs(p.score - best.score) < 1e-9
                and all(f.valid_at(as_of) for f in p.facts)
            ),
            key=lambda p: p.last.seq,
        ) or [best]
        evidence = _unique_facts([f for p in group for f in p.facts])
        if provenance:
            return _answer(text, [p.last.speaker or UNKNOWN for p in group], evidence, "provenance")
        reading = ("two-hop" if len(best.facts) == 2 else "one-hop") + (
            ":described" if best.anchor is None else ""
        )
        return _answer(text, [p.answer for p in group], evidence, reading, count=q.count)

    def _best(
        self, ctx: _Scoring, anchors: Sequence[Link], as_of: int | None, lenient: bool
    ) -> tuple[Path | None, list[Path]]:
        ctx.lenient = lenient
        paths = self._entity_paths(ctx, anchors, as_of)
        best = min(paths, key=Path.order) if paths else None
        if self._needs_description(ctx, best):
            paths += self._described_paths(ctx, as_of)
            best = min(paths, key=Path.order) if paths else None
        return best, paths

    def _only_relation(self, text: str, anchors: Sequence[Link], as_of: int | None) -> Answer:
        """No path explains the question, but it names an entity fully: when that entity has
        one relation only ("What's the latest on track circuit 88A?" and it only has a
        status), that is the answer; otherwise ``UNKNOWN``, with its facts as context."""
        named = [lk for lk in anchors if lk.coverage >= 0.9]
        if not named:
            return _unknown(text, "no entity or relation of the question is in memory")
        entity = named[0].entity
        facts = [f for f in self.store.facts_of([entity], as_of=as_of) if f.subject == entity]
        if facts and len({f.predicate for f in facts}) == 1:
            facts.sort(key=lambda f: f.seq)
            return _answer(text, [f.object for f in facts], tuple(facts), "one-hop:only-relation")
        return _unknown(text, f"no fact of {entity} matches the question", tuple(facts))

    def _asks_who_said(self, ctx: _Scoring, best: Path) -> bool:
        """Whether "who/which agent <verb> ..." asks for the speaker of the best path's fact.

        - the answer is named in the question ("who escalated X *to SEV1*"): the speaker;
        - "which agent ...": the speaker unless the answer's name says it is an agent;
        - a verb of saying or deciding ("who *set*", "who *flagged*"): the speaker,
          unless the predicate is that verb and its value can answer "who";
        - another verb: the value when the predicate is that verb ("who *owns*",
          "who is it *aimed at*"), else when the value can answer "who" (a name).
        """
        q = ctx.q
        if best.answer in ctx.mentioned:
            return True
        type_stems = {q.words[p].stem for p in q.type_positions}
        if type_stems:
            return not type_stems & set(name_stems(best.answer))
        verb = _verb(q, list(ctx.anchors.values()))
        explained = verb is not None and verb in ctx.predicates.get(best.last.predicate, {})
        stated = verb is not None and q.words[verb].stem in STATED
        if stated and not explained:
            return True
        if explained and not stated:
            return False
        return not person_like(best.answer)

    # -- candidate paths ----------------------------------------------------

    def _entity_paths(
        self, ctx: _Scoring, anchors: Sequence[Link], as_of: int | None
    ) -> list[Path]:
        if not anchors:
            return []
        names = [lk.entity for lk in anchors]
        paths: list[Path] = []
        adjacent = self.store.facts_of(names, as_of=as_of, history=ctx.lenient)
        if as_of is not None:  # closed facts count when lenient, but none from after as_of
            adjacent = [f for f in adjacent if f.seq <= as_of]
        # An anchor that is never a subject is a value ("severe root intrusion"):
        # stepping from it to what has it needs no other word of the question.
        ctx.values = {n for n in names if not any(f.subject == n for f in adjacent)}
        through: set[str] = set()
        for fact in adjacent:
            for anchor in names:
                if anchor in (fact.subject, fact.object) and fact.subject != fact.object:
                    paths += ctx.score(anchor, (fact,))
                    if fact.valid_at(as_of) and ctx.first_hop_explained(anchor, fact):
                        through.add(fact.object if fact.subject == anchor else fact.subject)
        if paths and not ctx.could_improve(min(paths, key=Path.order)):
            return paths  # a second hop has no word of the question left to explain
        # Only walk on through a first hop the question speaks of: a hub behind an
        # unrelated fact is never expanded (and could not justify a path anyway).
        for first, second in self.store.two_hop(names, through=sorted(through), as_of=as_of):
            if first.predicate == second.predicate and (
                first.subject == second.subject or first.object == second.object
            ):
                continue  # siblings (X runs on C, Y runs on C) answer nothing the question asks
            for anchor in names:
                if anchor in (first.subject, first.object):
                    paths += ctx.score(anchor, (first, second))
        return paths

    def _needs_description(self, ctx: _Scoring, best: Path | None) -> bool:
        """Whether the question may describe its subject by a relation instead of naming it:
        it names no entity we found a path from, or leaves a predicate it names unexplained."""
        if best is None:
            return bool(ctx.predicates)
        wanted = {pos for m in ctx.predicates.values() for pos, s in m.items() if s >= 0.99}
        return bool(wanted) and not wanted <= best.explained

    def _described_paths(self, ctx: _Scoring, as_of: int | None) -> list[Path]:
        ranked = sorted(ctx.predicates.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
        paths: list[Path] = []
        for predicate, _ in ranked[:2]:
            described = self.store.facts_with_predicate(
                predicate, as_of=as_of, limit=DESCRIBED_FACTS
            )
            pivots = sorted({f.subject for f in described} | {f.object for f in described})
            onward: dict[str, list[Fact]] = {}
            for fact in self.store.facts_of(pivots, as_of=as_of) if pivots else []:
                onward.setdefault(fact.subject, []).append(fact)
                onward.setdefault(fact.object, []).append(fact)
            for fact in described:
                paths += ctx.score_described(fact, onward)
        return paths

    # -- history --------------------------------------------------------------

    def _from_history(
        self, q: Question, best: Path, provenance: bool, mentioned: set[str], as_of: int | None
    ) -> Answer:
        last, outward = best.last, best.directions[-1] == "out"
        slot = self.store.history(last.subject, last.predicate)
        if not outward and len(slot) > 1:
            # Walked from a value to what has it ("before it became 3.0.0"): the
            # question is about the subject's values, with that one named.
            outward, mentioned = True, {*mentioned, last.object}
        if not outward:
            slot = [
                f
                for f in self.store.facts_of([last.object], history=True)
                if f.predicate == last.predicate and f.object == last.object
            ]
            slot.sort(key=lambda f: f.seq)
        if as_of is not None:
            slot = [f for f in slot if f.seq <= as_of]
        value = (lambda f: f.object) if outward else (lambda f: f.subject)
        reading = f"history:{q.history}"
        if q.history == "all":
            if not slot:
                return _unknown(q.text, f"{reading}: no values")
            evidence = _unique_facts([*best.facts[:-1], *slot])
            if provenance:
                return _answer(
                    q.text, [f.speaker or UNKNOWN for f in slot], evidence, reading + ":provenance"
                )
            return _answer(q.text, [value(f) for f in slot], evidence, reading)
        if q.history == "first":
            chosen: Fact | None = slot[0] if slot else None
        else:
            named = [i for i, f in enumerate(slot) if value(f) in mentioned]
            if named:
                index = named[0]
            else:
                current = [i for i, f in enumerate(slot) if f.valid_at(as_of)]
                index = current[-1] if current else len(slot)
            chosen = slot[index - 1] if index >= 1 else None
        if chosen is None:
            return _unknown(q.text, f"{reading}: no earlier value", tuple(slot))
        evidence = _unique_facts([*best.facts[:-1], *slot])
        if provenance:
            return _answer(q.text, [chosen.speaker or UNKNOWN], evidence, reading + ":provenance")
        return _answer(q.text, [value(chosen)], evidence, reading)


class _Scoring:
    """Scores candidate paths against one question."""

    def __init__(
        self,
        q: Question,
        predicates: dict[str, dict[int, float]],
        mentioned: set[str],
        anchors: dict[str, Link],
        lexicon: Lexicon,
    ) -> None:
        self.q = q
        self.lexicon = lexicon
        self.predicates = predicates
        self.mentioned = mentioned
        self.anchors = anchors
        self.lenient = False  # allow named answers and closed facts
        self.values: set[str] = set()
        self._names: dict[str, tuple[float, dict[int, float]]] = {}
        # Where the question asks for a value's shape ("when", "what date"), the
        # question word and its noun are explained by a value of that shape.
        self._shape_positions = {p: TYPE_WEIGHT for p in q.type_positions}
        if q.hint is not None:
            self._shape_positions[q.hint.pos] = TYPE_WEIGHT

    def _name(self, name: str) -> tuple[float, dict[int, float]]:
        """How much of a node's name the question covers, and the positions it explains."""
        if name not in self._names:
            c = cover(self.q, name)
            self._names[name] = c.coverage, c.positions
        return self._names[name]

    def _typed(self, answer: str) -> dict[int, float]:
        """Question positions the answer itself explains: "which *team*" -> ``Payments_Team``,
        "which *race*" -> "county council election", "*when*" -> a date."""
        found = {
            p: st * TYPE_WEIGHT
            for p, st in self._name(answer)[1].items()
            if p in self.q.type_positions
        }
        stems = name_stems(answer)
        for p in self.q.type_positions - found.keys():
            asked = self.q.words[p].stem
            best = max((word_match(asked, n, self.lexicon) for n in stems), default=0.0)
            if best:
                found[p] = best * TYPE_WEIGHT
        if self.q.shape is not None and has_shape(answer, self.q.shape):
            for p, w in self._shape_positions.items():
                found[p] = max(found.get(p, 0.0), w)
        return found

    def could_improve(self, best: Path) -> bool:
        """Whether some question word that anything could explain is still unexplained."""
        explainable = set(self.q.type_positions)
        for found in self.predicates.values():
            explainable |= found.keys()
        if self.q.hint is not None and self.q.shape is not None:
            explainable.add(self.q.hint.pos)
        for link in self.anchors.values():
            explainable |= link.positions.keys()
        return not explainable <= best.explained

    def first_hop_explained(self, anchor: str, fact: Fact) -> bool:
        """Whether a first hop from ``anchor`` could start a justified two-hop path."""
        spent = self.anchors[anchor].positions.keys()
        middle = fact.object if fact.subject == anchor else fact.subject
        return bool(
            self.predicates.get(fact.predicate, {}).keys() - spent
            or self._name(middle)[1].keys() - spent
            or (anchor in self.values and fact.object == anchor)
        )

    def score(self, anchor: str, facts: tuple[Fact, ...]) -> list[Path]:
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
                return []
        if len(set(ends)) != len(ends):
            return []
        start = dict(self.anchors[anchor].positions)
        from_value = anchor in self.values and directions[0] == "in"
        return self._finish(anchor, facts, tuple(ends), tuple(directions), start, from_value)

    def score_described(self, fact: Fact, onward: dict[str, list[Fact]]) -> list[Path]:
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
        out: list[Path] = []
        if asks_value:
            out += self._finish(None, (fact,), (fact.subject, fact.object), ("out",), {}, True)
        else:
            out += self._finish(None, (fact,), (fact.object, fact.subject), ("in",), {}, True)
        for pivot, other, direction in (
            (fact.subject, fact.object, "in"),
            (fact.object, fact.subject, "out"),
        ):
            for nxt in onward.get(pivot, ()):
                if nxt.seq == fact.seq:
                    continue
                far = nxt.object if nxt.subject == pivot else nxt.subject
                if far in (pivot, other):
                    continue
                d2 = "out" if nxt.subject == pivot else "in"
                out += self._finish(
                    None, (fact, nxt), (other, pivot, far), (direction, d2), {}, True
                )
        return out

    def _finish(
        self,
        anchor: str | None,
        facts: tuple[Fact, ...],
        ends: tuple[str, ...],
        directions: tuple[str, ...],
        explained: dict[int, float],
        first_ok: bool,
    ) -> list[Path]:
        answer = ends[-1]
        if answer in self.mentioned and not self.lenient:
            return []
        # The words naming the anchor are spent: nothing else explains them again.
        anchor_positions = set(explained)

        def add(found: dict[int, float], weight: float = 1.0) -> bool:
            gained = False
            for pos, s in found.items():
                if pos not in anchor_positions and s * weight > explained.get(pos, 0.0):
                    gained = True
                    explained[pos] = s * weight
            return gained

        hop_ok = []
        for i, fact in enumerate(facts):
            found = self.predicates.get(fact.predicate, {})
            # A hop whose predicate the question names is justified even when another
            # hop explains that word better ("gets its *water* from" for both hops).
            ok = add(found) or bool(found.keys() - anchor_positions)
            if i < len(facts) - 1:  # the entity in the middle of a join: "the *clause* whose"
                ok = add(self._name(ends[i + 1])[1], MIDDLE_WEIGHT) or ok
            hop_ok.append(ok)
        hop_ok[0] = hop_ok[0] or first_ok
        if not all(hop_ok[:-1]):
            return []  # checked first: most candidates fail here, before any name is read
        hop_ok[-1] = add(self._typed(answer)) or hop_ok[-1]
        echo = 0.0
        if self.lenient:
            # Asking who stated a value, or what came before it, names the value.
            coverage, strengths = self._name(answer)
            hop_ok[-1] = add(strengths, coverage) or hop_ok[-1]
        if not hop_ok[-1]:
            return []
        if not self.lenient and is_identifier(answer):
            # An entity partly named outside the "which X" noun is what the question
            # talks about, not what it asks for ("who's redlining *the clause*").
            echo = sum(
                s
                for p, s in self._name(answer)[1].items()
                if p not in self.q.type_positions and p not in anchor_positions
            )
        score = sum(explained.values()) - SECOND_HOP_COST * (len(facts) - 1)
        score -= ECHO_PENALTY * echo
        if self.q.shape is not None and not has_shape(answer, self.q.shape):
            score -= SHAPE_MISMATCH
        backward = self.q.history is not None and directions[-1] == "in"
        score = round(score, 6)  # equal explanations must tie exactly, whatever the float order
        return [Path(anchor, facts, ends, directions, score, frozenset(explained), backward)]


def _verb(q: Question, anchors: Sequence[Link]) -> int | None:
    """The position of the first word after "who"/"which agent" that names no entity and is
    not a history cue: the verb of the question ("who *set* the priority")."""
    named = {p for lk in anchors for p in lk.positions}
    return next((p for p in q.after_wh if p not in named and p not in q.cue_positions), None)


def _unique_facts(facts: Sequence[Fact] | object) -> tuple[Fact, ...]:
    seen: dict[int, Fact] = {}
    for f in facts:  # type: ignore[attr-defined]
        seen.setdefault(f.seq, f)
    return tuple(seen.values())


def _context(question: str, evidence: Sequence[Fact]) -> str:
    return "\n".join([f"Q: {question}", *(f.line() for f in evidence)])


def _answer(
    question: str,
    values: Sequence[str],
    evidence: tuple[Fact, ...],
    reading: str,
    *,
    count: bool = False,
) -> Answer:
    unique = list(dict.fromkeys(values))
    text = ", ".join(unique)
    if count:
        text = f"{len(unique)} ({text})"
    return Answer(question, text, evidence, _context(question, evidence), reading, tuple(unique))


def _unknown(question: str, why: str, evidence: tuple[Fact, ...] = ()) -> Answer:
    return Answer(question, UNKNOWN, evidence, _context(question, evidence), f"unknown: {why}")
