"""From question text to what it mentions: entities, predicates and cues.

Everything here is a general rule over words, stems and positions; no
scenario's phrase appears in code. An entity is linked when the question
covers enough of its name's stems (or of an alias a user registered); a
predicate's words are matched to question words by stem, by prefix (``auth``
in ``authentication``) or through the related-words lexicon.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from ctxneo.errors import ConfigError
from ctxneo.stores.base import EntityHit
from ctxneo.text import STOPWORDS, Token, is_identifier, name_stems, split_words, stem, tokens

EXACT, RELATED, PREFIX = 1.0, 0.8, 0.7

# Words that turn a question into a history or provenance question, or ask for a count.
_FIRST = {stem(w) for w in "originally original initially initial first earliest".split()}
_FIRST_PHRASES = re.compile(
    r"\b((start(ed)?|began|begin|open(ed)?) (\w+ ){0,3}(at|with|as)|to begin with"
    r"|at the (start|outset|beginning))\b"
)
# "list every value it has had", "walk me through each stage": the whole history.
_ALL_VALUES = re.compile(
    r"\b(in order|oldest first|newest first|over time|walk me through|run me through|take me "
    r"through|each (stage|step|value|version|change)|every (stage|step|value|version|change)"
    r"|(has|have) had|(has|have) (moved|gone|been) through|history of|all the (values|stages"
    r"|versions|dates|statuses|changes))\b"
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
#: Verbs of saying and deciding: "who *set* X" may ask who stated a fact.
STATED = {
    stem(w)
    for w in (
        "decide decision set say state flag log choose change confirm determine note propose "
        "announce record mention suggest detect identify find trace specify configure establish "
        "raise update "
        "make call pick report notice spot discover bump lower drop reclassify revise move switch "
        "escalate downgrade upgrade approve sign rate assess classify mark label estimate measure "
        "negotiate agree settle fix finalize finalise add remove create open close put write "
        "diagnose catch notice observe see warn alert confirm verify check log enter float pitch "
        "lock sign"
    ).split()
}
_WH = {"who", "whom", "whose", "what", "which", "where", "when", "why", "how"}
_ASKS_FOR_SPEAKER = {stem(w) for w in "agent speaker person".split()}
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
    "date": {stem(w) for w in "date day time deadline when".split()},
    "duration": {stem(w) for w in "duration period long".split()},
    "amount": {stem(w) for w in "cost price budget amount much".split()},
}


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
    cue_positions: frozenset[int]  # words that are history cues ("first", "originally")
    keys: frozenset[str]  # every stem a name part could match: stems and prefixes of words
    at: dict[str, tuple[int, ...]] = field(hash=False, compare=False)  # stem -> positions
    prefixed: dict[str, tuple[int, ...]] = field(hash=False, compare=False)  # prefix -> positions
    shape: str | None  # the answer's expected shape: date, duration, amount


def read_question(text: str) -> Question:
    """Split a question into words and find its cues (history, provenance, count)."""
    words = tuple(tokens(text))
    content = tuple(t for t in words if not t.stop)
    stems = {t.stem for t in content}
    wh = next((t for t in words if t.word in _WH), None)
    type_positions: set[int] = set()
    # "which team", "what date": the noun after the question word is the answer's
    # kind (not after "what's", where a verb follows).
    if wh is not None and wh.word in {"which", "what", "whose"} and not wh.possessive:
        for follower in words[wh.pos + 1 : wh.pos + 4]:
            if follower.stop:
                break
            type_positions.add(follower.pos)
            if follower.possessive:  # "which supplier's shipment": the supplier is asked for
                break
    history = None
    lowered = " ".join(t.word for t in words)
    if _ALL_VALUES.search(lowered):
        history = "all"
    elif stems & _FIRST or _FIRST_PHRASES.search(lowered):
        history = "first"
    elif (
        stems & (_PREVIOUS - {_BEFORE})
        or ("from" in {t.word for t in words} and stems & _CHANGE)
        or (_BEFORE in stems and _looks_back(words))
    ):
        history = "previous"
    type_stems = {words[p].stem for p in type_positions}
    asks_speaker = wh is not None and (
        wh.word in {"who", "whom"} or bool(type_stems & _ASKS_FOR_SPEAKER)
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
            hint = Token(anchor.pos, anchor.word, stem(_WH_HINTS[key]))
    shape_stems = (
        type_stems
        | ({hint.stem} if hint else set())
        | ({stem(nxt.word)} if wh is not None and wh.word == "how" and nxt is not None else set())
    )
    shape = next((name for name, words_ in _SHAPE_WORDS.items() if shape_stems & words_), None)
    cues = frozenset(t.pos for t in content if t.stem in _FIRST | _PREVIOUS)
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
        cue_positions=cues,
        keys=frozenset(_keys(words)),
        shape=shape,
        at=_positions((t.stem, t.pos) for t in words),
        prefixed=_positions(
            (t.stem[:k], t.pos)
            for t in words
            if not t.stop and not t.word.isdigit()
            for k in range(3, len(t.stem))
        ),
    )


_PAST = {"was", "were", "did", "had", "used"}
_BEFORE = stem("before")


def _looks_back(words: Sequence[Token]) -> bool:
    """Whether "before" dates a value ("what was it before it changed") rather than
    orders work ("which patch has to ship before the festival goes live")."""
    before = next(t.pos for t in words if t.stem == _BEFORE)
    after = {t.stem for t in words[before + 1 :]}
    return bool(after & (_CHANGE | _CHANGE_NOUNS)) or any(t.word in _PAST for t in words)


def _positions(pairs: Iterable[tuple[str, int]]) -> dict[str, tuple[int, ...]]:
    found: dict[str, list[int]] = {}
    for key, pos in pairs:
        found.setdefault(key, []).append(pos)
    return {key: tuple(ps) for key, ps in found.items()}


class Lexicon:
    """Groups of related words (stemmed), from ``data/related_words.txt`` and extra files."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.groups: dict[str, set[int]] = {}
        for number, line in enumerate(lines):
            line = line.split("#", 1)[0].strip()
            for word in line.split():
                for piece in split_words(word):
                    self.groups.setdefault(stem(piece), set()).add(number)

    def related(self, a: str, b: str) -> bool:
        ga = self.groups.get(a)
        return bool(ga and ga & self.groups.get(b, set()))

    @classmethod
    def default(cls, extra: Sequence[str | Path] = ()) -> Lexicon:
        lines = resources.files("ctxneo").joinpath("data/related_words.txt").read_text("utf-8")
        texts = [lines]
        env = os.environ.get("CTXNEO_LEXICON")
        for path in [*extra, *([env] if env else [])]:
            try:
                texts.append(Path(path).read_text("utf-8"))
            except (OSError, UnicodeDecodeError) as e:
                raise ConfigError(f"cannot read the lexicon {path} (CTXNEO_LEXICON?): {e}") from e
        return cls("\n".join(texts).splitlines())


