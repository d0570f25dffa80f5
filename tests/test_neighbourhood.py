"""A question's reads served from one read ahead: the same facts as reading the store read
by read, one state of the memory, and fewer round trips on Neo4j."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import connect, record_statements

from ctxneo.memory import Memory
from ctxneo.model import Fact
from ctxneo.stores.base import Described, DescribedAsk
from ctxneo.stores.neighbourhood import EntityRead, Neighbourhood, Plan, View

ENTITY = "E"


def _history(rng: random.Random, n: int) -> list[Fact]:
    """``n`` facts touching ENTITY, oldest first; some were closed by a later write."""
    out = []
    for seq in range(1, n + 1):
        closed_at = seq + rng.randint(1, 5)
        subject, obj = (ENTITY, f"X{seq}") if rng.random() < 0.6 else (f"X{seq}", ENTITY)
        valid_to = closed_at if rng.random() < 0.4 and closed_at <= n else None
        out.append(Fact(subject, rng.choice(["A", "B", "C"]), obj, seq, seq, valid_to))
    return out


def _read(
    facts: list[Fact], history: bool, limit: int, predicates: frozenset[str] | None
) -> list[Fact]:
    """What the store's facts_of returns for one entity (the contract, written plainly)."""
    kept = [
        f
        for f in facts
        if (predicates is None or f.predicate in predicates) and (history or f.valid_to is None)
    ]
    return sorted(kept, key=lambda f: -f.seq)[:limit]


def test_a_read_ahead_serves_a_read_only_when_it_decides_it_exactly() -> None:
    rng = random.Random(7)
    served = 0
    for _ in range(3000):
        facts = _history(rng, rng.randint(0, 30))
        preds = [None, frozenset("A"), frozenset("AB"), frozenset("ABC")]
        ahead_h, ahead_l, ahead_p = rng.random() < 0.5, rng.randint(1, 25), rng.choice(preds)
        ahead = EntityRead(
            ahead_h, ahead_l, ahead_p, tuple(_read(facts, ahead_h, ahead_l, ahead_p))
        )
        h, limit, p = rng.random() < 0.5, rng.randint(1, 25), rng.choice(preds)
        got = ahead.serve(None, h, limit, p)
        if got is not None:
            served += 1
            assert got == _read(facts, h, limit, p)
    assert served > 500  # (the rule serves often, not only trivially)


def _plan(anchors: tuple[str, ...], **kw: Any) -> Plan:
    base: dict[str, Any] = dict(
        anchors=anchors,
        as_of=None,
        first_limit=200,
        later_limit=40,
        later_history=True,
        hub_limit=200,
        best=("OWNED_BY", "RUNS_ON"),
        relevance={"OWNED_BY": 1.0, "RUNS_ON": 0.5},
        ends=120,
    )
    return Plan(**{**base, **kw})


def _fill(memory: Memory) -> None:
    memory.declare_multi_valued("RUNS_ON")
    for i in range(30):
        memory.remember(f"Svc_{i}", "OWNED_BY", f"Team_{i % 4}")
        memory.remember(f"Svc_{i}", "RUNS_ON", f"Cluster_{i % 3}")
        memory.remember(f"Svc_{i}", "DEPENDS_ON", f"Svc_{(i + 1) % 30}")
    for i in range(4):
        memory.remember(f"Team_{i}", "LEADS", f"Person_{i}")
        memory.remember(f"Team_{i}", "LEADS", f"Person_{i + 4}")  # (supersedes)
    memory.remember("Svc_3", "OWNED_BY", "Team_2")


def _walked(sent: list[str]) -> list[str]:
    """The statements a question ran to walk the graph (linking its words and reading
    the relations it describes are reads of their own)."""
    return [
        n
        for n in sent
        if n not in ("names_all", "vocabulary", "described", "facts_of_few_subjects")
    ]


@pytest.fixture
def pair(neo4j_server: Any) -> Iterator[tuple[Any, Memory, Memory]]:
    """A Neo4j store in a namespace of its own, a memory over it and an embedded memory,
    to be filled alike; the namespace is cleared after (one left behind shows in other
    tests' listings of the server)."""
    store = connect(neo4j_server, f"ahead-{uuid.uuid4().hex}")
    remote = Memory(store)
    try:
        yield store, remote, Memory.open()
    finally:
        remote.clear()
        store.close()


