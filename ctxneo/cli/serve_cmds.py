"""``ctxneo serve``: the memory as an MCP server, over stdio or streamable HTTP."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import click

from ctxneo.cli.options import friendly_errors, memory_location, silent_option, store_options
from ctxneo.errors import CtxneoError
from ctxneo.memory import Memory

LOG_LEVELS = ["debug", "info", "warning", "error"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_port_free(host: str, port: int) -> None:
    # A clear one-line error now, rather than a server log line after start-up.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as e:
            raise click.ClickException(f"cannot listen on {host}:{port}: {e.strerror}") from e


@click.command()
@click.option("--http", "use_http", is_flag=True, help="Serve streamable HTTP instead of stdio.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on with --http (loopback unless you say otherwise).",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=8000,
    show_default=True,
    help="Port to listen on with --http.",
)
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS, case_sensitive=False),
    default="warning",
    show_default=True,
    help="What the server logs on stderr.",
)
@silent_option
@store_options
@friendly_errors
def serve(
    use_http: bool,
    host: str,
    port: int,
    log_level: str,
    silent: bool,
    store_path: Path | None,
    uri: str | None,
    user: str,
    password: str | None,
    database: str | None,
    namespace: str,
) -> None:
    """Serve the memory to agents as MCP tools, over stdio (default) or streamable HTTP.

    Tools: remember, remember_many, ask, facts, history, retract, stats. Each
    MCP client starts its own server; servers on one journal (--store) or
    one Neo4j namespace share the memory and see each other's writes. In
    stdio mode only the protocol goes to stdout; messages go to stderr.

    \b
    ctxneo serve --store project.jsonl
    ctxneo serve --uri bolt://localhost:7687 --namespace my-project
    ctxneo serve --store project.jsonl --http --port 8000
    """
    from ctxneo.mcp_server import MemoryHandle, build_server

    ctx = click.get_current_context()
    if not use_http:
        given = [
            f"--{name}"
            for name in ("host", "port")
            if ctx.get_parameter_source(name) != click.core.ParameterSource.DEFAULT
        ]
        if given:
            raise click.UsageError(f"{' and '.join(given)} need --http")
    store_path, uri = memory_location(store_path, uri)
    if store_path is not None:
        path = store_path

        def opener() -> Memory:
            return Memory.open(path)

        name = f"journal {path.resolve()}"
    else:
        assert uri is not None

        def opener() -> Memory:
            return Memory.open(
                uri=uri, user=user, password=password, database=database, namespace=namespace
            )

        name = f"Neo4j {uri}, namespace {namespace!r}" + (
            f", database {database!r}" if database else ""
        )

    if use_http:
        if not is_loopback(host):
            click.echo(
                f"Warning: listening on {host}: anyone who reaches port {port} can read and "
                "change this memory (there is no authentication)",
                err=True,
            )
        _check_port_free(host, port)

    handle = MemoryHandle(opener, name)
    try:
        handle.get()
    except CtxneoError as e:
        # Served anyway: each call answers with this error until the memory opens.
        click.echo(f"Warning: {e}; serving anyway, each call tries again", err=True)
    server = build_server(handle, log_level=log_level.upper())
    if not silent:
        where = f"streamable HTTP at http://{host}:{port}/mcp" if use_http else "stdio"
        click.echo(f"ctxneo: serving {name} over {where}", err=True)
    try:
        if use_http:
            server.run("streamable-http", host=host, port=port)
        else:
            server.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        handle.close()


COMMANDS = [serve]
