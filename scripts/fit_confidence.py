"""Fit the answerer's confidence model and write ``ctxneo/data/confidence.json``.

The model is a logistic regression over the judge's features
(:data:`ctxneo.answering.judge.FEATURES`), fitted on calibration scenario
sets that the benchmark never reports (``bench/calibration/``, written by
authors who never saw the code): every graded query answered as the
benchmark answers it (labelled right or wrong by its ground truth), and
every query's unanswerable variant (the facts it needs said as chatter;
any answer to it is wrong). Scikit-learn's ``LogisticRegression`` fits it;
the coefficients are written as JSON so answering needs no scikit-learn
and is bit-for-bit deterministic.

    python scripts/fit_confidence.py [SUITE ...]    # default: bench/calibration/*.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from ctxneo.bench.harness import grade
from ctxneo.bench.variants import unanswerable_variant
from sklearn.linear_model import LogisticRegression

from ctxneo.answering import Answerer, judge
from ctxneo.memory import Memory
from ctxneo.model import NewFact, Scenario, Turn
from ctxneo.scenarios import expand_paths, load_suite

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(
    __import__("os").environ.get(
        "CTXNEO_CONFIDENCE_OUT", ROOT / "ctxneo" / "data" / "confidence.json"
    )
)


def answered(scenario: Scenario, only: Turn | None = None) -> Iterator[tuple[Turn, judge.Evidence]]:
    """Replay ``scenario`` and read every graded query (or only ``only``) as the benchmark does."""
    memory = Memory.open()
    answerer = Answerer(memory.store, calibration=None)
    if scenario.multi_valued_predicates:
        memory.declare_multi_valued(*sorted(scenario.multi_valued_predicates))
    for phrase, entity in scenario.aliases:
        memory.alias(phrase, entity)
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
        elif turn.graded and (only is None or turn.turn_id == only.turn_id):
            yield turn, answerer.find(turn.text, speaker=turn.speaker)
    memory.close()


def examples(paths: list[Path]) -> tuple[list[list[float]], list[int], dict[str, int]]:
    rows: list[list[float]] = []
    labels: list[int] = []
    counts = {"answerable": 0, "answerable_right": 0, "unanswerable": 0, "unanswerable_answered": 0}
    for scenario in load_suite(paths):
        for turn, e in answered(scenario):
            counts["answerable"] += 1
            if not e.finding.known:
                continue
            right = bool(grade(Answerer.render(e), turn.ground_truth))
            counts["answerable_right"] += right
            rows.append([judge.features(e)[f] for f in judge.FEATURES])
            labels.append(int(right))
        for turn in scenario.turns:
            if not turn.graded or (variant := unanswerable_variant(scenario, turn)) is None:
                continue
            counts["unanswerable"] += 1
            for _, e in answered(variant.scenario, variant.query):
                if e.finding.known:
                    counts["unanswerable_answered"] += 1
                    rows.append([judge.features(e)[f] for f in judge.FEATURES])
                    labels.append(0)
    return rows, labels, counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="*", default=[str(ROOT / "bench" / "calibration")])
    parser.add_argument("--c", type=float, default=1.0, help="inverse regularisation strength")
    args = parser.parse_args()
    paths = expand_paths(args.suites)
    rows, labels, counts = examples(paths)
    x = np.array(rows, dtype=float)
    y = np.array(labels)
    means = x.mean(0)
    scales = x.std(0)
    scales[scales == 0] = 1.0
    model = LogisticRegression(C=args.c, max_iter=1000).fit((x - means) / scales, y)
    doc = {
        "about": "ctxneo's answer confidence: logistic regression over the judge's features, "
        "fitted by scripts/fit_confidence.py",
        "fitted_on": sorted(p.name for p in paths),
        "examples": counts | {"rows": len(labels), "right": int(y.sum())},
        "features": list(judge.FEATURES),
        "means": [round(float(v), 6) for v in means],
        "scales": [round(float(v), 6) for v in scales],
        "weights": [round(float(v), 6) for v in model.coef_[0]],
        "intercept": round(float(model.intercept_[0]), 6),
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    calibration = judge.Calibration.from_dict(doc)
    probs = [calibration.probability(dict(zip(judge.FEATURES, r, strict=True))) for r in rows]
    print(json.dumps(doc["examples"]), file=sys.stderr)
    for lo in (0.0, 0.2, 0.4, 0.5, 0.6, 0.8, 0.9):
        kept = [lab for p, lab in zip(probs, labels, strict=True) if p >= lo]
        share = sum(kept) / len(kept) if kept else 0.0
        print(f"confidence >= {lo:.1f}: {len(kept):4d} answers, {share:.1%} right", file=sys.stderr)
    for name, w in zip(judge.FEATURES, doc["weights"], strict=True):
        print(f"  {name:18s} {w:+.3f}", file=sys.stderr)
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
