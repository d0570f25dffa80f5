"""What the reader promises, on every store: shapes of one to three facts, every answer
form, abstention with the true reason, confidence, readings and their context.

Each test builds a small memory in its own words (no scenario of any suite) and asks
questions whose right answer, or whose only honest answer (``UNKNOWN``), the facts fix.
Where the point is which reading is chosen, the question is asked with
``min_confidence=0`` (:func:`best`): whether to answer at all is the confidence model's
call, tested on its own.
"""

from __future__ import annotations

import math

from ctxneo.answering import DEFAULT_MIN_CONFIDENCE
from ctxneo.answering.entities import cover
from ctxneo.answering.features import kind_of
from ctxneo.answering.forms import KINDS, KindModel
from ctxneo.answering.learned import ReaderModel
from ctxneo.answering.linking import says_a_look_alike
from ctxneo.answering.question import left_from, read_question
from ctxneo.answering.reader import AROUND_UNSURE, Reader, answer_inputs
from ctxneo.answering.readings import said
from ctxneo.memory import Memory
from ctxneo.model import UNKNOWN, Answer, NewFact, render_values
from ctxneo.stores.networkx import NetworkXStore
from ctxneo.tokens import estimate_tokens


def best(memory: Memory, question: str) -> Answer:
    """The best reading of ``question``, whatever its confidence."""
    return memory.ask(question, min_confidence=0.0)


def films(memory: Memory) -> None:
    memory.declare_multi_valued("DIRECTED_BY", "WRITTEN_BY", "STARRED_ACTORS", "HAS_GENRE")
    memory.remember_many(
        [
            ("Night Harbour", "DIRECTED_BY", "Ines Varga"),
            ("Paper Kites", "DIRECTED_BY", "Ines Varga"),
            ("Salt Flats", "DIRECTED_BY", "Ines Varga"),
            ("Night Harbour", "WRITTEN_BY", "Tomas Reyes"),
            ("Paper Kites", "WRITTEN_BY", "Aiko Mori"),
            ("Salt Flats", "WRITTEN_BY", "Aiko Mori"),
            ("Night Harbour", "STARRED_ACTORS", "Lena Dahl"),
            ("Paper Kites", "STARRED_ACTORS", "Lena Dahl"),
            ("Paper Kites", "STARRED_ACTORS", "Omar Said"),
            ("Night Harbour", "HAS_GENRE", "Thriller"),
            ("Paper Kites", "HAS_GENRE", "Drama"),
            ("Salt Flats", "HAS_GENRE", "Western"),
            ("Quiet Lake", "HAS_GENRE", "Drama"),
        ]
    )


def test_one_and_two_hops_and_siblings(memory: Memory) -> None:
    films(memory)
    assert best(memory, "Who directed Paper Kites?").values == ("Ines Varga",)
    written = best(memory, "Who wrote the films directed by Ines Varga?")
    assert set(written.values) == {"Tomas Reyes", "Aiko Mori"}
    assert written.reading == "two-hop"
    # Siblings are two hops out and back through the same relation.
    same = best(memory, "Which films have the same director as Night Harbour?")
    assert set(same.values) == {"Paper Kites", "Salt Flats"}


def test_three_facts_chained(memory: Memory) -> None:
    memory.remember_many(
        [
            ("Batch_55", "RUNS_ON", "Press_7"),
            ("Press_7", "SERVICED_BY", "Crew_Delta"),
            ("Crew_Delta", "LED_BY", "Ruth Okafor"),
            ("Press_9", "SERVICED_BY", "Crew_Echo"),
            ("Crew_Echo", "LED_BY", "Sam Byrne"),
        ]
    )
    answer = best(memory, "who leads the crew that services the press batch 55 is running on?")
    assert answer.values == ("Ruth Okafor",)
    assert answer.reading == "three-hop"
    assert len(answer.evidence) == 3


def test_a_chain_read_from_the_entity_named_through_another_named_one(memory: Memory) -> None:
    # "the part for the fault on MV Orla": the fault is named too ("fault"), and the
    # chain from the vessel through it is a reading whose evidence holds the fact that
    # ties them, not only the fault's own two facts.
    memory.remember_many(
        [
            ("Fault F-31", "ON_VESSEL", "MV Orla"),
            ("Fault F-31", "REPORTED_ON", "2026-04-02"),
            ("Fault F-31", "NEEDS_PART", "Valve kit VK-2"),
            ("Valve kit VK-2", "ETA", "2026-05-03"),
            ("Fault F-38", "ON_VESSEL", "MV Brena"),
            ("Fault F-38", "NEEDS_PART", "Seal kit SK-9"),
            ("Seal kit SK-9", "ETA", "2026-06-11"),
        ]
    )
    question = "the fault on MV Orla - when is the part it needs due?"
    tie = ("Fault F-31", "ON_VESSEL", "MV Orla")
    chains = [
        r
        for r in memory.trace(question, k=50).readings
        if r.values == ("2026-05-03",)
        and tie in {(f.subject, f.predicate, f.object) for f in r.evidence}
    ]
    assert chains and len(chains[0].evidence) == 3
    assert best(memory, question).values == ("2026-05-03",)


def test_an_earlier_value_across_a_join_shows_the_join(memory: Memory) -> None:
    # Where the parcel was before the hub: its courier's earlier place, with the fact
    # that the courier carries it among the evidence (else an LLM reading the evidence
    # sees a courier's move and nothing tying it to the parcel).
    memory.declare_multi_valued("CARRIES")
    memory.remember("Courier_Ana", "CARRIES", "Parcel_5120")
    memory.remember("Courier_Ana", "LOCATED_AT", "Hull depot")
    memory.remember("Courier_Ana", "LOCATED_AT", "York hub")
    memory.remember("Courier_Bo", "LOCATED_AT", "Leeds depot")
    answer = best(memory, "where was parcel 5120 before York hub?")
    assert answer.values == ("Hull depot",) and answer.form == "earlier"
    held = {(f.subject, f.predicate, f.object) for f in answer.evidence}
    assert ("Courier_Ana", "CARRIES", "Parcel_5120") in held
    assert ("Courier_Ana", "LOCATED_AT", "Hull depot") in held


def test_a_relation_reached_through_whoever_holds_it(memory: Memory) -> None:
    # "Where is the parcel?" when a courier carries it and the courier's place is known.
    memory.declare_multi_valued("CARRIES")
    memory.remember_many(
        [
            ("Courier_Jo", "CARRIES", "Parcel_1188"),
            ("Courier_Jo", "LOCATED_AT", "Leeds depot"),
            ("Courier_Max", "LOCATED_AT", "York hub"),
        ]
    )
    answer = best(memory, "where is parcel 1188 right now?")
    assert answer.values == ("Leeds depot",)


def test_multi_valued_answers_list_every_value_unambiguously(memory: Memory) -> None:
    memory.declare_multi_valued("REPORTS_FROM")
    memory.remember("Desk_Politics", "REPORTS_FROM", "Gates, Bill")
    memory.remember("Desk_Politics", "REPORTS_FROM", "Ada; Lovelace")
    answer = best(memory, "Where does the politics desk report from?")
    assert answer.values == ("Gates, Bill", "Ada; Lovelace")
    assert answer.answer == 'Gates, Bill; "Ada; Lovelace"'
    assert answer.form == "list"
    assert render_values(("one",)) == "one"


def test_counts_and_none_once_every_value_is_retracted(memory: Memory) -> None:
    memory.declare_multi_valued("HOLDING")
    memory.remember_many([("Omar", "HOLDING", "torch"), ("Omar", "HOLDING", "radio")])
    count = best(memory, "how many things is Omar holding?")
    assert count.answer.startswith("2 (") and count.form == "count"
    assert set(best(memory, "what is Omar holding?").values) == {"torch", "radio"}
    memory.retract("Omar", "HOLDING", "torch")
    memory.retract("Omar", "HOLDING", "radio")
    none = best(memory, "what is Omar holding?")
    assert none.answer == "none"


def test_a_stale_confirmation_is_answered_no_with_the_value_now(memory: Memory) -> None:
    memory.remember("Audit_Q3", "ASSIGNED_TO", "Piotr Kowalski", turn_id=4)
    memory.remember("Audit_Q3", "ASSIGNED_TO", "Lena Haas", turn_id=19)
    stale = best(memory, "is the Q3 audit still with Kowalski?")
    assert stale.answer.startswith("no: Lena Haas since turn 19")
    assert "Piotr Kowalski until turn 19" in stale.answer
    assert stale.form == "yes/no"
    now = best(memory, "the Q3 audit is with Lena Haas now, right?")
    assert now.answer == "yes" and now.form == "yes/no"


