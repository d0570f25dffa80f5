"""``ctxneo bench kgqa``: a head|relation|tail KB, MetaQA questions in both formats, graded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from ctxneo.bench import kgqa

from ctxneo.cli import main
from ctxneo.errors import DatasetError
from ctxneo.memory import Memory

# Three films; every film has the genre Drama, a hub that reaches every film.
KB = """\
Heat|directed_by|Michael Mann
Heat|starred_actors|Al Pacino
Heat|starred_actors|Robert De Niro
Heat|release_year|1995
Heat|has_genre|Drama
Collateral|directed_by|Michael Mann
Collateral|starred_actors|Tom Cruise
Collateral|release_year|2004
Collateral|has_genre|Drama
Top Gun|directed_by|Tony Scott
Top Gun|starred_actors|Tom Cruise
Top Gun|release_year|1986
Top Gun|has_genre|Drama
"""

QUESTIONS = [
    {"hop": 1, "question": "who directed [Heat]", "entity": "Heat", "answers": ["Michael Mann"]},
    {
        "hop": 2,
        "question": "who acted in the movies directed by [Michael Mann]",
        "entity": "Michael Mann",
        "answers": ["Al Pacino", "Robert De Niro", "Tom Cruise"],
    },
    {
        "hop": 1,
        "question": "what films did [Tom Cruise] act in",
        "entity": "Tom Cruise",
        "answers": ["Collateral", "Top Gun"],
    },
]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    kb = tmp_path / "kb.txt"
    kb.write_text(KB, encoding="utf-8")
    jsonl = tmp_path / "dev.jsonl"
    jsonl.write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n", encoding="utf-8")
    tsv = tmp_path / "1-hop" / "qa_dev.txt"
    tsv.parent.mkdir()
    tsv.write_text(
        "when was [Top Gun] released\t1986\nwho starred in [Heat]\tAl Pacino|Robert De Niro\n",
        encoding="utf-8",
    )
    return {"kb": kb, "jsonl": jsonl, "tsv": tsv}


def test_the_kb_loads_with_every_relation_multi_valued(files: dict[str, Path]) -> None:
    facts = kgqa.read_kb(files["kb"])
    assert len(facts) == 13 and all(f.multi for f in facts)
    with Memory.open() as memory:
        loaded = kgqa.load(memory, facts, batch=4)
        assert loaded["facts"] == 13 and loaded["relations"] == 4
        assert {f.object for f in memory.current("Heat", "starred_actors")} == {
            "Al Pacino",
            "Robert De Niro",
        }


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("Heat|directed by|Michael Mann", "invalid predicate"),
        ("Heat|directed_by", "expected head|relation|tail"),
        ("Heat||Michael Mann", "expected head|relation|tail"),
    ],
)
def test_a_malformed_kb_line_is_refused_with_its_line_number(
    tmp_path: Path, line: str, says: str
) -> None:
    kb = tmp_path / "kb.txt"
    kb.write_text(f"Heat|release_year|1995\n\n{line}\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=rf"kb.txt, line 3: .*{says}"):
        kgqa.read_kb(kb)


def test_questions_are_read_from_json_lines_and_metaqa_lines(files: dict[str, Path]) -> None:
    jsonl = kgqa.read_questions(files["jsonl"])
    assert [(q.hop, q.entity) for q in jsonl] == [
        (1, "Heat"),
        (2, "Michael Mann"),
        (1, "Tom Cruise"),
    ]
    tsv = kgqa.read_questions(files["tsv"])  # the hop count comes from the folder name
    assert [(q.hop, q.entity, q.answers) for q in tsv] == [
        (1, "Top Gun", ("1986",)),
        (1, "Heat", ("Al Pacino", "Robert De Niro")),
    ]
    assert kgqa.words_only("when was [Top Gun] released") == "when was Top Gun released"
    assert [q.hop for q in kgqa.select([*jsonl, *tsv], [1], limit=2)] == [1, 1]


def test_a_metaqa_file_needs_its_hop_count(tmp_path: Path) -> None:
    plain = tmp_path / "questions.txt"
    plain.write_text("who directed [Heat]\tMichael Mann\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"questions\.txt:1: cannot tell the hop count"):
        kgqa.read_questions(plain)
    assert kgqa.read_questions(plain, hops=[2])[0].hop == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"hop": 1, "question": "who directed [Heat]", "answers": []}\n')
    with pytest.raises(DatasetError, match=r"bad\.jsonl:1: field 'answers'"):
        kgqa.read_questions(bad)


def test_hits_at_1_and_f1_grade_the_listed_values_case_insensitively() -> None:
    assert kgqa.grade(["tom cruise", "Al Pacino"], ["Tom Cruise"]) == (True, pytest.approx(2 / 3))
    assert kgqa.grade(["Nobody", "Al Pacino"], ["Al Pacino", "Robert De Niro"]) == (False, 0.5)
    assert kgqa.grade([], ["Al Pacino"]) == (False, 0.0)


def test_the_question_type_is_the_path_that_best_matches_the_gold_answers(
    files: dict[str, Path],
) -> None:
    typer = kgqa.PathTyper(kgqa.read_kb(files["kb"]))
    assert typer.question_type("Heat", ["Michael Mann"], 1) == "directed_by"
    assert typer.question_type("Tom Cruise", ["Collateral", "Top Gun"], 1) == "^starred_actors"
    cast = ["Al Pacino", "Robert De Niro", "Tom Cruise"]
    assert typer.question_type("michael mann", cast, 2) == "^directed_by/starred_actors"
    # The genre hub also reaches both years, and every other year too: the director's path wins.
    years = typer.question_type("Heat", ["1995", "2004"], 3)
    assert years == "directed_by/^directed_by/release_year"
    assert typer.question_type("Heat", ["Nobody"], 1) == kgqa.NO_PATH


def kgqa_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["bench", "kgqa", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_the_command_grades_both_formats_per_hop_and_type(files: dict[str, Path]) -> None:
    code, out, _ = kgqa_cli(
        "--kb",
        str(files["kb"]),
        "--questions",
        str(files["jsonl"]),
        "--questions",
        str(files["tsv"]),
        "--json",
        "--silent",
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["mode"] == "words" and doc["kb"]["facts"] == 13 and doc["kb"]["facts_per_s"] > 0
    records = doc["questions"]
    assert [r["asked"] for r in records][:2] == [
        "who directed Heat",
        "what films did Tom Cruise act in",
    ]
    assert all(r["topic"] is None and "[" not in r["asked"] for r in records)
    for r in records:
        assert (r["hits1"], r["f1"]) == pytest.approx(kgqa.grade(r["values"], r["answers"]))
        assert r["unknown"] == (r["answer"] == "UNKNOWN")
    one_hop = next(h for h in doc["hops"] if h["hop"] == 1)
    ones = [r for r in records if r["hop"] == 1]
    assert one_hop["questions"] == 4
    assert one_hop["hits1"] == pytest.approx(sum(r["hits1"] for r in ones) / 4)
    assert {(t["hop"], t["question_type"]) for t in doc["types"]} >= {
        (1, "directed_by"),
        (1, "release_year"),
        (2, "^directed_by/starred_actors"),
    }


def test_topic_given_mode_passes_the_entity_and_limit_caps_each_hop(
    files: dict[str, Path],
) -> None:
    kb, jsonl = str(files["kb"]), str(files["jsonl"])
    code, out, _ = kgqa_cli("--kb", kb, "--questions", jsonl, "--topic-given", "--limit", "1")
    assert code == 0 and "topic given" in out and "Hits@1" in out
    code, out, _ = kgqa_cli("--kb", kb, "--questions", jsonl, "--topic-given", "--json", "--silent")
    doc = json.loads(out)
    assert doc["mode"] == "topic"
    assert [r["topic"] for r in doc["questions"]] == ["Heat", "Tom Cruise", "Michael Mann"]
    code, out, _ = kgqa_cli("--kb", kb, "--questions", jsonl, "--hops", "2", "--markdown")
    assert code == 0 and "\n| 2 | 1 |" in out and "\n| 1 |" not in out


def test_min_confidence_is_passed_to_every_answer(files: dict[str, Path]) -> None:
    kb, jsonl, tsv = str(files["kb"]), str(files["jsonl"]), str(files["tsv"])
    runs = {}
    for threshold in ("0", "1"):
        code, out, _ = kgqa_cli(
            "--kb", kb, "--questions", jsonl, "--questions", tsv, "--min-confidence", threshold,
            "--json", "--silent",
        )  # fmt: skip
        assert code == 0
        runs[threshold] = json.loads(out)
    assert runs["0"]["min_confidence"] == 0.0
    assert not any(r["unknown"] for r in runs["0"]["questions"])  # every question answered
    answered = [r for r in runs["1"]["questions"] if not r["unknown"]]
    assert len(answered) < len(runs["1"]["questions"])  # certainty is rare
    code, out, _ = kgqa_cli("--kb", kb, "--questions", jsonl, "--min-confidence", "0", "--markdown")
    assert code == 0 and "answering at confidence ≥ 0" in out


def test_bad_input_is_one_error_line(files: dict[str, Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken.txt"
    broken.write_text("Heat|directed_by|Michael Mann\nHeat directed_by Michael Mann\n")
    code, _, err = kgqa_cli("--kb", str(broken), "--questions", str(files["jsonl"]))
    assert code == 2 and err.startswith("Error: ") and "line 2" in err and err.count("\n") == 1
    code, _, err = kgqa_cli(
        "--kb", str(files["kb"]), "--questions", str(files["jsonl"]), "--hops", "4"
    )
    assert code == 2 and "no questions with hop count 4" in err
