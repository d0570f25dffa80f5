"""How far the graph's confidence can be trusted: reliability bins and coverage.

Both are computed over graded queries, answerable and unanswerable variants
together: an answer is right when it matches the ground truth (answerable) or
is ``UNKNOWN`` (unanswerable). The coverage table replays the run's answers at
higher thresholds (an answer below the threshold becomes ``UNKNOWN``), so it
is exact for thresholds at or above the one the run used and says nothing
about answers the run already withheld; run with ``--min-confidence 0`` to see
the whole curve.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxneo.bench.harness import QueryRecord

from ctxneo.model import UNKNOWN

BINS = 10
THRESHOLDS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


def _given(r: QueryRecord) -> bool:
    return r.answer != UNKNOWN


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def graded(records: Sequence[QueryRecord]) -> list[QueryRecord]:
    """The records the tables are over: graded answerable queries and unanswerable variants."""
    return [r for r in records if r.correct is not None]


def reliability(records: Sequence[QueryRecord], bins: int = BINS) -> dict[str, Any]:
    """Given answers binned by confidence, with the share of each bin that is right.

    Returns a dict with ``bins`` (low, high, answers, right, accuracy,
    mean_confidence; empty bins left out), ``abstained`` (``UNKNOWN``
    answers, and how many of them were to unanswerable variants) and ``ece``
    (expected calibration error: the answer-weighted mean of
    |accuracy - mean confidence| over the bins).
    """
    rows = graded(records)
    given = [r for r in rows if _given(r)]
    buckets: list[list[QueryRecord]] = [[] for _ in range(bins)]
    for r in given:
        confidence = min(max(r.confidence or 0.0, 0.0), 1.0)
        buckets[min(int(confidence * bins), bins - 1)].append(r)
    out = []
    gap = 0.0
    for i, bucket in enumerate(buckets):
        if not bucket:
            continue
        right = sum(1 for r in bucket if r.correct)
        mean = sum(r.confidence or 0.0 for r in bucket) / len(bucket)
        gap += len(bucket) * abs(right / len(bucket) - mean)
        out.append(
            {
                "low": round(i / bins, 4),
                "high": round((i + 1) / bins, 4),
                "answers": len(bucket),
                "right": right,
                "accuracy": _share(right, len(bucket)),
                "mean_confidence": round(mean, 4),
            }
        )
    abstained = [r for r in rows if not _given(r)]
    return {
        "queries": len(rows),
        "bins": out,
        "abstained": {
            "count": len(abstained),
            "unanswerable": sum(1 for r in abstained if r.unanswerable),
        },
        "ece": round(gap / len(given), 4) if given else None,
    }


def coverage(
    records: Sequence[QueryRecord], thresholds: Sequence[float] = THRESHOLDS
) -> list[dict[str, Any]]:
    """For each threshold: how much is answered, and how much of that is right.

    Each row has ``answered`` (given answers with confidence at or above the
    threshold) and its ``coverage`` share of all graded queries, ``accuracy``
    (right among the answered), ``answerable_accuracy`` (right answers over
    all answerable queries: what abstention costs) and ``false_answer_rate``
    (unanswerable variants still answered).
    """
    rows = graded(records)
    answerable = [r for r in rows if not r.unanswerable]
    unanswerable = [r for r in rows if r.unanswerable]
    out = []
    for c in thresholds:
        kept = [r for r in rows if _given(r) and (r.confidence or 0.0) >= c]
        right = sum(1 for r in kept if r.correct)
        answerable_right = sum(1 for r in kept if r.correct and not r.unanswerable)
        false = sum(1 for r in kept if r.unanswerable)
        out.append(
            {
                "threshold": c,
                "answered": len(kept),
                "coverage": _share(len(kept), len(rows)),
                "right": right,
                "accuracy": _share(right, len(kept)),
                "answerable_right": answerable_right,
                "answerable": len(answerable),
                "answerable_accuracy": _share(answerable_right, len(answerable)),
                "false_answers": false,
                "unanswerable": len(unanswerable),
                "false_answer_rate": _share(false, len(unanswerable)),
            }
        )
    return out


def calibration(records: Sequence[QueryRecord]) -> list[dict[str, Any]]:
    """The reliability table and coverage curve of the graph, per backend."""
    out = []
    for backend in sorted({r.backend for r in records if r.architecture == "graph"}):
        mine = [r for r in records if r.architecture == "graph" and r.backend == backend]
        out.append(
            {"backend": backend, "reliability": reliability(mine), "coverage": coverage(mine)}
        )
    return out
