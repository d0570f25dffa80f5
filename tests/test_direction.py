"""A question's verb says which way it reads a relation: "who manages Alice?" is never
answered by whom Alice manages, on either store."""

from __future__ import annotations

import pytest

from ctxneo.answering.direction import entity_is_subject, verb_phrase
from ctxneo.answering.entities import cover
from ctxneo.answering.question import read_question
from ctxneo.memory import Memory
from ctxneo.model import UNKNOWN


def best(memory: Memory, question: str) -> str:
    """The best reading's answer, whatever its confidence."""
    return memory.ask(question, min_confidence=0.0).answer


def test_a_relation_asked_the_other_way_is_unknown_not_its_reverse(memory: Memory) -> None:
    memory.remember("Alice", "MANAGES", "Bob")
    memory.remember("Service_Payments", "OWNED_BY", "Billing_Team")
    for question, reverse in (
        ("Who manages Alice?", "Bob"),
        ("Who is Alice managed by?", "Bob"),
        ("Who owns Billing_Team?", "Service_Payments"),
        ("What is Billing_Team owned by?", "Service_Payments"),
    ):
        assert memory.ask(question).answer == UNKNOWN, question
        assert best(memory, question) != reverse, question  # (not even unsure)
    # the true reason names the fact that answers the question turned round
    reason = memory.ask("Who manages Alice?").reason
    assert reason == "Alice MANAGES Bob reads the other way round from the question"
    assert memory.ask("Who does Alice manage?").answer == "Bob"
    assert memory.ask("Who owns Service_Payments?").answer == "Billing_Team"


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Who manages Alice?", "Carol"),
        ("Who does Alice manage?", "Bob"),
        ("Who is Alice managed by?", "Carol"),
        ("Who is managed by Alice?", "Bob"),
        ("What depends on Checkout?", "Cart"),
        ("What does Checkout depend on?", "Payments"),
        ("Checkout depends on what?", "Payments"),
        ("Who reports to Ana?", "Li"),
        ("Who does Ana report to?", "Raj"),
    ],
)
def test_both_ways_held_the_verb_chooses(memory: Memory, question: str, answer: str) -> None:
    memory.remember_many(
        [
            ("Alice", "MANAGES", "Bob"),
            ("Carol", "MANAGES", "Alice"),
            ("Checkout", "DEPENDS_ON", "Payments"),
            ("Cart", "DEPENDS_ON", "Checkout"),
            ("Ana", "REPORTS_TO", "Raj"),
            ("Li", "REPORTS_TO", "Ana"),
        ]
    )
    assert best(memory, question) == answer


@pytest.mark.parametrize(
    ("question", "entity", "predicate", "subject"),
    [
        ("who manages Alice?", "Alice", "MANAGES", False),
        ("who does Alice manage", "Alice", "MANAGES", True),
        ("who owns Svc_A?", "Svc_A", "OWNED_BY", True),
        ("what is Billing_Team owned by?", "Billing_Team", "OWNED_BY", True),
        ("what is managed by Alice?", "Alice", "MANAGES", True),
        # not said: a pronoun in the entity's place, the verb twice, a noun of it (which
        # may name who does it or where it is done: "Lot_12's dryer" is a machine),
        # another clause between them, a relation named by no verb
        ("Svc_A, who owns it?", "Svc_A", "OWNED_BY", None),
        ("who manages the team Alice manages?", "Alice", "MANAGES", None),
        ("Alice's manager?", "Alice", "MANAGES", None),
        ("who is the owner of Svc_A?", "Svc_A", "OWNED_BY", None),
        ("who was guarding before Omar took over?", "Omar", "GUARDED_BY", None),
        ("what is Lot_12's dryer?", "Lot_12", "DRIES_IN", None),
        ("what's the bin for SC-40213?", "SC-40213", "BIN_LOCATION", None),
        ("which crane did we give the Pier_4 lift?", "Pier_4", "LIFTED_BY", None),
        # a preposition's object is not the verb's: who wrote alongside Alice
        ("who wrote songs with Alice?", "Alice", "WRITTEN_BY", None),
        ("who painted murals together with Alice", "Alice", "PAINTED_BY", None),
        ("who reports to Ana?", "Ana", "REPORTS_TO", False),
        # a plural noun named as a relation, asked about with "what" or "which"
        ("what stops are on Route_5 now", "Route_5", "STOPS", None),
        ("which crates go on the Truck_12 run", "Truck_12", "CRATES", None),
        ("what depends on Checkout?", "Checkout", "DEPENDS_ON", False),
        ("what manages Alice?", "Alice", "MANAGES", False),
        # a verb ending as a doer's noun does ("mentor", "deliver") is the verb as the
        # predicate writes it; its noun still decides nothing
        ("who mentors Kenji?", "Kenji", "MENTORS", False),
        ("who does Kenji mentor?", "Kenji", "MENTORS", True),
        ("what does Acme deliver?", "Acme", "DELIVERS", True),
        ("who is Kenji's mentor?", "Kenji", "MENTORS", None),
        ("who is the mentor of Kenji?", "Kenji", "MENTORS", None),
    ],
)
def test_where_the_entity_stands_to_the_verb(
    question: str, entity: str, predicate: str, subject: bool | None
) -> None:
    q = read_question(question)
    positions = frozenset(cover(q, entity).positions)
    assert positions
    assert entity_is_subject(q, positions, predicate) is subject


def test_a_predicate_is_a_verb_phrase_only_when_its_name_reads_as_one() -> None:
    assert verb_phrase("MANAGES") == ("manag", False, None)
    assert verb_phrase("OWNED_BY") == ("own", True, "by")
    assert verb_phrase("DEPENDS_ON") == ("depend", False, "on")
    for noun in ("BIN_LOCATION", "STARRED_ACTORS", "HAS_STATUS", "STATUS", "CLASS"):
        assert verb_phrase(noun) is None, noun


def test_a_verdict_reads_the_verb_at_both_ends(memory: Memory) -> None:
    # "does Bob manage Alice?" is not answered yes by Alice managing Bob, nor is "who
    # reports to Raj?" answered by who said that Raj reports to someone.
    memory.remember("Alice", "MANAGES", "Bob", speaker="Agent_HR", turn_id=1)
    memory.remember("Service_Payments", "OWNED_BY", "Billing_Team", speaker="Agent_HR", turn_id=2)
    memory.remember("Raj", "REPORTS_TO", "Ana", speaker="Agent_HR", turn_id=3)
    for question in (
        "Does Bob manage Alice?",
        "Does Service_Payments own Billing_Team?",
        "Is Billing_Team owned by Service_Payments?",
        "Does Ana report to Raj?",
    ):
        assert best(memory, question) != "yes", question
        assert "reads the other way round" in memory.ask(question).reason, question
    for question in (
        "Does Alice manage Bob?",
        "Does Billing_Team own Service_Payments?",
        "Is Service_Payments owned by Billing_Team?",
        "Does Raj report to Ana?",
    ):
        assert memory.ask(question).answer == "yes", question
    assert memory.ask("Who reports to Raj?").answer == UNKNOWN  # (not Agent_HR)
    memory.remember("Li", "REPORTS_TO", "Raj", speaker="Agent_HR", turn_id=4)
    assert memory.ask("Who reports to Raj?").answer == "Li"
    # asked who said it, with a verb of saying of its own: the speaker
    assert best(memory, "Who said that Li reports to Raj?") == "Agent_HR"
