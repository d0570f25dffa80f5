"""Render benchmark results: tables for the terminal, a PNG plot."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctxneo.bench.harness import ARCH_LABELS, EVIDENCE_BUDGETS, EVIDENCE_K, QueryRecord
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

TYPE_ORDER = (
    "direct",
    "distant",
    "join",
    "chain3",
    "described",
    "history",
    "history_join",
    "provenance",
    "multi",
    "count",
    "yesno",
    "confirm",
    "unanswerable",
)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def _false_answers(row: dict[str, Any], paren: bool = False) -> str:
    if not row.get("unanswerable"):
        return "–"
    share = _pct(row["false_answer_rate"])
    return f"{row['false_answers']}/{row['unanswerable']} " + (f"({share})" if paren else share)


def query_types(summary: Sequence[dict[str, Any]]) -> list[str]:
    seen = {t for row in summary for t in row["by_type"]}
    return [t for t in TYPE_ORDER if t in seen] + sorted(seen - set(TYPE_ORDER))


class _PlainConsole(Console):
    """A console for a file or a pipe: tables as aligned rows, without box drawing
    (which a log, a diff or a grep reads as noise)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        for thing in objects:
            if isinstance(thing, Table):
                thing.box = None
        super().print(*objects, **kwargs)


class _WholeConsole(Console):
    """A terminal console that never cuts a figure: a table wider than the terminal is
    drawn at its own width (the terminal wraps its lines) rather than with its cells
    cut to "32/…"."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        for thing in objects:
            terminal = self.width
            if isinstance(thing, Table):
                unbounded = self.options.update(max_width=10_000)
                self.width = max(terminal, Measurement.get(self, unbounded, thing).maximum)
            try:
                super().print(thing, **{**kwargs, "crop": False})
            finally:
                self.width = terminal


def console() -> Console:
    """A console for tables: the terminal's width with boxes (wider for a table that
    needs it), or a wide one without them when piped to a file."""
    wide = _WholeConsole()
    return wide if wide.is_terminal else _PlainConsole(width=240)


def summary_table(summary: Sequence[dict[str, Any]], title: str = "") -> Table:
    """Accuracy overall and per query type, false answers, tokens per query, answer latency."""
    types = query_types(summary)
    table = Table(title=title or None, title_justify="left")
    table.add_column("architecture", no_wrap=True)
    table.add_column("backend", no_wrap=True)
    table.add_column("accuracy", justify="right", no_wrap=True)
    table.add_column("false answers", justify="right", no_wrap=True)
    table.add_column("tokens/q", justify="right")
    for t in types:
        table.add_column(t, justify="right")
    table.add_column("p50 ms", justify="right")
    table.add_column("p95 ms", justify="right")
    for row in summary:
        cells = [
            ARCH_LABELS.get(row["architecture"], row["architecture"]),
            row["backend"],
            f"{row['correct']}/{row['graded']} {_pct(row['accuracy'])}",
            _false_answers(row),
            f"{row['avg_tokens']:.1f}",
        ]
        for t in types:
            cell = row["by_type"].get(t)
            cells.append("–" if cell is None else f"{cell['correct']}/{cell['graded']}")
        cells += [f"{row['p50_ms']:.2f}", f"{row['p95_ms']:.2f}"]
        table.add_row(*cells)
    return table


def summary_markdown(summary: Sequence[dict[str, Any]]) -> str:
    """The summary table as Markdown, for READMEs and reports."""
    types = query_types(summary)
    head = [
        "architecture",
        "backend",
        "accuracy",
        "false answers",
        "tokens/query",
        *types,
        "p50 ms",
        "p95 ms",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in summary:
        cells = [
            ARCH_LABELS.get(row["architecture"], row["architecture"]),
            row["backend"],
            f"{row['correct']}/{row['graded']} ({_pct(row['accuracy'])})",
            _false_answers(row, paren=True),
            f"{row['avg_tokens']:.1f}",
            *(
                "–" if (c := row["by_type"].get(t)) is None else f"{c['correct']}/{c['graded']}"
                for t in types
            ),
            f"{row['p50_ms']:.2f}",
            f"{row['p95_ms']:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def details_table(records: Sequence[QueryRecord]) -> Table:
    """One row per answered query."""
    table = Table(title="Answers", title_justify="left")
    for column in ("scenario", "turn", "type", "arch", "backend", "ok", "conf", "answer"):
        table.add_column(column, overflow="fold")
    marks = {True: "✓", False: "✗", None: "·"}
    for r in records:
        answer = r.answer if len(r.answer) <= 80 else r.answer[:77] + "..."
        table.add_row(
            r.scenario,
            str(r.turn_id),
            (r.query_type or "") + (" (unanswerable)" if r.unanswerable else ""),
            r.architecture,
            r.backend,
            marks[r.correct],
            "" if r.confidence is None else f"{r.confidence:.2f}",
            answer,
        )
    return table


def _evidence_cells(row: dict[str, Any]) -> list[str]:
    cells = []
    for k in map(str, EVIDENCE_K):
        e = row["evidence"][k]
        cells.append(
            "–" if not e["queries"] else f"{e['recalled']}/{e['queries']} ({_pct(e['recall'])})"
        )
        cells.append("–" if e["avg_tokens"] is None else f"{e['avg_tokens']:.1f}")
    for b in EVIDENCE_BUDGETS:
        e = row["evidence"].get(f"{b}t")
        cells.append("–" if not e or not e["queries"] else _pct(e["recall"]))
    return cells


def _evidence_head() -> list[str]:
    by_k = [h for k in EVIDENCE_K for h in (f"recall@{k}", f"tokens@{k}")]
    return [*by_k, *(f"recall ≤{b} tokens" for b in EVIDENCE_BUDGETS)]


def evidence_table(summary: Sequence[dict[str, Any]]) -> Table:
    """Evidence recall and context tokens at each k, per architecture."""
    table = Table(
        title="Evidence recall: required facts all in the context sent", title_justify="left"
    )
    table.add_column("architecture", no_wrap=True)
    table.add_column("backend", no_wrap=True)
    for head in _evidence_head():
        table.add_column(head, justify="right", no_wrap=True)
    for row in summary:
        label = ARCH_LABELS.get(row["architecture"], row["architecture"])
        table.add_row(label, row["backend"], *_evidence_cells(row))
    return table


def evidence_markdown(summary: Sequence[dict[str, Any]]) -> str:
    """The evidence recall table as Markdown."""
    head = ["architecture", "backend", *_evidence_head()]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in summary:
        label = ARCH_LABELS.get(row["architecture"], row["architecture"])
        lines.append("| " + " | ".join([label, row["backend"], *_evidence_cells(row)]) + " |")
    return "\n".join(lines)


_RELIABILITY_HEAD = ("confidence", "answers", "right", "accuracy", "mean confidence")
_COVERAGE_HEAD = (
    "threshold",
    "answered",
    "accuracy of answered",
    "answerable right",
    "false answers",
)


def _reliability_rows(cal: dict[str, Any]) -> list[list[str]]:
    rel = cal["reliability"]
    rows = [
        [
            f"{b['low']:.1f}–{b['high']:.1f}",
            str(b["answers"]),
            str(b["right"]),
            _pct(b["accuracy"]),
            f"{b['mean_confidence']:.2f}",
        ]
        for b in rel["bins"]
    ]
    # Withholding is right exactly on the unanswerable variants.
    withheld, right = rel["abstained"]["count"], rel["abstained"]["unanswerable"]
    share = right / withheld if withheld else None
    rows.append(["UNKNOWN", str(withheld), str(right), _pct(share), ""])
    return rows


def _coverage_rows(cal: dict[str, Any]) -> list[list[str]]:
    return [
        [
            f"≥ {c['threshold']:.2f}",
            f"{c['answered']}/{c['answerable'] + c['unanswerable']} ({_pct(c['coverage'])})",
            f"{c['right']}/{c['answered']} ({_pct(c['accuracy'])})",
            f"{c['answerable_right']}/{c['answerable']} ({_pct(c['answerable_accuracy'])})",
            "–"
            if not c["unanswerable"]
            else f"{c['false_answers']}/{c['unanswerable']} ({_pct(c['false_answer_rate'])})",
        ]
        for c in cal["coverage"]
    ]


def _reliability_caption(cal: dict[str, Any]) -> str:
    rel = cal["reliability"]
    ece = "–" if rel["ece"] is None else f"{rel['ece']:.3f}"
    return (
        f"context graph ({cal['backend']}): {rel['queries']} graded queries, answerable and "
        f"unanswerable; expected calibration error {ece}"
    )


def calibration_tables(calibration: Sequence[dict[str, Any]]) -> list[Table]:
    """For each graph backend, the reliability table and the coverage/accuracy trade-off."""
    out = []
    for cal in calibration:
        rel = Table(title="Reliability", caption=_reliability_caption(cal), title_justify="left")
        for head in _RELIABILITY_HEAD:
            rel.add_column(head, justify="right")
        for row in _reliability_rows(cal):
            rel.add_row(*row)
        cov = Table(
            title=f"Coverage and accuracy by confidence threshold ({cal['backend']})",
            title_justify="left",
        )
        for head in _COVERAGE_HEAD:
            cov.add_column(head, justify="right")
        for row in _coverage_rows(cal):
            cov.add_row(*row)
        out += [rel, cov]
    return out


def calibration_markdown(calibration: Sequence[dict[str, Any]]) -> str:
    """The reliability and coverage tables as Markdown."""
    parts = []
    for cal in calibration:
        for head, rows in (
            (_RELIABILITY_HEAD, _reliability_rows(cal)),
            (_COVERAGE_HEAD, _coverage_rows(cal)),
        ):
            lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            lines += ["| " + " | ".join(row) + " |" for row in rows]
            parts.append("\n".join(lines))
        parts.insert(-2, _reliability_caption(cal) + ":")
    return "\n\n".join(parts)


def plot(summary: Sequence[dict[str, Any]], path: str | Path) -> None:
    """Write a PNG: accuracy by query type, and tokens per query, per architecture."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    types = query_types(summary)
    labels = [
        ARCH_LABELS.get(r["architecture"], r["architecture"])
        + ("" if r["backend"] == "-" else f" ({r['backend']})")
        for r in summary
    ]
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [3, 1]})
    width = 0.8 / max(1, len(summary))
    for i, (row, label) in enumerate(zip(summary, labels, strict=True)):
        values = [row["by_type"].get(t, {}).get("accuracy", 0) * 100 for t in types]
        left.bar([x + i * width for x in range(len(types))], values, width, label=label)
    left.set_xticks([x + width * (len(summary) - 1) / 2 for x in range(len(types))], types)
    left.set_ylabel("accuracy (%)")
    left.set_ylim(0, 105)
    left.set_title("Accuracy by query type")
    left.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=len(summary))
    right.bar(
        range(len(summary)),
        [r["avg_tokens"] for r in summary],
        color=[f"C{i}" for i in range(len(summary))],
    )
    right.set_xticks(
        range(len(summary)),
        [r["architecture"] + ("" if r["backend"] == "-" else f"\n{r['backend']}") for r in summary],
    )
    right.set_yscale("log")
    right.set_ylabel("tokens per query (log)")
    right.set_title("Context sent per query")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


