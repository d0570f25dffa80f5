"""Run scenarios through the three architectures and grade the answers.

Each architecture sees the turns in order. Only the question text (and the
asking speaker, for the graph) is passed to an architecture; the query's type,
required facts and ground truth are read here, after answering, to grade.

Beside accuracy the harness measures two things an agent relies on:

- **false answers**: every graded query is asked again of its unanswerable
  variant (:mod:`ctxneo.bench.variants`), where the only right answer is
  ``UNKNOWN``;
- **evidence recall**: whether the facts a query requires are in the context
  each architecture would send an LLM, at k = 1 and k = 3 (the graph's first k
  readings, the RAG's top k chunks, the raw dump's whole transcript), with the
  tokens of that context.
"""

from __future__ import annotations

import functools
import re
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ctxneo.bench.baselines import RawHistoryDump, VectorRAG, transcript_line
from ctxneo.bench.diagnose import stages
from ctxneo.bench.tokens import estimate_tokens
from ctxneo.bench.variants import Variant, unanswerable_variants

from ctxneo.memory import Memory
from ctxneo.model import UNKNOWN, Answer, Scenario, Turn, check_predicate
from ctxneo.scenarios import write_turns

ARCHITECTURES = ("raw", "rag", "graph")
ARCH_LABELS = {"raw": "raw dump", "rag": "vector RAG", "graph": "context graph"}
NO_BACKEND = "-"
#: Where evidence recall is measured: (label, readings or chunks asked, token budget). The
#: first three by how many readings (chunks) are sent, the rest by a budget of tokens.
EVIDENCE_AT: tuple[tuple[str, int, int | None], ...] = (
    ("1", 1, None),
    ("3", 3, None),
    ("10", 10, None),
    ("50t", 10, 50),
    ("100t", 10, 100),
    ("200t", 10, 200),
    ("400t", 10, 400),
)
EVIDENCE_K = (1, 3, 10)
EVIDENCE_BUDGETS = (50, 100, 200, 400)

#: Opens a fresh, empty memory for one scenario; the harness clears and closes it.
MemoryFactory = Callable[[Scenario], Memory]


@dataclass(frozen=True, slots=True)
class QueryRecord:
    """One query answered by one architecture (on one backend), graded.

    ``unanswerable`` marks the query asked of its unanswerable variant, where
    ``correct`` means the answer was ``UNKNOWN``. ``recall`` maps k to whether
    every required fact was in the context sent at k, ``context_tokens`` to
    that context's tokens (answerable graded queries with required facts only).
    ``confidence``, ``reason`` and ``context`` are the graph's (``None``/empty
    for the flat baselines).
    """

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
    values: list[str] = field(default_factory=list)
    confidence: float | None = None
    reason: str = ""
    unanswerable: bool = False
    recall: dict[str, bool] = field(default_factory=dict)
    context_tokens: dict[str, int] = field(default_factory=dict)
    context: str = ""
    #: The answer funnel of this query (``--diagnose``): see :mod:`ctxneo.bench.diagnose`.
    funnel: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: Ground-truth items that are a yes/no verdict: they must be the answer's first word
#: ("no" is inside "Nordvik" and "unknown").
VERDICTS = ("yes", "no")


def grade(answer: str, truth: Sequence[str] | None) -> bool | None:
    """Case-insensitive: every ground-truth item must appear, as whole words (None: ungraded).

    Whole words: an item inside a longer word or id is not there, so a look-alike that
    contains the right id (``B140`` for ``B14``) or a word containing the right one
    ("reopened" for "open") is graded wrong. ``UNKNOWN`` as the whole ground truth is
    right only for the answer ``UNKNOWN``, and ``UNKNOWN`` is never right otherwise; a
    "yes" or "no" item must be the first word.
    """
    if truth is None:
        return None
    if len(truth) == 1 and truth[0].strip() == UNKNOWN:
        return answer == UNKNOWN
    if answer == UNKNOWN:
        return False
    text = answer.lower()
    first = re.match(r"\W*(\w+)", text)
    for item in (t.lower().strip() for t in truth):
        if item in VERDICTS:
            if first is None or first.group(1) != item:
                return False
        elif not _whole(item).search(text):
            return False
    return True


