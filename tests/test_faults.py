"""The journal under faults: full disks, file size limits, fork, kill -9, damaged files.

Each test states what a user relies on: an acknowledged write is never lost,
a refused write leaves neither the file nor the process changed, and a
journal is never modified by a reader.
"""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

from ctxneo.errors import InvalidFactError, JournalError
from ctxneo.memory import Memory
from ctxneo.model import NewFact
from ctxneo.stores import journal as journal_module
from ctxneo.stores.journal import TornJournalWarning
from ctxneo.stores.networkx import NetworkXStore


def check_invariants(path: Path) -> dict[str, Any]:
    """Replay ``path`` and return what a user would check: facts, values, current keys."""
    with NetworkXStore(path) as store:
        facts = list(store.all_facts())
    seqs = [f.seq for f in facts]
    assert seqs == sorted(set(seqs)), "sequence numbers are unique and increasing"
    current: dict[tuple[str, str], int] = {}
    for f in facts:
        if f.valid_to is None:
            current[(f.subject, f.predicate)] = current.get((f.subject, f.predicate), 0) + 1
    assert all(n == 1 for n in current.values()), "one current value per key"
    return {"facts": facts, "objects": [f.object for f in facts]}


def failing_write(fd_of_journal: int, *, after: int, err: int = errno.ENOSPC) -> Any:
    """An ``os.write`` that writes ``after`` bytes to the journal and then fails like a
    full disk (other descriptors are left alone)."""
    real = os.write

    def write(fd: int, data: Any) -> int:
        if fd != fd_of_journal:
            return real(fd, data)
        if after:
            real(fd, bytes(data)[:after])
        raise OSError(err, os.strerror(err))

    return write


@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EFBIG, errno.EIO])
def test_a_refused_append_leaves_file_and_memory_unchanged_and_is_never_written_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, err: int
) -> None:
    path = tmp_path / "m.jsonl"
    store = NetworkXStore(path)
    store.remember(NewFact("Svc", "OWNED_BY", "Team_A"))
    before = path.read_bytes()
    assert store._journal is not None and store._journal._fd is not None
    monkeypatch.setattr(os, "write", failing_write(store._journal._fd, after=7, err=err))
    with pytest.raises(JournalError, match="cannot append"):
        store.remember(NewFact("Svc", "OWNED_BY", "Team_B"))
    with pytest.raises(JournalError):  # a batch too: nothing of it
        store.remember_many([NewFact("X", "IS", "1"), NewFact("Svc", "OWNED_BY", "Team_C")])
    monkeypatch.undo()
    assert path.read_bytes() == before  # the partial record was cut off
    assert [f.object for f in store.facts_of(["Svc"])] == ["Team_A"]  # the process did not change
    assert store.stats()["last_seq"] == 1
    store.remember(NewFact("Svc", "OWNED_BY", "Team_D"))  # the next write is whole, alone
    store.close()
    seen = check_invariants(path)
    assert seen["objects"] == ["Team_A", "Team_D"]
    assert [f.seq for f in seen["facts"]] == [1, 2]


EFBIG_WRITER = """
import json, resource, signal, sys
from ctxneo.errors import JournalError
from ctxneo.memory import Memory
path, limit = sys.argv[1], int(sys.argv[2])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
acked, refused = [], []
with Memory.open(path) as m:
    for i in range(200):
        value = f"v{i}-" + "x" * 40
        try:
            if i % 3:
                m.remember("Key", "HAS_VALUE", value)
            else:
                m.remember_many([("Key", "HAS_VALUE", value), (f"E{i}", "HAS_VALUE", value)])
            acked.append(value)
        except JournalError as e:
            refused.append(value)
            assert "File too large" in str(e), e
    print(json.dumps({"acked": acked, "refused": refused, "current": m.current("Key")[0].object}))
"""


