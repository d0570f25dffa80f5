"""Question answering over an external knowledge graph (MetaQA and its kin).

A knowledge base of ``head|relation|tail`` lines is loaded into a memory
(every relation multi-valued, batched writes), and questions are asked in one
of two modes: *words only* (the topic entity's brackets removed, the answerer
finds the entity from the words) or *topic given* (the same words, and the
entity passed as ``topic``). Answers are graded as MetaQA is: Hits@1 (the
first value listed is a gold answer, case-insensitive), F1 of the listed
values against the gold set, and the share of ``UNKNOWN`` answers.

Question files are JSON lines (``hop``, ``question`` with the topic entity in
[brackets], ``entity``, ``answers``) or MetaQA's own ``question<TAB>a|b``
lines, whose hop count comes from the file name (``2-hop/qa_dev.txt``) or
``--hops``.

A question's *type*, used only to group results after answering, is the
relation path from the topic entity to the gold answers in the knowledge base
that reaches most of them, written as a SPARQL property path
(``^written_by/directed_by``: back along ``written_by``, then along
``directed_by``).
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from ctxneo.bench.harness import percentile

from ctxneo.errors import DatasetError, InvalidFactError
from ctxneo.memory import Memory
from ctxneo.model import UNKNOWN, NewFact, check_predicate

#: Facts per ``remember_many`` call while loading.
BATCH = 10_000
MODES = {"words": "words only", "topic": "topic given"}
NO_PATH = "(no path in the KB)"
#: Typing stops counting what a path reaches at this many times the gold answers.
_REACH_FACTOR = 50
_BRACKETED = re.compile(r"\[([^\[\]]*)\]")
_HOP_IN_NAME = re.compile(r"(\d+)[-_ ]?hop", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class KGQuestion:
    """One question: its hop count, text (topic in brackets), topic entity and gold answers."""

    hop: int
    question: str
    entity: str | None
    answers: tuple[str, ...]
    source: str  # "file:line", for error messages and the JSON output


@dataclass(frozen=True, slots=True)
class KGRecord:
    """One question asked and graded."""

    hop: int
    question: str
    asked: str
    topic: str | None
    answers: list[str]
    answer: str
    values: list[str]
    confidence: float
    reading: str
    hits1: bool
    f1: float
    unknown: bool
    question_type: str
    latency_ms: float
    source: str
    #: Read round trips the answer took (a remote store's; None in process).
    round_trips: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- reading the files -----------------------------------------------------------------


def _open_text(path: Path) -> TextIO:
    """A data file as text: a byte-order mark is not part of a name, and a ``.gz``
    file is read as the text it holds."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig")
    return path.open(encoding="utf-8-sig")


def _lines(path: Path) -> Iterable[tuple[int, str]]:
    try:
        with _open_text(path) as f:
            for number, line in enumerate(f, 1):
                line = line.rstrip("\r\n")
                if line.strip():
                    yield number, line
    except UnicodeDecodeError as e:
        raise DatasetError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from e
    except OSError as e:
        raise DatasetError(f"{path}: cannot read: {e.strerror or e}") from e


def read_kb(path: str | Path) -> list[NewFact]:
    """Every ``head|relation|tail`` line of ``path`` as a multi-valued fact, checked whole.

    Blank lines are skipped; names are kept exactly as written.

    Raises:
        DatasetError: the file cannot be read, or a line is not three
            non-empty fields or names an invalid relation (file and line given).
    """
    path = Path(path)
    facts = []
    for number, line in _lines(path):
        parts = line.split("|")
        if len(parts) != 3 or not all(p.strip() for p in parts):
            raise DatasetError(
                f"{path}, line {number}: expected head|relation|tail with three non-empty "
                f"fields, got {line[:120]!r}"
            )
        head, relation, tail = parts
        try:
            check_predicate(relation)
        except InvalidFactError as e:
            raise DatasetError(f"{path}, line {number}: {e}") from None
        facts.append(NewFact(head, relation, tail, multi=True))
    if not facts:
        raise DatasetError(f"{path}: no facts")
    return facts