@functools.lru_cache(maxsize=4096)
def _whole(item: str) -> re.Pattern[str]:
    """``item`` where no word character (letter, digit, underscore) runs on either side."""
    return re.compile(rf"(?<!\w){re.escape(item)}(?!\w)")


def _record(
    scenario: Scenario,
    turn: Turn,
    backend: str,
    arch: str,
    answer: str,
    evidence: list[str],
    sent: str,
    seconds: float,
    *,
    unanswerable: bool = False,
    **extra: Any,
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
        correct=(answer == UNKNOWN) if unanswerable else grade(answer, turn.ground_truth),
        tokens=estimate_tokens(sent),
        latency_ms=round(seconds * 1000, 3),
        unanswerable=unanswerable,
        **extra,
    )


def _fact_turns(scenario: Scenario) -> dict[str, Turn]:
    return {t.fact_id: t for t in scenario.turns if t.turn_type == "fact" and t.fact_id}


def _measures_recall(turn: Turn) -> bool:
    return turn.graded and bool(turn.required_fact_ids)


def _asked(turn: Turn, variant: Variant | None) -> bool:
    return turn.turn_type == "query" and (variant is None or turn.turn_id == variant.query.turn_id)


def run_flat(scenario: Scenario, arch: str, *, variant: Variant | None = None) -> list[QueryRecord]:
    """Run one scenario through a flat baseline (``raw`` or ``rag``).

    With ``variant`` (of this scenario), replay the variant instead and answer
    only its query, graded on ``UNKNOWN``.
    """
    model = RawHistoryDump() if arch == "raw" else VectorRAG()
    if arch == "rag":
        # Import scikit-learn before the clock starts: its seconds of import are
        # not an answer's latency (a one-query scenario reported them as its p50).
        import sklearn.feature_extraction.text
        import sklearn.metrics.pairwise  # noqa: F401
    facts = _fact_turns(scenario)
    out = []
    for turn in scenario.turns if variant is None else variant.scenario.turns:
        if _asked(turn, variant):
            start = time.perf_counter()
            answer, context, evidence = model.answer(turn.text)
            seconds = time.perf_counter() - start
            extra: dict[str, Any] = {"values": [] if answer == UNKNOWN else [answer]}
            if variant is None and _measures_recall(turn):
                needed = [transcript_line(facts[f]) for f in turn.required_fact_ids]
                extra["recall"], extra["context_tokens"] = {}, {}
                for label, k, budget in EVIDENCE_AT:
                    text, lines = model.context(turn.text, k, budget)
                    extra["recall"][label] = set(needed) <= set(lines)
                    extra["context_tokens"][label] = estimate_tokens(text)
            out.append(
                _record(
                    scenario,
                    turn,
                    NO_BACKEND,
                    arch,
                    answer,
                    evidence,
                    context,
                    seconds,
                    unanswerable=variant is not None,
                    **extra,
                )
            )
        model.ingest(turn)
    return out


def context_facts(answer: Answer, k: int) -> set[tuple[str, str, str]]:
    """The (subject, predicate, object) facts an answer asked at ``k`` puts in its context.

    They are the facts its ``context`` holds: the evidence of its first ``k``
    readings and, with several readings, facts of the entities the question names.
    Facts are compared as triples, so a re-stated fact counts under either id.
    """
    facts = answer.context_facts or [
        *answer.evidence,
        *(f for r in answer.readings[:k] for f in r.evidence),
    ]
    return {(f.subject, f.predicate, f.object) for f in facts}


