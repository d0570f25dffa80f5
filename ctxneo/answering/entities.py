"""How much of a name a question covers, and where: what linking measures.

Each name stem is matched to a question word by stem, by prefix for identifier
parts (``auth`` in "authentication"), by abbreviation (``svc``) or by
spelled-out initials (``PS`` <- "picking station"); a name written out in
full, in order, is an exact mention. Whether the entity is then taken to be
named is :mod:`ctxneo.answering.linking`'s learned decision.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ctxneo.answering.question import Question
from ctxneo.text import STOPWORDS, Token, is_identifier, name_stems

EXACT, RELATED, PREFIX = 1.0, 0.8, 0.7
_UPPER_RUN = re.compile(r"[A-Z]{2,5}(?![a-z])")
SCATTER_GAP = 2  # more words than this between two parts of a name: a scattered mention
SCATTERED = 0.5


#: Names read so far (a plain dict, filled up to a bound: looked up on every walk's end).
_SURFACES: dict[str, tuple[tuple[str, ...], bool, frozenset[str]]] = {}
_SURFACES_KEPT = 200_000


def _surface(surface: str) -> tuple[tuple[str, ...], bool, frozenset[str]]:
    """What a name is made of, read once: its stems, whether it is an identifier, and its
    upper-case runs that may be initials (the ``PS`` of ``PS-05``)."""
    found = _SURFACES.get(surface)
    if found is None:
        acronyms = frozenset(m.group(0).lower() for m in _UPPER_RUN.finditer(surface))
        found = (name_stems(surface), is_identifier(surface), acronyms)
        if len(_SURFACES) < _SURFACES_KEPT:
            _SURFACES[surface] = found
    return found


@lru_cache(maxsize=100_000)
def _plan(stems: tuple[str, ...], identifier: bool) -> tuple[frozenset[int], tuple[int, ...]]:
    """A name's weak parts (stopwords, single letters and digits) and the order its parts
    are matched in: distinctive parts first, then weak ones, each in the name's order.

    The one number of an identifier is never weak, however short: it is what tells
    ``Press_3`` from ``Press_4``, and how people write it ("is 3 running?"), as "15"
    names ``RC-15``. (Of two numbers, as in ``Release_4_2``, neither alone is.)"""
    numbers = [i for i, n in enumerate(stems) if n.isdigit()]
    mark = numbers[0] if identifier and len(numbers) == 1 else None
    weak = frozenset(
        i for i, n in enumerate(stems) if i != mark and (n in STOPWORDS or len(n) == 1)
    )
    return weak, tuple(sorted(range(len(stems)), key=lambda i: (i in weak, i)))


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
    "Source A" links ``Source_A``, "a source" does not; an identifier's one
    number is distinctive however short ("is 3 running?" of ``Press_3``).
    """
    stems, identifier, acronyms = _surface(surface)
    if not acronyms and not identifier:
        # Prose: a part matches only a word of the same stem, and a mention needs a
        # distinctive part, two parts side by side, or a name of one part (below).
        if len(stems) > 1 and not _may_anchor(stems, question.at):
            return _NOTHING  # most names: "the" of "The Con" met alone anchors nothing
    elif (
        not acronyms
        and question.keys.isdisjoint(stems)
        and not (identifier and any(len(n) in (3, 4) and n.isalpha() for n in stems))
    ):
        return _NOTHING  # no part of the name meets any word (or prefix of one)
    words = question.words
    at = question.at
    matched: dict[int, tuple[int, float]] = {}  # name index -> (question position, strength)
    spelled: dict[int, list[int]] = {}  # name index -> the words spelling out an acronym
    used: set[int] = set()
    weak, order = _plan(stems, identifier)
    # Distinctive parts first, then weak ones; each at the position its matched
    # neighbours imply when the word is there ("the" of "The Unborn" is the one
    # before "Unborn", not the first "the" of the question).
    for i in order:
        n = stems[i]
        best: tuple[int, float] | None = None
        pos = None
        if n in at:
            free = [p for p in at[n] if p not in used]
            implied = {m[0] + i - j for j, m in matched.items()}
            pos = next((p for p in free if p in implied), free[0] if free else None)
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
    spots = sorted(p for p, _ in matched.values())
    if any(b - a > SCATTER_GAP for a, b in itertools.pairwise(spots)):
        # A name's words strewn over the question ("what was the *date* of the *movie* ...")
        # are a weak mention of it: written together is how a name is written.
        coverage *= SCATTERED
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


def _may_anchor(stems: tuple[str, ...], at: Mapping[str, object]) -> bool:
    """Whether some distinctive stem of a name is a question word's, or two stems side by
    side are: without either, :func:`cover` anchors no part of a prose name."""
    before = False
    for n in stems:
        hit = n in at
        if hit and (before or not (n in STOPWORDS or len(n) == 1)):
            return True
        before = hit
    return False


def _abbreviates(short: str, t: Token) -> bool:
    """``svc`` for "service", ``mgr`` for "manager": same first letter, the rest in order."""
    word = t.word
    if t.stop or len(word) <= len(short) + 1 or word[0] != short[0]:
        return False
    rest = iter(word[1:])
    return all(ch in rest for ch in short[1:])


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
