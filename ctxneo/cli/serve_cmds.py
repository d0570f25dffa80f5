"""``ctxneo serve``: the memory as an MCP server, over stdio or streamable HTTP."""

from __future__ import annotations

import logging
import socket
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

import click

from ctxneo.cli.options import friendly_errors, memory_location, silent_option, store_options
from ctxneo.errors import CtxneoError
from ctxneo.http_guard import is_loopback, read_or_make_token
from ctxneo.memory import Memory

LOG_LEVELS = ["debug", "info", "warning", "error"]


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
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="With --http: another name clients reach the server by (a Host header value, "
    "with or without :PORT); requests naming any other host are refused. Repeatable.",
)
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --http: require 'Authorization: Bearer <token>' with the token in this file "
    "(made, readable only by you, when absent). Required beyond loopback, where it "
    "defaults to ~/.ctxneo/http-token.",
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
    allow_hosts: tuple[str, ...],
    token_file: Path | None,
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

    Tools: remember, remember_many, ask, facts, history, retract, stats,
    vocabulary, declare. Each
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
            for name in ("host", "port", "allow_hosts", "token_file")
            if ctx.get_parameter_source(name) != click.core.ParameterSource.DEFAULT
        ]
        if given:
            names = [g.replace("_", "-").replace("allow-hosts", "allow-host") for g in given]
            raise click.UsageError(f"{' and '.join(names)} need --http")
    store_path, uri = memory_location(store_path, uri)
    if store_path is not None:
        path = store_path

        def opener() -> Memory:
            return Memory.open(path)

        name = f"journal {path.resolve()}"
    else:
        assert uri is not None

        def opener() -> Memory:
            memory = Memory.open(
                uri=uri, user=user, password=password, database=database, namespace=namespace
            )
            memory.warm()  # (the names copied once here, not in the first question)
            return memory

        name = f"Neo4j {uri}, namespace {namespace!r}" + (
            f", database {database!r}" if database else ""
        )

    token: str | None = None
    if use_http:
        if token_file is None and not is_loopback(host):
            from ctxneo.neo4j_local.server import ctxneo_home

            token_file = ctxneo_home() / "http-token"
        if token_file is not None:
            token, made = read_or_make_token(token_file)
            if not silent:
                how = "made a new token in" if made else "the token is in"
                click.echo(
                    f"ctxneo: requests need 'Authorization: Bearer <token>'; {how} {token_file}",
                    err=True,
                )
        if not is_loopback(host):
            click.echo(
                f"Warning: listening on {host}: other machines can reach port {port}; "
                "each request needs the token (use TLS in front of it on an untrusted network)",
                err=True,
            )
        _check_port_free(host, port)

    handle = MemoryHandle(opener, name)
    empty = ""
    try:
        # (a misspelt path or namespace serves a new, empty memory: say so where it starts)
        if handle.get().stats()["facts"] == 0:
            empty = " (empty: nothing remembered in it yet)"
    except CtxneoError as e:
        # Served anyway: each call answers with this error until the memory opens.
        click.echo(f"Warning: {e}; serving anyway, each call tries again", err=True)
    server = build_server(handle, log_level=log_level.upper())
    if not silent:
        where = f"streamable HTTP at http://{host}:{port}/mcp" if use_http else "stdio"
        click.echo(f"ctxneo: serving {name}{empty} over {where}", err=True)
    try:
        if use_http:
            _serve_http(server, host, port, allow_hosts, token, log_level)
        else:
            server.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        handle.close()


def _serve_http(
    server: Any,
    host: str,
    port: int,
    allow_hosts: Sequence[str],
    token: str | None,
    log_level: str,
) -> None:
    """The SDK's streamable HTTP app with the Host/Origin checks on for every bind
    address (the SDK turns them on for loopback only) and the bearer token."""
    import uvicorn

    from ctxneo.http_guard import require_token, security_settings

    app = server.streamable_http_app(
        transport_security=security_settings(host, port, allow_hosts), host=host
    )
    if token is not None:
        app = require_token(app, token)
    _survive_running_out_of_files()
    uvicorn.run(app, host=host, port=port, log_level=log_level.lower())


def _survive_running_out_of_files() -> None:
    """Keep the server up when clients hold every file descriptor it may open (requests
    left unfinished on purpose, before any token is read). The event loop then logs
    each refused accept and tries again, but the SDK's log handler imports its traceback
    module on its first such record, which itself fails for want of a descriptor and
    took the server down: imported now. And the soft limit on open files is raised to
    the hard one, as servers do."""
    with suppress(ImportError):
        import rich.traceback  # noqa: F401
    # Each refused accept is one line, not a traceback drawn by the log handler while
    # the event loop waits for it (a second or more each, once per retry).
    logging.getLogger("asyncio").addFilter(_accept_errors_in_one_line)
    with suppress(ImportError, ValueError, OSError):
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


COMMANDS = [serve]


def _accept_errors_in_one_line(record: logging.LogRecord) -> bool:
    if str(record.msg).startswith("socket.accept() out of system resource"):
        record.exc_info = None
        record.exc_text = None
        record.msg = "cannot accept a connection: too many open files (retrying)"
    return True