def run_graph(
    scenario: Scenario,
    memory: Memory,
    backend: str,
    *,
    variant: Variant | None = None,
    min_confidence: float | None = None,
    diagnose: bool = False,
) -> list[QueryRecord]:
    """Run one scenario through the context graph held by ``memory`` (empty on entry).

    The facts stated between two queries are written as one batch (the same
    semantics as one at a time). With ``variant`` (of this scenario), replay
    the variant instead and answer only its query, graded on ``UNKNOWN``.
    ``min_confidence`` is passed to every ``ask``. With ``diagnose``, each graded
    query's funnel is measured after it is answered (see :mod:`.diagnose`).
    """
    if scenario.multi_valued_predicates:
        memory.declare_multi_valued(*sorted(scenario.multi_valued_predicates))
    for phrase, entity in scenario.aliases:
        memory.alias(phrase, entity)
    facts = _fact_turns(scenario)
    pending: list[Turn] = []
    out = []
    for turn in scenario.turns if variant is None else variant.scenario.turns:
        if turn.turn_type == "fact":
            pending.append(turn)
        elif _asked(turn, variant):
            write_turns(memory.store, pending)
            pending = []
            # Only the question and who asks; a threshold only when one was chosen.
            asking: dict[str, Any] = {"speaker": turn.speaker}
            if min_confidence is not None:
                asking["min_confidence"] = min_confidence
            start = time.perf_counter()
            answer = memory.ask(turn.text, **asking)
            seconds = time.perf_counter() - start
            extra: dict[str, Any] = {
                "reading": answer.reading,
                "values": list(answer.values),
                "confidence": answer.confidence,
                "reason": answer.reason,
                "context": answer.context,
            }
            if variant is None and _measures_recall(turn):
                needed = {
                    (t.subject, check_predicate(t.predicate or ""), t.object)
                    for t in (facts[f] for f in turn.required_fact_ids)
                }  # (predicates in their stored form: "owner" is stored as OWNER)
                extra["recall"], extra["context_tokens"] = {}, {}
                for label, k, budget in EVIDENCE_AT:
                    at_k = (
                        answer
                        if k == 1 and budget is None
                        else memory.ask(turn.text, **asking, k=k, max_tokens=budget)
                    )
                    extra["recall"][label] = needed <= context_facts(at_k, k)
                    extra["context_tokens"][label] = estimate_tokens(at_k.context)
            if diagnose and variant is None and turn.graded:
                trace = memory.trace(turn.text, speaker=turn.speaker)
                required = [facts[f] for f in turn.required_fact_ids]
                right = functools.partial(grade, truth=turn.ground_truth)
                extra["funnel"] = stages(turn, required, answer, trace, right)
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
                    unanswerable=variant is not None,
                    **extra,
                )
            )
    return out


def count_runs(scenarios: Sequence[Scenario], unanswerable: bool = True) -> int:
    """Queries one architecture answers over ``scenarios``: every query, plus one per variant."""
    total = 0
    for s in scenarios:
        total += sum(1 for t in s.turns if t.turn_type == "query")
        if unanswerable:
            total += sum(1 for _ in unanswerable_variants(s))
    return total


