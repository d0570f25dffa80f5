"""Options shared by several commands, and the glue from options to a Memory."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ctxneo import model
from ctxneo.errors import ConfigError, CtxneoError, InvalidFactError, ScenarioError
from ctxneo.memory import Memory
from ctxneo.neo4j_local.server import local_credentials
from ctxneo.neo4j_uri import check_uri, looks_like_uri, redact

F = TypeVar("F", bound=Callable[..., Any])


class TakesValues(click.Command):
    """A command whose arguments are values and words: one that starts with a dash and
    a digit ("-81", "-80 freezer?") is an argument, not an option (no option of ctxneo
    starts so); an option's own value is left to it ("--turn -3")."""

    _MARK = "\x00"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value = {
            name
            for p in self.params
            if isinstance(p, click.Option) and not p.is_flag and not p.count
            for name in p.opts
        }
        marked, owed = [], False
        for a in args:
            negative = len(a) > 1 and a[0] == "-" and (a[1].isdigit() or a[1] == ".")
            marked.append(self._MARK + a if negative and not owed else a)
            owed = a in takes_value
        try:
            rest = super().parse_args(ctx, marked)
        except click.UsageError as e:
            e.message = e.message.replace(self._MARK, "")
            raise
        for name, value in ctx.params.items():
            if isinstance(value, str) and value.startswith(self._MARK):
                ctx.params[name] = value[len(self._MARK) :]
        return [a.removeprefix(self._MARK) for a in rest]


silent_option = click.option("--silent", is_flag=True, help="No progress on stderr.")
markdown_option = click.option("--markdown", is_flag=True, help="Print the table as Markdown.")


def min_confidence_option(help: str) -> Callable[[F], F]:
    """``--min-confidence``, a confidence in [0, 1] passed to ``ask`` (None: the
    answerer's own threshold), with what it does in this command."""
    return click.option(
        "--min-confidence", type=click.FloatRange(0.0, 1.0), default=None, help=help
    )


def plot_option(what: str) -> Callable[[F], F]:
    """``--plot FILE`` and ``--force``; the command calls :func:`check_plot` before it runs."""

    def decorate(f: F) -> F:
        f = click.option(
            "--force", "force_plot", is_flag=True, help="Replace the --plot file if it exists."
        )(f)
        return click.option(  # type: ignore[return-value]
            "--plot",
            "plot_path",
            type=click.Path(dir_okay=False, path_type=Path),
            help=f"Write a PNG of {what} (an existing file is replaced only with --force).",
        )(f)

    return decorate


def check_plot(plot_path: Path | None, force: bool) -> None:
    """Refuse, before any work, to overwrite an existing plot without --force."""
    if plot_path is not None and plot_path.exists() and not force:
        raise click.UsageError(f"{plot_path} already exists: give --force to replace it")


def json_option(f: F) -> F:
    return click.option(
        "--json", "as_json", is_flag=True, help="Print one JSON document and nothing else."
    )(f)  # type: ignore[return-value]


