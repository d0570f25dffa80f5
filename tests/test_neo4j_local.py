"""The jar-launched local Neo4j: what it protects, and its bookkeeping.

What a local server must hold (README, "A local Neo4j"): its data directory
and password are its owner's alone, Bolt needs the password, and Cypher on it
reads no file and reaches no network. The tests that need the server use the
session's when it is the jar-launched one, else start their own.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import socket
import stat
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxneo.errors import ConfigError, Neo4jLaunchError, StoreUnavailable
from ctxneo.model import NewFact
from ctxneo.neo4j_local.server import (
    PASSWORD_FILE,
    PORT_FILE,
    REGISTRY_DIR,
    STATE_FILE,
    LocalNeo4j,
    Runtime,
    _register,
    _registered,
    local_credentials,
)
from ctxneo.stores.neo4j import CONNECT_TIMEOUT, Neo4jStore

REPO = Path(__file__).resolve().parents[1]


def plant_state(data: Path, port: int) -> None:
    """A state file naming this test's own pid: alive, but python, not the launcher."""
    state = {
        "pid": os.getpid(),
        "port": port,
        "uri": f"bolt://127.0.0.1:{port}",
        "data_dir": str(data),
        "log": str(data / "neo4j.log"),
    }
    (data / STATE_FILE).write_text(json.dumps(state))


def test_a_state_file_whose_pid_is_not_our_server_is_not_a_running_server(tmp_path: Path) -> None:
    # This test's own pid is alive but runs python, not the launcher: never "running".
    plant_state(tmp_path, 1)
    server = LocalNeo4j(tmp_path)
    assert server.status() is None
    assert server.stop() is None
    assert not (tmp_path / STATE_FILE).exists()
    assert local_credentials("bolt://127.0.0.1:1", tmp_path) is None