def hop_from_name(path: str | Path) -> int | None:
    """The hop count a MetaQA path names (``2-hop/vanilla/qa_dev.txt`` -> 2), if any."""
    found = _HOP_IN_NAME.findall(str(path))
    return int(found[-1]) if found else None


def topic_of(question: str) -> str | None:
    """The bracketed topic entity of a MetaQA question, if it has one."""
    found = _BRACKETED.search(question)
    return (found.group(1).strip() or None) if found else None


def words_only(question: str) -> str:
    """The question with the brackets around its topic entity removed."""
    return _BRACKETED.sub(lambda m: m.group(1), question)


def _json_question(raw: str, where: str, hop: int | None) -> KGQuestion:
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as e:
        raise DatasetError(f"{where}: not valid JSON: {e.msg}") from None
    if not isinstance(doc, dict):
        raise DatasetError(f"{where}: expected a JSON object")
    text = doc.get("question")
    if not isinstance(text, str) or not text.strip():
        raise DatasetError(f"{where}: field 'question' must be a non-empty string")
    answers = doc.get("answers")
    if (
        not isinstance(answers, list)
        or not answers
        or not all(isinstance(a, str) and a.strip() for a in answers)
    ):
        raise DatasetError(f"{where}: field 'answers' must be a non-empty list of strings")
    entity = doc.get("entity", topic_of(text))
    if entity is not None and (not isinstance(entity, str) or not entity.strip()):
        raise DatasetError(f"{where}: field 'entity' must be a non-empty string")
    value = doc.get("hop", hop)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise DatasetError(
            f"{where}: field 'hop' must be a positive integer"
            + ("" if "hop" in doc else " (or name the hop count with --hops N)")
        )
    return KGQuestion(value, text, entity, tuple(answers), where)


def _tsv_question(raw: str, where: str, hop: int | None) -> KGQuestion:
    text, tab, answers = raw.partition("\t")
    gold = [a for a in answers.split("|") if a.strip()]
    if not tab or not text.strip() or not gold:
        raise DatasetError(f"{where}: expected question<TAB>answer|answer, got {raw[:120]!r}")
    if hop is None:
        raise DatasetError(
            f"{where}: cannot tell the hop count: name the file like 2-hop/qa_dev.txt "
            "or give one hop count with --hops N"
        )
    return KGQuestion(hop, text, topic_of(text), tuple(gold), where)


def read_questions(path: str | Path, hops: Sequence[int] | None = None) -> list[KGQuestion]:
    """The questions of one file, JSON lines or MetaQA's tab-separated lines, checked whole.

    Args:
        path: the file; its format is read from its first non-blank line.
        hops: the hop counts asked for; when it names exactly one, that is the
            hop count of lines that do not say theirs and whose file name does
            not either.

    Raises:
        DatasetError: the file cannot be read or a line is malformed (file and line given).
    """
    path = Path(path)
    default = hop_from_name(path)
    if default is None and hops is not None and len(hops) == 1:
        default = hops[0]
    out: list[KGQuestion] = []
    parse = None
    for number, line in _lines(path):
        if parse is None:
            parse = _json_question if line.lstrip().startswith("{") else _tsv_question
        out.append(parse(line, f"{path}:{number}", default))
    if not out:
        raise DatasetError(f"{path}: no questions")
    return out


def select(
    questions: Sequence[KGQuestion], hops: Sequence[int] | None, limit: int | None
) -> list[KGQuestion]:
    """The questions of the chosen hop counts, the first ``limit`` of each hop, hop by hop."""
    by_hop: dict[int, list[KGQuestion]] = defaultdict(list)
    for q in questions:
        if hops is None or q.hop in hops:
            by_hop[q.hop].append(q)
    return [q for hop in sorted(by_hop) for q in by_hop[hop][:limit]]


# -- loading and asking ------------------------------------------------------------------


