"""``ctxneo bench``: the three architectures side by side, and the token scaling run."""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ctxneo.cli.group import CtxneoGroup
from ctxneo.cli.lazy import lazy_module
from ctxneo.cli.options import (
    Integer,
    check_plot,
    connection_options,
    emit_json,
    friendly_errors,
    json_option,
    markdown_option,
    min_confidence_option,
    neo4j_options,
    plot_option,
    silent_option,
)
from ctxneo.errors import DatasetError
from ctxneo.memory import Memory
from ctxneo.model import Scenario
from ctxneo.scenarios import load_suite, shipped_suite

if TYPE_CHECKING:
    from rich.progress import Progress

# Imported when a command runs: listing the commands needs none of them.
diagnose = lazy_module("ctxneo.bench.diagnose")
durability = lazy_module("ctxneo.bench.durability")
harness = lazy_module("ctxneo.bench.harness")
kgqa = lazy_module("ctxneo.bench.kgqa")
reliability = lazy_module("ctxneo.bench.reliability")
report = lazy_module("ctxneo.bench.report")
scale = lazy_module("ctxneo.bench.scale")
token_scaling = lazy_module("ctxneo.bench.token_scaling")

BACKENDS = ("networkx", "neo4j", "all")


class _Seconds(click.FloatRange):
    """A FloatRange that also refuses nan (every comparison with nan is false)."""

    def convert(self, value: object, param: Any, ctx: Any) -> Any:
        seconds = super().convert(value, param, ctx)
        if seconds != seconds:
            self.fail("nan is not a number of seconds", param, ctx)
        return seconds


FINITE_SECONDS = _Seconds(1, 3600)

#: bench scale sizes: a workload needs a few hundred facts, and ten million is
#: already minutes of ingest and gigabytes of memory on a laptop.
MIN_SCALE_FACTS = 100
MAX_SCALE_FACTS = 10_000_000


def _architectures(value: str) -> list[str]:
    archs = [a.strip() for a in value.split(",") if a.strip()]
    unknown = [a for a in archs if a not in harness.ARCHITECTURES]
    if unknown or not archs:
        raise click.BadParameter(
            f"unknown architecture {', '.join(unknown) or value!r}; "
            f"choose from {','.join(harness.ARCHITECTURES)}",
            param_hint="--arch",
        )
    return archs


def memory_factories(backend: str, neo4j: dict[str, Any]) -> dict[str, harness.MemoryFactory]:
    """Fresh, empty memories per scenario on the chosen backend(s)."""
    factories: dict[str, harness.MemoryFactory] = {}
    if backend in ("networkx", "all"):
        factories["networkx"] = lambda scenario: Memory.open()
    if backend in ("neo4j", "all"):
        if not neo4j.get("uri"):
            raise click.UsageError(
                "--backend neo4j needs --uri (or NEO4J_URI); start a server with "
                "`ctxneo neo4j start`"
            )
        run = uuid.uuid4().hex[:8]

        def make(scenario: Scenario) -> Memory:
            memory = Memory.open(
                uri=neo4j["uri"],
                user=neo4j["user"],
                password=neo4j["password"],
                database=neo4j["database"],
                namespace=f"{neo4j['namespace']}/bench-{run}/{scenario.name}",
            )
            memory.store.clear()
            return memory

        factories["neo4j"] = make
    return factories


class LineProgress:
    """Progress for a stderr that is no terminal (a log, a CI job): a line at each tenth
    of a task, where a drawn bar shows nothing at all. The calls are the bar's."""

    def __init__(self) -> None:
        self._tasks: list[list[Any]] = []  # [description, total, done, tenths shown]
        self._started = time.monotonic()

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def add_task(self, description: str, total: float | None = None, **_: Any) -> int:
        self._tasks.append([description, total or 0, 0, 0])
        return len(self._tasks) - 1

    def advance(self, task: int, advance: float = 1) -> None:
        t = self._tasks[task]
        t[2] += advance
        tenths = int(10 * t[2] / t[1]) if t[1] else 0
        if tenths > t[3]:
            t[3] = tenths
            took = time.monotonic() - self._started
            click.echo(
                f"{t[0]}: {t[2]:g}/{t[1]:g} ({min(tenths, 10) * 10}%), {took:.0f} s", err=True
            )

    def update(self, task: int, **_: Any) -> None:
        return None