@lru_cache(maxsize=200_000)
def word_match(q: str, n: str, lexicon: Lexicon) -> float:
    """How well question stem ``q`` stands for name/predicate stem ``n`` (0 when not at all)."""
    if q == n:
        return EXACT
    if min(len(q), len(n)) >= 4 and (q.startswith(n) or n.startswith(q)):
        return PREFIX
    if lexicon.related(q, n):
        return RELATED
    return 0.0


@dataclass(frozen=True, slots=True)
class Link:
    """An entity the question mentions: how much of its name, at which positions.

    ``positions`` maps each question position the name explains to a weight:
    the word's match strength scaled by ``coverage``, so a partly named entity
    explains less than a fully named one.
    """

    entity: str
    surface: str
    coverage: float
    positions: dict[int, float] = field(hash=False, compare=False)
    exact: bool = False

    @property
    def strength(self) -> float:
        return sum(self.positions.values())


@lru_cache(maxsize=100_000)
def _surface_stems(surface: str) -> tuple[tuple[str, ...], bool]:
    return name_stems(surface), is_identifier(surface)


@dataclass(frozen=True, slots=True)
class Cover:
    """How much of a name a question covers: the share, the positions, the name stems hit."""

    coverage: float
    positions: dict[int, float]
    exact: bool
    stems: frozenset[str]


_NOTHING = Cover(0.0, {}, False, frozenset())