def load(
    memory: Memory,
    facts: Sequence[NewFact],
    *,
    batch: int = BATCH,
    progress: Callable[[int], None] = lambda n: None,
) -> dict[str, Any]:
    """Write ``facts`` into ``memory`` in batches, every relation declared multi-valued first.

    Returns the facts written, the seconds taken, the rate and the memory's counts.
    """
    memory.declare_multi_valued(*sorted({f.predicate for f in facts}))
    start = time.perf_counter()
    for i in range(0, len(facts), batch):
        chunk = facts[i : i + batch]
        memory.remember_many(chunk)
        progress(len(chunk))
    seconds = time.perf_counter() - start
    stats = memory.stats()
    return {
        "lines": len(facts),
        "facts": stats.get("facts", len(facts)),
        "entities": stats.get("entities"),
        "relations": len({f.predicate for f in facts}),
        "seconds": round(seconds, 3),
        "facts_per_s": round(len(facts) / seconds, 1) if seconds > 0 else None,
    }


def grade(values: Sequence[str], answers: Sequence[str]) -> tuple[bool, float]:
    """Hits@1 and F1 of the listed values against the gold answers, case-insensitive."""
    gold = {a.casefold() for a in answers}
    got = list(dict.fromkeys(v.casefold() for v in values))
    if not got:
        return False, 0.0
    right = len(gold.intersection(got))
    if not right:
        return got[0] in gold, 0.0
    precision, recall = right / len(got), right / len(gold)
    return got[0] in gold, 2 * precision * recall / (precision + recall)


def _inverse(step: str) -> str:
    return step[1:] if step.startswith("^") else "^" + step


class PathTyper:
    """Names a question's type by the KB relation path from its topic to its gold answers.

    Built from the facts once; the search goes forward from the topic for
    all but the last hop and back one hop from the gold answers, so a hub
    in the middle (a genre with thousands of films) is crossed once.
    """

    def __init__(self, facts: Iterable[NewFact]) -> None:
        adjacency: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for f in facts:
            adjacency[f.subject].append((f.predicate, f.object))
            adjacency[f.object].append(("^" + f.predicate, f.subject))
        self.adjacency = {k: list(dict.fromkeys(v)) for k, v in adjacency.items()}
        self.by_folded: dict[str, list[str]] = defaultdict(list)
        for name in self.adjacency:
            self.by_folded[name.casefold()].append(name)

    def _nodes(self, names: Iterable[str]) -> set[str]:
        return {n for name in names for n in self.by_folded.get(name.casefold(), ())}

    def question_type(self, entity: str | None, answers: Sequence[str], hop: int) -> str:
        """The path of ``hop`` relations from ``entity`` that best matches ``answers``.

        Best: the highest F1 between what the path reaches and the gold set,
        among paths reaching at least half as many gold answers as the most
        reaching one; :data:`NO_PATH` when no path reaches any.
        """
        starts = self._nodes([entity] if entity else [])
        gold = self._nodes(answers)
        if not starts or not gold or hop < 1:
            return NO_PATH
        level: dict[tuple[str, ...], set[str]] = {(): starts}
        for _ in range(hop - 1):
            following: dict[tuple[str, ...], set[str]] = defaultdict(set)
            for path, nodes in level.items():
                for node in nodes:
                    for step, other in self.adjacency.get(node, ()):
                        following[(*path, step)].add(other)
            level = following
        back: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
        for g in gold:
            for step, other in self.adjacency.get(g, ()):
                back[_inverse(step)][other].add(g)
        covered: list[tuple[int, tuple[str, ...], set[str]]] = []
        for path, nodes in level.items():
            for step, into in back.items():
                middle = nodes & into.keys() if len(nodes) < len(into) else into.keys() & nodes
                reached = set().union(*(into[m] for m in middle)) if middle else set()
                if reached:
                    covered.append((len(reached), (*path, step), nodes))
        if not covered:
            return NO_PATH
        # Coverage alone favours hubs (every year is reached through the genre
        # "Drama"), so the path that best matches the gold set wins: the
        # highest F1 of what it reaches, among paths covering half the best.
        best = max(n for n, _, _ in covered)
        cap = max(len(gold) * _REACH_FACTOR, 1)

        def score(item: tuple[int, tuple[str, ...], set[str]]) -> tuple[float, str]:
            n, path, before = item
            reach = self._last_step(before, path[-1], cap)
            precision, recall = n / max(reach, n), n / len(gold)
            return (-2 * precision * recall / (precision + recall), "/".join(path))

        winner = min((c for c in covered if 2 * c[0] >= best), key=score)
        return "/".join(winner[1])

    def _last_step(self, nodes: set[str], step: str, cap: int) -> int:
        """How many nodes ``step`` reaches from ``nodes``, counted up to ``cap``."""
        reached: set[str] = set()
        for node in nodes:
            reached.update(o for s, o in self.adjacency.get(node, ()) if s == step)
            if len(reached) >= cap:
                return cap
        return len(reached)


