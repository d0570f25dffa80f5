"""Run scenarios through the three architectures and grade the answers.

Each architecture sees the turns in order. Only the question text (and the
asking speaker, for the graph) is passed to an architecture; the query's type,
required facts and ground truth are read here, after answering, to grade.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ctxneo.bench.baselines import RawHistoryDump, VectorRAG
from ctxneo.bench.tokens import estimate_tokens

from ctxneo.memory import Memory
from ctxneo.model import NewFact, Scenario, Turn

ARCHITECTURES = ("raw", "rag", "graph")
ARCH_LABELS = {"raw": "raw dump", "rag": "vector RAG", "graph": "context graph"}
NO_BACKEND = "-"

#: Opens a fresh, empty memory for one scenario; the harness clears and closes it.
MemoryFactory = Callable[[Scenario], Memory]


@dataclass(frozen=True, slots=True)
class QueryRecord:
    scenario: str
    turn_id: int
    query: str
    query_type: str | None
    backend: str
    architecture: str
    answer: str
    evidence: list[str]
    correct: bool | None
    tokens: int
    latency_ms: float
    reading: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def grade(answer: str, truth: Sequence[str] | None) -> bool | None:
    """Case-insensitive substring: every ground-truth item must appear (None: ungraded)."""
    if truth is None:
        return None
    return all(item.lower() in answer.lower() for item in truth)


def _record(
    scenario: Scenario,
    turn: Turn,
    backend: str,
    arch: str,
    answer: str,
    evidence: list[str],
    context: str,
    seconds: float,
    reading: str = "",
) -> QueryRecord:
    return QueryRecord(
        scenario=scenario.name,
        turn_id=turn.turn_id,
        query=turn.text,
        query_type=turn.query_type,
        backend=backend,
        architecture=arch,
        answer=answer,
        evidence=evidence,
        correct=grade(answer, turn.ground_truth),
        tokens=estimate_tokens(context),
        latency_ms=round(seconds * 1000, 3),
        reading=reading,
    )


def run_flat(scenario: Scenario, arch: str) -> list[QueryRecord]:
    """Run one scenario through a flat baseline (``raw`` or ``rag``)."""
    model = RawHistoryDump() if arch == "raw" else VectorRAG()
    out = []
    for turn in scenario.turns:
        if turn.turn_type == "query":
            start = time.perf_counter()
            answer, context, evidence = model.answer(turn.text)
            seconds = time.perf_counter() - start
            out.append(
                _record(scenario, turn, NO_BACKEND, arch, answer, evidence, context, seconds)
            )
        model.ingest(turn)
    return out


def run_graph(scenario: Scenario, memory: Memory, backend: str) -> list[QueryRecord]:
    """Run one scenario through the context graph held by ``memory`` (empty on entry)."""
    if scenario.multi_valued_predicates:
        memory.declare_multi_valued(*sorted(scenario.multi_valued_predicates))
    for phrase, entity in scenario.aliases:
        memory.alias(phrase, entity)
    out = []
    for turn in scenario.turns:
        if turn.turn_type == "fact":
            assert turn.subject and turn.predicate and turn.object
            memory.store.remember(
                NewFact(
                    turn.subject,
                    turn.predicate,
                    turn.object,
                    turn.speaker,
                    turn.turn_id,
                    turn.fact_id,
                )
            )
        elif turn.turn_type == "query":
            start = time.perf_counter()
            answer = memory.ask(turn.text, speaker=turn.speaker)
            seconds = time.perf_counter() - start
            out.append(
                _record(
                    scenario,
                    turn,
                    backend,
                    "graph",
                    answer.answer,
                    [f.line() for f in answer.evidence],
                    answer.context,
                    seconds,
                    answer.reading,
                )
            )
    return out


def run_suite(
    scenarios: Sequence[Scenario],
    architectures: Iterable[str],
    backends: dict[str, MemoryFactory],
    progress: Callable[[int], None] = lambda n: None,
) -> list[QueryRecord]:
    """Every scenario through every architecture (the graph on every backend)."""
    records: list[QueryRecord] = []
    archs = list(architectures)
    for scenario in scenarios:
        queries = sum(1 for t in scenario.turns if t.turn_type == "query")
        for arch in archs:
            if arch == "graph":
                for backend, factory in backends.items():
                    memory = factory(scenario)
                    try:
                        records += run_graph(scenario, memory, backend)
                    finally:
                        memory.store.clear()  # a benchmark memory leaves nothing on a server
                        memory.close()
                    progress(queries)
            else:
                records += run_flat(scenario, arch)
                progress(queries)
    return records


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


def summarize(records: Sequence[QueryRecord]) -> list[dict[str, Any]]:
    """One row per (architecture, backend): accuracy overall and per query type, tokens, latency."""
    rows = []
    keys = sorted(
        {(r.architecture, r.backend) for r in records},
        key=lambda k: (ARCHITECTURES.index(k[0]), k[1]),
    )
    for arch, backend in keys:
        mine = [r for r in records if r.architecture == arch and r.backend == backend]
        graded = [r for r in mine if r.correct is not None]
        by_type: dict[str, list[bool]] = {}
        for r in graded:
            by_type.setdefault(r.query_type or "untyped", []).append(bool(r.correct))
        latencies = [r.latency_ms for r in mine]
        rows.append(
            {
                "architecture": arch,
                "backend": backend,
                "queries": len(mine),
                "graded": len(graded),
                "correct": sum(1 for r in graded if r.correct),
                "accuracy": round(sum(1 for r in graded if r.correct) / len(graded), 4)
                if graded
                else None,
                "by_type": {
                    t: {"correct": sum(v), "graded": len(v), "accuracy": round(sum(v) / len(v), 4)}
                    for t, v in sorted(by_type.items())
                },
                "avg_tokens": round(statistics.fmean(r.tokens for r in mine), 1) if mine else 0.0,
                "p50_ms": round(percentile(latencies, 50), 3),
                "p95_ms": round(percentile(latencies, 95), 3),
            }
        )
    return rows


def disagreements(records: Sequence[QueryRecord]) -> list[dict[str, Any]]:
    """Graph answers that differ between backends for the same query (there should be none)."""
    by_query: dict[tuple[str, int], dict[str, QueryRecord]] = {}
    for r in records:
        if r.architecture == "graph":
            by_query.setdefault((r.scenario, r.turn_id), {})[r.backend] = r
    out = []
    for (scenario, turn_id), per in sorted(by_query.items()):
        if len({(r.answer, tuple(r.evidence)) for r in per.values()}) > 1:
            out.append(
                {
                    "scenario": scenario,
                    "turn_id": turn_id,
                    "answers": {
                        b: {"answer": r.answer, "evidence": r.evidence}
                        for b, r in sorted(per.items())
                    },
                }
            )
    return out