def cover(question: Question, surface: str) -> Cover:
    """How much of ``surface``'s name the question covers, and at which positions.

    Each name stem is matched to its best question word: the same stem, or (for
    identifier names, whose parts are often abbreviations) a prefix such as
    ``auth`` of ``authentication``, or words spelling out an upper-case part
    ("picking station" for the ``PS`` of ``PS-05``). A stopword or one-letter
    part (the ``A`` of ``Source_A``, the ``2`` of ``Release_4_2``) only counts
    when it sits next to a matched distinctive part, in the name's order:
    "Source A" links ``Source_A``, "a source" does not.
    """
    stems, identifier = _surface_stems(surface)
    acronyms = _acronyms(surface)
    if (
        not acronyms
        and question.keys.isdisjoint(stems)
        and not (identifier and any(len(n) in (3, 4) and n.isalpha() for n in stems))
    ):
        return _NOTHING  # no part of the name meets any word (or prefix of one)
    words = question.words
    matched: dict[int, tuple[int, float]] = {}  # name index -> (question position, strength)
    spelled: dict[int, list[int]] = {}  # name index -> the words spelling out an acronym
    used: set[int] = set()
    for i, n in enumerate(stems):
        best: tuple[int, float] | None = None
        pos = next((p for p in question.at.get(n, ()) if p not in used), None)
        if pos is not None:
            best = (pos, EXACT)
        elif identifier and len(n) >= 3:
            pos = next((p for p in question.prefixed.get(n, ()) if p not in used), None)
            if pos is None and len(n) <= 4 and n.isalpha():
                pos = next((t.pos for t in words if t.pos not in used and _abbreviates(n, t)), None)
            if pos is not None:
                best = (pos, PREFIX)
        if best is None and n in acronyms and (run := _spelled_out(words, n, used)):
            best = (run[-1], RELATED)
            spelled[i] = run
            used.update(run)
        if best is not None:
            matched[i] = best
            used.add(best[0])
    weak = {i for i, n in enumerate(stems) if n in STOPWORDS or len(n) == 1}
    anchored = {i for i in matched if i not in weak}
    for i in matched:  # weak parts written as one word, in the name's order: "A3", "T1"
        j = i + 1
        if (
            j in matched
            and matched[j][0] == matched[i][0] + 1
            and (words[matched[i][0]].group == words[matched[j][0]].group)
        ):
            anchored |= {i, j}
    if not anchored and len(stems) == 1 and matched:
        # A one-letter or stopword name ("A") counts when written as the name is,
        # capitalised and not opening the sentence: "what does A depend on".
        pos = matched[0][0]
        if pos > 0 and words[pos].written == surface.strip() and surface.strip()[:1].isupper():
            anchored = {0}
    frontier = list(anchored)
    while frontier:  # spread from distinctive parts to neighbours met in the name's order
        i = frontier.pop()
        for j in (i - 1, i + 1):
            if j in matched and j not in anchored and matched[j][0] - matched[i][0] == j - i:
                anchored.add(j)
                frontier.append(j)
    matched = {i: m for i, m in matched.items() if i in anchored}
    if not matched:
        return _NOTHING
    weights = [0.5 if i in weak else 1.0 for i in range(len(stems))]
    coverage = sum(weights[i] * s for i, (_, s) in matched.items()) / sum(weights)
    ordered = [matched[i][0] for i in sorted(matched)]
    exact = (
        len(matched) == len(stems)
        and all(s == EXACT for _, s in matched.values())
        and ordered == list(range(ordered[0], ordered[0] + len(ordered)))
    )
    positions = dict(matched.values())
    for i, run in spelled.items():
        if i in matched:
            positions.update(dict.fromkeys(run, RELATED))
    return Cover(coverage, positions, exact, frozenset(stems[i] for i in matched))


def _abbreviates(short: str, t: Token) -> bool:
    """``svc`` for "service", ``mgr`` for "manager": same first letter, the rest in order."""
    word = t.word
    if t.stop or len(word) <= len(short) + 1 or word[0] != short[0]:
        return False
    rest = iter(word[1:])
    return all(ch in rest for ch in short[1:])


_UPPER_RUN = re.compile(r"[A-Z]{2,5}(?![a-z])")