def _asked_alike_in_one_walk(
    remote: Memory, local: Memory, sent: list[str], question: str, **kw: Any
) -> None:
    """``question`` answered alike by both stores (answer, reading and context), the
    Neo4j one walking the graph in one neighbourhood read."""
    sent.clear()
    a, b = remote.ask(question, **kw), local.ask(question, **kw)
    assert (a.answer, a.reading, a.context) == (b.answer, b.reading, b.context)
    assert _walked(sent) == ["neighbourhood"], (question, sent)


@pytest.mark.neo4j
def test_neo4j_reads_served_ahead_equal_the_stores_reads_at_the_same_state(
    neo4j_server: Any,
) -> None:
    store = connect(neo4j_server, f"ahead-{uuid.uuid4().hex}")
    memory = Memory(store)
    _fill(memory)
    found = store.neighbourhood(_plan(("Svc_3", "Cluster_1")))  # type: ignore[attr-defined]
    view = View(store, found)  # type: ignore[arg-type]
    requests = [
        (["Svc_3"], dict(history=True, limit=200)),
        (["Svc_3", "Cluster_1"], dict(limit=40)),
        (["Team_2", "Svc_4"], dict(limit=40)),
        (["Cluster_1"], dict(limit=200, predicates=["OWNED_BY", "RUNS_ON"])),
        (["Team_2"], dict(history=True, limit=200, predicates=["LEADS"])),
        (["Person_9", "Svc_17"], dict(limit=5)),  # (not read ahead: read from the store)
        (["Team_3"], dict(limit=40)),  # (Svc_3's owner before Team_2: an earlier value's now)
    ]
    for names, kw in requests:
        assert view.facts_of(names, **kw) == store.facts_of(names, **kw), (names, kw)
    assert view.facts_of_few_subjects(["LEADS"], max_subjects=6, limit=30) == (
        store.facts_of_few_subjects(["LEADS"], max_subjects=6, limit=30)
    )
    assert view.served >= len(requests) - 1 and view.missed >= 1
    memory.clear()
    store.close()


@pytest.mark.neo4j
def test_every_question_sends_neo4j_the_same_neighbourhood_statement(neo4j_server: Any) -> None:
    # A server plans each new statement text (0.3-0.8 s for this one): relations written
    # into it would make one text, and one plan, per combination of them.
    store = connect(neo4j_server, f"ahead-{uuid.uuid4().hex}")
    memory = Memory(store)
    _fill(memory)
    sent: list[str] = []
    read_text = store._read_text  # type: ignore[attr-defined]

    def recording(name: str, statement: str, **params: Any) -> Any:
        if name == "neighbourhood":
            sent.append(statement)
        return read_text(name, statement, **params)

    store._read_text = recording  # type: ignore[attr-defined]
    store.neighbourhood(_plan(("Svc_3",)))  # type: ignore[attr-defined]
    store.neighbourhood(_plan(("Team_1", "Svc_9"), best=("LEADS",), relevance={"LEADS": 1.0}))  # type: ignore[attr-defined]
    memory.ask("Who leads the team that owns Svc_7?")
    assert len(sent) == 3 and len(set(sent)) == 1
    memory.clear()
    store.close()


@pytest.mark.neo4j
def test_neo4j_reads_the_third_hop_from_every_shape_of_few_ends_ahead(neo4j_server: Any) -> None:
    # "Where is the parcel parked?": the parcel's courier drives a van, and the van is
    # parked; no word names the middle relation, so the walk goes on from the van (a
    # shape of one end) whatever its rank. Twenty better-named ends of a big shape
    # outrank it; the read ahead must still hold the van's facts, or the walk reads
    # them in a round trip of its own.
    store = connect(neo4j_server, f"ahead-{uuid.uuid4().hex}")
    memory = Memory(store)
    memory.declare_multi_valued("VISITED")
    memory.remember("Courier_A", "CARRIES", "Parcel_7")
    memory.remember("Courier_A", "DRIVES", "Van_3")
    for i in range(20):
        memory.remember("Courier_A", "VISITED", f"Stop_{i}")
        memory.remember(f"Stop_{i}", "PARKED_AT", f"Depot_{i}")
    memory.remember("Van_3", "PARKED_AT", "Depot_North")
    plan = _plan(
        ("Parcel_7",), best=("PARKED_AT",), relevance={"VISITED": 1.0, "PARKED_AT": 1.0}, ends=5
    )
    view = View(store, store.neighbourhood(plan))  # type: ignore[arg-type, attr-defined]
    kw: dict[str, Any] = dict(limit=200, predicates=["PARKED_AT"])
    assert view.facts_of(["Van_3"], **kw) == store.facts_of(["Van_3"], **kw)
    assert [f.object for f in view.facts_of(["Van_3"], **kw)] == ["Depot_North"]
    assert (view.served, view.missed) == (2, 0)
    memory.clear()
    store.close()


