"""Tables on stdout: drawn for a terminal, plain rows for a pipe or a file.

A drawn table fits the terminal by folding long cells, which breaks names
mid-word; a program reading the output (or a person reading a log) needs each
row on one line, whole. So when stdout is not a terminal, a table is printed
as a header line and one line per row, columns padded with spaces and never
wrapped, control characters in values escaped (``\\n``) so that a row stays
one line.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from ctxneo.model import one_line


def echo(text: str = "", *, err: bool = False) -> None:
    """One line of human output, control characters in stored names escaped."""
    click.echo(one_line(text), err=err)


def plain_rows(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """The header and rows as lines, columns left-aligned and padded to their widest cell."""
    from rich.cells import cell_len  # (how many columns a terminal gives: 東京 takes four)

    cells = [[one_line(c) for c in columns], *[[one_line(v) for v in row] for row in rows]]
    widths = [max(cell_len(line[i]) for line in cells) for i in range(len(columns))]
    return [
        "  ".join(v + " " * (w - cell_len(v)) for v, w in zip(line, widths, strict=True)).rstrip()
        for line in cells
    ]


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Print a table to stdout: drawn under ``title`` in a terminal, plain rows otherwise."""
    if not sys.stdout.isatty():
        for line in plain_rows(columns, rows):
            click.echo(line)
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title), title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(Text(one_line(v)) for v in row))  # Text: "[b]" in a name is not markup
    Console(soft_wrap=True).print(table)