@pytest.fixture
def listening() -> Iterator[int]:
    """A port another program listens on (as the JVM does: SO_REUSEADDR, loopback)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield int(s.getsockname()[1])


def test_a_data_directorys_port_taken_by_another_program_is_one_clear_error(
    tmp_path: Path, listening: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from ctxneo.cli import main

    monkeypatch.setenv("CTXNEO_HOME", str(tmp_path / "home"))
    data = tmp_path / "neo4j"
    data.mkdir(mode=0o700)
    (data / PORT_FILE).write_text(f"{listening}\n")
    (data / PORT_FILE).chmod(0o600)
    server = LocalNeo4j(data)
    assert server.stored_port() == listening
    # Refused before any jar is fetched or process launched: moving silently to
    # another port would break every client holding the URI.
    taken = re.escape(f"port {listening}, where the Neo4j of {data}")
    with pytest.raises(Neo4jLaunchError, match=taken):
        server.start()
    result = CliRunner().invoke(main, ["neo4j", "start", "--data", str(data)])
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()
    assert f"port {listening}" in line and "--port N" in line and str(data / PORT_FILE) in line
    with pytest.raises(Neo4jLaunchError, match=f"port {listening} is taken .* another --port"):
        LocalNeo4j(data, port=listening).start()
    assert server.stored_port() == listening and not (data / STATE_FILE).exists()


def test_the_port_registry_is_private_and_never_names_a_server_not_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("CTXNEO_HOME", str(home))
    data = tmp_path / "neo4j"
    data.mkdir(mode=0o700)
    for name, text in ((PORT_FILE, "40001\n"), (PASSWORD_FILE, "secret\n")):
        (data / name).write_text(text)
        (data / name).chmod(0o600)
    # A state file naming a live process that is not our launcher on that port.
    plant_state(data, 40001)
    gone = tmp_path / "deleted"  # a data directory removed since it was registered
    _register(40002, gone)
    _register(40001, data)
    registry = home / REGISTRY_DIR
    assert stat.S_IMODE(registry.stat().st_mode) == 0o700
    assert stat.S_IMODE((registry / "40001").stat().st_mode) == 0o600
    assert sorted(p.name for p in registry.iterdir()) == ["40001"]  # the stale entry is gone
    assert _registered(40001) == data
    assert local_credentials("bolt://127.0.0.1:40001") is None
    registry.chmod(0o777)  # a registry others may write to could point anywhere: ignored
    assert _registered(40001) is None


# -- the driver's time limits (no server needed) ----------------------------------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_connect_timeout_is_what_the_driver_gets(monkeypatch: pytest.MonkeyPatch) -> None:
    import neo4j

    given: list[dict[str, Any]] = []
    real = neo4j.GraphDatabase.driver

    def recording(uri: str, **kwargs: Any) -> Any:
        given.append(kwargs)
        return real(uri, **kwargs)

    monkeypatch.setattr(neo4j.GraphDatabase, "driver", recording)
    uri = f"bolt://127.0.0.1:{_free_port()}"  # nothing listens there
    monkeypatch.delenv("CTXNEO_NEO4J_CONNECT_TIMEOUT", raising=False)
    for value, expected in ((None, CONNECT_TIMEOUT), ("2.5", 2.5), ("60", 15.0)):
        if value is not None:
            monkeypatch.setenv("CTXNEO_NEO4J_CONNECT_TIMEOUT", value)
        store = Neo4jStore(uri, password="x")
        assert store.connection_timeout == expected  # never past the store's time limit
        with pytest.raises(StoreUnavailable) as down:
            store.connect()
        assert str(down.value).startswith(f"cannot reach Neo4j at {uri}: ")
        assert "\n" not in str(down.value)
        assert given[-1]["connection_timeout"] == expected
        assert given[-1]["connection_acquisition_timeout"] == expected
    assert Neo4jStore(uri, connection_timeout=1).connection_timeout == 1.0  # an argument wins


@pytest.mark.parametrize("value", ["soon", "0", "-1", "inf", "nan"])
def test_a_bad_connect_timeout_is_a_config_error_naming_it(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXNEO_NEO4J_CONNECT_TIMEOUT", value)
    with pytest.raises(ConfigError, match=f"CTXNEO_NEO4J_CONNECT_TIMEOUT='{value}'"):
        Neo4jStore("bolt://127.0.0.1:1")


@pytest.mark.skipif(os.getuid() != 0, reason="making a directory another user's needs root")
def test_a_data_directory_of_another_user_is_refused(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, 65534, 65534)
    with pytest.raises(Neo4jLaunchError, match="belongs to another user"):
        LocalNeo4j(theirs).start()
    with pytest.raises(Neo4jLaunchError, match="belongs to another user"):
        LocalNeo4j(theirs).stop()
    assert list(theirs.iterdir()) == []


@pytest.mark.skipif(os.getuid() != 0, reason="making a directory another user's needs root")
def test_jars_or_a_launcher_another_user_could_have_put_there_are_never_run(
    tmp_path: Path,
) -> None:
    """The launcher runs the jars and the compiled class under CTXNEO_HOME as this user:
    a home another user made (a shared /tmp) or a file of theirs inside is refused
    before anything is fetched, compiled or run."""
    home = tmp_path / "home"
    runtime = Runtime(home)
    runtime.root.mkdir(parents=True)
    os.chown(runtime.root, 65534, 65534)  # another user made it first
    with pytest.raises(Neo4jLaunchError, match="belongs to another user"):
        runtime.ensure()
    assert list(runtime.root.iterdir()) == []
    os.chown(runtime.root, os.getuid(), os.getgid())
    runtime.lib.mkdir()
    (runtime.lib / ".complete").write_text("5")
    planted = runtime.lib / "planted.jar"
    planted.write_text("")
    os.chown(planted, 65534, 65534)
    with pytest.raises(Neo4jLaunchError, match=r"planted\.jar belongs to another user"):
        runtime.ensure()
    # a folder of one's own that others could write is made one's own alone
    planted.unlink()
    runtime.classes.mkdir()
    (runtime.classes / "CtxneoNeo4j.class").write_text("")
    runtime.root.chmod(0o777)
    runtime.ensure()  # (built already: nothing is fetched or compiled)
    assert runtime.root.stat().st_mode & 0o022 == 0
    # a class another user put one folder down is on the classpath too
    nested = runtime.classes / "org" / "Planted.class"
    nested.parent.mkdir()
    nested.write_text("")
    os.chown(nested, 65534, 65534)
    with pytest.raises(Neo4jLaunchError, match=r"Planted\.class belongs to another user"):
        runtime.ensure()
    nested.unlink()
    (runtime.lib / "gone.jar").symlink_to(tmp_path / "nowhere.jar")
    with pytest.raises(Neo4jLaunchError, match=r"gone\.jar is a symbolic link"):
        runtime.ensure()


def test_the_home_the_user_chose_is_never_changed(tmp_path: Path) -> None:
    """CTXNEO_HOME shared with the sticky bit (as /tmp) is used as it is; one others can
    write without it is refused, never made private behind the user's back."""
    home = tmp_path / "shared"
    home.mkdir()
    runtime = Runtime(home)
    runtime.root.mkdir()
    runtime.lib.mkdir()
    (runtime.lib / ".complete").write_text("5")
    runtime.classes.mkdir()
    (runtime.classes / "CtxneoNeo4j.class").write_text("")
    home.chmod(0o1777)
    runtime.ensure()
    assert stat.S_IMODE(home.stat().st_mode) == 0o1777
    home.chmod(0o777)
    with pytest.raises(Neo4jLaunchError, match=r"others can write .*chmod go-w"):
        runtime.ensure()
    assert stat.S_IMODE(home.stat().st_mode) == 0o777