@pytest.mark.neo4j
def test_one_question_sees_one_state_of_a_neo4j_memory(neo4j_server: Any) -> None:
    store = connect(neo4j_server, f"ahead-{uuid.uuid4().hex}")
    memory = Memory(store)
    _fill(memory)
    found = store.neighbourhood(_plan(("Svc_3",)))  # type: ignore[attr-defined]
    view = View(store, found)  # type: ignore[arg-type]
    memory.remember("Svc_3", "OWNED_BY", "Team_9")  # written after the read ahead
    memory.remember("Svc_29", "OWNED_BY", "Team_9")
    owners = [f.object for f in view.facts_of(["Svc_3"], limit=40) if f.predicate == "OWNED_BY"]
    assert owners == ["Team_2"]  # served ahead, as the memory stood
    later = [f.object for f in view.facts_of(["Svc_29"], limit=40) if f.predicate == "OWNED_BY"]
    assert later == ["Team_1"]  # read from the store, pinned to the same state
    assert view.missed == 1
    memory.clear()
    store.close()


def test_described_relations_read_ahead_serve_a_read_only_when_they_decide_it() -> None:
    f = Fact("Valve_2", "FAILED", "pressure test", 3, 3)
    ahead = Described(
        DescribedAsk(("FAILED", "SIGNS_OFF"), 6, None, 30), 9, {"FAILED": [f], "SIGNS_OFF": []}
    )
    assert ahead.serve(["FAILED"], 6, None, 30, 9) == {"FAILED": [f]}
    assert ahead.serve(["SIGNS_OFF", "FAILED"], 6, None, 30, 9) == {"SIGNS_OFF": [], "FAILED": [f]}
    assert ahead.serve(["FAILED"], 6, None, 30, 10) is None  # the memory moved since
    assert ahead.serve(["FAILED", "OWNS"], 6, None, 30, 9) is None  # a relation not read
    assert ahead.serve(["FAILED"], 5, None, 30, 9) is None  # other bounds
    assert ahead.serve(["FAILED"], 6, 4, 30, 9) is None  # another as_of
    assert ahead.serve(["FAILED"], 6, None, 20, 9) is None

    class Store:
        reads = 0

        def facts_of_few_subjects(self, predicates: Any, **kw: Any) -> dict[str, list[Fact]]:
            self.reads += 1
            return {p: [] for p in predicates}

    store = Store()
    view = View(store, Neighbourhood(9, None), ahead)  # type: ignore[arg-type]
    assert view.facts_of_few_subjects(["FAILED"], max_subjects=6, limit=30) == {"FAILED": [f]}
    assert (view.served, store.reads) == (1, 0)
    moved = View(store, Neighbourhood(10, None), ahead)  # type: ignore[arg-type]
    assert moved.facts_of_few_subjects(["FAILED"], max_subjects=6, limit=30) == {"FAILED": []}
    assert (moved.missed, store.reads) == (1, 1)


