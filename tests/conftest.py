"""Fixtures: a real Neo4j for the tests that need one, and every store behind one fixture.

Where the Neo4j comes from, in order:

1. ``NEO4J_URI`` (with ``NEO4J_USER`` / ``NEO4J_PASSWORD``; without a password,
   the one of the local server ``ctxneo neo4j start`` runs at that URI) when set;
2. Docker through testcontainers (``neo4j:5.26-community``) when a daemon answers;
3. ctxneo's own jar-launched server (Java 17 + Maven), in a temporary directory,
   with authentication on (its generated password is passed on);
4. otherwise the Neo4j tests are skipped with the reason, or fail when
   ``CTXNEO_REQUIRE_NEO4J=1`` (as in CI).

The session says once, before its first test, which one it uses. Every test
that needs Neo4j carries the ``neo4j`` marker (added here to any test using
the ``neo4j_server`` fixture, and to the ``store`` fixture's Neo4j case), so
``pytest -m "not neo4j"`` runs none of them and needs no server.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ctxneo.memory import Memory
from ctxneo.stores.base import Store
from ctxneo.stores.networkx import NetworkXStore

REPO = Path(__file__).resolve().parents[1]


def _find_seed() -> Path:
    """The seed article's scenarios: $CTXNEO_SEED_SCENARIOS, or shared/seed/ beside an ancestor."""
    if os.environ.get("CTXNEO_SEED_SCENARIOS"):
        return Path(os.environ["CTXNEO_SEED_SCENARIOS"])
    candidates = [d / "shared/seed/scenarios.json" for d in REPO.parents]
    return next((c for c in candidates if c.exists()), candidates[0])


SEED = _find_seed()


@dataclass(frozen=True)
class Neo4jServer:
    uri: str
    user: str | None
    password: str | None
    source: str
    #: The jar-launched server's handle (``LocalNeo4j``) when the tests started one.
    local: Any = None


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "neo4j_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.neo4j)


def _from_environment() -> Neo4jServer | None:
    uri = os.environ.get("NEO4J_URI")
    if not uri:
        return None
    user, password = os.environ.get("NEO4J_USER", "neo4j"), os.environ.get("NEO4J_PASSWORD")
    if not password:
        from ctxneo.neo4j_local.server import local_credentials

        user, password = local_credentials(uri) or (user, password)
    return Neo4jServer(uri, user, password, "NEO4J_URI")


def _from_docker() -> tuple[Neo4jServer, object] | str:
    try:
        import docker
        from docker.errors import DockerException
    except ImportError:
        return "the docker package is not installed"
    try:
        docker.from_env(timeout=3).ping()
    except DockerException as e:
        return f"no Docker daemon ({type(e).__name__})"
    try:
        from testcontainers.neo4j import Neo4jContainer
    except ImportError:
        return "testcontainers[neo4j] is not installed"
    container = Neo4jContainer("neo4j:5.26-community")
    container.start()
    server = Neo4jServer(
        container.get_connection_url(), container.username, container.password, "testcontainers"
    )
    return server, container


def _from_jars(base: Path) -> tuple[Neo4jServer, object] | str:
    from ctxneo.errors import Neo4jLaunchError
    from ctxneo.neo4j_local.server import LocalNeo4j

    server = LocalNeo4j(base / "neo4j")
    try:
        info = server.start()
    except Neo4jLaunchError as e:
        return f"the jar-launched Neo4j did not start: {e}"
    return Neo4jServer(info.uri, info.user, server.password(), "jars", server), server


#: The session's Neo4j, found or started once: the server and what stops it, or why none.
_SESSION: dict[str, Any] = {}


def _provide() -> Neo4jServer | str:
    """The session's Neo4j (see the module docstring), or why there is none; once."""
    if "got" in _SESSION:
        return _SESSION["got"]  # type: ignore[no-any-return]
    given = _from_environment()
    if given is not None:
        _SESSION.update(got=given, line=f"Neo4j for the tests: {given.uri} (from NEO4J_URI)")
        return given
    base = Path(tempfile.mkdtemp(prefix="ctxneo-test-neo4j-"))
    _SESSION["base"] = base
    reasons = []
    for attempt in (_from_docker, lambda: _from_jars(base)):
        got = attempt()
        if isinstance(got, str):
            reasons.append(got)
            continue
        server, handle = got
        how = {
            "testcontainers": "a neo4j:5.26-community container (testcontainers)",
            "jars": "Neo4j from the Maven jars, authentication on",
        }[server.source]
        _SESSION.update(got=server, handle=handle, line=f"Neo4j for the tests: {server.uri}, {how}")
        return server
    why = "no Neo4j for the tests: " + "; ".join(reasons)
    _SESSION.update(got=why, line=why)
    return why


def pytest_report_collectionfinish(config: pytest.Config, items: list[pytest.Item]) -> list[str]:
    """Start the Neo4j when a selected test needs one, and say which, before the first test."""
    if config.option.collectonly or not any(i.get_closest_marker("neo4j") for i in items):
        return []
    _provide()
    return [_SESSION["line"]]


def pytest_sessionfinish(session: pytest.Session) -> None:
    handle = _SESSION.pop("handle", None)
    if handle is not None:
        handle.stop()
    base = _SESSION.pop("base", None)
    if base is not None:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def neo4j_server() -> Neo4jServer:
    """A real Neo4j for the whole session (see the module docstring for where it comes from)."""
    got = _provide()
    if isinstance(got, Neo4jServer):
        return got
    if os.environ.get("CTXNEO_REQUIRE_NEO4J") == "1":
        pytest.fail(got + " (CTXNEO_REQUIRE_NEO4J=1)", pytrace=False)
    pytest.skip(got)


def connect(server: Neo4jServer, namespace: str | None = None) -> Store:
    from ctxneo.stores.neo4j import Neo4jStore

    store = Neo4jStore(
        server.uri,
        user=server.user,
        password=server.password,
        namespace=namespace or f"test-{uuid.uuid4().hex}",
    )
    return store.connect()


def record_statements(store: Any) -> list[str]:
    """The names of the statements a Neo4j ``store`` runs from now on, as they run (until
    ``del store._read_text``)."""
    sent: list[str] = []
    read_text = store._read_text

    def recording(name: str, statement: str, /, **params: Any) -> Any:
        sent.append(name)
        return read_text(name, statement, **params)

    store._read_text = recording
    return sent


@pytest.fixture(params=["networkx", "journal", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Every store, fresh and empty: in memory, journaled, and on a real Neo4j."""
    if request.param == "networkx":
        made: Store = NetworkXStore()
    elif request.param == "journal":
        made = NetworkXStore(tmp_path / "memory.jsonl")
    else:
        made = connect(request.getfixturevalue("neo4j_server"))
    try:
        yield made
        if request.param == "journal":
            # Whatever a test did, the journal replays to the same memory.
            with NetworkXStore(tmp_path / "memory.jsonl") as replayed:
                assert list(replayed.all_facts()) == list(made.all_facts())
                assert replayed.aliases() == made.aliases()
    finally:
        if request.param == "neo4j":
            made.clear()
        made.close()


@pytest.fixture
def memory(store: Store) -> Memory:
    return Memory(store)


@pytest.fixture(scope="session")
def seed_scenarios() -> Path:
    if not SEED.exists():
        pytest.skip(f"the seed's scenarios are not at {SEED} (set CTXNEO_SEED_SCENARIOS)")
    return SEED