def progress_bar(silent: bool) -> Progress | LineProgress:
    if not silent and not sys.stderr.isatty():
        return LineProgress()
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        disable=silent,
        transient=True,
    )


@click.group(cls=CtxneoGroup, invoke_without_command=True)
@click.option(
    "--scenarios",
    "paths",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Scenario file or directory (repeatable). Default: the shipped suite.",
)
@click.option(
    "--arch",
    "arch",
    default="raw,rag,graph",
    show_default=True,
    help="Architectures to run, comma-separated: raw, rag, graph.",
)
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default="networkx",
    show_default=True,
    help="Store(s) the context graph runs on; 'all' also reports answers that differ.",
)
@click.option(
    "--unanswerable/--no-unanswerable",
    default=True,
    show_default=True,
    help="Also ask every graded query of its unanswerable variant (the facts it needs unsaid) "
    "and report the false-answer rate.",
)
@min_confidence_option(
    "Passed to the context graph: answer only at or above this confidence "
    "(default: the answerer's own, 2/3)."
)
@click.option("--details", is_flag=True, help="Also print every query's answer.")
@click.option(
    "--diagnose",
    is_flag=True,
    help="Also print the graph's answer funnel per query type: anchors linked (recall@1, @5), "
    "a reading through the required facts among the candidates (recall@1, @10, mean rank), "
    "a reading that answers right (right@1, @10), those of right@1 withheld below the "
    "threshold, the answer's form, "
    "the grade. Keys are read only to grade.",
)
@click.option(
    "--calibration",
    is_flag=True,
    help="Also print the graph's reliability table and coverage/accuracy trade-off.",
)
@plot_option("accuracy by query type and tokens per query")
@silent_option
@markdown_option
@neo4j_options
@json_option
@click.pass_context
@friendly_errors
def bench(
    ctx: click.Context,
    paths: tuple[Path, ...],
    arch: str,
    backend: str,
    unanswerable: bool,
    min_confidence: float | None,
    details: bool,
    diagnose: bool,
    calibration: bool,
    plot_path: Path | None,
    force_plot: bool,
    silent: bool,
    markdown: bool,
    as_json: bool,
    **neo4j: Any,
) -> None:
    """Run the benchmark: raw transcript dump vs TF-IDF RAG vs context graph.

    Every scenario's turns are fed in order; each query is answered by each
    architecture from its own memory and graded against the ground truth
    (case-insensitive substring). The graph sees only the question text.

    Each graded query is also asked of its unanswerable variant (every fact
    of the (subject, predicate) keys it needs said as chatter instead), where
    only UNKNOWN is right: the false-answer rate. Evidence recall is the share
    of graded queries whose required facts are all in the context sent, at
    k = 1, 3 and 10 and within 50, 100, 200 and 400 tokens.

    \b
    ctxneo bench                                         # the shipped suite
    ctxneo bench --scenarios ../shared/seed/scenarios.json --json
    ctxneo bench --calibration --min-confidence 0        # the whole coverage curve
    ctxneo bench --backend all --uri bolt://127.0.0.1:7687
    """
    if ctx.invoked_subcommand is not None:
        return
    check_plot(plot_path, force_plot)
    archs = _architectures(arch)
    scenarios = load_suite(paths or shipped_suite())  # validated whole before anything runs
    factories = memory_factories(backend, neo4j) if "graph" in archs else {}
    per_scenario = sum(len(factories) if a == "graph" else 1 for a in archs)
    total = harness.count_runs(scenarios, unanswerable) * per_scenario
    with progress_bar(silent) as progress:
        task = progress.add_task("answering", total=total)
        records = harness.run_suite(
            scenarios,
            archs,
            factories,
            progress=lambda n: progress.advance(task, n),
            unanswerable=unanswerable,
            min_confidence=min_confidence,
            diagnose=diagnose,
        )
    summary = harness.summarize(records)
    funnels = diagnose_funnels(records) if diagnose else {}
    calibrated = reliability.calibration(records)
    differing = harness.disagreements(records)
    if plot_path is not None:
        report.plot(summary, plot_path)
    if as_json:
        doc: dict[str, Any] = {
            "summary": summary,
            "calibration": calibrated,
            "queries": [r.to_dict() for r in records],
        }
        if diagnose:
            doc["funnel"] = funnels
        if len(factories) > 1:
            doc["backend_disagreements"] = differing
        emit_json(doc)
        return
    if markdown:
        click.echo(report.summary_markdown(summary))
        click.echo("\n" + report.evidence_markdown(summary))
        if calibration and calibrated:
            click.echo("\n" + report.calibration_markdown(calibrated))
        for backend_name, rows in funnels.items():
            click.echo(f"\nAnswer funnel ({backend_name}):\n\n" + report.funnel_markdown(rows))
        if len(factories) > 1:
            click.echo(f"\nAnswers that differ between backends: {len(differing)}")
        return
    console = report.console()
    if details:
        console.print(report.details_table(records))
    names = ", ".join(sorted({str(p) for p in paths})) if paths else "shipped suite"
    console.print(report.summary_table(summary, f"{len(scenarios)} scenarios from {names}"))
    console.print(report.evidence_table(summary))
    if calibration:
        for table in report.calibration_tables(calibrated):
            console.print(table)
    for backend_name, rows in funnels.items():
        console.print(report.funnel_table(rows, f"answer funnel ({backend_name})"))
    if len(factories) > 1:
        console.print(f"answers that differ between backends: {len(differing)}")
        for d in differing:
            console.print(f"  {d['scenario']} turn {d['turn_id']}: {d['answers']}")
    if plot_path is not None:
        console.print(f"plot written to {plot_path}")


