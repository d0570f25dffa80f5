"""How ingest and answers scale with the size of the memory, on both stores.

For each size the synthetic workload (``bench/workload.py``, fixed seed) is
written into a fresh memory and measured:

- ingest rate one fact at a time, and in batches (``remember_many``); for the
  embedded store also into a journal file;
- answer latency p50/p95 of direct and two-hop questions asked in words
  through the real answerer, and whether the answers are right;
- for the embedded store, the resident memory it adds per fact (each size runs
  in a fresh process, so sizes do not pollute each other);
- for Neo4j, store round trips per answer (mean, median and most), after the
  client's copy of the names is read (``Memory.warm``, timed) and the server's
  plans are made in a scratch namespace (:func:`warm_server`);
- the floor each store's answer is measured against, in the same run: for the
  embedded store a structured lookup of the same answers (SQLite in memory, a
  table of the current triples indexed on (subject, predicate), the question's
  hops looked up in turn: no words read); for Neo4j a ``RETURN 1`` on a kept
  session (one round trip doing nothing).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ctxneo.bench.harness import percentile
from ctxneo.bench.workload import MULTI_VALUED, Workload, build

from ctxneo.errors import CtxneoError
from ctxneo.memory import Memory
from ctxneo.model import NewFact

SIZES = (1_000, 10_000, 100_000, 1_000_000)
BATCH = 10_000
NEO4J_SINGLE_SAMPLE = 1_000  # one transaction per fact: measured on this many extra facts


def _rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1) if seconds > 0 else 0.0


def _ingest(memory: Memory, facts: Sequence[NewFact], batch: int | None) -> float:
    """The seconds ``facts`` took to write, one at a time or in batches of ``batch``."""
    if batch is None:
        return sum(_one_by_one(memory, facts))
    memory.declare_multi_valued(*MULTI_VALUED)
    start = time.perf_counter()
    for i in range(0, len(facts), batch):
        memory.remember_many(facts[i : i + batch])
    return time.perf_counter() - start


def _one_by_one(memory: Memory, facts: Sequence[NewFact]) -> list[float]:
    """Each fact written alone (one transaction each): the seconds each write took."""
    memory.declare_multi_valued(*MULTI_VALUED)
    took: list[float] = []
    for fact in facts:
        start = time.perf_counter()
        memory.store.remember(fact)
        took.append(time.perf_counter() - start)
    return took


def _answers(memory: Memory, workload: Workload, trips: list[int] | None = None) -> dict[str, Any]:
    """Latency and rightness by kind; each answer's store round trips into ``trips``
    (a store that counts them: Neo4j)."""
    out: dict[str, Any] = {}
    store: Any = memory.store
    for kind in ("direct", "two-hop"):
        latencies: list[float] = []
        right = 0
        questions = [q for q in workload.questions if q.kind == kind]
        for q in questions:
            before = store.reads if trips is not None else 0
            start = time.perf_counter()
            answer = memory.ask(q.text)
            latencies.append((time.perf_counter() - start) * 1000)
            if trips is not None:
                trips.append(store.reads - before)
            right += q.expected in answer.values
        key = kind.replace("-", "_")
        out[f"{key}_p50_ms"] = round(statistics.median(latencies), 3)
        out[f"{key}_p95_ms"] = round(percentile(latencies, 95), 3)
        out[f"{key}_correct"] = round(right / len(questions), 4)
    return out


FLOOR_SAMPLES = 200


def sqlite_floor_ms(workload: Workload) -> float:
    """The p50 of answering the workload's questions by structured lookups alone."""
    import sqlite3

    current: dict[tuple[str, str], list[str]] = {}
    for f in workload.facts:
        values = current.setdefault((f.subject, f.predicate), [])
        if f.predicate in MULTI_VALUED:
            if f.object not in values:
                values.append(f.object)
        else:
            values[:] = [f.object]
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE facts (s TEXT, p TEXT, o TEXT)")
    db.executemany(
        "INSERT INTO facts VALUES (?, ?, ?)",
        ((s, p, o) for (s, p), values in current.items() for o in values),
    )
    db.execute("CREATE INDEX facts_sp ON facts (s, p)")
    latencies = []
    for q in workload.questions[:FLOOR_SAMPLES]:
        start = time.perf_counter()
        at = [q.chain[0]]
        for predicate in q.chain[1:]:
            at = [
                o
                for s in at
                for (o,) in db.execute("SELECT o FROM facts WHERE s = ? AND p = ?", (s, predicate))
            ]
        latencies.append((time.perf_counter() - start) * 1000)
        assert q.expected in at, (q, at)  # (the floor answers right, or it measures nothing)
    db.close()
    return round(statistics.median(latencies), 4)


def return_one_floor_ms(store: Any) -> float:
    """The p50 of one ``RETURN 1`` round trip on the store's kept read session."""
    latencies = []
    for _ in range(FLOOR_SAMPLES):
        start = time.perf_counter()
        store._reader().run("RETURN 1").consume()  # (the session every read of an answer uses)
        latencies.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(latencies), 4)


def _rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


