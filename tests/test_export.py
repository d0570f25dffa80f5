"""Export and load: embedded -> Cypher -> Neo4j -> journal -> embedded gives the same memory."""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxneo.cli import main
from ctxneo.cli.export_cmds import scenario_store
from ctxneo.export import literal, parse_script, split_statements, write_journal, write_script
from ctxneo.memory import Memory
from ctxneo.model import NewFact
from ctxneo.scenarios import load_suite, shipped_suite
from ctxneo.stores.base import Store
from ctxneo.stores.networkx import NetworkXStore

pytestmark = pytest.mark.neo4j

HOSTILE = [
    "O'Brien",
    'say "hi"',
    "back\\slash",
    "semi; colon",
    "line\nbreak",
    "tab\there",
    "名前 ünï ✓",
    "x'}) MATCH (n) DETACH DELETE n //",
    "`tick`",
    "$param",
    "/* not a comment */",
    "emoji 🚀",
    "\u2028sep",
    "end\\",
]
names = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12).filter(str.strip),
)
predicates = st.sampled_from(["OWNED_BY", "DEPENDS_ON", "HAS_STATUS", "assigned_to", "X1"])
fact_lists = st.lists(
    st.tuples(names, predicates, names, st.none() | names), min_size=1, max_size=12
)


def snapshot(store: Store) -> dict[str, Any]:
    return {
        "facts": [f.to_dict() for f in store.all_facts()],
        "multi": sorted(store.multi_valued()),
        "aliases": store.aliases(),
        "stats": store.stats(),
    }


def through_neo4j(source: Store, server: Any, tmp_path: Path) -> tuple[Store, NetworkXStore]:
    """Export ``source`` as a script, load it into a fresh namespace, bring it back as a journal.

    Half the time the script's text is run as cypher-shell would run it; else
    ``ctxneo load``'s way: parsed as data and written in one transaction.
    """
    from conftest import connect

    namespace = f"export-{uuid.uuid4().hex}"
    script = io.StringIO()
    write_script(source.image(), script, namespace)
    neo = connect(server, namespace)
    if uuid.uuid4().int % 2:
        with neo._driver.session() as session:  # type: ignore[attr-defined]
            for statement in split_statements(script.getvalue()):
                session.run(statement).consume()
            session.run("CALL db.awaitIndexes(120)").consume()
    else:
        named, image = parse_script(script.getvalue())
        assert named == namespace
        neo.load(image)  # type: ignore[attr-defined]
    journal = tmp_path / f"{namespace}.jsonl"
    write_journal(neo.image(), journal)
    return neo, NetworkXStore(journal)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(facts=fact_lists)
def test_round_trip_keeps_every_fact_and_answer(
    facts: list[Any], neo4j_server: Any, tmp_path: Path
) -> None:
    source = NetworkXStore()
    source.declare_multi_valued(["DEPENDS_ON"])
    source.add_alias("the hostile one", facts[0][0])
    for s, p, o, speaker in facts:
        source.remember(NewFact(s, p, o, speaker))
    if len(facts) > 2:
        source.retract(facts[1][0], facts[1][1])
    neo, back = through_neo4j(source, neo4j_server, tmp_path)
    try:
        assert snapshot(neo) == snapshot(source)
        assert snapshot(back) == snapshot(source)
        for s, p, _, _ in facts:
            assert back.history(s, p) == source.history(s, p)
            question = f"What is the {p.lower().replace('_', ' ')} of {s}?"
            expected = Memory(source).ask(question)
            for other in (neo, back):
                got = Memory(other).ask(question)
                assert (got.answer, got.evidence) == (expected.answer, expected.evidence)
    finally:
        neo.clear()
        neo.close()


def test_every_shipped_scenario_survives_the_round_trip(neo4j_server: Any, tmp_path: Path) -> None:
    for scenario in load_suite(shipped_suite()):
        source = scenario_store(scenario)
        neo, back = through_neo4j(source, neo4j_server, tmp_path)
        try:
            assert snapshot(neo) == snapshot(source) == snapshot(back), scenario.name
            for turn in scenario.turns:
                if turn.turn_type == "query":
                    a = Memory(source).ask(turn.text, speaker=turn.speaker)
                    b = Memory(back).ask(turn.text, speaker=turn.speaker)
                    assert (a.answer, a.evidence) == (b.answer, b.evidence)
        finally:
            neo.clear()
            neo.close()


def test_literals_escape_everything_that_could_end_a_string() -> None:
    assert literal('O\'Brien \\ "x"\n') == "'O\\'Brien \\\\ \"x\"\\n'"
    assert literal("\x00\u2028") == "'\\u0000\\u2028'"
    assert literal(["a", 1, None, True]) == "['a', 1, null, true]"
    assert split_statements("RETURN ';' AS a; // x; y\nRETURN 'it\\'s; ok' /* ; */;") == [
        "RETURN ';' AS a",
        "RETURN 'it\\'s; ok'",
    ]


