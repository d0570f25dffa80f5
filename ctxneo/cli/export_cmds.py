"""``ctxneo export`` and ``ctxneo load``: memories between journals, Cypher scripts and Neo4j."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ctxneo.cli.bench_cmds import progress_bar
from ctxneo.cli.lazy import lazy_module
from ctxneo.cli.options import JournalPath, credential_options, friendly_errors, silent_option
from ctxneo.errors import CtxneoError, LoadFileError
from ctxneo.model import Scenario, check_namespace
from ctxneo.neo4j_uri import redact
from ctxneo.scenarios import load_suite, write_turns
from ctxneo.stores.base import MemoryImage

if TYPE_CHECKING:
    from ctxneo.stores.neo4j import Neo4jStore
    from ctxneo.stores.networkx import NetworkXStore

# Imported when a command runs: networkx and the Neo4j driver are not needed to list them.
exporting = lazy_module("ctxneo.export")
neo4j_store = lazy_module("ctxneo.stores.neo4j")
networkx_store = lazy_module("ctxneo.stores.networkx")

#: Exit code of ``load`` for a file it refuses (not a journal or an export, or invalid).
EXIT_BAD_FILE = 2


def scenario_store(scenario: Scenario) -> NetworkXStore:
    """The embedded memory a scenario's fact turns build (aliases and multi-valued included)."""
    store = networkx_store.NetworkXStore()
    store.declare_multi_valued(scenario.multi_valued_predicates)
    for phrase, entity in scenario.aliases:
        store.add_alias(phrase, entity)
    write_turns(store, scenario.turns)
    return store


def _given(*names: str) -> list[str]:
    """The options among ``names`` the user typed on the command line."""
    ctx = click.get_current_context()
    typed = click.core.ParameterSource.COMMANDLINE
    options = {p.name: p for p in ctx.command.params}
    return [max(options[n].opts, key=len) for n in names if ctx.get_parameter_source(n) == typed]


def _refuse(reason: str, *names: str) -> None:
    if given := _given(*names):
        raise click.UsageError(f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} "
                               f"nothing {reason}")  # fmt: skip


def _connect(uri: str, creds: dict[str, Any], namespace: str) -> Neo4jStore:
    return neo4j_store.Neo4jStore(
        uri,
        user=creds["user"],
        password=creds["password"],
        database=creds["database"],
        namespace=namespace,
    ).connect()


def _sources(
    store_path: Path | None, paths: tuple[Path, ...], only: str | None, namespace: str
) -> Iterator[tuple[MemoryImage, str]]:
    """(memory, namespace) pairs to export: the journal, or each chosen scenario."""
    if store_path is not None:
        yield exporting.read_journal(store_path), namespace
        return
    scenarios = load_suite(paths)
    if only is not None:
        scenarios = [s for s in scenarios if s.name == only]
        if not scenarios:
            raise click.UsageError(f"no scenario named {only!r} in {', '.join(map(str, paths))}")
        yield scenario_store(scenarios[0]).image(), namespace
        return
    for scenario in scenarios:  # several scenarios: one namespace each
        yield scenario_store(scenario).image(), f"{namespace}/{scenario.name}"


def _output_kind(output: Path) -> str:
    if output.suffix in (".cypher", ".cql"):
        return "script"
    if output.suffix == ".jsonl":
        return "journal"
    raise click.UsageError(
        f"-o {output}: name a Cypher script (.cypher) or a journal (.jsonl); the suffix "
        "says which to write"
    )


def _load(target: Neo4jStore, image: MemoryImage, silent: bool, what: str) -> None:
    total = len(image.facts) + len(image.entities)
    # A bar is for a terminal: piped, it would only leave a blank line behind.
    with progress_bar(silent or not sys.stderr.isatty()) as bar:
        task = bar.add_task(f"loading {what}", total=total)
        target.load(image, progress=lambda n: bar.advance(task, n))


def _empty_namespace(source: Neo4jStore, uri: str) -> CtxneoError:
    """The error for a namespace that holds nothing, naming (at most ten of) those that do."""
    names = sorted(source.namespaces())
    there = ", ".join(f"{ns!r}" for ns in names[:10]) or "none"
    if len(names) > 10:
        there += f" and {len(names) - 10} more"
    return CtxneoError(
        f"namespace {source.namespace!r} at {redact(uri)} holds no memory "
        f"(namespaces there: {there})"
    )


