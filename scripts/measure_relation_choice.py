"""Which MetaQA relation does a one-hop question ask about? Stems against word vectors.

A measurement, not a test. On MetaQA's dev sample (``hop == 1`` only; there is
no test split here and none is used), each question has its bracketed topic
entity removed ("who directed [Kismet]" -> "who directed"), and the KB's 9
relations are scored from the remaining words alone:

- ``stems``: how many of a relation name's content stems the question's
  content stems cover (the answerer's lexical signal without its lexicon);
- vector variants, from :class:`ctxneo.meaning.WordVectors`, where ``s(q, r)``
  is the similarity of question word ``q`` and relation word ``r``:
  ``max``: max over r of max over q; ``mean``: mean over r of max over q;
  ``centred``: ``max`` on s(q, r) minus the mean of q's best similarity to
  every relation (so a question word alike to all relations says nothing);
  ``stems+max``: stem overlap first, vectors to break its ties.

Gold is not in the file: it is the relation linking the entity to the most
gold answers in ``kb_reconstructed.txt`` (either direction); a question whose
answers two relations link equally (a director who also wrote the film)
counts as right for either, and one whose answers no relation links (the KB
lost ~4% of triples) is left out. Ties in a score are split evenly (a 3-way
tie that includes gold counts 1/3), so no variant gains from the order the
relations are listed in.

Scored over all 9 relations, and over the relations the topic entity has in the
KB (the "entity-local" candidates an answerer walking from the entity sees).

    python scripts/measure_relation_choice.py [--metaqa /work/shared/metaqa]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxneo.meaning import WordVectors  # noqa: E402
from ctxneo.text import split_words, stem, tokens  # noqa: E402

RELATIONS = (
    "directed_by",
    "written_by",
    "starred_actors",
    "release_year",
    "in_language",
    "has_genre",
    "has_tags",
    "has_imdb_votes",
    "has_imdb_rating",
)
RELATION_WORDS = {r: [w for w in split_words(r) if w not in {"has", "in", "by"}] for r in RELATIONS}

# Example pairs for the report: everyday synonyms, inflections, and jargon.
PAIRS = (
    ("urgent", "priority"),
    ("urgent", "colour"),
    ("writer", "written"),
    ("writer", "author"),
    ("reps", "represented"),
    ("genre", "kind"),
    ("genre", "type"),
    ("owner", "maintainer"),
    ("sla", "deadline"),
    ("k8s", "kubernetes"),
    ("db", "database"),
    ("eta", "arrival"),
    ("pm", "manager"),
    ("oncall", "pager"),
)

Scorer = Callable[[list[str], list[str]], dict[str, float]]


def load(metaqa: Path) -> tuple[list[dict], dict[str, set[tuple[str, str]]], dict[str, set[str]]]:
    questions = [json.loads(line) for line in (metaqa / "dev_sample.jsonl").open()]
    questions = [q for q in questions if q["hop"] == 1]
    # (entity, other end) -> relations, both directions; entity -> its relations.
    links: dict[str, set[tuple[str, str]]] = defaultdict(set)
    local: dict[str, set[str]] = defaultdict(set)
    wanted = {q["entity"] for q in questions}
    with (metaqa / "kb_reconstructed.txt").open() as f:
        for line in f:
            head, rel, tail = line.rstrip("\n").split("|")
            for a, b in ((head, tail), (tail, head)):
                if a in wanted:
                    links[a].add((rel, b))
                    local[a].add(rel)
    return questions, links, local


def gold_relations(q: dict, links: dict[str, set[tuple[str, str]]]) -> set[str]:
    answers = set(q["answers"])
    hits = Counter(rel for rel, other in links.get(q["entity"], ()) if other in answers)
    if not hits:
        return set()
    best = max(hits.values())
    return {r for r, n in hits.items() if n == best}


def question_words(q: dict) -> list[str]:
    text = re.sub(r"\[[^\]]*\]", " ", q["question"])
    return [t.word for t in tokens(text) if not t.stop]


def stems_score(words: list[str], candidates: list[str]) -> dict[str, float]:
    qs = {stem(w) for w in words}
    return {r: sum(stem(w) in qs for w in RELATION_WORDS[r]) for r in candidates}


def vector_scorers(m: WordVectors) -> dict[str, Scorer]:
    def best(words: list[str], r: str) -> list[float]:
        return [max((m.similarity(q, w) for q in words), default=0.0) for w in RELATION_WORDS[r]]

    def vmax(words: list[str], candidates: list[str]) -> dict[str, float]:
        return {r: max(best(words, r)) for r in candidates}

    def vmean(words: list[str], candidates: list[str]) -> dict[str, float]:
        return {r: sum(b := best(words, r)) / len(b) for r in candidates}

    def centred(words: list[str], candidates: list[str]) -> dict[str, float]:
        # s(q, r) = max over r's words; each q loses its mean over all 9 relations.
        sim = {
            q: {r: max(m.similarity(q, w) for w in RELATION_WORDS[r]) for r in RELATIONS}
            for q in words
        }
        base = {q: sum(s.values()) / len(s) for q, s in sim.items()}
        return {r: max((sim[q][r] - base[q] for q in words), default=0.0) for r in candidates}

    def stems_then_max(words: list[str], candidates: list[str]) -> dict[str, float]:
        lexical, vec = stems_score(words, candidates), vmax(words, candidates)
        return {r: lexical[r] + 0.5 * vec[r] for r in candidates}  # vec in [-1, 1]: ties only

    return {"max": vmax, "mean": vmean, "centred": centred, "stems+max": stems_then_max}


def credit(scores: dict[str, float], gold: set[str]) -> float:
    top = max(scores.values())
    tied = [r for r, s in scores.items() if s == top]
    return sum(r in gold for r in tied) / len(tied)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metaqa", type=Path, default=Path("/work/shared/metaqa"))
    parser.add_argument("--table", type=Path, help="another table than the shipped one")
    args = parser.parse_args()

    started = time.perf_counter()
    m = WordVectors.load(args.table) if args.table else WordVectors.default()
    print(
        f"table: {len(m)} pieces x {m.dims} dims, loaded in {time.perf_counter() - started:.3f} s"
    )
    questions, links, local = load(args.metaqa)
    scorers: dict[str, Scorer] = {"stems": stems_score, **vector_scorers(m)}

    totals = {(name, mode): 0.0 for name in scorers for mode in ("all 9", "entity-local")}
    confusion: dict[str, Counter[tuple[str, str]]] = {name: Counter() for name in scorers}
    used = ambiguous = 0
    for q in questions:
        gold = gold_relations(q, links)
        if not gold:
            continue
        used += 1
        ambiguous += len(gold) > 1
        words = question_words(q)
        for mode, candidates in (
            ("all 9", list(RELATIONS)),
            ("entity-local", sorted(local[q["entity"]])),
        ):
            for name, scorer in scorers.items():
                scores = scorer(words, candidates)
                totals[name, mode] += credit(scores, gold)
                picked = max(candidates, key=scores.__getitem__)
                if mode == "all 9" and picked not in gold:
                    confusion[name][min(gold), picked] += 1

    print(
        f"{used} of {len(questions)} one-hop dev questions have a gold relation in the KB "
        f"({ambiguous} with two equally good ones; either counts)\n"
    )
    print("| scoring | all 9 relations | entity-local relations |")
    print("|---|---|---|")
    for name in scorers:
        a, b = totals[name, "all 9"], totals[name, "entity-local"]
        print(f"| {name} | {a:.0f} ({a / used:.1%}) | {b:.0f} ({b / used:.1%}) |")
    for name in ("max", "centred"):
        print(f"\nmost frequent mistakes of `{name}` over all 9 (gold -> first of the top):")
        for (gold, picked), n in confusion[name].most_common(6):
            print(f"  {n:4d}  {gold} -> {picked}")
    print("\n| word | word | similarity |")
    print("|---|---|---|")
    for a, b in PAIRS:
        print(f"| {a} | {b} | {m.similarity(a, b):+.3f} |")
    print(f"\n({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
