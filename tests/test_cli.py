"""The command line, driven with CliRunner: exit codes, --json, help everywhere, clean errors."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from ctxneo.cli import main


def run(*args: str, code: int = 0) -> Result:
    # Stores come from the arguments only, never from the caller's environment.
    env = {"NEO4J_URI": None, "CTXNEO_STORE": None, "CTXNEO_NAMESPACE": None}
    result = CliRunner(env=env).invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def all_commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for name, command in group.commands.items():
        out.append((*prefix, name))
        if isinstance(command, click.Group):
            out += all_commands(command, (*prefix, name))
    return out


@pytest.mark.parametrize("command", all_commands(main), ids=" ".join)
def test_every_command_has_help(command: tuple[str, ...]) -> None:
    result = run(*command, "--help")
    assert "Usage:" in result.output
    assert len(result.output.split("\n\n")[1].strip()) > 20  # a real description


def test_remember_ask_history_facts_retract_on_a_journal(tmp_path: Path) -> None:
    store = str(tmp_path / "memory.jsonl")
    out = run(
        "remember",
        "Ticket_4471",
        "HAS_PRIORITY",
        "high",
        "--speaker",
        "Agent_Intake",
        "--turn",
        "1",
        "--store",
        store,
    ).output
    assert out.startswith("remembered #1: Ticket_4471 HAS_PRIORITY high")
    out = run(
        "remember",
        "Ticket_4471",
        "HAS_PRIORITY",
        "critical",
        "--speaker",
        "Agent_Spec",
        "--store",
        store,
    ).output
    assert "closed #1: Ticket_4471 HAS_PRIORITY high" in out
    assert run(
        "remember", "Ticket_4471", "HAS_PRIORITY", "critical", "--store", store
    ).output.startswith("unchanged")

    answer = json.loads(
        run("ask", "What is the priority of ticket 4471?", "--store", store, "--json").output
    )
    assert answer["answer"] == "critical"
    assert answer["evidence"][0]["speaker"] == "Agent_Spec"
    assert run(
        "ask", "What was the priority of ticket 4471 originally?", "--store", store
    ).output.startswith("high")
    assert (
        json.loads(
            run(
                "ask",
                "What is the priority of ticket 4471?",
                "--as-of",
                "1",
                "--store",
                store,
                "--json",
            ).output
        )["answer"]
        == "high"
    )
    assert run("ask", "Who set the priority of ticket 4471?", "--store", store).output.startswith(
        "Agent_Spec"
    )

    history = json.loads(
        run("history", "Ticket_4471", "HAS_PRIORITY", "--store", store, "--json").output
    )
    assert [(f["object"], f["valid_to"]) for f in history["facts"]] == [
        ("high", 2),
        ("critical", None),
    ]
    facts = json.loads(run("facts", "Ticket_4471", "--store", store, "--json").output)["facts"]
    assert [f["object"] for f in facts] == ["critical"]
    assert "critical" in run("facts", "Ticket_4471", "--store", store).output

    assert run("retract", "Ticket_4471", "HAS_PRIORITY", "--store", store).output.startswith(
        "retracted #2"
    )
    result = run("retract", "Ticket_4471", "HAS_PRIORITY", "--store", store, code=1)
    assert "nothing current to retract" in result.stderr
    assert json.loads(run("stats", "--store", store, "--json").output)["current_facts"] == 0


def test_multi_valued_and_aliases_from_the_shell(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    run("remember", "OnboardingFlow", "DEPENDS_ON", "PushGateway", "--multi", "--store", store)
    run("remember", "OnboardingFlow", "DEPENDS_ON", "Profile_API", "--store", store)
    run("alias", "the signup funnel", "OnboardingFlow", "--store", store)
    out = run("ask", "What does the signup funnel depend on?", "--store", store).output
    assert out.splitlines()[0] == "PushGateway, Profile_API"


def test_bad_input_is_one_line_on_stderr_without_a_traceback(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    result = run("remember", "A", "depends on", "B", "--store", store, code=1)
    assert result.stderr.startswith("Error: invalid predicate 'depends on'")
    assert "DEPENDS_ON" in result.stderr and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1
    result = run("ask", "anything", code=2)
    assert "--store FILE" in result.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a journal\n")
    result = run("facts", "A", "--store", str(bad), code=1)
    assert "not a ctxneo journal" in result.stderr


def test_a_neo4j_that_is_down_is_one_line_naming_the_uri() -> None:
    result = run("ask", "anything", "--uri", "bolt://127.0.0.1:1", code=1)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "cannot reach Neo4j at bolt://127.0.0.1:1" in lines[0]
    assert "ctxneo neo4j start" in lines[0]


def test_neo4j_status_on_an_empty_directory(tmp_path: Path) -> None:
    result = run("neo4j", "status", "--data", str(tmp_path), "--json", code=1)
    assert json.loads(result.output) == {"running": False}


def test_an_option_on_the_command_line_beats_one_from_the_environment(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    env = {"CTXNEO_STORE": store, "NEO4J_URI": None}
    result = CliRunner(env=env).invoke(main, ["ask", "x", "--uri", "bolt://127.0.0.1:1"])
    assert result.exit_code == 1 and "cannot reach Neo4j at bolt://127.0.0.1:1" in result.stderr
    result = CliRunner(env={"NEO4J_URI": "bolt://127.0.0.1:1", "CTXNEO_STORE": None}).invoke(
        main, ["remember", "A", "OWNED_BY", "B", "--store", store]
    )
    assert result.exit_code == 0, result.output
    result = run("ask", "x", "--store", store, "--uri", "bolt://127.0.0.1:1", code=2)
    assert "not both" in result.stderr


def test_an_unwritable_output_is_one_line(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    run("remember", "A", "OWNED_BY", "B", "--store", store)
    result = run("export", "--store", store, "-o", str(tmp_path / "missing" / "x.cypher"), code=1)
    assert "No such file or directory" in result.stderr and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1
