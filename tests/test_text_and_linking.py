"""Word splitting, stemming and entity linking: the general rules, one by one."""

from __future__ import annotations

import pytest

from ctxneo.answering.entities import cover, link_entities
from ctxneo.answering.question import lookup_keys, read_question
from ctxneo.stores.base import EntityHit
from ctxneo.text import name_stems, split_words, stem


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("Service_Checkout", ["service", "checkout"]),
        ("AuthModule", ["auth", "module"]),
        ("HTTPServer2", ["http", "server", "2"]),
        ("us-east-1", ["us", "east", "1"]),
        ("Ticket_4471's", ["ticket", "4471"]),
        ("Café_Ops", ["café", "ops"]),
    ],
)
def test_names_split_on_underscores_case_and_digits(name: str, words: list[str]) -> None:
    assert split_words(name) == words


def test_stems_meet_across_inflections_and_irregular_verbs() -> None:
    assert stem("depends") == stem("dependency") == stem("depend")
    assert stem("led") == stem("leads")
    assert name_stems("OWNED_BY")[0] == stem("owns")


def _link(question: str, *names: str) -> list[str]:
    q = read_question(question)
    return [lk.entity for lk in link_entities(q, [EntityHit(n) for n in names])]


def test_paraphrased_names_link_by_token_coverage() -> None:
    assert _link(
        "Which team owns the checkout service?", "Service_Checkout", "Service_Payments"
    ) == ["Service_Checkout"]
    assert _link("What is the token expiry of the authentication module?", "AuthModule") == [
        "AuthModule"
    ]
    assert _link("Who is on ticket 4471?", "Ticket_4471", "Ticket_4472") == ["Ticket_4471"]


def test_a_class_word_alone_does_not_link_one_of_many() -> None:
    # "the crew" names no crew when there are two.
    assert _link("Who leads the crew?", "Crew_Delta", "Crew_Foxtrot") == []


def test_substrings_and_articles_do_not_link() -> None:
    assert _link("Who owns Svc12?", "Svc1", "Svc12") == ["Svc12"]
    assert _link("Which is the highest priority?", "high") == []
    # The article "a" is not the A of Source_A.
    assert _link("Is there a source for this?", "Source_A", "Source_B") == []
    assert _link("What did Source_A report?", "Source_A", "Source_B") == ["Source_A"]


def test_exact_mention_wins_over_partial_ones() -> None:
    q = read_question("What does Service_Checkout depend on?")
    c = cover(q, "Service_Checkout")
    assert c.exact and c.coverage == 1.0
    assert _link(
        "What does Service_Checkout depend on?", "Service_Checkout", "Service_Payments"
    ) == ["Service_Checkout"]


def test_registered_aliases_link_their_entity() -> None:
    q = read_question("Which team owns the money pipeline?")
    links = link_entities(q, [EntityHit("Pipeline_Billing", ("money pipeline",))])
    assert [lk.entity for lk in links] == ["Pipeline_Billing"]


def test_lookup_keys_include_prefixes_for_abbreviated_names() -> None:
    keys = lookup_keys(read_question("the authentication module"))
    assert "auth" in keys and "modul" in keys


@pytest.mark.parametrize(
    ("question", "history", "asks_speaker"),
    [
        ("What was the priority originally?", "first", False),
        ("What was it before it changed to critical?", "previous", False),
        ("Who set the priority?", None, True),
        ("Which agent decided the storage?", None, True),
        ("What plan is the customer who reported it on?", None, False),
    ],
)
def test_question_cues(question: str, history: str | None, asks_speaker: bool) -> None:
    q = read_question(question)
    assert q.history == history
    assert q.asks_speaker == asks_speaker
