"""The store contract, one suite run against every store (in memory, journaled, Neo4j)."""

from __future__ import annotations

import itertools
import threading

import pytest

from ctxneo.errors import InvalidFactError
from ctxneo.memory import Memory
from ctxneo.model import NewFact
from ctxneo.stores.base import Store


def facts(store: Store) -> list[tuple[str, str, str, int, int | None]]:
    return [(f.subject, f.predicate, f.object, f.seq, f.valid_to) for f in store.all_facts()]


def test_remember_assigns_increasing_sequence_numbers_and_keeps_provenance(store: Store) -> None:
    a = store.remember(
        NewFact("Project_Alpha", "USES_DATABASE", "PostgreSQL", "Agent_Planner", 3, "f1")
    )
    b = store.remember(NewFact("AuthModule", "DEPENDS_ON", "RateLimiter", "Agent_Impl", 9, "f2"))
    assert (a.seq, a.valid_from, a.valid_to) == (1, 1, None)
    assert (b.seq, b.valid_from) == (2, 2)
    assert (a.speaker, a.turn_id, a.fact_id) == ("Agent_Planner", 3, "f1")
    assert store.history("Project_Alpha") == [a]


def test_a_new_value_closes_the_old_one_and_history_keeps_both(store: Store) -> None:
    high = store.remember(NewFact("Ticket_4471", "HAS_PRIORITY", "high", "Agent_Intake"))
    critical = store.remember(
        NewFact("Ticket_4471", "HAS_PRIORITY", "critical", "Agent_Specialist")
    )
    history = store.history("Ticket_4471", "HAS_PRIORITY")
    assert [(f.object, f.valid_from, f.valid_to) for f in history] == [
        ("high", high.seq, critical.seq),
        ("critical", critical.seq, None),
    ]
    current = store.facts_of(["Ticket_4471"])
    assert [f.object for f in current] == ["critical"]
    # The past is still readable: as it stood before the change.
    assert [f.object for f in store.facts_of(["Ticket_4471"], as_of=high.seq)] == ["high"]
    assert {f.object for f in store.facts_of(["Ticket_4471"], history=True)} == {"high", "critical"}


def test_restating_the_current_value_changes_nothing(store: Store) -> None:
    first = store.remember(NewFact("Svc", "OWNED_BY", "Team_A"))
    again = store.remember(NewFact("Svc", "OWNED_BY", "Team_A", "someone else"))
    assert again == first
    assert store.stats()["facts"] == 1
    assert store.stats()["last_seq"] == 1


def test_multi_valued_predicates_accumulate_until_retracted(store: Store) -> None:
    store.declare_multi_valued(["DEPENDS_ON"])
    store.remember(NewFact("Flow", "DEPENDS_ON", "PushGateway"))
    store.remember(NewFact("Flow", "DEPENDS_ON", "Profile_API"))
    store.remember(NewFact("Flow", "OWNED_BY", "Squad_A"))
    store.remember(NewFact("Flow", "OWNED_BY", "Squad_B"))
    current = {(f.predicate, f.object) for f in store.facts_of(["Flow"])}
    assert current == {
        ("DEPENDS_ON", "PushGateway"),
        ("DEPENDS_ON", "Profile_API"),
        ("OWNED_BY", "Squad_B"),
    }
    closed = store.retract("Flow", "DEPENDS_ON", "PushGateway")
    assert [f.object for f in closed] == ["PushGateway"] and closed[0].valid_to is not None
    assert {f.object for f in store.facts_of(["Flow"]) if f.predicate == "DEPENDS_ON"} == {
        "Profile_API"
    }
    assert store.multi_valued() == frozenset({"DEPENDS_ON"})


def test_a_fact_may_declare_its_predicate_multi_valued(store: Store) -> None:
    store.remember(NewFact("Run", "TRAINED_ON", "Set_A", multi=True))
    store.remember(NewFact("Run", "TRAINED_ON", "Set_B"))
    assert {f.object for f in store.facts_of(["Run"])} == {"Set_A", "Set_B"}