def _uri(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Check a Neo4j URI when it is given (an unsupported scheme is a usage error)."""
    if not value:
        return None
    try:
        return check_uri(value)
    except ConfigError as e:
        raise click.BadParameter(
            str(e), ctx=ctx, param=param, param_hint=from_environment(ctx, param)
        ) from e


def from_environment(ctx: click.Context | None, param: click.Parameter | None) -> str | None:
    """How to name an option in a message: by its environment variable when the value came
    from there (nobody typed "--uri" to get "Invalid value for '--uri'"), else as click
    does (None)."""
    if ctx is None or param is None or param.name is None:
        return None
    envvar = getattr(param, "envvar", None)
    if isinstance(envvar, str) and ctx.get_parameter_source(param.name) == (
        click.core.ParameterSource.ENVIRONMENT
    ):
        return f"{envvar} (from the environment)"
    return None


def _local_credentials(f: F) -> F:
    """Fill in the local server's user and password when the URI is that server's.

    ``ctxneo neo4j start`` generates the password of the Neo4j it starts; a
    command pointed at that server (by ``--uri`` or the ``--to-uri`` /
    ``--from-uri`` of export) without a password uses it, so nobody has to
    copy it around. A password given explicitly always wins.
    """

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not kwargs.get("password"):
            uri = next((kwargs[k] for k in ("uri", "to_uri", "from_uri") if kwargs.get(k)), None)
            found = local_credentials(uri) if uri else None
            if found is not None:
                kwargs["user"], kwargs["password"] = found
        return f(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def credential_options(f: F) -> F:
    """--user/--password/--database, defaulting to the NEO4J_* variables; the local
    server's password is found by itself (:func:`_local_credentials`)."""
    f = _local_credentials(f)
    for decorator in reversed(
        [
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
                help="Neo4j password (the local server's is found by itself). "
                "[env: NEO4J_PASSWORD]",
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


def connection_options(f: F) -> F:
    """--uri and the credential options."""
    return click.option(  # type: ignore[return-value]
        "--uri",
        envvar="NEO4J_URI",
        callback=_uri,
        help="Neo4j URI (bolt://, neo4j://, neo4j+s://...). [env: NEO4J_URI]",
    )(credential_options(f))


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


class Integer(click.IntRange):
    """An integer option, in a range: "'soon' is not a valid integer", where click's own
    type says "not a valid integer range" of a value that is no integer at all."""

    name = "integer"


class JournalPath(click.Path):
    """A journal file's path; a URI given in its place is refused as it was written
    (``Path`` would print ``bolt://h`` as ``bolt:/h``), with the option that takes it."""

    def __init__(self, *args: Any, uri_option: str = "--uri", **kwargs: Any) -> None:
        # (not checked readable here: a journal this user may not read is the journal's
        # own error, exit 1 as a missing one, not click's usage error, exit 2)
        kwargs.setdefault("readable", False)
        super().__init__(*args, **kwargs)
        self.uri_option = uri_option

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            # (``Path("")`` is the working directory: "cannot open journal ." says nothing)
            raise click.BadParameter(
                "is empty: give the journal file's path", ctx, param, from_environment(ctx, param)
            )
        if isinstance(value, str) and looks_like_uri(value):
            raise click.BadParameter(
                f"{value!r} is a URI, not a journal file: give a Neo4j URI as {self.uri_option}",
                ctx,
                param,
                from_environment(ctx, param),
            )
        return super().convert(value, param, ctx)


def store_options(f: F) -> F:
    """Where the memory lives: a journal file (--store) or a Neo4j server (--uri ...)."""
    f = neo4j_options(f)
    return click.option(
        "--store",
        "store_path",
        envvar="CTXNEO_STORE",
        type=JournalPath(dir_okay=False, path_type=Path),
        help="Journal file of an embedded memory (a write creates it). [env: CTXNEO_STORE]",
    )(f)  # type: ignore[return-value]


def open_memory(
    store_path: Path | None,
    uri: str | None,
    user: str,
    password: str | None,
    database: str | None,
    namespace: str,
    *,
    create: bool = True,
) -> Memory:
    """Open the memory the options name (``create=False`` for commands that only read).

    Raises:
        click.UsageError: neither or both of --store and --uri are given.
        CtxneoError: the memory cannot be opened (or, not creating, does not exist).
    """
    store_path, uri = memory_location(store_path, uri)
    if store_path is not None:
        _no_server_options_with_a_journal()
        return Memory.open(store_path, create=create)
    return Memory.open(
        uri=uri,
        user=user,
        password=password,
        database=database,
        namespace=namespace,
        create=create,
    )


def _no_server_options_with_a_journal() -> None:
    """Refuse a server's options given on the command line with a journal: they would be
    ignored, and whoever gave them meant another memory. (From the environment they are
    the shell's settings for Neo4j, and a journal named on the command line wins.)"""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return
    given = [
        f"--{name}"
        for name in ("user", "password", "database", "namespace")
        if name in ctx.params
        and ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE
    ]
    if given:
        raise click.UsageError(
            f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for a Neo4j memory "
            "(--uri), not for a journal (--store)"
        )


def memory_location(store_path: Path | None, uri: str | None) -> tuple[Path | None, str | None]:
    """Which of --store and --uri names the memory: exactly one of the pair comes back.

    Raises:
        click.UsageError: neither is given, or both on the command line (or both
            from the environment).
    """
    if store_path is not None and uri:
        # An option given on the command line wins over one from the environment.
        ctx = click.get_current_context(silent=True)
        source = ctx.get_parameter_source if ctx is not None else None
        from_env = click.core.ParameterSource.ENVIRONMENT
        store_from_env = source is not None and source("store_path") == from_env
        uri_from_env = source is not None and source("uri") == from_env
        if store_from_env and uri_from_env:
            raise click.UsageError(
                "CTXNEO_STORE and NEO4J_URI are both set: unset one, or name the memory "
                "with --store FILE or --uri URI"
            )
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
    return store_path, (None if store_path is not None else uri)


def memory_from(kwargs: dict[str, Any], *, create: bool = True) -> Memory:
    """The memory the store options in ``kwargs`` name (they are removed from it)."""
    return open_memory(
        kwargs.pop("store_path", None),
        kwargs.pop("uri"),
        kwargs.pop("user"),
        kwargs.pop("password"),
        kwargs.pop("database"),
        kwargs.pop("namespace"),
        create=create,
    )


def describe(memory: Memory) -> str:
    """Where a memory lives, for messages: its journal, or its namespace and server."""
    store = memory.store
    path = getattr(store, "path", None)
    if path is not None:
        return f"the journal {path}"
    namespace, uri = getattr(store, "namespace", None), getattr(store, "uri", None)
    if namespace is not None and uri is not None:
        return f"namespace {namespace!r} at {redact(uri)}"
    return "the in-process memory"


def emit_json(doc: object) -> None:
    click.echo(json.dumps(doc, indent=2, ensure_ascii=False))


def friendly_errors(f: F) -> F:
    """Turn ctxneo's own errors into one line on stderr and a documented exit code.

    ``ScenarioError`` (a malformed input file), ``ConfigError`` (a setting
    such as ``CTXNEO_FSYNC=bogus``) and ``InvalidFactError`` (a value the memory
    refuses: a predicate "owned by", an empty name, a question too long) exit with
    2 like a usage error; any other ``CtxneoError`` or an OS error on a named file
    with 1.
    Messages never show a password written into a URI.
    """

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        except (ScenarioError, ConfigError, InvalidFactError) as e:
            raise CommandError(str(e), EXIT_USAGE) from e
        except CtxneoError as e:
            raise CommandError(str(e)) from e
        except BrokenPipeError:
            raise  # the reader went away (`| head`): the group stops quietly
        except OSError as e:  # a file named on the command line cannot be written or read
            where = f" {e.filename}" if e.filename else ""
            raise CommandError(f"{e.strerror or e}:{where}") from e

    return wrapper  # type: ignore[return-value]


#: Exit codes (the README's "Exit codes" lists them).
EXIT_FAILED = 1  # the command could not do what was asked; the message says why
EXIT_USAGE = 2  # bad options or arguments, or a malformed input file
EXIT_INTERNAL = 3  # a bug in ctxneo (CTXNEO_DEBUG=1 shows the traceback)
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT


class CommandError(click.ClickException):
    """One line on stderr, ``Error: ...``, and an exit code; no URI password shown."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILED) -> None:
        # (every character that is not printable escaped: a message may quote a stored
        # name, and a name's escape sequences must never reach a terminal)
        super().__init__(model.one_line(one_line(redact(message))))
        self.exit_code = exit_code


def one_line(message: str) -> str:
    """A message on one line: later lines are joined with " / " (a CLI error is one line)."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return " / ".join(lines)
