"""A batched write's shortcuts: the same facts, checks and state as fact by fact.

``check_facts`` checks each distinct name and predicate of a batch once;
``make_fact`` builds a :class:`Fact` without the frozen dataclass's ``__init__``;
the store inserts a batch's facts in one loop. None of it may show: the same
errors for the same bad facts, the same objects, and a refused batch leaves
nothing behind.
"""

from __future__ import annotations

import itertools
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from ctxneo.errors import InvalidFactError
from ctxneo.memory import Memory
from ctxneo.model import Fact, NewFact, check_facts, make_fact
from ctxneo.stores.networkx import NetworkXStore


class _Name(str):
    """A str subclass: never taken as known (it may hash and compare as it likes)."""


GOOD = NewFact("Svc_A", "OWNED_BY", "Team_B", "Agent_X")
# One bad value per field, and a good variant of each, in the order checked() checks.
BAD_FIELDS: dict[str, list[Any]] = {
    "subject": ["", " ", 3, None, "\ud800", "x" * 5000, _Name("")],
    "object": ["", "\t", b"B", "\udfff"],
    "predicate": ["OWNED BY", "", "1X", None, "p" * 101],
    "speaker": ["", " ", 7, "\ud800"],
    "turn_id": [True, 2**63, "3", 1.0],
    "fact_id": [5, "\ud800", "f" * 5000],
    "multi": ["yes", 1, None],
    "text": [5, "t" * 9000],
}


def _error(f: Any) -> str | None:
    try:
        f.checked()
    except InvalidFactError as e:
        return str(e)
    return None


def _batch_error(facts: list[Any]) -> str | None:
    try:
        check_facts(facts)
    except InvalidFactError as e:
        return str(e)
    return None


def _variants() -> list[NewFact]:
    """Facts with one or two bad fields (every pair of fields), and good ones."""
    out = [GOOD, NewFact("Svc_A", "ownedBy", "Team_B"), NewFact("Svc_A", "X", "Svc_A", None)]
    singles = [(name, v) for name, values in BAD_FIELDS.items() for v in values]
    out += [NewFact(**{**_fields(GOOD), name: v}) for name, v in singles]
    for (n1, v1), (n2, v2) in itertools.combinations(singles, 2):
        if n1 != n2:
            out.append(NewFact(**{**_fields(GOOD), n1: v1, n2: v2}))
    return out


def _fields(f: NewFact) -> dict[str, Any]:
    return {x.name: getattr(f, x.name) for x in fields(f)}


def test_check_facts_gives_each_fact_what_checked_gives_it() -> None:
    for f in _variants():
        expected = _error(f)
        assert _batch_error([f]) == expected, f
        if expected is None:
            assert check_facts([f]) == [f.checked()]


def test_a_name_known_from_an_earlier_fact_is_not_taken_for_another_role_s_check() -> None:
    """A batch refuses the first bad fact with its own message, whatever the facts before
    it shared with it (names seen as a subject, predicates in another spelling)."""
    before = [GOOD, NewFact("Team_B", "owned_by", "Svc_A", "Agent_X", 3, "f1", True, "said")]
    empty = NewFact("", "OWNED_BY", "B")
    for f in _variants():
        assert _batch_error([*before, f]) == _at(3, 3, _error(f)), f
        assert _batch_error([*before, f, empty]) == (
            _at(3, 4, _error(f)) if _error(f) else _at(4, 4, _error(empty))
        )
    checked = check_facts([*before, NewFact("Svc_A", "ownedBy", "Team_B")])
    assert [f.predicate for f in checked] == ["OWNED_BY"] * 3


def _at(position: int, size: int, error: str | None) -> str | None:
    """A batch's error: which fact of how many, then that fact's own error."""
    return None if error is None else f"fact {position} of {size}: {error}"


def test_a_str_subclass_is_checked_every_time() -> None:
    assert _batch_error([GOOD, NewFact("Svc_A", "OWNED_BY", _Name(""))]) == _at(
        2, 2, _error(NewFact("Svc_A", "OWNED_BY", _Name("")))
    )
    assert _batch_error([NewFact(_Name("A"), "OWNED_BY", "B"), NewFact(_Name(" "), "P", "B")])


def test_not_a_fact_is_refused() -> None:
    with pytest.raises(InvalidFactError, match="not a fact"):
        check_facts([GOOD, ("A", "OWNED_BY", "B")])


