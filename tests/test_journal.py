"""The embedded store's journal: replayed on open, torn lines survived, shared between processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxneo.errors import InvalidFactError, JournalError
from ctxneo.memory import Memory
from ctxneo.model import MAX_INT, MIN_INT, Fact, NewFact
from ctxneo.stores.journal import (
    TornJournalWarning,
    encode_close,
    encode_fact,
    encode_line,
    encode_record,
    encode_texts,
    fact_record,
)
from ctxneo.stores.networkx import NetworkXStore


def test_a_journal_replays_to_the_same_memory(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    with Memory.open(path) as m:
        m.declare_multi_valued("DEPENDS_ON")
        m.remember("Ticket_4471", "HAS_PRIORITY", "high", speaker="Agent_Intake", turn_id=1)
        m.remember("Ticket_4471", "HAS_PRIORITY", "critical", speaker="Agent_Specialist", turn_id=7)
        m.remember("Flow", "DEPENDS_ON", "A")
        m.remember("Flow", "DEPENDS_ON", "B")
        m.retract("Flow", "DEPENDS_ON", "A")
        m.alias("the ticket", "Ticket_4471")
        before = list(m.store.all_facts())
    with Memory.open(path) as again:
        assert list(again.store.all_facts()) == before
        assert again.store.multi_valued() == frozenset({"DEPENDS_ON"})
        assert again.ask("What is the priority of the ticket?").answer == "critical"
        assert again.remember("X", "IS", "Y").seq == 6  # 4 facts and a retraction before it
    lines = path.read_text().splitlines()
    assert json.loads(lines[0]) == {"format": "ctxneo-journal/1"}
    assert all(json.loads(line) for line in lines)


def test_a_torn_last_line_is_reported_set_aside_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    with Memory.open(path) as m:
        m.remember("A", "OWNED_BY", "B")
    with open(path, "ab") as f:
        f.write(b'{"op": "fact", "seq": 2, "s": "A", "p": "OWN')  # a crash mid-write
    with pytest.warns(TornJournalWarning, match="line 3"), Memory.open(path) as m:
        assert [f.object for f in m.store.all_facts()] == ["B"]
        m.remember("A", "OWNED_BY", "C")
    assert (tmp_path / "m.jsonl.torn").read_bytes().startswith(b'{"op": "fact", "seq": 2')
    with Memory.open(path) as m:  # the file is whole again
        assert [(f.object, f.valid_to) for f in m.store.all_facts()] == [("B", 2), ("C", None)]


def test_a_damaged_line_in_the_middle_is_an_error_not_silently_skipped(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    with Memory.open(path) as m:
        m.remember("A", "OWNED_BY", "B")
        m.remember("A", "OWNED_BY", "C")
    lines = path.read_text().splitlines()
    lines[1] = "garbage"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(JournalError, match="line 2"):
        Memory.open(path)


def test_a_file_that_is_not_a_journal_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "scenarios.json"
    path.write_text('{"format": "ctxneo-scenarios/1", "scenarios": []}\n')
    with pytest.raises(JournalError, match="not a ctxneo journal"):
        Memory.open(path)


WRITER = """
import sys
from ctxneo.memory import Memory
with Memory.open(sys.argv[1]) as m:
    for i in range(40):
        m.remember("Shared", "HAS_VALUE", f"{sys.argv[2]}-{i}")
"""


def test_processes_sharing_a_journal_see_each_other_and_never_reuse_a_number(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shared.jsonl"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), name]) for name in "abc"]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    with Memory.open(path) as m:
        history = m.history("Shared", "HAS_VALUE")
    assert len(history) == 120
    assert [f.seq for f in history] == list(range(1, 121))
    assert sum(f.valid_to is None for f in history) == 1


def test_clear_is_seen_by_every_process_sharing_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "shared.jsonl"
    a, b = Memory.open(path), Memory.open(path)
    a.remember("A", "OWNED_BY", "B")
    assert [f.object for f in b.store.all_facts()] == ["B"]
    b.store.clear()
    assert list(a.store.all_facts()) == []
    a.remember("A", "OWNED_BY", "C")
    assert [(f.object, f.seq) for f in b.store.all_facts()] == [("C", 1)]
    a.close()
    b.close()
    with Memory.open(path) as again:
        assert [f.object for f in again.store.all_facts()] == ["C"]


CLEARER = """
import sys
from pathlib import Path
from ctxneo.memory import Memory
stop = Path(sys.argv[2])
with Memory.open(sys.argv[1]) as m:
    while not stop.exists():
        m.clear()