def test_docker_compose_has_no_default_password_and_listens_on_loopback_only() -> None:
    text = (REPO / "docker-compose.yml").read_text()
    config = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    # ${VAR:?message} makes compose refuse to start when VAR is unset or empty.
    assert "NEO4J_PASSWORD:?" in config and "NEO4J_PASSWORD:-" not in config
    assert re.search(r'NEO4J_AUTH: "neo4j/\$\{NEO4J_PASSWORD:\?', config)
    ports = re.findall(r'^\s*- "([^"]*)"\s*$', config, flags=re.MULTILINE)
    assert ports and all(p.startswith("127.0.0.1:") for p in ports), ports


# -- on a running server ---------------------------------------------------------------


@pytest.fixture(scope="module")
def local(neo4j_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalNeo4j]:
    """A jar-launched server: the session's if it is one, else one of this module's own."""
    if neo4j_server.local is not None:
        yield neo4j_server.local
        return
    server = _started(LocalNeo4j(tmp_path_factory.mktemp("local") / "neo4j"))
    try:
        yield server
    finally:
        server.stop()


def _started(server: LocalNeo4j) -> LocalNeo4j:
    """``server`` started, or the test skipped (failed under CTXNEO_REQUIRE_NEO4J=1)."""
    try:
        server.start()
    except Neo4jLaunchError as e:
        if os.environ.get("CTXNEO_REQUIRE_NEO4J") == "1":
            raise
        pytest.skip(f"the jar-launched Neo4j cannot start here: {e}")
    return server


def driver(server: LocalNeo4j, auth: Any) -> Any:
    import neo4j

    info = server.status()
    assert info is not None
    return neo4j.GraphDatabase.driver(info.uri, auth=auth, connection_timeout=5)


def test_bolt_needs_the_generated_password(local: LocalNeo4j) -> None:
    from neo4j.exceptions import AuthError

    password = local.password()
    assert password is not None and len(password) >= 24
    for auth in (None, ("neo4j", "neo4j"), ("neo4j", password + "x")):
        with driver(local, auth) as d, pytest.raises(AuthError):
            d.verify_connectivity()
    with driver(local, ("neo4j", password)) as d:
        (row,) = d.execute_query("SHOW CURRENT USER YIELD user RETURN user").records
        assert row["user"] == "neo4j"


def test_wrong_passwords_do_not_lock_the_owner_out(local: LocalNeo4j) -> None:
    # Another local user trying passwords must not make the owner's next login fail.
    from neo4j.exceptions import AuthError

    password = local.password()
    assert password is not None
    for _ in range(6):
        with driver(local, ("neo4j", "not-the-password")) as d, pytest.raises(AuthError):
            d.verify_connectivity()
    with driver(local, ("neo4j", password)) as d:
        d.verify_connectivity()


