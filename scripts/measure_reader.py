"""Measure a reader design out of fold on the training corpus (never reported as accuracy).

    pip install '.[train]'
    python scripts/measure_reader.py                  # train/, 5 domain folds, seed 1
    python scripts/measure_reader.py --seeds 1 2 3    # the mean of three model seeds
    python scripts/measure_reader.py --extra NEW/     # what more training data is worth
    python scripts/measure_reader.py --cache C.pkl --set answering.trees=600 \
        --set answering.learning_rate=0.025            # another fit of the same readings

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
answered), which compares designs at one precision rather than at 0.5. ``--dump D``
writes each seed's out-of-fold answering probabilities, labels, twin marks and kinds
to ``D.seedN.npz``: the curve the default threshold was chosen on (``reader.py``).

MetaQA's ranker questions (dev 825-999 of each hop) are read as the build reads them
(the parts fitted on the whole corpus and MetaQA's linker questions), dealt round the
folds, and measured apart: top-1 and right at 0.5 per hop (``metaqa_N``). The corpus's
figures leave them out. ``--metaqa-weight`` says how much each counts in the ranker's fit, as
``build_reader.METAQA_WEIGHT`` does. Keys are read to grade, as in build_reader.py;
nothing here ships.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parent))

import build_reader as build

from ctxneo.answering.learned import CONFIDENCE_INPUTS
from ctxneo.meaning import WordVectors
from ctxneo.model import Scenario
from ctxneo.scenarios import load_suite


def measure(
    folds: list[list[build.Asked]],
    seed: int,
    at_false: Sequence[int] = (),
    metaqa: Sequence[build.Asked] = (),
    dump: Path | None = None,
) -> dict[str, float]:
    """The figures of the module docstring over the first FOLDS groups (a last group,
    ``--extra``, is fitted on and never measured), and MetaQA's top-1 and right answers at
    0.5 per hop over its questions dealt round those groups."""
    build.SEED = seed
    measured = build.FOLDS
    oof = build.out_of_fold_inputs(folds, metaqa)
    probability: list[float] = []
    truth: list[int] = []
    twin: list[bool] = []
    kinds: list[str] = []
    # The answering inputs of each question's best reading (NaN when it has none), dumped
    # to study what the answers withheld and the twins answered have in common.
    first: list[Sequence[float]] = []
    for k in range(measured):
        answering = build.fit_answering(*oof.flat([j for j in range(len(folds)) if j != k]))
        # The trees' log-odds, the highest over the readings of each question's answer.
        raw = build.best_raw(answering, oof.inputs[k])
        probability += list(1.0 / (1.0 + np.exp(-raw)))
        truth += oof.labels[k]
        twin += [not g.answerable for g in oof.asked[k]]
        kinds += [g.kind for g in oof.asked[k]]
        first += [rows[0] if rows else [np.nan] * len(CONFIDENCE_INPUTS) for rows in oof.inputs[k]]
    p = np.asarray(probability)
    y = np.asarray(truth)
    if dump is not None:
        np.savez(
            dump.with_suffix(f".seed{seed}.npz"),
            p=p,
            y=y,
            twin=np.asarray(twin),
            kind=kinds,
            inputs=np.asarray(first, dtype=np.float64),
            names=np.asarray(CONFIDENCE_INPUTS),
        )
    t = np.asarray(twin)
    kg = np.asarray([k.startswith("metaqa") for k in kinds])
    given = p >= 0.5
    out: dict[str, float] = {}
    for kind in sorted(set(kinds)):
        mine = np.asarray([k == kind for k in kinds]) & ~t
        if mine.any():
            build.say(
                f"  {kind:>14}: {int(mine.sum()):>4} asked, top-1 {int(y[mine].sum()):>4}, "
                f"right at 0.5 {int((given & mine & (y == 1)).sum()):>4}, "
                f"wrong {int((given & mine & (y == 0)).sum()):>3}"
            )
            if kind.startswith("metaqa"):
                out[f"{kind}_top1"] = int(y[mine].sum())
                out[f"{kind}_right"] = int((given & mine & (y == 1)).sum())
    # The corpus's figures, MetaQA's questions left out of them.
    p, y, t, given = p[~kg], y[~kg], t[~kg], given[~kg]
    # Right answers when answering best first until N false answers are given.
    by_p = np.argsort(-p, kind="stable")
    false_so_far = np.cumsum(y[by_p] == 0)
    right_so_far = np.cumsum(y[by_p] == 1)
    at = {
        f"right_at_{n}_false": int(right_so_far[np.searchsorted(false_so_far, n, "right") - 1])
        for n in at_false
    }
    return {
        "top1": int(y[~t].sum()),
        "answerable": int((~t).sum()),
        "twins": int(t.sum()),
        "auc": float(roc_auc_score(y, p)),
        "right": int((given & (y == 1)).sum()),
        "wrong": int((given & (y == 0) & ~t).sum()),
        "twins_answered": int((given & t).sum()),
        **at,
        **out,
    }


def read(
    train: Sequence[Scenario], extra: Sequence[Scenario], with_metaqa: bool
) -> tuple[list[list[build.Asked]], list[build.Asked]]:
    """The folds read as the build reads them, and MetaQA's ranker questions."""
    meaning = WordVectors.default()
    kg = build.metaqa(build.METAQA) if with_metaqa else None
    folds = build.read_folds(train, meaning, kg, extra)
    if kg is None:
        return folds, []
    model = build.fit_parts(train, meaning, kg)
    metaqa = build.metaqa_groups(kg.memory, kg.rank, model)
    kg.memory.close()
    return folds, metaqa


