"""Measure a reader design out of fold on the training corpus (never reported as accuracy).

    pip install '.[train]'
    python scripts/measure_reader.py                  # train/, 5 domain folds, seed 1
    python scripts/measure_reader.py --seeds 1 2 3    # the mean of three model seeds
    python scripts/measure_reader.py --extra NEW/     # what more training data is worth

How a change to the reader (a feature, a rule, a candidate) is chosen: every question of
a fold of domains is read by parts (forms, linker, association) fitted on the other
folds, its readings ranked by a ranker fitted on the other folds, and whether to answer
decided by an answering model fitted on the other folds' out-of-fold readings. So each
figure is what the design does on domains it was not fitted on:

- top-1: answerable questions whose best reading is right;
- AUC: of the answering model, over answerable questions and their unanswerable twins;
- right / wrong at 0.5: answers given (answering probability ≥ 0.5) and right, or not;
- twins answered at 0.5: unanswerable variants given an answer.

With ``--extra``, the scenarios given are a group of their own, always among the
others a fold is fitted on and never measured: the same questions are measured as
without them, so the two runs say what that data adds. ``--at-false N`` also reports
the answers right at the threshold that gives N false answers (wrong answers and twins
answered), which compares designs at one precision rather than at 0.5.

MetaQA is left out (it is fitted on, not measured, here), so the figures are the
corpus's alone. Keys are read to grade, as in build_reader.py; nothing here ships.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parent))

import build_reader as build

from ctxneo.meaning import WordVectors
from ctxneo.scenarios import load_suite


def measure(
    folds: list[list[build.Asked]], seed: int, at_false: Sequence[int] = ()
) -> dict[str, float]:
    """The figures of the module docstring over the first FOLDS groups (a last group,
    ``--extra``, is fitted on and never measured)."""
    build.SEED = seed
    measured = build.FOLDS
    inputs, labels = build.out_of_fold_inputs(folds)
    top1 = sum(sum(ys) for ys in labels[:measured])
    probability: list[float] = []
    truth: list[int] = []
    twin: list[bool] = []
    kinds: list[str] = []
    for k, held in enumerate(folds[:measured]):
        others = [j for j in range(len(folds)) if j != k]
        answering = build.fit_answering(
            [r for j in others for r in inputs[j]], [y for j in others for y in labels[j]]
        )
        raw = answering.predict(np.asarray(inputs[k]))  # the trees' log-odds
        probability += list(1.0 / (1.0 + np.exp(-raw)))
        truth += labels[k]
        twin += [not g.answerable for g in held]
        kinds += [g.kind for g in held]
    p = np.asarray(probability)
    y = np.asarray(truth)
    t = np.asarray(twin)
    given = p >= 0.5
    for kind in sorted(set(kinds)):
        mine = np.asarray([k == kind for k in kinds]) & ~t
        if mine.any():
            build.say(
                f"  {kind:>14}: {int(mine.sum()):>4} asked, top-1 {int(y[mine].sum()):>4}, "
                f"right at 0.5 {int((given & mine & (y == 1)).sum()):>4}, "
                f"wrong {int((given & mine & (y == 0)).sum()):>3}"
            )
    # Right answers when answering best first until N false answers are given.
    by_p = np.argsort(-p, kind="stable")
    false_so_far = np.cumsum(y[by_p] == 0)
    right_so_far = np.cumsum(y[by_p] == 1)
    at = {
        f"right_at_{n}_false": int(right_so_far[np.searchsorted(false_so_far, n, "right") - 1])
        for n in at_false
    }
    return {
        "top1": top1,
        "answerable": int((~t).sum()),
        "twins": int(t.sum()),
        "auc": float(roc_auc_score(y, p)),
        "right": int((given & (y == 1)).sum()),
        "wrong": int((given & (y == 0) & ~t).sum()),
        "twins_answered": int((given & t).sum()),
        **at,
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", nargs="+", default=[str(build.ROOT / "train")])
    ap.add_argument("--seeds", nargs="+", type=int, default=[1])
    ap.add_argument(
        "--cache",
        help="a pickle of the folds' readings: written when absent, read when present "
        "(to compare ranker or answering choices without reading the corpus again)",
    )
    ap.add_argument(
        "--extra",
        nargs="+",
        default=[],
        help="scenarios always fitted on and never measured (what more data is worth)",
    )
    ap.add_argument(
        "--at-false",
        nargs="+",
        type=int,
        default=[],
        metavar="N",
        help="also report the answers right at the threshold that gives N false answers",
    )
    args = ap.parse_args(argv)
    started = time.monotonic()
    cache = Path(args.cache) if args.cache else None
    if cache is not None and cache.exists():
        folds = pickle.loads(cache.read_bytes())
    else:
        extra = load_suite(args.extra) if args.extra else []
        folds = build.read_folds(load_suite(args.train), WordVectors.default(), None, extra)
        if cache is not None:
            cache.write_bytes(pickle.dumps(folds))
    rows = [measure(folds, seed, args.at_false) for seed in args.seeds]
    for seed, row in zip(args.seeds, rows, strict=True):
        print(
            f"seed {seed}: "
            + ", ".join(f"{k} {v:.4f}" if k == "auc" else f"{k} {v}" for k, v in row.items())
        )
    mean = {k: sum(r[k] for r in rows) / len(rows) for k in rows[0]}
    print(
        "mean: "
        + ", ".join(f"{k} {v:.4f}" if k == "auc" else f"{k} {v:.1f}" for k, v in mean.items())
    )
    build.say(f"measured in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
