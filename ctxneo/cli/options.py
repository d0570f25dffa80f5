"""Options shared by several commands, and the glue from options to a Memory."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ctxneo.errors import CtxneoError, ScenarioError
from ctxneo.memory import Memory

F = TypeVar("F", bound=Callable[..., Any])


silent_option = click.option("--silent", is_flag=True, help="No progress on stderr.")
markdown_option = click.option("--markdown", is_flag=True, help="Print the table as Markdown.")


def plot_option(what: str) -> Callable[[F], F]:
    return click.option(  # type: ignore[return-value]
        "--plot",
        "plot_path",
        type=click.Path(dir_okay=False, path_type=Path),
        help=f"Write a PNG of {what}.",
    )


def json_option(f: F) -> F:
    return click.option(
        "--json", "as_json", is_flag=True, help="Print one JSON document and nothing else."
    )(f)  # type: ignore[return-value]


def connection_options(f: F) -> F:
    """--uri/--user/--password/--database, defaulting to the NEO4J_* variables."""
    for decorator in reversed(
        [
            click.option(
                "--uri",
                envvar="NEO4J_URI",
                help="Neo4j URI (bolt://, neo4j://, neo4j+s://). [env: NEO4J_URI]",
            ),
            click.option(
                "--user",
                envvar="NEO4J_USER",
                default="neo4j",
                show_default=True,
                help="Neo4j user. [env: NEO4J_USER]",
            ),
            click.option(
                "--password",
                envvar="NEO4J_PASSWORD",
                default=None,
                help="Neo4j password. [env: NEO4J_PASSWORD]",
            ),
            click.option(
                "--database",
                envvar="NEO4J_DATABASE",
                default=None,
                help="Neo4j database (default: the server's default). [env: NEO4J_DATABASE]",
            ),
        ]
    ):
        f = decorator(f)
    return f


def neo4j_options(f: F) -> F:
    """The connection options and --namespace (which memory on the server)."""
    f = click.option(
        "--namespace",
        envvar="CTXNEO_NAMESPACE",
        default="default",
        show_default=True,
        help="Which memory on the Neo4j server. [env: CTXNEO_NAMESPACE]",
    )(f)
    return connection_options(f)


def store_options(f: F) -> F:
    """Where the memory lives: a journal file (--store) or a Neo4j server (--uri ...)."""
    f = neo4j_options(f)
    return click.option(
        "--store",
        "store_path",
        envvar="CTXNEO_STORE",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Journal file of an embedded memory (created if missing). [env: CTXNEO_STORE]",
    )(f)  # type: ignore[return-value]


def memory_location(store_path: Path | None, uri: str | None) -> tuple[Path | None, str | None]:
    """Which of --store and --uri names the memory: exactly one of the pair comes back.

    Raises:
        click.UsageError: neither or both of --store and --uri are given.
    """
    if store_path is not None and uri:
        # An option given on the command line wins over one from the environment.
        ctx = click.get_current_context(silent=True)
        source = ctx.get_parameter_source if ctx is not None else None
        from_env = click.core.ParameterSource.ENVIRONMENT
        store_from_env = source is not None and source("store_path") == from_env
        uri_from_env = source is not None and source("uri") == from_env
        if store_from_env == uri_from_env:
            raise click.UsageError("give either --store FILE or --uri URI, not both")
        if store_from_env:
            store_path = None
        else:
            uri = None
    if store_path is None and not uri:
        raise click.UsageError(
            "say where the memory lives: --store FILE (an embedded journal) or --uri URI (Neo4j)"
        )
    return store_path, uri


def open_memory(
    store_path: Path | None,
    uri: str | None,
    user: str,
    password: str | None,
    database: str | None,
    namespace: str,
) -> Memory:
    """Open the memory the options name.

    Raises:
        click.UsageError: neither or both of --store and --uri are given.
    """
    store_path, uri = memory_location(store_path, uri)
    if store_path is not None:
        return Memory.open(store_path)
    return Memory.open(
        uri=uri, user=user, password=password, database=database, namespace=namespace
    )


def memory_from(kwargs: dict[str, Any]) -> Memory:
    return open_memory(
        kwargs.pop("store_path", None),
        kwargs.pop("uri"),
        kwargs.pop("user"),
        kwargs.pop("password"),
        kwargs.pop("database"),
        kwargs.pop("namespace"),
    )


def emit_json(doc: object) -> None:
    click.echo(json.dumps(doc, indent=2, ensure_ascii=False))


def friendly_errors(f: F) -> F:
    """Turn ctxneo's own errors into one line on stderr and a non-zero exit code."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        except ScenarioError as e:
            click.echo(f"Error: {e}", err=True)
            sys.exit(2)
        except CtxneoError as e:
            raise click.ClickException(str(e)) from e
        except OSError as e:  # a file named on the command line cannot be written or read
            where = f" {e.filename}" if e.filename else ""
            raise click.ClickException(f"{e.strerror or e}:{where}") from e

    return wrapper  # type: ignore[return-value]