@bench.command("tokens")
@click.option(
    "--filler",
    default=",".join(map(str, token_scaling.FILLER_COUNTS)),
    show_default=True,
    help="Filler-turn counts, comma-separated.",
)
@markdown_option
@json_option
@friendly_errors
def tokens_cmd(filler: str, markdown: bool, as_json: bool) -> None:
    """Tokens per query as the conversation grows: one fact, N filler turns, one question."""
    try:
        counts = [int(x) for x in filler.split(",") if x.strip()]
    except ValueError as e:
        raise click.BadParameter("expected integers like 10,50,100", param_hint="--filler") from e
    if len(counts) < 2 or any(c < 1 for c in counts):
        raise click.BadParameter("give at least two positive counts", param_hint="--filler")
    result = token_scaling.measure(counts)
    if as_json:
        emit_json(result)
        return
    g = result["growth"]
    summary = (
        f"Conversation grew {result['conversation_growth']}x: raw dump tokens grew "
        f"{g['raw']}x, vector RAG {g['rag']}x, context graph {g['graph']}x."
    )
    if markdown:
        click.echo("| filler turns | raw dump | vector RAG | context graph |\n|---|---|---|---|")
        for row in result["rows"]:
            click.echo(
                f"| {row['filler_turns']:,} | {row['raw']:,} | {row['rag']:,} | {row['graph']:,} |"
            )
        click.echo(f"\n{summary}")
        return
    from rich.table import Table

    table = Table(title="Tokens per query vs conversation length", title_justify="left")
    for column in ("Filler turns", "Raw dump", "Vector RAG", "Context graph"):
        table.add_column(column, justify="right")
    for row in result["rows"]:
        table.add_row(
            f"{row['filler_turns']:,}", f"{row['raw']:,}", f"{row['rag']:,}", f"{row['graph']:,}"
        )
    console = report.console()
    console.print(table)
    console.print(summary)


COMMANDS: list[Callable[..., Any]] = [bench]