def test_the_password_and_data_are_their_owners_alone(local: LocalNeo4j) -> None:
    assert stat.S_IMODE(local.data_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(local.password_path.stat().st_mode) == 0o600
    assert local.password_path.name == PASSWORD_FILE
    # The password file is read by the launcher: never on its command line, which all can read.
    info = local.status()
    assert info is not None
    cmdline = Path(f"/proc/{info.pid}/cmdline").read_bytes()
    assert (local.password() or "").encode() not in cmdline
    # The initial user file Neo4j read once is gone.
    assert not list(local.data_dir.rglob("auth.ini"))
    if os.getuid() == 0:
        # As another local user: neither the password nor the store's files can be read.
        probe = (
            "import os, sys\n"
            "os.setgid(65534); os.setuid(65534)\n"
            "for path in sys.argv[1:]:\n"
            "    try:\n"
            "        open(path).read() if os.path.isfile(path) else os.listdir(path)\n"
            "        print('read', path)\n"
            "    except PermissionError:\n"
            "        print('refused', path)\n"
        )
        paths = [str(local.password_path), str(local.data_dir), str(local.data_dir / "home")]
        out = subprocess.run(
            [sys.executable, "-c", probe, *paths], capture_output=True, text=True, timeout=60
        )
        assert out.stdout.split("\n")[:3] == [f"refused {p}" for p in paths], out.stderr


def test_cypher_reads_no_file_and_reaches_no_network(local: LocalNeo4j, tmp_path: Path) -> None:
    from neo4j.exceptions import ClientError

    secret = tmp_path / "secret.csv"
    secret.write_text("top,secret\n")

    class Handler(http.server.BaseHTTPRequestHandler):
        hits = 0

        def do_GET(self) -> None:
            Handler.hits += 1
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"a,b\n")

        def log_message(self, *args: Any) -> None:
            pass

    web = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        with driver(local, ("neo4j", local.password())) as d:
            web_url = f"http://127.0.0.1:{web.server_port}/x.csv"
            for url in (f"file://{secret}", "file:///etc/passwd", web_url):
                with pytest.raises(ClientError) as refused:
                    d.execute_query(f"LOAD CSV FROM '{url}' AS row RETURN row")
                assert refused.value.code == "Neo.ClientError.Statement.ExternalResourceFailed"
    finally:
        web.shutdown()
    assert Handler.hits == 0


def test_start_export_prints_what_a_shell_needs(local: LocalNeo4j) -> None:
    from click.testing import CliRunner

    from ctxneo.cli import main

    result = CliRunner().invoke(main, ["neo4j", "start", "--export", "--data", str(local.data_dir)])
    assert result.exit_code == 0, result.output
    info = local.status()
    assert info is not None
    assert result.stdout == (
        f"export NEO4J_URI={info.uri} NEO4J_USER=neo4j NEO4J_PASSWORD={local.password()}\n"
    )
    assert local_credentials(info.uri, local.data_dir) == ("neo4j", local.password())
    # localhost only where it names 127.0.0.1 alone; never another loopback address,
    # where any user may listen on the same port and read the password
    localhost = {a[4][0] for a in socket.getaddrinfo("localhost", None)} == {"127.0.0.1"}
    found = local_credentials(info.uri.replace("127.0.0.1", "localhost"), local.data_dir)
    assert (found is not None) == localhost
    assert local_credentials(f"bolt://[::1]:{info.port}", local.data_dir) is None
    assert local_credentials(f"bolt://127.0.0.1:{info.port + 1}", local.data_dir) is None
    assert local_credentials(f"bolt://example.com:{info.port}", local.data_dir) is None


