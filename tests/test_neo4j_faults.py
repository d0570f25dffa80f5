"""The Neo4j store under faults: commits whose answer never comes, cuts before a commit,
an outage as long as a restart, and loads that must be all or nothing.

Connections are cut by a TCP proxy (``ctxneo.bench.faults.CuttingProxy``) in
front of the real server: at the commit (a COMMIT, or a one-fact write run as
a transaction of its own), before the server sees it or after it answered
(the answer is dropped, so the write applied but the client cannot know).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from ctxneo.bench.faults import CuttingProxy

from ctxneo.errors import NamespaceInUse, StoreUnavailable, WriteOutcomeUnknown
from ctxneo.model import Fact, NewFact
from ctxneo.stores.base import MemoryImage
from ctxneo.stores.neo4j import Neo4jStore

pytestmark = pytest.mark.neo4j


def target(server: Any) -> tuple[str, int]:
    parsed = urlparse(server.uri)
    return parsed.hostname or "127.0.0.1", parsed.port or 7687


def through(proxy: CuttingProxy, server: Any, namespace: str, timeout: float = 15.0) -> Neo4jStore:
    return Neo4jStore(
        proxy.uri,
        user=server.user,
        password=server.password,
        namespace=namespace,
        timeout=timeout,
    ).connect()


def direct(server: Any, namespace: str) -> Neo4jStore:
    return Neo4jStore(
        server.uri, user=server.user, password=server.password, namespace=namespace
    ).connect()


def test_a_commit_whose_answer_is_lost_is_reported_as_what_it_did(neo4j_server: Any) -> None:
    namespace = f"lost-{uuid.uuid4().hex}"
    with CuttingProxy(target(neo4j_server)) as proxy, through(proxy, neo4j_server, namespace) as s:
        proxy.cut_next("after")
        first = s.remember(NewFact("Svc", "OWNED_BY", "Team_A", "agent", 1, "f1"))
        proxy.cut_next("after")
        second = s.remember(NewFact("Svc", "OWNED_BY", "Team_B"))
        proxy.cut_next("after")
        batch = s.remember_many(
            [
                NewFact("Svc", "OWNED_BY", "Team_B"),  # restates the current value
                NewFact("Svc", "OWNED_BY", "Team_C"),
                NewFact("Svc", "OWNED_BY", "Team_C"),
                NewFact("Other", "DEPENDS_ON", "Svc", multi=True),
            ]
        )
        proxy.cut_next("after")
        retracted = s.retract("Other", "DEPENDS_ON")
        assert proxy.counts.after_commit == 4 and s.reconciled == 4
        assert (first.seq, first.object, first.fact_id) == (1, "Team_A", "f1")
        assert (second.seq, second.object) == (2, "Team_B")
        assert [(f.object, f.seq, f.valid_to) for f in batch] == [
            ("Team_B", 2, 3),
            ("Team_C", 3, None),
            ("Team_C", 3, None),
            ("Svc", 4, None),
        ]
        assert [(f.subject, f.valid_to) for f in retracted] == [("Other", 5)]
        # Each write applied once: the history is exactly what was asked for.
        history = s.history("Svc", "OWNED_BY")
        assert [(f.object, f.seq, f.valid_to) for f in history] == [
            ("Team_A", 1, 2),
            ("Team_B", 2, 3),
            ("Team_C", 3, None),
        ]
        assert s.stats()["last_seq"] == 5
        s.clear()


def test_a_one_fact_write_is_one_statement_that_commits_itself(neo4j_server: Any) -> None:
    # One round trip where a transaction takes three (begin, run, commit): what a
    # remote server (Aura) charges by the round trip.
    namespace = f"alone-{uuid.uuid4().hex}"
    with CuttingProxy(target(neo4j_server)) as proxy, through(proxy, neo4j_server, namespace) as s:
        for i in range(5):
            s.remember(NewFact("Svc", "OWNED_BY", f"Team_{i}"))
        assert (proxy.counts.auto_commits, proxy.counts.commits) == (5, 0)
        s.remember_many([NewFact("Svc", "OWNED_BY", "Team_9")])
        assert (proxy.counts.auto_commits, proxy.counts.commits) == (5, 1)
        assert [f.object for f in s.history("Svc", "OWNED_BY")][-2:] == ["Team_4", "Team_9"]
        s.clear()


def test_a_commit_cut_before_the_server_saw_it_is_applied_once_by_the_retry(
    neo4j_server: Any,
) -> None:
    namespace = f"before-{uuid.uuid4().hex}"
    with CuttingProxy(target(neo4j_server)) as proxy, through(proxy, neo4j_server, namespace) as s:
        proxy.cut_next("before", "before")
        fact = s.remember(NewFact("Svc", "OWNED_BY", "Team_A"))
        assert proxy.counts.before_commit == 2
        assert fact.seq == 1 and [f.seq for f in s.history("Svc")] == [1]
        s.clear()


def test_concurrent_writers_through_a_cutting_connection_lose_and_double_nothing(
    neo4j_server: Any,
) -> None:
    namespace = f"cuts-{uuid.uuid4().hex}"
    acked: list[Fact] = []
    errors: list[BaseException] = []
    with CuttingProxy(target(neo4j_server), before=0.1, after=0.15, seed=12) as proxy:
        stores = [through(proxy, neo4j_server, namespace) for _ in range(3)]

        def writer(w: int) -> None:
            try:
                for i in range(25):
                    if i % 4 == 0:
                        got = stores[w].remember_many(
                            [
                                NewFact("Shared", "HAS_VALUE", f"w{w}-{i}"),
                                NewFact(f"Own{w}", "N", str(i)),
                            ]
                        )
                        acked.extend(got)
                    else:
                        acked.append(
                            stores[w].remember(NewFact("Shared", "HAS_VALUE", f"w{w}-{i}"))
                        )
            except BaseException as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for s in stores:
            s.close()
    assert not errors
    assert proxy.counts.after_commit > 0 and proxy.counts.before_commit > 0
    with direct(neo4j_server, namespace) as check:
        facts = list(check.all_facts())
        check.clear()
    seqs = [f.seq for f in facts]
    assert seqs == list(range(1, len(facts) + 1))  # unique, no gap
    stored = [(f.subject, f.object) for f in facts]
    assert len(stored) == len(set(stored)) == 3 * 25 + 3 * 7  # nothing doubled
    assert {(f.subject, f.object) for f in acked} == set(stored)  # nothing acknowledged lost
    assert sum(f.valid_to is None for f in facts if f.subject == "Shared") == 1


def test_writes_give_up_at_their_time_limit_and_say_what_is_known(neo4j_server: Any) -> None:
    namespace = f"limit-{uuid.uuid4().hex}"
    with CuttingProxy(target(neo4j_server)) as proxy:
        store = through(proxy, neo4j_server, namespace, timeout=2.0)
        proxy.outage(60)
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match="gave up after 2 s") as refused:
            store.remember(NewFact("Svc", "OWNED_BY", "Team_A"))
        assert not isinstance(refused.value, WriteOutcomeUnknown)
        assert time.monotonic() - started < 5.0
        proxy._refusing_until = 0
        # Now the commit applies, its answer is lost, and the server stays away.
        proxy.cut_next("after", then_outage=60)
        started = time.monotonic()
        with pytest.raises(WriteOutcomeUnknown, match="unknown") as unknown:
            store.remember(NewFact("Svc", "OWNED_BY", "Team_B"))
        assert unknown.value.write_id and time.monotonic() - started < 5.0
        store.close()
    with direct(neo4j_server, namespace) as check:  # it had applied, once
        assert [f.object for f in check.all_facts()] == ["Team_B"]
        check.clear()


def test_an_outage_as_long_as_a_restart_mid_ingest_loses_nothing(neo4j_server: Any) -> None:
    namespace = f"outage-{uuid.uuid4().hex}"
    with CuttingProxy(target(neo4j_server)) as proxy, through(proxy, neo4j_server, namespace) as s:
        done: list[Fact] = []
        for i in range(40):
            if i == 15:
                proxy.outage(1.5)
            done.append(s.remember(NewFact("Svc", "HAS_VALUE", str(i))))
        assert proxy.counts.outages == 1
        assert [f.seq for f in done] == list(range(1, 41))
        assert [f.object for f in s.history("Svc")] == [str(i) for i in range(40)]
        s.clear()


def image_of(n: int) -> MemoryImage:
    facts = tuple(
        Fact(f"E{i}", "HAS_VALUE", f"V{i}", i + 1, i + 1, None, "agent", i, None) for i in range(n)
    )
    return MemoryImage(facts, {"the first": ("E0",)}, frozenset(), n)


def test_a_load_is_all_or_nothing_and_a_namespace_in_use_is_refused(neo4j_server: Any) -> None:
    namespace = f"load-{uuid.uuid4().hex}"
    with CuttingProxy(target(neo4j_server)) as proxy:
        store = through(proxy, neo4j_server, namespace, timeout=2.0)
        # Every statement runs, then the commit is lost and Neo4j stays out of reach
        # past the load's time limit. The limit is generous, so a busy machine
        # finishes the statements long before it: the cut is what fails the load.
        proxy.cut_next("before", then_outage=120)
        with pytest.raises(StoreUnavailable):
            store.load(image_of(2_000), timeout=20.0)
        assert proxy.counts.before_commit == 1
        store.close()
    with direct(neo4j_server, namespace) as check:
        assert check.stats()["entities"] == 0 and check.namespaces().get(namespace) is None
        check.load(image_of(300))
        assert check.stats()["facts"] == 300
        with pytest.raises(NamespaceInUse, match="already holds"):
            check.load(image_of(5))
        assert check.stats()["facts"] == 300
        check.clear()
        assert check.stats() == {
            "facts": 0,
            "current_facts": 0,
            "entities": 0,
            "predicates": 0,
            "last_seq": 0,
        }


def test_the_cli_prints_no_driver_log_lines_when_connections_are_cut(neo4j_server: Any) -> None:
    namespace = f"cli-{uuid.uuid4().hex}"
    with CuttingProxy(target(neo4j_server)) as proxy:
        proxy.cut_next("before", "after")
        args = ["remember", "Svc", "OWNED_BY", "Team_A", "--uri", proxy.uri]
        args += ["--namespace", namespace]
        env = dict(os.environ)
        for key, value in (
            ("NEO4J_USER", neo4j_server.user),
            ("NEO4J_PASSWORD", neo4j_server.password),
        ):
            if value:
                env[key] = value
        ctxneo = str(Path(sys.executable).parent / "ctxneo")
        result = subprocess.run(
            [ctxneo, *args], capture_output=True, text=True, timeout=60, env=env
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("remembered #1")
        assert result.stderr == ""
    with direct(neo4j_server, namespace) as check:
        assert [f.object for f in check.all_facts()] == ["Team_A"]
        check.clear()


def _mp_write(store: Neo4jStore, name: str) -> None:
    for i in range(10):
        store.remember(NewFact("Shared", "HAS_VALUE", f"{name}-{i}"))
    store.close()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_a_store_opened_before_a_child_process_is_safe_in_it(
    neo4j_server: Any, method: str
) -> None:
    import multiprocessing

    namespace = f"mp-{method}-{uuid.uuid4().hex}"
    store = direct(neo4j_server, namespace)
    store.remember(NewFact("Shared", "HAS_VALUE", "parent-start"))
    ctx = multiprocessing.get_context(method)
    children = [ctx.Process(target=_mp_write, args=(store, f"c{i}")) for i in range(2)]
    for child in children:
        child.start()
    for i in range(10):  # the parent keeps using its own connections meanwhile
        store.remember(NewFact("Shared", "HAS_VALUE", f"parent-{i}"))
    for child in children:
        child.join(120)
    assert [c.exitcode for c in children] == [0, 0]
    facts = list(store.all_facts())
    assert [f.seq for f in facts] == list(range(1, 32))
    assert sum(f.valid_to is None for f in facts) == 1
    store.clear()
    store.close()