def test_a_stated_value_no_entity_names_is_confirmed_or_corrected(memory: Memory) -> None:
    # "$400" and "the 2nd" name no entity: the verdict compares what the question states
    # with what holds now.
    memory.remember("Booking_7", "HAS_DEPOSIT", "$400", turn_id=2)
    memory.remember("Booking_7", "HAS_DEPOSIT", "$450", turn_id=9)
    memory.remember("Release_2_4", "SHIPS_ON", "2025-05-06", turn_id=5)
    stale = best(memory, "the deposit on booking 7 is still 380 dollars, right?")
    assert stale.answer.startswith("no: $450 since turn 9") and stale.form == "yes/no"
    assert best(memory, "is the deposit on booking 7 $450 now?").answer == "yes"
    moved = best(memory, "is release 2.4 still shipping on the 2nd?")
    assert moved.answer.startswith("no: 2025-05-06")


def test_a_value_is_said_only_when_every_word_of_it_is() -> None:
    stems = frozenset(t.stem for t in read_question("is it $1,812 now or 1,786?").words)
    assert said("$1,812", stems) and said("1,786", stems)
    assert not said("$1,800", stems) and not said("the", stems)


def test_history_answers_from_the_slot_it_names(memory: Memory) -> None:
    memory.remember("Ticket_9", "HAS_PRIORITY", "low")
    memory.remember("Ticket_9", "HAS_PRIORITY", "high")
    memory.remember("Ticket_9", "HAS_PRIORITY", "urgent")
    # A superseded value answers only a history question.
    assert best(memory, "What is the priority of ticket 9?").values == ("urgent",)
    assert best(memory, "What was the priority of ticket 9 originally?").values == ("low",)
    before = best(memory, "what priority did ticket 9 have before it went urgent?")
    assert before.values == ("high",) and before.form == "earlier"


def test_an_earlier_value_asked_in_words_the_corpus_rarely_uses(memory: Memory) -> None:
    # The form model learned the history words its corpus used ("before", "originally");
    # a synonym the rules know ("previously", "formerly", "initially") or a cue of two
    # words ("used to") must not read as a question about the value now.
    memory.remember("Skiff_4", "HAULS", "kelp")
    memory.remember("Skiff_4", "HAULS", "mussels")
    for question in (
        "what did skiff 4 haul previously?",
        "what did skiff 4 formerly haul?",
        "what did skiff 4 initially haul?",
        "skiff 4 used to haul what?",
        "what did skiff 4 use to haul?",
    ):
        answer = best(memory, question)
        assert answer.values == ("kelp",) and answer.form == "earlier", question
    assert best(memory, "what does skiff 4 haul?").values == ("mussels",)
    # "use to" with its own object asks what was used ("did she use to open it"), and
    # "used to" after a form of be is a purpose: neither is a history cue.
    assert read_question("what did Ana use to open the crate?").history is None
    assert read_question("which key is used to open the gate?").history is None
    assert read_question("who used to run the gate?").history == "previous"


def test_a_question_whether_a_value_has_ended_gets_no_yes_or_no_the_wrong_way_round(
    memory: Memory,
) -> None:
    # A verdict says whether a value holds; "done loading", "no longer in repair" ask
    # whether it has ended, and the same verdict would answer them the wrong way round.
    memory.remember("Cart_3", "STATUS", "charging")
    memory.remember("Cart_3", "STATUS", "on the green")
    memory.remember("Cart_13", "STATUS", "in the shop")
    memory.remember("Mower_2", "STATUS", "out of action")
    for question in (
        "is cart 3 done charging?",
        "has cart 3 finished charging?",
        "is cart 13 no longer in the shop?",
        "is cart 13 out of the shop?",
    ):
        answer = memory.ask(question)
        assert answer.answer == UNKNOWN and "has ended" in answer.reason, question
        assert "now Cart_" in answer.reason  # what holds, for whoever reads the reason
    # The words of a value are the value's, not an ending ("out of action"); "done" of a
    # whole thing asks for its state.
    assert memory.ask("is mower 2 still out of action?").answer == "yes"
    assert memory.ask("is cart 3 still charging?").answer.startswith("no: on the green")


def test_a_name_the_question_sets_aside_is_neither_its_subject_nor_its_answer(
    memory: Memory,
) -> None:
    memory.declare_multi_valued("NEEDS_PROP")
    memory.remember("Act_2", "NEEDS_PROP", "Ladder_5")
    memory.remember("Act_2", "NEEDS_PROP", "Fog_Unit")
    memory.remember("Act_4", "NEEDS_PROP", "Ladder_5")
    # Never Act_2, nor what Act_2 needs: the rest of the list, or UNKNOWN saying why.
    for question in (
        "other than act 2, what needs ladder 5?",
        "apart from act 2, which acts need ladder 5?",
        "which act needs ladder 5 besides act 2?",
    ):
        answer = memory.ask(question)
        assert answer.values == ("Act_4",) or (
            answer.answer == UNKNOWN and "sets Act_2 aside" in answer.reason
        ), question
    assert memory.ask("apart from act 2, which acts need ladder 5?").values == ("Act_4",)
    assert set(memory.ask("which acts need ladder 5?").values) == {"Act_2", "Act_4"}
    # A question about the name set aside itself has nothing else to give.
    memory.remember("Act_2", "STAGED_BY", "Noor")
    assert memory.ask("besides act 2, who stages the acts?").answer == UNKNOWN


def test_a_count_of_events_is_not_answered_with_a_count_of_values(memory: Memory) -> None:
    memory.declare_multi_valued("LOADED_WITH")
    for bay in ("Bay_1", "Bay_4", "Bay_6"):
        memory.remember("Barrow_8", "PARKED_IN", bay)
    memory.remember("Barrow_8", "LOADED_WITH", "turf")
    memory.remember("Barrow_8", "LOADED_WITH", "gravel")
    answer = memory.ask("how many times has barrow 8 moved?")
    assert answer.answer == UNKNOWN and "counts events" in answer.reason
    assert memory.ask("how many things is barrow 8 loaded with?").answer.startswith("2")


def test_what_was_said_of_a_thing_is_not_read_as_its_earlier_value(memory: Memory) -> None:
    # "what did you say X was": the past tense is the saying's; what was said last is
    # the value now. A history cue still asks for the past.
    memory.remember("Kayak_3", "RENTED_BY", "Ilse")
    memory.remember("Kayak_3", "RENTED_BY", "Bram")
    said = memory.ask("who did you say kayak 3 was rented by?")
    assert said.values == ("Bram",) or (said.answer == UNKNOWN and "was said" in said.reason)
    assert memory.ask("who did you say rented kayak 3 first?").values == ("Ilse",)


def test_a_question_of_two_things_the_second_of_the_first_gets_both(memory: Memory) -> None:
    # "which X ..., and who ... it?": the join's middle entity is the first answer.
    memory.remember("Sweeper_4", "CLEARS", "Lot C")
    memory.remember("Sweeper_4", "OPERATED_BY", "Wen Li")
    memory.remember("Sweeper_9", "CLEARS", "Lot D")
    memory.remember("Sweeper_9", "OPERATED_BY", "Rui Costa")
    both = memory.ask("which sweeper clears lot c, and who operates it?")
    assert both.values == ("Sweeper_4", "Wen Li")
    # One thing asked, one thing answered.
    assert memory.ask("who operates the sweeper that clears lot c?").values == ("Wen Li",)
    assert memory.ask("which sweeper clears lot d?").values == ("Sweeper_9",)


def test_an_unsure_answer_s_reason_shows_how_far_below_the_threshold_it_is(
    memory: Memory,
) -> None:
    memory.remember("Kiln_4", "FIRED_BY", "Oda")
    sure = best(memory, "who fires kiln 4?").confidence
    answer = memory.ask("who fires kiln 4?", min_confidence=min(1.0, sure + 0.0004))
    assert answer.answer == UNKNOWN
    shown = answer.reason.split("(confidence ")[1].split(")")[0]
    low, high = (float(x) for x in shown.split(" < "))
    assert low < high


def test_who_said_it_versus_a_relation_named_by_its_verb(memory: Memory) -> None:
    memory.remember("OPS-88", "OPENED_BY", "Priya Nair", speaker="Agent_Triage", turn_id=3)
    memory.remember("OPS-88", "HAS_STATUS", "blocked", speaker="Agent_Watch", turn_id=7)
    assert best(memory, "who opened ticket 88?").values == ("Priya Nair",)
    said = best(memory, "who reported that OPS-88 is blocked?")
    assert said.values == ("Agent_Watch",) and said.form == "speaker"


def test_partial_ids_and_look_alikes_never_cross(memory: Memory) -> None:
    memory.remember_many(
        [
            ("OPS-7730", "ASSIGNED_TO", "Dana Cho"),
            ("CX_318", "HOSTED_ON", "rack 12"),
            ("CX_31", "HOSTED_ON", "rack 4"),
            ("Pump_09", "HAS_STATUS", "running"),
            ("Pump_19", "HAS_STATUS", "stopped"),
        ]
    )
    assert best(memory, "who's got 7730?").values == ("Dana Cho",)
    assert best(memory, "where is CX_31 hosted?").values == ("rack 4",)
    assert best(memory, "where's cx 318 hosted").values == ("rack 12",)
    assert best(memory, "status of pump 9?").values == ("running",)
    assert best(memory, "is pump nineteen running?").answer.startswith("no: stopped")