def diagnose_funnels(records: list[harness.QueryRecord]) -> dict[str, list[dict[str, Any]]]:
    """The answer funnel of each backend the graph ran on."""
    backends = sorted({r.backend for r in records if r.architecture == "graph"})
    return {
        b: diagnose.funnel([r for r in records if r.architecture == "graph" and r.backend == b])
        for b in backends
    }


@bench.command("scale")
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default="networkx",
    show_default=True,
    help="Store(s) to measure.",
)
@click.option(
    "--facts",
    "sizes",
    default=",".join(map(str, scale.SIZES)),
    show_default=True,
    help="Memory sizes in facts, comma-separated.",
)
@plot_option("ingest rate and answer latency against size")
@markdown_option
@silent_option
@neo4j_options
@json_option
@friendly_errors
def scale_cmd(
    backend: str,
    sizes: str,
    plot_path: Path | None,
    force_plot: bool,
    markdown: bool,
    silent: bool,
    as_json: bool,
    **neo4j: Any,
) -> None:
    """Ingest rate, answer latency and memory as the memory grows to a million facts.

    A deterministic synthetic workload (services, teams, clusters; single- and
    multi-valued predicates; ~10% re-statements) is written at each size and
    asked direct and two-hop questions in words; the workload knows the right
    answers. Embedded sizes each run in a fresh process.
    """
    check_plot(plot_path, force_plot)
    try:
        counts = [int(x.replace("_", "")) for x in sizes.split(",") if x.strip()]
    except ValueError as e:
        raise click.BadParameter("expected integers like 1000,10000", param_hint="--facts") from e
    if not counts or not all(MIN_SCALE_FACTS <= c <= MAX_SCALE_FACTS for c in counts):
        raise click.BadParameter(
            f"each size must be from {MIN_SCALE_FACTS:,} to {MAX_SCALE_FACTS:,} facts",
            param_hint="--facts",
        )
    backends = ["networkx", "neo4j"] if backend == "all" else [backend]
    connect = None
    if "neo4j" in backends:
        if not neo4j.get("uri"):
            raise click.UsageError("--backend neo4j needs --uri (or NEO4J_URI)")

        def connect(namespace: str) -> Memory:
            return Memory.open(
                uri=neo4j["uri"],
                user=neo4j["user"],
                password=neo4j["password"],
                database=neo4j["database"],
                namespace=namespace,
            )

    def note(message: str) -> None:
        if not silent:
            click.echo(f"measuring {message}...", err=True)

    result = scale.run(counts, backends, connect, progress=note)
    if plot_path is not None:
        report.plot_scale(result["rows"], plot_path)
    if as_json:
        emit_json(result)
        return
    if markdown:
        click.echo(report.scale_markdown(result))
        return
    report.console().print(report.scale_table(result))


def _hops(value: str | None) -> list[int] | None:
    if value is None:
        return None
    try:
        hops = sorted({int(x) for x in value.split(",") if x.strip()})
    except ValueError as e:
        raise click.BadParameter("expected hop counts like 1,2,3", param_hint="--hops") from e
    if not hops or any(h < 1 for h in hops):
        raise click.BadParameter("give positive hop counts like 1,2,3", param_hint="--hops")
    return hops


