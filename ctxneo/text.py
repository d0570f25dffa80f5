"""Words from names and questions: splitting, stemming and stopwords.

Entity names are identifiers as often as prose (``Service_Checkout``,
``AuthModule``, ``Ticket_4471``, ``AWS us-east-1``), so a name is split on
underscores, punctuation, case changes and letter/digit boundaries, and every
piece is lower-cased and stemmed with the Snowball English stemmer. Questions
go through the same function, so "the checkout service's" and
``Service_Checkout`` meet on the stems ``checkout`` and ``servic``.
"""

from __future__ import annotations

import itertools
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import snowballstemmer

# A Snowball stemmer keeps its working word on the instance, so one shared by
# threads (MCP tools run in worker threads) returns another call's stem or
# raises IndexError: each thread gets its own.
_LOCAL = threading.local()


class _Stemmer(Protocol):
    def stemWord(self, word: str) -> str: ...


def _stemmer() -> _Stemmer:
    stemmer: _Stemmer | None = getattr(_LOCAL, "stemmer", None)
    if stemmer is None:
        stemmer = _LOCAL.stemmer = snowballstemmer.stemmer("english")
    return stemmer


# A word: a run of letters/digits (any script), keeping an apostrophe suffix
# ("Checkout's") so it can be dropped deliberately below.
# Numbers keep their inner dots and commas ("3.0.0", "12,000", "0.5").
_WORD = re.compile(r"[^\W_]+(?:(?<=\d)[.,]\d+)*(?:['’][^\W_]+)?")
# Boundaries inside an identifier: aB, ABc (acronym then word), a1, 1a.
_ACRONYM_PLURAL = re.compile(r"\b([A-Z]{2,})s\b")
_CAMEL = re.compile(
    r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])"
)

#: Function words that never identify an entity or a relation.
STOPWORDS = frozenset(
    """
    a an the of to in on at by for from with without into onto about as and or but nor so
    is are was were be been being am do does did done doing has have had having
    it its it's this that these those there here which what who whom whose where when why how
    i me my we us our you your he him his she her they them their one ones
    any some all each every no not only same such than then too very can could
    will would shall should may might must just also still yet now currently current
    please tell know let s t up out off down
    """.split()
)


# Irregular past forms the stemmer leaves alone ("led" is not "lead" to Snowball).
_IRREGULAR = {
    past: base
    for base, forms in {
        "lead": "led",
        "run": "ran",
        "build": "built",
        "send": "sent",
        "hold": "held",
        "make": "made",
        "choose": "chose chosen",
        "buy": "bought",
        "bring": "brought",
        "pay": "paid",
        "sell": "sold",
        "tell": "told",
        "write": "wrote written",
        "find": "found",
        "keep": "kept",
        "take": "took taken",
        "give": "gave given",
        "go": "went gone",
        "begin": "began begun",
        "break": "broke broken",
        "drive": "drove driven",
        "fall": "fell fallen",
        "feel": "felt",
        "fight": "fought",
        "freeze": "froze frozen",
        "grow": "grew grown",
        "hide": "hid hidden",
        "know": "knew known",
        "lose": "lost",
        "mean": "meant",
        "meet": "met",
        "ride": "rode ridden",
        "rise": "rose risen",
        "see": "saw seen",
        "seek": "sought",
        "sit": "sat",
        "speak": "spoke spoken",
        "spend": "spent",
        "stand": "stood",
        "steal": "stole stolen",
        "teach": "taught",
        "think": "thought",
        "throw": "threw thrown",
        "understand": "understood",
        "wake": "woke woken",
        "wear": "wore worn",
        "win": "won",
        "say": "said",
        "do": "did done",
        "have": "had",
        "leave": "left",
        "draw": "drew drawn",
        "fly": "flew flown",
        "forget": "forgot forgotten",
        "get": "got gotten",
        "lend": "lent",
        "light": "lit",
        "shoot": "shot",
        "sink": "sank sunk",
        "strike": "struck",
        "swim": "swam swum",
        "undertake": "undertook undertaken",
        "withdraw": "withdrew withdrawn",
        "oversee": "oversaw overseen",
        "bind": "bound",
        "catch": "caught",
        "dig": "dug",
        "feed": "fed",
        "forbid": "forbade forbidden",
        "overtake": "overtook",
        "rebuild": "rebuilt",
        "redo": "redid redone",
        "rewrite": "rewrote rewritten",
        "sign": "signed",
        "stick": "stuck",
        "weave": "wove woven",
    }.items()
    for past in forms.split()
}