def test_whether_a_value_ever_held_is_answered_from_its_history(memory: Memory) -> None:
    # "ever", "at some point": whether it held at any time, not whether it holds now.
    for turn, value in ((3, "Oracle"), (8, "PostgreSQL"), (11, "CockroachDB")):
        memory.remember("Project_Vela", "USES_DATABASE", value, speaker="a", turn_id=turn)
    once = best(memory, "has project vela used PostgreSQL at some point?")
    assert once.answer == "yes: PostgreSQL until turn 11; now CockroachDB"
    assert once.values == ("PostgreSQL",) and once.form == "yes/no"
    assert any(f.object == "PostgreSQL" for f in once.evidence)
    assert best(memory, "did project vela ever use Oracle?").answer.startswith("yes: Oracle")
    # Holding now is a plain yes; asked of now, a value it held once is still a no.
    assert best(memory, "has project vela ever used CockroachDB?").answer == "yes"
    assert best(memory, "does project vela use PostgreSQL?").answer.startswith("no: CockroachDB")


def test_a_value_asked_of_the_agent_who_stated_it_is_that_agents(memory: Memory) -> None:
    # "what did the planner pick?": the value the planner stated, though the builder's
    # replaced it since; the answer says both. Without the speaker's word: the value now.
    memory.remember(
        "Project_Vela", "USES_DATABASE", "PostgreSQL", speaker="Agent_Planner", turn_id=4
    )
    memory.remember(
        "Project_Vela", "USES_DATABASE", "CockroachDB", speaker="Agent_Builder", turn_id=9
    )
    picked = best(memory, "what database did the planner pick for project vela?")
    assert picked.values == ("PostgreSQL",)
    assert picked.answer == "PostgreSQL (said by Agent_Planner at turn 4; now CockroachDB)"
    assert {f.object for f in picked.evidence} == {"PostgreSQL", "CockroachDB"}
    assert best(memory, "what database did the builder pick for project vela?").values == (
        "CockroachDB",
    )
    assert best(memory, "what database does project vela use?").values == ("CockroachDB",)
    # A speaker's word with no verb of choosing or saying is no question of what it said.
    assert best(memory, "planner here: what database does project vela use?").values == (
        "CockroachDB",
    )
    # "I" is the asker: its own value, when the asker is said.
    mine = memory.ask("which database did I pick for project vela?", speaker="Agent_Planner")
    assert mine.values == ("PostgreSQL",) and "said by Agent_Planner" in mine.answer
    theirs = memory.ask("which database did I pick for project vela?", speaker="Agent_Builder")
    assert theirs.values == ("CockroachDB",)


def test_a_value_replaced_is_never_said_withdrawn(memory: Memory) -> None:
    # The reason of an UNKNOWN says the value was replaced, and by what: "retracted,
    # nothing holds now" would tell an agent the project has no database at all.
    memory.remember("Project_Vela", "USES_DATABASE", "PostgreSQL", speaker="a", turn_id=1)
    memory.remember("Project_Vela", "USES_DATABASE", "MySQL", speaker="b", turn_id=2)
    reason = memory.ask("who settled on PostgreSQL?").reason
    assert "replaced by MySQL" in reason and "retracted" not in reason, reason


def test_a_turn_named_in_words_is_not_answered_with_now(memory: Memory) -> None:
    # "at turn 1" asks about the past, which the reader does not read from words: the
    # value now is no answer to it (``as_of`` is).
    memory.remember("Project_Vela", "USES_DATABASE", "PostgreSQL", speaker="a", turn_id=1)
    memory.remember("Project_Vela", "USES_DATABASE", "MySQL", speaker="b", turn_id=2)
    pinned = memory.ask("what database did project vela use at turn 1?")
    assert pinned.answer == UNKNOWN
    assert 'past turn ("at turn 1")' in pinned.reason and "MySQL" in pinned.reason
    assert memory.ask("what database did project vela use?", as_of=1).values == ("PostgreSQL",)
    assert memory.ask("what database does project vela use?").values == ("MySQL",)


def test_two_entities_of_the_same_words_are_never_told_apart_by_a_guess(memory: Memory) -> None:
    # Two agents spelt one dock two ways, and said two managers: the question's words fit
    # both names exactly, so no answer is the answer, and the reason names both.
    memory.remember_many(
        [
            ("North Dock", "MANAGED_BY", "Alice Fenn"),
            ("north_dock", "MANAGED_BY", "Bob Marsh"),
            ("Pier 4", "MANAGED_BY", "Dan Okoro"),
            ("pier_4", "MANAGED_BY", "Dan Okoro"),
            ("South Dock", "MANAGED_BY", "Carol Hart"),
        ]
    )
    split = memory.ask("who manages the north dock?")
    assert not split.known
    assert "North Dock" in split.reason and "north_dock" in split.reason
    assert "Alice Fenn" in split.reason and "Bob Marsh" in split.reason
    assert memory.ask("who manages the north dock?", min_confidence=0.0).confidence < 2 / 3
    # Both spellings saying the same value: that value is the answer.
    assert memory.ask("who manages pier 4?").values == ("Dan Okoro",)
    assert memory.ask("who manages the south dock?").values == ("Carol Hart",)


def test_the_one_number_of_an_identifier_names_it_however_short(memory: Memory) -> None:
    # "is 3 running?" names Press_3 as "15" names RC-15: a short number is an
    # identifier's mark, not a weak part; of two numbers (Release_4_2) neither alone is.
    assert cover(read_question("is press 3 running?"), "PP-3").coverage > 0
    assert cover(read_question("is press 3 running?"), "PP-13").coverage == 0
    assert cover(read_question("what's wrong with 08?"), "K-8").coverage > 0
    assert cover(read_question("anything new on 2?"), "Release_4_2").coverage == 0
    memory.remember_many(
        [("Kiln_4", "FIRING_TEMP", "1250 C"), ("Kiln_14", "FIRING_TEMP", "1180 C")]
    )
    assert memory.trace("firing temp on the 4?").anchors[0] == "Kiln_4"
    assert best(memory, "firing temp on the 4?").values == ("1250 C",)


def test_a_look_alike_of_the_name_asked_about_is_never_read_as_it(memory: Memory) -> None:
    # The question names a mark (a number, a letter alone) beside a name's other words
    # that is not the name's own: it asks about another entity, maybe one not in memory.
    memory.remember_many(
        [
            ("Box_44", "LOCATED_IN", "Stack_Room_B"),
            ("Crew_120", "WORKS_ON", "DIG-19"),
            ("Crew 12", "WORKS_ON", "DIG-09"),
        ]
    )
    room = best(memory, "Would I find box 44 in stack room A?")
    assert room.answer.startswith("no: Stack_Room_B"), room.answer
    assert best(memory, "which dig is the 12 crew on?").values == ("DIG-09",)
    assert best(memory, "crew 120 - which dig?").values == ("DIG-19",)
    assert best(memory, "where's the box 44 kept").values == ("Stack_Room_B",)
    memory.remember("Dryer_B", "DRYER_LOAD", "LOT-31")
    assert memory.ask("dryer A load?").answer == UNKNOWN  # (not the article: a mark)
    assert best(memory, "dryer B load?").values == ("LOT-31",)


def test_a_word_or_identifier_written_whole_lends_no_part_to_another_name(
    memory: Memory,
) -> None:
    # "MongoDB" written whole names MongoDB, not MariaDB through their shared "DB";
    # "Audit_Team" lends no "team" to Finance_Team.
    memory.remember("Orion", "USES_DATABASE", "MariaDB", turn_id=1)
    memory.remember("Orion", "USES_DATABASE", "MongoDB", turn_id=9)
    now = memory.ask("Does Orion use MongoDB?")
    assert now.answer == "yes", now.answer
    assert best(memory, "Does Orion use MariaDB?").answer.startswith("no: MongoDB")
    memory.remember("Vega", "USES_DATABASE", "MongoDB")
    assert memory.ask("Does Vega use CouchDB?").answer != "yes"  # a name not in memory
    memory.remember("Ledger_Svc", "OWNED_BY", "Finance_Team")
    memory.remember("Ledger_Svc", "OWNED_BY", "Audit_Team")
    assert memory.ask("Is the ledger service owned by Audit_Team?").answer == "yes"


def test_a_yes_or_no_judges_a_value_the_question_names_not_one_said_alike(
    memory: Memory,
) -> None:
    # Kafka is found by the words it was stated in ("Orion will use Kafka"), not by its
    # name: it is not the value "does Orion use Pulsar?" claims (that was "no: Pulsar
    # since turn 40; Kafka until turn 40" at 0.75, with Pulsar the value now).
    memory.remember("Project_Orion", "USES_QUEUE", "Kafka", turn_id=1, text="Orion will use Kafka")
    memory.remember("Project_Orion", "USES_QUEUE", "Pulsar", turn_id=40)
    assert memory.ask("Does Orion use Pulsar?").answer == "yes"
    assert best(memory, "Does Orion use Kafka?").answer.startswith("no: Pulsar")


