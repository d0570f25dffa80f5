"""Stage 1, reading: a question's words, and the cues in them.

Cues are general rules over words: history ("originally", "before it
changed"), provenance ("who set it"), a count ("how many"), the shape of the
value asked for ("when" -> a date), the kind of answer ("which *team*"), and
siblings ("the same director as", "co-starred with"). Words that belong to a
linked name are not cues: "Before Midnight" is a film, not a history question
(``read_question(text, masked=...)`` reads it with those positions masked).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise

from ctxneo.text import Token, stem, tokens

_FIRST = {stem(w) for w in "originally original initially initial first earliest".split()}
_FIRST_PHRASES = re.compile(
    r"\b((start(ed)?|began|begin|open(ed)?) (\w+ ){0,3}(at|with|as)|to begin with"
    r"|at the (start|outset|beginning))\b"
)
# "list every value it has had", "walk me through each stage": the whole history.
_ALL_VALUES = re.compile(
    r"\b(in order|oldest first|newest first|over time|walk me through|run me through|take me "
    r"through|each (stage|step|value|version|change)|every (stage|step|value|version|change)"
    r"|(has|have) (\w+ )?had|(has|have) (moved|gone|been) through|history of|all the (values"
    r"|stages|versions|dates|statuses|changes)|evolved|so far)\b"
)
_CHANGE_NOUNS = {
    stem(w)
    for w in "change move switch update slip extension reshuffle rollback reset became become "
    "changed moved switched updated".split()
}
_PREVIOUS = {
    stem(w) for w in "previous previously prior before earlier formerly former old".split()
}
_CHANGE = {
    stem(w)
    for w in (
        "change changed switch switched move moved update updated raise raised lower lowered drop "
        "dropped bump bumped reduce reduced increase increased replace replaced swap swapped "
        "revise revised reassign reassigned reclassify reclassified"
    ).split()
}
_WH = {"who", "whom", "whose", "what", "which", "where", "when", "why", "how"}
#: "which agent": the asker wants whoever stated a fact.
_ASKS_FOR_SPEAKER = {stem(w) for w in "agent speaker".split()}
#: "which person", "who": the asker wants a person (a value, or a speaker).
PERSON_NOUNS = {stem(w) for w in "person people who whom someone somebody individual".split()}
# The question word itself hints at a relation: "where" at a location, "when" at a date.
_WH_HINTS = {
    "whose": "owner",
    "where": "location",
    "when": "date",
    "long": "duration",
    "much": "cost",
    "why": "cause",
    "how": "method",
    "who": "owner",
    "whom": "owner",
}
# ...and at the shape of the answer.
_SHAPE_WORDS = {
    "date": {stem(w) for w in "date day time deadline when year".split()},
    "duration": {stem(w) for w in "duration period long".split()},
    "amount": {stem(w) for w in "cost price budget amount much".split()},
}
#: Words saying the answer shares something with the named entity: "the *same* director
#: as", "*share* actors with", "*co*-starred", "acted *together*", "*also* directed".
_SIBLING = {stem(w) for w in "same share shares shared also together alongside fellow".split()}
_CO_PREFIX = re.compile(r"\bco-\w", re.IGNORECASE)  # "co-starred", "co-wrote"
_MASK = "\x00"


@dataclass(frozen=True, slots=True)
class Question:
    """A question read into words and cues."""

    text: str
    words: tuple[Token, ...]
    content: tuple[Token, ...]
    wh: Token | None  # the first question word
    type_positions: frozenset[int]  # the noun after "which"/"what": "which *team* owns"
    history: str | None  # "first", "previous", "all" or None
    asks_speaker: bool  # "who ...", "which agent ..."
    after_wh: tuple[int, ...]  # content positions after the question word and its noun
    count: bool
    hint: Token | None  # the question word as a relation word ("where" -> location)
    #: (position, class, whether it opens a cue of several words) of each history cue:
    #: what the form model is told it may not have learned (see :mod:`.forms`).
    cues: tuple[tuple[int, str, bool], ...]
    keys: frozenset[str]  # every stem a name part could match: stems and prefixes of words
    at: dict[str, tuple[int, ...]] = field(hash=False, compare=False)  # stem -> positions
    prefixed: dict[str, tuple[int, ...]] = field(hash=False, compare=False)  # prefix -> positions
    shape: str | None  # the answer's expected shape: date, duration, amount
    sibling_positions: frozenset[int] = frozenset()  # "same", "share", "co-", "together"
    masked: frozenset[int] = frozenset()  # positions inside a linked name: never cues

    @property
    def sibling(self) -> bool:
        return bool(self.sibling_positions)


@lru_cache(maxsize=256)
def _words(text: str) -> tuple[Token, ...]:
    """A text's tokens (immutable), kept for the few questions read last: a question is
    read again once its names are linked."""
    return tuple(tokens(text))


def read_question(text: str, *, masked: frozenset[int] = frozenset()) -> Question:
    """Split a question into words and find its cues (history, provenance, count, siblings)."""
    words = _words(text)
    content = tuple(t for t in words if not t.stop)
    cue_words = [t for t in words if t.pos not in masked]
    stems = {t.stem for t in cue_words if not t.stop}
    wh = next((t for t in cue_words if t.word in _WH), None)
    # "When TC-88A was first flagged, what condition was it in?": a clause that opens the
    # sentence is not the question; its question word comes after the comma.
    comma = text.rfind(",")
    if wh is not None and comma > 0:
        after = len(tokens(text[:comma]))
        later = next((t for t in cue_words if t.word in _WH and t.pos >= after), None)
        if later is not None and later.pos > wh.pos:
            wh = later
    type_positions: set[int] = set()
    # "which team", "what date": the noun after the question word is the answer's
    # kind (not after "what's", where a verb follows; after "whose" it is what the
    # answer owns: "whose *account*" asks for the account's holder).
    if wh is not None and wh.word in {"which", "what"} and not wh.possessive:
        for follower in words[wh.pos + 1 : wh.pos + 4]:
            if follower.stop or follower.pos in masked:
                break
            if type_positions and _verb_form(follower.word):
                break  # "which team *owns* ...": the verb ends the noun
            if follower.name_like and any(not words[p].name_like for p in type_positions):
                # "which person wrote *Harbour* Lights", "which rack *7720* is in": a
                # name after a common noun is what the question is about, not the
                # answer's kind (names before it qualify it: "which *Acme* service",
                # and may be it: "which *Hannah* owns it?").
                break
            type_positions.add(follower.pos)
            if follower.possessive:  # "which supplier's shipment": the supplier is asked for
                break
    lowered = " ".join(_MASK if t.pos in masked else t.word for t in words)
    history = None
    if _ALL_VALUES.search(lowered):
        history = "all"
    elif stems & _FIRST or _FIRST_PHRASES.search(lowered):
        history = "first"
    elif (
        stems & (_PREVIOUS - {_BEFORE})
        or ("from" in {t.word for t in cue_words} and stems & _CHANGE)
        or (_BEFORE in stems and _looks_back(words, masked))
    ):
        history = "previous"
    type_stems = {words[p].stem for p in type_positions}
    asks_speaker = wh is not None and (
        wh.word in {"who", "whom"} or bool(type_stems & (_ASKS_FOR_SPEAKER | PERSON_NOUNS))
    )
    start = max([*type_positions, wh.pos]) if wh is not None else -1
    after_wh = tuple(t.pos for t in content if t.pos > start)
    nxt = words[wh.pos + 1] if wh is not None and wh.pos + 1 < len(words) else None
    count = wh is not None and wh.word == "how" and nxt is not None and nxt.word == "many"
    hint = None
    if wh is not None:
        # "how long" / "how much" hint at a duration or a cost; a bare "how" at a method.
        measured = wh.word == "how" and nxt is not None and nxt.word in _WH_HINTS
        key = nxt.word if measured and nxt is not None else wh.word
        if key in _WH_HINTS and not (wh.word == "how" and nxt is not None and nxt.word == "many"):
            anchor = nxt if measured and nxt is not None else wh
            hint = Token(anchor.pos, _WH_HINTS[key], stem(_WH_HINTS[key]))
    shape_stems = (
        type_stems
        | ({hint.stem} if hint else set())
        | ({stem(nxt.word)} if wh is not None and wh.word == "how" and nxt is not None else set())
    )
    shape = next((name for name, words_ in _SHAPE_WORDS.items() if shape_stems & words_), None)
    used_to = _used_to(words, masked)
    if history is None and used_to:
        history = "previous"
    cues = tuple(
        [
            (t.pos, "first" if t.stem in _FIRST else "previous", False)
            for t in content
            if t.stem in _FIRST | _PREVIOUS and t.pos not in masked
        ]
        + [(pos, "previous", True) for pos in used_to]
    )
    co_prefix = bool(_CO_PREFIX.search(text))
    siblings = frozenset(
        t.pos
        for t in cue_words
        if t.stem in _SIBLING
        or (t.word == "other" and t.pos > 0 and words[t.pos - 1].word in _WH)
        or (t.word == "co" and co_prefix)
    )
    return Question(
        text=text,
        words=words,
        content=content,
        wh=wh,
        type_positions=frozenset(type_positions),
        history=history,
        asks_speaker=asks_speaker,
        after_wh=after_wh,
        count=count,
        hint=hint,
        cues=cues,
        keys=frozenset(_keys(words)),
        shape=shape,
        at=_positions((t.stem, t.pos) for t in words),
        prefixed=_positions(
            (t.stem[:k], t.pos)
            for t in words
            if not t.stop and not t.word.isdigit()
            for k in range(3, len(t.stem))
        ),
        sibling_positions=siblings,
        masked=masked,
    )


def _verb_form(word: str) -> bool:
    """A word after the "which X" noun that reads as its verb: "owns", "depends", "reported"."""
    return len(word) > 3 and (
        word.endswith("ed") or (word.endswith("s") and not word.endswith("ss"))
    )


_PAST = {"was", "were", "did", "had", "used"}
_BEFORE = stem("before")
#: History cues by class, for the form model (:mod:`.forms`): each a set of stems.
HISTORY_CUES = {"first": frozenset(_FIRST), "previous": frozenset(_PREVIOUS)}
#: Words after which "used to" is not a past habit: "is used to reach", "got used to it",
#: "has used to" (rare), "we're used to".
_NOT_HABIT = frozenset(
    "is are was were be been being am get gets got getting gotten has have had re m s isn "
    "aren wasn weren".split()
)


def _used_to(words: Sequence[Token], masked: frozenset[int]) -> tuple[int, ...]:
    """Where "used to" ("who used to run it") or "use to" ("what did it use to be
    called") says a past habit: the history cue of two or three words no single word of
    which is one. After a form of be or get it is another sense ("the key used to open
    it" is not told apart, and the reader's other evidence decides)."""
    out = []
    for a, b in pairwise(words):
        if b.word != "to" or a.pos in masked or b.pos in masked:
            continue
        before = words[a.pos - 1].word if a.pos > 0 else ""
        after = words[b.pos + 1].word if b.pos + 1 < len(words) else ""
        # "what did it use to carry?": a habit when its verb ends the question ("what did
        # she use to open it" asks for a tool).
        ends = b.pos + 2 == len(words)
        if (a.word == "used" and before not in _NOT_HABIT) or (
            a.word == "use" and (after == "be" or ends)
        ):
            out.append(a.pos)
    return tuple(out)


def _looks_back(words: Sequence[Token], masked: frozenset[int]) -> bool:
    """Whether "before" dates a value ("what was it before it changed") rather than
    orders work ("which patch has to ship before the festival goes live")."""
    before = next(t.pos for t in words if t.stem == _BEFORE and t.pos not in masked)
    after = {t.stem for t in words[before + 1 :]}
    return bool(after & (_CHANGE | _CHANGE_NOUNS)) or any(t.word in _PAST for t in words)


def _positions(pairs: Iterable[tuple[str, int]]) -> dict[str, tuple[int, ...]]:
    found: dict[str, list[int]] = {}
    for key, pos in pairs:
        found.setdefault(key, []).append(pos)
    return {key: tuple(ps) for key, ps in found.items()}


def _keys(words: Sequence[Token]) -> set[str]:
    keys: set[str] = set()
    for t in words:
        keys.add(t.stem)
        if not t.stop and not t.word.isdigit():
            keys.update(t.stem[:k] for k in range(3, len(t.stem)))
    return keys


#: Function words that name nothing even inside a name (the rest may: "Cop *Out*", "*They*").
_NEVER_KEYS = frozenset(
    "a an the of and or to in on at by for with from is are was were be been do does did "
    "what which who whom whose where when why how".split()
)


def lookup_keys(question: Question) -> list[str]:
    """The index keys to ask a store for: content stems, prefixes for abbreviations, and the
    function words next to them, which may be part of a name ("Cop Out")."""
    words = question.words
    stops = {t.stem for t in words if t.stop and len(t.word) > 1}
    beside = {
        t.stem
        for t in words
        if t.stop
        and t.word not in _NEVER_KEYS
        and any(0 <= j < len(words) and not words[j].stop for j in (t.pos - 1, t.pos + 1))
    }
    return sorted((question.keys - stops) | beside)


#: Words that, right before a value, ask whether it has ended: "done loading", "finished
#: charging", "no longer pending", "no longer in repair", and "out of repair" of a value
#: "in repair" ("out of Leeds" of a place, "out of action" of a value, say no such thing).
_DONE = {"done", "finished", "stopped", "quit"}
_SKIPPED = {"the", "a", "an", "with"}
_PLACED = {"in", "at", "on", "under", "with"}


@dataclass(frozen=True, slots=True)
class Ended:
    """A question's words asking whether a value has ended: the position of the word
    that names the value, the stems of the words saying it ended, and whether only a
    value placed "in" something ends that way ("out of repair" of "in repair")."""

    pos: int
    said: frozenset[str]
    out_of: bool = False


def ended_words(q: Question) -> list[Ended]:
    """Where a question asks whether a value has *ended* rather than whether it holds."""
    words = q.words
    out: list[Ended] = []
    for t in words:
        if t.pos in q.masked:
            continue
        before = words[t.pos - 1].word if t.pos > 0 else ""
        rest = [w for w in words[t.pos + 1 :] if w.word not in _SKIPPED]
        if t.word in _DONE and rest and not rest[0].stop:
            out.append(Ended(rest[0].pos, frozenset({t.stem})))
        elif t.word == "longer" and before == "no" and rest:
            # "no longer pending", "no longer in repair" (a place word, then the value's)
            first = rest[1] if rest[0].word in _PLACED and len(rest) > 1 else rest[0]
            out.append(Ended(first.pos, frozenset({"no", t.stem})))
        elif t.word == "of" and before == "out" and rest and not rest[0].stop:
            out.append(Ended(rest[0].pos, frozenset({"out", t.stem}), out_of=True))
    return out


#: Words that set a name aside: "other than Scene 12, what needs crane 2?", "which crew
#: is Ines on besides crew 4?" (the name after them is neither what the question is about
#: nor its answer).
_ASIDE = {"except", "besides", "excluding"}
_ASIDE_PAIRS = {("other", "than"), ("apart", "from"), ("aside", "from"), ("not", "counting")}


def set_aside(q: Question) -> frozenset[int]:
    """The positions of the words a question sets aside: the (up to four) words after
    "other than", "apart from", "besides", "except"..., up to a question word."""
    words = q.words
    out: set[int] = set()
    for t in words:
        pair = t.pos > 0 and (words[t.pos - 1].word, t.word) in _ASIDE_PAIRS
        if t.word not in _ASIDE and not pair:
            continue
        for w in words[t.pos + 1 : t.pos + 5]:
            if w.word in _WH:
                break
            out.add(w.pos)
    return frozenset(out)


def counts_events(q: Question) -> bool:
    """Whether a question counts events ("how many times has van 9 moved?"), which no
    count of a relation's current values answers."""
    words = [t.word for t in q.words]
    return any(words[i : i + 3] == ["how", "many", "times"] for i in range(max(0, len(words) - 2)))


#: "what did you say the driver was?", "what depot was it at, did we say?": the past
#: tense is the saying's, not the value's.
_REPORTED = re.compile(
    r"\b((did|do) (you|i|we|they|he|she|someone|anyone) (say|tell|mention|note|write)"
    r"|(you|i|we|they) (said|told|mentioned|noted|wrote))\b"
)


def reports_speech(q: Question) -> bool:
    """Whether a question asks what was said of a thing, with no history cue of its own:
    the value said last, which is the value now."""
    return q.history is None and bool(_REPORTED.search(" ".join(t.word for t in q.words)))


#: "was it ever REST?", "has it used PostgreSQL at some point?": whether a value held at
#: any time, which its history answers, not whether it holds now.
_EVER = re.compile(r"\b(ever|at (some|any|one) (point|time|stage))\b")


def asks_ever(q: Question) -> bool:
    return bool(_EVER.search(" ".join(t.word for t in q.words)))


#: "what did it use at turn 3?", "who held it as of turn 12?": a point in the past named
#: by a turn, which the reader does not read from words (``as_of`` pins one).
_AT_TURN = re.compile(r"\b(at|as of|on|by|in|during) turn #?\d+\b")


def names_a_turn(q: Question) -> str | None:
    """The words that name a past turn ("at turn 3"), or None."""
    found = _AT_TURN.search(" ".join(t.word for t in q.words))
    return found.group(0) if found else None


#: Verbs that, with the particle after them, say a thing left what follows: "which duty
#: came off the list?", "who got taken off crew 3?", "what was removed from van 7?".
#: Verbs of removing take these particles too ("which tag got cut off crate 31?", "which
#: patient was discharged from ward 4?"). ("dropped off" is not among them: a parcel
#: dropped off at a bay arrived there; nor "came out of": what came out of a claim
#: resulted from it.)
_LEAVING = {
    "off": {
        *"came come comes taken took pulled struck crossed knocked cut cleared wiped".split(),
        *"scrubbed stripped deleted removed".split(),
    },
    "from": {
        *"removed deleted dropped drop drops taken took pulled struck moved cut cleared".split(),
        *"withdrawn withdrew discharged unloaded released excluded stripped".split(),
    },
    "out": {"taken", "took", "pulled", "moved"},
}
#: Words before "left" that make it what remains ("who is left on crew 3?", "nothing
#: left on van 7") or left behind ("where did it get left?"), not who or what departed.
_REMAINING = frozenset(
    "is are was were be been got get gets have has had still nothing anything something "
    "any much many".split()
)
#: Words that place a thing in what follows "no longer": "no longer *in* team falcon".
_INSIDE = {"in", "on", "at", "with"}
#: Question words that ask for the thing that left.
_WHO_WHAT = {"who", "whom", "what", "which"}


def _leaving_verb(q: Question, particle: int) -> int | None:
    """Where the verb of leaving stands whose particle is at ``particle`` ("came off",
    "taken back out of"), or ``None`` when the word before it is no such verb."""
    words = q.words
    at = particle - 1
    if f"{words[at].written}-{words[particle].written}" in q.text:
        return None  # one word written with a hyphen: a noun, "the wind cut-off"
    if words[at].word == "back" and at > 0:
        at -= 1  # "taken back out of", "pulled back off"
    return at if words[at].word in _LEAVING[words[particle].word] else None


def left_from(q: Question) -> frozenset[int]:
    """Where a question names what a thing *left*, when it asks for the thing that left
    it: the words after "came off", "removed from", "taken (back) out of", "cleared off",
    "left" or "no longer in" (see ``_LEAVING``), when a "who", "what" or "which" (and at
    most four words) comes before the verb:
    "which duty came off the okafor list?", "who left team falcon?", "who is no longer
    in team falcon?". Empty when it does not ask that: "who's left on crew 3?" asks who
    remains, "the recorder that came off PAM-3: where is it?" where the recorder is, and
    "who was taken off 5120, which case is she on?" which case.

    What such a question asks for is a value that *ended* in what follows, which a
    reading of the values held now answers the wrong way round."""
    words = q.words
    for t in words:
        if t.pos in q.masked or t.pos == 0:
            continue
        before = words[t.pos - 1]
        if t.word == "left":
            if before.word in _REMAINING or before.possessive:
                continue
            verb, rest = t.pos, t.pos + 1
        elif t.word in _LEAVING and (at := _leaving_verb(q, t.pos)) is not None:
            verb, rest = at, t.pos + 1
            if t.word == "out":
                if rest >= len(words) or words[rest].word != "of":
                    continue
                rest += 1
        elif t.word in _INSIDE and before.word == "longer" and t.pos >= 2:
            if words[t.pos - 2].word != "no":
                continue
            verb, rest = t.pos - 2, t.pos + 1
        else:
            continue
        asker = [w for w in words[max(0, verb - 6) : verb] if w.word in _WHO_WHAT]
        if not asker or verb - asker[-1].pos > 5:
            continue
        if any(w.word in _WH or w.word == "that" for w in words[asker[-1].pos + 1 : verb]):
            continue  # "who is on the crate that came off van 7?": the crate left it
        if any(w.word in _WH for w in words[rest:]):
            return frozenset()  # a second question asks something else of what left
        end = next((w.pos for w in words[rest:] if w.word == "and"), len(words))
        return frozenset(range(rest, end))
    return frozenset()


_PRONOUNS = {"it", "its", "them", "they", "their", "he", "she", "him", "her", "his"}


def asks_both(q: Question) -> bool:
    """Whether a question asks two things, the second of the first's answer: "which
    plough covers km 9, and who drives it?" (a question word, then "and", a question word
    and a pronoun for the first answer). A question opening with "and" follows up another
    and asks one thing."""
    words = q.words
    first = next((t for t in words if t.word in _WH), None)
    if first is None or words[0].word == "and":
        return False
    for t in words[first.pos + 1 :]:
        if t.word != "and" or t.pos + 1 >= len(words) or words[t.pos + 1].word not in _WH:
            continue
        return any(w.word in _PRONOUNS for w in words[t.pos + 2 :])
    return False