@click.command()
@click.option(
    "--store",
    "store_path",
    type=JournalPath(dir_okay=False, path_type=Path, uri_option="--from-uri"),
    help="Export this embedded memory (a journal file).",
)
@click.option(
    "--scenarios",
    "paths",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Export the memory scenario fact turns build (repeatable).",
)
@click.option("--scenario", "only", help="With --scenarios: only this scenario.")
@click.option("--from-uri", help="Export this Neo4j memory (--namespace).")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write here: FILE.cypher (a script) or FILE.jsonl (a journal). "
    "Default: the script on stdout.",
)
@click.option("--to-uri", help="Load into this Neo4j instead, one transaction per namespace.")
@click.option(
    "--namespace",
    envvar="CTXNEO_NAMESPACE",
    default="default",
    show_default=True,
    help="The Neo4j namespace to write (a script names it) or to read. [env: CTXNEO_NAMESPACE]",
)
@click.option("--force", is_flag=True, help="Replace the -o file if it exists.")
@credential_options
@silent_option
@friendly_errors
def export(
    store_path: Path | None,
    paths: tuple[Path, ...],
    only: str | None,
    from_uri: str | None,
    output: Path | None,
    to_uri: str | None,
    namespace: str,
    force: bool,
    silent: bool,
    **creds: Any,
) -> None:
    """Export a memory: a journal, scenarios or a Neo4j namespace, to a file or to Neo4j.

    A script recreates the memory exactly (schema, entities, every fact,
    current and superseded, with speaker, turn, fact id, sequence numbers and
    validity) and runs with `cypher-shell -f`; `ctxneo load` reads a script or
    a journal back as data. Loading into Neo4j is one transaction per
    namespace: all of a memory or none of it. An existing -o file is replaced
    only with --force.

    \b
    ctxneo export --store memory.jsonl -o memory.cypher
    ctxneo export --scenarios bench/scenarios --scenario clickstream_etl --to-uri "$NEO4J_URI"
    ctxneo export --from-uri "$NEO4J_URI" --namespace default -o memory.jsonl
    """
    check_namespace(namespace)
    sources = [s for s in (store_path, paths, from_uri) if s]
    if len(sources) != 1:
        raise click.UsageError("give one source: --store FILE, --scenarios PATH or --from-uri URI")
    if output is not None and to_uri:
        raise click.UsageError("give one destination: -o FILE or --to-uri URI")
    if not paths:
        _refuse("without --scenarios", "only")
    if output is None:
        _refuse("without -o", "force")
    if not (from_uri or to_uri):
        _refuse("without --from-uri or --to-uri", "user", "password", "database")
    kind = _output_kind(output) if output is not None else "script"
    if from_uri:
        if to_uri:
            raise click.UsageError("--from-uri exports to a file (-o), not to another Neo4j")
        if output is None:
            raise click.UsageError("--from-uri writes a file: give -o FILE.jsonl (or .cypher)")
        with _connect(from_uri, creds, namespace) as source:
            image = source.image()
            if not image.facts and not image.aliases and not image.last_seq:
                raise _empty_namespace(source, from_uri)
        _write([(image, namespace)], output, kind, force)
        click.echo(
            f"wrote {len(image.facts)} facts of namespace {namespace!r} to {output}", err=True
        )
        return
    images = list(_sources(store_path, paths, only, namespace))
    if to_uri:
        done: list[str] = []
        for image, ns in images:
            with _connect(to_uri, creds, ns) as target:
                try:
                    _load(target, image, silent, ns)
                except CtxneoError as e:
                    written = f" (already loaded: {', '.join(map(repr, done))})" if done else ""
                    raise CtxneoError(f"{e}{written}") from e
            done.append(ns)
            click.echo(
                f"loaded {_facts(len(image.facts))} into {redact(to_uri)}, namespace {ns!r}",
                err=True,
            )
        return
    if output is None:
        for image, ns in images:
            exporting.write_script(image, sys.stdout, ns)
        return
    _write(images, output, kind, force)
    click.echo(f"wrote {output}", err=True)


def _write(pairs: list[tuple[MemoryImage, str]], output: Path, kind: str, force: bool) -> None:
    """Write memories (with their namespaces) to ``output``, a script or a journal."""
    if kind == "journal":
        if len(pairs) != 1:
            raise click.UsageError(
                "a journal holds one memory: pick one with --scenario, or write a .cypher script"
            )
        exporting.write_journal(pairs[0][0], output, force=force)
        return
    exporting.write_file(
        output, lambda out: [exporting.write_script(img, out, ns) for img, ns in pairs], force=force
    )


@click.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--to-uri",
    "--uri",
    "uri",
    envvar="NEO4J_URI",
    help="The Neo4j to load into. [env: NEO4J_URI]",
)
@click.option(
    "--namespace",
    envvar="CTXNEO_NAMESPACE",
    help="Load into this namespace (default: the one a script names; 'default' for a "
    "journal). [env: CTXNEO_NAMESPACE]",
)
@credential_options
@silent_option
@friendly_errors
def load(file: Path, uri: str | None, namespace: str | None, silent: bool, **creds: Any) -> None:
    """Load a journal or a script from `ctxneo export` into an empty Neo4j namespace.

    The file is read as data, never run: a script's statements must have the
    shapes `ctxneo export` writes, and the memory is checked (names, types,
    sequence numbers, one current value per key) before anything is written.
    The load is one transaction: all of the memory or none of it. Exit code 2
    when the file is refused.

    \b
    ctxneo load memory.cypher --to-uri "$NEO4J_URI"
    ctxneo load memory.jsonl --to-uri "$NEO4J_URI" --namespace restored
    """
    if not uri:
        raise click.UsageError("give --to-uri (or NEO4J_URI)")
    try:
        named, image = exporting.read_load_file(file)
    except LoadFileError as e:
        click.echo(f"Error: {e}", err=True)
        sys.exit(EXIT_BAD_FILE)
    target_ns = namespace or named or "default"
    check_namespace(target_ns)
    with _connect(uri, creds, target_ns) as target:
        _load(target, image, silent, file.name)
    click.echo(
        f"loaded {_facts(len(image.facts))} from {file} into {redact(uri)}, "
        f"namespace {target_ns!r}",
        err=True,
    )


COMMANDS = [export, load]


def _facts(n: int) -> str:
    return "1 fact" if n == 1 else f"{n} facts"