def test_a_value_said_with_another_mark_is_a_look_alike_of_it() -> None:
    # What keeps a yes/no question from hearing the current value in other words when it
    # states the value's own words with another mark: a look-alike, so the verdict is no.
    words = read_question("Would I find box 44 in stack room A?").words
    assert says_a_look_alike(words, "Stack_Room_B")
    assert not says_a_look_alike(words, "Stack_Room_A")
    assert not says_a_look_alike(words, "Shelf 9") and not says_a_look_alike(words, "basement")
    assert says_a_look_alike(read_question("is it with crew 12?").words, "Crew_120")
    assert not says_a_look_alike(read_question("is it with crew 012?").words, "Crew_12")


def test_a_numbers_sign_is_part_of_it(memory: Memory) -> None:
    """-250 is not 250: a question that says a number without the sign a value has (or
    with one it lacks) says a look-alike of it, neither links to it nor confirms it. A
    number joined to a word ("replica-2") has no sign of its own."""
    memory.remember_many(
        [
            ("Acct_77", "HAS_BALANCE", "-250"),
            ("Acct_78", "HAS_BALANCE", "250"),
            ("Cooler_3", "SET_TO", "-18 C"),
        ]
    )
    assert best(memory, "Which account has a balance of 250?").answer == "Acct_78"
    assert best(memory, "Which account has a balance of -250?").answer == "Acct_77"
    assert best(memory, "Is the balance of Acct_77 250?").answer.startswith("no")
    assert best(memory, "Is the balance of Acct_78 -250?").answer.startswith("no")
    assert not best(memory, "Is cooler 3 set to 18 C?").answer.startswith("yes")
    words = read_question("is it at 18 C now?").words
    assert says_a_look_alike(words, "-18 C") and not says_a_look_alike(words, "18 C")
    minus = read_question("is it at minus 18 C now?").words  # (the sign said in a word)
    assert not says_a_look_alike(minus, "-18 C") and says_a_look_alike(minus, "18 C")
    assert not says_a_look_alike(read_question("the -2 replica?").words, "db-replica-2")
    assert not said("-18 C", frozenset({"18", "c"})) and said("-18 C", frozenset({"-18", "c"}))


def test_a_value_stored_as_the_word_unknown_is_an_answer(memory: Memory) -> None:
    memory.remember("Assay_12", "HAS_RESULT", "UNKNOWN")
    a = memory.ask("What is the result of assay 12?")
    assert a.answer == UNKNOWN and a.values == (UNKNOWN,) and a.known
    assert a.to_dict()["known"] is True
    none = memory.ask("What is the colour of assay 12?")
    assert not none.known and none.to_dict()["known"] is False


def test_no_reading_passes_through_a_look_alike_of_a_name_the_question_says(
    memory: Memory,
) -> None:
    # Linking never reads "line 12" as Line 2; nor may a reading that reaches Line 2 from
    # another anchor (Priya, who led it) answer a question about line 12.
    memory.remember("Line 2", "SHIFT_LEAD", "Priya Nair")
    memory.remember("Line 2", "SHIFT_LEAD", "Tom Reilly")
    asked = memory.ask("is priya on line 12 now?", min_confidence=0.0)
    assert asked.answer == UNKNOWN, asked.answer
    assert all("Line 2" not in r.answer for r in asked.readings)
    assert all("Line 2" not in (f.subject, f.object) for r in asked.readings for f in r.evidence)
    assert best(memory, "is priya on line 2 now?").answer.startswith("no: Tom Reilly")
    # With line 12 in memory, the question is about it.
    memory.remember("Line 12", "SHIFT_LEAD", "Ana Costa")
    assert best(memory, "is priya on line 12 now?").answer.startswith("no: Ana Costa")


def test_a_look_alike_is_a_neighbour_only_of_a_reading_through_the_name_said(
    memory: Memory,
) -> None:
    # Pallet 205 is in memory and stands on the words "pallet 205", but has no picker: a
    # reading walked from the cold room through Pallet 25 to its picker's lead is about
    # pallet 25, not the pallet asked about, however well its relations are named.
    memory.remember_many(
        [
            ("Pallet_25", "STORED_IN", "Cold Room"),
            ("Pallet_205", "STORED_IN", "Cold Room"),
            ("Pallet_25", "PICKED_BY", "Crew_B"),
            ("Crew_B", "LEAD", "Nadia Fenwick"),
        ]
    )
    question = "who leads the crew picking pallet 205 in the cold room?"
    asked = memory.ask(question, min_confidence=0.0, k=10)
    for r in asked.readings:
        met = {n for f in r.evidence for n in (f.subject, f.object)}
        assert "Pallet_25" not in met - set(r.values) or "Pallet_205" in met, r
    assert memory.ask(question).answer == UNKNOWN
    # Once pallet 205 has a picker of its own, that is the answer.
    memory.remember_many([("Pallet_205", "PICKED_BY", "Crew_A"), ("Crew_A", "LEAD", "Omar Haddad")])
    assert best(memory, question).values == ("Omar Haddad",)


def test_a_name_with_a_digit_int_cannot_read_is_answered(memory: Memory) -> None:
    # "²" is a digit to str.isdigit but not a number to int(): comparing marks read it as
    # one and raised (found by the export round trip's generated names).
    memory.remember("0²", "OWNED_BY", "O'Brien")
    assert best(memory, "What is the owned by of 0²?").values == ("O'Brien",)


def test_an_identifier_written_whole_names_no_look_alike_that_shares_its_prefix(
    memory: Memory,
) -> None:
    # "Rack_East" written out is one name: Rack_7 shares its first word only and has a
    # number of its own, so it is a look-alike, not a partial reference.
    memory.remember_many([(f"Rack_{i}", "HOLDS", f"Blade-{i}") for i in range(1, 9)])
    for question in ("what does Rack_East hold?", "anything in rack-east?"):
        trace = memory.trace(question)
        assert not trace.anchors, (question, trace.anchors)
        assert memory.ask(question).answer == UNKNOWN
    # Written apart, or with its own number, the words still find a rack.
    assert best(memory, "what does rack 7 hold?").values == ("Blade-7",)
    assert best(memory, "what does Rack_7 hold?").values == ("Blade-7",)


def test_what_an_earlier_value_holds_now_is_read_on_from_it(memory: Memory) -> None:
    # The crate moved from one shed to another: "the shed it was first in" is an earlier
    # value, and who has that shed's keys is read on from it, not from where it is now.
    memory.remember_many(
        [
            ("Crate 7", "LOCATED_IN", "Shed A"),
            ("Shed A", "KEYHOLDER", "Ines Roy"),
            ("Shed B", "KEYHOLDER", "Tom Hale"),
        ]
    )
    memory.remember("Crate 7", "LOCATED_IN", "Shed B")
    first = best(memory, "who has the keys to the shed crate 7 was first in?")
    assert first.values == ("Ines Roy",), first
    assert ("Crate 7", "LOCATED_IN", "Shed A") in {
        (f.subject, f.predicate, f.object) for f in first.evidence
    }
    now = memory.ask("who has the keys to the shed crate 7 is in now?")
    assert now.values == ("Tom Hale",), now


def test_a_state_said_in_other_words_is_judged_both_ways(memory: Memory) -> None:
    # A yes/no question rarely says a status in the stored words: "finished" of a job whose
    # status is "completed" is a yes, "open" of one whose status is "closed" a no. Both
    # verdicts are read and ranked; the reader may not be sure of a pair of words, but
    # never answers "no" to a state said in other words.
    memory.remember_many(
        [
            ("Job 12", "status", "in progress"),
            ("Job 12", "status", "completed"),
            ("Job 14", "status", "open"),
            ("Job 14", "status", "closed"),
        ]
    )
    finished = memory.ask("is job 12 finished?", k=3)
    assert finished.answer in ("yes", UNKNOWN), finished
    assert "yes" in {r.answer for r in finished.readings}
    assert memory.ask("has job 12 been completed?").answer == "yes"
    assert memory.ask("is job 14 still open?").answer.startswith("no: closed")


def test_a_state_another_subject_holds_is_answered_no_with_the_current_one(
    memory: Memory,
) -> None:
    # "approved" is a value the relation takes (another request's): asked of a request
    # whose approval is something else, the answer is no, and what holds instead.
    memory.remember_many(
        [
            ("REQ-311", "approval", "pending"),
            ("REQ-311", "approval", "rejected"),
            ("REQ-312", "approval", "approved"),
            ("REQ-313", "approval", "pending"),
        ]
    )
    # (at the default threshold: the verdict is given, not only ranked first)
    assert memory.ask("is 311 approved yet?").answer.startswith("no: rejected")
    assert memory.ask("has REQ-313 been approved?").answer.startswith("no: pending")
    assert memory.ask("is 312 approved?").answer == "yes"


