"""The jar-launched server's bookkeeping (the server itself is exercised by every Neo4j test)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ctxneo.neo4j_local.server import STATE_FILE, LocalNeo4j


def test_a_state_file_whose_pid_is_not_our_server_is_not_a_running_server(tmp_path: Path) -> None:
    # This test's own pid is alive but runs python, not the launcher: never "running".
    state = {
        "pid": os.getpid(),
        "port": 1,
        "uri": "bolt://127.0.0.1:1",
        "data_dir": str(tmp_path),
        "log": str(tmp_path / "neo4j.log"),
    }
    (tmp_path / STATE_FILE).write_text(json.dumps(state))
    server = LocalNeo4j(tmp_path)
    assert server.status() is None
    assert server.stop() is None
    assert not (tmp_path / STATE_FILE).exists()
