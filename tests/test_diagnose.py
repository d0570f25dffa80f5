"""The answer funnel (``bench --diagnose``), grading, and retractions in scenario files."""

from __future__ import annotations

import functools
import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from ctxneo.bench import diagnose, harness

from ctxneo.cli import main
from ctxneo.errors import ScenarioError
from ctxneo.memory import Memory
from ctxneo.model import Answer, Fact, Reading, Scenario, Trace
from ctxneo.scenarios import load_suite, parse_document, shipped_suite


def _stripped(scenario: Scenario) -> Scenario:
    """The scenario with every query's key removed: label, required facts, ground truth."""
    turns = tuple(
        replace(t, query_type=None, required_fact_ids=(), ground_truth=None)
        if t.turn_type == "query"
        else t
        for t in scenario.turns
    )
    return replace(scenario, turns=turns)


def _answers(records: list[harness.QueryRecord]) -> list[tuple[object, ...]]:
    return [
        (r.turn_id, r.answer, r.values, r.evidence, r.confidence, r.reading, r.reason, r.context)
        for r in records
    ]


def test_answers_are_byte_identical_with_the_keys_stripped() -> None:
    scenarios = load_suite(shipped_suite()[:12])
    for scenario in scenarios:
        with Memory.open() as keyed, Memory.open() as blind:
            diagnosed = harness.run_graph(scenario, keyed, "networkx", diagnose=True)
            plain = harness.run_graph(_stripped(scenario), blind, "networkx")
        assert _answers(diagnosed) == _answers(plain), scenario.name
        assert any(r.funnel for r in diagnosed)  # the keyed run was diagnosed
        assert not any(r.funnel for r in plain)


DOC = {
    "format": "ctxneo-scenarios/1",
    "scenarios": [
        {
            "name": "pumps",
            "description": "two pumps, one moved to another crew",
            "turns": [
                {"turn_id": 1, "turn_type": "fact", "speaker": "ops", "text": "P9 is C12's",
                 "subject": "Pump_09", "predicate": "MAINTAINED_BY", "object": "Crew_12",
                 "fact_id": "f1"},
                {"turn_id": 2, "turn_type": "fact", "speaker": "ops", "text": "C12 nights",
                 "subject": "Crew_12", "predicate": "SHIFT", "object": "night shift",
                 "fact_id": "f2"},
                {"turn_id": 3, "turn_type": "query", "speaker": "ops",
                 "text": "Which crew maintains Pump_09?", "query_type": "direct",
                 "required_fact_ids": ["f1"], "ground_truth": "Crew_12"},
                {"turn_id": 4, "turn_type": "query", "speaker": "ops",
                 "text": "Which crew maintains the Zeppelin?", "query_type": "direct",
                 "required_fact_ids": ["f1"], "ground_truth": "Crew_12"},
                {"turn_id": 5, "turn_type": "fact", "speaker": "ops", "text": "Crew_12 is off it",
                 "subject": "Pump_09", "predicate": "MAINTAINED_BY", "object": "Crew_12",
                 "fact_id": "f3", "retract": True},
                {"turn_id": 6, "turn_type": "query", "speaker": "ops",
                 "text": "Which crew maintains Pump_09?", "query_type": "unanswerable",
                 "required_fact_ids": [], "ground_truth": "UNKNOWN"},
            ],
        }
    ],
}  # fmt: skip


def test_the_funnel_says_at_which_stage_a_question_is_lost() -> None:
    (scenario,) = parse_document(DOC, "pumps.json")
    with Memory.open() as memory:
        records = harness.run_graph(scenario, memory, "networkx", diagnose=True)
    found, lost, withdrawn = records
    assert found.correct and found.funnel["anchor_rank"] == 1
    assert found.funnel["reading_rank"] == 1 and found.funnel["form_right"]
    # The question names nothing in memory: lost at the first stage.
    assert not lost.correct and lost.funnel["anchor_rank"] is None
    assert lost.funnel["form_given"] == "unknown"
    # After the retraction only UNKNOWN is right, and that is the form asked.
    assert withdrawn.answer == "UNKNOWN" and withdrawn.correct
    assert withdrawn.funnel["form_right"]
    assert found.funnel["right_rank"] == 1
    rows = {row["query_type"]: row for row in diagnose.funnel(records)}
    assert rows["all"]["anchor@1"] == [1, 2] and rows["all"]["correct"] == [2, 3]
    ranks = [found.funnel["right_rank"], lost.funnel["right_rank"]]
    assert rows["all"]["right@1"] == [sum(r == 1 for r in ranks), 2]