def cli_for(server: Any) -> CliRunner:
    """A CLI runner that reaches ``server`` only through the options a test passes."""
    return CliRunner(
        env={"NEO4J_URI": None, "NEO4J_USER": server.user, "NEO4J_PASSWORD": server.password}
    )


def test_cli_export_load_and_back(neo4j_server: Any, tmp_path: Path) -> None:
    journal = tmp_path / "m.jsonl"
    with Memory.open(journal) as m:
        m.remember("Svc; DROP", "OWNED_BY", "Team 'A'", speaker="Agent\nX")
        m.remember("Svc; DROP", "OWNED_BY", "Team B")
    namespace = f"cli-{uuid.uuid4().hex}"
    script = tmp_path / "m.cypher"
    runner = cli_for(neo4j_server)
    result = runner.invoke(
        main, ["export", "--store", str(journal), "--namespace", namespace, "-o", str(script)]
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["load", str(script), "--uri", neo4j_server.uri, "--silent"])
    assert result.exit_code == 0, result.output
    back = tmp_path / "back.jsonl"
    result = runner.invoke(
        main, ["export", "--from-uri", neo4j_server.uri, "--namespace", namespace, "-o", str(back)]
    )
    assert result.exit_code == 0, result.output
    with Memory.open(journal) as a, Memory.open(back) as b:
        assert list(a.store.all_facts()) == list(b.store.all_facts())
    history = json.loads(
        runner.invoke(
            main,
            ["history", "Svc; DROP", "--uri", neo4j_server.uri, "--namespace", namespace, "--json"],
        ).output
    )
    assert [f["object"] for f in history["facts"]] == ["Team 'A'", "Team B"]
    Memory.open(
        uri=neo4j_server.uri,
        user=neo4j_server.user,
        password=neo4j_server.password,
        namespace=namespace,
    ).store.clear()


def test_load_refuses_a_namespace_that_already_holds_a_memory(
    neo4j_server: Any, tmp_path: Path
) -> None:
    from conftest import connect

    namespace = f"busy-{uuid.uuid4().hex}"
    journal = tmp_path / "m.jsonl"
    with Memory.open(journal) as m:
        m.remember("A", "OWNED_BY", "B")
    script = tmp_path / "m.cypher"
    runner = cli_for(neo4j_server)
    assert (
        runner.invoke(
            main, ["export", "--store", str(journal), "--namespace", namespace, "-o", str(script)]
        ).exit_code
        == 0
    )
    assert (
        runner.invoke(main, ["load", str(script), "--uri", neo4j_server.uri, "--silent"]).exit_code
        == 0
    )
    again = runner.invoke(main, ["load", str(script), "--uri", neo4j_server.uri, "--silent"])
    assert again.exit_code == 1 and "already holds a memory" in again.stderr
    store = connect(neo4j_server, namespace)
    assert store.stats()["facts"] == 1  # nothing was duplicated
    store.clear()
    store.close()


def test_export_of_an_empty_namespace_says_so_and_lists_the_others(
    neo4j_server: Any, tmp_path: Path
) -> None:
    from conftest import connect

    here = connect(neo4j_server, f"here-{uuid.uuid4().hex}")
    here.remember(NewFact("A", "OWNED_BY", "B"))
    out = tmp_path / "out.jsonl"
    result = cli_for(neo4j_server).invoke(
        main,
        ["export", "--from-uri", neo4j_server.uri, "--namespace", "nosuchns", "-o", str(out)],
    )
    here.clear()
    here.close()
    assert result.exit_code == 1
    assert "namespace 'nosuchns'" in result.output and "holds no memory" in result.output
    # (the server may hold other tests' namespaces too: the list names them all)
    listed = result.output.split("namespaces there: ", 1)[1]
    assert repr(here.namespace) in listed
    assert not out.exists()


def test_scenarios_load_into_one_namespace_each_and_a_busy_one_stops_the_rest(
    neo4j_server: Any,
) -> None:
    from conftest import connect

    base = f"suite-{uuid.uuid4().hex[:8]}"
    runner = cli_for(neo4j_server)
    args = ["export", "--scenarios", "bench/scenarios/01_mobile_release_planning.json"]
    args += ["--scenarios", "bench/scenarios/02_reef_literature_review.json"]
    args += ["--to-uri", neo4j_server.uri, "--namespace", base, "--silent"]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    again = runner.invoke(main, args)
    assert again.exit_code == 1 and "already holds a memory" in again.output
    for name in ("mobile_release_planning", "reef_literature_review"):
        store = connect(neo4j_server, f"{base}/{name}")
        source = scenario_store(next(s for s in load_suite(["bench/scenarios"]) if s.name == name))
        assert snapshot(store) == snapshot(source)  # loaded once, not twice
        store.clear()
        store.close()