def test_a_real_file_size_limit_refuses_writes_whole_and_loses_no_acknowledged_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.jsonl"
    out = subprocess.run(
        [sys.executable, "-c", EFBIG_WRITER, str(path), "4000"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result = json.loads(out.stdout)
    assert result["acked"] and result["refused"]  # the limit was met mid-run
    seen = check_invariants(path)
    stored = set(seen["objects"])
    assert set(result["acked"]) <= stored
    assert not set(result["refused"]) & stored
    with Memory.open(path) as m:  # what the writer answered from is what the file holds
        assert m.current("Key")[0].object == result["current"]
        m.remember("Key", "HAS_VALUE", "after the limit")  # and the journal takes writes again
    assert path.stat().st_size > 4000


def test_a_value_that_is_not_json_is_refused_before_anything_changes(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    with Memory.open(path) as m:
        m.remember("A", "OWNED_BY", "B")
        before = path.read_bytes()
        for bad in ({"x"}, object(), 3, b"bytes"):
            with pytest.raises(InvalidFactError, match="fact_id"):
                m.remember("A", "OWNED_BY", "C", fact_id=bad)  # type: ignore[arg-type]
        assert [f.object for f in m.current("A")] == ["B"]
        assert m.ask("Who owns A?").answer == "B"
    assert path.read_bytes() == before


# -- fork ---------------------------------------------------------------------------


def _child_writes(memory: Memory, name: str, n: int) -> None:
    for i in range(n):
        if i % 5 == 0:
            memory.remember_many([("Shared", "HAS_VALUE", f"{name}-{i}"), (name, "DID", str(i))])
        else:
            memory.remember("Shared", "HAS_VALUE", f"{name}-{i}")


def _expect_all(path: Path, names: list[str], n: int) -> None:
    seen = check_invariants(path)
    values = [o for o in seen["objects"] if "-" in o]
    expected = {f"{name}-{i}" for name in names for i in range(n)}
    assert sorted(values) == sorted(expected)  # every write, once
    assert [f.seq for f in seen["facts"]] == list(range(1, len(seen["facts"]) + 1))


def test_a_memory_opened_before_fork_is_safe_in_the_children(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    memory = Memory.open(path)
    memory.remember("Shared", "HAS_VALUE", "start")
    children = []
    for name in ("c1", "c2", "c3"):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            code = 0
            try:
                _child_writes(memory, name, 60)
            except BaseException:
                code = 1
            os._exit(code)
        children.append(pid)
    _child_writes(memory, "parent", 60)
    statuses = [os.waitpid(pid, 0)[1] for pid in children]
    assert statuses == [0, 0, 0]
    # The parent sees what its children wrote, and its own numbers never collided with theirs.
    assert len(memory.history("Shared", "HAS_VALUE")) == 1 + 4 * 60
    memory.close()
    _expect_all(path, ["c1", "c2", "c3", "parent"], 60)


def _mp_worker(memory: Memory, name: str) -> None:
    _child_writes(memory, name, 40)
    memory.close()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_multiprocessing_children_write_safely_to_the_parents_memory(
    tmp_path: Path, method: str
) -> None:
    path = tmp_path / "m.jsonl"
    memory = Memory.open(path)
    memory.remember("Shared", "HAS_VALUE", "start")
    ctx = multiprocessing.get_context(method)
    procs = [ctx.Process(target=_mp_worker, args=(memory, f"p{i}")) for i in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    memory.remember("Shared", "HAS_VALUE", "end")
    assert memory.current("Shared", "HAS_VALUE")[0].object == "end"
    memory.close()
    _expect_all(path, ["p0", "p1", "p2"], 40)


def test_an_in_process_memory_cannot_be_sent_to_a_child_and_says_so() -> None:
    import pickle

    from ctxneo.errors import StoreError

    with pytest.raises(StoreError, match="in-process memory"):
        pickle.dumps(NetworkXStore())


# -- kill -9 ------------------------------------------------------------------------

KILL_WRITER = """
import sys
from ctxneo.memory import Memory
path, name = sys.argv[1], sys.argv[2]
with Memory.open(path, fsync="off") as m:
    i = 0
    while True:
        value = f"{name}-{i}"
        if i % 4 == 0:
            m.remember_many([(f"K{i % 7}", "HAS_VALUE", value), ("B", "HAS_VALUE", value + "/b")])
        else:
            m.remember(f"K{i % 7}", "HAS_VALUE", value)
        print(value, flush=True)  # acknowledged: the write returned
        i += 1
"""


def test_writers_killed_mid_write_lose_no_acknowledged_write(tmp_path: Path) -> None:
    """Three rounds of three writers killed with SIGKILL at a random moment mid-stream."""
    path = tmp_path / "m.jsonl"
    rng = random.Random(8)
    acked: set[str] = set()
    for round_ in range(3):
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", KILL_WRITER, str(path), f"r{round_}w{w}"],
                stdout=subprocess.PIPE,
                text=True,
            )
            for w in range(3)
        ]
        for p in procs:  # all are writing: the kill lands mid-stream, not at start-up
            assert p.stdout is not None
            acked.add(p.stdout.readline().strip())
        time.sleep(0.05 + rng.random() * 0.3)
        for p in procs:
            p.send_signal(signal.SIGKILL)
        for p in procs:
            out, _ = p.communicate()
            acked.update(out.split())
    assert len(acked) > 50
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TornJournalWarning)  # the last kill may tear a line
        seen = check_invariants(path)
    stored = seen["objects"]
    assert acked <= set(stored)  # nothing acknowledged was lost
    assert len(stored) == len(set(stored))  # nothing written twice


# -- readers change nothing -----------------------------------------------------------


def test_reading_a_file_that_is_not_a_journal_leaves_it_untouched(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ctxneo.cli import main

    for content in (b'{"uri": "bolt://x", "retries": 3}', b"plain text\nno final newline", b"\n"):
        config = tmp_path / "cfg.json"
        config.write_bytes(content)
        result = CliRunner().invoke(main, ["stats", "--store", str(config)])
        assert result.exit_code == 1 and "not a ctxneo journal" in result.output
        assert config.read_bytes() == content
        assert sorted(p.name for p in tmp_path.iterdir()) == ["cfg.json"]
        with pytest.raises(JournalError, match="not a ctxneo journal"):
            Memory.open(config).remember("A", "IS", "B")  # a writer does not touch it either
        assert config.read_bytes() == content


def test_a_torn_journal_is_repaired_only_by_a_writer(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    with Memory.open(path) as m:
        m.remember("A", "OWNED_BY", "B")
    with open(path, "ab") as f:
        f.write(b'{"op": "fact", "seq": 2, "s": "A", "p": "OWN')
    torn = path.read_bytes()
    with pytest.warns(TornJournalWarning, match="skipped"), Memory.open(path) as reader:
        assert [f.object for f in reader.store.all_facts()] == ["B"]
        reader.ask("Who owns A?")
        reader.stats()
    assert path.read_bytes() == torn  # reading changed nothing
    assert not (tmp_path / "m.jsonl.torn").exists()
    with pytest.warns(TornJournalWarning) as warned, Memory.open(path) as writer:
        writer.remember("A", "OWNED_BY", "C")
    assert "set aside" in str(warned[-1].message)
    assert (tmp_path / "m.jsonl.torn").read_bytes().startswith(b'{"op": "fact", "seq": 2')
    assert check_invariants(path)["objects"] == ["B", "C"]


def test_opening_a_missing_journal_creates_nothing_until_the_first_write(tmp_path: Path) -> None:
    path = tmp_path / "new" / "m.jsonl"
    with Memory.open(path) as m:
        assert m.stats()["facts"] == 0
        assert m.ask("Who owns A?").answer == "UNKNOWN"
        assert not path.parent.exists()
        m.remember("A", "OWNED_BY", "B")
    assert path.exists() and oct(path.stat().st_mode & 0o777) == "0o600"


# -- replay checks the file -------------------------------------------------------------


def _journal(path: Path, *records: dict[str, Any]) -> None:
    lines = [json.dumps({"format": "ctxneo-journal/1"})] + [json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n")


def _fact(seq: int, s: str = "A", o: str = "B", **extra: Any) -> dict[str, Any]:
    return {"op": "fact", "seq": seq, "s": s, "p": "OWNED_BY", "o": o, **extra}


@pytest.mark.parametrize(
    ("records", "line", "message"),
    [
        ([_fact(1), _fact(1, s="C")], 3, "not above"),
        ([_fact(1), _fact(3, s="C"), _fact(2, s="D")], 4, "not above"),
        ([_fact(1), _fact(2, o="C")], 3, "second current value"),
        (
            [_fact(1), {"op": "close", "s": "A", "p": "OWNED_BY", "seq": 7, "at": 8}],
            3,
            "not current",
        ),
        ([_fact(1, s=None)], 2, "subject must be a string"),
        ([_fact(1), {"op": "fact", "seq": 2}], 3, "missing field"),
        ([_fact(1, turn_id=2**63)], 2, "turn_id"),
        ([_fact(1, turn_id=True)], 2, "turn_id"),
        ([_fact(1, fact_id=["x"])], 2, "fact_id"),
        ([_fact(1), {"op": "tick", "at": 1}], 3, "tick"),
        ([{"op": "batch", "records": [_fact(1), "x"]}], 2, "batch"),
        ([{"op": "drop_everything"}], 2, "unknown op"),
        ([{"op": "fact", "seq": 1.5, "s": "A", "p": "P", "o": "B"}], 2, "seq"),
        ([_fact(1, valid_to=1)], 2, "valid_to"),
    ],
)
def test_replay_reports_the_first_broken_invariant_with_its_line(
    tmp_path: Path, records: list[dict[str, Any]], line: int, message: str
) -> None:
    path = tmp_path / "m.jsonl"
    _journal(path, *records)
    before = path.read_bytes()
    with pytest.raises(JournalError, match=rf"line {line}: .*{message}"):
        Memory.open(path)
    assert path.read_bytes() == before


def test_a_line_nested_too_deeply_is_a_journal_error(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text('{"format": "ctxneo-journal/1"}\n' + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(JournalError, match=r"line 2: .*nested too deeply"):
        Memory.open(path)


def test_a_key_changed_thousands_of_times_keeps_only_its_current_value_in_memory(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.jsonl"
    with Memory.open(path, fsync="off") as m:
        m.remember_many([("Hot", "HAS_VALUE", str(i)) for i in range(3000)])
        for i in range(3000, 3100):
            m.remember("Hot", "HAS_VALUE", str(i))
    with NetworkXStore(path) as store:
        assert store._closed_facts == {}  # closed facts are read back from the journal
        assert [f.object for f in store.facts_of(["Hot"])] == ["3099"]
        history = store.history("Hot", "HAS_VALUE")
        assert [f.object for f in history] == [str(i) for i in range(3100)]
        assert [f.valid_to for f in history[:-1]] == list(range(2, 3101))
        assert [f.object for f in store.facts_of(["Hot"], as_of=1500)] == ["1499"]


def test_fsync_policy_comes_from_the_argument_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxneo.errors import ConfigError

    calls: list[int] = []
    real = os.fdatasync
    monkeypatch.setattr(os, "fdatasync", lambda fd: calls.append(fd) or real(fd))
    for policy, expected in (("always", 10), ("batch", 0), ("off", 0)):
        calls.clear()
        with Memory.open(tmp_path / f"{policy}.jsonl", fsync=policy) as m:
            for i in range(10):
                m.remember("A", "HAS_VALUE", str(i))
            assert len(calls) == expected, policy
    assert journal_module.BATCH_WRITES > 10
    monkeypatch.setenv("CTXNEO_FSYNC", "sometimes")
    with pytest.raises(ConfigError, match="CTXNEO_FSYNC"):
        Memory.open(tmp_path / "x.jsonl")
    monkeypatch.setenv("CTXNEO_FSYNC", "off")
    calls.clear()
    with Memory.open(tmp_path / "env.jsonl") as m:
        m.remember("A", "IS", "B")
    assert calls == []
