"""Does the relation model tell the asked relation apart better than pairs of words do?

A measurement on ``train/`` only (the corpus designs are chosen on), never reported as
accuracy. Its one-fact questions (``direct``, one required fact, answerable) are grouped
by domain into five folds. For each question, the candidates are the predicates of the
facts stated so far about its named entities (the answer key names them: this measures
relation meaning alone, with linking out of the way), and its relation words are the
matcher's positions less the words of those names and numbers.

Per fold, fitted on the other four:

- ``pairs``: the best pair of a question word and a predicate word by stem, by word
  vector and by an association table counted as ``build_reader.fit_association`` counts
  it, combined by a logistic regression over the three;
- ``pairs + model``: the same with the relation model's score as a fourth input
  (``build_reader.fit_relation_model``, the build's own fit).

Reported: how often the asked predicate scores first among the candidates, and how well
the best score tells a question whose asked fact is there from its twin, the same
question with that predicate gone (AUC over the questions whose first is right).

    python scripts/measure_relation_model.py
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parent))

import build_reader as build

from ctxneo.answering.lexicon import Lexicon
from ctxneo.answering.match import Matcher, lexical, predicate_stems
from ctxneo.answering.question import read_question
from ctxneo.answering.relations import RelationModel, mean_vector, predicate_words
from ctxneo.meaning import NoMeaning, WordVectors
from ctxneo.model import check_predicate
from ctxneo.scenarios import load_suite
from ctxneo.text import name_stems

FOLDS = 5


@dataclass
class Asked:
    fold: int
    words: list[tuple[str, str]]  # (word, stem)
    gold: str
    around: list[str]


def collect(paths: Sequence[str]) -> list[Asked]:
    train = load_suite(paths)
    domains = sorted({s.name.split("_")[0] for s in train})
    fold = {d: i % FOLDS for i, d in enumerate(domains)}
    found = []
    for s in train:
        facts = {t.fact_id: t for t in s.turns if t.turn_type == "fact" and t.fact_id}
        stated = []
        for turn in s.turns:
            if turn.turn_type == "fact":
                stated.append(turn)
                continue
            if (
                not turn.graded
                or build.unknown_asked(turn)
                or turn.query_type != "direct"
                or len(turn.required_fact_ids) != 1
                or turn.required_fact_ids[0] not in facts
            ):
                continue
            gold = check_predicate(facts[turn.required_fact_ids[0]].predicate or "")
            named = build.required_entities(turn, facts)
            around = {
                check_predicate(t.predicate or "")
                for t in stated
                if t.subject in named or t.object in named
            }
            if gold not in around or len(around) < 2:
                continue
            q = read_question(turn.text)
            stems = {st for n in named for st in name_stems(n)}
            words = [
                (q.words[p].word, q.words[p].stem)
                for p in Matcher(q, NoMeaning(), None).positions
                if q.words[p].stem not in stems and not q.words[p].word.isdigit()
            ]
            if words:
                found.append(Asked(fold[s.name.split("_")[0]], words, gold, sorted(around)))
    return found


def association(train: Sequence[Asked]) -> dict[tuple[str, str], float]:
    pos: Counter[tuple[str, str]] = Counter()
    neg: Counter[tuple[str, str]] = Counter()
    for a in train:
        for p in a.around:
            for _, ps in predicate_stems(p):
                for _, st in a.words:
                    (pos if p == a.gold else neg)[(st, ps)] += 1
    base = math.log((sum(pos.values()) + 1) / (sum(neg.values()) + 1))
    table = {}
    for key, n in pos.items():
        w = math.log((n + 0.5) / (neg[key] + 0.5)) - base
        if n >= 2 and w > 0.5:
            table[key] = w
    return table


def relation_model(train: Sequence[Asked], wv: WordVectors) -> RelationModel:
    qs, ps, ys = [], [], []
    for a in train:
        q = mean_vector([w for w, _ in a.words], wv)
        if q is None:
            continue
        for p in a.around:
            v = mean_vector(predicate_words(p), wv)
            if v is not None:
                qs.append(q)
                ps.append(v)
                ys.append(float(p == a.gold))
    return build.fit_relation_model(np.asarray(qs), np.asarray(ps), np.asarray(ys))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", nargs="+", default=[str(p) for p in build.TRAIN])
    args = ap.parse_args(argv)
    wv = WordVectors.default()
    lexicon = Lexicon.default()
    questions = collect(args.train)
    print(f"{len(questions)} one-fact questions with 2+ candidate predicates")
    totals = {"pairs": [0, []], "pairs + model": [0, []]}
    for k in range(FOLDS):
        train = [a for a in questions if a.fold != k]
        held = [a for a in questions if a.fold == k]
        table = association(train)
        model = relation_model(train, wv)

        def inputs(a: Asked, p: str, with_model: bool, table=table, model=model) -> list[float]:
            lx = vc = 0.0
            for w, st in a.words:
                for pw, ps in predicate_stems(p):
                    lx = max(lx, lexical(st, ps) or (0.8 if lexicon.related(st, ps) else 0.0))
                    vc = max(vc, wv.similarity(w, pw))
            best = max(
                (table.get((st, ps), 0.0) for _, st in a.words for _, ps in predicate_stems(p)),
                default=0.0,
            )
            row = [lx, vc, min(best, 6.0)]
            if with_model:
                asked = model.question([w for w, _ in a.words], wv)
                row.append(model.score(asked, predicate_words(p), wv) if asked else model.b)
            return row

        for name, with_model in (("pairs", False), ("pairs + model", True)):
            xs = [inputs(a, p, with_model) for a in train[::3] for p in a.around]
            ys = [int(p == a.gold) for a in train[::3] for p in a.around]
            combine = LogisticRegression(max_iter=2000).fit(np.asarray(xs), ys)
            first = 0
            kept, twins = [], []
            for a in held:
                scores = combine.decision_function(
                    np.asarray([inputs(a, p, with_model) for p in a.around])
                )
                by = dict(zip(a.around, scores, strict=True))
                if max(by, key=by.__getitem__) == a.gold:
                    first += 1
                    kept.append(by[a.gold])
                    twins.append(max(v for p, v in by.items() if p != a.gold))
            totals[name][0] += first
            totals[name][1].append(roc_auc_score([1] * len(kept) + [0] * len(twins), kept + twins))
            print(f"fold {k + 1}: {name}: {first}/{len(held)} first", flush=True)
    for name, (first, aucs) in totals.items():
        print(
            f"{name}: asked predicate first {first}/{len(questions)}, "
            f"right against its twin AUC {np.mean(aucs):.4f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