def override(settings: Sequence[str]) -> None:
    """Apply ``--set`` choices to the build's fits: ``ranker.trees``, ``answering.trees``,
    or any LightGBM parameter as ``ranker.NAME`` / ``answering.NAME`` (a JSON value)."""
    for setting in settings:
        key, sep, raw = setting.partition("=")
        part, dot, name = key.partition(".")
        if not sep or not dot or part not in ("ranker", "answering"):
            raise SystemExit(
                f"--set {setting!r}: expected ranker.NAME=VALUE or answering.NAME=VALUE"
            )
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        if name == "trees":
            setattr(build, "TREES" if part == "ranker" else "ANSWERING_TREES", int(value))
        else:
            (build.RANKER_PARAMS if part == "ranker" else build.ANSWERING_PARAMS)[name] = value
    if settings:
        build.say(
            f"ranker: {build.TREES} trees, {build.RANKER_PARAMS}; "
            f"answering: {build.ANSWERING_TREES} trees, {build.ANSWERING_PARAMS}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", nargs="+", default=[str(p) for p in build.TRAIN])
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
    ap.add_argument("--no-metaqa", action="store_true", help="leave MetaQA out, as before")
    ap.add_argument(
        "--metaqa-weight",
        type=float,
        default=build.METAQA_WEIGHT,
        help=f"MetaQA's weight in the ranker's fit (default {build.METAQA_WEIGHT})",
    )
    ap.add_argument(
        "--at-false",
        nargs="+",
        type=int,
        default=[],
        metavar="N",
        help="also report the answers right at the threshold that gives N false answers",
    )
    ap.add_argument(
        "--dump",
        help="also write each seed's out-of-fold answering probabilities, labels, twin marks, "
        "kinds and the answering inputs of each question's best reading (with their names) "
        "to DUMP.seedN.npz (to study the answering threshold and what is withheld)",
    )
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PART.NAME=VALUE",
        help="fit the ranker or the answering model otherwise than the build does "
        "(ranker.trees=1200, answering.learning_rate=0.025; the cache stays valid)",
    )
    args = ap.parse_args(argv)
    override(args.set)
    started = time.monotonic()
    cache = Path(args.cache) if args.cache else None
    if cache is not None and cache.exists():
        folds, metaqa = pickle.loads(cache.read_bytes())
    else:
        folds, metaqa = read(
            load_suite(args.train), load_suite(args.extra) if args.extra else [], not args.no_metaqa
        )
        if cache is not None:
            cache.write_bytes(pickle.dumps((folds, metaqa)))
    if args.no_metaqa:
        metaqa = []
    for g in metaqa:
        g.weight = args.metaqa_weight
    dump = Path(args.dump) if args.dump else None
    rows = [measure(folds, seed, args.at_false, metaqa, dump) for seed in args.seeds]
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
