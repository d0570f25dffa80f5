"""Fit the answerer's confidence model and write ``ctxneo/data/confidence.json``.

The model is a logistic regression over the judge's features
(:data:`ctxneo.answering.judge.FEATURES`), fitted on calibration scenario
sets that the benchmark never reports (``calibration/``, written by
authors who never saw the code): every graded query answered as the
benchmark answers it (labelled right or wrong by its ground truth), and
every query's unanswerable variant (the facts it needs said as chatter;
any answer to it is wrong). Scikit-learn's ``LogisticRegression`` fits it;
the coefficients are written as JSON so answering needs no scikit-learn
and is bit-for-bit deterministic.

    python scripts/fit_confidence.py [SUITE ...]    # default: calibration/*.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from ctxneo.bench import kgqa
from ctxneo.bench.harness import grade
from ctxneo.bench.variants import unanswerable_variant
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict

from ctxneo.answering import Answerer, answers_another_question, judge
from ctxneo.answering.relations import Relations
from ctxneo.meaning import WordVectors
from ctxneo.memory import Memory
from ctxneo.model import Scenario, Turn
from ctxneo.scenarios import expand_paths, load_suite, write_turns

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(
    __import__("os").environ.get(
        "CTXNEO_CONFIDENCE_OUT", ROOT / "ctxneo" / "data" / "confidence.json"
    )
)


#: How the answerer reads words (the default, as a Memory reads them).
MEANING = WordVectors.default()


def answered(scenario: Scenario, only: Turn | None = None) -> Iterator[tuple[Turn, judge.Evidence]]:
    """Replay ``scenario`` and read every graded query (or only ``only``) as the benchmark does."""
    memory = Memory.open()
    answerer = Answerer(memory.store, Relations(meaning=MEANING))
    if scenario.multi_valued_predicates:
        memory.declare_multi_valued(*sorted(scenario.multi_valued_predicates))
    for phrase, entity in scenario.aliases:
        memory.alias(phrase, entity)
    for turn in scenario.turns:
        if turn.turn_type == "fact":
            write_turns(memory.store, [turn])
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
            if not e.finding.known or answers_another_question(e, MEANING):
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
                if e.finding.known and not answers_another_question(e, MEANING):
                    counts["unanswerable_answered"] += 1
                    rows.append([judge.features(e)[f] for f in judge.FEATURES])
                    labels.append(0)
    return rows, labels, counts


def kgqa_examples(
    kb: Path, questions: Path, skip: int, per_hop: int
) -> tuple[list[list[float]], list[int]]:
    """Examples from a knowledge-graph QA set (MetaQA's dev sample): questions ``skip`` to
    ``skip + per_hop`` of each hop, words only, right when the first value is a gold answer.
    The benchmark reports the first ``skip`` of each hop, so these stay apart from it."""
    memory = Memory.open()
    kgqa.load(memory, kgqa.read_kb(kb))
    answerer = Answerer(memory.store, Relations(meaning=MEANING))
    rows: list[list[float]] = []
    labels: list[int] = []
    chosen: list[kgqa.KGQuestion] = []
    for hop in (1, 2, 3):
        of_hop = [q for q in kgqa.read_questions(questions) if q.hop == hop]
        chosen += of_hop[skip : skip + per_hop]
    for q in chosen:
        e = answerer.find(kgqa.words_only(q.question))
        if e.finding.known and not answers_another_question(e, MEANING):
            rows.append([judge.features(e)[f] for f in judge.FEATURES])
            labels.append(int(kgqa.grade(e.finding.values, q.answers)[0]))
    memory.close()
    return rows, labels


def _metaqa() -> Path | None:
    """``shared/metaqa`` beside an ancestor of the checkout, where the project keeps it."""
    return next(
        (d / "shared" / "metaqa" for d in ROOT.parents if (d / "shared" / "metaqa").is_dir()), None
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="*", default=[str(ROOT / "calibration")])
    parser.add_argument("--c", type=float, default=1.0, help="inverse regularisation strength")
    parser.add_argument("--metaqa", type=Path, default=_metaqa(), help="MetaQA folder (dev sample)")
    parser.add_argument(
        "--metaqa-skip", type=int, default=500, help="dev questions per hop left for reports"
    )
    parser.add_argument("--metaqa-per-hop", type=int, default=150)
    args = parser.parse_args()
    paths = expand_paths(args.suites)
    rows, labels, counts = examples(paths)
    if args.metaqa is not None and args.metaqa_per_hop > 0:
        more, more_labels = kgqa_examples(
            args.metaqa / "kb_reconstructed.txt",
            args.metaqa / "dev_sample.jsonl",
            args.metaqa_skip,
            args.metaqa_per_hop,
        )
        rows += more
        labels += more_labels
        counts["metaqa_dev"] = len(more)
        counts["metaqa_dev_right"] = sum(more_labels)
    x = np.array(rows, dtype=float)
    y = np.array(labels)
    means = x.mean(0)
    scales = x.std(0)
    scales[scales == 0] = 1.0
    z = (x - means) / scales
    model = LogisticRegression(C=args.c, max_iter=1000).fit(z, y)
    # The logistic model ranks readings; an isotonic map from its output (fitted on
    # cross-validated outputs, so not on what each example's own model saw) makes
    # "confidence c" mean "right about a fraction c of the time".
    held_out = cross_val_predict(
        LogisticRegression(C=args.c, max_iter=1000),
        z,
        y,
        cv=StratifiedKFold(5, shuffle=True, random_state=0),
        method="predict_proba",
    )[:, 1]
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(held_out, y)
    doc = {
        "about": "ctxneo's answer confidence: logistic regression over the judge's features, "
        "fitted by scripts/fit_confidence.py",
        "fitted_on": sorted(p.name for p in paths)
        + (
            [
                f"metaqa dev_sample.jsonl, questions {args.metaqa_skip}-"
                f"{args.metaqa_skip + args.metaqa_per_hop - 1} of each hop"
            ]
            if args.metaqa is not None and args.metaqa_per_hop > 0
            else []
        ),
        "examples": counts | {"rows": len(labels), "right": int(y.sum())},
        "features": list(judge.FEATURES),
        "means": [round(float(v), 6) for v in means],
        "scales": [round(float(v), 6) for v in scales],
        "weights": [round(float(v), 6) for v in model.coef_[0]],
        "intercept": round(float(model.intercept_[0]), 6),
        "isotonic_x": [round(float(v), 6) for v in iso.X_thresholds_],
        "isotonic_y": [round(float(v), 6) for v in iso.y_thresholds_],
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
