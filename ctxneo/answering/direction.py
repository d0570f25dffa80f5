"""Which way a question reads a relation whose verb it says.

A predicate named as a verb phrase reads as a sentence from its subject to its object:
``Alice MANAGES Bob`` is "Alice manages Bob", ``Svc_A OWNED_BY Team_X`` is "Svc_A (is)
owned by Team_X", ``Checkout DEPENDS_ON Payments`` is "Checkout depends on Payments". A
question that says that verb says at which end its named entity stands: before the verb
it is the verb's subject ("what does Checkout depend on?", "Checkout depends on what?"),
after it the verb's object ("what depends on Checkout?", "who manages Alice?"); a passive
question ("who is Alice managed by?", "what is managed by Alice?") turns that round, and
so does a predicate in the passive ("who owns Svc_A?" asks for Svc_A's OWNED_BY).

A reading walked from the entity the other way answers another question ("who manages
Alice?" is not answered by whom Alice manages), however well its words match: the reader
never gives it (:func:`~ctxneo.answering.reader._answerable`). Nothing is decided where
the question may not say the verb as a verb: a noun of it ("Alice's manager", which may
name who does it or, as "Lot_12's dryer", where it is done; "the owner"; the noun after
"what" or "which"), a bare form with no auxiliary of the entity's before it; nor where a
participle without "by" names the relation (ASSIGNED_TO reads either way), the verb is
said twice, the entity stands on both sides of it, beyond another clause, a preposition
("who wrote songs with Alice?") or far from it, or a pronoun takes its place ("Svc_A,
who owns it?").
"""

from __future__ import annotations

from functools import lru_cache

from ctxneo.answering.question import Question
from ctxneo.text import Token, split_words, stem

#: Words that tie a verb to its object in a predicate's name (DEPENDS_ON, REPORTS_TO,
#: OWNED_BY): a predicate of a word and one of these is a verb phrase.
PARTICLES = frozenset("by to on in for with from at into onto under over of".split())
#: Words before a word that make it a noun ("the owner", "its run", "Ana's manager").
_NOUN_BEFORE = frozenset(
    "the a an this these those its their his her our your my whose each every any no".split()
)
#: Endings of a noun made from a verb ("manager", "management", "assignment"): the same
#: stem as the verb, but no verb.
_NOUN_ENDINGS = ("er", "ers", "or", "ors", "ment", "ments", "ion", "ions", "ance", "ence")
#: Prepositions: the entity after one is its object, not the verb's (but for the
#: predicate's own particle, "what depends on Checkout?", and a passive's "by").
_PREPOSITIONS = PARTICLES | frozenset("about alongside among beside besides together".split())
#: Words that start another clause, or join two: what stands beyond one of them is not
#: the verb's subject or object.
_CLAUSE_WORDS = frozenset(
    "before after until till when while since because if as once so than and or but then "
    "where whether though although unless".split()
)
#: At most this many words between the entity and the verb ("what does the Checkout
#: service depend on": one).
_NEAR = 3
#: Endings of a verb's forms that no noun of it has alone (a plural's "s" aside).
_INFLECTED = ("s", "ed", "ing", "en")
#: Words that put a verb's bare form after its subject ("what does Checkout depend on").
_AUXILIARIES = frozenset("do does did will would can could should shall may might must".split())
#: Words that ask for, or stand for, the verb's other end when it comes before the verb.
_ASKING = frozenset("who whom what which that whose".split())
#: Pronouns that take the entity's place in its clause: it is named outside the clause
#: ("Svc_A, who owns it?"), so where it stands says nothing of its role.
_RESUMING = frozenset("it them they him she he".split())


@lru_cache(maxsize=4096)
def verb_phrase(predicate: str) -> tuple[str, bool, str | None] | None:
    """The stem of a predicate's verb, whether the predicate is in the passive (OWNED_BY)
    and its particle (None for one word), when its name is a verb phrase: one word ending
    in "s" (MANAGES), or a word and a particle (DEPENDS_ON, OWNED_BY); else None
    (BIN_LOCATION, STARRED_ACTORS, and a participle without "by", ASSIGNED_TO)."""
    words = split_words(predicate)
    if len(words) == 1:
        verb = words[0]
        # (a verb's "s" follows a consonant or an "e": STATUS, ALIAS and CLASS are nouns)
        if len(verb) > 3 and verb.isalpha() and verb[-1] == "s" and verb[-2] not in "aiosu":
            return stem(verb), False, None
        return None
    if len(words) == 2 and words[1] in PARTICLES and words[0].isalpha() and len(words[0]) > 2:
        passive = words[1] == "by"
        if not passive and words[0].endswith(("ed", "en")):
            # A participle with no agent (ASSIGNED_TO, RELATED_TO, LOCATED_IN) reads either
            # way round: "who is assigned to Ticket_88?" asks for its ASSIGNED_TO.
            return None
        if not passive and words[0].endswith("ing"):
            # Nor does an activity named by its "-ing" (FUNDING_FROM: the funding a
            # proposal gets from its funder, who does the funding).
            return None
        return stem(words[0]), passive, words[1]
    return None


def written_forms(predicate: str) -> frozenset[str]:
    """A predicate's own verb as it writes it, and that without its "s" ("mentors",
    "mentor"): the forms a question says it in as a verb, whatever its ending."""
    written = split_words(predicate)[0]
    return frozenset({written, written[:-1]} if written.endswith("s") else {written})