#: Number words are numbers: "pump nine" names ``Pump_09``, "seventeen" ``H-17``.
NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
     "ninety": "90", "hundred": "100"}  # fmt: skip


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Snowball stem of a lower-case word (digits pass through, leading zeros
    dropped; a number word is its number)."""
    if word.isdigit():
        return word.lstrip("0") or "0"
    number = NUMBER_WORDS.get(word)
    if number is not None and word != "one":  # ("one" is as often a pronoun: "which one")
        return number
    return _stemmer().stemWord(_IRREGULAR.get(word, word))


@lru_cache(maxsize=100_000)
def _pieces(raw: str) -> tuple[str, ...]:
    """The parts of one written word at case and letter/digit boundaries."""
    if raw.isalpha() and (raw.islower() or raw[1:].islower()):
        return (raw,)  # the common case: "service", "Checkout"
    if raw.isdecimal():
        # A number ("1042" of ``Svc_Amber_Gateway_1042``): every boundary _CAMEL splits at
        # has a letter on one side, and these are all \d, so it is one piece. Most names
        # carry a number of their own, which the regex split cost on every new name.
        return (raw,)
    if raw.endswith("s") and _ACRONYM_PLURAL.search(raw):
        raw = _ACRONYM_PLURAL.sub(r"\1", raw)  # "GPUs" -> "GPU"
    return tuple(p for part in _CAMEL.split(raw) for p in part.split("'") if p)


def _split(text: str) -> list[tuple[str, str, bool, int]]:
    """Words of ``text`` in order: (lower-case, as written, ended in a possessive ``'s``,
    index of the written word it came from)."""
    words: list[tuple[str, str, bool, int]] = []
    for group, raw in enumerate(_WORD.findall(text)):
        possessive = False
        if "'" in raw or "’" in raw:
            raw = raw.replace("’", "'")
            possessive = raw[-2:] in ("'s", "'S")
            if possessive:
                raw = raw.split("'")[0]
        pieces = _pieces(raw)
        last = len(pieces) - 1
        words.extend((p.lower(), p, possessive and i == last, group) for i, p in enumerate(pieces))
    return words


@lru_cache(maxsize=100_000)
def _lower_pieces(raw: str) -> tuple[str, ...]:
    if "'" in raw or "’" in raw:
        raw = raw.replace("’", "'")
        if raw[-2:] in ("'s", "'S"):
            raw = raw.split("'")[0]
    return tuple(p.lower() for p in _pieces(raw))


def split_words(text: str) -> list[str]:
    """Split text or an identifier into lower-case words, in order.

    ``Service_Checkout's`` -> service, checkout; ``AuthModule`` -> auth,
    module; ``us-east-1`` -> us, east, 1; ``HTTPServer2`` -> http, server, 2.
    (The same words as :func:`tokens`, without their positions; faster for names.)
    """
    return [w for raw in _WORD.findall(text) for w in _lower_pieces(raw)]


@dataclass(frozen=True, slots=True)
class Token:
    """One word of a text: its position, surface form and stem."""

    pos: int
    word: str
    stem: str
    possessive: bool = False
    written: str = ""  # the word as written, case kept
    group: int = 0  # which written word it came from: "A3" gives two tokens of one group
    stop: bool = False  # a function word ("the", "of", "is")
    signed: bool = False  # a number written with a minus sign ("-18"; see signed_words)

    @property
    def value_stem(self) -> str:
        """The stem, with the sign of a signed number: -250 is not 250."""
        return "-" + self.stem if self.signed else self.stem

    @property
    def name_like(self) -> bool:
        """Written as a name is: capitalised after the first word, or with a digit."""
        return (self.pos > 0 and self.written[:1].isupper()) or any(c.isdigit() for c in self.word)


def tokens(text: str) -> list[Token]:
    """Every word of ``text`` with its position and stem."""
    letters = _name_letters(text) if "a" in text.lower() else frozenset()
    signed = signed_words(text) if _MAY_SIGN.search(text) else frozenset()
    return [
        Token(i, w, stem(w), p, raw, g, w in STOPWORDS and g not in letters, g in signed)
        for i, (w, raw, p, g) in enumerate(_split(text))
    ]


# A minus sign before a number that is not joined to a word before it: "-18", "at -250",
# "(-0.5)"; not "OPS-7730", "us-east-1" or "2026-03-14", where the dash joins. Or the
# word: "minus 30".
_SIGN = re.compile(r"(?<![^\W_])(?<![.,])[-−](?=\d)|\b(?:minus|negative)\s+(?=\d)", re.IGNORECASE)


#: What a text must hold for a number of it to be signed (a cheap test, done first).
_MAY_SIGN = re.compile(r"[-−]|minus|negative", re.IGNORECASE)


@lru_cache(maxsize=4096)
def signed_words(text: str) -> frozenset[int]:
    """The written words (groups of :func:`_split`) that are numbers written with a minus
    sign. The sign is part of the number: a freezer at -18 is not at 18, an account of
    -250 not one of 250."""
    starts = {m.end() for m in _SIGN.finditer(text)}
    if not starts:
        return frozenset()
    return frozenset(g for g, m in enumerate(_WORD.finditer(text)) if m.start() in starts)


@lru_cache(maxsize=100_000)
def number_signs(name: str) -> tuple[tuple[str, bool], ...]:
    """The numbers that stand alone in a name ("-250", "18 C", "at -4"), each with
    whether it is written with a minus sign; a number joined to a word before it
    ("replica-2", "Pump_09") has no sign and is left out."""
    out: dict[str, bool] = {}
    signed = signed_words(name) if _MAY_SIGN.search(name) else frozenset()
    for g, m in enumerate(_WORD.finditer(name)):
        if not m.group()[:1].isdigit():
            continue
        before = name[m.start() - 1 : m.start()]
        if g in signed or not (before in ("_", "-", "−") or before.isalnum()):
            out.setdefault(_lower_pieces(m.group())[0], g in signed)
    return tuple(out.items())  # (cached: not a dict a caller could change)


# "a" that cannot be the article: an article goes before its noun, so an "a" ending a
# clause, owning something or joined to another word is a letter of a name ("in stack
# room A?", "A's keys", "lot 7731-a").
_LETTER_A = re.compile(r"(?<![^\W_])[aA](?![^\W_])")
_CLAUSE_END = re.compile(r"\s*(?:[?.!,;:)\]]|$)")
#: Nothing but spaces (or quotes, brackets, dashes) since the text's start or a
#: sentence's end: where an article is written with a capital.
_SENTENCE_START = re.compile(r"(?:^|[.?!:]\s)[\s\"'“‘(\[-]*$")


def _name_letters(text: str) -> frozenset[int]:
    """The written words (groups of :func:`_split`) that are the letter "a" of a name:
    joined to a name ("Pump-A"), ending a clause ("is it on A?"), or a capital "A" inside
    a sentence ("dryer A load?", "the A shift"), which in text that is not all
    capitals is a letter, never the article (written "a" there)."""
    at = {
        m.start()
        for m in _LETTER_A.finditer(text)
        if text[m.start() - 1 : m.start()] in ("-", "_")
        or text[m.end() : m.end() + 1] in ("-", "_", "'", "’")
        or _CLAUSE_END.match(text, m.end())
        or (m.group() == "A" and _inside_a_sentence(text, m.start()))
    }
    if not at:
        return frozenset()
    return frozenset(g for g, m in enumerate(_WORD.finditer(text)) if m.start() in at)


def _inside_a_sentence(text: str, at: int) -> bool:
    """Whether the capital at ``at`` stands inside a sentence of a text not written all in
    capitals (where a capital is no sign of anything). Read only for a capital "A": the
    texts of facts pass through here as they are written."""
    return text != text.upper() and not _SENTENCE_START.search(text, 0, at)


@lru_cache(maxsize=256)
def written_ids(text: str) -> dict[int, int]:
    """The written words of ``text`` (the ``group`` of its tokens) that stand in an
    identifier of words joined by "_" or "-" with no space ("Svc_New", "ops-7730"), each
    to its identifier's index. (One written word is not one: "14th" is a day, "SvcNew" may
    be prose.)"""
    out: dict[int, int] = {}
    ident = -1
    end = -1
    for group, m in enumerate(_WORD.finditer(text)):
        if end >= 0 and m.start() - end == 1 and text[end] in "_-":
            out.setdefault(group - 1, ident)
            out[group] = ident
        else:
            ident += 1
        end = m.end()
    return out


@lru_cache(maxsize=100_000)
def _word_stems(raw: str) -> tuple[str, ...]:
    """The stems of one written word's lower-case pieces (see :func:`split_words`)."""
    if raw.isdecimal():  # one piece, no case (see _pieces): a name's own number, seen once
        return (stem(raw),)
    return tuple(map(stem, _lower_pieces(raw)))


