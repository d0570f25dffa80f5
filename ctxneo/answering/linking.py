"""Stage 2, anchors: which entities of the memory the question names, and how surely.

Candidates come from the store's token index (every entity sharing a stem, a
number or an abbreviation with the question); :func:`cover` measures how much of
each name the question covers and where. Whether a candidate is really named is
then a learned probability (:class:`Linker`, a logistic model fitted on the
training corpus) over what a reader would weigh: how much of the name is covered
and how exactly, whether its number is the question's number (``CX_31`` is not
``CX_318``), how rare the covered words are among the memory's names, whether a
longer name covers the same words, whether the words are written as a name is.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ctxneo.answering.entities import Cover, cover
from ctxneo.answering.match import Matcher
from ctxneo.answering.question import Question
from ctxneo.meaning import Meaning
from ctxneo.stores.base import EntityHit
from ctxneo.text import (
    STOPWORDS,
    Token,
    is_identifier,
    name_stems,
    number_signs,
    split_words,
    written_ids,
)

#: "I", "me", "my": the asking agent.
FIRST_PERSON = frozenset({"i", "me", "my", "mine"})

LINK_FEATURES = (
    "coverage",
    "exact",
    "positions",
    "name_parts",
    "spread",
    "name_has_marks",
    "marks_matched",
    "marks_missed",
    "question_mark_unmatched",
    "rarity",
    "sharing",
    "dominated",
    "written_as_name",
    "in_which_noun",
    "only_common_words",
    "prose_name",
    "alias",
    "first_person",
    "hits",
    "verbatim",
    "said_words",
    "said_share",
    "said_only",
    "said_rarity",
    "texts_seen",
    "other_word",
)


@dataclass(frozen=True, slots=True)
class Anchor:
    """An entity the question may name: where, how much of its name, and how surely."""

    entity: str
    positions: frozenset[int]
    coverage: float
    exact: bool
    features: tuple[float, ...] = field(compare=False)
    p: float = 0.0


class Linker:
    """P(named | features): a logistic model over :data:`LINK_FEATURES`."""

    def __init__(self, coef: Sequence[float], intercept: float) -> None:
        if len(coef) != len(LINK_FEATURES):
            raise ValueError(f"linker has {len(coef)} weights for {len(LINK_FEATURES)} features")
        self.coef = list(coef)
        self.intercept = intercept

    def probability(self, features: Sequence[float]) -> float:
        # (the same products summed in the same order, in C)
        z = self.intercept + sum(map(operator.mul, self.coef, features))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def to_dict(self) -> dict[str, object]:
        return {"features": list(LINK_FEATURES), "coef": self.coef, "intercept": self.intercept}

    @classmethod
    def from_dict(cls, doc: Mapping[str, object]) -> Linker:
        if list(doc["features"]) != list(LINK_FEATURES):  # type: ignore[call-overload]
            raise ValueError("linker features differ from this version's")
        return cls(doc["coef"], float(doc["intercept"]))  # type: ignore[arg-type]


def _prior(features: Sequence[float]) -> float:
    """Before a linker is fitted: the share of the name covered, halved when shared."""
    f = dict(zip(LINK_FEATURES, features, strict=True))
    return f["coverage"] * (0.5 if f["sharing"] > 1 or f["dominated"] else 1.0)


def _verbatim(words: Sequence[str], name: Sequence[str]) -> range | None:
    """Where the name's words stand together, in order, in the question."""
    n = len(name)
    if not n:
        return None
    name = list(name)
    for i in range(len(words) - n + 1):
        if words[i : i + n] == name:
            return range(i, i + n)
    return None


def _said_positions(q: Question, said: frozenset[str], named: Cover | None) -> frozenset[int]:
    """Content words of the question whose stems the entity's facts were said in, outside
    the words its name covers."""
    if not said:
        return frozenset()
    taken = named.positions.keys() if named is not None else set()
    return frozenset(t.pos for t in q.words if not t.stop and t.stem in said and t.pos not in taken)