@bench.command("kgqa")
@click.option(
    "--kb",
    "kb_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Knowledge base: one head|relation|tail fact per line.",
)
@click.option(
    "--questions",
    "question_paths",
    required=True,
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Questions (repeatable): JSON lines (hop, question, entity, answers) "
    "or MetaQA's question<TAB>answer|answer lines.",
)
@click.option("--hops", default=None, help="Hop counts to ask, comma-separated (default: all).")
@click.option("--limit", type=Integer(min=1), default=None, help="Ask at most N questions per hop.")
@click.option(
    "--topic-given",
    is_flag=True,
    help="Also pass the bracketed topic entity as ask(topic=...) (reported as its own mode).",
)
@min_confidence_option(
    "Passed to every ask: answer only at or above this confidence (default: the "
    "answerer's own, 2/3; 0 answers every question, as Hits@1 is usually reported)."
)
@click.option(
    "--backend",
    type=click.Choice(["networkx", "neo4j"]),
    default="networkx",
    show_default=True,
    help="Store to load the KB into (neo4j: the namespace given, which must hold nothing, "
    "so that no memory is cleared by mistake; the table adds round trips per answer).",
)
@markdown_option
@silent_option
@neo4j_options
@json_option
@friendly_errors
def kgqa_cmd(
    kb_path: Path,
    question_paths: tuple[Path, ...],
    hops: str | None,
    limit: int | None,
    topic_given: bool,
    min_confidence: float | None,
    backend: str,
    markdown: bool,
    silent: bool,
    as_json: bool,
    **neo4j: Any,
) -> None:
    """Answer an external knowledge-graph benchmark (MetaQA) from a memory (embedded by
    default; `--backend neo4j` loads it into the Neo4j namespace given, which must hold
    nothing).

    Loads the knowledge base (every relation multi-valued, batched writes),
    asks each question with the brackets around its topic entity removed,
    and grades Hits@1 (the first value listed is a gold answer), F1 over the
    values listed and the UNKNOWN rate, per hop and per question type (the
    KB relation path from the topic to the gold answers, found after
    answering), with p50/p95 latency per hop.

    \b
    ctxneo bench kgqa --kb kb.txt --questions dev_sample.jsonl --limit 200
    ctxneo bench kgqa --kb kb.txt --questions 2-hop/qa_dev.txt --topic-given
    ctxneo bench kgqa --kb kb.txt --questions dev_sample.jsonl --min-confidence 0
    """
    chosen = _hops(hops)
    try:
        facts = kgqa.read_kb(kb_path)
        read = [q for path in question_paths for q in kgqa.read_questions(path, chosen)]
    except DatasetError as e:  # a malformed input file: exit 2, as for scenario files
        click.echo(f"Error: {e}", err=True)
        sys.exit(2)
    questions = kgqa.select(read, chosen, limit)
    if not questions:
        found = sorted({q.hop for q in read})
        raise click.UsageError(f"no questions with hop count {hops} (the files have {found})")
    if topic_given and (missing := next((q for q in questions if not q.entity), None)):
        raise click.UsageError(f"--topic-given: {missing.source} names no topic entity")
    mode = "topic" if topic_given else "words"
    shown = kgqa.MODES[mode] + (
        "" if min_confidence is None else f", answering at confidence ≥ {min_confidence:g}"
    )
    if backend == "neo4j" and not neo4j.get("uri"):
        raise click.UsageError("--backend neo4j needs --uri (or NEO4J_URI)")
    opened = (
        Memory.open(
            uri=neo4j["uri"],
            user=neo4j["user"],
            password=neo4j["password"],
            database=neo4j["database"],
            namespace=neo4j["namespace"],
        )
        if backend == "neo4j"
        else Memory.open()
    )
    with opened as memory:
        if backend == "neo4j" and memory.stats()["facts"]:
            raise click.UsageError(
                f"namespace {neo4j['namespace']!r} already holds a memory: give an unused "
                "--namespace (the benchmark loads the KB into it and clears it after)"
            )
        try:
            records, loaded = _kgqa_run(
                memory, facts, questions, topic_given, mode, min_confidence, silent
            )
        finally:
            if backend == "neo4j":
                memory.clear()
    _kgqa_report(records, loaded, mode, shown, min_confidence, kb_path, markdown, as_json)


def _kgqa_run(
    memory: Memory,
    facts: list[Any],
    questions: list[Any],
    topic_given: bool,
    mode: str,
    min_confidence: float | None,
    silent: bool,
) -> tuple[list[Any], dict[str, Any]]:
    """Load the KB into ``memory`` and ask every question, with progress."""
    with progress_bar(silent) as progress:
        task = progress.add_task("loading the KB", total=len(facts))
        loaded = kgqa.load(memory, facts, progress=lambda n: progress.advance(task, n))
        # As a long-lived client does: the store's copy of the names is read before the
        # first question, not in it (and shown beside the load).
        started = time.perf_counter()
        memory.warm()
        loaded["warm_s"] = round(time.perf_counter() - started, 3)
        progress.update(task, visible=False)
        typer = kgqa.PathTyper(facts)
        del facts
        task = progress.add_task(f"asking ({kgqa.MODES[mode]})", total=len(questions))
        records = kgqa.ask_all(
            memory,
            questions,
            topic_given=topic_given,
            typer=typer,
            progress=lambda n: progress.advance(task, n),
            min_confidence=min_confidence,
        )
    return records, loaded