@lru_cache(maxsize=500_000)
def name_stems(name: str) -> tuple[str, ...]:
    """The stems of an entity or predicate name, in order, duplicates kept."""
    # ``stem`` of each of split_words(name), a written word at a time: a new entity is
    # stemmed once, when it is first written, and its words (Svc, Amber, Gateway) recur
    # across names, so their stems are looked up whole instead of piece by piece (the
    # stemming of new names was a fifth of a batched ingest).
    raws = _WORD.findall(name)
    if len(raws) == 1:
        return _word_stems(raws[0])
    return tuple(itertools.chain.from_iterable(map(_word_stems, raws)))


def stems_of(*names: str) -> set[str]:
    """The stems of every word of ``names`` (a fact's subject, relation and object)."""
    return {st for name in names for st in name_stems(name)}


def index_keys(name: str) -> frozenset[str]:
    """The keys an entity is found under in a store's token index."""
    return frozenset(name_stems(name))


def is_identifier(name: str) -> bool:
    """Whether a name looks like an identifier (``AuthModule``, ``Ticket_4471``,
    ``ACC-55019``), not prose ("15 minutes", "gluten-free")."""
    name = name.strip()
    if " " in name:
        return False
    if "_" in name or re.search(r"[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]", name):
        return True
    return "-" in name and bool(re.search(r"[A-Z\d]", name))


#: The words of a fact's text that link its entities: at most this many stems a fact.
MAX_SAID = 48


@lru_cache(maxsize=20_000)
def said_stems(text: str) -> tuple[str, ...]:
    """The distinct stems of what was said when a fact was stated, in order: content
    words only (no function words, no single letters but digits)."""
    out: dict[str, None] = {}
    for t in tokens(text):
        if t.stop or (len(t.word) < 2 and not t.word.isdigit()):
            continue
        out[t.stem] = None
        if len(out) >= MAX_SAID:
            break
    return tuple(out)