@pytest.mark.neo4j
def test_neo4j_reads_described_relations_ahead_as_it_reads_them_alone(neo4j_server: Any) -> None:
    store = connect(neo4j_server, f"ahead-{uuid.uuid4().hex}")
    memory = Memory(store)
    _fill(memory)
    memory.remember("Cluster_9", "PATCHED_BY", "Person_1")  # (a relation of one subject)
    memory.remember("Cluster_9", "PATCHED_BY", "Person_2")
    for as_of in (None, 50):
        ask = DescribedAsk(("LEADS", "OWNED_BY", "PATCHED_BY"), 6, as_of, 30)
        got = store.vocabulary(["svc", "team"], described=ask).described  # type: ignore[call-arg]
        assert got is not None
        alone = store.facts_of_few_subjects(  # type: ignore[call-arg]
            list(ask.predicates), max_subjects=6, as_of=as_of, limit=30, at=got.at
        )
        assert got.facts == alone
        assert got.facts["OWNED_BY"] == []  # (30 subjects: names none)
        assert bool(got.facts["PATCHED_BY"]) == (as_of is None)  # (written after 50)
    assert store.known_predicates() == sorted(
        ["DEPENDS_ON", "LEADS", "OWNED_BY", "PATCHED_BY", "RUNS_ON"]
    )
    memory.clear()
    store.close()


@pytest.mark.neo4j
def test_neo4j_serves_an_asker_the_memory_has_no_entity_of_ahead(
    pair: tuple[Any, Memory, Memory],
) -> None:
    # "Which team owns Svc_7, and what do I run on?" asked by an agent no fact names: the
    # asker is an anchor with no facts, which the walk is served without a read.
    store, remote, local = pair
    for m in (remote, local):
        _fill(m)
    sent = record_statements(store)
    for q in ["Which team owns my service Svc_7?", "What do I run on?"]:
        _asked_alike_in_one_walk(remote, local, sent, q, speaker="Agent_Nobody")
        # Several readings send the facts around them too, the same on both stores.
        a = remote.ask(q, speaker="Agent_Nobody", k=3)
        b = local.ask(q, speaker="Agent_Nobody", k=3)
        assert (a.answer, a.reading, a.context) == (b.answer, b.reading, b.context)


@pytest.mark.neo4j
def test_neo4j_puts_described_relations_together_from_those_it_read(neo4j_server: Any) -> None:
    # A question naming relations in a new combination is served from the relations read
    # before, at the same state: no round trip, and no new statement for the server to plan.
    store: Any = connect(neo4j_server, f"ahead-{uuid.uuid4().hex}")
    memory = Memory(store)
    _fill(memory)
    memory.remember("Cluster_9", "PATCHED_BY", "Person_1")
    sent = record_statements(store)
    try:
        store.vocabulary(["svc"], described=DescribedAsk(("LEADS", "OWNED_BY"), 6, None, 30))
        store.vocabulary(["svc"], described=DescribedAsk(("PATCHED_BY",), 6, None, 30))
        assert sent.count("described") == 2
        ask = DescribedAsk(("OWNED_BY", "PATCHED_BY", "LEADS"), 6, None, 30)
        got = store.vocabulary(["svc"], described=ask).described
        assert sent.count("described") == 2
        assert got.facts == store.facts_of_few_subjects(
            list(ask.predicates), max_subjects=6, limit=30, at=got.at
        )
        assert got.facts["PATCHED_BY"] and got.facts["LEADS"] and not got.facts["OWNED_BY"]
        # Other bounds are another read; so is a memory that moved.
        store.vocabulary(["svc"], described=DescribedAsk(("LEADS",), 6, 50, 30))
        assert sent.count("described") == 3
        memory.remember("Cluster_8", "PATCHED_BY", "Person_2")
        store.neighbourhood(_plan(("Svc_3",)))  # (another client's write would show here)
        got = store.vocabulary(["svc"], described=DescribedAsk(("PATCHED_BY",), 6, None, 30))
        assert sent.count("described") == 4
        assert len(got.described.facts["PATCHED_BY"]) == 2
    finally:
        memory.clear()
        store.close()


