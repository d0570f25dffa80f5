"""``ctxneo bench reliability``: writers under injected faults, and what survived.

Each run gives every write a unique value, lets writers report which writes
were acknowledged (returned) and which were refused (raised), injects one
kind of fault, then reads the memory back and counts what a user must never
see:

- **acknowledged lost**: a write that returned, missing afterwards;
- **duplicates**: a value stored more than once (a write applied twice);
- **refused but stored**: a write that raised, present afterwards;
- **partial**: a batch of which only some facts are stored;
- **double-current keys**: a single-valued key with two current values;
- the memory must replay (journal) with unique, increasing sequence numbers.

Journal runs (each with ``writers`` processes):

- ``kill -9``: writers are killed with SIGKILL at random moments and restarted;
- ``EFBIG``: before a random tenth of its writes, a writer lowers its own file
  size limit (RLIMIT_FSIZE) below the end of that write: the kernel takes part
  of it and refuses the rest, a real short write;
- ``ENOSPC``: ``os.write`` is replaced, in the writers, by one that writes part
  of a random twentieth of the records and then fails as a full disk does;
- ``fork()``: a memory opened before ``fork()`` is written by the children and
  the parent at once.

The Neo4j run puts a :class:`~ctxneo.bench.faults.CuttingProxy` between
``writers`` threads (each with its own driver) and the server: it cuts
connections just before a commit reaches the server or just after the server
answered it (the answer is dropped): a COMMIT, or a one-fact write that runs
as a transaction of its own. It also once refuses all connections for 1.5 s,
as a restart looks from the client.

The fsync section times one ``remember`` and one 1,000-fact ``remember_many``
under each policy; the history section writes one key 12,000 times and times
the writes, the replay and the memory the replayed store holds.
"""

from __future__ import annotations

import errno
import os
import random
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctxneo.errors import CtxneoError, JournalError, WriteOutcomeUnknown
from ctxneo.memory import Memory
from ctxneo.model import Fact

JOURNAL_FAULTS = ("kill -9", "EFBIG", "ENOSPC", "fork()")
KEYS = 13  # single-valued keys the writers fight over
Log = Callable[[str], None]


# -- what every run checks ----------------------------------------------------------


def _verdict(
    facts: list[Fact], acked: set[str], refused: set[str], batches: set[str]
) -> dict[str, int]:
    """Count what must be zero, from the memory's facts and the writers' reports."""
    stored: dict[str, int] = {}
    for f in facts:
        stored[f.object] = stored.get(f.object, 0) + 1
    current: dict[tuple[str, str], int] = {}
    for f in facts:
        if f.valid_to is None:
            current[(f.subject, f.predicate)] = current.get((f.subject, f.predicate), 0) + 1
    seqs = [f.seq for f in facts]

    def whole(value: str) -> bool:
        return value in stored and (value not in batches or f"{value}/b" in stored)

    return {
        "acknowledged_lost": sum(1 for v in acked if not whole(v)),
        "duplicates": sum(1 for n in stored.values() if n > 1),
        "refused_but_stored": sum(1 for v in refused if v in stored or f"{v}/b" in stored),
        "partial": sum(1 for v in batches if (v in stored) != (f"{v}/b" in stored)),
        "double_current_keys": sum(1 for n in current.values() if n > 1),
        "seq_errors": int(seqs != sorted(set(seqs))),
    }


def _write(memory: Memory, name: str, i: int, rng: random.Random) -> tuple[str, bool]:
    """One write with a unique value: a single fact, or (one in four) a batch of two."""
    value = f"{name}-{i}"
    key = f"K{rng.randrange(KEYS)}"
    if i % 4 == 0:
        memory.remember_many([(key, "HAS_VALUE", value), (f"B{name}", "HAS_VALUE", f"{value}/b")])
        return value, True
    memory.remember(key, "HAS_VALUE", value)
    return value, False


# -- the journal writer processes ------------------------------------------------------