def candidates(
    q: Question,
    hits: Sequence[EntityHit],
    meaning: Meaning,
    linker: Linker | None,
    speaker: str | None = None,
    relation_words: frozenset[int] = frozenset(),
) -> list[Anchor]:
    """Every hit the question covers some of, with its link probability, best first.
    ``relation_words``: the question's positions that name a relation in memory."""
    covers = []
    lowered = [t.word for t in q.words]
    verbatim: dict[str, bool] = {}  # (whether the question writes a surface in full)
    for hit in hits:
        best = None
        for alias, surface in enumerate((hit.name, *hit.aliases)):
            c = cover(q, surface)
            run = _verbatim(lowered, split_words(surface))
            if run is not None:
                # Written in full, as the name is: exact, whatever its parts ("H-7").
                c = Cover(1.0, dict.fromkeys(run, 1.0), True, frozenset(name_stems(surface)))
            if c.coverage > 0 and (best is None or c.coverage > best[1].coverage):
                best = (alias > 0, c, surface)
                verbatim[surface] = run is not None
        # The words its facts were said in that the question uses, beyond its name's.
        said = _said_positions(q, hit.said, best[1] if best else None)
        if best is None and said:
            best = (False, Cover(0.0, {}, False, frozenset()), hit.name)
        if best is not None:
            covers.append((hit.name, *best, said))
    having: dict[str, int] = {}
    said_by: dict[int, int] = {}
    for _, _, c, _, said in covers:
        for st in c.stems:
            having[st] = having.get(st, 0) + 1
        for p_ in said:
            said_by[p_] = said_by.get(p_, 0) + 1
    words = q.words
    content = sum(1 for t in words if not t.stop)
    # Whether this memory keeps the words facts were said in (some hit was found by them):
    # where it does not, no entity is found by its facts' words, named or not.
    texts_seen = float(any(h.said for h in hits))
    question_marks = {t.pos for t in words if not t.stop and _mark(t.word)}
    joined = written_ids(q.text)
    out: list[Anchor] = []
    # Each cover's positions as a set, made once: every anchor is weighed against every
    # other (a cover is kept in ``covers`` for the whole loop, so its id is its own).
    positions_of = {id(c): frozenset(c.positions) for _, _, c, _, _ in covers}
    for name, alias, c, surface, said in covers:
        parts = name_stems(surface)
        marks = [s for s in parts if _mark(s)]
        matched_marks = [s for s in c.stems if _mark(s)]
        # The anchor's positions are its name's: those are not relation words. Words its
        # facts were said in may well be ("Harbor St *opens* at 11" for "when does harbor
        # st open?"), so they only count as features.
        named = positions_of[id(c)]
        dominated = bool(named) and any(
            oc is not c
            and (named < (op := positions_of[id(oc)]) or (named == op and oc.coverage > c.coverage))
            for _, _, oc, _, _ in covers
        )
        if (
            _other_mark(words, named, marks, matched_marks)
            or _other_part(words, joined, named, marks, matched_marks)
            or _part_of_a_word(words, joined, named, marks)
            or _other_sign(words, named, surface)
        ):
            continue  # a look-alike of the entity named, not it
        covered = [words[p] for p in sorted(named)]
        features = (
            c.coverage,
            float(c.exact),
            float(len(named)),
            float(len(parts)),
            float(max(named) - min(named) + 1 - len(named)) if named else 0.0,
            float(bool(marks)),
            float(len(matched_marks)),
            float(len(marks) - len(set(matched_marks))),
            float(bool(question_marks - named) and bool(marks)),
            min((1.0 / having[st] for st in c.stems), default=0.0),
            float(max((having[st] for st in c.stems), default=0)),
            float(dominated),
            float(any(t.name_like for t in covered)),
            float(bool(named & q.type_positions)),
            float(
                bool(covered)
                and all(meaning.common_word(t.word) and t.written.islower() for t in covered)
            ),
            float(not is_identifier(surface) and surface == surface.lower()),
            float(alias),
            0.0,
            math.log1p(len(hits)),
            float(
                verbatim[surface]
                if surface in verbatim
                else _verbatim(lowered, split_words(surface)) is not None
            ),
            float(len(said)),
            len(said) / max(1, content),
            float(c.coverage == 0.0),
            max((1.0 / said_by[p_] for p_ in said), default=0.0),
            texts_seen,
            float(_other_word(words, named, surface, c.stems, meaning, relation_words)),
        )
        p = linker.probability(features) if linker is not None else _prior(features)
        out.append(Anchor(name, named, c.coverage, c.exact, features, p))
    if speaker and first_person(q):
        mine = frozenset(t.pos for t in words if t.word in FIRST_PERSON)
        f = [0.0] * len(LINK_FEATURES)
        f[LINK_FEATURES.index("first_person")] = 1.0
        f[LINK_FEATURES.index("coverage")] = 1.0
        f[LINK_FEATURES.index("name_parts")] = float(len(split_words(speaker)))
        feats = tuple(f)
        p = linker.probability(feats) if linker is not None else 0.9
        out.append(Anchor(speaker_entity(speaker, hits), mine, 1.0, True, feats, p))
    out.sort(key=lambda a: (-a.p, -a.coverage, a.entity))
    return out