def measure_networkx(n: int) -> dict[str, Any]:
    """Every embedded measurement at one size (run in a fresh process for the RSS figure)."""
    workload = build(n)
    facts = workload.facts
    row: dict[str, Any] = {"backend": "networkx", "facts": len(facts)}
    with Memory.open() as warm:  # imports, lexicon and caches are not the store's memory
        warm.remember("Warm_Up", "OWNED_BY", "Team_Warm")
        warm.ask("Which team owns Warm_Up?")
    before = _rss()
    memory = Memory.open()
    row["ingest_batch_per_s"] = _rate(len(facts), _ingest(memory, facts, BATCH))
    row["rss_bytes_per_fact"] = round((_rss() - before) / len(facts), 1)
    row.update(_answers(memory, workload))
    row["floor_p50_ms"] = sqlite_floor_ms(workload)
    memory.close()
    del memory
    with Memory.open() as one_by_one:
        row["ingest_one_per_s"] = _rate(len(facts), _ingest(one_by_one, facts, None))
    with tempfile.TemporaryDirectory() as tmp, Memory.open(Path(tmp) / "scale.jsonl") as journaled:
        row["ingest_journal_per_s"] = _rate(len(facts), _ingest(journaled, facts, BATCH))
    return row


def warm_server(connect: Callable[[str], Memory]) -> None:
    """Run each kind of statement once in a scratch namespace, so the server's plans
    and JIT are made before anything is measured (as the embedded store's imports and
    caches are made before it is): the first size's sample of one-fact writes is 100
    transactions, and a plan made in it cost 0.3-0.8 s."""
    workload = build(200, questions=10, seed=3)
    memory = connect(f"scale-warm-{uuid.uuid4().hex[:8]}")
    try:
        memory.store.clear()
        _ingest(memory, workload.facts[:150], BATCH)
        _ingest(memory, workload.facts[150:], None)
        memory.warm()
        _answers(memory, workload)
    finally:
        memory.store.clear()
        memory.close()


def measure_neo4j(n: int, connect: Callable[[str], Memory]) -> dict[str, Any]:
    """Batched ingest into a fresh namespace, one transaction per fact on a sample, answers."""
    workload = build(n)
    facts = workload.facts
    namespace = f"scale-{uuid.uuid4().hex[:8]}-{n}"
    memory = connect(namespace)
    try:
        memory.store.clear()
        row: dict[str, Any] = {"backend": "neo4j", "facts": len(facts)}
        row["ingest_batch_per_s"] = _rate(len(facts), _ingest(memory, facts, BATCH))
        store: Any = memory.store
        start = time.perf_counter()
        memory.warm()  # (the names copied before the first question, as a served client does)
        row["warm_ms"] = round((time.perf_counter() - start) * 1000, 1)
        trips: list[int] = []
        row.update(_answers(memory, workload, trips))
        row["round_trips_per_answer"] = round(statistics.mean(trips), 2)
        row["round_trips_p50"] = statistics.median(trips)
        row["round_trips_max"] = max(trips)
        row["floor_p50_ms"] = return_one_floor_ms(store)
        # Then one transaction per fact, on top of the loaded memory (after the
        # answers: these extra facts may re-state some of the workload's).
        sample = min(NEO4J_SINGLE_SAMPLE, max(100, n // 10))
        extra = build(sample, questions=1, seed=7).facts[:sample]
        took = _one_by_one(memory, extra)
        row["ingest_one_per_s"] = _rate(len(extra), sum(took))
        # The rate counts every write; the median, the write as it runs once the server's
        # plans are made for this size. After a load that grows the database several
        # times over, the server plans each statement again at its next use (its counts
        # moved; Neo4j's plan cache calls that plan stale), a few tenths of a second
        # each, and on a sample of a hundred writes those few plans are most of the time.
        row["ingest_one_p50_ms"] = round(statistics.median(took) * 1000, 3)
        row["ingest_one_sample"] = len(extra)
        return row
    finally:
        memory.store.clear()
        memory.close()


def run(
    sizes: Sequence[int],
    backends: Sequence[str],
    connect: Callable[[str], Memory] | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Measure every (backend, size); each embedded size runs in its own process."""
    rows: list[dict[str, Any]] = []
    for backend in backends:
        if backend == "neo4j":
            assert connect is not None
            progress("neo4j: warming the server's plans")
            warm_server(connect)
        for n in sizes:
            progress(f"{backend}: {n:,} facts")
            if backend == "networkx":
                rows.append(_in_fresh_process(n))
            else:
                assert connect is not None
                rows.append(measure_neo4j(n, connect))
    return {"rows": rows, "growth": growth(rows)}


def _in_fresh_process(n: int) -> dict[str, Any]:
    result = subprocess.run(
        # -P: not the working directory first on the path, so run from a checkout's
        # root the worker imports the installed ctxneo (whose bench/ is ctxneo.bench).
        [sys.executable, "-P", "-m", "ctxneo.bench.scale", str(n)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    if result.returncode != 0:
        raise CtxneoError(f"the scale worker failed at {n:,} facts:\n{result.stderr[-2000:]}")
    return json.loads(result.stdout)


def growth(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Largest size over smallest, per backend: answer p50 and ingest rate."""
    out: dict[str, dict[str, float]] = {}
    for backend in sorted({r["backend"] for r in rows}):
        mine = sorted((r for r in rows if r["backend"] == backend), key=lambda r: r["facts"])
        if len(mine) < 2:
            continue
        small, large = mine[0], mine[-1]
        out[backend] = {
            "facts": round(large["facts"] / small["facts"], 1),
            "direct_p50": round(large["direct_p50_ms"] / small["direct_p50_ms"], 2),
            "two_hop_p50": round(large["two_hop_p50_ms"] / small["two_hop_p50_ms"], 2),
            "ingest_batch": round(large["ingest_batch_per_s"] / small["ingest_batch_per_s"], 2),
        }
    return out


if __name__ == "__main__":  # the fresh process of one embedded measurement
    print(json.dumps(measure_networkx(int(sys.argv[1]))))