def test_retraction_uses_a_sequence_number_and_leaves_history(store: Store) -> None:
    fact = store.remember(NewFact("Svc", "HAS_STATUS", "degraded"))
    (closed,) = store.retract("Svc", "HAS_STATUS")
    assert closed.seq == fact.seq and closed.valid_to == fact.seq + 1
    assert store.facts_of(["Svc"]) == []
    assert store.retract("Svc", "HAS_STATUS") == []
    assert store.stats()["last_seq"] == 2
    nxt = store.remember(NewFact("Svc", "HAS_STATUS", "healthy"))
    assert nxt.seq == 3


def test_remember_many_matches_one_at_a_time(store: Store) -> None:
    batch = [
        NewFact("T", "HAS_PRIORITY", "low"),
        NewFact("T", "HAS_PRIORITY", "high"),
        NewFact("T", "HAS_PRIORITY", "high"),
        NewFact("T", "ASSIGNED_TO", "Ann"),
        NewFact("T", "HAS_PRIORITY", "critical"),
        NewFact("T", "LINKS", "X", multi=True),
        NewFact("T", "LINKS", "Y"),
    ]
    out = store.remember_many(batch)
    reference = Memory.open()
    for f in batch:
        reference.store.remember(f)
    assert facts(store) == facts(reference.store)
    assert [f.seq for f in out] == [1, 2, 2, 3, 4, 5, 6]
    assert out[0].valid_to == 2  # returned as it now stands: closed within the batch


def test_facts_of_sees_both_directions_newest_first(store: Store) -> None:
    store.remember(NewFact("AuthModule", "ASSIGNED_TO", "Agent_Impl"))
    store.remember(NewFact("AuthModule", "DEPENDS_ON", "RateLimiter"))
    store.remember(NewFact("Gateway", "DEPENDS_ON", "AuthModule"))
    got = [(f.subject, f.predicate, f.object) for f in store.facts_of(["AuthModule"])]
    assert got == [
        ("Gateway", "DEPENDS_ON", "AuthModule"),
        ("AuthModule", "DEPENDS_ON", "RateLimiter"),
        ("AuthModule", "ASSIGNED_TO", "Agent_Impl"),
    ]


def test_facts_with_predicate_reads_current_values_newest_first(store: Store) -> None:
    store.remember(NewFact("Orders", "HAS_ANOMALY", "row count"))
    store.remember(NewFact("Users", "HAS_ANOMALY", "null ids"))
    store.remember(NewFact("Orders", "HAS_ANOMALY", "late rows"))
    got = [(f.subject, f.object) for f in store.facts_with_predicate("HAS_ANOMALY")]
    assert got == [("Orders", "late rows"), ("Users", "null ids")]


def test_the_token_index_finds_entities_and_aliases(store: Store) -> None:
    store.remember(NewFact("Service_Checkout", "DEPENDS_ON", "Service_Payments"))
    store.add_alias("the money pipeline", "Service_Payments")
    assert {h.name for h in store.find_entities(["checkout"])} == {"Service_Checkout"}
    assert {h.name for h in store.find_entities(["servic"])} == {
        "Service_Checkout",
        "Service_Payments",
    }
    (hit,) = store.find_entities(["money"])
    assert hit.name == "Service_Payments" and hit.aliases == ("the money pipeline",)
    assert store.find_entities(["nothing"]) == []


def test_predicates_are_listed(store: Store) -> None:
    store.remember(NewFact("A", "OWNED_BY", "B"))
    store.remember(NewFact("A", "DEPENDS_ON", "C"))
    assert store.predicates() == ["DEPENDS_ON", "OWNED_BY"]


@pytest.mark.parametrize(
    "name",
    [
        'O\'Brien "the" \\ backslash',
        "line one\nline two",
        "名前_ünïcødé ✓",
        "x'}) MATCH (n) DETACH DELETE n //",
        "$param {curly} `backtick`",
    ],
)
def test_hostile_names_are_stored_literally(store: Store, name: str) -> None:
    fact = store.remember(NewFact(name, "OWNED_BY", name + " owner", speaker=name))
    assert (fact.subject, fact.object, fact.speaker) == (name, name + " owner", name)
    (back,) = store.history(name)
    assert (back.subject, back.object, back.speaker) == (name, name + " owner", name)
    assert [f.object for f in store.facts_of([name + " owner"])] == [name + " owner"]


