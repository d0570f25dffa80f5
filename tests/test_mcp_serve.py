"""``ctxneo serve`` as MCP clients meet it: server processes over stdio and streamable HTTP."""

from __future__ import annotations

import http.client
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters
from test_mcp_tools import ok, run

from ctxneo.cli import main as cli
from ctxneo.mcp_drain import _Pending
from ctxneo.stores.networkx import NetworkXStore

REPO = Path(__file__).resolve().parents[1]
JOIN = "Which team owns the service that checkout depends on?"
#: A client's first request, as it goes over the wire.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


class Lines:
    """The lines a server writes to a pipe, each waited for at most ``timeout`` seconds.

    ``select()`` on ``process.stdout`` says only whether the pipe holds bytes; its
    ``readline()`` takes every line the pipe holds into the file's buffer, and a reply
    there is never signalled again (a server that answered ahead of its client seemed to
    lose its last replies). So the pipe is read here, unbuffered, and the rest kept.
    """

    def __init__(self, stream: object) -> None:
        self._fd = stream.fileno()  # type: ignore[attr-defined]
        self.rest = b""

    def next(self, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.rest:
            ready, _, _ = select.select([self._fd], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no answer from the server within {timeout:g} s"
            chunk = os.read(self._fd, 1 << 16)
            assert chunk, "the server closed its output"
            self.rest += chunk
        line, self.rest = self.rest.split(b"\n", 1)
        return line.decode()


def serve(*args: str) -> list[str]:
    return [sys.executable, "-m", "ctxneo", "serve", *args]


def stdio_server(journal: Path) -> StdioServerParameters:
    command = serve("--store", str(journal))
    return StdioServerParameters(command=command[0], args=command[1:])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_server_processes_on_one_journal_share_one_memory_and_lose_no_write(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "memory.jsonl"
    writes = 30  # through both servers at once, onto three single-valued keys

    async def script() -> None:
        async with Client(stdio_server(journal)) as a, Client(stdio_server(journal)) as b:
            await ok(
                a,
                "remember",
                subject="Service_Checkout",
                predicate="DEPENDS_ON",
                object="Service_Payments",
                speaker="Agent_A",
                turn=1,
                multi=True,
            )
            # B's server sees what A's server wrote.
            seen = await ok(b, "facts", entity="Service_Checkout")
            assert [f["speaker"] for f in seen["facts"]] == ["Agent_A"]
            await ok(
                b,
                "remember",
                subject="Service_Payments",
                predicate="OWNED_BY",
                object="Payments_Team",
                speaker="Agent_B",
                turn=2,
            )
            async with anyio.create_task_group() as group:
                for i in range(writes):
                    group.start_soon(
                        lambda i=i: ok(
                            (a, b)[i % 2],
                            "remember",
                            subject=f"Ticket_{i % 3}",
                            predicate="HAS_STATUS",
                            object=f"status-{i}",
                            speaker=("Agent_A", "Agent_B")[i % 2],
                        )
                    )

        async with Client(stdio_server(journal)) as c:
            answer = await ok(c, "ask", question=JOIN)
            assert answer["answer"] == "Payments_Team"
            said = {(f["predicate"], f["speaker"], f["turn"]) for f in answer["evidence"]}
            assert said >= {("DEPENDS_ON", "Agent_A", 1), ("OWNED_BY", "Agent_B", 2)}
            assert "Service_Checkout DEPENDS_ON Service_Payments" in answer["context"]

            # A bad call is a tool error, and the next call works.
            bad = await c.call_tool(
                "remember", {"subject": "X", "predicate": "is a", "object": "Y"}
            )
            assert bad.is_error
            assert bad.content[0].text.startswith("Error: invalid predicate 'is a'")  # type: ignore[union-attr]
            stats = await ok(c, "stats")
            assert stats["facts"] == 2 + writes and stats["last_seq"] == 2 + writes
            assert stats["current_facts"] == 2 + 3

            seqs = []
            for key in range(3):
                history = await ok(c, "history", subject=f"Ticket_{key}", limit=200)
                facts = history["facts"]
                assert len(facts) == len(range(key, writes, 3))
                assert sum(f["current"] for f in facts) == 1
                assert facts[-1]["current"]
                seqs += [f["seq"] for f in facts]
            assert len(set(seqs)) == writes

    run(script)
    # The journal replays to the same memory: one current value per key.
    with NetworkXStore(journal) as replayed:
        for key in range(3):
            assert len([f for f in replayed.history(f"Ticket_{key}") if f.current]) == 1


@pytest.mark.slow
def test_stdio_writes_nothing_but_protocol_to_stdout(tmp_path: Path) -> None:
    journal = tmp_path / "memory.jsonl"
    journal.write_text('{"format": "ctxneo-journal/1"}\n')  # opening no longer creates a file
    with journal.open("a") as f:
        f.write('{"op": "fact", "seq": 1, "s": "torn')  # a crash mid-write: warned about on open
    requests = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "facts", "arguments": {"entity": "Nobody"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {
                "name": "remember",
                "arguments": {"subject": "A", "predicate": "IS", "object": "B"},
            },
        },
    ]
    process = subprocess.Popen(
        serve("--store", str(journal)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    responses = {}
    lines = Lines(process.stdout)
    try:
        for request in requests:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            if "id" not in request:
                continue
            message = json.loads(lines.next())  # every line on stdout is a protocol message
            assert message["jsonrpc"] == "2.0"
            responses[message["id"]] = message
        rest, errors = process.communicate(timeout=60)  # closes stdin: the client is gone
        rest = lines.rest.decode() + rest
    finally:
        if process.poll() is None:
            process.kill()
    assert [json.loads(line)["jsonrpc"] for line in rest.splitlines()] == ["2.0"] * len(
        rest.splitlines()
    )
    assert process.returncode == 0
    missing = responses[2]["result"]
    assert missing["isError"] is True
    assert missing["content"][0]["text"] == "Error: no entity 'Nobody' in this memory"
    stored = responses[3]["result"]
    assert stored["structuredContent"]["stored"]["seq"] == 1
    # The warning and the start-up line went to stderr.
    assert "torn" in errors and f"ctxneo: serving journal {journal}" in errors


def test_calls_sent_without_waiting_run_in_the_order_sent(tmp_path: Path) -> None:
    """A client may send its next call before the last one's reply (JSON-RPC allows
    it): a fact it remembered must be there for the calls it sent after."""
    pairs = 30
    requests: list[dict[str, object]] = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    for k in range(pairs):
        requests.append(
            {
                "jsonrpc": "2.0",
                "id": 2 + 2 * k,
                "method": "tools/call",
                "params": {
                    "name": "remember",
                    "arguments": {"subject": f"Svc_{k}", "predicate": "OWNED_BY", "object": "T"},
                },
            }
        )
        requests.append(
            {
                "jsonrpc": "2.0",
                "id": 3 + 2 * k,
                "method": "tools/call",
                "params": {"name": "facts", "arguments": {"entity": f"Svc_{k}"}},
            }
        )
    process = subprocess.Popen(
        serve("--store", str(tmp_path / "memory.jsonl")),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    replies: dict[int, dict[str, object]] = {}
    lines = Lines(process.stdout)
    try:
        process.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        process.stdin.flush()
        while len(replies) < 1 + 2 * pairs:
            message = json.loads(lines.next())
            replies[message["id"]] = message["result"]
        process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    for k in range(pairs):
        found = replies[3 + 2 * k]
        assert not found.get("isError"), found  # "no entity 'Svc_k'": it ran first
        (fact,) = found["structuredContent"]["facts"]  # type: ignore[index]
        assert fact["subject"] == f"Svc_{k}"


def test_calls_received_before_the_client_leaves_are_all_run(tmp_path: Path) -> None:
    """A client that pipes its writes in and closes its end (``ctxneo serve < calls``)
    loses none: calls still waiting for their turn when stdin ends run, in order, and
    each is answered."""
    journal = tmp_path / "memory.jsonl"
    writes = 25
    requests: list[dict[str, object]] = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    requests += [
        {
            "jsonrpc": "2.0",
            "id": 2 + k,
            "method": "tools/call",
            "params": {
                "name": "remember",
                "arguments": {"subject": f"Node_{k}", "predicate": "LINKED_TO", "object": "Hub"},
            },
        }
        for k in range(writes)
    ]
    process = subprocess.run(
        serve("--store", str(journal)),
        input="".join(json.dumps(r) + "\n" for r in requests),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 0, process.stderr
    facts = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [f["s"] for f in facts if f.get("op") == "fact"] == [f"Node_{k}" for k in range(writes)]
    # and every call is answered before the server exits (the SDK dropped all but one)
    replies = {m["id"]: m for m in map(json.loads, process.stdout.splitlines())}
    assert sorted(replies) == list(range(1, writes + 2))
    assert all(not replies[2 + k]["result"].get("isError") for k in range(writes))


def test_a_malformed_cancel_or_a_repeated_id_never_loses_a_reply(tmp_path: Path) -> None:
    """Held to the end of input, the server still serves a client that breaks the
    protocol as the SDK does: a cancel naming no id is dropped, and each of three calls
    sharing one id is answered."""
    remember = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "remember",
            "arguments": {"subject": "A", "predicate": "P", "object": "B"},
        },
    }
    requests = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}},
        remember,
        remember,
        remember,
        {"jsonrpc": "2.0", "id": 9, "method": "ping"},
    ]
    process = subprocess.run(
        serve("--store", str(tmp_path / "memory.jsonl")),
        input="".join(json.dumps(r) + "\n" for r in requests),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 0, process.stderr
    ids = sorted(json.loads(line)["id"] for line in process.stdout.splitlines())
    assert ids == [1, 7, 7, 7, 9]


def test_a_line_that_is_no_message_is_answered_with_a_json_rpc_error(tmp_path: Path) -> None:
    """A line cut short or a message of the wrong shape gets the error JSON-RPC prescribes
    (id null) and a line on stderr, not silence that leaves the client waiting; the
    calls after it are served."""
    lines = [
        json.dumps(INITIALIZE),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "stats"',
        json.dumps({"jsonrpc": "2.0", "id": 8, "method": 5}),
        json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}),
    ]
    process = subprocess.run(
        serve("--store", str(tmp_path / "memory.jsonl")),
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 0, process.stderr
    replies = [json.loads(line) for line in process.stdout.splitlines()]
    errors = [r["error"]["code"] for r in replies if r.get("id") is None]
    assert errors == [-32700, -32600]
    assert sorted(r["id"] for r in replies if r.get("id") is not None) == [1, 9]
    assert process.stderr.count("no JSON-RPC message") == 2


@pytest.mark.slow
def test_one_streamable_http_session(tmp_path: Path) -> None:
    journal, port = tmp_path / "memory.jsonl", free_port()
    process = subprocess.Popen(
        serve("--store", str(journal), "--http", "--port", str(port)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.communicate()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the HTTP server did not listen in 60 s"
                time.sleep(0.2)

        async def script() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                for subject, predicate, obj in [
                    ("Service_Checkout", "DEPENDS_ON", "Service_Payments"),
                    ("Service_Payments", "OWNED_BY", "Payments_Team"),
                ]:
                    await ok(
                        client,
                        "remember",
                        subject=subject,
                        predicate=predicate,
                        object=obj,
                        speaker="Agent_Http",
                    )
                assert (await ok(client, "ask", question=JOIN))["answer"] == "Payments_Team"
                bad = await client.call_tool("history", {"subject": "Nobody"})
                assert bad.is_error
                assert (await ok(client, "stats"))["facts"] == 2

        run(script)
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=30)
    assert f"over streamable HTTP at http://127.0.0.1:{port}/mcp" in errors


def test_serve_refuses_bad_options_in_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    runner = CliRunner(env={"NEO4J_URI": None, "CTXNEO_STORE": None, "CTXNEO_HOME": str(home)})
    store = str(tmp_path / "memory.jsonl")
    result = runner.invoke(cli, ["serve"])
    assert result.exit_code == 2 and "--store FILE" in result.output
    result = runner.invoke(cli, ["serve", "--store", store, "--port", "9000"])
    assert result.exit_code == 2 and "--port need --http" in result.output
    result = runner.invoke(cli, ["serve", "--store", store, "--token-file", "t"])
    assert result.exit_code == 2 and "--token-file need --http" in result.output
    # A host open to the network is warned about; a port in use is one clear error.
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = runner.invoke(
            cli, ["serve", "--store", store, "--http", "--host", "0.0.0.0", "--port", port]
        )
    assert result.exit_code == 1
    assert "Warning: listening on 0.0.0.0" in result.stderr
    # Beyond loopback a token is required: made where the README says, readable by you only.
    assert (home / "http-token").stat().st_mode & 0o777 == 0o600
    assert f"made a new token in {home / 'http-token'}" in result.stderr
    assert result.stderr.strip().splitlines()[-1] == f"Error: cannot listen on 0.0.0.0:{port}: " + (
        "Address already in use"
    )


@pytest.mark.slow
def test_the_three_agents_example_runs_on_the_embedded_store() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "examples" / "three_agents.py")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for agent in ("Agent_Planner", "Agent_Implementer", "Agent_Reviewer"):
        assert f"{agent} " in out
    join = out.split(JOIN, 1)[1].splitlines()
    assert join[1].split()[:2] == ["learned", "Payments_Team"]
    assert "from  Service_Checkout DEPENDS_ON Service_Payments [Agent_Planner, turn 2]" in out
    assert "from  Service_Payments OWNED_BY Payments_Team [Agent_Implementer, turn 4]" in out
    assert "closed  #1 Project_Atlas USES_DATABASE PostgreSQL" in out


def _wait_listening(process: subprocess.Popen[str], host: str, port: int) -> None:
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, process.communicate()
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, "the HTTP server did not listen in 60 s"
            time.sleep(0.2)


@pytest.mark.slow
def test_http_checks_host_origin_and_the_bearer_token_on_any_address(tmp_path: Path) -> None:
    journal, port, token_file = tmp_path / "memory.jsonl", free_port(), tmp_path / "t" / "token"
    host = "127.0.0.2"  # loopback, yet not one of the SDK's own three names
    process = subprocess.Popen(
        serve(
            "--store", str(journal), "--http", "--host", host, "--port", str(port),
            "--token-file", str(token_file), "--allow-host", "memory.internal",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        _wait_listening(process, host, port)
        assert token_file.stat().st_mode & 0o777 == 0o600
        token = token_file.read_text().strip()
        assert len(token) >= 40

        def post(**headers: str) -> int:
            connection = http.client.HTTPConnection(host, port, timeout=30)
            try:
                sent = {
                    "Host": f"{host}:{port}",
                    "Accept": "application/json, text/event-stream",
                    "Content-Type": "application/json",
                    **headers,
                }
                connection.request("POST", "/mcp", json.dumps(INITIALIZE), sent)
                return connection.getresponse().status
            finally:
                connection.close()

        bearer = f"Bearer {token}"
        assert post() == 401
        assert post(Authorization="Bearer wrong") == 401
        assert post(Authorization=bearer, Host="evil.example") == 421
        assert post(Authorization=bearer, Origin="http://evil.example") == 403
        assert post(Authorization=bearer) == 200
        assert post(Authorization=bearer, Host=f"memory.internal:{port}") == 200
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=30)
    assert f"made a new token in {token_file}" in errors and token not in errors


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file limits")
def test_http_stays_up_while_clients_hold_every_file_it_may_open(tmp_path: Path) -> None:
    """Requests left unfinished on purpose, before any token is read, take every file
    descriptor the server may open: it refuses connections for a while and stays up (it
    exited, its log handler failing to import its traceback module), then serves again."""
    import resource

    journal, port, token_file = tmp_path / "memory.jsonl", free_port(), tmp_path / "token"

    def few_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (200, 200))

    with (tmp_path / "serve.log").open("w") as log:
        process = subprocess.Popen(
            serve("--store", str(journal), "--http", "--port", str(port),
                  "--token-file", str(token_file)),
            stdout=log,
            stderr=log,
            preexec_fn=few_files,
        )  # fmt: skip
    held: list[socket.socket] = []
    try:
        _wait_listening(process, "127.0.0.1", port)
        for _ in range(230):
            held.append(socket.create_connection(("127.0.0.1", port), timeout=10))
            held[-1].sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        time.sleep(3)
        assert process.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
        for s in held:
            s.close()
        held.clear()
        token = token_file.read_text().strip()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        connection.request(
            "POST",
            "/mcp",
            json.dumps(INITIALIZE),
            {
                "Host": f"127.0.0.1:{port}",
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
                "Authorization": f"Bearer {token}",
            },
        )
        assert connection.getresponse().status == 200
        connection.close()
    finally:
        for s in held:
            s.close()
        # (killed: the event loop of Python 3.11 queues a retry per refused accept, whose
        # errors a graceful shutdown would wait to log)
        process.kill()
        process.wait(timeout=30)


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("secret\n")
    token_file.chmod(0o644)
    runner = CliRunner(env={"NEO4J_URI": None, "CTXNEO_STORE": None})
    result = runner.invoke(
        cli,
        ["serve", "--store", str(tmp_path / "m.jsonl"), "--http", "--token-file", str(token_file)],
    )
    assert result.exit_code == 2, result.output
    assert "can be read by others" in result.stderr and "chmod 600" in result.stderr


def test_the_end_of_input_waits_for_replies_but_not_for_a_lost_request() -> None:
    """A request the SDK never answers must not keep ``serve`` up forever: the end of
    input goes through once a while has passed with no reply at all."""

    async def run() -> None:
        lost = _Pending()
        lost.add(1)
        await lost.answered(idle_limit=0.05)  # returns: nothing will ever answer 1
        answered = _Pending()
        answered.add(1)
        answered.add("a")
        answered.discard(1)
        answered.discard("a")
        await answered.answered(idle_limit=3600)  # returns at once: all answered

    anyio.run(run)


def test_a_token_file_that_is_a_fifo_is_refused_without_waiting(tmp_path: Path) -> None:
    from ctxneo.errors import ConfigError
    from ctxneo.http_guard import read_or_make_token

    fifo = tmp_path / "token"
    os.mkfifo(fifo, 0o600)
    # (opened without O_NONBLOCK, a FIFO waits for a writer for ever: run in a thread)
    outcome: list[BaseException | None] = []

    def read() -> None:
        try:
            read_or_make_token(fifo)
            outcome.append(None)
        except BaseException as e:
            outcome.append(e)

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(30)
    assert outcome, "reading a FIFO token file hung"
    assert isinstance(outcome[0], ConfigError) and "not a regular file" in str(outcome[0])


def test_serving_an_empty_memory_says_so_where_it_starts(tmp_path: Path) -> None:
    """A misspelt --store serves a new, empty journal: the start-up line says it is empty
    (every answer would otherwise read as the memory not knowing); a memory with facts
    is served without that note."""
    lines = [json.dumps(INITIALIZE), json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"})]
    full = tmp_path / "memory.jsonl"
    assert (
        CliRunner().invoke(cli, ["remember", "A", "OWNED_BY", "B", "--store", str(full)]).exit_code
        == 0
    )
    for journal, empty in ((tmp_path / "memroy.jsonl", True), (full, False)):
        process = subprocess.run(
            serve("--store", str(journal)),
            input="".join(line + "\n" for line in lines),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert process.returncode == 0, process.stderr
        started = f"ctxneo: serving journal {journal} (empty: nothing remembered in it yet) over"
        assert (started in process.stderr) is empty, process.stderr
