"""``ctxneo bench reliability``: short runs that must report zero for every check."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from ctxneo.cli import main

ZERO = (
    "acknowledged_lost",
    "duplicates",
    "refused_but_stored",
    "partial",
    "double_current_keys",
    "seq_errors",
)


def _run(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        main, ["bench", "reliability", "--seconds", "1.5", "--writers", "2", "--json", *args]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_journal_under_every_fault_loses_and_doubles_nothing() -> None:
    doc = _run("--updates", "600", "--silent")
    assert [r["fault"] for r in doc["rows"]] == [
        "kill -9",
        "EFBIG",
        "ENOSPC",
        "fork()",
        "8 threads",
    ]
    threads = doc["rows"][-1]
    # Threads sharing one memory: no exception, no read of a key with two current values.
    assert threads["thread_errors"] == [] and threads["reads"] > 0 and threads["reads_torn"] == 0
    for row in doc["rows"]:
        assert all(row[k] == 0 for k in ZERO), row
        assert row["writes"] > 0 and row["acknowledged"] > 0 and row["replays"] == 1
    faults = {r["fault"]: r for r in doc["rows"]}
    assert faults["EFBIG"]["refused"] > 0 and faults["ENOSPC"]["refused"] > 0  # faults did hit
    assert faults["kill -9"]["faults_injected"] > 0
    assert [r["policy"] for r in doc["fsync"]] == ["always", "batch", "off"]
    assert [h["history_facts"] for h in doc["history"]] == [600, 600]
    assert doc["all_zero"] is True


@pytest.mark.neo4j
def test_neo4j_under_cut_connections_loses_and_doubles_nothing(neo4j_server: Any) -> None:
    args = ["--backend", "neo4j", "--uri", neo4j_server.uri, "--silent"]
    if neo4j_server.password:
        args += ["--user", neo4j_server.user or "neo4j", "--password", neo4j_server.password]
    (row,) = _run(*args)["rows"]
    assert all(row[k] == 0 for k in ZERO), row
    assert row["acknowledged"] > 0 and row["outcome_unknown"] == 0
    # A reader beside the writers never saw a contested key with zero or two values.
    assert row["reads"] > 0 and row["reads_torn"] == 0