@pytest.mark.parametrize(
    "predicate",
    ["OWNED_BY]->(b) WITH a MATCH (z) DETACH DELETE z //", "depends on", "", "1ST", "A-B", "É"],
)
def test_predicates_that_are_not_identifiers_are_refused(store: Store, predicate: str) -> None:
    store.remember(NewFact("Sentinel", "GUARDS", "Everything"))
    with pytest.raises(InvalidFactError, match="invalid predicate"):
        store.remember(NewFact("A", predicate, "B"))
    assert [f.subject for f in store.all_facts()] == ["Sentinel"]


def test_empty_names_are_refused(store: Store) -> None:
    with pytest.raises(InvalidFactError):
        store.remember(NewFact("", "OWNED_BY", "B"))
    with pytest.raises(InvalidFactError):
        store.remember(NewFact("A", "OWNED_BY", "   "))


def test_clear_empties_the_memory(store: Store) -> None:
    store.remember(NewFact("A", "OWNED_BY", "B"))
    store.clear()
    assert list(store.all_facts()) == []
    assert store.stats()["facts"] == 0
    assert store.remember(NewFact("A", "OWNED_BY", "C")).seq == 1


def test_concurrent_writers_get_unique_sequence_numbers_and_one_current_value(store: Store) -> None:
    errors: list[BaseException] = []

    def writer(worker: int) -> None:
        try:
            for i in range(15):
                store.remember(NewFact("Shared", "HAS_VALUE", f"w{worker}-{i}"))
                store.remember(NewFact(f"Own_{worker}", "HAS_VALUE", str(i)))
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    seqs = [f.seq for f in store.all_facts()]
    assert len(seqs) == 120 and len(set(seqs)) == 120 and seqs == sorted(seqs)
    shared = store.history("Shared", "HAS_VALUE")
    assert sum(1 for f in shared if f.valid_to is None) == 1
    # Each closed value was closed by the next one written.
    assert all(a.valid_to == b.seq for a, b in itertools.pairwise(shared))


def test_remember_many_on_a_memory_with_history_matches_one_at_a_time(store: Store) -> None:
    store.remember(NewFact("X", "HAS_STATUS", "old"))
    reference = Memory.open().store
    reference.remember(NewFact("X", "HAS_STATUS", "old"))
    batch = [
        NewFact("X", "HAS_STATUS", "old"),
        NewFact("X", "HAS_STATUS", "new"),
        NewFact("Y", "HAS_STATUS", "a"),
    ]
    got, want = store.remember_many(batch), reference.remember_many(batch)
    assert got == want
    assert got[0].object == "old" and got[0].valid_to == got[1].seq  # returned as it now stands
    assert facts(store) == facts(reference)


def test_restating_a_value_as_multi_valued_makes_the_predicate_multi_valued(store: Store) -> None:
    store.remember(NewFact("Run", "TRAINED_ON", "Set_A"))
    store.remember(NewFact("Run", "TRAINED_ON", "Set_A", multi=True))
    store.remember(NewFact("Run", "TRAINED_ON", "Set_B"))
    assert {f.object for f in store.facts_of(["Run"])} == {"Set_A", "Set_B"}


def test_an_alias_names_an_entity_even_before_it_has_facts(store: Store) -> None:
    store.add_alias("the money team", "Finance_Eng")
    assert store.stats()["entities"] == 1
    (hit,) = store.find_entities(["money"])
    assert (hit.name, hit.aliases) == ("Finance_Eng", ("the money team",))


def test_a_predicate_has_one_stored_form_whatever_its_spelling(store: Store) -> None:
    store.declare_multi_valued(["dependsOn"])
    first = store.remember(NewFact("Checkout", "depends_on", "Payments"))
    store.remember(NewFact("Checkout", "DEPENDS_ON", "Fraud"))
    store.remember(NewFact("Checkout", "ownedBy", "Team_A"))
    again = store.remember(NewFact("Checkout", "Owned_By", "Team_B"))
    assert first.predicate == "DEPENDS_ON" and again.predicate == "OWNED_BY"
    assert store.predicates() == ["DEPENDS_ON", "OWNED_BY"]
    assert store.multi_valued() == frozenset({"DEPENDS_ON"})
    assert [f.object for f in store.history("Checkout", "dependsOn")] == ["Payments", "Fraud"]
    assert [(f.object, f.valid_to) for f in store.history("Checkout", "owned_by")] == [
        ("Team_A", again.seq),
        ("Team_B", None),
    ]
    assert [f.object for f in store.retract("Checkout", "depends_on", "Fraud")] == ["Fraud"]
    assert [f.subject for f in store.facts_with_predicate("dependsOn")] == ["Checkout"]