def test_make_fact_is_fact() -> None:
    values: list[tuple[Any, ...]] = [
        ("A", "P", "B", 1, 1),
        ("A", "P", "B", 7, 3, 9, "Agent", -4, "f-1", "said so"),
        ("A", "P", "A", 2**63 - 1, 2**63 - 1, None, None, None, None, None),
    ]
    for v in values:
        made, built = make_fact(*v), Fact(*v)
        assert made == built and hash(made) == hash(built) and repr(made) == repr(built)
        assert type(made) is Fact
        assert [getattr(made, f.name) for f in fields(Fact)] == [
            getattr(built, f.name) for f in fields(Fact)
        ]
        with pytest.raises(AttributeError):
            made.seq = 5  # type: ignore[misc]  # (still frozen)
        assert made.closed_at(v[3] + 1) == built.closed_at(v[3] + 1)


@pytest.mark.parametrize("journaled", [False, True])
def test_a_batch_with_a_bad_fact_is_refused_whole_and_loses_nothing(
    journaled: bool, tmp_path: Path
) -> None:
    path = tmp_path / "m.jsonl" if journaled else None
    memory = Memory.open(path)
    first = [NewFact(f"Svc_{i}", "OWNED_BY", f"Team_{i % 3}", "Agent") for i in range(50)]
    memory.remember_many(first)
    before = (list(memory.store.all_facts()), memory.stats(), dict(memory.store.postings))
    data = path.read_bytes() if path else b""
    # New names, restated values and a close of a stored value, then a bad fact last.
    batch = [
        NewFact("Svc_New", "OWNED_BY", "Team_9", "Agent"),
        NewFact("Svc_1", "OWNED_BY", "Team_7", "Agent"),
        NewFact("Svc_2", "OWNED_BY", "Team_2", "Agent"),
    ]
    for bad in [NewFact("Svc_3", "OWNED BY", "Team_1"), NewFact("Svc_3", "OWNED_BY", "")]:
        with pytest.raises(InvalidFactError):
            memory.remember_many([*batch, bad])
        assert (list(memory.store.all_facts()), memory.stats(), dict(memory.store.postings)) == (
            before
        )
        assert memory.ask("Which team owns Svc_New?").answer == "UNKNOWN"
        if path:
            assert path.read_bytes() == data
    memory.close()
    if path:  # and the journal reads back as the memory was
        with Memory.open(path) as again:
            assert list(again.store.all_facts()) == before[0]


def test_a_batch_leaves_the_state_fact_by_fact_writes_leave(tmp_path: Path) -> None:
    """One batch and the same facts one at a time (and a replay of the batch's journal):
    the same facts, counters, indexes and graph, in the same order."""
    facts = [
        NewFact(f"Svc_{i % 40}", p, f"{'Team' if p == 'OWNED_BY' else 'Svc'}_{(i * 7) % 13}")
        for i in range(300)
        for p in ("OWNED_BY", "DEPENDS_ON")
    ] + [NewFact("Svc_1", "HAS_NOTE", "Note_1", "Agent", 4, "f", text="svc one's note")]

    def state(store: NetworkXStore) -> Any:
        store._build_deferred()
        return (
            list(store.all_facts()),
            store.stats(),
            store.facts_current,
            list(store.postings.items()),
            list(store.said.items()),
            [(k, list(v.items())) for k, v in store.current.items()],  # type: ignore[union-attr]
            [(k, list(v.items())) for k, v in store.current_pointing.items()],  # type: ignore[union-attr]
            [(k, list(v.items())) for k, v in store.graph._succ.items()],
            [(k, list(v.items())) for k, v in store.graph._pred.items()],
            list(store._valid_to),
        )

    batched = NetworkXStore(tmp_path / "b.jsonl")
    batched.declare_multi_valued(["DEPENDS_ON"])
    batched.write(facts)
    one_by_one = NetworkXStore()
    one_by_one.declare_multi_valued(["DEPENDS_ON"])
    for f in facts:
        one_by_one.remember(f)
    assert state(batched) == state(one_by_one)
    batched.close()
    (tmp_path / "b.jsonl.snapshot").unlink(missing_ok=True)  # (replayed, not loaded)
    assert state(NetworkXStore(tmp_path / "b.jsonl")) == state(one_by_one)


def test_a_batch_of_a_few_thousand_facts_goes_to_the_collector_s_oldest_generation() -> None:
    """What a batch makes lives as long as the memory: it is moved to the oldest
    generation as the write ends, not walked by the next young collections."""
    import gc

    store = NetworkXStore()
    gc.collect()
    if gc.get_freeze_count():  # (then nothing is moved: the process's own frozen objects stay)
        pytest.skip("this process has frozen objects")
    written = store.write([NewFact(f"Svc_{i}", "OWNED_BY", f"Team_{i % 7}") for i in range(3000)])
    newest = written.facts[-1]
    assert any(o is newest for o in gc.get_objects(generation=2))
