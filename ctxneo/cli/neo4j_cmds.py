"""``ctxneo neo4j start|stop|status``: a local Neo4j from Maven jars, no Docker needed."""

from __future__ import annotations

import shlex
from dataclasses import asdict
from pathlib import Path

import click

from ctxneo.cli.group import CtxneoGroup
from ctxneo.cli.options import Integer, emit_json, friendly_errors, json_option
from ctxneo.neo4j_local.server import NEO4J_VERSION, LocalNeo4j, ServerInfo, default_data_dir

data_option = click.option(
    "--data",
    "data_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The server's data directory: its databases, log, state, port and password; "
    f"one directory, one server. [default: {default_data_dir()}]",
)


@click.group(cls=CtxneoGroup)
def neo4j() -> None:
    """Run a local Neo4j 5.26 from Maven jars (Java 17, no Docker).

    The jars come from Maven Central (Maven is needed once). The server
    listens on 127.0.0.1 only, on a port chosen on the first start and kept by
    the data directory (its URI stays valid across restarts), with
    authentication on (user neo4j, a password generated on the first start and
    kept in the data directory, readable by its owner only), and its Cypher
    cannot read files or reach the network.

    \b
    eval "$(ctxneo neo4j start --export)"    # start it, set NEO4J_URI/USER/PASSWORD
    ctxneo bench --backend all               # both stores, answers compared
    ctxneo neo4j stop
    """


def _exports(info: ServerInfo, password: str) -> str:
    values = {"NEO4J_URI": info.uri, "NEO4J_USER": info.user, "NEO4J_PASSWORD": password}
    return "export " + " ".join(f"{k}={shlex.quote(v)}" for k, v in values.items())


def _data_argument(info: ServerInfo) -> str:
    """`` --data DIR`` when the server's data directory is not the default, else nothing.

    A printed command must name the same server when pasted: without it,
    ``start --export`` would start (or describe) the default directory's server.
    """
    data = Path(info.data_dir)
    if data.resolve() == default_data_dir().resolve():
        return ""
    return f" --data {shlex.quote(str(data))}"


@neo4j.command()
@data_option
@click.option(
    "--port",
    type=Integer(1, 65535),
    help="Bolt port; it becomes the data directory's port for later starts. "
    "[default: the data directory's port, a free one chosen on its first start]",
)
@click.option("--heap", default="768m", show_default=True, help="JVM heap (-Xmx).")
@click.option(
    "--page-cache",
    "page_cache_mb",
    type=Integer(min=8),
    default=128,
    show_default=True,
    help="Page cache in MB.",
)
@click.option(
    "--export",
    "as_export",
    is_flag=True,
    help="Print only `export NEO4J_URI=... NEO4J_USER=... NEO4J_PASSWORD=...` (for eval).",
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
    """Start a server, or report the one already running on the data directory.

    The first start fetches the jars (~120 MB) with Maven, generates the
    password and chooses the port, which later starts reuse (an error says so
    when another program has taken it); the server is ready when this returns:
    Bolt answers at the printed URI. ctxneo commands given that URI find the
    password themselves.
    """
    server = LocalNeo4j(data_dir, port=port, heap=heap, page_cache_mb=page_cache_mb)
    info = server.start(log=lambda line: click.echo(line, err=True))
    password = server.password() or ""
    if as_json:
        emit_json(asdict(info))
    elif as_export:
        click.echo(_exports(info, password))
    else:
        click.echo(
            f"Neo4j {NEO4J_VERSION} is up at {info.uri} (pid {info.pid}, data {info.data_dir})"
        )
        click.echo(f"  user {info.user}, password in {info.password_file}")
        click.echo(
            f'  eval "$(ctxneo neo4j start{_data_argument(info)} --export)" '
            "sets NEO4J_URI, USER and PASSWORD"
        )


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