"""


def test_a_writer_beside_a_process_clearing_in_a_loop_never_breaks(tmp_path: Path) -> None:
    # Each clear renames a new file over the journal. A writer that let go of the file
    # it had read before opening the new one could meet that file's inode again, given
    # to a later clear's file, take it for the file read, and fail from then on.
    path, stop = tmp_path / "m.jsonl", tmp_path / "stop"
    Memory.open(path).close()
    clearer = subprocess.Popen([sys.executable, "-c", CLEARER, str(path), str(stop)])
    try:
        with Memory.open(path) as m:
            for i in range(3000):
                m.remember(f"S{i}", "OWNED_BY", f"T{i}")  # (none may raise)
    finally:
        stop.touch()
        assert clearer.wait(timeout=120) == 0


def test_a_closed_memory_refuses_writes_instead_of_losing_them(tmp_path: Path) -> None:
    from ctxneo.errors import StoreError

    memory = Memory.open(tmp_path / "m.jsonl")
    memory.close()
    with pytest.raises(StoreError, match="closed"):
        memory.remember("A", "OWNED_BY", "B")


def test_any_string_survives_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    odd = "nul \x00, \u2028 separator, 🚀 and ünïcødé"
    with Memory.open(path) as m:
        m.remember(odd, "OWNED_BY", odd, speaker=odd)
    with Memory.open(path) as m:
        (fact,) = m.store.all_facts()
    assert (fact.subject, fact.object, fact.speaker) == (odd, odd, odd)


def test_a_write_of_several_changes_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    with Memory.open(path) as m:
        m.remember("T", "HAS_PRIORITY", "high")
        m.remember("T", "HAS_PRIORITY", "critical")  # closes one fact and adds one
    last = json.loads(path.read_text().splitlines()[-1])
    assert last["op"] == "batch" and [r["op"] for r in last["records"]] == ["close", "fact"]


def test_reading_a_missing_journal_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "absent" / "memory.jsonl"
    with pytest.raises(JournalError, match="no memory at"):
        Memory.open(path, create=False)
    assert not path.parent.exists()


class _Name(str):
    """A str subclass: checked in full every time, never taken from a batch's memo."""


class _Number(int):
    """An int subclass: written as json writes an int."""


@pytest.mark.parametrize("seed", range(5))
def test_a_fact_is_written_as_the_json_encoder_writes_its_record(seed: int) -> None:
    """encode_fact writes without building the record's dict: the same bytes."""
    import random

    rng = random.Random(seed)
    words = ["Svc", "Zürich", "🚀", 'quo"te', "back\\slash", "tab\tnew\nline", "\u2028", "\x00", ""]

    def text() -> str:
        return "".join(rng.choice(words) for _ in range(rng.randrange(1, 4))) or "x"

    facts = [
        Fact(
            text(),
            rng.choice(["OWNED_BY", "RUNS_ON"]),
            _Name(text()) if rng.random() < 0.2 else text(),
            seq,
            # (The same int object as seq, as a write makes it, or another.)
            rng.choice([seq, _Number(seq), seq + 2**40]),
            rng.choice([None, seq + 1, MAX_INT]),
            rng.choice([None, text()]),
            rng.choice([None, 0, -3, MIN_INT, MAX_INT, _Number(7)]),
            rng.choice([None, text()]),
            rng.choice([None, text()]),
        )
        for seq in range(1, 60)
    ]
    for f in facts:
        assert encode_fact(f) == encode_record(fact_record(f))
        for at in (f.seq + 1, MAX_INT, _Number(f.seq + 2)):
            close = {"op": "close", "s": f.subject, "p": f.predicate, "seq": f.seq, "at": at}
            assert encode_close(f, at) == encode_record(close)
    records = [fact_record(f) for f in facts] + [{"op": "tick", "at": 99}]
    texts = [encode_fact(f) for f in facts] + [encode_record({"op": "tick", "at": 99})]
    assert encode_texts(texts) == encode_line(records)
    assert encode_texts(texts[:1]) == encode_line(records[:1])


def test_a_batch_checks_each_fact_whatever_it_shares_with_the_facts_before_it() -> None:
    """Fields checked once a batch are taken as known only when they are the same str;
    anything else in a later fact is still refused, and the whole batch with it."""
    store = NetworkXStore()
    good = [NewFact("A", "owned_by", "B", "Agent"), NewFact("A", "OWNED_BY", "B", "Agent")]
    bad = [
        NewFact("A", "OWNED_BY", "B", "Agent", turn_id=True),  # type: ignore[arg-type]
        NewFact("A", "OWNED_BY", "B", "Agent", multi="yes"),  # type: ignore[arg-type]
        NewFact("A", "OWNED BY", "B", "Agent"),
        NewFact("A", "OWNED_BY", " ", "Agent"),
        NewFact("A", "OWNED_BY", "B", "\ud800"),
        NewFact("A", "OWNED_BY", _Name(""), "Agent"),
        NewFact("A", "OWNED_BY", "B", "Agent", text="x" * 9000),
        ("A", "OWNED_BY", "B"),
    ]
    for fact in bad:
        with pytest.raises(InvalidFactError):
            store.write([*good, fact])  # type: ignore[list-item]
    assert store.stats()["facts"] == 0
    written = store.write([*good, NewFact("C", "ownedBy", "A", "Agent")])
    assert [f.predicate for f in written.facts] == ["OWNED_BY", "OWNED_BY", "OWNED_BY"]