def ask_all(
    memory: Memory,
    questions: Sequence[KGQuestion],
    *,
    topic_given: bool = False,
    typer: PathTyper | None = None,
    progress: Callable[[int], None] = lambda n: None,
    min_confidence: float | None = None,
) -> list[KGRecord]:
    """Ask every question (brackets removed; the topic passed too when ``topic_given``), grade it.

    ``min_confidence`` is passed to every ``ask`` (``None``: the answerer's default).

    The question type is computed after the answer, from the gold answers.
    """
    out = []
    for q in questions:
        asked = words_only(q.question)
        topic = q.entity if topic_given else None
        reads = getattr(memory.store, "reads", None)
        start = time.perf_counter()
        answer = memory.ask(asked, topic=topic, min_confidence=min_confidence)
        seconds = time.perf_counter() - start
        trips = None if reads is None else memory.store.reads - reads  # type: ignore[attr-defined]
        values = list(answer.values) or ([answer.answer] if answer.known else [])
        hits1, f1 = grade(values, q.answers)
        out.append(
            KGRecord(
                hop=q.hop,
                question=q.question,
                asked=asked,
                topic=topic,
                answers=list(q.answers),
                answer=answer.answer,
                values=values,
                confidence=answer.confidence,
                reading=answer.reading,
                hits1=hits1,
                f1=f1,
                unknown=answer.answer == UNKNOWN,
                question_type=typer.question_type(q.entity, q.answers, q.hop) if typer else "",
                latency_ms=round(seconds * 1000, 3),
                source=q.source,
                round_trips=trips,
            )
        )
        progress(1)
    return out


def _scores(records: Sequence[KGRecord]) -> dict[str, Any]:
    n = len(records)
    return {
        "questions": n,
        "hits1": round(sum(r.hits1 for r in records) / n, 4),
        "f1": round(statistics.fmean(r.f1 for r in records), 4),
        "unknown_rate": round(sum(r.unknown for r in records) / n, 4),
    }


def _trips(records: Sequence[KGRecord]) -> dict[str, float | None]:
    """Round trips per answer, median and max (None in process)."""
    trips = [r.round_trips for r in records if r.round_trips is not None]
    if not trips:
        return {"round_trips_p50": None, "round_trips_max": None}
    return {"round_trips_p50": statistics.median(trips), "round_trips_max": max(trips)}


def summarize(records: Sequence[KGRecord]) -> dict[str, Any]:
    """Scores per hop (with latency p50/p95) and per (hop, question type), most frequent first."""
    by_hop: dict[int, list[KGRecord]] = defaultdict(list)
    by_type: dict[tuple[int, str], list[KGRecord]] = defaultdict(list)
    for r in records:
        by_hop[r.hop].append(r)
        by_type[(r.hop, r.question_type)].append(r)
    hops = []
    for hop, mine in sorted(by_hop.items()):
        latencies = [r.latency_ms for r in mine]
        hops.append(
            {
                "hop": hop,
                **_scores(mine),
                "p50_ms": round(percentile(latencies, 50), 3),
                "p95_ms": round(percentile(latencies, 95), 3),
                **_trips(mine),
            }
        )
    types = [
        {"hop": hop, "question_type": qtype, **_scores(mine)}
        for (hop, qtype), mine in sorted(by_type.items(), key=lambda kv: (kv[0][0], -len(kv[1])))
    ]
    return {"hops": hops, "types": types}
