"""export and load on the command line, where no Neo4j is needed: options, files, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ctxneo.cli import main
from ctxneo.export import parse_script
from ctxneo.memory import Memory

NOWHERE = "bolt://127.0.0.1:9"  # nothing listens: a command that connects fails


def run(*args: str) -> Result:
    return CliRunner(env={"NEO4J_URI": None, "CTXNEO_NAMESPACE": None}).invoke(main, list(args))


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    path = tmp_path / "m.jsonl"
    with Memory.open(path) as m:
        m.remember("Ticket_4471", "HAS_PRIORITY", "high", speaker="Agent_Intake", turn_id=1)
        m.remember("Ticket_4471", "HAS_PRIORITY", "critical", speaker="Agent_Specialist", turn_id=7)
        m.alias("the ticket", "Ticket_4471")
    return path


def script_of(journal: Path, tmp_path: Path, namespace: str = "demo") -> Path:
    out = tmp_path / "m.cypher"
    result = run("export", "--store", str(journal), "--namespace", namespace, "-o", str(out))
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--uri", NOWHERE], "Did you mean one of: '--from-uri', '--to-uri'"),
        (["--scenario", "x"], "--scenario does nothing without --scenarios"),
        (["--force"], "--force does nothing without -o"),
        (["--password", "p"], "--password does nothing without --from-uri or --to-uri"),
        (["-o", "x.txt"], "name a Cypher script (.cypher) or a journal (.jsonl)"),
        (["-o", "x.cypher", "--to-uri", NOWHERE], "give one destination"),
        (["--from-uri", NOWHERE], "give one source"),
    ],
)
def test_export_refuses_options_it_would_not_use(
    journal: Path, args: list[str], message: str
) -> None:
    result = run("export", "--store", str(journal), *args)
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_export_never_overwrites_a_file_without_force(journal: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.cypher"
    out.write_text("precious\n")
    result = run("export", "--store", str(journal), "-o", str(out))
    assert result.exit_code == 1 and "already exists: give --force" in result.output
    assert out.read_text() == "precious\n"
    assert run("export", "--store", str(journal), "-o", str(out), "--force").exit_code == 0
    assert parse_script(out.read_text())[1].last_seq == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.jsonl", "out.cypher"]  # no temp left


def test_export_to_a_journal_and_the_script_round_trip(journal: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.jsonl"
    assert run("export", "--store", str(journal), "-o", str(copy)).exit_code == 0
    script = script_of(journal, tmp_path)
    with Memory.open(journal) as a, Memory.open(copy) as b:
        assert list(a.store.all_facts()) == list(b.store.all_facts())
        namespace, image = parse_script(script.read_text())
        assert namespace == "demo" and image == a.store.image()
    one = tmp_path / "one.jsonl"
    result = run(
        "export", "--scenarios", "bench/scenarios", "--scenario", "clickstream_etl", "-o", str(one)
    )
    assert result.exit_code == 0, result.output
    with Memory.open(one) as m:
        assert m.stats()["facts"] > 5


def test_an_export_reads_and_never_creates_the_journal(tmp_path: Path) -> None:
    missing = tmp_path / "absent" / "m.jsonl"
    result = run("export", "--store", str(missing))
    assert result.exit_code == 1 and "no memory at" in result.output
    assert not missing.parent.exists()


HOSTILE_STATEMENTS = [
    "MATCH (n) DETACH DELETE n",
    "LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line",
    "CALL apoc.load.json('http://example.com/x') YIELD value RETURN value",
    "MATCH (e:Entity {ns: 'other'}) DETACH DELETE e",
    "UNWIND [{`name`: 'x', `search`: 'y', `aliases`: []}] AS e MERGE (n:Entity {ns: 'demo', "
    "name: e.name}) SET n.search = e.search, n.aliases = e.aliases WITH n MATCH (m) DELETE m",
    "UNWIND [{`name`: 'x', `search`: 'y', `aliases`: []}] AS e MERGE (n:Entity {ns: 'elsewhere', "
    "name: e.name}) SET n.search = e.search, n.aliases = e.aliases",
]


@pytest.mark.parametrize("statement", HOSTILE_STATEMENTS)
def test_load_refuses_a_script_with_anything_an_export_does_not_write(
    journal: Path, tmp_path: Path, statement: str
) -> None:
    script = script_of(journal, tmp_path)
    script.write_text(script.read_text() + statement + ";\n")
    result = run("load", str(script), "--to-uri", NOWHERE)
    assert result.exit_code == 2, result.output
    assert "not a statement `ctxneo export` writes" in result.output
    assert "nothing was run" in result.output and "cannot reach" not in result.output


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.replace("// format: ctxneo-cypher/2", "// format: other"), "does not start"),
        (lambda t: "RETURN 1;\n" + t, "neither a ctxneo journal nor a script"),
        (lambda t: t.replace("`seq`: 2", "`seq`: 1"), "not above"),
        (lambda t: t.replace("`turn_id`: 7", "`turn_id`: 9223372036854775808"), "turn_id"),
        (lambda t: t.replace("'critical'", "'crit' + 'ical'"), "not a statement"),
        (lambda t: t.replace("`speaker`: 'Agent_Intake'", "`speaker`: null, `x`: 1"), "rows"),
        (lambda t: t.replace("'high'", "'" + "h" * 5000 + "'"), "4,096"),
    ],
)
def test_load_refuses_a_damaged_or_invalid_script_before_connecting(
    journal: Path, tmp_path: Path, change: object, message: str
) -> None:
    script = script_of(journal, tmp_path)
    script.write_text(change(script.read_text()))  # type: ignore[operator]
    result = run("load", str(script), "--to-uri", NOWHERE)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_load_refuses_a_file_of_another_kind(tmp_path: Path) -> None:
    for content in ('{"format": "ctxneo-scenarios/1"}\n', "", "\x00\xff binary", "[" * 5000):
        path = tmp_path / "f"
        path.write_text(content, encoding="utf-8", errors="surrogateescape")
        result = run("load", str(path), "--to-uri", NOWHERE)
        assert result.exit_code == 2 and "Error:" in result.output, result.output


def test_load_refuses_a_damaged_journal_naming_the_line(journal: Path) -> None:
    lines = journal.read_text().splitlines()
    record = json.loads(lines[2])
    record["records"][1]["seq"] = 1  # a second fact #1
    lines[2] = json.dumps(record)
    journal.write_text("\n".join(lines) + "\n")
    result = run("load", str(journal), "--to-uri", NOWHERE)
    assert result.exit_code == 2 and "line 3" in result.output and "not above" in result.output