def test_facts_of_can_keep_to_some_predicates(store: Store) -> None:
    store.remember_many(
        [
            NewFact("Film_A", "DIRECTED_BY", "Ana"),
            NewFact("Film_B", "DIRECTED_BY", "Ana"),
            NewFact("Film_A", "HAS_GENRE", "Drama"),
            NewFact("Ana", "BORN_IN", "Lisbon"),
        ]
    )
    got = {
        (f.subject, f.predicate, f.object)
        for f in store.facts_of(["Ana"], predicates=["DIRECTED_BY"])
    }
    assert got == {("Film_A", "DIRECTED_BY", "Ana"), ("Film_B", "DIRECTED_BY", "Ana")}
    both = store.facts_of(["Ana", "Film_A"], predicates=["BORN_IN", "HAS_GENRE"])
    assert {f.object for f in both} == {"Lisbon", "Drama"}
    assert store.facts_of(["Ana"], predicates=[]) == []
    assert store.facts_of(["Ana"], predicates=["NO_SUCH"]) == []


def test_facts_of_some_predicates_reads_the_past_too(store: Store) -> None:
    store.remember_many([NewFact("Team_A", "LED_BY", "Alice"), NewFact("Team_A", "OWNS", "Svc")])
    bob = store.remember(NewFact("Team_A", "LED_BY", "Bob"))
    before = store.facts_of(["Team_A"], as_of=bob.seq - 1, predicates=["LED_BY"])
    assert [f.object for f in before] == ["Alice"]
    ever = store.facts_of(["Team_A"], history=True, predicates=["LED_BY"])
    assert [f.object for f in ever] == ["Bob", "Alice"]


def test_facts_of_a_hub_are_its_newest_first_up_to_the_limit(store: Store) -> None:
    store.declare_multi_valued(["HAS_GENRE", "TAGGED"])
    store.remember_many(
        [NewFact(f"Film_{i}", "HAS_GENRE", "Drama") for i in range(12)]
        + [NewFact("Drama", "TAGGED", f"tag{i}") for i in range(4)]
    )
    store.retract("Film_3", "HAS_GENRE")
    again = store.remember(NewFact("Film_3", "HAS_GENRE", "Drama"))  # restated: newest now
    newest = store.facts_of(["Drama"], limit=3)
    assert [f.subject for f in newest] == ["Film_3", "Drama", "Drama"]
    assert newest[0].seq == again.seq
    assert [f.seq for f in newest] == sorted((f.seq for f in newest), reverse=True)
    films = store.facts_of(["Drama"], limit=2, predicates=["HAS_GENRE"])
    assert [f.subject for f in films] == ["Film_3", "Film_11"]


def test_the_words_a_fact_was_said_in_find_its_entities(store: Store) -> None:
    said = "Harbor St opens at 11:00 for the summer"
    first = store.remember(NewFact("PAR-14", "OPENS_AT", "11:00", "Agent_Ops", 4, text=said))
    assert first.text == said
    store.remember_many(
        [
            NewFact("PAR-41", "OPENS_AT", "09:00", text="Millbrook opens at nine"),
            NewFact("PAR-41", "MANAGER", "Ana Ruiz", text="Millbrook is Ana's store"),
        ]
    )
    hits = {h.name: h.said for h in store.find_entities(["harbor", "st", "millbrook"])}
    # Found by the words they were spoken of in, though no name holds them.
    assert hits["PAR-14"] == frozenset({"harbor", "st"})
    assert hits["PAR-41"] == frozenset({"millbrook"})
    assert hits["11:00"] == frozenset({"harbor", "st"})
    # The words stay with the fact, closed or not, through every read.
    store.remember(NewFact("PAR-14", "OPENS_AT", "10:00"))
    (old, new) = store.history("PAR-14", "OPENS_AT")
    assert (old.text, new.text) == (said, None)
    assert {f.text for f in store.all_facts()} >= {said, "Millbrook is Ana's store"}
    # A word said of many entities proposes none of them by itself.
    store.remember_many(
        [NewFact(f"Kiosk_{i}", "STATUS", "open", text="the kiosk is open") for i in range(20)]
    )
    assert not any(h.said for h in store.find_entities(["kiosk"]) if h.name.startswith("Kiosk"))


