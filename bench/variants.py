"""Unanswerable variants: the same conversation with the facts a question needs unsaid.

For a graded query, the (subject, predicate) keys of its required facts are
found, and every fact turn of those keys becomes chatter: a distractor turn
with the same speaker and text, so the transcript the flat baselines read is
unchanged while the graph is never told the facts. The only right answer to
the query is then ``UNKNOWN``. A variant stops at its query (what comes after
is never seen by it), so replaying it costs no more than the turns before it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from ctxneo.model import Scenario, Turn


@dataclass(frozen=True, slots=True)
class Variant:
    """One unanswerable variant: a scenario cut after ``query``, its keys' facts turned to chatter.

    ``removed`` holds the fact ids turned into chatter; ``keys`` the
    (subject, predicate) pairs they belong to.
    """

    scenario: Scenario
    query: Turn
    keys: tuple[tuple[str, str], ...]
    removed: tuple[str, ...]


def required_keys(scenario: Scenario, query: Turn) -> tuple[tuple[str, str], ...]:
    """The (subject, predicate) keys of ``query``'s required facts, in the order first stated."""
    wanted = set(query.required_fact_ids)
    keys: dict[tuple[str, str], None] = {}
    for turn in scenario.turns:
        if turn.turn_type == "fact" and turn.fact_id in wanted:
            assert turn.subject is not None and turn.predicate is not None
            keys[(turn.subject, turn.predicate)] = None
    return tuple(keys)


def as_chatter(turn: Turn) -> Turn:
    """A fact turn said as a distractor: same turn id, speaker and text, no fact."""
    return Turn(turn.turn_id, "distractor", turn.speaker, turn.text)


def unanswerable_variant(scenario: Scenario, query: Turn) -> Variant | None:
    """The variant of ``scenario`` in which ``query`` cannot be answered.

    Returns ``None`` when the query names no required facts (nothing to
    remove, so the variant would be the scenario itself).
    """
    keys = required_keys(scenario, query)
    if not keys:
        return None
    key_set = set(keys)
    turns: list[Turn] = []
    removed: list[str] = []
    for turn in scenario.turns:
        if turn.turn_type == "fact" and (turn.subject, turn.predicate) in key_set:
            assert turn.fact_id is not None
            removed.append(turn.fact_id)
            turns.append(as_chatter(turn))
        else:
            turns.append(turn)
        if turn.turn_id == query.turn_id:
            break
    return Variant(
        scenario=replace(scenario, turns=tuple(turns)),
        query=query,
        keys=keys,
        removed=tuple(removed),
    )


def unanswerable_variants(scenario: Scenario) -> Iterator[Variant]:
    """One variant per graded query of ``scenario`` that names required facts."""
    for turn in scenario.turns:
        if turn.graded and (variant := unanswerable_variant(scenario, turn)) is not None:
            yield variant