def entity_is_subject(
    q: Question, positions: frozenset[int], predicate: str, *, strict: bool = False
) -> bool | None:
    """Whether the question says the entity at ``positions`` is the subject (True) or the
    object (False) of ``predicate`` as the fact is written; None when it does not say.
    ``strict``: only where the question says the verb as the predicate writes it (or
    without its "s"), or the predicate is in the passive: a plural noun named as a
    relation (MARSHALS, the event's marshals) is no verb of "is Amir marshalling it?"."""
    phrase = verb_phrase(predicate)
    if phrase is None or not positions:
        return None
    verb_stem, passive_predicate, particle = phrase
    # A verb ending as a noun of a verb does ("MENTORS", "DELIVERS", "ORDERS") is still
    # the verb when the question says it as written ("who mentors Kenji?").
    own = written_forms(predicate)
    words = q.words
    if any(t.word in _RESUMING for t in words):
        return None
    # A noun of the verb's "-er" form decides nothing: it may name who does it ("Alice's
    # manager") or where or with what it is done ("Lot_12's dryer", a machine).
    if any(
        t.pos not in positions and t.word not in own and _doer(t.word) == verb_stem for t in words
    ):
        return None
    verbs = [
        t.pos
        for t in words
        if t.stem == verb_stem
        and t.pos not in positions
        and (t.word in own or not t.word.endswith(_NOUN_ENDINGS))
        and (t.pos == 0 or words[t.pos - 1].word not in _NOUN_BEFORE)
        and (t.pos == 0 or not words[t.pos - 1].possessive)
        and (t.pos == 0 or not _a_number(words[t.pos - 1].word))
        and (not strict or passive_predicate or t.word in own)
        and not _a_noun_after_which(words, t.pos, positions, particle)
    ]
    if len(verbs) != 1:
        return None
    v = verbs[0]
    first, last = min(positions), max(positions)
    between = words[last + 1 : v] if last < v else words[v + 1 : first]
    if len(between) > _NEAR or any(t.word in _CLAUSE_WORDS for t in between):
        # (another clause between them: "who was guarding before Omar took over?" does
        # not say Omar is guarded; nor does a word far from the verb)
        return None
    if any(t.word in _PREPOSITIONS and t.word not in (particle, "by") for t in between):
        # (a preposition's object is not the verb's: "who wrote songs with Alice?" asks
        # who wrote alongside her, not who wrote her)
        return None
    if all(p < v for p in positions) and (
        words[v].word.endswith(_INFLECTED) or _asked_with_do(words, first)
    ):
        # (before the verb only where it is one: inflected, "Checkout depends on", "is
        # Alice managed by", or bare after an auxiliary of its own, "what does Checkout
        # depend on"; "the login crash fix ships" says a noun, the fix of the crash, and
        # so does "which crane did we give the Pier_4 lift?")
        before = True
    elif all(p > v for p in positions) and any(
        words[i].word in _ASKING for i in range(max(0, v - 3), v)
    ):
        # (after the verb only with the asking word before it, "who manages Alice?", "the
        # team that owns Svc_A": "notes on Svc_A?" says a noun, the notes of Svc_A)
        before = False
    else:
        return None
    # "managed by": the question's subject is what is managed, the one after "by" manages
    passive_question = v + 1 < len(words) and words[v + 1].word == "by"
    agent = before != passive_question
    return agent != passive_predicate


#: Numbers in words: what follows one is a noun it counts ("two dips"), not a verb.
_NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve twenty hundred".split()
)


def _a_number(word: str) -> bool:
    """Whether a word is a number ("60", "1,200", "2.5", "two"): the word after it is the
    noun it counts ("60 plies", "8 dips"), not a verb."""
    return word in _NUMBER_WORDS or word.replace(",", "").replace(".", "").isdigit()


def _doer(word: str) -> str | None:
    """The verb stem of a noun of the one who does it ("manager" -> manag, "owner" ->
    own), or None for a word of no such ending."""
    for ending in ("ers", "er", "ors", "or"):
        if word.endswith(ending) and len(word) > len(ending) + 2:
            root = word[: -len(ending)]
            # ("manager" is "manage" + r: its verb keeps the e)
            with_e, bare = stem(root + "e"), stem(root)
            return with_e if with_e != bare else bare
    return None


def _asked_with_do(words: tuple[Token, ...], first: int) -> bool:
    """Whether an auxiliary stands right before the entity (an article between them at
    most), so that the bare verb after it is the entity's: "what does Checkout depend
    on?", "who does the Alice team report to?"."""
    at = first - 1
    if at >= 0 and words[at].word in ("the", "a", "an"):
        at -= 1
    return at >= 0 and words[at].word in _AUXILIARIES


def _a_noun_after_which(
    words: tuple[Token, ...], at: int, positions: frozenset[int], particle: str | None
) -> bool:
    """Whether the word at ``at``, right after "what" or "which", is the noun they ask
    about rather than the verb: a verb there goes on to its particle or to the entity
    ("what depends on Checkout?", "what manages Alice?"), a noun to the rest of the
    sentence ("what stops are on Route_5?", "which crates go on Truck_12?")."""
    if at == 0 or words[at - 1].word not in ("what", "which"):
        return False
    after = at + 1
    return not (after in positions or (after < len(words) and words[after].word == particle))