def test_a_relation_of_few_subjects_gives_its_newest_facts_and_a_widespread_one_none(
    store: Store,
) -> None:
    store.declare_multi_valued(["HOLDS"])
    store.remember_many(
        [NewFact("Valve_3", "FAILED", "pressure test"), NewFact("Valve_8", "FAILED", "leak test")]
        + [NewFact("Courier_1", "HOLDS", f"Parcel_{i}") for i in range(12)]
        + [NewFact(f"Service_{i}", "OWNED_BY", "Team_A") for i in range(9)]
    )
    before = store.stats()["last_seq"]
    store.retract("Valve_8", "FAILED")
    found = store.facts_of_few_subjects(
        ["FAILED", "HOLDS", "OWNED_BY", "NEVER_SAID"], max_subjects=6, limit=5
    )
    assert [(f.subject, f.object) for f in found["FAILED"]] == [("Valve_3", "pressure test")]
    # One subject with many values is few subjects: its newest values, at most the limit.
    assert [f.object for f in found["HOLDS"]] == [f"Parcel_{i}" for i in (11, 10, 9, 8, 7)]
    assert found["OWNED_BY"] == [] and found["NEVER_SAID"] == []  # nine subjects; none
    then = store.facts_of_few_subjects(["FAILED"], max_subjects=1, as_of=before, limit=5)
    assert then["FAILED"] == []  # two subjects then, more than one
    then = store.facts_of_few_subjects(["FAILED"], max_subjects=2, as_of=before, limit=5)
    assert sorted(f.subject for f in then["FAILED"]) == ["Valve_3", "Valve_8"]


def test_current_and_the_newest_of_a_history_are_read_alone(store: Store) -> None:
    for i in range(6):
        store.remember(NewFact("Svc", "OWNED_BY", f"Team_{i}"))
    store.remember(NewFact("Svc", "RUNS_ON", "Host_1"))
    store.remember(NewFact("Other", "OWNED_BY", "Svc"))
    (now,) = store.current_of("Svc", "OWNED_BY")
    assert now.object == "Team_5" and now.valid_to is None
    assert [f.object for f in store.current_of("Svc")] == ["Team_5", "Host_1"]
    assert store.current_of("Nobody") == []
    newest = store.history("Svc", "OWNED_BY", limit=2)
    assert [(f.object, f.valid_to is None) for f in newest] == [("Team_4", False), ("Team_5", True)]
    assert [f.object for f in store.history("Svc", limit=2)] == ["Team_5", "Host_1"]
    assert len(store.history("Svc", "OWNED_BY")) == 6
    with pytest.raises(InvalidFactError):
        store.history("Svc", limit=0)


def test_a_write_says_what_it_created_and_closed(store: Store) -> None:
    store.remember(NewFact("Svc", "OWNED_BY", "Team_A"))
    store.remember(NewFact("Svc", "RUNS_ON", "Host_1"))
    written = store.write(
        [
            NewFact("Svc", "OWNED_BY", "Team_B"),  # closes Team_A, stored before
            NewFact("Svc", "RUNS_ON", "Host_1"),  # current already: nothing written
            NewFact("Svc", "OWNED_BY", "Team_C"),  # closes Team_B, made by this write
            NewFact("Svc", "OWNED_BY", "Team_C"),  # stated twice
        ]
    )
    assert [f.object for f in written.facts] == ["Team_B", "Host_1", "Team_C", "Team_C"]
    assert written.unchanged() == [False, True, False, True]
    # Only what was current before the write: Team_B was this write's own.
    assert [(f.object, f.valid_to) for f in written.closed] == [("Team_A", written.facts[0].seq)]
    assert written.facts[0].valid_to == written.facts[2].seq  # Team_B as it now stands
