"""What only the Neo4j store has to prove: routing URIs, many clients, many processes,
a browsable graph and a sentinel that hostile input never reaches."""

from __future__ import annotations

import subprocess
import sys
import threading
import uuid
from typing import Any

import pytest

from ctxneo.errors import InvalidFactError, StoreError, StoreUnavailable
from ctxneo.memory import Memory
from ctxneo.model import MAX_SEQ, NewFact
from ctxneo.stores.neo4j import Neo4jStore

pytestmark = pytest.mark.neo4j


def open_store(server: Any, namespace: str, uri: str | None = None) -> Neo4jStore:
    return Neo4jStore(
        uri or server.uri, user=server.user, password=server.password, namespace=namespace
    ).connect()


def test_a_routing_uri_works_like_a_direct_one(neo4j_server: Any) -> None:
    routing = neo4j_server.uri.replace("bolt://", "neo4j://", 1)
    namespace = f"route-{uuid.uuid4().hex}"
    with open_store(neo4j_server, namespace, routing) as store:
        store.remember(NewFact("Svc", "OWNED_BY", "Team"))
        assert Memory(store).ask("Who owns Svc?").answer == "Team"
        store.clear()


def test_many_clients_starting_at_once_all_get_the_schema(neo4j_server: Any) -> None:
    errors: list[BaseException] = []
    stores: list[Neo4jStore] = []

    def start() -> None:
        try:
            stores.append(open_store(neo4j_server, f"start-{uuid.uuid4().hex}"))
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=start) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(stores) == 6
    for store in stores:
        store.close()


WRITER = """
import sys
from ctxneo.memory import Memory
uri, user, password, namespace, name = sys.argv[1:6]
with Memory.open(uri=uri, user=user or None, password=password or None, namespace=namespace) as m:
    for i in range(25):
        m.remember("Shared", "HAS_VALUE", f"{name}-{i}", speaker=name)
        m.remember_many([("Shared", "HAS_VALUE", f"{name}-{i}-b"),
                         (f"Own_{name}", "HAS_VALUE", str(i))])
"""


def test_writers_in_separate_processes_never_share_a_sequence_number(neo4j_server: Any) -> None:
    namespace = f"procs-{uuid.uuid4().hex}"
    args = [neo4j_server.uri, neo4j_server.user or "", neo4j_server.password or "", namespace]
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, *args, name]) for name in "abc"]
    assert [p.wait(timeout=300) for p in procs] == [0, 0, 0]
    with open_store(neo4j_server, namespace) as store:
        facts = list(store.all_facts())
        history = store.history("Shared", "HAS_VALUE")
        entities = store.stats()["entities"]
        store.clear()
    seqs = [f.seq for f in facts]
    assert len(facts) == 225 and len(set(seqs)) == 225 and seqs == list(range(1, 226))
    assert sum(f.valid_to is None for f in history) == 1
    assert entities == 1 + 3 + 150 + 25  # no entity was created twice by racing MERGEs


def test_hostile_input_never_reaches_the_sentinel(neo4j_server: Any) -> None:
    namespace = f"hostile-{uuid.uuid4().hex}"
    with open_store(neo4j_server, namespace) as store:
        store._driver.execute_query("MERGE (:Sentinel {id: $id})", id=namespace)
        hostile = [
            "x'}) MATCH (n) DETACH DELETE n //",
            'x"}) DETACH DELETE n',
            "\\'; MATCH (n) DELETE n",
            "}]->() WITH 1 AS x MATCH (n) DETACH DELETE n //",
            "line\nbreak",
            "$ns",
        ]
        for name in hostile:
            store.remember(NewFact(name, "OWNED_BY", name, speaker=name, fact_id=name))
            store.add_alias(name, name)
            Memory(store).ask(name)
        for predicate in ("OWNED_BY]->(b) WITH a MATCH (z) DETACH DELETE z //", "A B", "X`Y"):
            with pytest.raises(InvalidFactError):
                store.remember(NewFact("a", predicate, "b"))
        sentinel = store._read("all_facts")  # the namespace still holds exactly what was written
        assert len(sentinel) == len(hostile)
        rows = store._driver.execute_query(
            "MATCH (s:Sentinel {id: $id}) RETURN count(s) AS c", id=namespace
        ).records
        assert rows[0]["c"] == 1
        assert {f.subject for f in store.all_facts()} == set(hostile)
        store._driver.execute_query("MATCH (s:Sentinel {id: $id}) DELETE s", id=namespace)
        store.clear()


def test_the_graph_reads_naturally_in_neo4j_browser(neo4j_server: Any) -> None:
    namespace = f"browse-{uuid.uuid4().hex}"
    with open_store(neo4j_server, namespace) as store:
        store.remember(NewFact("AuthModule", "DEPENDS_ON", "RateLimiter", "Agent_Implementer", 9))
        rows = store._driver.execute_query(
            "MATCH (a:Entity {ns: $ns, name: 'AuthModule'})-[r:DEPENDS_ON]->(b:Entity) "
            "RETURN b.name AS b, r.speaker AS speaker, r.turn_id AS turn",
            ns=namespace,
        ).records
        assert [(r["b"], r["speaker"], r["turn"]) for r in rows] == [
            ("RateLimiter", "Agent_Implementer", 9)
        ]
        store.clear()