def _kgqa_report(
    records: list[Any],
    loaded: dict[str, Any],
    mode: str,
    shown: str,
    min_confidence: float | None,
    kb_path: Path,
    markdown: bool,
    as_json: bool,
) -> None:
    summary = kgqa.summarize(records)
    if as_json:
        emit_json(
            {
                "mode": mode,
                "min_confidence": min_confidence,
                "kb": {"path": str(kb_path), **loaded},
                **summary,
                "questions": [r.to_dict() for r in records],
            }
        )
        return
    if markdown:
        click.echo(report.kgqa_markdown(summary, loaded, shown))
        return
    console = report.console()
    for table in report.kgqa_tables(summary, loaded, shown):
        console.print(table)


@bench.command("reliability")
@click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default="networkx",
    show_default=True,
    help="Store(s) to put under faults (networkx: the journal).",
)
@click.option(
    "--writers",
    default=4,
    show_default=True,
    type=Integer(2, 64),
    help="Writers at once: processes on the journal, threads (each its own driver) on Neo4j.",
)
@click.option(
    "--seconds",
    default=8.0,
    show_default=True,
    type=FINITE_SECONDS,
    help="How long each fault run writes (1-3600).",
)
@click.option(
    "--updates",
    default=12_000,
    show_default=True,
    type=Integer(10, 10_000_000),
    help="How many times the one hot key is written in the history measurement.",
)
@markdown_option
@silent_option
@connection_options
@json_option
@friendly_errors
def reliability_cmd(
    backend: str,
    writers: int,
    seconds: float,
    updates: int,
    markdown: bool,
    silent: bool,
    as_json: bool,
    **neo4j: Any,
) -> None:
    """Put writers under injected faults and count what survives.

    Faults: kill -9, a real EFBIG, ENOSPC, fork() and, on Neo4j, cut
    connections and an outage. Prints writers, writes, faults injected, and what must be zero:
    acknowledged writes lost, duplicates, refused writes stored, partial
    batches, keys with two current values; then fsync costs and the cost of a
    key with a long history. See bench/durability.py for each fault.
    """
    backends = ["networkx", "neo4j"] if backend == "all" else [backend]
    connect = target = None
    if "neo4j" in backends:
        from urllib.parse import urlparse

        from ctxneo.neo4j_uri import check_uri
        from ctxneo.stores.neo4j import Neo4jStore

        uri = neo4j.get("uri")
        if not uri:
            raise click.UsageError("--backend neo4j needs --uri (or NEO4J_URI)")
        parsed = urlparse(check_uri(uri))
        target = (parsed.hostname or "127.0.0.1", parsed.port or 7687)

        def connect(at: str, namespace: str, timeout: float) -> Neo4jStore:
            return Neo4jStore(
                at,
                user=neo4j["user"],
                password=neo4j["password"],
                database=neo4j["database"],
                namespace=namespace,
                timeout=timeout,
            ).connect()

    def note(message: str) -> None:
        if not silent:
            click.echo(f"running {message}...", err=True)

    result = durability.run(
        backends,
        writers=writers,
        seconds=seconds,
        connect=connect,
        neo4j_target=target,
        updates=updates,
        progress=note,
    )
    if as_json:
        emit_json(result)
    elif markdown:
        click.echo(durability.markdown(result))
    else:
        report.console().print(durability.table(result))
        if costs := durability.costs_markdown(result):
            click.echo(costs)
    if not result["all_zero"]:
        raise click.ClickException("a reliability check failed (see above)")