def test_a_verdict_is_on_the_slot_of_the_subject_the_question_names(memory: Memory) -> None:
    # "Is V the P of X?" is judged on X's own P: another subject whose P is V (one the
    # words only describe, a look-alike, a sibling) does not make it yes.
    memory.remember_many(
        [
            ("Forklift F-21", "OPERATED_BY", "Tomasz Wren"),
            ("Forklift F-12", "OPERATED_BY", "Lena Ortiz"),
            ("Forklift F-12", "PARKED_AT", "Bay 3"),
        ]
    )
    for question in ("is Tomasz Wren operating forklift F-12?", "Is Lena Ortiz operating F-21?"):
        readings = memory.trace(question, k=10).readings
        assert not any(r.answer == "yes" for r in readings), question
    assert best(memory, "is Tomasz Wren operating forklift F-12?").answer.startswith(
        "no: Lena Ortiz"
    )
    # With no subject of the relation named, the subjects of the value are what it asks.
    assert best(memory, "is Tomasz Wren operating a forklift?").answer == "yes"


def test_a_value_withdrawn_is_no_not_unknown(memory: Memory) -> None:
    # Asked to confirm a value whose fact was retracted (nothing replaced it), memory
    # knows the answer: it no longer holds.
    memory.remember("Sam Reid", "HOLDING", "WILL-D-01")
    memory.remember("Sam Reid", "WORKS_AT", "Harlow Office")
    memory.retract("Sam Reid", "HOLDING")
    verdict = best(memory, "is Sam Reid still holding WILL-D-01?")
    assert verdict.answer.startswith("no: nothing holds now")
    assert [(f.predicate, f.object, f.valid_to is not None) for f in verdict.evidence] == [
        ("HOLDING", "WILL-D-01", True)
    ]
    # Asked of the relation alone, the verdict is among the readings.
    readings = memory.trace("is Sam Reid still holding anything?", k=10).readings
    assert any(r.answer.startswith("no: nothing holds now") for r in readings)
    # Asked what holds, it still does not know (a withdrawal is not a new value).
    assert memory.ask("What is Sam Reid holding?").answer == UNKNOWN


def test_a_withdrawn_value_answers_what_it_was(memory: Memory) -> None:
    # Retracted values answer history questions: "what was it at first?" of a slot whose
    # every value was withdrawn is its first value (it was UNKNOWN, with no reading).
    memory.remember("Ticket_4471", "HAS_PRIORITY", "high")
    memory.remember("Ticket_4471", "ASSIGNED_TO", "Ines")
    memory.retract("Ticket_4471", "HAS_PRIORITY")
    first = best(memory, "What was the priority of ticket 4471 originally?")
    assert first.answer == "high" and first.reading.startswith("history")
    assert first.evidence[0].valid_to is not None
    now = memory.ask("What is the priority of ticket 4471?")
    assert not now.known and "retracted" in now.reason


def test_a_number_and_a_letter_written_together_are_one_mark(memory: Memory) -> None:
    # "cart 3c" names a cart 3C, not Cart_3: with none stored, the memory does not know
    # (it answered Cart_3's driver at 0.98); an ordinal's or a time's ending is no mark.
    memory.remember("Cart_3", "DRIVEN_BY", "Ilse Varga")
    memory.remember("Cart_13", "DRIVEN_BY", "Ravi Olsen")
    memory.remember("Kiln_D", "FIRED_BY", "Noor Saleh")
    memory.remember("Round_6", "LED_BY", "Ada Pike")
    assert memory.ask("who drives cart 3c").answer == UNKNOWN
    assert memory.ask("who drives cart 13c?").answer == UNKNOWN
    assert memory.ask("who fired kiln D4?").answer == UNKNOWN
    assert memory.ask("who drives cart 3").values == ("Ilse Varga",)
    assert memory.ask("who leads the 6am round?", min_confidence=0).values == ("Ada Pike",)
    memory.remember("Cart_3C", "DRIVEN_BY", "Tove Lind")
    assert memory.ask("who drives cart 3c").values == ("Tove Lind",)
    # a number's sign before it, or a unit's ending after it, is no mark
    memory.remember("Gateway_2", "OWNED_BY", "Team_Edge")
    assert memory.trace("who owns gateway v2?").anchors[0] == "Gateway_2"
    assert memory.trace("who owns gateway No2?").anchors[0] == "Gateway_2"


def test_what_a_multi_valued_slot_held_before_is_what_came_off(memory: Memory) -> None:
    # A value held still is not what the slot held "before": what came off is (the first
    # value, still on, answered "before" at 0.97).
    memory.remember("Trolley_5", "HOLDS", "Tray_Alpha", multi=True)
    memory.remember("Trolley_5", "HOLDS", "Tray_Beta", multi=True)
    memory.retract("Trolley_5", "HOLDS", "Tray_Beta")
    before = memory.ask("what did trolley 5 hold before?", min_confidence=0)
    assert before.values == ("Tray_Beta",)
    first = memory.ask("what did trolley 5 hold first?", min_confidence=0)
    assert first.values == ("Tray_Alpha",)
    assert memory.ask("what is trolley 5 holding?").values == ("Tray_Alpha",)
    # put back on, it is held again: not what the trolley held before
    memory.remember("Trolley_5", "HOLDS", "Tray_Beta", multi=True)
    assert memory.ask("what did trolley 5 hold before?").answer == UNKNOWN


def test_what_left_a_thing_is_what_ended_not_what_it_holds(memory: Memory) -> None:
    # "who left team heron?" asks for the member who went, which the members now answer
    # the wrong way round (it answered them at 0.93): the values that ended, with when.
    memory.declare_multi_valued("HAS_MEMBER", "HAS_TASK")
    for who in ("Ilse Varga", "Ravi Olsen", "Noor Saleh"):
        memory.remember("Team_Heron", "HAS_MEMBER", who)
    memory.retract("Team_Heron", "HAS_MEMBER", "Ravi Olsen")
    for q in ("who left team heron?", "who is no longer in team heron?"):
        gone = best(memory, q)
        assert gone.values == ("Ravi Olsen",), q
        assert "now Ilse Varga; Noor Saleh" in gone.answer
        assert gone.evidence[0].object == "Ravi Olsen" and gone.evidence[0].valid_to
    # who remains is what it holds
    assert best(memory, "who's left on team heron?").values == ("Ilse Varga", "Noor Saleh")
    assert best(memory, "who is in team heron?").values == ("Ilse Varga", "Noor Saleh")
    # one value at a time: what came off is the value replaced last
    memory.remember("Van_7", "DRIVEN_BY", "Ada Pike", speaker="ops", turn_id=3)
    memory.remember("Van_7", "DRIVEN_BY", "Tove Lind", speaker="ops", turn_id=9)
    off = best(memory, "which driver came off van 7?")
    assert off.values == ("Ada Pike",) and "until turn 9" in off.answer
    # nothing ended: the values held now are not the answer, and the reason says so
    memory.remember("Cart_3", "HAS_TASK", "sweep yard")
    none_left = memory.ask("which task came off cart 3?")
    assert none_left.answer == UNKNOWN and "none of them has ended" in none_left.reason
    # a thing that left it named in a clause of its own is not what is asked for
    assert not left_from(read_question("who is unloading the crate that came off van 7?"))
    # a relation named by the verb itself is what the question asks
    memory.remember("Note_12", "LEFT_BY", "Ines Reyes")
    assert best(memory, "who left note 12?").values == ("Ines Reyes",)
    # verbs of removing take the particles too, "back" may stand between
    memory.declare_multi_valued("HAS_DEFECT", "CONTAINS_BATCH")
    for defect in ("cracked mirror", "worn wiper", "loose panel"):
        memory.remember("Truck_88", "HAS_DEFECT", defect)
    memory.retract("Truck_88", "HAS_DEFECT", "worn wiper")
    for q in ("which defect was wiped off truck 88?", "which defect was cut from truck 88?"):
        assert best(memory, q).values == ("worn wiper",), q
    # a walk from another entity that reads the slot of the thing named is read so too
    memory.remember("Lot_0412", "WITNESSED_BY", "Ines Reyes")
    for batch in ("UB-71", "UB-72", "UB-79"):
        memory.remember("Lot_0412", "CONTAINS_BATCH", batch)
    memory.retract("Lot_0412", "CONTAINS_BATCH", "UB-72")
    back = best(memory, "which batch was pulled back out of lot 0412?")
    assert back.values == ("UB-72",)
    # what came out of a thing resulted from it: that is not a value that ended
    memory.remember("Claim_5", "RESULTED_IN", "CN-8801")
    assert not left_from(read_question("what credit note came out of claim 5?"))
    # a verb and its particle written as one word are a noun
    assert not left_from(read_question("what's the wind cut-off for cabin 1?"))


