"""The click group behind ``ctxneo``: whole help sentences, and every error one line.

Whatever goes wrong, the user sees one ``Error: ...`` line on stderr and a
documented exit code (see ``options.EXIT_*``), never a traceback: arguments
that are not UTF-8 are refused before a command runs, the Neo4j driver's log
lines are kept out of the terminal, and an unexpected exception (a bug) is
reported in one line with exit code 3 (``CTXNEO_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from ctxneo.cli.options import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    CommandError,
    one_line,
)
from ctxneo.neo4j_uri import redact

#: Environment variables ctxneo reads as option values; they must be text too.
_ENVIRONMENT = (
    "CTXNEO_STORE",
    "CTXNEO_NAMESPACE",
    "NEO4J_URI",
    "NEO4J_USER",
    "NEO4J_PASSWORD",
    "NEO4J_DATABASE",
)


#: Commands of other tools' words, said by their name here ("import" is ``load``).
_OTHER_WORDS = {
    "import": "load",
    "query": "ask",
    "add": "remember",
    "forget": "retract",
    "delete": "retract",
}


def _not_utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # bytes that were not UTF-8 arrive as lone surrogates
        return True
    return False


#: Variables whose value is never shown, even in an error about it.
_SECRETS = frozenset({"NEO4J_PASSWORD"})


def _a_password(arguments: Sequence[str], i: int) -> bool:
    """Whether ``arguments[i]`` is a password: the value of ``--password`` (or a URI,
    which may hold one; check_uri refuses it, but not before this)."""
    value = arguments[i]
    before = arguments[i - 1] if i > 0 else ""
    return (
        before in ("--password", "--uri")
        or value.startswith(("--password=", "--uri="))
        or "@" in value
    )


def _shown(value: str) -> str:
    """A value that is not valid UTF-8, shown with its bad bytes escaped."""
    return repr(value.encode("utf-8", "surrogateescape"))[2:-1]


class CtxneoGroup(click.Group):
    """A group whose command list shows each command's whole first sentence.

    Its commands can come from modules imported only when needed
    (``command_modules``, each with a ``COMMANDS`` list): ``ctxneo remember``
    then starts in a tenth of a second instead of importing the benchmark's
    scikit-learn first (seconds).
    """

    def __init__(self, *args: Any, command_modules: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pending = list(command_modules)

    def _load(self, until: str | None = None) -> None:
        """Import command modules in order, all of them or until one has ``until``."""
        while self._pending and (until is None or until not in self.commands):
            for command in importlib.import_module(self._pending.pop(0)).COMMANDS:
                self.add_command(command)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        self._load(until=cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name in _OTHER_WORDS and self.get_command(ctx, name) is None:
            # (click's guess goes by spelling: "import" got "export", the opposite)
            meant = _OTHER_WORDS[name]
            raise click.UsageError(f"No such command {name!r}. Did you mean {meant!r}?", ctx)
        return super().resolve_command(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load()
        return super().list_commands(ctx)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                # No length limit: a summary cut mid-sentence reads as a different claim.
                rows.append((name, command.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def main(  # type: ignore[override]
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        arguments = list(sys.argv[1:] if args is None else args)
        for i, value in enumerate(arguments, 1):
            if isinstance(value, str) and _not_utf8(value):
                if _a_password(arguments, i - 1):
                    # (a secret is named, never shown: not even its bad bytes)
                    return _fail(f"argument {i} (a password) is not valid UTF-8", EXIT_USAGE)
                return _fail(f"argument {i} is not valid UTF-8: {_shown(value)}", EXIT_USAGE)
        for name in _ENVIRONMENT:
            value = os.environ.get(name)
            if value is not None and _not_utf8(value):
                shown = "" if name in _SECRETS else f": {_shown(value)}"
                return _fail(f"${name} is not valid UTF-8{shown}", EXIT_USAGE)
        _quiet_driver_logs()
        if not standalone_mode:
            return super().main(arguments, prog_name, complete_var, standalone_mode, **extra)
        # Click's own handling prints usage errors on four lines and Ctrl-C as "Aborted!";
        # here every error is the one `Error:` line.
        try:
            result = super().main(arguments, prog_name, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as e:  # a bare group: its help, not an error
            e.show()
            sys.exit(e.exit_code)
        except click.UsageError as e:
            hint = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None else ""
            return _fail(e.format_message() + hint, e.exit_code)
        except click.ClickException as e:
            return _fail(e.format_message(), e.exit_code)
        except click.Abort:
            return _fail("interrupted", EXIT_INTERRUPTED)
        # Not standalone, click returns an Exit's code (0 after --help) or the command's value.
        sys.exit(result if isinstance(result, int) and not isinstance(result, bool) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Abort, click.exceptions.Exit):
            raise
        except BrokenPipeError:
            # The reader went away (`| head`): stop quietly, and do not fail again at exit.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise click.exceptions.Exit(1) from None
        except Exception as e:
            if os.environ.get("CTXNEO_DEBUG") == "1":
                raise
            message = str(e).strip() or "(no message)"
            raise CommandError(
                f"internal error, please report it: {type(e).__name__}: {redact(message)} "
                "(CTXNEO_DEBUG=1 shows the traceback)",
                EXIT_INTERNAL,
            ) from e


def _fail(message: str, code: int) -> None:
    click.echo(f"Error: {one_line(redact(message))}", err=True)
    sys.exit(code)


def _quiet_driver_logs() -> None:
    """Keep the Neo4j driver's own log lines (routing retries...) out of the terminal.

    Python prints warnings of a logger without handlers to stderr; the errors
    they precede reach the user as one ``Error:`` line anyway.
    """
    driver_log = logging.getLogger("neo4j")
    if not driver_log.handlers:
        driver_log.addHandler(logging.NullHandler())
    driver_log.propagate = False