def writer_main(path: str, name: str, fault: str, seed: int, count: int) -> None:
    """A writer process: writes until killed (or ``count`` writes), one report line each.

    Lines are ``A value`` (acknowledged), ``R value`` (refused with a
    JournalError) and ``F`` (a fault injected); a batch's value gets a ``*``.
    """
    rng = random.Random(seed)
    out = sys.stdout
    injected = _arm(fault, rng, out)
    with Memory.open(path) as memory:
        i = 0
        while count <= 0 or i < count:
            injected.before(memory)
            try:
                value, batch = _write(memory, name, i, rng)
                out.write(f"A {value}{'*' if batch else ''}\n")
            except JournalError:
                value = f"{name}-{i}"
                out.write(f"R {value}{'*' if i % 4 == 0 else ''}\n")
            finally:
                injected.after()
            out.flush()
            i += 1


class _Fault:
    def before(self, memory: Memory) -> None:
        pass

    def after(self) -> None:
        pass


class _FileSizeLimit(_Fault):
    """Lower RLIMIT_FSIZE below the end of the next write, one time in ten."""

    def __init__(self, rng: random.Random, out: Any) -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit: EFBIG
        self.rng, self.out, self.armed = rng, out, False

    def before(self, memory: Memory) -> None:
        if self.rng.random() < 0.1:
            size = os.stat(memory.store.path).st_size  # type: ignore[attr-defined]
            resource.setrlimit(resource.RLIMIT_FSIZE, (size + self.rng.randrange(1, 40), -1))
            self.armed = True
            self.out.write("F\n")

    def after(self) -> None:
        if self.armed:
            resource.setrlimit(resource.RLIMIT_FSIZE, (-1, -1))
            self.armed = False


class _FullDisk(_Fault):
    """``os.write`` that writes part of one record in twenty and then fails like ENOSPC."""

    def __init__(self, rng: random.Random, out: Any) -> None:
        real = os.write

        def write(fd: int, data: Any) -> int:
            if fd > 2 and len(data) > 20 and rng.random() < 0.05:
                out.write("F\n")
                real(fd, bytes(data)[: rng.randrange(1, len(data))])
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(fd, data)

        os.write = write


def _arm(fault: str, rng: random.Random, out: Any) -> _Fault:
    if fault == "EFBIG":
        return _FileSizeLimit(rng, out)
    if fault == "ENOSPC":
        return _FullDisk(rng, out)
    return _Fault()


def _reports(lines: list[str]) -> tuple[set[str], set[str], set[str], int, int]:
    acked, refused, batches = set(), set(), set()
    faults = writes = 0
    for line in lines:
        kind, _, value = line.partition(" ")
        if kind == "F":
            faults += 1
            continue
        if kind not in ("A", "R") or not value:
            continue  # a line cut by a kill
        writes += 1
        if value.endswith("*"):
            value = value[:-1]
            batches.add(value)
        (acked if kind == "A" else refused).add(value)
    return acked, refused, batches, faults, writes


def _spawn(path: Path, name: str, fault: str, seed: int, count: int = 0) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-P",  # not the working directory first: a checkout's ctxneo/ has no bench/
            "-m",
            __name__,
            path,
            name,
            fault,
            str(seed),
            str(count),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def _journal_run(fault: str, writers: int, seconds: float, workdir: Path) -> dict[str, Any]:
    path = workdir / f"{fault.replace(' ', '').replace('()', '')}.jsonl"
    rng = random.Random(8)
    lines: list[str] = []
    injected = 0
    started = time.monotonic()
    if fault == "fork()":
        lines, injected = _fork_run(path, writers, seconds)
    else:
        round_ = 0
        while time.monotonic() - started < seconds:
            procs = [
                _spawn(path, f"r{round_}w{w}", fault, rng.randrange(10**9)) for w in range(writers)
            ]
            for p in procs:  # every writer is writing before anything is killed
                assert p.stdout is not None
                lines.append(p.stdout.readline().strip())
            left = seconds - (time.monotonic() - started)
            time.sleep(max(0.05, min(left, rng.uniform(0.2, 1.0) if fault == "kill -9" else left)))
            for p in procs:
                p.send_signal(signal.SIGKILL)
                injected += fault == "kill -9"
            for p in procs:
                out, _ = p.communicate()
                lines.extend(out.splitlines())
            round_ += 1
    acked, refused, batches, faults, writes = _reports(lines)
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the last kill may have torn a line: skipped
            with Memory.open(path, create=False) as memory:
                facts = list(memory.store.all_facts())
        replays = 1
    except CtxneoError:
        facts, replays = [], 0
    return {
        "backend": "journal",
        "fault": fault,
        "writers": writers,
        "writes": writes,
        "acknowledged": len(acked),
        "refused": len(refused),
        "faults_injected": injected + faults,
        "replays": replays,
        **_verdict(facts, acked, refused, batches),
        "seconds": round(time.monotonic() - started, 1),
    }


