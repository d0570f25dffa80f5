"""Render benchmark results: tables for the terminal, a PNG plot."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ctxneo.bench.harness import ARCH_LABELS, QueryRecord
from rich.console import Console
from rich.table import Table

TYPE_ORDER = ("direct", "distant", "join", "history", "provenance", "multi")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def query_types(summary: Sequence[dict[str, Any]]) -> list[str]:
    seen = {t for row in summary for t in row["by_type"]}
    return [t for t in TYPE_ORDER if t in seen] + sorted(seen - set(TYPE_ORDER))


def console() -> Console:
    """A console for tables: the terminal's width, or a wide one when piped to a file."""
    wide = Console()
    return wide if wide.is_terminal else Console(width=160)


def summary_table(summary: Sequence[dict[str, Any]], title: str = "") -> Table:
    """Accuracy overall and per query type, tokens per query, answer latency."""
    types = query_types(summary)
    table = Table(title=title or None, title_justify="left")
    table.add_column("architecture", no_wrap=True)
    table.add_column("backend", no_wrap=True)
    table.add_column("accuracy", justify="right", no_wrap=True)
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
    head = ["architecture", "backend", "accuracy", "tokens/query", *types, "p50 ms", "p95 ms"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in summary:
        cells = [
            ARCH_LABELS.get(row["architecture"], row["architecture"]),
            row["backend"],
            f"{row['correct']}/{row['graded']} ({_pct(row['accuracy'])})",
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
    for column in ("scenario", "turn", "type", "arch", "backend", "ok", "answer"):
        table.add_column(column, overflow="fold")
    marks = {True: "✓", False: "✗", None: "·"}
    for r in records:
        answer = r.answer if len(r.answer) <= 80 else r.answer[:77] + "..."
        table.add_row(
            r.scenario,
            str(r.turn_id),
            r.query_type or "",
            r.architecture,
            r.backend,
            marks[r.correct],
            answer,
        )
    return table


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
    left.legend(fontsize=8, loc="lower right")
    right.bar(
        range(len(summary)),
        [r["avg_tokens"] for r in summary],
        color=[f"C{i}" for i in range(len(summary))],
    )
    right.set_xticks(range(len(summary)), [r["architecture"] for r in summary])
    right.set_yscale("log")
    right.set_ylabel("tokens per query (log)")
    right.set_title("Context sent per query")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
