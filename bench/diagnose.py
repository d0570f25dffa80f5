"""The answer funnel: at which stage each graded question is won or lost.

For a graded query the graph has already answered (from its text and speaker
only), the harness asks the memory how it read the question
(:meth:`ctxneo.memory.Memory.trace`) and measures, against the query's key:

- **anchors**: the rank of the first linked anchor that is an entity of the
  query's required facts (the answer's own entities left out when others
  remain): recall@1 and @5;
- **readings**: the rank of the first candidate reading whose evidence holds
  every required fact (retractions left out): recall@1 and @10;
- **right answers**: the rank of the first candidate reading whose answer the grader
  accepts (right@1 and @10): the ranking judged by what it answers, where a reading's
  evidence may hold the required facts and more (a longer path through them) and still
  answer wrong;
- **withheld**: whether the first reading answers right and the answer given is
  ``UNKNOWN`` all the same (its confidence below the threshold asked for): the
  loss of answering only when sure, counted apart from the ranking's;
- **form**: whether the answer has the form the query asks for (a value, a
  list, a count, yes/no, the speaker, an earlier value, ``UNKNOWN``), the
  asked form taken from the query's label;
- the final grade.

The key is read here, after answering, and never reaches the answerer: the
answers of a run with ``--diagnose`` are those of a run without it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ctxneo.model import UNKNOWN, Answer, Trace, Turn, check_predicate

#: The form of answer each query label asks for; other labels are not judged on form.
FORM_ASKED = {
    "direct": "value",
    "distant": "value",
    "join": "value",
    "chain3": "value",
    "described": "value",
    "multi": "list",
    "count": "count",
    "yesno": "yes/no",
    "confirm": "yes/no",
    "provenance": "speaker",
    "history": "earlier",
    "history_join": "earlier",
    "unanswerable": "unknown",
}
ANCHOR_AT = (1, 5)
READING_AT = (1, 10)
RIGHT_AT = (1, 10)
_COUNT = re.compile(r"\d+( \(|$)")


def form_given(answer: Answer) -> str:
    """The form of an answer, as the answerer gave it."""
    if not answer.known:
        return "unknown"
    if answer.form:
        return answer.form
    if "provenance" in answer.reading:
        return "speaker"
    if answer.reading.startswith("history"):
        return "earlier"
    if _COUNT.match(answer.answer) and answer.answer.split()[0] == str(len(answer.values)):
        return "count"
    return "list" if len(answer.values) > 1 else "value"


def form_right(asked: str | None, given: str, values: int) -> bool | None:
    """Whether the form given is the one asked (a list of one value is a value)."""
    if asked is None:
        return None
    if asked == "list" and given == "value":
        return values == 1
    return asked == given


def _entities(turns: Sequence[Turn], truth: Sequence[str]) -> set[str]:
    """The entities of the required facts, less the answer's own when others remain."""
    names = {n for t in turns for n in (t.subject, t.object) if n}
    answers = {n for n in names if any(v.lower() in n.lower() for v in truth)}
    return (names - answers) or names


def stages(
    turn: Turn,
    required: Sequence[Turn],
    answer: Answer,
    trace: Trace,
    right: Callable[[str], bool | None],
) -> dict[str, Any]:
    """The funnel record of one graded query (ranks are 1-based; ``None``: not found);
    ``right`` grades an answer against the query's key."""
    truth = turn.ground_truth or ()
    entities = _entities(required, truth)
    anchor = next((i + 1 for i, a in enumerate(trace.anchors) if a in entities), None)
    needed = {
        (t.subject, check_predicate(t.predicate or ""), t.object) for t in required if not t.retract
    }
    reading = None
    if needed:
        for i, r in enumerate(trace.readings):
            if needed <= {(f.subject, f.predicate, f.object) for f in r.evidence}:
                reading = i + 1
                break
    right_rank = next((i + 1 for i, r in enumerate(trace.readings) if right(r.answer)), None)
    asked = FORM_ASKED.get(turn.query_type or "")
    if asked is None and list(truth) == [UNKNOWN]:
        asked = "unknown"
    given = form_given(answer)
    return {
        "anchor_rank": anchor if entities else None,
        "anchors_measured": bool(entities) and asked != "unknown",
        "reading_rank": reading,
        "readings_measured": bool(needed) and asked != "unknown",
        "right_rank": right_rank,
        "withheld": right_rank == 1 and not answer.known,
        "form_asked": asked,
        "form_given": given,
        "form_right": form_right(asked, given, len(answer.values)),
    }


def funnel(records: Sequence[Any]) -> list[dict[str, Any]]:
    """The funnel per query type and in all, over graph records that carry one."""
    measured = [r for r in records if r.funnel and not r.unanswerable]
    groups: dict[str, list[Any]] = {"all": measured}
    for r in measured:
        groups.setdefault(r.query_type or "untyped", []).append(r)
    order = list(FORM_ASKED)
    rows = []
    for name, rs in sorted(
        groups.items(),
        key=lambda g: (
            g[0] != "all",
            g[0] not in order,
            order.index(g[0]) if g[0] in order else 0,
            g[0],
        ),
    ):
        a = [r.funnel for r in rs if r.funnel["anchors_measured"]]
        p = [r.funnel for r in rs if r.funnel["readings_measured"]]
        f = [r.funnel for r in rs if r.funnel["form_right"] is not None]
        ranks = [x["reading_rank"] for x in p if x["reading_rank"] is not None]
        row: dict[str, Any] = {"query_type": name, "queries": len(rs)}
        for k in ANCHOR_AT:
            hit = sum(1 for x in a if x["anchor_rank"] is not None and x["anchor_rank"] <= k)
            row[f"anchor@{k}"] = [hit, len(a)]
        for k in READING_AT:
            hit = sum(1 for x in p if x["reading_rank"] is not None and x["reading_rank"] <= k)
            row[f"reading@{k}"] = [hit, len(p)]
        for k in RIGHT_AT:
            hit = sum(1 for x in p if x["right_rank"] is not None and x["right_rank"] <= k)
            row[f"right@{k}"] = [hit, len(p)]
        # (A withheld answer is right@1 by definition: counted out of those.)
        row["withheld"] = [sum(1 for x in p if x["withheld"]), row["right@1"][0]]
        row["mean_rank"] = round(sum(ranks) / len(ranks), 2) if ranks else None
        row["form"] = [sum(1 for x in f if x["form_right"]), len(f)]
        row["correct"] = [sum(1 for r in rs if r.correct), len(rs)]
        rows.append(row)
    return rows