#: Threads sharing one memory in the thread run: writers and askers, half each.
THREADS = 8


def _threads_run(seconds: float, workdir: Path) -> dict[str, Any]:
    """One journaled memory shared by threads (as an MCP server's worker threads share
    it): half write unique values to the contested keys, half ask about them and read
    them. Any exception a thread meets, and any read that sees a contested key with
    zero or two current values, is counted."""
    path = workdir / "threads.jsonl"
    memory = Memory.open(path)
    acked: set[str] = set()
    batches: set[str] = set()
    lock = threading.Lock()
    errors: list[str] = []
    reads = [0, 0]
    writes = 0
    started = time.monotonic()

    def writer(w: int) -> None:
        nonlocal writes
        rng = random.Random(w)
        i = 0
        while time.monotonic() - started < seconds:
            try:
                value, batch = _write(memory, f"t{w}", i, rng)
            except Exception as e:  # every one is a failure of thread safety
                with lock:
                    errors.append(f"{type(e).__name__}: {e}"[:200])
            else:
                with lock:
                    acked.add(value)
                    writes += 1
                    if batch:
                        batches.add(value)
            i += 1

    def asker(a: int) -> None:
        rng = random.Random(100 + a)
        while time.monotonic() - started < seconds:
            key = f"K{rng.randrange(KEYS)}"
            try:
                memory.ask(f"What value does {key} have now, word{rng.randrange(10**6)}?")
                n = len(memory.current(key, "HAS_VALUE"))
                with lock:
                    reads[0] += 1
                    reads[1] += n > 1
            except Exception as e:
                with lock:
                    errors.append(f"{type(e).__name__}: {e}"[:200])

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(THREADS // 2)]
    threads += [threading.Thread(target=asker, args=(a,)) for a in range(THREADS // 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    memory.close()
    with Memory.open(path, create=False) as replayed:
        facts = list(replayed.store.all_facts())
    return {
        "backend": "journal",
        "fault": f"{THREADS} threads",
        "writers": THREADS // 2,
        "writes": writes + len(errors),
        "acknowledged": len(acked),
        "refused": len(errors),
        "faults_injected": 0,
        "replays": 1,
        "reads": reads[0],
        "reads_torn": reads[1],
        "thread_errors": errors[:5],
        **_verdict(facts, acked, set(), batches),
        "seconds": round(time.monotonic() - started, 1),
    }


def _fork_run(path: Path, writers: int, seconds: float) -> tuple[list[str], int]:
    """Children of a process that opened the memory before fork() write with the parent."""
    memory = Memory.open(path)
    memory.remember("K0", "HAS_VALUE", "opened before fork")
    children = []
    deadline = time.monotonic() + seconds
    for w in range(writers - 1):
        report = path.with_name(f"{path.stem}-child{w}.txt")
        pid = os.fork()
        if pid == 0:  # the child: the parent's memory object, as it was at fork()
            code = 1
            try:
                code = _fork_child(memory, f"c{w}", deadline, report)
            finally:
                os._exit(code)
        children.append((pid, report))
    lines: list[str] = []
    rng = random.Random(1)
    i = 0
    while time.monotonic() < deadline:
        value, batch = _write(memory, "parent", i, rng)
        lines.append(f"A {value}{'*' if batch else ''}")
        i += 1
    memory.close()
    for pid, report in children:
        os.waitpid(pid, 0)
        lines.extend(report.read_text().splitlines())
    return lines, writers - 1


def _fork_child(memory: Memory, name: str, deadline: float, report: Path) -> int:
    rng = random.Random(name)
    with open(report, "w") as out:
        i = 0
        while time.monotonic() < deadline:
            try:
                value, batch = _write(memory, name, i, rng)
                out.write(f"A {value}{'*' if batch else ''}\n")
            except CtxneoError:
                out.write(f"R {name}-{i}\n")
            i += 1
    return 0


# -- Neo4j ----------------------------------------------------------------------------------


#: Acknowledged writes each Neo4j writer makes at least, whatever the run's length.
MIN_ACKNOWLEDGED = 5


def _neo4j_run(
    connect: Callable[[str, str, float], Any],
    target: tuple[str, int],
    writers: int,
    seconds: float,
) -> dict[str, Any]:
    from ctxneo.bench.faults import CuttingProxy

    namespace = f"bench-reliability-{uuid.uuid4().hex[:8]}"
    acked: set[str] = set()
    refused: set[str] = set()
    batches: set[str] = set()
    unknown = 0
    writes = 0
    lock = threading.Lock()
    with CuttingProxy(target, before=0.04, after=0.08, seed=5) as proxy:
        stores = [connect(proxy.uri, namespace, 15.0) for _ in range(writers)]
        # The clock starts once every writer is connected, and a writer goes on past
        # the time until it has a few acknowledged writes (within a cap): on a busy
        # machine a short run would otherwise check nothing and report zeros.
        started = time.monotonic()
        cap = started + max(60.0, 10 * seconds)

        died: list[BaseException] = []

        def writer(w: int) -> None:
            try:
                write_until_done(w)
            except BaseException as e:  # reported by the run: a dead writer checks nothing
                with lock:
                    died.append(e)

        def write_until_done(w: int) -> None:
            nonlocal unknown, writes
            rng = random.Random(w)
            memory = Memory(stores[w])
            i = 0
            mine = 0
            while time.monotonic() < cap and (
                time.monotonic() - started < seconds or mine < MIN_ACKNOWLEDGED
            ):
                value = f"w{w}-{i}"
                try:
                    _, batch = _write(memory, f"w{w}", i, rng)
                    mine += 1
                    with lock:
                        acked.add(value)
                        if batch:
                            batches.add(value)
                except WriteOutcomeUnknown:
                    with lock:
                        unknown += 1
                except CtxneoError:
                    with lock:
                        refused.add(value)
                with lock:
                    writes += 1
                i += 1

        writing = threading.Event()
        writing.set()
        reads = [0, 0]  # reads, reads that saw a key with zero or two current values

        def reader() -> None:
            try:
                read_until_done()
            except BaseException as e:
                with lock:
                    died.append(e)

        def read_until_done() -> None:
            # Beside the writers, straight to the server (no cuts): every read of a key
            # once written must see exactly one current value.
            with connect(f"bolt://{target[0]}:{target[1]}", namespace, 15.0) as store:
                memory = Memory(store)
                seen: set[str] = set()
                while writing.is_set():
                    for k in range(KEYS):
                        key = f"K{k}"
                        n = len(memory.current(key, "HAS_VALUE"))
                        with lock:
                            reads[0] += 1
                            if n > 1 or (n == 0 and key in seen):
                                reads[1] += 1
                        if n:
                            seen.add(key)

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
        watcher = threading.Thread(target=reader)
        for t in threads:
            t.start()
        watcher.start()
        time.sleep(seconds / 2)
        proxy.outage(1.5)
        for t in threads:
            t.join()
        writing.clear()
        watcher.join()
        if died:
            for s in stores:
                s.close()
            what = f"{type(died[0]).__name__}: {died[0]}"[:300]
            raise CtxneoError(f"a Neo4j writer or the reader died: {what}") from died[0]
        reconciled = sum(s.reconciled for s in stores)
        for s in stores:
            s.close()
        counts = proxy.counts
    with connect(f"bolt://{target[0]}:{target[1]}", namespace, 15.0) as check:
        facts = list(check.all_facts())
        check.clear()
    return {
        "backend": "neo4j",
        "fault": "connection cuts",
        "writers": writers,
        "writes": writes,
        "acknowledged": len(acked),
        "refused": len(refused),
        "faults_injected": counts.before_commit + counts.after_commit + counts.outages,
        "cut_before_commit": counts.before_commit,
        "answer_lost_after_commit": counts.after_commit,
        "outages": counts.outages,
        "reconciled": reconciled,
        "outcome_unknown": unknown,
        "reads": reads[0],
        "reads_torn": reads[1],
        "replays": 1,
        **_verdict(facts, acked, refused, batches),
        "seconds": round(time.monotonic() - started, 1),
    }


# -- costs ------------------------------------------------------------------------------------


def fsync_costs(workdir: Path, singles: int = 300) -> list[dict[str, Any]]:
    """Median and p95 of one remember, and one 1,000-fact remember_many, per fsync policy."""
    rows = []
    for policy in ("always", "batch", "off"):
        with Memory.open(workdir / f"fsync-{policy}.jsonl", fsync=policy) as memory:
            times = []
            for i in range(singles):
                t = time.perf_counter()
                memory.remember(f"K{i % 10}", "HAS_VALUE", str(i))
                times.append(time.perf_counter() - t)
            batch_times = []
            for b in range(5):
                facts = [(f"B{b}-{i}", "HAS_VALUE", str(i)) for i in range(1000)]
                t = time.perf_counter()
                memory.remember_many(facts)
                batch_times.append(time.perf_counter() - t)
        times.sort()
        rows.append(
            {
                "policy": policy,
                "remember_p50_us": round(statistics.median(times) * 1e6, 1),
                "remember_p95_us": round(times[int(len(times) * 0.95)] * 1e6, 1),
                "batch_1000_p50_ms": round(statistics.median(batch_times) * 1e3, 1),
            }
        )
    return rows


def history_costs(workdir: Path, updates: int = 12_000) -> list[dict[str, Any]]:
    """One key updated ``updates`` times, with a new value each time and with three values
    in turn: write cost early and late, the time to open it again (its snapshot, when the
    writer left one, and the journal lines after it), the opened store's memory."""
    from ctxneo.stores.networkx import NetworkXStore

    rows = []
    for values in ("distinct", "repeating"):
        path = workdir / f"hot-key-{values}.jsonl"
        times = []
        with Memory.open(path, fsync="off") as memory:
            for i in range(updates):
                value = str(i) if values == "distinct" else ("red", "green", "blue")[i % 3]
                t = time.perf_counter()
                memory.remember("Hot_Key", "HAS_VALUE", value)
                times.append(time.perf_counter() - t)
        t = time.perf_counter()
        NetworkXStore(path, create=False).close()
        replay = time.perf_counter() - t
        tracemalloc.start()
        store = NetworkXStore(path, create=False)
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        t = time.perf_counter()
        history = store.history("Hot_Key", "HAS_VALUE")
        read = time.perf_counter() - t
        store.close()
        tenth = updates // 10
        rows.append(
            {
                "values": values,
                "updates": updates,
                "write_first_tenth_p50_us": round(statistics.median(times[:tenth]) * 1e6, 1),
                "write_last_tenth_p50_us": round(statistics.median(times[-tenth:]) * 1e6, 1),
                "replay_s": round(replay, 3),
                "replayed_store_mb": round(held / 1e6, 2),
                "history_read_s": round(read, 3),
                "history_facts": len(history),
                "journal_mb": round(path.stat().st_size / 1e6, 2),
            }
        )
    return rows


# -- the run ----------------------------------------------------------------------------------


def run(
    backends: list[str],
    *,
    writers: int = 4,
    seconds: float = 8.0,
    connect: Callable[[str, str, float], Any] | None = None,
    neo4j_target: tuple[str, int] | None = None,
    updates: int = 12_000,
    progress: Log = lambda _: None,
) -> dict[str, Any]:
    """Every fault run on the chosen backends, and the cost figures.

    ``connect(uri, namespace, timeout)`` opens a Neo4j store (credentials
    bound); ``neo4j_target`` is the server's (host, port) for the proxy.
    """
    rows: list[dict[str, Any]] = []
    result: dict[str, Any] = {"rows": rows}
    with tempfile.TemporaryDirectory(prefix="ctxneo-reliability-") as tmp:
        workdir = Path(tmp)
        if "networkx" in backends:
            for fault in JOURNAL_FAULTS:
                progress(f"journal, {fault}")
                rows.append(_journal_run(fault, writers, seconds, workdir))
            progress(f"journal, {THREADS} threads")
            rows.append(_threads_run(seconds, workdir))
            progress("fsync costs")
            result["fsync"] = fsync_costs(workdir)
            progress(f"one key updated {updates:,} times")
            result["history"] = history_costs(workdir, updates)
        if "neo4j" in backends:
            assert connect is not None and neo4j_target is not None
            progress("neo4j, connection cuts")
            rows.append(_neo4j_run(connect, neo4j_target, writers, seconds))
    result["all_zero"] = all(
        row[k] == 0
        for row in rows
        for k in (
            "acknowledged_lost",
            "duplicates",
            "refused_but_stored",
            "partial",
            "double_current_keys",
            "seq_errors",
        )
    ) and all(
        row["replays"] and not row.get("reads_torn") and not row.get("thread_errors")
        for row in rows
    )
    return result


COLUMNS = (
    ("backend", "backend"),
    ("fault", "fault"),
    ("writers", "writers"),
    ("writes", "writes"),
    ("acknowledged", "acknowledged"),
    ("refused", "refused (error raised)"),
    ("faults_injected", "faults injected"),
    ("acknowledged_lost", "acknowledged lost"),
    ("duplicates", "duplicates"),
    ("refused_but_stored", "refused but stored"),
    ("partial", "partial batches"),
    ("double_current_keys", "double-current keys"),
    ("reads_torn", "reads seeing 0 or 2 current"),
)


def markdown(result: dict[str, Any]) -> str:
    """The result as Markdown tables (the README's form)."""
    lines = [
        "| " + " | ".join(label for _, label in COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    lines += [
        "| " + " | ".join(_cell(row.get(k)) for k, _ in COLUMNS) + " |" for row in result["rows"]
    ]
    lines += ["", *_notes(result)]
    costs = costs_markdown(result)
    return "\n".join(lines) + (f"\n\n{costs}" if costs else "")


def costs_markdown(result: dict[str, Any]) -> str:
    """The fsync table and the long-history line, when they were measured."""
    lines: list[str] = []
    if "fsync" in result:
        lines += [
            "| fsync policy | remember p50 µs | remember p95 µs | remember_many(1,000) p50 ms |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {r['policy']} | {r['remember_p50_us']:,} | {r['remember_p95_us']:,} | "
            f"{r['batch_1000_p50_ms']:,} |"
            for r in result["fsync"]
        ]
    if "history" in result:
        lines += ["", *_history_lines(result["history"])]
    return "\n".join(lines).strip()


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _notes(result: dict[str, Any]) -> list[str]:
    notes = []
    for row in result["rows"]:
        if row["backend"] == "neo4j":
            notes.append(
                f"neo4j: {row['cut_before_commit']} connections cut before a commit, "
                f"{row['answer_lost_after_commit']} commit answers lost after the server "
                f"applied them ({row['reconciled']} writes found applied by their write id on "
                f"retry), {row['outages']} outage(s) of 1.5 s; {row['outcome_unknown']} writes "
                f"left with an unknown outcome; a reader beside them read a contested key "
                f"{row['reads']:,} times."
            )
    notes.append(
        "Every check is zero; every memory read back whole (journals replayed with their "
        "invariants checked)."
        if result["all_zero"]
        else "SOME CHECK IS NOT ZERO: see the table."
    )
    return notes


def _history_lines(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| one key updated | write p50 µs, first tenth | write p50 µs, last tenth | open s "
        "| opened store MB | whole history read s |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {h['updates']:,} times, {h['values']} values | {h['write_first_tenth_p50_us']} | "
        f"{h['write_last_tenth_p50_us']} | {h['replay_s']} | {h['replayed_store_mb']} | "
        f"{h['history_read_s']} |"
        for h in rows
    ]
    return lines


def table(result: dict[str, Any]) -> Any:
    """The result as a rich table for the terminal."""
    from rich.table import Table

    out = Table(title="Reliability under faults", title_justify="left")
    for key, label in COLUMNS:
        out.add_column(label, justify="left" if key in ("backend", "fault") else "right")
    for row in result["rows"]:
        out.add_row(*(_cell(row.get(k)) for k, _ in COLUMNS))
    out.caption = "\n".join(_notes(result))
    return out


if __name__ == "__main__":  # a writer process of a journal run
    path_, name_, fault_, seed_, count_ = sys.argv[1:6]
    writer_main(path_, name_, fault_, int(seed_), int(count_))
