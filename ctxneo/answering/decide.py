"""Stage 5, deciding: what the best path answers, read with the question's cues.

- a path's shape groups the answer's values: every path of the best one's
  shape and score is an answer too (the values of a multi-valued relation);
- "who ..." asks either for a value (a person) or for the agent who stated the
  fact: decided from the words and from the graph (:func:`asks_who_said`);
- history cues ("originally", "before it changed to X", "over time") answer
  from the (subject, predicate) slot the best path ends in (:func:`from_history`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ctxneo.answering.candidates import Candidates
from ctxneo.answering.entities import RELATED, Link
from ctxneo.answering.question import STATED, Question
from ctxneo.answering.scoring import Path, Scoring
from ctxneo.answering.values import person_like
from ctxneo.model import UNKNOWN, Fact
from ctxneo.stores.base import Store
from ctxneo.text import name_stems


@dataclass(frozen=True, slots=True)
class Finding:
    """A reading of the question and the values it gives (before confidence is judged)."""

    values: tuple[str, ...]
    evidence: tuple[Fact, ...]
    reading: str
    path: Path | None = None
    reason: str = ""  # why nothing was found, when ``values`` is empty

    @property
    def known(self) -> bool:
        return bool(self.values)


def unknown(reason: str, evidence: tuple[Fact, ...] = (), path: Path | None = None) -> Finding:
    return Finding((), evidence, "unknown", path, reason)


def verb(q: Question, anchors: Sequence[Link]) -> int | None:
    """The position of the first word after "who"/"which agent" that names no entity and is
    not a history cue: the verb of the question ("who *set* the priority")."""
    named = {p for lk in anchors for p in lk.positions}
    return next((p for p in q.after_wh if p not in named and p not in q.cue_positions), None)


def asks_who_said(ctx: Scoring, top: Path) -> bool:
    """Whether "who/which agent <verb> ..." asks for the speaker of the best path's fact.

    - nobody is recorded as having stated it: the value;
    - the answer is named in the question ("who escalated X *to SEV1*"): the speaker;
    - "which agent ...": the speaker unless the answer's name says it is an agent;
    - a verb of saying or deciding ("who *set*", "who *flagged*"): the speaker,
      unless the predicate is that verb and its value can answer "who";
    - another verb: the value when the predicate is that verb ("who *owns*",
      "who is it *aimed at*"), else when the value can answer "who" (a name).
    """
    q = ctx.q
    if top.last.speaker is None:
        return False
    if top.answer in ctx.mentioned:
        return True
    type_stems = {q.words[p].stem for p in q.type_positions}
    if type_stems:
        return not type_stems & set(name_stems(top.answer))
    v = verb(q, list(ctx.anchors.values()))
    # A verb that only resembles the predicate in meaning is not its name ("who *assessed*")
    explained = v is not None and ctx.predicates.get(top.last.predicate, {}).get(v, 0.0) >= RELATED
    stated = v is not None and q.words[v].stem in STATED
    if stated and not explained:
        return True
    if explained and not stated:
        return False
    return not person_like(top.answer)


def group(paths: Iterable[Path], top: Path, as_of: int | None) -> list[Path]:
    """Every path of the best one's shape and score: all values of the winning relation."""
    if isinstance(paths, Candidates):
        return paths.group(top, as_of)
    return sorted(
        (
            p
            for p in paths
            if p.shape == top.shape
            and abs(p.score - top.score) < 1e-9
            and all(f.valid_at(as_of) for f in p.facts)
        ),
        key=lambda p: p.last.seq,
    ) or [top]


def reading_name(top: Path) -> str:
    hops = {1: "one-hop", 2: "two-hop", 3: "three-hop"}[len(top.facts)]
    if top.sibling:
        hops = "sibling" if len(top.facts) == 2 else "sibling+hop"
    return hops + (":described" if top.anchor is None else "")


def from_paths(
    q: Question, top: Path, paths: Sequence[Path], provenance: bool, as_of: int | None
) -> Finding:
    chosen = group(paths, top, as_of)
    evidence = unique_facts(f for p in chosen for f in p.facts)
    if provenance:
        return Finding(
            _distinct(p.last.speaker or UNKNOWN for p in chosen), evidence, "provenance", top
        )
    return Finding(_distinct(p.answer for p in chosen), evidence, reading_name(top), top)


def from_history(
    store: Store,
    q: Question,
    top: Path,
    provenance: bool,
    mentioned: set[str],
    as_of: int | None,
) -> Finding:
    """Answer a history question from the (subject, predicate) slot the best path ends in.

    The question must name that slot, by its relation or by one of its values: the
    history of whatever relation happens to be nearest answers nothing it asks.
    """
    if not top.slot_named:
        return unknown("history: no relation of the question has values to go back over", path=top)
    last, outward = top.last, top.directions[-1] == "out"
    slot = store.history(last.subject, last.predicate)
    if not outward and len(slot) > 1:
        # Walked from a value to what has it ("before it became 3.0.0"): the
        # question is about the subject's values, with that one named.
        outward, mentioned = True, {*mentioned, last.object}
    if not outward:
        slot = [
            f
            for f in store.facts_of([last.object], history=True)
            if f.predicate == last.predicate and f.object == last.object
        ]
        slot.sort(key=lambda f: f.seq)
    if as_of is not None:
        slot = [f for f in slot if f.seq <= as_of]

    def value(f: Fact) -> str:
        return f.object if outward else f.subject

    reading = f"history:{q.history}"
    if q.history == "all":
        if not slot:
            return unknown(f"{reading}: no values", path=top)
        evidence = unique_facts([*top.facts[:-1], *slot])
        if provenance:
            return Finding(
                _distinct(f.speaker or UNKNOWN for f in slot),
                evidence,
                reading + ":provenance",
                top,
            )
        return Finding(_distinct(value(f) for f in slot), evidence, reading, top)
    chosen: Fact | None
    if q.history == "first":
        chosen = slot[0] if slot else None
    else:
        named = [i for i, f in enumerate(slot) if value(f) in mentioned]
        if named:
            index = named[0]
        else:
            current = [i for i, f in enumerate(slot) if f.valid_at(as_of)]
            index = current[-1] if current else len(slot)
        chosen = slot[index - 1] if index >= 1 else None
    if chosen is None:
        return unknown(f"{reading}: no earlier value", tuple(slot), top)
    evidence = unique_facts([*top.facts[:-1], *slot])
    if provenance:
        return Finding((chosen.speaker or UNKNOWN,), evidence, reading + ":provenance", top)
    return Finding((value(chosen),), evidence, reading, top)


def only_relation(store: Store, anchors: Sequence[Link], as_of: int | None) -> Finding:
    """No path explains the question, but it names an entity fully: when that entity has
    one relation only ("What's the latest on track circuit 88A?" and it only has a
    status), that is a reading; otherwise nothing, with its facts as context."""
    named = [lk for lk in anchors if lk.coverage >= 0.9]
    if not named:
        return unknown("no entity or relation of the question is in memory")
    entity = named[0].entity
    facts = [f for f in store.facts_of([entity], as_of=as_of) if f.subject == entity]
    if facts and len({f.predicate for f in facts}) == 1:
        facts.sort(key=lambda f: f.seq)
        return Finding(_distinct(f.object for f in facts), tuple(facts), "one-hop:only-relation")
    return unknown(f"no fact of {entity} matches the question", tuple(facts))


def unique_facts(facts: Iterable[Fact]) -> tuple[Fact, ...]:
    seen: dict[int, Fact] = {}
    for f in facts:
        seen.setdefault(f.seq, f)
    return tuple(seen.values())


def _distinct(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))
