"""Neo4j reads see a supersession whole or not at all, while a writer commits beside them."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import connect

from ctxneo.memory import Memory

pytestmark = pytest.mark.neo4j


@pytest.fixture
def writer_and_reader(neo4j_server: Any) -> Iterator[tuple[Memory, Memory]]:
    """Two memories (two connections) over one fresh namespace, cleared after."""
    namespace = f"consistent-{uuid.uuid4().hex}"
    writer = Memory(connect(neo4j_server, namespace))
    reader = Memory(connect(neo4j_server, namespace))
    yield writer, reader
    writer.store.clear()
    writer.close()
    reader.close()


def test_a_reader_never_sees_zero_or_two_current_values_of_a_single_valued_key(
    writer_and_reader: tuple[Memory, Memory],
) -> None:
    writer, reader = writer_and_reader
    writer.remember("Svc", "OWNED_BY", "Team_0")
    writer.remember("Svc", "DEPENDS_ON", "Db_0")
    done = threading.Event()
    failures: list[BaseException] = []

    def write() -> None:
        try:
            # Every write supersedes; reads below run while these commit.
            for i in range(1, 150):
                writer.remember("Svc", "OWNED_BY", f"Team_{i}")
        except BaseException as e:  # reported by the main thread
            failures.append(e)
        finally:
            done.set()

    thread = threading.Thread(target=write)
    thread.start()
    reads = 0
    bad: list[str] = []
    try:
        while not done.is_set() or reads < 20:
            current = reader.current("Svc", "OWNED_BY")
            history = reader.history("Svc", "OWNED_BY")
            around = reader.facts("Svc")
            open_in_history = [f for f in history if f.valid_to is None]
            owners = [f for f in around if f.predicate == "OWNED_BY"]
            if len(current) != 1 or len(open_in_history) != 1 or len(owners) != 1:
                bad.append(f"current {current}, history open {open_in_history}, facts {owners}")
            reads += 1
    finally:
        thread.join()
    assert not failures
    assert bad == [], f"{len(bad)} of {reads} reads saw a supersession in part: {bad[:3]}"


def test_a_read_that_meets_the_last_write_reads_again_once_and_keeps_no_witness(
    writer_and_reader: tuple[Memory, Memory],
) -> None:
    # A commit can be seen while the server still applies it, so a read that meets
    # the newest write is repeated at the same number until two agree; one that
    # meets older writes only, or follows a settled read, is one round trip.
    writer, reader = writer_and_reader
    writer.remember("Svc", "OWNED_BY", "Team_A")
    writer.remember("Svc", "OWNED_BY", "Team_B")
    before = reader.store.reads
    (now,) = reader.current("Svc", "OWNED_BY")
    assert now.object == "Team_B"
    assert reader.store.reads - before == 2
    before = reader.store.reads
    assert [f.object for f in reader.history("Svc", "OWNED_BY")] == ["Team_A", "Team_B"]
    assert [f.object for f in reader.facts("Svc")] == ["Team_B"]
    assert reader.store.reads - before == 2
    # The writer's own write is known applied: no second read.
    before = writer.store.reads
    assert [f.object for f in writer.current("Svc", "OWNED_BY")] == ["Team_B"]
    assert writer.store.reads - before == 1