def test_the_start_hint_names_the_data_directory_unless_it_is_the_default(
    local: LocalNeo4j, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from ctxneo.cli import main

    info = local.status()
    assert info is not None
    result = CliRunner().invoke(main, ["neo4j", "start", "--data", str(local.data_dir)])
    assert result.exit_code == 0, result.output
    # Pasted, the hint must describe this server, not the default directory's.
    hint = f'eval "$(ctxneo neo4j start --data {local.data_dir} --export)"'
    assert hint in result.stdout
    home = tmp_path / "home"
    home.mkdir()
    (home / "neo4j-data").symlink_to(local.data_dir)  # the default data directory is this one
    result = CliRunner(env={"CTXNEO_HOME": str(home)}).invoke(main, ["neo4j", "start"])
    assert result.exit_code == 0, result.output
    assert 'eval "$(ctxneo neo4j start --export)"' in result.stdout
    assert info.uri in result.stdout and "--data" not in result.stdout


def test_a_data_servers_uri_alone_finds_its_password(local: LocalNeo4j) -> None:
    from click.testing import CliRunner

    from ctxneo.cli import main

    info = local.status()
    assert info is not None
    assert local.data_dir != LocalNeo4j().data_dir  # started with --data, not the default
    # No data directory given: the registry written at start names it.
    assert local_credentials(info.uri) == ("neo4j", local.password())
    env = {"NEO4J_PASSWORD": "", "NEO4J_USER": "", "NEO4J_URI": ""}
    result = CliRunner(env=env).invoke(main, ["namespaces", "--uri", info.uri])
    assert result.exit_code == 0, result.output


def test_memory_open_finds_the_local_servers_password_as_the_cli_does(local: LocalNeo4j) -> None:
    from ctxneo.memory import Memory

    info = local.status()
    assert info is not None
    # No user, no password: the server `ctxneo neo4j start` runs is opened all the same.
    with Memory.open(uri=info.uri, namespace="api-local") as memory:
        memory.remember("Ana", "WORKS_ON", "Atlas")
        assert [f.object for f in memory.current("Ana", "WORKS_ON")] == ["Atlas"]
        memory.clear()
    # A wrong password given is used as given, and the error names the user tried.
    with pytest.raises(StoreUnavailable, match="refused the credentials for user 'neo4j'"):
        Memory.open(uri=info.uri, password="not-the-password")


def test_a_call_while_neo4j_is_down_fails_at_the_connect_timeout_reads_included(
    neo4j_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from urllib.parse import urlparse

    from ctxneo.bench.faults import CuttingProxy

    monkeypatch.setenv("CTXNEO_NEO4J_CONNECT_TIMEOUT", "1")
    parsed = urlparse(neo4j_server.uri)
    namespace = f"down-{uuid.uuid4().hex}"
    with CuttingProxy((parsed.hostname or "127.0.0.1", parsed.port or 7687)) as proxy:
        store = Neo4jStore(
            proxy.uri, user=neo4j_server.user, password=neo4j_server.password, namespace=namespace
        ).connect()
        try:
            store.remember(NewFact("Svc", "OWNED_BY", "Team_A"))
            proxy.outage(600)  # every connection refused, as while the server is stopped
            for call in (store.stats, lambda: store.remember(NewFact("Svc", "OWNED_BY", "B"))):
                with pytest.raises(StoreUnavailable) as down:
                    call()
                # One line naming the URI; the bound that ended it is the connect
                # timeout, not the 15 s write time limit.
                message = str(down.value)
                assert message.startswith(f"lost Neo4j at {proxy.uri}: ") and "\n" not in message
                assert message.endswith("(gave up after 1 s)")
            proxy._refusing_until = 0  # the server is back: the same store works again
            assert store.stats()["facts"] == 1
            store.clear()
        finally:
            store.close()


def test_every_command_finds_the_local_servers_password(local: LocalNeo4j, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ctxneo.cli import main

    info = local.status()
    assert info is not None
    home = tmp_path / "home"
    home.mkdir()
    (home / "neo4j-data").symlink_to(local.data_dir)  # the default data directory is this one
    env = {"CTXNEO_HOME": str(home), "NEO4J_PASSWORD": "", "NEO4J_USER": ""}
    journal = tmp_path / "m.jsonl"
    namespace = f"local_creds_{os.getpid()}"
    exported = str(tmp_path / "x.jsonl")
    commands = [
        ["remember", "A", "OWNS", "B", "--store", str(journal)],
        ["load", str(journal), "--to-uri", info.uri, "--namespace", namespace],
        ["stats", "--uri", info.uri, "--namespace", namespace],
        ["export", "--from-uri", info.uri, "--namespace", namespace, "-o", exported],
        ["clear", "--uri", info.uri, "--namespace", namespace, "--yes"],
    ]
    for args in commands:
        result = CliRunner(env=env).invoke(main, args)
        assert result.exit_code == 0, (args, result.output)


@pytest.mark.neo4j
@pytest.mark.slow
def test_a_restart_keeps_the_port_and_a_lost_password_is_replaced_before_bolt_listens(
    tmp_path: Path,
) -> None:
    # A server of its own, the only one these tests stop and restart (a start takes a
    # minute on a busy machine): the port, the outage and the password in one restart.
    server = _started(LocalNeo4j(tmp_path / "neo4j"))
    try:
        first = server.status()
        assert first is not None and server.stored_port() == first.port
        assert stat.S_IMODE(server.port_path.stat().st_mode) == 0o600
        old = server.password()
        store = Neo4jStore(first.uri, password=old, connection_timeout=1).connect()
        server.stop()
        with pytest.raises(StoreUnavailable) as down:
            store.stats()  # a read, while the server is down
        message = str(down.value)
        assert message.startswith(f"lost Neo4j at {first.uri}: ") and "\n" not in message
        store.close()
        server.password_path.unlink()
        again = server.start()
        # Same data directory, same URI: a client's configuration still holds.
        assert again.port == first.port and again.uri == first.uri
        new = server.password()
        assert new is not None and new != old
        assert local_credentials(first.uri) == ("neo4j", new)  # found without --data
        from neo4j.exceptions import AuthError

        with driver(server, ("neo4j", old)) as d, pytest.raises(AuthError):
            d.verify_connectivity()
        with driver(server, ("neo4j", new)) as d:
            d.verify_connectivity()
    finally:
        server.stop()