_SCALE_COLUMNS = (
    ("backend", "backend", "{}"),
    ("facts", "facts", "{:,}"),
    ("ingest_one_per_s", "ingest 1-by-1/s", "{:,.0f}"),
    ("ingest_one_p50_ms", "1-by-1 p50 ms", "{:.2f}"),
    ("ingest_batch_per_s", "ingest batched/s", "{:,.0f}"),
    ("ingest_journal_per_s", "journal batched/s", "{:,.0f}"),
    ("rss_bytes_per_fact", "RSS B/fact", "{:,.0f}"),
    ("direct_p50_ms", "direct p50 ms", "{:.3f}"),
    ("direct_p95_ms", "direct p95 ms", "{:.3f}"),
    ("direct_correct", "direct right", "{:.1%}"),
    ("two_hop_p50_ms", "2-hop p50 ms", "{:.3f}"),
    ("two_hop_p95_ms", "2-hop p95 ms", "{:.3f}"),
    ("two_hop_correct", "2-hop right", "{:.1%}"),
    ("round_trips_per_answer", "round trips/answer", "{:.2f}"),
    ("round_trips_max", "round trips max", "{}"),
    # SQLite lookups of the same answers (embedded), RETURN 1 (Neo4j): see bench/scale.py.
    ("floor_p50_ms", "floor p50 ms", "{:.3f}"),
)