def run_suite(
    scenarios: Sequence[Scenario],
    architectures: Iterable[str],
    backends: dict[str, MemoryFactory],
    progress: Callable[[int], None] = lambda n: None,
    *,
    unanswerable: bool = True,
    min_confidence: float | None = None,
    diagnose: bool = False,
) -> list[QueryRecord]:
    """Every scenario through every architecture (the graph on every backend).

    Args:
        unanswerable: also run every graded query's unanswerable variant.
        min_confidence: passed to the graph's ``ask``.
        diagnose: also measure the graph's answer funnel per graded query.
        progress: called with the number of queries just answered.
    """
    records: list[QueryRecord] = []
    archs = list(architectures)
    for scenario in scenarios:
        queries = sum(1 for t in scenario.turns if t.turn_type == "query")
        variants = list(unanswerable_variants(scenario)) if unanswerable else []
        for arch in archs:
            if arch != "graph":
                records += run_flat(scenario, arch)
                progress(queries)
                for v in variants:
                    records += run_flat(scenario, arch, variant=v)
                    progress(1)
                continue
            for backend, factory in backends.items():
                memory = factory(scenario)
                try:
                    records += run_graph(
                        scenario,
                        memory,
                        backend,
                        min_confidence=min_confidence,
                        diagnose=diagnose,
                    )
                    progress(queries)
                    for v in variants:
                        # One connection per scenario; a fresh answerer over the emptied store.
                        memory.store.clear()
                        records += run_graph(
                            scenario,
                            Memory(memory.store),
                            backend,
                            variant=v,
                            min_confidence=min_confidence,
                        )
                        progress(1)
                finally:
                    memory.store.clear()  # a benchmark memory leaves nothing on a server
                    memory.close()
    return records


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def summarize(records: Sequence[QueryRecord]) -> list[dict[str, Any]]:
    """One row per (architecture, backend).

    Accuracy overall and per query type, tokens and latency are over the
    answerable queries; ``false_answers`` counts unanswerable variants answered
    with anything but ``UNKNOWN``; ``evidence`` gives, per k, the share of
    graded queries whose required facts were all in the context, and that
    context's average tokens.
    """
    rows = []
    keys = sorted(
        {(r.architecture, r.backend) for r in records},
        key=lambda k: (ARCHITECTURES.index(k[0]), k[1]),
    )
    for arch, backend in keys:
        mine = [r for r in records if r.architecture == arch and r.backend == backend]
        asked = [r for r in mine if not r.unanswerable]
        graded = [r for r in asked if r.correct is not None]
        variants = [r for r in mine if r.unanswerable]
        false_answers = sum(1 for r in variants if not r.correct)
        by_type: dict[str, list[bool]] = {}
        for r in graded:
            by_type.setdefault(r.query_type or "untyped", []).append(bool(r.correct))
        false_by_type: dict[str, list[bool]] = {}
        for r in variants:
            false_by_type.setdefault(r.query_type or "untyped", []).append(not r.correct)
        measured = [r for r in graded if r.recall]
        evidence = {}
        for k, _, _ in EVIDENCE_AT:
            hits = sum(1 for r in measured if r.recall.get(k))
            evidence[k] = {
                "queries": len(measured),
                "recalled": hits,
                "recall": _share(hits, len(measured)),
                "avg_tokens": round(statistics.fmean(r.context_tokens[k] for r in measured), 1)
                if measured
                else None,
            }
        latencies = [r.latency_ms for r in asked]
        correct = sum(1 for r in graded if r.correct)
        rows.append(
            {
                "architecture": arch,
                "backend": backend,
                "queries": len(asked),
                "graded": len(graded),
                "correct": correct,
                "accuracy": _share(correct, len(graded)),
                "by_type": {
                    t: {"correct": sum(v), "graded": len(v), "accuracy": round(sum(v) / len(v), 4)}
                    for t, v in sorted(by_type.items())
                },
                "unanswerable": len(variants),
                "false_answers": false_answers,
                "false_answer_rate": _share(false_answers, len(variants)),
                "false_by_type": {
                    t: {"false_answers": sum(v), "unanswerable": len(v)}
                    for t, v in sorted(false_by_type.items())
                },
                "evidence": evidence,
                "avg_tokens": round(statistics.fmean(r.tokens for r in asked), 1) if asked else 0.0,
                "p50_ms": round(percentile(latencies, 50), 3),
                "p95_ms": round(percentile(latencies, 95), 3),
            }
        )
    return rows


def disagreements(records: Sequence[QueryRecord]) -> list[dict[str, Any]]:
    """Graph answers, confidences or contexts that differ between backends (should be none)."""
    by_query: dict[tuple[str, int, bool], dict[str, QueryRecord]] = {}
    for r in records:
        if r.architecture == "graph":
            by_query.setdefault((r.scenario, r.turn_id, r.unanswerable), {})[r.backend] = r
    out = []
    for (scenario, turn_id, unanswerable), per in sorted(by_query.items()):
        seen = {
            (r.answer, tuple(r.evidence), r.confidence, r.context, tuple(r.context_tokens.items()))
            for r in per.values()
        }
        if len(seen) > 1:
            out.append(
                {
                    "scenario": scenario,
                    "turn_id": turn_id,
                    "unanswerable": unanswerable,
                    "answers": {
                        b: {"answer": r.answer, "confidence": r.confidence, "evidence": r.evidence}
                        for b, r in sorted(per.items())
                    },
                }
            )
    return out