def test_another_role_of_a_relations_kind_is_not_that_relation(memory: Memory) -> None:
    # "the assistant site manager" is not the site manager (it answered the site manager
    # at 0.94): UNKNOWN, saying which role was asked; a relation that names the role
    # answers it.
    memory.remember("Block_C", "SITE_MANAGER", "Ilse Varga")
    memory.remember("Crew_40", "LEAD", "Ravi Olsen")
    memory.remember("Crew_40", "DEPUTY_LEAD", "Noor Saleh")
    asked = memory.ask("who's the assistant site manager on block C?")
    assert asked.answer == UNKNOWN
    assert "assistant site manager" in asked.reason and "SITE_MANAGER" in asked.reason
    assert memory.ask("who's the site manager on block C?").values == ("Ilse Varga",)
    assert memory.ask("who's the deputy lead on crew 40?").values == ("Noor Saleh",)
    assert memory.ask("who is the acting lead of crew 40?").answer == UNKNOWN
    assert memory.ask("who leads crew 40?").values == ("Ravi Olsen",)
    # a role of the relation's holder is another role too
    held = memory.ask("who's the site manager's deputy on block C?")
    assert held.answer == UNKNOWN and "SITE_MANAGER" in held.reason
    # who said it: the role is what was said, and the speaker the answer
    memory.remember("Crew_41", "LEAD", "Tove Lind", speaker="Agent_Rota")
    said = memory.ask("who said Tove Lind was the acting lead of crew 41?")
    assert said.values == ("Agent_Rota",)


def test_who_stated_a_number_is_asked_of_a_fact_that_says_it(memory: Memory) -> None:
    # "who reported the 40% fill?" describes a statement by its number: a fact of
    # the tank that does not say it is another statement (it answered its speaker at
    # 0.69), held back with the reason; a fact that says it, however written, answers.
    memory.remember("Tank_2", "STATUS", "filling", speaker="reissue_pm")
    memory.remember("Tank_2", "LITRES_IN", "4,800", speaker="print_ops")
    held = memory.ask("who reported the 40% fill on tank 2?")
    assert held.answer == UNKNOWN and '"40"' in held.reason and "filling" in held.reason
    assert memory.ask("who said tank 2 was filling?").values == ("reissue_pm",)
    # a number after "at" is when it was said or done, which facts do not hold; one
    # denied, one after a noun (a name) or in a clause of circumstances is no value said
    for q in (
        "who told us tank 2 was filling at 1130?",
        "who told us tank 2 was filling, not 12?",
        "who told us tank 2 was filling while tank 5 was drained?",
        "who told us tank 2 was filling in hall 2?",
    ):
        assert "who stated something" not in memory.ask(q).reason, q
    assert memory.ask("who reported the 4,800 litres in tank 2?").values == ("print_ops",)
    # digits in a word that starts with letters are a name's, not a number said
    memory.remember("Car XC90", "FAULT", "gearbox failure", speaker="patrol_sw")
    assert memory.ask("who recorded the gearbox failure on the XC90?").values == ("patrol_sw",)


def test_a_first_name_with_another_surname_is_another_person(memory: Memory) -> None:
    # "rob baillie" is not Rob Kerr (it answered Rob Kerr's post at 0.75): UNKNOWN, saying
    # whom memory holds; the first name alone, the full name, or the surname misspelt by
    # a letter still name him.
    memory.remember("Rob Kerr", "POSTED_AT", "Platform 2")
    memory.remember("Ilse Varga", "POSTED_AT", "Gate 4")
    other = memory.ask("where is Rob Baillie posted?")
    assert other.answer == UNKNOWN and "Rob Kerr" in other.reason
    assert memory.ask("where is rob kerr posted?").values == ("Platform 2",)
    assert memory.ask("where is rob posted today?").values == ("Platform 2",)
    assert memory.ask("where is ilse varge posted?").values == ("Gate 4",)
    # after a capitalised name, a word in lower case is a kind of thing, not a surname
    memory.remember("Kestrel Varga", "ISSUED", "INV-20")
    memory.remember("INV-20", "DUE_ON", "2027-01-08")
    due = memory.ask("when is the Kestrel invoice due?")
    assert "shares the first name" not in due.reason
    assert "shares the first name" in memory.ask("when is Kestrel Okonkwo's invoice due?").reason


def test_the_asker_is_the_entity_their_handle_names(memory: Memory) -> None:
    # "I", "me", "my" are the speaker; a handle and the name facts use differ in case and
    # punctuation only.
    memory.remember("JE-10420", "APPROVED_BY", "Ewa Nowak")
    memory.remember("Ewa Nowak", "ON_SHIFT", "late shift")
    shift = memory.ask("which shift am I on?", speaker="ewa.nowak", min_confidence=0)
    assert shift.values == ("late shift",)
    verdict = memory.ask("is 10420 approved by me?", speaker="ewa.nowak", min_confidence=0)
    assert verdict.answer == "yes"


def test_unknown_when_the_memory_does_not_hold_it_with_the_reason(memory: Memory) -> None:
    # A memory with nothing in it (a misspelt journal or namespace opens one) says so.
    empty = memory.ask("What is the capital of Peru?")
    assert empty.reason == "the memory is empty: nothing has been remembered in it"
    memory.remember("Service_Payments", "OWNED_BY", "Payments_Team")
    memory.remember("Service_Search", "OWNED_BY", "Search_Team")
    memory.retract("Service_Payments", "OWNED_BY")
    nothing = memory.ask("What is the capital of Peru?")
    assert nothing.answer == UNKNOWN
    assert nothing.reason == "no entity of the question is in memory"
    assert nothing.confidence == 0.0
    retracted = memory.ask("Which team owns the payments service?")
    assert retracted.answer == UNKNOWN
    assert "Service_Payments OWNED_BY Payments_Team was retracted" in retracted.reason


def test_a_near_miss_is_a_candidate_never_the_answer(memory: Memory) -> None:
    memory.remember("Stage_Transform", "HAS_PARTITION_STRATEGY", "daily by event_date")
    strict = memory.ask("What partitioning strategy did the loader pick?", min_confidence=0.99)
    assert strict.answer == UNKNOWN
    assert strict.candidate is not None
    assert strict.candidate.values == ("daily by event_date",)
    assert strict.reason.startswith("not sure enough")
    lenient = memory.ask("What partitioning strategy did the loader pick?", min_confidence=0.0)
    assert lenient.values == ("daily by event_date",)
    assert lenient.confidence == strict.candidate.confidence


def test_confidence_is_a_probability_and_the_default_threshold_applies(memory: Memory) -> None:
    films(memory)
    for question in (
        "Who directed Paper Kites?",
        "Which films did Lena Dahl star in?",
        "What is the genre of Quiet Lake?",
    ):
        a = memory.ask(question, min_confidence=0.0)
        assert 0.0 <= a.confidence <= 1.0
        assert a.readings[0].confidence == a.confidence
        if a.confidence < DEFAULT_MIN_CONFIDENCE:
            assert memory.ask(question).answer == UNKNOWN
        else:
            assert memory.ask(question).answer == a.answer
    # (a false answer costs twice an UNKNOWN: README, "Abstention")
    assert abs(DEFAULT_MIN_CONFIDENCE - 2 / 3) < 1e-12


def test_an_answer_is_as_sure_as_the_best_reading_that_gives_it(memory: Memory) -> None:
    # Two readings may give one answer (a stated state judged, a claim that another
    # entity holds it): each is weighed against the best reading with another answer,
    # and the answer is as sure as the surest of them, whichever the ranker put first.
    ranked = [([1.0], 2.0, "no: rejected"), ([2.0], 1.5, "yes"), ([3.0], 1.0, "no: rejected")]
    # (score, margin, the answer's share of the ranker's softmax, answers, features)
    share = (1.0 + math.exp(-1.0)) / (1.0 + math.exp(-0.5) + math.exp(-1.0))
    rows = answer_inputs(ranked, "no: rejected")
    assert [r[:2] + r[4:] for r in rows] == [[2.0, 0.5, 1.0], [1.0, -0.5, 3.0]]
    assert all(abs(r[2] - share) < 1e-12 and r[3] == 2.0 for r in rows)
    # A rival answer is read without a margin: the answering model is fitted on the best.
    (row,) = answer_inputs(ranked, "yes")
    assert row[:2] + row[4:] == [1.5, 0.0, 2.0]
    assert abs(row[2] - (1.0 - share)) < 1e-12
    films(memory)
    confidence = ReaderModel.default().confidence
    assert confidence is not None
    reader = Reader(memory.store)
    r = reader.read("Who directed Paper Kites?")
    rows = answer_inputs([(c.features, c.score, c.answer) for c in r.ranked], r.ranked[0].answer)
    assert len(rows) >= 1
    assert reader.confidence(r) == confidence.best(rows)
    assert abs(confidence.best(rows) - max(confidence.probability(row) for row in rows)) < 1e-12