def relation_words(matcher: Matcher, predicates: Sequence[str]) -> frozenset[int]:
    """The question's positions that say a word of a relation in memory (no other name's
    word stands there: see :func:`_other_word`)."""
    return frozenset(p for name in predicates for p in matcher.names(name))


def first_person(q: Question) -> bool:
    """Whether the question speaks of its asker ("my shift", "assigned to me")."""
    return any(t.word in FIRST_PERSON for t in q.words)


def speaker_entity(speaker: str, hits: Sequence[EntityHit]) -> str:
    """The entity the asker is in memory: one named as the speaker is, else one whose name
    has the same words. A person's handle and their name in facts differ in case and
    punctuation only ("ewa.nowak" asks "is it approved by me?" of a fact "approved_by
    Ewa Nowak"); the reader looks the speaker's words up with the question's."""
    words = split_words(speaker)
    if not words or any(h.name == speaker for h in hits):
        return speaker
    same = sorted(h.name for h in hits if split_words(h.name) == words)
    return same[0] if same else speaker


def _mark(word: str) -> bool:
    """Whether a word of a name tells it from its look-alikes: a number or a letter alone
    ("Pump_09" / "Pump_19", "Stack Room A" / "Stack_Room_B"). A question that names
    another mark than a name's names another entity."""
    return word.isdigit() or (len(word) == 1 and word.isalpha())


def _same_mark(a: str, b: str) -> bool:
    # "9" is "09". (isdecimal, not isdigit: "²" is a digit that int() cannot read.)
    return a == b or (a.isdecimal() and b.isdecimal() and int(a) == int(b))


def _other_mark(
    words: Sequence[Token], named: frozenset[int], marks: list[str], matched: list[str]
) -> bool:
    """Whether the question gives another mark right beside the words it names a name by,
    where the name has a mark the question leaves out: "crew 12" does not name
    ``Crew_120``, nor "stack room A" ``Stack_Room_B``. Such a name is a look-alike of the
    one asked about, which may not be in memory at all; reading it instead would answer
    about the wrong thing."""
    if not named or not any(m not in matched for m in marks):
        return False
    for p in (min(named) - 1, max(named) + 1):
        if 0 <= p < len(words) and p not in named:
            t = words[p]
            if not t.stop and _mark(t.word) and not any(_same_mark(t.word, m) for m in marks):
                return True
    return False


def _other_sign(words: Sequence[Token], named: Iterable[int], name: str) -> bool:
    """Whether the question says a number of the name with another sign than the name's
    ("250" of ``-250``, "-18" of ``18 C``): a number's sign is part of it, so the name is
    a look-alike of the value asked about. (A number joined to a word, "replica-2", has
    no sign of its own: "the -2 replica" may name it.)"""
    signs = number_signs(name)
    if not signs:
        return False
    for p in named:
        t = words[p]
        for number, signed in signs:
            if t.signed != signed and _same_mark(t.word, number):
                return True
    return False