@lru_cache(maxsize=100_000)
def _acronyms(surface: str) -> frozenset[str]:
    """Upper-case runs of a name that may be initials: the ``PS`` of ``PS-05``."""
    return frozenset(m.group(0).lower() for m in _UPPER_RUN.finditer(surface))


def _spelled_out(words: Sequence[Token], acronym: str, used: set[int]) -> list[int]:
    """Positions of consecutive question words whose initials spell ``acronym``, if any."""
    n = len(acronym)
    for start in range(len(words) - n + 1):
        run = words[start : start + n]
        if all(
            not t.stop and t.pos not in used and t.word[0] == ch
            for t, ch in zip(run, acronym, strict=True)
        ):
            return [t.pos for t in run]
    return []


def link_entities(
    question: Question,
    hits: Sequence[EntityHit],
    *,
    threshold: float = 0.5,
    distinctive: float = 0.3,
) -> list[Link]:
    """The entities among ``hits`` that the question mentions, best first.

    A name (or alias) is linked when the question covers at least half of it,
    or at least ``distinctive`` of it with a distinctive word ("the contract
    with Harbor" -> ``Harbor_MSA_2025``); a partial mention must single the
    entity out. Best first: exact mentions, then coverage times the words
    explained, then name.
    """
    # Which hits have each stem, to tell whether a partial mention singles one out.
    having: dict[str, set[str]] = {}
    for hit in hits:
        for sf in (hit.name, *hit.aliases):
            for st in name_stems(sf):
                having.setdefault(st, set()).add(hit.name)
    links: list[Link] = []
    for hit in hits:
        best: Link | None = None
        for surface in (hit.name, *hit.aliases):
            c = cover(question, surface)
            words = [question.words[p] for p in c.positions]
            if not c.exact and not any(len(w.word) > 1 and not w.stop for w in words):
                continue
            # "the crew" names no crew when there are two, but "T14" names
            # Turbine_T14 even beside "14 May".
            shared = bool(set.intersection(*(having[st] for st in c.stems)) - {hit.name})
            if not c.exact and c.coverage < 1.0 and shared:
                continue
            if c.coverage < threshold and not (
                c.coverage >= distinctive and any(len(w.word) >= 3 and not w.stop for w in words)
            ):
                continue
            # The "which X" noun describes the answer: it never anchors a non-exact mention.
            positions = {
                p: st * c.coverage
                for p, st in c.positions.items()
                if c.exact or p not in question.type_positions
            }
            if not positions:
                continue
            link = Link(hit.name, surface, c.coverage, positions, c.exact)
            if best is None or (link.exact, link.strength) > (best.exact, best.strength):
                best = link
        if best is not None:
            links.append(best)
    links.sort(key=lambda lk: (not lk.exact, -lk.coverage * lk.strength, -lk.coverage, lk.entity))
    return _drop_shadowed(links, question.type_positions)


def _drop_shadowed(links: list[Link], type_positions: frozenset[int]) -> list[Link]:
    """Drop a partial link whose words (bar the "which X" noun) a better link already owns.

    In "Service_Checkout", ``Service_Payments`` matches "service" too; in "which
    team manages what the brisk billing 88 service runs on", ``Team_Stone_88``
    matches "team" and "88" - but "88" belongs to ``Svc_Brisk_Billing_88``.
    Links come best first.
    """
    kept: list[Link] = []
    owned: set[int] = set()
    for link in links:
        words = link.positions.keys() - type_positions
        # Keep it if it is exact, or if most of its words are its own: "cluster" +
        # "crimson" (borrowed from "the crimson cache 65 service") is not a mention.
        if link.exact or not words or 2 * len(words - owned) > len(words):
            kept.append(link)
            owned |= words
    return kept


def _keys(words: Sequence[Token]) -> set[str]:
    keys: set[str] = set()
    for t in words:
        keys.add(t.stem)
        if not t.stop and not t.word.isdigit():
            keys.update(t.stem[:k] for k in range(3, len(t.stem)))
    return keys


def lookup_keys(question: Question) -> list[str]:
    """The index keys to ask a store for: content stems, and prefixes for abbreviations."""
    stops = {t.stem for t in question.words if t.stop and len(t.word) > 1}
    return sorted(question.keys - stops)