def test_top_k_readings_and_a_context_within_the_budget(memory: Memory) -> None:
    films(memory)
    one = memory.ask("Who worked on Paper Kites?", k=1, min_confidence=0.0)
    three = memory.ask("Who worked on Paper Kites?", k=3, min_confidence=0.0)
    assert len(one.readings) == 1
    assert 1 < len(three.readings) <= 3
    assert three.readings[0].values == one.readings[0].values
    assert len({r.answer for r in three.readings}) == len(three.readings)  # distinct readings
    for reading in three.readings:
        for fact in reading.evidence:
            assert fact.line() in three.context  # every reading's evidence is in the context
    small = memory.ask("Who worked on Paper Kites?", k=3, max_tokens=20, min_confidence=0.0)
    assert estimate_tokens(small.context) <= 20
    assert small.context.startswith("Q: Who worked on Paper Kites?")
    # What the budget cut is said, within it, when room is left after the facts kept (a
    # fact is never dropped for that line), so an LLM does not read it as not known.
    noted = 0
    for budget in range(12, estimate_tokens(three.context)):
        cut = memory.ask("Who worked on Paper Kites?", k=3, max_tokens=budget, min_confidence=0)
        assert estimate_tokens(cut.context) <= budget
        sent = [f.line() for f in cut.context_facts]
        assert sent == three.context.splitlines()[1:][: len(sent)]
        longer = "\n".join(three.context.splitlines()[: len(sent) + 2])
        assert estimate_tokens(longer) > budget  # as many facts as fit, note or not
        left = len(three.context_facts) - len(sent)
        note = f"({left} more fact{'' if left == 1 else 's'} cut)"
        lines = cut.context.splitlines()
        assert lines[1:] in (sent, [*sent, note])
        noted += lines[-1] == note
    assert noted > 0


def test_a_topic_given_is_the_only_anchor(memory: Memory) -> None:
    films(memory)
    answer = memory.ask("who directed it", topic="Salt Flats", min_confidence=0.0)
    assert answer.values == ("Ines Varga",)
    # A topic memory does not hold is the reason it does not know, not "not sure enough".
    missing = memory.ask("who directed it", topic="Salt Flat")
    assert not missing.known and missing.reason == "the topic 'Salt Flat' is not in memory"


def test_answer_to_dict_carries_everything_a_tool_reports(memory: Memory) -> None:
    films(memory)
    doc = memory.ask("Who directed Paper Kites?", k=2).to_dict()
    assert set(doc) >= {
        "answer",
        "known",
        "values",
        "confidence",
        "reason",
        "readings",
        "candidate",
        "context_facts",
    }
    assert doc["readings"][0]["evidence"][0]["speaker"] is None


class CountingStore(NetworkXStore):
    """The embedded store, counting the facts each question reads from it."""

    read = 0

    def facts_of(self, *args: object, **kwargs: object) -> list:  # type: ignore[override]
        found = super().facts_of(*args, **kwargs)  # type: ignore[arg-type]
        CountingStore.read += len(found)
        return found


def _reads_for(hub_size: int) -> int:
    store = CountingStore()
    memory = Memory(store)
    memory.declare_multi_valued("HAS_GENRE", "DIRECTED_BY")
    memory.remember_many(
        [NewFact(f"Film {i}", "HAS_GENRE", "Drama") for i in range(hub_size)]
        + [
            NewFact("Night Harbour", "HAS_GENRE", "Drama"),
            NewFact("Night Harbour", "DIRECTED_BY", "Ines Varga"),
        ]
    )
    CountingStore.read = 0
    assert memory.ask("Who directed Night Harbour?").values == ("Ines Varga",)
    return CountingStore.read


def test_work_per_question_does_not_grow_with_a_hubs_degree() -> None:
    # The walk reads a bounded share of the genre's films, whatever their number.
    small, large = _reads_for(300), _reads_for(6000)
    assert large == small < 1000


def test_a_hubs_older_fact_is_not_crowded_out_by_its_newest(memory: Memory) -> None:
    # The anchor's first read holds its newest 200 facts, all of one relation here; the
    # relation the question names is read too, so the owner stated first is found.
    # (Asked as "which team": "who owns" of a team led by a person is read either way
    # by the reader, the team's leader a little ahead since its refit on t17-t20, at a
    # confidence under the default threshold; what this test is about is that the
    # owner is found at all.)
    memory.declare_multi_valued("HAS_MEMBER")
    memory.remember("Guild_Hall", "OWNED_BY", "Team_Core")
    memory.remember_many([(f"Member_{i}", "MEMBER_OF", "Guild_Hall") for i in range(250)])
    memory.remember("Team_Core", "LED_BY", "Dana Reyes")
    assert best(memory, "Which team owns Guild_Hall?").values == ("Team_Core",)
    assert best(memory, "Who leads the team that owns Guild_Hall?").values == ("Dana Reyes",)


def test_as_of_a_point_before_a_fact_it_was_not_said_not_withdrawn(memory: Memory) -> None:
    # As of a point before anything was said of it, a multi-valued relation held nothing
    # because nothing had been said, not because it was withdrawn ("A_Svc DEPENDS_ON
    # B_Svc was retracted at #None" was the reason given, of a fact never retracted).
    memory.remember("A_Svc", "DEPENDS_ON", "B_Svc", multi=True)
    memory.remember("A_Svc", "OWNED_BY", "Team_X")
    before = memory.ask("Who owns A_Svc?", as_of=0)
    assert not before.known and "retracted" not in before.reason
    assert before.reason == "nothing had been said of A_Svc at #0"
    assert memory.ask("Who owns A_Svc?", as_of=2).answer == "Team_X"


def test_a_two_hop_question_reads_the_past_as_of_a_point(memory: Memory) -> None:
    memory.remember_many(
        [("Checkout", "OWNED_BY", "Payments_Team"), ("Payments_Team", "LED_BY", "Alice")]
    )
    bob = memory.remember("Payments_Team", "LED_BY", "Bob")
    question = "who leads the team that owns Checkout"
    assert best(memory, question).values == ("Bob",)
    assert memory.ask(question, as_of=bob.seq - 1, min_confidence=0.0).values == ("Alice",)


def test_several_readings_also_send_what_a_list_held_before(memory: Memory) -> None:
    # A list asked "now" is told by what left it: the best reading's slot's other facts are
    # sent, of an entity the question never names too (reached through the one it names).
    memory.declare_multi_valued("CARRYING")
    memory.remember("Rosa Lind", "DRIVES", "KX-204")
    for crate in ("Crate A", "Crate B", "Crate C"):
        memory.remember("KX-204", "CARRYING", crate)
    memory.retract("KX-204", "CARRYING", "Crate B")
    question = "what is the truck Rosa drives carrying now?"
    answer = memory.ask(question, k=3)
    assert set(answer.values) == {"Crate A", "Crate C"}
    sent = {(f.subject, f.object, f.valid_to is None) for f in answer.context_facts}
    assert ("KX-204", "Crate B", False) in sent
    assert all(f.line() in answer.context for f in answer.context_facts)
    one = memory.ask(question, k=1)
    assert all(f.valid_to is None for f in one.context_facts)  # one reading: its evidence


def test_several_readings_send_facts_that_say_the_questions_words_not_every_fact(
    memory: Memory,
) -> None:
    films(memory)
    memory.remember(
        "Salt Flats", "RELEASE_STATUS", "delayed", text="Salt Flats is held back after the reshoots"
    )
    others = [
        ("EDITOR", "Rosa Lind"),
        ("COMPOSER", "Jon Hale"),
        ("RUNTIME", "118 min"),
        ("RATING", "PG-13"),
        ("STUDIO", "Northlight"),
        ("BUDGET", "$4m"),
        ("POSTER_BY", "Eli Park"),
        ("SOUND_MIX", "Atmos"),
    ]
    for predicate, value in others:
        memory.remember("Salt Flats", predicate, value)
    answer = memory.ask("Who directed Salt Flats after the reshoots?", k=3)
    sent = {(f.subject, f.predicate, f.object) for f in answer.context_facts}
    assert ("Salt Flats", "DIRECTED_BY", "Ines Varga") in sent
    assert ("Salt Flats", "RELEASE_STATUS", "delayed") in sent  # says "reshoots"
    # Beyond the readings' evidence, a fact that says no word of the question is not sent:
    # the newest facts of a named entity are not what an LLM needs to check an answer.
    evidence = {(f.subject, f.predicate, f.object) for r in answer.readings for f in r.evidence}
    assert sent - evidence <= {("Salt Flats", "RELEASE_STATUS", "delayed")}


