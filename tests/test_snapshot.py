"""A journal's snapshot: opening loads it and replays only what follows, and nothing
about it can change what the memory holds.

What a user relies on: a memory opened from a snapshot and the lines after it is
the memory a full replay builds, index for index; a snapshot that is stale,
damaged, of a cleared journal, planted or half written is ignored (with one
warning line when something is wrong) and the journal replayed; only writers
write one, never through a symlink; a clear erases it.
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ctxneo.export import journal_lines
from ctxneo.model import NewFact
from ctxneo.stores import networkx as networkx_module
from ctxneo.stores import snapshot, snapshot_state
from ctxneo.stores.journal import HEADER
from ctxneo.stores.networkx import NetworkXStore
from ctxneo.stores.snapshot import SnapshotWarning
from ctxneo.text import index_keys, said_stems

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="handing a file to another user needs root")


@pytest.fixture(autouse=True)
def _private(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CTXNEO_SHARED_JOURNAL", raising=False)
    monkeypatch.setenv("CTXNEO_FSYNC", "off")  # these tests are about files, not disks


def _snapshot_of(path: Path) -> Path:
    return path.with_name(path.name + ".snapshot")


# -- a memory of every kind of change ---------------------------------------------------

ENTITIES = ["Svc_Amber", "Svc_Birch", "Team A", "team-b", "Zürich office", "🚀 launch", "Cedar"]
PREDICATES = ["OWNED_BY", "RUNS_ON", "DEPENDS_ON", "HAS_STATUS"]


def _change(store: NetworkXStore, rng: random.Random, step: int) -> None:
    """One random write: a fact (said in words or not), a batch, a retraction, an alias,
    a declaration or its withdrawal."""

    def fact() -> NewFact:
        s, o = rng.sample(ENTITIES, 2) if rng.random() < 0.9 else [rng.choice(ENTITIES)] * 2
        return NewFact(
            s,
            rng.choice(PREDICATES),
            o if rng.random() < 0.7 else f"value {rng.randrange(6)}",
            speaker=rng.choice([None, "Agent_Intake", "Agent_Ops"]),
            turn_id=rng.choice([None, step, 2**62]),
            fact_id=rng.choice([None, f"f-{step}"]),
            text=rng.choice([None, None, f"said at step {step}: {s} and {o} changed again"]),
        )

    r = rng.random()
    if r < 0.45:
        store.remember(fact())
    elif r < 0.65:
        store.write([fact() for _ in range(rng.randrange(1, 6))])
    elif r < 0.75:
        live = store.current_of(rng.choice(ENTITIES))
        if live:
            f = rng.choice(live)
            store.retract(f.subject, f.predicate, rng.choice([None, f.object]))
    elif r < 0.85:
        store.add_alias(
            rng.choice(["the amber one", "birch svc", "HQ", "the pad"]), rng.choice(ENTITIES)
        )
    elif r < 0.93:
        store.declare_multi_valued([rng.choice(PREDICATES)])
    else:
        store.withdraw_multi_valued([rng.choice(PREDICATES)])


def _internal(store: NetworkXStore) -> dict[str, Any]:
    """Every structure replay builds, in order: what a snapshot must rebuild as it is."""
    store.stats()  # read what others appended first
    store._build_deferred()  # what a snapshot's load left to build, as it is built
    g = store.graph

    def nested(index: dict[Any, dict[Any, Any]]) -> list[Any]:
        return [(k, list(v.items())) for k, v in index.items()]

    for s, adjacent in g._succ.items():  # one edge dict, seen from both ends
        assert all(edge is g._pred[o][s] for o, edge in adjacent.items())
    assert store._journal is not None
    return {
        "nodes": list(g._node.items()),
        "succ": [(s, nested(adjacent)) for s, adjacent in g._succ.items()],
        "pred": [(o, nested(adjacent)) for o, adjacent in g._pred.items()],
        "current": nested(store.current),
        "by_predicate": nested(store.current_by_predicate),
        "pointing": nested(store.current_pointing),
        "seqs": store._seqs.tolist(),
        "lines": store._lines.tolist(),
        "valid_to": store._valid_to.tolist(),
        "closed": [
            [(k, v.typecode, v.tolist()) for k, v in index.items()]
            for index in (
                store._closed_by_key,
                store._closed_by_entity,
                store._closed_by_predicate,
            )
        ],
        # Which stem was indexed first follows the order of a frozenset of stems, so
        # string hashing, which differs between processes: the postings, not that.
        "postings": sorted((k, list(v)) for k, v in store.postings.items()),
        "said": [(k, list(v)) for k, v in store.said.items()],
        "said_of": list(store._said_of.items()),
        "aliases": list(store._aliases.items()),
        "multi": sorted(store.multi),
        "counters": (store.seq, store._horizon, store.facts_total, store.facts_current),
        "journal": (store._journal.offset, store._journal.lines),
    }


def _answers(store: NetworkXStore) -> list[Any]:
    """What the store answers, through its public reads."""
    image = store.image()
    out: list[Any] = [image, store.stats(), store.aliases(), store.multi_valued()]
    out += [store.predicates(), store.predicate_uses(10)]
    names = sorted({f.subject for f in image.facts} | {f.object for f in image.facts})
    for name in names:
        out.append(store.facts_of([name]))
        out.append(store.facts_of([name], history=True, limit=1000))
        out.append(store.facts_of([name], as_of=max(1, image.last_seq // 2)))
        out.append(store.facts_of([name], predicates=PREDICATES[:2], history=True))
        out.append(store.history(name))
        out.append([store.history(name, p, limit=3) for p in PREDICATES])
        out.append(store.current_of(name))
        out.append(store.find_entities(sorted(index_keys(name))))
    for f in image.facts:
        if f.text:
            out.append(store.find_entities(list(said_stems(f.text))))
    for p in PREDICATES:
        out.append(store.facts_with_predicate(p))
        out.append(store.facts_with_predicate(p, as_of=max(1, image.last_seq // 3)))
    out.append(store.facts_of_few_subjects(PREDICATES, max_subjects=3))
    return out


@pytest.fixture
def replayed() -> Iterator[Any]:
    """Open a journal by replaying it whole, as if it had no snapshot."""
    opened: list[NetworkXStore] = []

    def open_(path: Path) -> NetworkXStore:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(snapshot, "load", lambda journal: None)
            store = NetworkXStore(path)
        opened.append(store)
        return store

    yield open_
    for store in opened:
        store.close()


def _same(loaded: NetworkXStore, whole: NetworkXStore) -> None:
    # Answers first: read while what a snapshot's load left is built as reads need it.
    assert _answers(loaded) == _answers(whole)
    assert _internal(loaded) == _internal(whole)


@pytest.mark.parametrize("seed", range(6))
def test_a_snapshot_and_the_lines_after_it_build_what_a_full_replay_builds(
    tmp_path: Path, seed: int, replayed: Any
) -> None:
    rng = random.Random(seed)
    path = tmp_path / "memory.jsonl"
    kept: list[tuple[Path, bool]] = []  # snapshots taken along the way; still of this file?
    with NetworkXStore(path) as store:
        for step in range(160):
            _change(store, rng, step)
            if step % 23 == 7:
                assert store.snapshot()
                copy = tmp_path / f"kept-{step}"
                shutil.copyfile(_snapshot_of(path), copy)
                kept.append((copy, True))
            if seed % 2 and step == 90:  # a clear: the snapshots before it are of another file
                store.clear()
                assert not _snapshot_of(path).exists()
                kept = [(copy, False) for copy, _ in kept]
    whole = replayed(path)
    assert whole.stats()["facts"] > 0
    for copy, usable in kept:
        os.replace(copy, _snapshot_of(path))
        with NetworkXStore(path) as loaded:
            assert (loaded._snapshot_at > 0) is usable  # loaded, or passed over in silence
            _same(loaded, whole)
            # And both go on alike: one writes, the other reads what it wrote.
            loaded.remember(NewFact("Svc_Amber", "HAS_STATUS", f"after {copy.name}"))
            loaded.retract("Svc_Amber", "HAS_STATUS")
            _same(loaded, whole)


def test_a_snapshot_of_an_exported_journal_and_of_one_with_clear_records(
    tmp_path: Path, replayed: Any
) -> None:
    """Facts journaled already closed (an export written as a journal), and the clear
    records journals held before a clear replaced the file."""
    source = NetworkXStore()
    rng = random.Random(7)
    for step in range(120):
        _change(source, rng, step)
    path = tmp_path / "exported.jsonl"
    lines = list(journal_lines(source.image()))
    middle = len(lines) // 2
    path.write_text("".join([*lines[:middle], json.dumps({"op": "clear"}) + "\n", *lines[1:]]))
    path.chmod(0o600)
    with NetworkXStore(path) as store:
        assert store.snapshot()
        store.remember(NewFact("Cedar", "OWNED_BY", "Team A"))
    whole = replayed(path)
    assert whole._horizon > 0  # facts that arrived closed are there
    with NetworkXStore(path) as loaded:
        assert loaded._snapshot_at > 0
        _same(loaded, whole)


def _deferred(store: NetworkXStore) -> int:
    """How many index entries and adjacencies a snapshot's load has not built yet."""
    g = store.graph
    return sum(
        v.__class__ is int
        for index in (store.current, store.current_pointing, g._succ, g._pred)
        for v in index.values()
    )


