"""``ctxneo export`` and ``ctxneo load``: embedded memories to Cypher and Neo4j, and back."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from ctxneo.cli.bench_cmds import progress_bar
from ctxneo.cli.options import connection_options, friendly_errors, neo4j_options, silent_option
from ctxneo.errors import CtxneoError
from ctxneo.export import (
    cypher_statements,
    script_namespace,
    split_statements,
    write_journal,
    write_script,
)
from ctxneo.model import NewFact, Scenario
from ctxneo.scenarios import load_suite
from ctxneo.stores.base import Store
from ctxneo.stores.neo4j import Neo4jStore
from ctxneo.stores.networkx import NetworkXStore


def scenario_store(scenario: Scenario) -> NetworkXStore:
    """The embedded memory a scenario's fact turns build (aliases and multi-valued included)."""
    store = NetworkXStore()
    store.declare_multi_valued(scenario.multi_valued_predicates)
    for phrase, entity in scenario.aliases:
        store.add_alias(phrase, entity)
    store.remember_many(
        [
            NewFact(t.subject, t.predicate, t.object, t.speaker, t.turn_id, t.fact_id)
            for t in scenario.turns
            if t.turn_type == "fact" and t.subject and t.predicate and t.object
        ]
    )
    return store


def _sources(
    store_path: Path | None, paths: tuple[Path, ...], only: str | None, namespace: str
) -> Iterator[tuple[Store, str]]:
    """(store, namespace) pairs to export: the journal, or each chosen scenario."""
    if store_path is not None:
        if not store_path.exists():
            raise click.UsageError(f"no journal at {store_path}")
        yield NetworkXStore(store_path), namespace
        return
    scenarios = load_suite(paths)
    if only is not None:
        scenarios = [s for s in scenarios if s.name == only]
        if not scenarios:
            raise click.UsageError(f"no scenario named {only!r} in {', '.join(map(str, paths))}")
        yield scenario_store(scenarios[0]), namespace
        return
    for scenario in scenarios:  # several scenarios: one namespace each
        yield scenario_store(scenario), f"{namespace}/{scenario.name}"


def _connect(uri: str, kwargs: dict[str, Any], namespace: str) -> Neo4jStore:
    return Neo4jStore(
        uri,
        user=kwargs["user"],
        password=kwargs["password"],
        database=kwargs["database"],
        namespace=namespace,
    ).connect()


def _refuse_if_in_use(target: Neo4jStore, uri: str) -> None:
    held = target.stats()
    if held["facts"] or held["last_seq"]:
        raise CtxneoError(
            f"namespace {target.namespace!r} at {uri} already holds a memory "
            f"({held['facts']} facts); loading would duplicate it: clear it first "
            "or export for another --namespace"
        )


@click.command()
@click.option(
    "--store",
    "store_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Export this embedded memory (a journal file).",
)
@click.option(
    "--scenarios",
    "paths",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Export the memory scenario fact turns build (repeatable).",
)
@click.option("--scenario", "only", help="Only this scenario (else one namespace per scenario).")
@click.option(
    "--from-uri", help="Export a Neo4j memory (--namespace) as a journal (-o FILE.jsonl)."
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write here (a .cypher script, or a .jsonl journal with --from-uri). "
    "Default: the script on stdout.",
)
@click.option("--to-uri", help="Write straight into this Neo4j, in batches.")
@silent_option
@neo4j_options
@friendly_errors
def export(
    store_path: Path | None,
    paths: tuple[Path, ...],
    only: str | None,
    from_uri: str | None,
    output: Path | None,
    to_uri: str | None,
    silent: bool,
    **kwargs: Any,
) -> None:
    """Export a memory: embedded -> Cypher script or Neo4j, Neo4j -> journal.

    The script recreates the memory exactly (schema, entities, every fact,
    current and superseded, with speaker, turn, fact id, sequence numbers and
    validity), runs with `cypher-shell -f` or `ctxneo load`, and lands in
    --namespace (default "default").

    \b
    ctxneo export --store memory.jsonl -o memory.cypher
    ctxneo export --scenarios bench/scenarios --scenario clickstream_etl --to-uri bolt://...
    ctxneo export --from-uri bolt://127.0.0.1:7687 --namespace default -o memory.jsonl
    """
    namespace = kwargs["namespace"]
    if from_uri:
        if output is None:
            raise click.UsageError("--from-uri writes a journal: give -o FILE.jsonl")
        with _connect(from_uri, kwargs, namespace) as source:
            count = write_journal(source, output)
        click.echo(f"wrote {count} facts of namespace {namespace!r} to {output}", err=True)
        return
    if (store_path is None) == (not paths):
        raise click.UsageError("give one source: --store FILE, --scenarios PATH or --from-uri URI")
    sources = list(_sources(store_path, paths, only, namespace))
    if to_uri:
        for store, ns in sources:
            statements = list(cypher_statements(store, ns))
            with _connect(to_uri, kwargs, ns) as target, progress_bar(silent) as bar:
                _refuse_if_in_use(target, to_uri)
                task = bar.add_task(f"writing {ns}", total=len(statements))
                target.execute(statements, progress=lambda t=task: bar.advance(t))
            click.echo(
                f"wrote {store.stats()['facts']} facts to {to_uri}, namespace {ns!r}", err=True
            )
        return
    out = open(output, "w", encoding="utf-8") if output else sys.stdout  # noqa: SIM115
    try:
        for store, ns in sources:
            write_script(cypher_statements(store, ns), out, ns)
    finally:
        if output:
            out.close()
    if output:
        click.echo(f"wrote {output}", err=True)


@click.command()
@click.argument("script", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@silent_option
@connection_options
@friendly_errors
def load(script: Path, silent: bool, **kwargs: Any) -> None:
    """Run a Cypher script (e.g. from `ctxneo export`) against Neo4j, statement by statement.

    The memory lands in the namespace the script was exported for
    (`ctxneo export --namespace`).
    """
    if not kwargs["uri"]:
        raise click.UsageError("give --uri (or NEO4J_URI)")
    text = script.read_text(encoding="utf-8")
    statements = split_statements(text)
    namespace = script_namespace(text)
    with (
        _connect(kwargs["uri"], kwargs, namespace or "default") as target,
        progress_bar(silent) as bar,
    ):
        if namespace is not None:
            _refuse_if_in_use(target, kwargs["uri"])
        task = bar.add_task(f"loading {script.name}", total=len(statements))
        count = target.execute(statements, progress=lambda t=task: bar.advance(t))
    click.echo(f"ran {count} statements from {script}", err=True)


COMMANDS = [export, load]