@pytest.mark.neo4j
def test_a_neo4j_answer_takes_two_round_trips_and_answers_as_the_embedded_store(
    pair: tuple[Any, Memory, Memory],
) -> None:
    store, remote, local = pair
    for m in (remote, local):
        _fill(m)
    questions = [
        "Which team owns Svc_3?",
        "Who leads the team that owns Svc_7?",
        "What does Svc_12 run on?",
        "Who owned Svc_3 before Team_2?",
        "Who leads the team that owned Svc_3 before Team_2?",  # (an earlier value's relation)
    ]
    trips, with_evidence = [], []
    for q in questions:
        before = store.reads
        a, b = remote.ask(q), local.ask(q)
        trips.append(store.reads - before)
        assert (a.answer, a.reading, a.context) == (b.answer, b.reading, b.context)
        before = store.reads
        a, b = remote.ask(q, k=3), local.ask(q, k=3)
        with_evidence.append(store.reads - before)
        assert (a.answer, a.reading, a.context) == (b.answer, b.reading, b.context)
    # The vocabulary (with the described relations read ahead) and the neighbourhood;
    # the connection's first question reads its described relations alone (it has not
    # seen the memory's predicates yet, to choose them from).
    assert trips[0] <= 3 and max(trips[1:]) <= 2, trips
    # Asked again for several readings: the neighbourhood (the described relations are
    # kept), and at most one read of the facts around the readings that it did not hold.
    assert max(with_evidence) <= 2, with_evidence


def _films(memory: Memory) -> None:
    """Films sharing genres (hubs of hundreds of films) and directors: a walk through a
    hub goes on from the oldest of the hub's newest facts it read, and takes at most so
    many steps, so the ends it walks on from are not a hub's newest."""
    memory.declare_multi_valued("HAS_GENRE", "DIRECTED_BY")
    genres = ["Drama", "Comedy", "Crime", "War"]
    facts = []
    for i in range(300):
        facts.append((f"Film_{i}", "HAS_GENRE", genres[i % 4]))
        facts.append((f"Film_{i}", "HAS_GENRE", genres[(i + 1) % 4]))
        facts.append((f"Film_{i}", "DIRECTED_BY", f"Director_{i % 60}"))
        facts.append((f"Film_{i}", "RELEASE_YEAR", str(1950 + i % 40)))
    memory.remember_many(facts)


@pytest.mark.neo4j
def test_neo4j_reads_ahead_the_hubs_walks_as_the_walk_chooses_them(
    pair: tuple[Any, Memory, Memory],
) -> None:
    store, remote, local = pair
    for m in (remote, local):
        _films(m)
    sent = record_statements(store)
    for q in [
        "Who directed Film_7?",
        "Which genres are the films directed by Director_7 in?",
        "When were the films that share a genre with Film_12 released?",
        "Did Director_3 direct Film_63?",  # (a slot's past may be asked: histories too)
    ]:
        # (linking words and the relations a question describes are reads of their own)
        _asked_alike_in_one_walk(remote, local, sent, q)
        a, b = remote.ask(q, k=3), local.ask(q, k=3)
        assert (a.answer, a.reading, a.context) == (b.answer, b.reading, b.context)


@pytest.mark.neo4j
def test_neo4j_reads_ahead_the_ends_the_walk_goes_on_from_wherever_they_rank(
    pair: tuple[Any, Memory, Memory],
) -> None:
    # A service's few ends through a relation the question does not name (its status)
    # rank below the ends of the relation it names (the cluster's many services), but
    # the walk goes on from them too; and an anchor with more facts than its first read
    # holds (a hub) has its facts of the question's best relations read for it. Both
    # are read with the neighbourhood, not in round trips of their own after it.
    store, remote, local = pair
    # (the hub's escalation written first: its newest 200 facts are all statuses)
    facts = [("Degraded", "ESCALATED_TO", "Team_Oncall")]
    facts += [(f"Svc_{i}", "RUNS_ON", "Cluster_North") for i in range(160)]
    facts += [(f"Svc_{i}", "HAS_STATUS", "Degraded") for i in range(160, 400)]
    facts += [
        ("Svc_Gate", "HAS_STATUS", "Degraded"),
        ("Svc_Gate", "RUNS_ON", "Cluster_North"),
        ("Cluster_North", "MANAGED_BY", "Team_Ops"),
    ]
    for m in (remote, local):
        m.remember_many(facts)
    remote.warm()
    sent = record_statements(store)
    for q in [
        "Which team manages the cluster Svc_Gate runs on?",
        "Which services run on Cluster_North?",
        "Who handles escalations for services that are Degraded?",
    ]:
        _asked_alike_in_one_walk(remote, local, sent, q)
    # (the crowded-out fact was read ahead and served: it is the answer)
    escalated = remote.ask("Who handles escalations for Degraded?", min_confidence=0)
    assert "Team_Oncall" in escalated.values