def test_an_unsure_answer_sends_more_of_the_entities_current_facts(memory: Memory) -> None:
    # UNKNOWN leaves the LLM to decide from the context alone: then the current facts of the
    # entities around the readings are sent too (a few), not only those that say its words.
    memory.remember("Salt Flats", "DIRECTED_BY", "Ines Varga")
    question = "Who directed Salt Flats?"
    few = memory.ask(question, k=3, min_confidence=1.0)
    assert few.answer == UNKNOWN  # (no confidence reaches the threshold asked)
    # A memory of one fact about it has nothing more to send.
    assert {f.seq for f in few.context_facts} <= {f.seq for r in few.readings for f in r.evidence}
    others = [("EDITOR", "Rosa Lind"), ("COMPOSER", "Jon Hale"), ("RUNTIME", "118 min")]
    others += [("RATING", "PG-13"), ("STUDIO", "Northlight"), ("BUDGET", "$4m")]
    for predicate, value in others:
        memory.remember("Salt Flats", predicate, value)
    memory.remember("Salt Flats", "STUDIO", "Eastgate")  # (the old studio is history)
    sure = memory.ask(question, k=3, min_confidence=0.0)
    unsure = memory.ask(question, k=3, min_confidence=1.0)
    assert unsure.answer == UNKNOWN and sure.values == ("Ines Varga",)
    told = {f.seq for f in sure.context_facts}
    extra = [f for f in unsure.context_facts if f.seq not in told]
    assert 0 < len(extra) <= AROUND_UNSURE
    assert all(f.valid_to is None and f.subject == "Salt Flats" for f in extra)
    sent = {(f.subject, f.predicate, f.object) for f in unsure.context_facts}
    assert ("Salt Flats", "STUDIO", "Eastgate") in sent  # the newest current facts first
    assert all(f.line() in unsure.context for f in unsure.context_facts)


def test_a_clause_before_the_question_is_not_the_question() -> None:
    q = read_question("When TC-88A was first flagged, what condition was it in?")
    assert q.wh is not None and q.wh.word == "what"
    assert read_question("Which team owns payments?").type_positions == frozenset({1})


def test_the_which_noun_ends_where_the_entity_asked_about_begins() -> None:
    # The noun after "which" is the answer's kind; a name that follows it is not part
    # of it (else the name would read as the kind asked for, and link as weakly as a
    # guess). (A verb no ending shows stays in it, "wrote" here: the ranker is fitted
    # on that reading.)
    def noun(text: str) -> list[str]:
        q = read_question(text)
        return [q.words[p].word for p in sorted(q.type_positions)]

    assert noun("which person wrote Harbour Lights") == ["person", "wrote"]
    assert noun("which words describe Harbour Lights") == ["words", "describe"]
    assert noun("which crew took 4471 out") == ["crew", "took"]
    assert noun("which rack 7720 is in") == ["rack"]
    # A name first is the kind ("which of the Hannahs"), and names qualify a noun after them.
    assert noun("which Hannah owns it?") == ["hannah"]
    assert noun("which Acme service does the gateway page through?") == ["acme", "service"]


def test_an_unknown_reason_names_the_entity_side_cause(memory: Memory) -> None:
    memory.remember("Service_Payments", "OWNED_BY", "Payments_Team")
    memory.remember("Service_Search", "OWNED_BY", "Search_Team")
    # Words that fit two entities equally: said, with both names, not hidden behind "not sure".
    both = memory.ask("who owns service", min_confidence=0.99)
    assert both.answer == UNKNOWN and both.reason.startswith("not sure enough")
    assert "the words fit several entities (" in both.reason
    assert "Service_Payments" in both.reason and "Service_Search" in both.reason
    # An entity the memory does not hold, with a reading found anyway from the relation.
    moon = memory.ask("Who owns the moon?", min_confidence=0.99)
    assert moon.answer == UNKNOWN
    if moon.candidate is not None:
        assert "no entity of the question was found in memory" in moon.reason
    else:
        assert moon.reason == "no entity of the question is in memory"
    # Named clearly: only the confidence is the cause.
    clear = memory.ask("Who owns Service_Payments?", min_confidence=0.99)
    assert clear.reason.startswith("not sure enough (confidence ")
    assert "entit" not in clear.reason and "Payments_Team" in clear.reason


def test_the_entity_side_cause_is_named_for_each_way_a_question_can_miss() -> None:
    from ctxneo.answering.linking import Anchor
    from ctxneo.answering.reader import _unclear_entity

    def anchor(name: str, p: float) -> Anchor:
        return Anchor(name, frozenset({0}), 0.5, False, (), p)

    assert _unclear_entity([]) == "no entity of the question was found in memory"
    assert _unclear_entity([anchor("Pump_09", 0.2)]) == (
        "no entity is named clearly enough (the words fit Pump_09)"
    )
    several = [anchor(f"Svc_{i}", 0.3) for i in range(5)]
    assert _unclear_entity(several) == (
        "the words fit several entities (Svc_0, Svc_1, Svc_2 and 2 more)"
    )
    assert _unclear_entity([anchor("Svc_0", 0.3), anchor("Svc_1", 0.9)]) == ""


def test_a_no_weighs_whether_the_claim_is_of_the_kind_the_relation_holds(
    memory: Memory,
) -> None:
    # "is Okonkwo running kiln 3?" answered "no: Ade Bello" is a no about a person; the
    # same claim against the kiln's firing temperature is another relation read.
    from ctxneo.answering.features import INDEX

    memory.remember("Kiln_3", "RUN_BY", "Ade Bello", turn_id=1)
    memory.remember("Kiln_3", "FIRING_TEMP", "1180 C", turn_id=2)
    memory.remember("Chidi Okonkwo", "MEMBER_OF", "Shift_B", turn_id=3)
    read = Reader(memory.store).read("is Okonkwo running kiln 3?")
    kinds = {
        c.evidence[0].predicate: c.features[INDEX["claim_kind"]]
        for c in read.ranked
        if c.claim is not None and c.claim.entity == "Chidi Okonkwo" and c.form == "yesno"
    }
    assert kinds.get("RUN_BY") == 1.0
    assert kinds.get("FIRING_TEMP") == 0.0


def test_a_reading_is_weighed_by_how_much_of_the_question_its_evidence_shows(
    memory: Memory,
) -> None:
    # The ranker reads, for each reading, the share of the question's words outside the
    # anchor's name that its evidence shows (names, relation) or was said in: "bay" is
    # in the location's value, "parked" in the words it was stated in; the servicing
    # firm's fact shows neither.
    from ctxneo.answering.features import INDEX

    memory.remember("Pump_09", "LOCATED_AT", "Bay 4", text="pump 9 is parked in bay 4 now")
    memory.remember("Pump_09", "SERVICED_BY", "Hydro Works")
    read = Reader(memory.store).read("which bay is pump 9 parked in?")
    shown = {
        c.evidence[0].predicate: (c.features[INDEX["said_all"]], c.features[INDEX["said_all_gap"]])
        for c in read.ranked
        if c.form == "value" and len(c.evidence) == 1
    }
    assert shown["LOCATED_AT"] == (1.0, 0.0)
    assert shown["SERVICED_BY"][0] < 1.0
    assert shown["SERVICED_BY"][1] == 1.0 - shown["SERVICED_BY"][0]


def test_a_value_is_a_quantity_a_name_or_a_word() -> None:
    """What the kind model is fitted on and read against: a value's quantity kind, else a
    word in lower case, else a name however it is written (a team's handle and a person's
    name are both names)."""
    for value, kind in [
        ("2025-11-02", "date"),
        ("$1,250", "amount"),
        ("10 days", "duration"),
        ("REQ-5521", "name"),
        ("Team_Solar_2", "name"),
        ("Dana Whitfield", "name"),
        ("on hold", "word"),
    ]:
        assert KINDS[kind_of(value)] == kind, value


def test_the_kind_model_weighs_values_not_verdicts(memory: Memory) -> None:
    # It is fitted on the values questions ask for: a reading that answers with the
    # relation's values is weighed by it, a yes/no reading ("no: rejected") is not.
    from ctxneo.answering.features import INDEX

    memory.remember_many([("REQ-7", "approval", "rejected"), ("REQ-8", "approval", "approved")])
    read = Reader(memory.store).read("is 7 approved yet?")
    by_form = {c.form: c.features[INDEX["kind_fit"]] for c in read.ranked}
    assert by_form.get("yesno") == 0.0
    assert by_form.get("value", 0.0) > 0.0


def test_the_kind_of_value_asked_for_is_learned_from_the_words() -> None:
    """P(kind | question words) sums to one, and a plain "when" asks for a date, a "how
    much" for an amount: what the ranker weighs each reading's values against."""
    kinds = ReaderModel.default().kinds
    assert kinds is not None
    for question, expected in [
        ("when does the lease on unit 4 end?", "date"),
        ("how much did the plumber quote for it?", "amount"),
    ]:
        p = kinds.probabilities(read_question(question).words)
        assert abs(sum(p) - 1.0) < 1e-9
        assert KINDS[max(range(len(KINDS)), key=p.__getitem__)] == expected, (question, p)
    doc = kinds.to_dict()
    assert KindModel.from_dict(doc).probabilities(read_question("when?").words) == (
        kinds.probabilities(read_question("when?").words)
    )