def _scale_cells(row: dict[str, Any]) -> list[str]:
    return ["–" if row.get(key) is None else fmt.format(row[key]) for key, _, fmt in _SCALE_COLUMNS]


def _growth_lines(result: dict[str, Any]) -> list[str]:
    return [
        f"{backend}: {g['facts']}x the facts -> direct p50 x{g['direct_p50']}, "
        f"two-hop p50 x{g['two_hop_p50']}, batched ingest rate x{g['ingest_batch']}"
        for backend, g in result["growth"].items()
    ]


def scale_table(result: dict[str, Any]) -> Table:
    table = Table(title="Scale", title_justify="left", caption="\n".join(_growth_lines(result)))
    for _, label, _ in _SCALE_COLUMNS:
        table.add_column(label, justify="right")
    for row in result["rows"]:
        table.add_row(*_scale_cells(row))
    return table


def scale_markdown(result: dict[str, Any]) -> str:
    lines = [
        "| " + " | ".join(label for _, label, _ in _SCALE_COLUMNS) + " |",
        "|" + "---|" * len(_SCALE_COLUMNS),
    ]
    lines += ["| " + " | ".join(_scale_cells(row)) + " |" for row in result["rows"]]
    return "\n".join([*lines, "", *_growth_lines(result)])


def plot_scale(rows: Sequence[dict[str, Any]], path: str | Path) -> None:
    """Write a PNG: batched ingest rate and answer p50 against memory size, per backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for backend in sorted({r["backend"] for r in rows}):
        mine = sorted((r for r in rows if r["backend"] == backend), key=lambda r: r["facts"])
        sizes = [r["facts"] for r in mine]
        left.plot(
            sizes, [r["ingest_batch_per_s"] for r in mine], marker="o", label=f"{backend} batched"
        )
        left.plot(
            sizes,
            [r["ingest_one_per_s"] for r in mine],
            marker="x",
            linestyle="--",
            label=f"{backend} one at a time",
        )
        right.plot(sizes, [r["direct_p50_ms"] for r in mine], marker="o", label=f"{backend} direct")
        right.plot(
            sizes, [r["two_hop_p50_ms"] for r in mine], marker="s", label=f"{backend} two-hop"
        )
    for axis, title, ylabel in (
        (left, "Ingest rate", "facts per second"),
        (right, "Answer latency (p50)", "milliseconds"),
    ):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("facts in memory")
        axis.set_ylabel(ylabel)
        axis.set_title(title)
        axis.legend(fontsize=8)
        axis.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _kgqa_load_line(loaded: dict[str, Any], mode: str) -> str:
    rate = "–" if loaded["facts_per_s"] is None else f"{loaded['facts_per_s']:,.0f}"
    return (
        f"KB: {loaded['lines']:,} facts over {loaded['relations']} relations loaded in "
        f"{loaded['seconds']:.1f} s ({rate} facts/s)"
        + (
            f"; the names copied to the client in {warm:.2f} s"
            if (warm := loaded.get("warm_s") or 0) >= 0.01
            else ""
        )
        + f"; mode: {mode}."
    )


_KGQA_HOP_HEAD = (
    "hop",
    "questions",
    "Hits@1",
    "F1",
    "UNKNOWN",
    "p50 ms",
    "p95 ms",
    "round trips p50",
    "round trips max",
)
_KGQA_TYPE_HEAD = ("hop", "question type", "questions", "Hits@1", "F1", "UNKNOWN")


def _kgqa_scores(row: dict[str, Any]) -> list[str]:
    return [
        f"{row['questions']:,}",
        f"{row['hits1'] * 100:.1f}",
        f"{row['f1'] * 100:.1f}",
        f"{row['unknown_rate'] * 100:.1f}%",
    ]


def _kgqa_rows(summary: dict[str, Any]) -> tuple[list[list[str]], list[list[str]]]:
    hops = [
        [
            str(h["hop"]),
            *_kgqa_scores(h),
            f"{h['p50_ms']:.2f}",
            f"{h['p95_ms']:.2f}",
            *(
                "–" if h.get(k) is None else f"{h[k]:g}"
                for k in ("round_trips_p50", "round_trips_max")
            ),
        ]
        for h in summary["hops"]
    ]
    types = [[str(t["hop"]), t["question_type"], *_kgqa_scores(t)] for t in summary["types"]]
    return hops, types


def kgqa_tables(summary: dict[str, Any], loaded: dict[str, Any], mode: str) -> list[Table]:
    """The per-hop table (captioned with the load rate) and the per-question-type table."""
    hops, types = _kgqa_rows(summary)
    by_hop = Table(
        title=f"KGQA per hop ({mode})",
        caption=_kgqa_load_line(loaded, mode),
        title_justify="left",
    )
    for head in _KGQA_HOP_HEAD:
        by_hop.add_column(head, justify="right")
    for row in hops:
        by_hop.add_row(*row)
    by_type = Table(title="KGQA per question type (relation path to the gold answers)")
    for head in _KGQA_TYPE_HEAD:
        by_type.add_column(head, justify="left" if head == "question type" else "right")
    for row in types:
        by_type.add_row(*row)
    return [by_hop, by_type]


def kgqa_markdown(summary: dict[str, Any], loaded: dict[str, Any], mode: str) -> str:
    """The KGQA tables as Markdown, Hits@1 and F1 in percent."""
    parts = [_kgqa_load_line(loaded, mode)]
    for head, rows in zip((_KGQA_HOP_HEAD, _KGQA_TYPE_HEAD), _kgqa_rows(summary), strict=True):
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


FUNNEL_COLUMNS = (
    ("queries", "queries"),
    ("anchor@1", "anchor@1"),
    ("anchor@5", "anchor@5"),
    ("reading@1", "reading@1"),
    ("reading@10", "reading@10"),
    ("right@1", "right@1"),
    ("right@10", "right@10"),
    ("withheld", "right@1 withheld"),
    ("mean_rank", "mean rank"),
    ("form", "form right"),
    ("correct", "correct"),
)


def _funnel_cell(value: Any) -> str:
    if isinstance(value, list):
        hit, whole = value
        return f"{hit}/{whole} ({hit / whole:.0%})" if whole else "–"
    return "–" if value is None else str(value)


def funnel_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The answer funnel (see :mod:`ctxneo.bench.diagnose`) as Markdown, one row per type."""
    head = ["query type", *(label for _, label in FUNNEL_COLUMNS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [row["query_type"], *(_funnel_cell(row[key]) for key, _ in FUNNEL_COLUMNS)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def funnel_table(rows: Sequence[dict[str, Any]], title: str) -> Table:
    """The answer funnel for the terminal."""
    table = Table(title=title, title_justify="left")
    table.add_column("query type", no_wrap=True)
    for _, label in FUNNEL_COLUMNS:
        table.add_column(label, justify="right")
    for row in rows:
        table.add_row(row["query_type"], *(_funnel_cell(row[key]) for key, _ in FUNNEL_COLUMNS))
    return table