def says_a_look_alike(words: Sequence[Token], name: str) -> bool:
    """Whether the question says a name's own words with another mark right beside them
    ("in stack room A" of ``Stack_Room_B``, "crew 12" of ``Crew_120``): it says a
    look-alike of that name, not the name, as :func:`_other_mark` keeps linking from
    reading one as the other. (For a value a question states in words, which no anchor
    names.)"""
    return bool(look_alike_positions(words, name))


def look_alike_positions(words: Sequence[Token], name: str) -> frozenset[int]:
    """Where the question says a name's own words, when it says them with another mark
    (see :func:`says_a_look_alike`); empty when it does not."""
    signs = number_signs(name)
    if signs:
        other = frozenset(p for p, t in enumerate(words) if _other_sign(words, (p,), name))
        if other:
            return other
    parts = name_stems(name)
    marks = [s for s in parts if _mark(s)]
    if not marks:
        return frozenset()
    own = {s for s in parts if not _mark(s)}
    named = frozenset(t.pos for t in words if not t.stop and t.stem in own)
    matched = [m for m in marks if any(_same_mark(t.word, m) for t in words)]
    return named if _other_mark(words, named, marks, matched) else frozenset()


#: Two words at least this alike in meaning are of one kind (two given names, two
#: compass points, two weekdays: "james"/"sarah" 0.44, "north"/"south" 0.69), where a
#: word and one of another kind are not ("car"/"sarah" 0.05, "run"/"depot" -0.06).
SAME_KIND = 0.35


def _other_word(
    words: Sequence[Token],
    named: frozenset[int],
    surface: str,
    matched: frozenset[str],
    meaning: Meaning,
    relation_words: frozenset[int],
) -> bool:
    """Whether the question may write, right beside the words it names a name by,
    another word in the place of the name's own: "greta okafor" for ``Greta Lindqvist``,
    "TX4 QVN" for ``TX4 QMB`` (a look-alike of the one asked about, which may not be in
    memory at all). A feature, not a rule: as a rule it cost 32 right answers on
    `train/` for 11 unanswerable twins, a word beside a name being often a synonym of
    its kind word ("agreement MSA 2291" for ``Contract_MSA_2291``) or another party
    ("the Petrov-Kovacs game").

    The word counts when no relation in memory is named by it, it does not follow a
    possessive that ends the name, and it is of the name's own word's kind: a code for
    a code (written in capitals, or digits or consonants only), else a word that is no
    word of the language (a surname) or one alike in meaning (another given name). The
    name's word misspelt by a letter, or its initial, is the name's own."""
    if not named:
        return False
    stems = name_stems(surface)
    lowered = split_words(surface)
    if len(stems) < 2 or len(lowered) != len(stems):
        return False
    hit = [i for i, st in enumerate(stems) if st in matched]
    if not hit:
        return False
    first, last = words[min(named)], words[max(named)]
    for i, p in ((min(hit) - 1, first.pos - 1), (max(hit) + 1, last.pos + 1)):
        if not (0 <= i < len(stems) and 0 <= p < len(words)) or p in named:
            continue
        if p > last.pos and last.possessive:
            continue  # "nora's headshots": the name ended at the possessive
        own, t = lowered[i], words[p]
        if stems[i] in matched or own in STOPWORDS or _mark(own):
            continue
        if t.stop or _mark(t.word) or p in relation_words:
            continue
        if t.stem == stems[i] or own.startswith(t.word) or t.word.startswith(own):
            continue  # the name's own word, or its initial or a cut of it
        if _code(own):
            written_code = t.written.isupper() and len(t.written) > 1
            if not (written_code or _code(t.word)):
                continue  # a code's place taken by a word: a kind or a verb, not a code
        else:
            long_words = own.isalpha() and t.word.isalpha() and min(len(own), len(t.word)) >= 4
            if long_words and _one_edit(own, t.word):
                continue  # a misspelling of the name's word
            if meaning.common_word(t.word) and meaning.similarity(t.word, own) < SAME_KIND:
                continue  # a word of another kind than the name's
        return True
    return False


