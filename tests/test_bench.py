"""The benchmark command: one JSON document, honest baselines, the token scaling run."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from ctxneo.bench import baselines

from ctxneo.cli import main
from ctxneo.model import Turn

RECORD_KEYS = {
    "scenario",
    "turn_id",
    "query",
    "query_type",
    "backend",
    "architecture",
    "answer",
    "evidence",
    "correct",
    "tokens",
    "latency_ms",
}


def bench(*args: str) -> dict:
    result = CliRunner().invoke(
        main, ["bench", "--silent", "--json", *args], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_bench_json_is_one_document_with_summary_and_queries(tmp_path: Path) -> None:
    plot = tmp_path / "bench.png"
    doc = bench("--plot", str(plot))
    assert set(doc) == {"summary", "queries"}
    assert {row["architecture"] for row in doc["summary"]} == {"raw", "rag", "graph"}
    assert all(set(q) >= RECORD_KEYS for q in doc["queries"])
    graph = next(r for r in doc["summary"] if r["architecture"] == "graph")
    assert graph["accuracy"] >= 0.9 and graph["graded"] >= 40
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_baselines_score_at_least_the_seeds_published_figures(seed_scenarios: Path) -> None:
    doc = bench("--scenarios", str(seed_scenarios))
    scores = {r["architecture"]: r["correct"] for r in doc["summary"]}
    assert scores["raw"] >= 11 and scores["rag"] >= 9 and scores["graph"] == 18
    tokens = {r["architecture"]: r["avg_tokens"] for r in doc["summary"]}
    assert tokens["graph"] < tokens["rag"] < tokens["raw"]


def test_only_the_chosen_architectures_run() -> None:
    doc = bench("--arch", "graph")
    assert {q["architecture"] for q in doc["queries"]} == {"graph"}
    result = CliRunner().invoke(main, ["bench", "--arch", "llm"])
    assert result.exit_code == 2 and "unknown architecture" in result.output


def test_raw_dump_answers_with_the_newest_best_overlapping_statement() -> None:
    dump = baselines.RawHistoryDump()
    dump.ingest(Turn(1, "fact", "A", "The ticket priority is high."))
    dump.ingest(Turn(2, "fact", "B", "The ticket priority is now critical."))
    dump.ingest(Turn(3, "query", "C", "What is the ticket priority?"))
    answer, context, _ = dump.answer("What is the ticket priority?")
    assert answer == "B: The ticket priority is now critical."
    assert context.count("\n") == 3  # the whole transcript and the question


def test_token_scaling_grows_linearly_for_the_dump_only() -> None:
    result = CliRunner().invoke(main, ["bench", "tokens", "--filler", "10,100", "--json"])
    doc = json.loads(result.stdout)
    assert doc["growth"]["raw"] > 5
    assert doc["growth"]["rag"] == 1.0 and doc["growth"]["graph"] == 1.0
    assert all(row["graph_correct"] for row in doc["rows"])
