"""The command line, driven with CliRunner: exit codes, --json, help everywhere, clean errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxneo import ConfigError, CtxneoError, Memory
from ctxneo.cli import main
from ctxneo.model import Answer, Fact, Reading

#: Stores come from the arguments only, never from the caller's environment.
CLEAN = {
    "NEO4J_URI": None,
    "NEO4J_USER": None,
    "NEO4J_PASSWORD": None,
    "CTXNEO_STORE": None,
    "CTXNEO_NAMESPACE": None,
    "CTXNEO_DEBUG": None,
}


def run(*args: str, code: int = 0, input: str | None = None) -> Result:
    result = CliRunner(env=CLEAN).invoke(main, list(args), input=input, catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def one_error_line(result: Result) -> str:
    """The whole of stderr, which must be one `Error:` line."""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def all_commands(
    group: click.Group, prefix: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], click.Command]]:
    out = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        out.append(((*prefix, name), command))
        if isinstance(command, click.Group):
            out += all_commands(command, (*prefix, name))
    return out


COMMANDS = all_commands(main)


@pytest.mark.parametrize("path,command", [pytest.param(p, c, id=" ".join(p)) for p, c in COMMANDS])
def test_every_command_has_help_whose_first_line_is_a_whole_sentence(
    path: tuple[str, ...], command: click.Command
) -> None:
    result = run(*path, "--help")
    assert "Usage:" in result.output
    first = (command.help or "").strip().split("\n\n")[0]
    summary = command.get_short_help_str(limit=10_000)
    assert summary.endswith(".") and not summary.endswith(("...", "e.g.")), summary
    # The summary is the start of the help, not a sentence cut at an abbreviation.
    assert " ".join(first.split()).startswith(summary), (summary, first)
    assert len(summary) > 20


def test_the_command_list_shows_whole_sentences() -> None:
    listing = run("--help").output.split("Commands:")[1]
    assert "..." not in listing
    for path, command in COMMANDS:
        if len(path) == 1:
            words = " ".join(listing.split())
            assert f"{path[0]} {command.get_short_help_str(limit=10_000)}" in words


def test_ask_help_gives_the_default_threshold() -> None:
    from ctxneo.answering import DEFAULT_MIN_CONFIDENCE

    assert abs(DEFAULT_MIN_CONFIDENCE - 2 / 3) < 1e-12  # what the help below says
    assert "default: the answerer's, 2/3" in " ".join(run("ask", "--help").output.split())


@pytest.mark.parametrize("group", [[], ["neo4j"]])
def test_a_group_without_a_command_shows_its_help(group: list[str]) -> None:
    result = run(*group, code=2)
    assert result.stderr.startswith("Usage: ") and "Commands:" in result.stderr
    assert "Error" not in result.stderr


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

    history = json.loads(
        run("history", "Ticket_4471", "HAS_PRIORITY", "--store", store, "--json").output
    )
    assert [(f["object"], f["valid_to"]) for f in history["facts"]] == [
        ("high", 2),
        ("critical", None),
    ]
    facts = json.loads(run("facts", "Ticket_4471", "--store", store, "--json").output)["facts"]
    assert [f["object"] for f in facts] == ["critical"]

    assert run("retract", "Ticket_4471", "HAS_PRIORITY", "--store", store).output.startswith(
        "retracted #2"
    )
    result = run("retract", "Ticket_4471", "HAS_PRIORITY", "--store", store, code=1)
    assert "nothing current to retract" in one_error_line(result)
    assert json.loads(run("stats", "--store", store, "--json").output)["current_facts"] == 0
    # a value closed already is said as such, not offered as another spelling's
    run("remember", "ticket_4471", "HAS_PRIORITY", "low", "--store", store)
    result = run("retract", "Ticket_4471", "HAS_PRIORITY", "critical", "--store", store, code=1)
    line = one_error_line(result)
    assert "(already closed at #3)" in line and "stored as" not in line, line


def fact(s: str, p: str, o: str, seq: int) -> Fact:
    return Fact(s, p, o, seq, seq, speaker="Agent_A", turn_id=seq)


def test_ask_passes_its_options_and_prints_readings_and_reasons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = str(tmp_path / "m.jsonl")
    run("remember", "A", "OWNED_BY", "B", "--store", store)
    asked: list[dict[str, Any]] = []
    first, second = fact("X", "OWNED_BY", "Team_1", 1), fact("Y", "RUN_BY", "Team_2", 2)
    readings = (
        Reading("Team_1", ("Team_1",), (first,), 0.8, "one-hop"),
        Reading("Team_2", ("Team_2",), (second,), 0.3, "two-hop"),
    )
    known = Answer("q", "Team_1", (first,), "ctx", "one-hop", ("Team_1",), 0.8, "", readings)
    why = "too unsure: 0.30 < 0.50"
    unknown = Answer("q", "UNKNOWN", reason=why, readings=readings[1:], candidate=readings[1])
    replies = iter([known, unknown, known])

    def ask(self: Memory, question: str, **kwargs: Any) -> Answer:
        asked.append({"question": question, **kwargs})
        return next(replies)

    monkeypatch.setattr(Memory, "ask", ask)
    options = ["--top-k", "2", "--min-confidence", "0.5", "--max-tokens", "40", "--as-of", "1"]
    out = run("ask", "who?", "--speaker", "Agent_B", *options, "--store", store).output
    assert asked[0] == {
        "question": "who?",
        "speaker": "Agent_B",
        "as_of": 1,
        "k": 2,
        "min_confidence": 0.5,
        "max_tokens": 40,
    }
    assert out.splitlines() == [
        "Team_1  (confidence 0.80)",
        "  <- X OWNED_BY Team_1 [Agent_A, turn 1]",
        "reading 2: Team_2  (confidence 0.30, two-hop)",
        "  <- Y RUN_BY Team_2 [Agent_A, turn 2]",
    ]
    out = run("ask", "who?", "--store", store).output
    assert asked[1]["k"] == 1 and asked[1]["min_confidence"] is None
    assert out.splitlines() == [
        "UNKNOWN: too unsure: 0.30 < 0.50",
        "  best reading, not sure enough: Team_2  (confidence 0.30)",
    ]
    assert json.loads(run("ask", "who?", "--json", "--store", store).output) == known.to_dict()
    for bad in (["--top-k", "0"], ["--min-confidence", "1.5"], ["--max-tokens", "-1"]):
        one_error_line(run("ask", "who?", *bad, "--store", store, code=2))


def test_a_value_or_question_that_starts_with_a_dash_and_a_number_is_not_an_option(
    tmp_path: Path,
) -> None:
    store = str(tmp_path / "memory.jsonl")
    out = run("remember", "Freezer_80A", "SET_TO_C", "-81", "--store", store).output
    assert out.startswith("remembered #1: Freezer_80A SET_TO_C -81")
    out = run("ask", "-81 is which freezer's setting?", "--store", store, "--json").output
    assert json.loads(out)["question"] == "-81 is which freezer's setting?"
    assert [
        f["object"]
        for f in json.loads(run("facts", "Freezer_80A", "--store", store, "--json").output)["facts"]
    ] == ["-81"]
    # A mistyped option is still an error of its own.
    typo = CliRunner().invoke(main, ["remember", "A", "B", "C", "--speker", "x", "--store", store])
    assert typo.exit_code == 2 and "No such option '--speker'" in typo.output


def test_another_tools_word_for_a_command_names_ours() -> None:
    # Click's guess goes by spelling: "import" was offered "export", the opposite.
    for word, ours in (("import", "load"), ("query", "ask"), ("forget", "retract")):
        assert one_error_line(run(word, "x", code=2)).startswith(
            f"Error: No such command '{word}'. Did you mean '{ours}'?"
        )
    assert "Did you mean 'export'?" in one_error_line(run("exprt", code=2))


def test_an_unknown_answer_says_why_on_its_line(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    run("remember", "Service_Payments", "OWNED_BY", "Payments_Team", "--store", store)
    first = run("ask", "Who approved the budget of the zeppelin?", "--store", store).output
    assert first.splitlines()[0].startswith("UNKNOWN: ")
    assert len(first.splitlines()[0]) > len("UNKNOWN: ")


def test_declare_multi_once_then_values_accumulate(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    assert run("declare-multi", "DEPENDS_ON", "USES", "--store", store).output == (
        "multi-valued: DEPENDS_ON, USES\n"
    )
    run("remember", "OnboardingFlow", "DEPENDS_ON", "PushGateway", "--store", store)
    out = run("remember", "OnboardingFlow", "DEPENDS_ON", "Profile_API", "--store", store).output
    assert "closed" not in out
    with Memory.open(store) as memory:  # the declaration is in the journal, for every process
        assert [f.object for f in memory.current("OnboardingFlow", "DEPENDS_ON")] == [
            "PushGateway",
            "Profile_API",
        ]
        assert memory.multi_valued() == {"DEPENDS_ON", "USES"}
    assert json.loads(run("declare-multi", "USES", "--json", "--store", store).output) == {
        "multi_valued": ["DEPENDS_ON", "USES"]
    }
    one_error_line(run("declare-multi", "depends on", "--store", store, code=2))
    one_error_line(run("declare-multi", "--store", store, code=2))


def test_reading_commands_on_a_missing_journal_fail_and_create_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "memory.jsonl"
    for args in (
        ["ask", "anything?"],
        ["facts", "A"],
        ["history", "A"],
        ["stats"],
        ["retract", "A", "OWNED_BY"],
        ["clear", "--yes"],
    ):
        line = one_error_line(run(*args, "--store", str(missing), code=1))
        assert str(missing) in line
    assert not (tmp_path / "no").exists()


def test_clear_asks_first_and_deletes_only_when_told(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    run("remember", "A", "OWNED_BY", "B", "--store", store)
    result = run("clear", "--store", store, input="n\n", code=1)
    assert "Delete 1 facts" in result.stderr and "nothing deleted" in result.stderr
    result = run("clear", "--store", store, code=1)  # no answer at all: nothing deleted
    assert "nothing deleted" in result.stderr
    assert json.loads(run("stats", "--store", store, "--json").output)["facts"] == 1
    assert run("clear", "--store", store, input="y\n").stdout == (
        f"cleared the journal {store} (1 fact)\n"
    )
    run("remember", "A", "OWNED_BY", "C", "--store", store)
    run("clear", "--yes", "--store", store)
    with Memory.open(store) as memory:
        assert memory.stats()["facts"] == 0 and memory.facts("A", history=True) == []


def test_memory_clear_in_the_api(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m.jsonl") as memory:
        memory.remember("A", "OWNED_BY", "B")
        memory.alias("the a", "A")
        memory.clear()
        assert memory.stats()["facts"] == 0 and memory.store.aliases() == {}
    with Memory.open(tmp_path / "m.jsonl") as memory:
        assert memory.stats()["facts"] == 0


def test_a_name_that_differs_only_in_case_is_suggested(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    run("remember", "Service_Payments", "OWNED_BY", "Payments_Team", "--store", store)
    result = run("facts", "service_payments", "--store", store)
    assert result.stdout == ""
    assert result.stderr == "facts of service_payments: none (stored as 'Service_Payments')\n"
    result = run("history", "SERVICE_PAYMENTS", "--store", store)
    assert "stored as 'Service_Payments'" in result.stderr
    line = one_error_line(run("retract", "service_payments", "OWNED_BY", "--store", store, code=1))
    assert "stored as 'Service_Payments'" in line
    assert json.loads(run("facts", "nobody", "--json", "--store", store).stdout) == {"facts": []}
    typo = run("facts", "Service_Paymnts", "--store", store)
    assert typo.stderr == (
        "facts of Service_Paymnts: none (no entity of that name; similar: 'Service_Payments')\n"
    )
    # An alias names the entity in questions: these commands say which name to give.
    run("alias", "the pay service", "Service_Payments", "--store", store)
    aliased = run("history", "The Pay Service", "--store", store)
    assert "is an alias of 'Service_Payments'" in aliased.stderr


def test_withdrawing_what_was_never_declared_is_noted(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    run("declare-multi", "DEPENDS_ON", "--store", store)
    out = run("declare-multi", "--withdraw", "DEPENDS_ON", "owned_by", "--store", store)
    assert out.stdout == "multi-valued: none\n"
    assert out.stderr == "note: not declared multi-valued: owned_by\n"


def test_predicates_that_differ_in_their_numbers_are_not_taken_for_one_another(
    tmp_path: Path,
) -> None:
    store = str(tmp_path / "m.jsonl")
    run("remember", "Job_1", "STEP_1", "Mix", "--store", store)
    assert run("remember", "Job_1", "STEP_2", "Bake", "--store", store).stderr == ""
    noted = run("remember", "Job_1", "STEPP_1", "Cool", "--store", store).stderr
    assert noted == "note: predicate STEPP_1 is new; the memory has STEP_1\n"


def test_an_alias_given_the_other_way_round_is_noted(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    run("remember", "Finance_Eng", "OWNS", "Ledger", "--store", store)
    swapped = run("alias", "Finance_Eng", "the money team", "--store", store)
    assert swapped.stdout == "alias: 'Finance_Eng' -> the money team\n"
    assert swapped.stderr == (
        "note: entity 'the money team' has no fact yet; 'Finance_Eng' is an entity: "
        "the phrase comes first, then the entity\n"
    )
    right = run("alias", "the money team", "Finance_Eng", "--json", "--store", store)
    assert json.loads(right.stdout) == {
        "phrase": "the money team",
        "entity": "Finance_Eng",
        "notes": [],
    }
    assert right.stderr == ""


def test_an_alias_for_a_misspelt_entity_given_twice_names_only_the_other(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    run("remember", "Deneb_Api", "OWNED_BY", "Team_Pike", "--store", store)
    run("alias", "the api", "Deneb_Apl", "--store", store)
    again = run("alias", "the old api", "Deneb_Apl", "--store", store)
    assert again.stderr == "note: entity 'Deneb_Apl' has no fact yet; the memory has 'Deneb_Api'\n"


def test_similar_names_are_quoted_and_escaped_in_a_hint(tmp_path: Path) -> None:
    """A name may hold a comma or a terminal's escape sequence: a hint shows each name
    quoted, every control character escaped (none reaches the terminal)."""
    store = str(tmp_path / "m.jsonl")
    run("remember", "Lyra, Nova", "STATUS", "ok", "--store", store)
    run("remember", "Lyra_Core\x1b[2J", "STATUS", "ok", "--store", store)
    shown = run("facts", "Lyra", "--store", store).stderr
    assert "'Lyra, Nova'" in shown and "'Lyra_Core\\x1b[2J'" in shown and "\x1b" not in shown
    failed = run("retract", "Lyra", "STATUS", "--store", store, code=1).stderr
    assert "'Lyra, Nova'" in failed and "\x1b" not in failed


def test_vocabulary_lists_names_and_a_new_name_like_one_in_use_is_noted(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    run("remember", "Service_Payments", "OWNED_BY", "Payments_Team", "--store", store)
    noted = run("remember", "Payments_Service", "OWNER", "Payments_Team", "--store", store)
    assert noted.stdout.startswith("remembered #2: Payments_Service OWNER Payments_Team")
    assert noted.stderr.splitlines() == [
        "note: predicate OWNER is new; the memory has OWNED_BY",
        "note: entity 'Payments_Service' is new; the memory has 'Service_Payments'",
    ]
    quiet = run("remember", "Service_Payments", "OWNED_BY", "Team_B", "--json", "--store", store)
    assert json.loads(quiet.stdout)["notes"] == [] and quiet.stderr == ""
    listed = run("vocabulary", "payments", "--store", store).stdout
    assert "OWNED_BY" in listed and "OWNER" in listed
    assert "entities for 'payments': " in listed
    start = run("vocabulary", "paym", "--store", store)
    assert start.stdout.endswith("entities for 'paym': none\n")
    assert "whole words" in start.stderr
    doc = json.loads(run("vocabulary", "--limit", "1", "--json", "--store", store).stdout)
    assert [p["predicate"] for p in doc["predicates"]] == ["OWNED_BY"]
    assert doc["predicates_omitted"] == 1 and doc["entities"] == []
    assert doc["predicates"][0]["example"]["object"] == "Team_B"


def test_namespaces_of_a_journal_is_a_clear_usage_error(tmp_path: Path) -> None:
    store = tmp_path / "m.jsonl"
    line = one_error_line(run("namespaces", "--store", str(store), code=2))
    assert "Neo4j" in line and "--uri" in line
    assert not store.exists()


def test_piped_tables_are_plain_rows_that_never_wrap(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    long_name = "Service_" + "Payments" * 20
    run("remember", long_name, "OWNED_BY", "Team\nwith a newline", "--store", store)
    run("remember", "[bold]Markup", "OWNED_BY", long_name, "--store", store)
    lines = run("facts", long_name, "--store", store).output.splitlines()
    assert lines[0].split() == ["#", "subject", "predicate", "object", "speaker", "turn", "valid"]
    assert len(lines) == 3
    assert lines[1].split() == ["2", "[bold]Markup", "OWNED_BY", long_name, "2–now"]
    assert lines[2].split() == ["1", long_name, "OWNED_BY", "Team\\nwith", "a", "newline", "1–now"]
    assert lines[1].index("OWNED_BY") == lines[2].index("OWNED_BY")  # aligned columns


def test_piped_table_columns_align_on_wide_characters() -> None:
    from rich.cells import cell_len

    from ctxneo.cli.tables import plain_rows

    _, wide, narrow = plain_rows(["name", "team"], [["東京_Svc", "A"], ["Osaka_Svc", "B"]])
    # (a terminal gives 東 and 京 two columns each: the next column starts in one place)
    assert cell_len(wide[: wide.index("A")]) == cell_len(narrow[: narrow.index("B")])


def test_bad_input_is_one_line_on_stderr_without_a_traceback(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    result = run("remember", "A", "depends on", "B", "--store", store, code=2)
    assert one_error_line(result).startswith("Error: invalid predicate 'depends on'")
    assert "DEPENDS_ON" in result.stderr
    assert "--store FILE" in one_error_line(run("ask", "anything", code=2))
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a journal\n")
    assert "not a ctxneo journal" in one_error_line(run("facts", "A", "--store", str(bad), code=1))
    one_error_line(run("stats", "--no-such-option", code=2))
    one_error_line(run("no-such-command", code=2))
    one_error_line(run("remember", "A", "OWNED_BY", code=2))
    one_error_line(run("remember", "A", "OWNED_BY", "B", "--turn", "x", "--store", store, code=2))


def test_an_argument_that_is_not_utf8_is_refused_in_one_line(tmp_path: Path) -> None:
    store = tmp_path / "m.jsonl"
    # Linux hands Python an undecodable byte as a lone surrogate (PEP 383).
    result = run("remember", "A\udcff", "OWNED_BY", "B", "--store", str(store), code=2)
    line = one_error_line(result)
    assert line == "Error: argument 2 is not valid UTF-8: A\\xff"
    assert not store.exists()
    result = CliRunner(env={**CLEAN, "CTXNEO_STORE": "m\udcfe.jsonl"}).invoke(main, ["stats"])
    assert result.exit_code == 2 and "$CTXNEO_STORE is not valid UTF-8" in result.stderr


def test_a_password_that_is_not_utf8_is_named_never_shown(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    for args, env in (
        (["stats", "--uri", "bolt://127.0.0.1:1", "--password", "Sup3rS\udce4cret"], {}),
        (["stats", "--uri", "bolt://127.0.0.1:1", "--password=Sup3rS\udce4cret"], {}),
        (["stats", "--store", store], {"NEO4J_PASSWORD": "Sup3rS\udce4cret"}),
    ):
        result = CliRunner(env={**CLEAN, **env}).invoke(main, args)
        assert result.exit_code == 2 and "not valid UTF-8" in result.stderr, result.stderr
        assert "Sup3r" not in result.stderr and "cret" not in result.stderr, result.stderr
    with pytest.raises(CtxneoError) as caught:
        Memory.open(uri="bolt://127.0.0.1:1", password="Sup3rS\udce4cret")
    assert "password" in str(caught.value) and "Sup3r" not in str(caught.value)


@pytest.mark.parametrize(
    "uri",
    [
        "bolt://neo4j:s3cr/et@db.example:7687",
        "bolt://neo4j:s3cr?et@db.example",
        "bolt://u:1234/Secr3t@h",
    ],
)
def test_credentials_in_a_uri_are_refused_and_never_shown_whatever_they_hold(uri: str) -> None:
    line = one_error_line(run("stats", "--uri", uri, code=2))
    assert "credentials in a Neo4j URI" in line, line
    assert "s3cr" not in line and "Secr3t" not in line and "et@" not in line, line


def test_a_real_process_with_a_non_utf8_argument_prints_one_line(tmp_path: Path) -> None:
    ctxneo = Path(sys.executable).with_name("ctxneo")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXNEO_"))}
    name = b"\xff\xfe".decode("utf-8", "surrogateescape")
    result = subprocess.run(
        [str(ctxneo), "facts", name, "--store", "x.jsonl"],
        capture_output=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr == b"Error: argument 2 is not valid UTF-8: \\xff\\xfe\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("uri", ["http://127.0.0.1:7474", "https://x.example", "127.0.0.1:7687"])
def test_an_unsupported_uri_scheme_is_one_line_listing_the_supported(uri: str) -> None:
    line = one_error_line(run("stats", "--uri", uri, code=2))
    assert "bolt://, bolt+s://, bolt+ssc://, neo4j://, neo4j+s://, neo4j+ssc://" in line
    with pytest.raises(ConfigError, match="neo4j\\+s://"):
        Memory.open(uri=uri)


def test_a_servers_option_given_with_a_journal_is_refused_not_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = str(tmp_path / "m.jsonl")
    run("remember", "A", "OWNED_BY", "B", "--store", journal)
    line = one_error_line(run("stats", "--store", journal, "--password", "pw", code=2))
    assert "--password is for a Neo4j memory" in line
    line = one_error_line(run("ask", "who owns A?", "--store", journal, "--namespace", "x", code=2))
    assert "--namespace is for a Neo4j memory" in line
    # (from the environment they are the shell's Neo4j settings: the journal named wins)
    result = CliRunner(env={**CLEAN, "NEO4J_PASSWORD": "pw"}).invoke(
        main, ["stats", "--store", journal]
    )
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("where", ["bolt://127.0.0.1:7687", "neo4j+s://x.example"])
def test_a_uri_given_as_a_journal_path_is_an_error_that_writes_nothing(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Memory.open("bolt://...") once made a journal under ./bolt:/ and ignored the
    # password given with it; --store bolt://... did the same.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="uri="):
        Memory.open(where, password="pw")
    line = one_error_line(run("stats", "--store", where, code=2))
    assert f"{where!r} is a URI, not a journal file" in line and "--uri" in line  # as written
    line = one_error_line(run("export", "--store", where, code=2))
    assert f"{where!r} is a URI" in line and "--from-uri" in line
    with pytest.raises(CtxneoError, match="password applies to a Neo4j memory"):
        Memory.open(tmp_path / "m.jsonl", password="pw")
    assert list(tmp_path.iterdir()) == []
    with Memory.open("C:/m.jsonl") as memory:  # a drive letter is not a scheme
        memory.remember("A", "OWNED_BY", "B")
    assert (tmp_path / "C:").is_dir()


def test_a_password_in_a_uri_is_never_echoed() -> None:
    uri = "bolt://neo4j:s3cret-pw@127.0.0.1:1"
    result = run("stats", "--uri", uri, code=2)
    assert "s3cret-pw" not in result.output and "bolt://***@127.0.0.1:1" in one_error_line(result)
    with pytest.raises(CtxneoError) as caught:
        Memory.open(uri=uri)
    assert "s3cret-pw" not in str(caught.value)
    result = CliRunner(env={**CLEAN, "NEO4J_URI": uri}).invoke(main, ["stats"])
    assert result.exit_code == 2 and "s3cret-pw" not in result.output


@pytest.mark.parametrize("uri", ["bolt://127.0.0.1:1", "neo4j://127.0.0.1:1"])
def test_a_neo4j_that_is_down_is_one_line_naming_the_uri(uri: str) -> None:
    line = one_error_line(run("ask", "anything", "--uri", uri, code=1))
    assert f"cannot reach Neo4j at {uri}" in line and "ctxneo neo4j start" in line


def test_a_bad_neo4j_connect_timeout_is_a_usage_error_naming_the_variable() -> None:
    env = {**CLEAN, "CTXNEO_NEO4J_CONNECT_TIMEOUT": "soon"}
    result = CliRunner(env=env).invoke(main, ["stats", "--uri", "bolt://127.0.0.1:1"])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert "CTXNEO_NEO4J_CONNECT_TIMEOUT='soon'" in line and "seconds" in line


def test_a_routing_uri_that_is_down_prints_one_line_from_a_real_process(tmp_path: Path) -> None:
    # The driver logs its routing failures; in a real process they would reach stderr.
    ctxneo = Path(sys.executable).with_name("ctxneo")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "CTXNEO_"))}
    result = subprocess.run(
        [str(ctxneo), "stats", "--uri", "neo4j://127.0.0.1:1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("Error: cannot reach")


def test_an_internal_error_is_one_line_with_exit_code_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = str(tmp_path / "m.jsonl")
    run("remember", "A", "OWNED_BY", "B", "--store", store)

    def broken(self: Memory) -> dict[str, int]:
        raise KeyError("a bug")

    monkeypatch.setattr(Memory, "stats", broken)
    line = one_error_line(run("stats", "--store", store, code=3))
    assert "internal error" in line and "KeyError" in line and "CTXNEO_DEBUG=1" in line


def test_neo4j_status_on_an_empty_directory(tmp_path: Path) -> None:
    result = run("neo4j", "status", "--data", str(tmp_path), "--json", code=1)
    assert json.loads(result.output) == {"running": False}


def test_an_option_on_the_command_line_beats_one_from_the_environment(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    env = {**CLEAN, "CTXNEO_STORE": store}
    result = CliRunner(env=env).invoke(main, ["ask", "x", "--uri", "bolt://127.0.0.1:1"])
    assert result.exit_code == 1 and "cannot reach Neo4j at bolt://127.0.0.1:1" in result.stderr
    result = CliRunner(env={**CLEAN, "NEO4J_URI": "bolt://127.0.0.1:1"}).invoke(
        main, ["remember", "A", "OWNED_BY", "B", "--store", store]
    )
    assert result.exit_code == 0, result.output
    result = run("ask", "x", "--store", store, "--uri", "bolt://127.0.0.1:1", code=2)
    assert "not both" in one_error_line(result)


def test_a_bad_setting_from_the_environment_is_named_by_its_variable(tmp_path: Path) -> None:
    """Nobody typed --uri: an error in a value from the environment names the variable."""
    both = {**CLEAN, "CTXNEO_STORE": str(tmp_path / "m.jsonl"), "NEO4J_URI": "bolt://h:1"}
    line = one_error_line(CliRunner(env=both).invoke(main, ["stats"]))
    assert "CTXNEO_STORE and NEO4J_URI are both set" in line
    bad = CliRunner(env={**CLEAN, "NEO4J_URI": "garbage"}).invoke(main, ["stats"])
    assert bad.exit_code == 2 and "NEO4J_URI (from the environment)" in one_error_line(bad)
    uri = CliRunner(env={**CLEAN, "CTXNEO_STORE": "bolt://h:1"}).invoke(main, ["stats"])
    assert "CTXNEO_STORE (from the environment)" in one_error_line(uri)
    assert "'--uri'" in one_error_line(run("stats", "--uri", "garbage", code=2))


def test_an_unwritable_output_is_one_line(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    run("remember", "A", "OWNED_BY", "B", "--store", store)
    result = run("export", "--store", store, "-o", str(tmp_path / "missing" / "x.cypher"), code=1)
    assert "No such file or directory" in one_error_line(result)


# -- on Neo4j -------------------------------------------------------------------------


def neo4j_run(server: Any, *args: str, code: int = 0, input: str | None = None) -> Result:
    env = {**CLEAN, "NEO4J_USER": server.user, "NEO4J_PASSWORD": server.password}
    result = CliRunner(env=env).invoke(
        main, [*args, "--uri", server.uri], input=input, catch_exceptions=False
    )
    assert result.exit_code == code, result.output
    return result


@pytest.mark.neo4j
def test_namespaces_clear_and_an_empty_namespace_on_neo4j(neo4j_server: Any) -> None:
    import uuid

    base = f"cli-{uuid.uuid4().hex[:10]}"
    one, two = f"{base}/one", f"{base}/two"
    try:
        neo4j_run(neo4j_server, "remember", "A", "OWNED_BY", "B", "--namespace", one)
        neo4j_run(neo4j_server, "remember", "A", "OWNED_BY", "C", "--namespace", one)
        neo4j_run(neo4j_server, "declare-multi", "USES", "--namespace", two)
        listed = json.loads(neo4j_run(neo4j_server, "namespaces", "--json").output)["namespaces"]
        assert listed[one] == {"facts": 2, "current_facts": 1, "entities": 3, "last_seq": 2}
        assert listed[two] == {"facts": 0, "current_facts": 0, "entities": 0, "last_seq": 0}
        rows = neo4j_run(neo4j_server, "namespaces").output.splitlines()
        assert rows[0].split() == ["namespace", "facts", "current", "entities", "last", "seq"]
        assert [one, "2", "1", "3", "2"] in [r.split() for r in rows]

        typo = f"{base}/typo"
        line = one_error_line(neo4j_run(neo4j_server, "stats", "--namespace", typo, code=1))
        assert f"namespace '{typo}'" in line and "holds no memory" in line and one in line
        one_error_line(neo4j_run(neo4j_server, "facts", "A", "--namespace", typo, code=1))

        result = neo4j_run(neo4j_server, "clear", "--namespace", one, input="n\n", code=1)
        assert "nothing deleted" in result.stderr
        out = neo4j_run(neo4j_server, "clear", "--yes", "--namespace", one).output
        assert out == f"cleared namespace '{one}' at {neo4j_server.uri} (2 facts)\n"
        listed = json.loads(neo4j_run(neo4j_server, "namespaces", "--json").output)["namespaces"]
        assert one not in listed and two in listed
    finally:
        for ns in (one, two):
            with Memory.open(
                uri=neo4j_server.uri,
                user=neo4j_server.user,
                password=neo4j_server.password,
                namespace=ns,
            ) as memory:
                memory.clear()


@pytest.mark.neo4j
def test_the_local_servers_password_is_found_by_the_commands(
    neo4j_server: Any, tmp_path: Path
) -> None:
    if neo4j_server.local is None:
        pytest.skip("the session's Neo4j is not the jar-launched one")
    home = tmp_path / "home"
    home.mkdir()
    (home / "neo4j-data").symlink_to(neo4j_server.local.data_dir)
    env = {**CLEAN, "CTXNEO_HOME": str(home)}
    ns = "cli-local-credentials"
    args = ["remember", "A", "OWNED_BY", "B", "--uri", neo4j_server.uri, "--namespace", ns]
    result = CliRunner(env=env).invoke(main, args)
    assert result.exit_code == 0, result.output
    result = CliRunner(env={**env, "NEO4J_PASSWORD": "wrong-password"}).invoke(main, args)
    assert result.exit_code == 1 and "refused the credentials" in one_error_line(result)
    clear = ["clear", "--yes", "--uri", neo4j_server.uri, "--namespace", ns]
    result = CliRunner(env=env).invoke(main, clear)
    assert result.exit_code == 0, result.output


# -- fuzzing ----------------------------------------------------------------------------

# Any text a shell can pass, undecodable bytes (lone surrogates) and control characters included.
arguments = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from("\udcff\x00\n'\""),
    max_size=30,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    command=st.sampled_from(
        ["remember", "ask", "facts", "history", "retract", "alias", "declare-multi", "stats"]
    ),
    args=st.lists(arguments, max_size=4),
)
def test_any_arguments_give_an_answer_or_one_error_line(
    command: str, args: list[str], tmp_path: Path
) -> None:
    store = tmp_path / "fuzz.jsonl"
    store.touch()  # an empty journal: readers have something to read
    result = CliRunner(env=CLEAN).invoke(main, [command, *args, "--store", str(store)])
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.output)
    assert "Traceback" not in result.output
    if result.exit_code:
        one_error_line(result)


def test_bench_workers_import_the_installed_ctxneo_from_a_checkout_root(tmp_path: Path) -> None:
    # A checkout's root holds a ctxneo/ without bench/ (top-level bench/ is
    # installed as ctxneo.bench): a worker started there must not import it.
    (tmp_path / "ctxneo").mkdir()
    (tmp_path / "ctxneo" / "__init__.py").write_text("")
    ctxneo = Path(sys.executable).with_name("ctxneo")
    result = subprocess.run(
        [str(ctxneo), "bench", "scale", "--facts", "200", "--silent", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout)["rows"][0]["facts"] > 0


def test_a_bad_setting_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXNEO_FSYNC", "bogus")
    result = CliRunner().invoke(
        main, ["remember", "A", "OWNED_BY", "B", "--store", str(tmp_path / "m.jsonl")]
    )
    assert result.exit_code == 2
    assert "CTXNEO_FSYNC='bogus' is not an fsync policy" in result.stderr
    assert not (tmp_path / "m.jsonl").exists()


def test_stored_names_cannot_drive_the_terminal(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    out = run("remember", "Evil\x1b[2J", "OWNED_BY", "A\rB\x9b31m", "--store", store).stdout
    assert out == 'remembered #1: "Evil\\x1b[2J" OWNED_BY "A\\rB\\x9b31m"\n'
    for args in (["facts", "Evil\x1b[2J"], ["history", "Evil\x1b[2J"], ["vocabulary"]):
        shown = run(*args, "--store", store).stdout
        assert "\x1b" not in shown and "\r" not in shown and "\x9b" not in shown
    # --json keeps the names as stored: a program reads them exactly.
    (fact,) = json.loads(run("facts", "Evil\x1b[2J", "--json", "--store", store).stdout)["facts"]
    assert fact["subject"] == "Evil\x1b[2J" and fact["object"] == "A\rB\x9b31m"


def test_output_cut_short_by_its_reader_is_no_error(tmp_path: Path) -> None:
    """`ctxneo history X | head -1`: the reader goes away; ctxneo stops quietly."""
    store = tmp_path / "m.jsonl"
    with Memory.open(store) as memory:
        memory.remember_many([("Svc_A", "VERSION", f"v{i}") for i in range(3000)])
    command = [sys.executable, "-m", "ctxneo", "history", "Svc_A", "--store", str(store)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline()  # the header; then the reader is gone
    process.stdout.close()
    errors = process.stderr.read().decode()
    process.wait(timeout=60)
    assert "Error" not in errors and "Traceback" not in errors


def test_a_turn_or_point_out_of_range_names_the_option(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    line = one_error_line(run("ask", "x", "--as-of", "-1", "--store", store, code=2))
    assert "'--as-of'" in line and "as_of" not in line
    big = "99999999999999999999"
    line = one_error_line(run("remember", "A", "P", "B", "--turn", big, "--store", store, code=2))
    assert "'--turn'" in line and "turn_id" not in line


def test_names_that_a_space_or_a_comma_would_hide_are_quoted_in_listings(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    run("remember", "Lantern ", "USES_DATABASE", "X, Y", "--store", store)
    listed = run("vocabulary", "lantern", "--store", store).output
    assert '"Lantern " USES_DATABASE' in listed, listed
    assert "entities for 'lantern': \"Lantern \"" in listed, listed


def test_an_empty_store_path_is_refused_for_what_it_is() -> None:
    line = one_error_line(run("stats", "--store", "", code=2))
    assert "is empty" in line and "journal" in line, line
