"""``ctxneo neo4j start|stop|status``: a local Neo4j from Maven jars, no Docker needed."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import click

from ctxneo.cli.options import emit_json, friendly_errors, json_option
from ctxneo.neo4j_local.server import NEO4J_VERSION, LocalNeo4j, default_data_dir

data_option = click.option(
    "--data",
    "data_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help=f"Data directory of the server. [default: {default_data_dir()}]",
)


@click.group()
def neo4j() -> None:
    """Run a local Neo4j 5.26 from Maven Central jars (needs Java 17 and Maven, not Docker).

    \b
    eval "$(ctxneo neo4j start --export)"    # start it and set NEO4J_URI
    ctxneo bench --backend all               # both stores, answers compared
    ctxneo neo4j stop
    """


@neo4j.command()
@data_option
@click.option("--port", type=int, help="Bolt port. [default: a free one]")
@click.option("--heap", default="768m", show_default=True, help="JVM heap (-Xmx).")
@click.option(
    "--page-cache",
    "page_cache_mb",
    type=int,
    default=128,
    show_default=True,
    help="Page cache in MB.",
)
@click.option(
    "--export", "as_export", is_flag=True, help="Print only `export NEO4J_URI=...` (for eval)."
)
@json_option
@friendly_errors
def start(
    data_dir: Path | None,
    port: int | None,
    heap: str,
    page_cache_mb: int,
    as_export: bool,
    as_json: bool,
) -> None:
    """Start a server (or report the one already running on this data directory).

    The first start fetches the jars (~120 MB) with Maven; the server is ready
    when this returns: Bolt answers at the printed URI.
    """
    server = LocalNeo4j(data_dir, port=port, heap=heap, page_cache_mb=page_cache_mb)
    info = server.start(log=lambda line: click.echo(line, err=True))
    if as_json:
        emit_json(asdict(info))
    elif as_export:
        click.echo(f"export NEO4J_URI={info.uri}")
    else:
        click.echo(
            f"Neo4j {NEO4J_VERSION} is up at {info.uri} (pid {info.pid}, data {info.data_dir})"
        )
        click.echo(f"  export NEO4J_URI={info.uri}")


@neo4j.command()
@data_option
@friendly_errors
def stop(data_dir: Path | None) -> None:
    """Stop the server of a data directory."""
    info = LocalNeo4j(data_dir).stop()
    click.echo(
        "no server running" if info is None else f"stopped Neo4j at {info.uri} (pid {info.pid})"
    )


@neo4j.command()
@data_option
@json_option
@friendly_errors
def status(data_dir: Path | None, as_json: bool) -> None:
    """Say whether a server runs on a data directory (exit code 1 if not)."""
    info = LocalNeo4j(data_dir).status()
    if as_json:
        emit_json({"running": info is not None, **(asdict(info) if info else {})})
    elif info is not None:
        click.echo(f"running at {info.uri} (pid {info.pid}, data {info.data_dir})")
    else:
        click.echo("not running")
    if info is None:
        raise SystemExit(1)


COMMANDS = [neo4j]