def _code(word: str) -> bool:
    """Whether a word of a name is a code rather than a word: digits in it, or a few
    consonant letters ("qmb", "fl", "qx")."""
    if any(c.isdigit() for c in word):
        return True
    return len(word) <= 4 and not any(c in "aeiouy" for c in word)


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` becomes ``b`` by one letter changed, added, dropped or two swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return a == b
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        swapped = a[i + 2 :] == b[i + 2 :] and a[i : i + 2] == b[i : i + 2][::-1]
        return a[i + 1 :] == b[i + 1 :] or swapped
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[i + 1 :] == shorter[i:]


def _part_of_a_word(
    words: Sequence[Token],
    joined: Mapping[int, int],
    named: frozenset[int],
    marks: Sequence[str] = (),
) -> bool:
    """Whether the question writes one word or identifier whole, in parts, of which the
    name covers some parts only: a word of letters in cased parts ("PostgreSQL" does
    not name ``MySQL``, nor "DevOps" ``Ops_Team``) or words joined by "_" or "-"
    ("Billing_Team" lends no word to ``Payments_Team``). A word or identifier written
    whole names one thing; a name that shares one of its parts is a look-alike, and the
    thing asked about may not be in memory at all. So is a word of digits and letters
    written whole ("7b", "B2"): one mark, which a name covering its number alone
    (``Van_7``) or its letter alone (``Dryer_B``) does not name. ("pump09" is a name's
    word and its mark, which :func:`_other_mark` weighs; an ordinal's, a time's, a
    plural's or a unit's ending, "12th", "7am", "1990s", "24h", or a number's sign
    before it, "v2", "No9", is not a mark.)"""
    for p in named:
        group = words[p].group
        ident = joined.get(group)
        if ident is not None:
            parts = [t for t in words if joined.get(t.group) == ident]
        else:
            parts = [t for t in words if t.group == group]
            if not all(t.word.isalpha() for t in parts):
                if _one_mark(parts, named, marks):
                    return True
                continue
        if len(parts) > 1 and any(t.pos not in named for t in parts):
            return True
    return False


#: Endings written onto a number that are not part of a mark: an ordinal's, a time's, a
#: plural's, a unit's ("12th", "7am", "1990s", "24h", "10x").
_NUMBER_ENDINGS = frozenset({"st", "nd", "rd", "th", "am", "pm", "s", "h", "x", "k"})
#: Letters written before a number that only say a number follows ("v2", "No9", "nr 9").
_NUMBER_PREFIXES = frozenset({"v", "no", "nr", "n"})


def _one_mark(parts: Sequence[Token], named: frozenset[int], marks: Sequence[str]) -> bool:
    """Whether ``parts`` (one written word) are a number and a letter written together
    ("7b", "B2"), of which the name has one only (``marks``: the name's; a part may be
    left out of what names it, as the "t" of "T14" is, a letter read as a stop word)."""
    if len(parts) != 2:
        return False
    digits = [t for t in parts if t.word.isdigit()]
    letters = [t for t in parts if t.word.isalpha()]
    if len(digits) != 1 or len(letters) != 1 or len(letters[0].word) > 2:
        return False
    letter = letters[0].word.lower()
    after = letters[0].pos > digits[0].pos
    if (after and letter in _NUMBER_ENDINGS) or (not after and letter in _NUMBER_PREFIXES):
        return False
    own = [t.pos in named or any(_same_mark(t.word, m) for m in marks) for t in parts]
    return sum(own) == 1


def _other_part(
    words: Sequence[Token],
    joined: Mapping[int, int],  # written word -> identifier (text.written_ids)
    named: frozenset[int],
    marks: list[str],
    matched: list[str],
) -> bool:
    """Whether the question writes an identifier whole ("Svc_New", "svc-new") of which
    the name covers a part only, while the name has a mark the question leaves out:
    ``Svc_1`` is not "Svc_New". An identifier written out names one entity; one sharing
    its prefix but with a mark of its own is a look-alike, and the entity asked about
    may not be in memory at all."""
    if not named or not any(m not in matched for m in marks):
        return False
    for p, beside in ((min(named) - 1, min(named)), (max(named) + 1, max(named))):
        if 0 <= p < len(words) and p not in named and not words[p].stop:
            ident = joined.get(words[beside].group)
            if ident is not None and joined.get(words[p].group) == ident:
                return True
    return False
