"""The scale benchmark: a workload that knows its answers, and the command that measures it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from ctxneo.bench.workload import MULTI_VALUED, build

from ctxneo.cli import main
from ctxneo.memory import Memory


def test_the_workload_is_deterministic_and_answerable() -> None:
    a, b = build(3_000), build(3_000)
    assert a == b
    assert 2_500 < len(a.facts) < 3_500
    with Memory.open() as memory:
        memory.declare_multi_valued(*MULTI_VALUED)
        memory.remember_many(a.facts)
        wrong = [q.text for q in a.questions if q.expected not in memory.ask(q.text).values]
    assert wrong == []


def test_remember_many_in_batches_equals_one_at_a_time() -> None:
    facts = build(2_000).facts
    one, batched = Memory.open(), Memory.open()
    for m in (one, batched):
        m.declare_multi_valued(*MULTI_VALUED)
    for fact in facts:
        one.store.remember(fact)
    for i in range(0, len(facts), 300):
        batched.remember_many(facts[i : i + 300])
    assert list(one.store.all_facts()) == list(batched.store.all_facts())


def test_bench_scale_json_has_a_row_per_size_and_growth() -> None:
    result = CliRunner().invoke(
        main, ["bench", "scale", "--facts", "500,5000", "--silent", "--json"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [r["backend"] for r in doc["rows"]] == ["networkx", "networkx"]
    small, large = (r["facts"] for r in doc["rows"])
    assert 400 < small < 600 and 4_500 < large < 5_500  # one row per asked size, in order
    for row in doc["rows"]:
        assert row["backend"] == "networkx"
        assert row["direct_correct"] == 1.0 and row["two_hop_correct"] == 1.0
        assert row["ingest_batch_per_s"] > 0 and row["rss_bytes_per_fact"] >= 0
        assert row["floor_p50_ms"] > 0  # (the SQLite lookups answered right: it asserts so)
    # (a few thousand facts may fit in pages the process already holds, freed by its
    # warm-up: RSS grows measurably only with a bigger memory)
    assert doc["rows"][1]["rss_bytes_per_fact"] > 0
    assert set(doc["growth"]["networkx"]) >= {"direct_p50", "two_hop_p50", "ingest_batch"}


@pytest.mark.neo4j
def test_bench_scale_on_neo4j(neo4j_server: Any) -> None:
    env = {"NEO4J_USER": neo4j_server.user, "NEO4J_PASSWORD": neo4j_server.password}
    result = CliRunner(env=env).invoke(
        main,
        [
            "bench",
            "scale",
            "--backend",
            "neo4j",
            "--facts",
            "500",
            "--uri",
            neo4j_server.uri,
            "--silent",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["rows"]
    assert row["direct_correct"] == 1.0 and row["two_hop_correct"] == 1.0
    # What the words meet, the neighbourhood read ahead, and the described relations
    # (read on their own, so that the neighbourhood's text is one for every question): a
    # read the neighbourhood did not cover would add one. 5.6-6 before the read ahead.
    assert 1 <= row["round_trips_per_answer"] <= 3.5
    # The names copied before the first question (warmed, timed): no answer, the first
    # included, reads more than its described relations and its neighbourhood.
    assert row["round_trips_p50"] == 1 and row["round_trips_max"] <= 2
    assert row["warm_ms"] > 0
    # (each one-fact write timed: the median beside the rate, which counts the replans)
    assert row["ingest_one_p50_ms"] > 0 and row["ingest_one_sample"] > 0
    assert row["floor_p50_ms"] > 0