@lru_cache(maxsize=20_000)
def predicate_stems(predicate: str) -> tuple[str, ...]:
    """The meaningful stems of a predicate name (``HAS_TOKEN_EXPIRY`` -> token, expiri)."""
    return tuple(
        s
        for s, w in zip(name_stems(predicate), split_words(predicate), strict=True)
        if w not in STOPWORDS
    )


HINT_WEIGHT = 0.8


def match_predicate(question: Question, predicate: str, lexicon: Lexicon) -> dict[int, float]:
    """Question positions explained by a predicate's words, with their strength.

    A predicate word explains every question word that stands for it ("what
    *date* was it *planned* for" -> ``SCHEDULED_FOR``). The question word
    counts too, more weakly, through its hint: "where" is explained by
    ``LOCATED_AT``, "when" by ``SCHEDULED_FOR``.
    """
    out: dict[int, float] = {}
    candidates = [(t, 1.0) for t in question.content]
    if question.hint is not None:
        candidates.append((question.hint, HINT_WEIGHT))
    particles = _particles(predicate)
    hint = question.hint
    if hint is not None and particles & _HINT_PARTICLES.get(hint.stem, set()):
        # "where" is answered by X_IN / X_AT, "when" by X_ON: HELD_IN, STAYING_AT, FILED_ON.
        out[hint.pos] = RELATED * HINT_WEIGHT
    for n in predicate_stems(predicate):
        for t, weight in candidates:
            s = word_match(t.stem, n, lexicon) * weight
            nxt = t.pos + 1
            if s and nxt < len(question.words) and question.words[nxt].word in particles:
                s += PARTICLE_BONUS  # "the hold *on*" fits WAITING_ON better than HELD_BY
            if s > out.get(t.pos, 0.0):
                out[t.pos] = s
    return out


PARTICLE_BONUS = 0.25
_HINT_PARTICLES = {stem("location"): {"in", "at"}, stem("date"): {"on"}}
_PARTICLES = {"on", "by", "to", "at", "in", "for", "from", "with", "of", "into", "onto"}


@lru_cache(maxsize=20_000)
def _particles(predicate: str) -> frozenset[str]:
    return frozenset(w for w in split_words(predicate) if w in _PARTICLES)


_MONTHS = (
    "jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june "
    "july august september october november december monday tuesday wednesday thursday "
    "friday saturday sunday mon tue wed thu fri sat sun today tomorrow yesterday tonight "
    "noon midnight eod weekend week"
).split()
_UNITS = (
    "ms millisecond second sec minute min hour hr day week month year quarter night shift sprint"
).split()
_SHAPES = {
    "date": re.compile(
        r"\b(" + "|".join(_MONTHS) + r")\b|\b\d{1,2}[:/.]\d{2}\b|\b\d{4}-\d{2}"
        r"|\b\d{1,2}\s*(am|pm)\b|\bq[1-4]\b|\b(19|20)\d{2}\b|\b\d{1,2}:\d{2}(?!\d)",
        re.IGNORECASE,
    ),
    "duration": re.compile(r"\b\d+(\.\d+)?\s*(" + "|".join(_UNITS) + r")s?\b", re.IGNORECASE),
    "amount": re.compile(
        r"[$€£¥]\s*\d|\b\d+(\.\d+)?\s*(k|m|bn|million|billion|thousand|usd|eur|"
        r"gbp|dollars?|euros?|pounds?|percent|%)",
        re.IGNORECASE,
    ),
}


def has_shape(value: str, shape: str) -> bool:
    """Whether a value looks like the kind of answer a question asks for (a date, a duration...)."""
    return bool(_SHAPES[shape].search(value))


def person_like(name: str) -> bool:
    """Whether a name could answer "who": an identifier, a handle or a short proper name,
    not a phrase or a quantity ("15 minutes", "late delivery")."""
    if is_identifier(name):
        return True
    words = name.split()
    if len(words) == 1:
        return bool(re.fullmatch(r"[^\W\d_][\w.-]*", name))
    return (
        0 < len(words) <= 3 and all(w[:1].isupper() for w in words) and not re.search(r"\d", name)
    )
