"""Scenario files: the shipped suite is valid, and a malformed file is refused precisely."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxneo.cli import main
from ctxneo.errors import ScenarioError
from ctxneo.scenarios import load_file, load_suite, shipped_suite

GOOD: dict[str, Any] = {
    "format": "ctxneo-scenarios/1",
    "scenarios": [
        {
            "name": "tiny",
            "description": "one fact, one question",
            "turns": [
                {
                    "turn_id": 1,
                    "turn_type": "fact",
                    "speaker": "Agent_A",
                    "text": "A owns B.",
                    "subject": "B",
                    "predicate": "OWNED_BY",
                    "object": "A",
                    "fact_id": "f1",
                },
                {"turn_id": 2, "turn_type": "distractor", "speaker": "Agent_B", "text": "ok"},
                {
                    "turn_id": 3,
                    "turn_type": "query",
                    "speaker": "Agent_B",
                    "text": "Who owns B?",
                    "query_type": "direct",
                    "required_fact_ids": ["f1"],
                    "ground_truth": "A",
                },
            ],
        }
    ],
}


def write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "suite.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def broken(mutate: Any) -> dict[str, Any]:
    doc = copy.deepcopy(GOOD)
    mutate(doc)
    return doc


def test_the_shipped_suite_meets_its_brief() -> None:
    scenarios = load_suite(shipped_suite())
    assert len(scenarios) >= 8
    graded = [t for s in scenarios for t in s.turns if t.graded]
    assert len(graded) >= 40
    assert {t.query_type for t in graded} >= {
        "direct",
        "distant",
        "join",
        "history",
        "provenance",
        "multi",
    }
    for s in scenarios:
        kinds = [t.turn_type for t in s.turns]
        assert kinds.count("distractor") > kinds.count("fact"), s.name


def test_queries_without_labels_or_ground_truth_are_valid(tmp_path: Path) -> None:
    doc = broken(
        lambda d: [
            d["scenarios"][0]["turns"][2].pop(k)
            for k in ("query_type", "required_fact_ids", "ground_truth")
        ]
    )
    (scenario,) = load_file(write(tmp_path, doc))
    assert not scenario.turns[2].graded


@pytest.mark.parametrize(
    ("mutate", "turn_id", "field"),
    [
        (lambda d: d["scenarios"][0]["turns"][0].pop("predicate"), 1, "predicate"),
        (lambda d: d["scenarios"][0]["turns"][0].update(predicate="owned by"), 1, "predicate"),
        (lambda d: d["scenarios"][0]["turns"][1].update(turn_id=1), 1, "turn_id"),
        (lambda d: d["scenarios"][0]["turns"][2].update(turn_type="question"), 3, "turn_type"),
        (lambda d: d["scenarios"][0]["turns"][2].update(ground_truth=[]), 3, "ground_truth"),
        (
            lambda d: d["scenarios"][0]["turns"][2].update(required_fact_ids=["f9"]),
            3,
            "required_fact_ids",
        ),
        (lambda d: d["scenarios"][0]["turns"][1].update(speaker=""), 2, "speaker"),
        (lambda d: d["scenarios"][0]["turns"][1].update(ground_truth="x"), 2, "ground_truth"),
        (lambda d: d["scenarios"][0]["turns"][2].update(text="why " * 600), 3, "text"),
        (lambda d: d["scenarios"][0]["turns"][0].update(subject="S" * 5_000), 1, "subject"),
        (lambda d: d["scenarios"][0]["turns"][2].update(turn_id=2**63), 2**63, "turn_id"),
        # a misspelt field is refused by name, not dropped with what it said
        (
            lambda d: d["scenarios"][0]["turns"][2].update(ground_truht="x"),
            3,
            "ground_truht",
        ),
        (lambda d: d["scenarios"][0]["turns"][0].update(retracted=True), 1, "retracted"),
    ],
)
def test_a_malformed_turn_is_named_by_file_scenario_turn_and_field(
    tmp_path: Path, mutate: Any, turn_id: int, field: str
) -> None:
    path = write(tmp_path, broken(mutate))
    with pytest.raises(ScenarioError) as info:
        load_file(path)
    e = info.value
    assert (e.file, e.scenario, e.turn_id, e.field) == (str(path), "tiny", turn_id, field)
    assert str(path) in str(e) and "tiny" in str(e) and f"turn {turn_id}" in str(e)
    if field == "turn_id" and turn_id == 1:  # (turn 2 written as 1, after turn 1)
        assert "duplicate turn id 1" in str(e)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ("{not json", "not valid JSON"),
        ({"format": "other", "scenarios": []}, "format"),
        ({"format": "ctxneo-scenarios/1", "scenarios": []}, "scenarios"),
        ({"format": "ctxneo-scenarios/1", "senarios": []}, "senarios"),
    ],
)
def test_a_malformed_document_is_refused(tmp_path: Path, doc: Any, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        load_file(write(tmp_path, doc))


def test_a_directory_of_no_scenario_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no scenario file") as info:
        load_suite([tmp_path])
    assert info.value.file == str(tmp_path)


def test_a_misspelt_scenario_field_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, broken(lambda d: d["scenarios"][0].update(multi_valued=["X"])))
    with pytest.raises(ScenarioError) as info:
        load_file(path)
    assert (info.value.scenario, info.value.field) == ("tiny", "multi_valued")


def test_the_cli_refuses_a_malformed_file_with_exit_code_2_and_runs_nothing(tmp_path: Path) -> None:
    good = write(tmp_path, GOOD)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(broken(lambda d: d["scenarios"][0]["turns"][0].pop("object"))))
    result = CliRunner().invoke(
        main, ["bench", "--scenarios", str(good), "--scenarios", str(bad), "--json"]
    )
    assert result.exit_code == 2
    assert result.stdout == ""
    assert f"{bad}, scenario 'tiny', turn 1, field 'object'" in result.stderr
    assert "Traceback" not in result.output


def test_an_endless_or_huge_input_is_refused_without_reading_it_all() -> None:
    with pytest.raises(ScenarioError, match="larger than 64 MB"):
        load_file("/dev/zero")