def test_a_snapshot_is_built_as_reads_need_it_and_reads_what_a_replay_reads(
    tmp_path: Path, replayed: Any
) -> None:
    path = tmp_path / "memory.jsonl"
    _memory_with_snapshot(path, after=0).close()
    whole = replayed(path)
    with _opened_quietly(path) as loaded:
        assert loaded._snapshot_at > 0
        left = _deferred(loaded)
        assert left > 0  # nothing is built at open
        name = "Svc_Amber"
        assert loaded.facts_of([name]) == whole.facts_of([name])
        assert loaded.current_of(name) == whole.current_of(name)
        assert 0 < _deferred(loaded) < left  # that entity's, not everyone's
        _same(loaded, whole)
        assert _deferred(loaded) == 0


@pytest.mark.parametrize("seed", range(4))
def test_writes_into_what_a_snapshot_left_unbuilt_match_a_replay(
    tmp_path: Path, replayed: Any, seed: int
) -> None:
    """Writes that supersede, retract and add to keys and entities no read has built yet
    (the write path builds what it changes first)."""
    path = tmp_path / "memory.jsonl"
    _memory_with_snapshot(path, after=0).close()
    rng = random.Random(seed)
    with _opened_quietly(path) as loaded:
        assert _deferred(loaded) > 0
        for step in range(30):
            _change(loaded, rng, 1000 + step)
        with replayed(path) as whole:
            _same(loaded, whole)


@pytest.mark.parametrize("frozen_before", [False, True])
def test_a_bulk_load_leaves_the_garbage_collector_as_it_found_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, frozen_before: bool
) -> None:
    """The objects of a large load are moved to the oldest generation (see
    _collector_paused): the collector stays on, and objects the process froze itself
    stay frozen (nothing is moved then)."""
    path = tmp_path / "memory.jsonl"
    _memory_with_snapshot(path, after=2).close()
    monkeypatch.setattr(networkx_module, "PROMOTE_OBJECTS", 0)  # every load is "large"
    gc.collect()
    if frozen_before:
        gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert gc.isenabled()
        with NetworkXStore(path) as loaded:
            assert loaded._snapshot_at > 0
        assert gc.isenabled() and gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


