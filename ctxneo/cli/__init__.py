"""The ``ctxneo`` command line."""

from __future__ import annotations

import click

from ctxneo import __version__
from ctxneo.cli import bench_cmds, export_cmds, memory_cmds, neo4j_cmds, serve_cmds


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ctxneo")
def main() -> None:
    """ctxneo: a context-graph memory for multi-agent LLM systems.

    Facts agents decide are stored as (subject, predicate, object) with who
    said them and when; questions are answered by walking the graph. The
    memory lives in a journal file (--store) or in Neo4j (--uri).
    """


for command in [
    *memory_cmds.COMMANDS,
    *bench_cmds.COMMANDS,
    *export_cmds.COMMANDS,
    *neo4j_cmds.COMMANDS,
    *serve_cmds.COMMANDS,
]:
    main.add_command(command)
