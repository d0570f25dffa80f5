"""The ``ctxneo`` command line."""

from __future__ import annotations

import warnings
from typing import Any

import click

from ctxneo import __version__
from ctxneo.cli.group import CtxneoGroup

#: Where the commands are, most used first: a command's module is imported when
#: the command is run (or help lists them all). A new module of commands (with
#: a COMMANDS list) goes here.
COMMAND_MODULES = [
    "ctxneo.cli.memory_cmds",
    "ctxneo.cli.neo4j_cmds",
    "ctxneo.cli.export_cmds",
    "ctxneo.cli.serve_cmds",
    "ctxneo.cli.bench_cmds",
]


@click.group(
    cls=CtxneoGroup,
    command_modules=COMMAND_MODULES,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="ctxneo")
def main() -> None:
    """ctxneo: a context-graph memory for multi-agent LLM systems.

    Facts agents decide are stored as (subject, predicate, object) with who
    said them and when; questions are answered by walking the graph. The
    memory lives in a journal file (--store) or in Neo4j (--uri).

    \b
    Exit codes: 0 done; 1 the command failed (the error line says why);
    2 bad usage: an unknown option, a bad value, a malformed input file;
    3 an internal error (a bug: CTXNEO_DEBUG=1 shows the traceback);
    130 interrupted (Ctrl-C).
    """
    warnings.showwarning = _one_line


def _one_line(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
    """A warning (e.g. a journal's torn last line) as one line on stderr, no source lines."""
    click.echo(f"Warning: {message}", err=True)