def test_clearing_a_namespace_leaves_the_others(neo4j_server: Any) -> None:
    a, b = f"a-{uuid.uuid4().hex}", f"b-{uuid.uuid4().hex}"
    with open_store(neo4j_server, a) as one, open_store(neo4j_server, b) as two:
        one.remember(NewFact("Same", "OWNED_BY", "One"))
        two.remember(NewFact("Same", "OWNED_BY", "Two"))
        one.clear()
        assert list(one.all_facts()) == []
        assert [f.object for f in two.all_facts()] == ["Two"]
        two.clear()


def test_a_server_that_is_down_is_one_clear_error() -> None:
    store = Neo4jStore("bolt://127.0.0.1:9", namespace="x")
    with pytest.raises(
        StoreUnavailable, match=r"cannot reach Neo4j at bolt://127\.0\.0\.1:9: .*ctxneo neo4j start"
    ):
        store.connect()


def test_the_counter_stops_at_its_end_with_nothing_written(neo4j_server: Any) -> None:
    namespace = f"counter-{uuid.uuid4().hex}"
    with open_store(neo4j_server, namespace) as store:
        memory = Memory(store)
        memory.remember("A", "OWNED_BY", "B")
        store._driver.execute_query(
            "MATCH (m:CtxneoMemory {ns: $ns}) SET m.seq = $max", ns=namespace, max=MAX_SEQ
        )
        for write in (
            lambda: memory.remember("A", "OWNED_BY", "C"),
            lambda: memory.remember_many([NewFact("A", "OWNED_BY", "D")]),
            lambda: memory.retract("A", "OWNED_BY"),
        ):
            with pytest.raises(StoreError, match="used every sequence number"):
                write()
        assert [f.object for f in memory.current("A")] == ["B"]
        assert len(memory.facts("A", history=True)) == 1
        store.clear()  # other tests list the server's namespaces


def test_a_write_that_waits_past_its_limit_for_the_lock_says_so_and_applies_nothing(
    neo4j_server: Any,
) -> None:
    namespace = f"held-{uuid.uuid4().hex}"
    store = Neo4jStore(
        neo4j_server.uri,
        user=neo4j_server.user,
        password=neo4j_server.password,
        namespace=namespace,
        timeout=2.0,
    ).connect()
    store.remember(NewFact("A", "OWNED_BY", "B"))
    holder = store._driver.session()
    tx = holder.begin_transaction()  # another client holding the namespace's lock
    try:
        tx.run("MATCH (m:CtxneoMemory {ns: $ns}) SET m.held = true", ns=namespace).consume()
        with pytest.raises(
            StoreError, match=r"the server ended the write after \d+ s \(its time limit: 2 s"
        ):
            store.remember(NewFact("A", "OWNED_BY", "C"))
    finally:
        tx.rollback()
        holder.close()
    assert [f.object for f in store.current_of("A")] == ["B"]
    store.clear()
    store.close()


def test_a_clear_beside_writes_and_reads_breaks_neither_nor_the_namespace(
    neo4j_server: Any,
) -> None:
    """A clear deletes in batches while other threads write and read: no call fails
    with anything but the store's errors, and what is left is one memory, its facts
    numbered within its counter (a write that waited on the lock while the clear took the
    memory node wrote a fact with no number, or kept one from before the clear)."""
    import time

    namespace = f"clear-race-{uuid.uuid4().hex}"
    store = open_store(neo4j_server, namespace)
    memory = Memory(store)
    memory.remember("Svc0", "OWNED_BY", "Team0")
    memory.ask("Which team owns Svc0?")  # (the reader made before the threads start)
    failures: list[BaseException] = []
    stop = time.monotonic() + 8

    def keep(work: Any) -> None:
        while time.monotonic() < stop:
            try:
                work()
            except StoreError:
                pass  # (a store's error is an answer; a TypeError is not)
            except BaseException as e:
                failures.append(e)

    n = iter(range(10**9))
    threads = [
        threading.Thread(
            target=keep,
            args=(lambda: memory.remember(f"Svc{next(n) % 3}", "OWNED_BY", f"Team{next(n)}"),),
        ),
        threading.Thread(
            target=keep,
            args=(
                lambda: memory.remember_many(
                    [(f"Svc{i}", "USES_DB", f"Db{next(n)}") for i in range(3)]
                ),
            ),
        ),
        threading.Thread(target=keep, args=(lambda: memory.ask("Which team owns Svc1?"),)),
        threading.Thread(
            target=keep, args=(lambda: (memory.current("Svc2"), memory.vocabulary("svc")),)
        ),
        threading.Thread(target=keep, args=(lambda: (time.sleep(0.5), memory.clear()),)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert not failures, repr(failures[:3])
        rows, _, _ = store._driver.execute_query(
            "MATCH (:Entity {ns: $ns})-[r]->() RETURN r.seq AS seq",
            ns=namespace,
            database_=store.database,
        )
        counter, _, _ = store._driver.execute_query(
            "MATCH (m:CtxneoMemory {ns: $ns}) RETURN m.seq AS seq",
            ns=namespace,
            database_=store.database,
        )
        seqs = [r["seq"] for r in rows]
        top = counter[0]["seq"] if counter else 0
        assert None not in seqs
        assert sorted(seqs) == sorted(set(seqs)) and all(0 < s <= top for s in seqs)
    finally:
        store.clear()
        store.close()