def test_a_reading_through_the_required_facts_that_answers_wrong_is_not_right_at_1() -> None:
    (scenario,) = parse_document(DOC, "pumps.json")
    turns = {t.turn_id: t for t in scenario.turns}
    f1, query = turns[1], turns[3]
    maintained = Fact("Pump_09", "MAINTAINED_BY", "Crew_12", 1, 1)
    shift = Fact("Crew_12", "SHIFT", "night shift", 2, 2)
    # A longer path through the required fact comes first and answers another value.
    longer = Reading("night shift", ("night shift",), (maintained, shift), 0.4, "two-hop")
    direct = Reading("Crew_12", ("Crew_12",), (maintained,), 0.3, "one-hop")
    trace = Trace(query.text, ("Pump_09",), (longer, direct))
    given = Answer(query.text, "night shift", reading="two-hop", values=("night shift",))
    record = diagnose.stages(
        query, [f1], given, trace, lambda a: harness.grade(a, query.ground_truth)
    )
    assert record["reading_rank"] == 1  # its evidence holds the required fact...
    assert record["right_rank"] == 2  # ...but only the second reading answers right
    assert not record["withheld"]  # a ranking loss, not a withheld answer


def test_a_right_first_reading_answered_unknown_is_counted_withheld() -> None:
    (scenario,) = parse_document(DOC, "pumps.json")
    turns = {t.turn_id: t for t in scenario.turns}
    f1, query = turns[1], turns[3]
    maintained = Fact("Pump_09", "MAINTAINED_BY", "Crew_12", 1, 1)
    first = Reading("Crew_12", ("Crew_12",), (maintained,), 0.4, "one-hop")
    trace = Trace(query.text, ("Pump_09",), (first,))
    unsure = Answer(query.text, "UNKNOWN", confidence=0.4, reading="one-hop")
    sure = Answer(query.text, "Crew_12", confidence=0.9, reading="one-hop", values=("Crew_12",))
    grade = functools.partial(harness.grade, truth=query.ground_truth)
    held = diagnose.stages(query, [f1], unsure, trace, grade)
    given = diagnose.stages(query, [f1], sure, trace, grade)
    assert held["right_rank"] == 1 and held["withheld"]
    assert given["right_rank"] == 1 and not given["withheld"]
    records = [
        SimpleNamespace(funnel=f, unanswerable=False, query_type="direct", correct=c)
        for f, c in ((held, False), (given, True))
    ]
    rows = {row["query_type"]: row for row in diagnose.funnel(records)}
    assert rows["all"]["withheld"] == [1, 2] and rows["direct"]["right@1"] == [2, 2]


def test_bench_diagnose_prints_the_funnel_and_puts_it_in_json(tmp_path: Path) -> None:
    path = tmp_path / "pumps.json"
    path.write_text(json.dumps(DOC))
    args = ["bench", "--scenarios", str(path), "--arch", "graph", "--silent", "--diagnose"]
    shown = CliRunner().invoke(main, [*args, "--markdown"])
    assert shown.exit_code == 0, shown.output
    assert "| query type | queries | anchor@1 |" in shown.output
    doc = json.loads(CliRunner().invoke(main, [*args, "--json"]).stdout)
    assert {row["query_type"] for row in doc["funnel"]["networkx"]} >= {"all", "direct"}


@pytest.mark.parametrize(
    ("answer", "truth", "right"),
    [
        ("UNKNOWN", ["UNKNOWN"], True),
        ("Crew_12", ["UNKNOWN"], False),
        ("UNKNOWN", ["no"], False),  # "no" is inside "unknown"
        ("Nordvik_Metals", ["no"], False),  # and inside a name
        ("no: Dock 3 since turn 14 (was Dock 2)", ["no", "Dock 3"], True),
        ("yes (Dock 2 since turn 3)", ["no"], False),
        ("Yes", ["yes"], True),
        ("3 (a; b; c)", ["3"], True),
        ("B140", ["B14"], False),  # a look-alike containing the right id
        ("reopened", ["open"], False),
        ("Pump_09_spare", ["Pump_09"], False),
        ("Pump_09 (since turn 4)", ["pump_09"], True),
        ("€4,200; Dock 2", ["€4,200", "dock 2"], True),
    ],
)
def test_grading_of_unknown_verdicts_and_whole_words(
    answer: str, truth: list[str], right: bool
) -> None:
    assert harness.grade(answer, truth) is right


def test_a_retract_field_must_be_a_bool() -> None:
    doc = json.loads(json.dumps(DOC))
    doc["scenarios"][0]["turns"][4]["retract"] = "yes"
    with pytest.raises(ScenarioError, match=r"turn 5.*retract.*true or false"):
        parse_document(doc, "pumps.json")
    doc["scenarios"][0]["turns"][0]["retract"] = None
    doc["scenarios"][0]["turns"][1] = {
        "turn_id": 2, "turn_type": "distractor", "speaker": "ops", "text": "hi", "retract": True,
    }  # fmt: skip
    with pytest.raises(ScenarioError, match="retract"):
        parse_document(doc, "pumps.json")