# -- when a snapshot is ignored --------------------------------------------------------------


def _memory_with_snapshot(path: Path, *, after: int = 3) -> NetworkXStore:
    """A journal with a snapshot, and ``after`` writes after it; returns a full replay."""
    rng = random.Random(3)
    with NetworkXStore(path) as store:
        for step in range(40):
            _change(store, rng, step)
        assert store.snapshot()
        for i in range(after):
            store.remember(NewFact("Svc_Birch", "HAS_STATUS", f"late {i}"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(snapshot, "load", lambda journal: None)
        return NetworkXStore(path)


def _opened_quietly(path: Path) -> NetworkXStore:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not a word: a stale snapshot is normal
        return NetworkXStore(path)


def test_a_stale_snapshot_is_loaded_and_only_the_lines_after_it_replayed(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    whole = _memory_with_snapshot(path, after=5)
    covered = json.loads(_snapshot_of(path).read_bytes().split(b"\n", 1)[0])["journal"]["offset"]
    assert 0 < covered < path.stat().st_size
    with _opened_quietly(path) as loaded:
        assert loaded._snapshot_at == covered
        assert [f.object for f in loaded.history("Svc_Birch", "HAS_STATUS")][-5:] == [
            f"late {i}" for i in range(5)
        ]
        _same(loaded, whole)
    whole.close()


def test_a_snapshot_of_a_cleared_journal_is_never_loaded(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    _memory_with_snapshot(path).close()
    old = tmp_path / "old.snapshot"
    shutil.copyfile(_snapshot_of(path), old)
    with NetworkXStore(path) as store:
        store.clear()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.jsonl", "old.snapshot"]
        for i in range(300):  # a new memory, longer than the old one was
            store.remember(NewFact(f"New_{i}", "OWNED_BY", "Team_New"))
    # Put back as it was: it names the old file's inode.
    os.replace(old, _snapshot_of(path))
    with _opened_quietly(path) as fresh:
        assert fresh._snapshot_at == 0
        assert fresh.stats()["facts"] == 300 and fresh.aliases() == {}
    # Even naming the new file's inode (as a reused inode would), the journal bytes it
    # covers are not the ones it was made from.
    header, body = _snapshot_of(path).read_bytes().split(b"\n", 1)
    head = json.loads(header)
    info = path.stat()
    head["journal"].update(device=info.st_dev, inode=info.st_ino)
    _snapshot_of(path).write_bytes(json.dumps(head).encode() + b"\n" + body)
    with _opened_quietly(path) as fresh:
        assert fresh._snapshot_at == 0
        assert fresh.stats()["facts"] == 300 and fresh.aliases() == {}


def test_a_journal_rewritten_in_place_is_replayed_not_read_from_its_stale_snapshot(
    tmp_path: Path, replayed: Any
) -> None:
    """Same file, same length, other bytes (``cp backup.jsonl memory.jsonl``, a line
    edited by hand): the inode and the size a snapshot names say nothing, and the
    change is more than a mebibyte before the offset it covers."""
    path = tmp_path / "memory.jsonl"
    with NetworkXStore(path) as store:
        store.remember(NewFact("Svc_Amber", "OWNED_BY", "Team_Old"))
        for batch in range(12):
            store.write(
                [NewFact(f"Svc_{batch}_{i}", "OWNED_BY", f"Team_{i % 7}") for i in range(1000)]
            )
        assert store.snapshot()
    before = path.stat()
    at = path.read_bytes().index(b"Team_Old")
    assert before.st_size - at > 1 << 20  # out of the last mebibyte the snapshot covers
    with path.open("r+b") as f:  # in place: the same inode, the same length
        f.seek(at)
        f.write(b"Team_New")
    after = path.stat()
    assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size)
    whole = replayed(path)
    with _opened_quietly(path) as loaded:  # stale is not damaged: not a word
        assert loaded._snapshot_at == 0
        _same(loaded, whole)
        assert [f.object for f in loaded.current_of("Svc_Amber")] == ["Team_New"]
        # The stale snapshot covers the whole file, but not these bytes: it is replaced.
        assert loaded.snapshot()
    with _opened_quietly(path) as again:
        assert again._snapshot_at == after.st_size
        _same(again, whole)


def _rewritten(path: Path, change: Any) -> None:
    """The snapshot's body changed by ``change`` (its state, as JSON and arrays), with a
    header that fits it: damage a digest cannot see."""
    header, body = _snapshot_of(path).read_bytes().split(b"\n", 1)
    head_line, arrays = body.split(b"\n", 1)
    state = json.loads(head_line)
    change(state)
    body = json.dumps(state).encode() + b"\n" + arrays
    head = json.loads(header)
    head["body_bytes"] = len(body)
    head["body_sha256"] = hashlib.sha256(body).hexdigest()
    _snapshot_of(path).write_bytes(json.dumps(head).encode() + b"\n" + body)


def _cut(at: int) -> Any:
    return lambda data: data[:at]


def _flip(data: bytes) -> bytes:
    i = len(data) * 3 // 4
    return data[:i] + bytes([data[i] ^ 0x20]) + data[i + 1 :]


DAMAGE: dict[str, tuple[Any, str | None]] = {
    "empty": (_cut(0), "damaged"),
    "header cut": (_cut(40), "damaged"),
    "body cut": (lambda data: data[: len(data) * 2 // 3], "damaged"),
    "last byte missing": (lambda data: data[:-1], "damaged"),
    "a byte more": (lambda data: data + b"\x00", "damaged"),
    "a byte flipped": (_flip, "damaged"),
    "not json": (lambda data: b"\x00garbage\n" + data, "damaged"),
    "another version": (
        lambda data: data.replace(snapshot.FORMAT.encode(), b"ctxneo-snapshot/9", 1),
        None,
    ),
    "past the journal's end": (
        lambda data: data.replace(b'"offset":', b'"offset":1', 1),
        None,
    ),
    "another prefix": (
        lambda data: data.replace(b'"prefix_sha256":"', b'"prefix_sha256":"0', 1),
        None,
    ),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_snapshot_is_ignored_and_the_journal_replayed(
    tmp_path: Path, damage: str
) -> None:
    path = tmp_path / "memory.jsonl"
    whole = _memory_with_snapshot(path)
    change, warned = DAMAGE[damage]
    _snapshot_of(path).write_bytes(change(_snapshot_of(path).read_bytes()))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = NetworkXStore(path)
    messages = [str(w.message) for w in caught]
    if warned:
        assert len(messages) == 1 and warned in messages[0], messages
        assert issubclass(caught[0].category, SnapshotWarning)
        assert "\n" not in messages[0] and str(_snapshot_of(path)) in messages[0]
    else:
        assert messages == []
    assert loaded._snapshot_at == 0
    _same(loaded, whole)
    # The next writer replaces it, and the next open uses it.
    loaded.remember(NewFact("Cedar", "HAS_STATUS", "fine"))
    assert loaded.snapshot()
    loaded.close()
    with _opened_quietly(path) as again:
        assert again._snapshot_at > 0
    whole.close()


@pytest.mark.parametrize(
    ("field", "raw"),
    [
        ("body_bytes", "Infinity"),
        ("body_bytes", "-Infinity"),
        ("body_bytes", "1e400"),
        ("body_bytes", "NaN"),
        ("body_bytes", "-1"),
        ("body_bytes", "1.5"),
        ("body_bytes", "true"),
        ("body_bytes", '"12"'),
        ("offset", "1e400"),
        ("offset", "true"),
        ("lines", "-1"),
        ("inode", "null"),
        ("prefix_sha256", "7"),
    ],
)
def test_a_snapshot_with_a_damaged_header_is_ignored_and_the_memory_can_be_cleared(
    tmp_path: Path, replayed: Any, field: str, raw: str
) -> None:
    """JSON reads Infinity and 1e400 as floats (int() of which raises OverflowError) and
    true as an int: a number in a header is a count, or the header is damaged."""
    path = tmp_path / "memory.jsonl"
    _memory_with_snapshot(path).close()
    header, body = _snapshot_of(path).read_bytes().split(b"\n", 1)
    head = json.loads(header)
    (head if field.startswith("body") else head["journal"])[field] = "@@"
    line = json.dumps(head).replace('"@@"', raw)
    _snapshot_of(path).write_bytes(line.encode() + b"\n" + body)
    with pytest.warns(SnapshotWarning, match="damaged header") as caught:
        loaded = NetworkXStore(path)
    assert len(caught) == 1
    assert loaded._snapshot_at == 0
    _same(loaded, replayed(path))
    assert loaded.snapshot()  # a writer passes it over too, and replaces it
    loaded.close()
    _snapshot_of(path).write_bytes(line.encode() + b"\n" + body)
    with pytest.warns(SnapshotWarning, match="damaged header"):
        store = NetworkXStore(path)
    store.clear()
    store.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.jsonl"]


@pytest.mark.parametrize(
    "change",
    [
        lambda state: state.update(facts_current=state["facts_current"] + 1),
        lambda state: state["names"].append(state["names"][0]),  # a name twice
        lambda state: state.update(names=state["names"][:-1]),  # a name missing
        lambda state: state["arrays"].pop(),  # bytes after the last array
        lambda state: state["arrays"][0].__setitem__(1, "d"),  # not an integer array
        lambda state: state.update(said_of=[[10**6, ["x"]]]),  # a name that is not there
    ],
    ids=["counts", "name twice", "name missing", "extra bytes", "float array", "bad name"],
)
def test_a_snapshot_that_does_not_hold_together_is_ignored(
    tmp_path: Path, replayed: Any, change: Any
) -> None:
    path = tmp_path / "memory.jsonl"
    _memory_with_snapshot(path).close()
    _rewritten(path, change)
    with pytest.warns(SnapshotWarning, match="does not hold a memory"):
        loaded = NetworkXStore(path)
    assert loaded._snapshot_at == 0
    _same(loaded, replayed(path))
    loaded.close()


@pytest.mark.parametrize("error", [MemoryError(), ZeroDivisionError("x"), LookupError("y")])
def test_a_snapshot_restore_failing_in_any_way_is_ignored_and_the_journal_replayed(
    tmp_path: Path, replayed: Any, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    """restore raises one error type for whatever went wrong, so no list of the types
    a damaged body may cause (which the next change of restore would outdate) decides
    whether an open fails or replays."""
    path = tmp_path / "memory.jsonl"
    _memory_with_snapshot(path).close()

    def fails(*args: Any) -> None:
        raise error

    monkeypatch.setattr(snapshot_state, "_keyed", fails)
    with pytest.warns(SnapshotWarning, match="does not hold a memory") as caught:
        loaded = NetworkXStore(path)
    assert len(caught) == 1 and "\n" not in str(caught[0].message)
    assert loaded._snapshot_at == 0
    _same(loaded, replayed(path))
    loaded.close()


#: A body whose first entity claims 2**31 - 1 edges, restored with the address space
#: limited to what the process uses plus 1 GiB (a bug allocates that much and fails
#: with MemoryError, instead of taking the shared machine's memory).
HUGE_GROUP = """
import json, resource
from ctxneo.model import NewFact
from ctxneo.stores import snapshot_state
from ctxneo.stores.networkx import NetworkXStore
store = NetworkXStore()
store.write([NewFact(f"S{i}", "OWNED_BY", f"T{i % 3}") for i in range(50)])
body = bytearray(snapshot_state.encode(store))
cut = body.index(b"\\n")
at = cut + 1
for name, code, length in json.loads(body[:cut])["arrays"]:
    if name == "succ.sizes":
        break
    at += length * {"i": 4, "q": 8}[code]
body[at : at + 4] = (2**31 - 1).to_bytes(4, "little")
used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (used + (1 << 30), resource.RLIM_INFINITY))
try:
    snapshot_state.restore(NetworkXStore(), bytes(body))
except snapshot_state.DamagedState as e:
    print(f"{e} ({type(e.__cause__).__name__})")
"""


def test_a_snapshot_claiming_huge_groups_is_refused_before_anything_is_allocated() -> None:
    done = subprocess.run(
        [sys.executable, "-c", HUGE_GROUP], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "group sizes that do not add up (NoneType)"


def test_a_snapshot_that_is_a_symlink_is_neither_read_nor_written_through(
    tmp_path: Path, replayed: Any
) -> None:
    path = tmp_path / "memory.jsonl"
    _memory_with_snapshot(path).close()
    planted = tmp_path / "planted"
    os.replace(_snapshot_of(path), planted)  # a valid snapshot: it would load, if followed
    _snapshot_of(path).symlink_to(planted)
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    path.with_name(path.name + ".snapshot.tmp").symlink_to(victim)
    with pytest.warns(SnapshotWarning, match="symlink"):
        loaded = NetworkXStore(path)
    assert loaded._snapshot_at == 0
    _same(loaded, replayed(path))
    assert loaded.snapshot()  # replaces the links, writes through neither
    loaded.close()
    assert victim.read_bytes() == b"precious\n"
    assert not _snapshot_of(path).is_symlink() and _snapshot_of(path).stat().st_size > 0
    assert stat.S_IMODE(_snapshot_of(path).stat().st_mode) == 0o600
    assert not path.with_name(path.name + ".snapshot.tmp").exists()


def test_a_snapshot_others_may_write_is_ignored_even_with_journals_shared(
    tmp_path: Path, replayed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot is written by its journal's own writer only, readable by it only: one
    that others may write could hold any state (its cover proves nothing to whoever can
    read the journal), whatever CTXNEO_SHARED_JOURNAL says of journals."""
    path = tmp_path / "memory.jsonl"
    _memory_with_snapshot(path).close()
    _snapshot_of(path).chmod(0o620)
    for shared in ("", "1"):
        monkeypatch.setenv("CTXNEO_SHARED_JOURNAL", shared)
        with pytest.warns(SnapshotWarning, match=r"chmod go-w .*ignored"):
            loaded = NetworkXStore(path)
        assert loaded._snapshot_at == 0
        _same(loaded, replayed(path))
        loaded.close()


def test_a_snapshot_beside_a_journal_shared_on_purpose_is_never_read(
    tmp_path: Path, replayed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writers never snapshot a journal a team shares, so a snapshot found beside one is
    some member's forgery, however private its mode: the journal is replayed."""
    path = tmp_path / "memory.jsonl"
    _memory_with_snapshot(path).close()
    assert _snapshot_of(path).exists()
    path.chmod(0o660)
    monkeypatch.setenv("CTXNEO_SHARED_JOURNAL", "1")
    with _opened_quietly(path) as loaded:
        assert loaded._snapshot_at == 0
        _same(loaded, replayed(path))


class _Hung(Exception):
    pass


@contextmanager
def _no_hang(seconds: int = 60) -> Iterator[None]:
    """Fail, instead of hanging the test run, when something blocks for good (a FIFO
    opened with no writer never returns): a guard against a deadlock, not a timing."""

    def hung(signum: int, frame: Any) -> None:
        raise _Hung(f"blocked for {seconds} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_snapshot_that_is_a_fifo_is_ignored_without_blocking(
    tmp_path: Path, replayed: Any
) -> None:
    """Opening a FIFO for reading waits for a writer, for ever, with the journal's lock
    held: every open and every writer of the memory would hang behind it."""
    path = tmp_path / "memory.jsonl"
    _memory_with_snapshot(path).close()
    _snapshot_of(path).unlink()
    os.mkfifo(_snapshot_of(path), 0o600)
    temp = path.with_name(path.name + ".snapshot.tmp")
    os.mkfifo(temp, 0o600)  # created exclusively: removed, never opened
    with _no_hang():
        with pytest.warns(SnapshotWarning, match="not a regular file.*replayed") as caught:
            loaded = NetworkXStore(path)
        assert len(caught) == 1 and "\n" not in str(caught[0].message)
        assert loaded._snapshot_at == 0
        _same(loaded, replayed(path))
        assert loaded.snapshot()  # a writer asks what the FIFO covers, then replaces it
        loaded.close()
    assert stat.S_ISREG(_snapshot_of(path).lstat().st_mode) and not temp.exists()
    with _opened_quietly(path) as again:
        assert again._snapshot_at > 0


@as_root
def test_a_snapshot_planted_by_another_user_is_ignored(tmp_path: Path, replayed: Any) -> None:
    path = tmp_path / "memory.jsonl"
    _memory_with_snapshot(path).close()
    os.chown(_snapshot_of(path), NOBODY, NOBODY)
    with pytest.warns(SnapshotWarning, match="belongs to user id 65534"):
        loaded = NetworkXStore(path)
    assert loaded._snapshot_at == 0
    _same(loaded, replayed(path))
    loaded.close()


@as_root
def test_a_name_another_user_holds_does_not_stop_snapshots(tmp_path: Path, replayed: Any) -> None:
    # In a sticky /tmp anyone may plant "<journal>.snapshot" first; the system then
    # refuses to replace it, and every open replayed the whole journal for good. A
    # writer keeps its snapshot under a name of its own, which opens read.
    path = tmp_path / "memory.jsonl"
    _memory_with_snapshot(path).close()
    planted = _snapshot_of(path)
    os.chown(planted, NOBODY, NOBODY)
    before = planted.read_bytes()
    with pytest.warns(SnapshotWarning, match="belongs to user id 65534"):
        writer = NetworkXStore(path)
    writer.remember(NewFact("Svc_Birch", "HAS_STATUS", "after the plant"))
    assert writer.snapshot()
    writer.close()
    own = sorted(p.name for p in tmp_path.iterdir() if ".snapshot.own." in p.name)
    assert len(own) == 1 and planted.read_bytes() == before  # theirs is left as it was
    assert planted.lstat().st_uid == NOBODY
    with _opened_quietly(path) as loaded:  # read from ours, without a word
        assert loaded._snapshot_at == path.stat().st_size
        _same(loaded, replayed(path))
        loaded.remember(NewFact("Svc_Birch", "HAS_STATUS", "again"))
        assert loaded.snapshot()  # the next one replaces ours
    assert [p.name for p in tmp_path.iterdir() if ".snapshot.own." in p.name] != own
    assert len([p for p in tmp_path.iterdir() if ".snapshot.own." in p.name]) == 1
    # once the name is free again, the snapshot takes it and ours under a name go
    planted.unlink()
    with _opened_quietly(path) as loaded:
        loaded.remember(NewFact("Svc_Birch", "HAS_STATUS", "freed"))
        assert loaded.snapshot()
    assert planted.lstat().st_uid == os.geteuid()
    assert not [p for p in tmp_path.iterdir() if ".snapshot.own." in p.name]
    # a clear deletes a snapshot kept under a name of ours too
    os.chown(planted, NOBODY, NOBODY)
    with pytest.warns(SnapshotWarning):
        store = NetworkXStore(path)
    store.remember(NewFact("Svc_Birch", "HAS_STATUS", "before the clear"))
    assert store.snapshot()
    assert [p for p in tmp_path.iterdir() if ".snapshot.own." in p.name]
    store.clear()
    store.close()
    assert not [p for p in tmp_path.iterdir() if ".snapshot.own." in p.name]


# -- who writes one, and when ---------------------------------------------------------------


def _knobs(monkeypatch: pytest.MonkeyPatch, **values: float) -> None:
    for name, value in values.items():
        monkeypatch.setattr(networkx_module, f"SNAPSHOT_{name.upper()}", value)


def test_readers_never_create_a_snapshot_and_a_writer_leaves_one_when_it_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.jsonl"
    with NetworkXStore(path) as store:
        store.write([NewFact(f"Svc_{i}", "OWNED_BY", f"Team_{i % 7}") for i in range(500)])
    assert not _snapshot_of(path).exists()  # shorter than SNAPSHOT_MIN_BYTES
    _knobs(monkeypatch, min_bytes=1000, time_share=1e-9)  # as a bulk ingest, however slow
    reader = NetworkXStore(path)
    assert reader.stats()["facts"] == 500 and reader.find_entities(list(index_keys("Svc_1")))
    reader.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.jsonl"]
    writer = NetworkXStore(path)
    writer.remember(NewFact("Svc_1", "OWNED_BY", "Team_New"))
    assert not _snapshot_of(path).exists()  # writing fast: it leaves one when it closes
    writer.close()
    with _opened_quietly(path) as again:
        assert again._snapshot_at == path.stat().st_size  # covers every line
        assert [f.object for f in again.current_of("Svc_1")] == ["Team_New"]


def test_a_long_lived_writer_snapshots_as_the_journal_grows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.jsonl"
    _knobs(monkeypatch, min_bytes=2000, time_share=1e9)  # as if it wrote now and then
    with NetworkXStore(path) as store:
        covered = []
        for i in range(300):
            store.remember(NewFact(f"Svc_{i}", "OWNED_BY", "Team_A"))
            covered.append(store._snapshot_at)
    steps = sorted(set(covered) - {0})
    # Each snapshot once the lines after the last one are half the journal: spaced out.
    assert len(steps) >= 3 and all(b >= 2 * a for a, b in itertools.pairwise(steps))


def test_a_snapshot_that_cannot_be_written_costs_a_warning_not_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.jsonl"
    _knobs(monkeypatch, min_bytes=0, tail_share=0, time_share=1e9)

    def full(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(snapshot, "save", full)
    with NetworkXStore(path) as store:
        with pytest.warns(SnapshotWarning, match="cannot write snapshot .*No space left"):
            assert store.remember(NewFact("A", "OWNED_BY", "B")).seq == 1
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # said once: no more tries, no more words
            store.remember(NewFact("A", "OWNED_BY", "C"))
    with NetworkXStore(path) as again:
        assert [f.object for f in again.history("A", "OWNED_BY")] == ["B", "C"]


@pytest.mark.parametrize(
    ("where", "error"),
    [
        ("encode", MemoryError()),
        ("encode", AssertionError("a bug")),
        ("encode", KeyError("Svc_Amber")),
        ("save", RuntimeError("anything at all")),
        ("cover_of", ZeroDivisionError("division by zero")),
    ],
)
def test_no_failure_of_a_snapshot_fails_the_write_it_follows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, error: Exception
) -> None:
    """The write was applied and acknowledged before its snapshot is tried: an error
    from the snapshot would have a caller retry, and write it twice."""
    path = tmp_path / "memory.jsonl"
    _knobs(monkeypatch, min_bytes=0, tail_share=0, time_share=1e9)

    def fails(*args: Any) -> None:
        raise error

    monkeypatch.setattr(snapshot_state if where == "encode" else snapshot, where, fails)
    with NetworkXStore(path) as store:
        with pytest.warns(SnapshotWarning, match="cannot write snapshot") as caught:
            assert store.remember(NewFact("A", "OWNED_BY", "B")).seq == 1
        assert len(caught) == 1 and type(error).__name__ in str(caught[0].message)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # said once: no more tries, no more words
            store.remember(NewFact("A", "OWNED_BY", "C"))
            assert not store.snapshot()
    with NetworkXStore(path) as again:
        assert [f.object for f in again.history("A", "OWNED_BY")] == ["B", "C"]


@pytest.mark.parametrize("mode", [0o660, 0o602, 0o600])
def test_no_snapshot_is_written_for_a_journal_shared_on_purpose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: int
) -> None:
    """Each user's writer would leave a snapshot of its own (0600, its owner's), which
    every other user's open refuses with a warning, every time."""
    monkeypatch.setenv("CTXNEO_SHARED_JOURNAL", "1")
    _knobs(monkeypatch, min_bytes=0, tail_share=0, time_share=1e9)
    path = tmp_path / "memory.jsonl"
    path.write_text(HEADER)
    path.chmod(mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # skipped in silence: nothing is wrong
        with NetworkXStore(path) as store:
            for i in range(5):
                store.remember(NewFact(f"Svc_{i}", "OWNED_BY", "Team_A"))
            assert (store._snapshot_at > 0) is (mode == 0o600)  # one after each write
            if mode != 0o600:
                assert not store.snapshot()  # nor when asked
    assert _snapshot_of(path).exists() is (mode == 0o600)
    with _opened_quietly(path) as again:
        assert again.stats()["facts"] == 5


# -- crashes, processes, clear ------------------------------------------------------------------

#: A snapshot's write killed (SIGKILL) at one step: half the temporary file written,
#: before the rename that puts it in place, or right after it.
CRASH = """
import os, signal, sys
from ctxneo.model import NewFact
from ctxneo.stores import snapshot
from ctxneo.stores.networkx import NetworkXStore
path, step = sys.argv[1], sys.argv[2]
store = NetworkXStore(path)
store.write([NewFact(f"Late_{i}", "OWNED_BY", "Team_L") for i in range(50)])
write_all, replace = snapshot._write_all, os.replace

def die():
    os.kill(os.getpid(), signal.SIGKILL)

def writing(fd, data):
    write_all(fd, data[: len(data) // 2])
    die()

def replacing(src, dst):
    if step == "before rename":
        die()
    replace(src, dst)
    die()

if step == "mid-write":
    snapshot._write_all = writing
os.replace = replacing
store.snapshot()
sys.exit(3)
"""


@pytest.mark.parametrize("step", ["mid-write", "before rename", "after rename"])
def test_a_snapshot_killed_while_written_leaves_the_memory_whole(
    tmp_path: Path, replayed: Any, step: str
) -> None:
    path = tmp_path / "memory.jsonl"
    _memory_with_snapshot(path).close()  # an older snapshot, which must stay usable
    before = _snapshot_of(path).read_bytes()
    killed = subprocess.run([sys.executable, "-c", CRASH, str(path), step], timeout=120)
    assert killed.returncode == -signal.SIGKILL

    def temps() -> list[Path]:  # (each snapshot is written under a name of its own)
        return list(path.parent.glob(path.name + ".snapshot.tmp.*"))

    assert bool(temps()) == (step != "after rename")
    assert (_snapshot_of(path).read_bytes() == before) == (step != "after rename")
    with _opened_quietly(path) as loaded:
        assert loaded._snapshot_at > 0  # the old snapshot, or the new one whole
        _same(loaded, replayed(path))
        assert loaded.stats()["facts"] >= 50
        loaded.remember(NewFact("Cedar", "HAS_STATUS", "after the crash"))
        assert loaded.snapshot()  # the next snapshot clears the half-written file away
    assert not temps()
    with NetworkXStore(path) as store:
        store.clear()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.jsonl"]


#: A writer that snapshots after every write, and is killed at a random moment.
SNAPSHOTTING_WRITER = """
import sys
from ctxneo.stores import networkx
from ctxneo.memory import Memory
networkx.SNAPSHOT_MIN_BYTES = 0
networkx.SNAPSHOT_TAIL_SHARE = 0
networkx.SNAPSHOT_TIME_SHARE = 1e9
path, name = sys.argv[1], sys.argv[2]
with Memory.open(path, fsync="off") as m:
    i = 0
    while True:
        value = f"{name}-{i}"
        if i % 3 == 0:
            m.remember_many([(f"K{i % 5}", "HAS_VALUE", value), ("B", "HAS_VALUE", value + "/b")])
        else:
            m.remember(f"K{i % 5}", "HAS_VALUE", value)
        print(value, flush=True)  # acknowledged: the write (and perhaps a snapshot) returned
        i += 1
"""


def test_writers_killed_while_snapshotting_lose_nothing_and_the_snapshot_stays_true(
    tmp_path: Path, replayed: Any
) -> None:
    path = tmp_path / "memory.jsonl"
    rng = random.Random(5)
    acked: set[str] = set()
    waited = 0
    for round_ in range(3):
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", SNAPSHOTTING_WRITER, str(path), f"r{round_}w{w}"],
                stdout=subprocess.PIPE,
                text=True,
            )
            for w in range(3)
        ]
        # Killed once each has acknowledged a number of writes of its own (each one
        # followed by a snapshot), not after a time: as many writes on any machine,
        # while the others are anywhere in a write or a snapshot of theirs.
        for p in procs:
            assert p.stdout is not None
            for _ in range(rng.randrange(1, 15)):
                line = p.stdout.readline()
                assert line, "a writer died before it was killed"
                acked.add(line.strip())
                waited += 1
        for p in procs:
            p.send_signal(signal.SIGKILL)
        for p in procs:
            out, _ = p.communicate()
            acked.update(out.split())
    assert len(acked) >= waited  # each value is written once: the set lost none
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a kill may tear a line: the journal's own warning
        whole = replayed(path)
        loaded = NetworkXStore(path)
    stored = [f.object for f in whole.all_facts()]
    assert acked <= set(stored) and len(stored) == len(set(stored))
    assert loaded._snapshot_at > 0
    _same(loaded, whole)
    loaded.close()


def test_a_memory_shared_by_forked_writers_snapshotting_as_they_go(
    tmp_path: Path, replayed: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.jsonl"
    _knobs(monkeypatch, min_bytes=0, tail_share=0, time_share=1e9)
    store = NetworkXStore(path)
    store.remember(NewFact("Shared", "HAS_VALUE", "start"))
    children = []
    for name in ("c1", "c2"):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            code = 0
            try:
                for i in range(40):
                    store.remember(NewFact("Shared", "HAS_VALUE", f"{name}-{i}"))
                store.close()
            except BaseException:
                code = 1
            os._exit(code)
        children.append(pid)
    for i in range(40):
        store.remember(NewFact("Shared", "HAS_VALUE", f"parent-{i}"))
    assert [os.waitpid(pid, 0)[1] for pid in children] == [0, 0]
    assert len(store.history("Shared", "HAS_VALUE")) == 121
    store.close()
    with _opened_quietly(path) as loaded:
        assert loaded._snapshot_at > 0
        _same(loaded, replayed(path))


def test_a_clear_leaves_no_snapshot_nor_half_written_one(tmp_path: Path) -> None:
    path = tmp_path / "memory" / "memory.jsonl"
    with NetworkXStore(path) as store:
        store.remember(NewFact("Zanzibar_Vault", "OWNED_BY", "Quokka_Ledger"))
        store.add_alias("the aubergine", "Zanzibar_Vault")
        assert store.snapshot()
    temp = path.with_name(path.name + ".snapshot.tmp")
    shutil.copyfile(_snapshot_of(path), temp)  # as a writer killed mid-snapshot leaves it
    for file in (_snapshot_of(path), temp):
        assert b"Zanzibar_Vault" in file.read_bytes() and b"the aubergine" in file.read_bytes()
    with NetworkXStore(path) as store:
        store.clear()
        assert store.stats()["facts"] == 0
    assert sorted(p.name for p in path.parent.iterdir()) == ["memory.jsonl"]
    assert path.read_bytes() == HEADER.encode()


@pytest.mark.parametrize("opened", ["before", "after"])
def test_a_clear_of_a_journal_deleted_by_hand_erases_its_side_files(
    tmp_path: Path, opened: str
) -> None:
    """The journal is gone, but its snapshot, a half-written one and the torn-line file
    still hold every fact: a clear must not leave them."""
    path = tmp_path / "memory.jsonl"
    with NetworkXStore(path) as store:
        store.remember(NewFact("Zanzibar_Vault", "OWNED_BY", "Quokka_Ledger"))
        assert store.snapshot()
    temp = path.with_name(path.name + ".snapshot.tmp")
    torn = path.with_name(path.name + ".torn")
    shutil.copyfile(_snapshot_of(path), temp)
    torn.write_bytes(b'{"op":"fact","s":"Zanzibar_Vault","p":"OWNED_BY","o":"Quok\n')
    victim = tmp_path / "elsewhere"
    victim.write_bytes(b"precious\n")
    store = NetworkXStore(path) if opened == "before" else None
    path.unlink()
    store = store or NetworkXStore(path)
    if opened == "after":  # and the half-written one a link: unlinked, not followed
        temp.unlink()
        temp.symlink_to(victim)
    store.clear()
    assert store.stats()["facts"] == 0
    store.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere"]
    assert victim.read_bytes() == b"precious\n"


def test_a_snapshot_built_while_another_process_clears_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The body is built outside the journal's lock: a clear in that moment must win."""
    path = tmp_path / "memory.jsonl"
    writer = NetworkXStore(path)
    writer.remember(NewFact("Zanzibar_Vault", "OWNED_BY", "Quokka_Ledger"))
    encode = snapshot_state.encode

    def encode_then_cleared(store: NetworkXStore) -> bytes:
        body = encode(store)
        with NetworkXStore(path) as other:  # another process, as far as files go
            other.clear()
        return body

    monkeypatch.setattr(snapshot_state, "encode", encode_then_cleared)
    assert not writer.snapshot()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.jsonl"]
    assert b"Zanzibar_Vault" not in path.read_bytes()
    assert writer.stats()["facts"] == 0  # and the writer reads the cleared memory next
    writer.close()
