"""Stage 2, anchors: the entities a question names.

An entity is linked when the question covers enough of its name's stems (or
of an alias a user registered): each name stem is matched to a question word
by stem, by prefix for identifier parts (``auth`` in "authentication"), by
abbreviation (``svc``) or by spelled-out initials (``PS`` <- "picking
station"). A partial mention must single the entity out; a name written out
in full, in order, is an exact mention and always wins.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from ctxneo.answering.question import Question
from ctxneo.stores.base import EntityHit
from ctxneo.text import STOPWORDS, Token, is_identifier, name_stems

EXACT, RELATED, PREFIX = 1.0, 0.8, 0.7
_UPPER_RUN = re.compile(r"[A-Z]{2,5}(?![a-z])")
SCATTER_GAP = 2  # more words than this between two parts of a name: a scattered mention
SCATTERED = 0.5


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


name_parts = _surface


@lru_cache(maxsize=100_000)
def _plan(stems: tuple[str, ...]) -> tuple[frozenset[int], tuple[int, ...]]:
    """A name's weak parts (stopwords, single letters) and the order its parts are matched
    in: distinctive parts first, then weak ones, each in the name's order."""
    weak = frozenset(i for i, n in enumerate(stems) if n in STOPWORDS or len(n) == 1)
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
    "Source A" links ``Source_A``, "a source" does not.
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
    weak, order = _plan(stems)
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


def _may_cover_share(question: Question, surface: str, least: float) -> bool:
    """Whether :func:`cover` may find at least ``least`` of ``surface`` covered: a prose
    name's parts are covered only by words of their own stems, each at most fully, so
    the share of its (weighted) parts whose stems the question has bounds its coverage."""
    stems, identifier, acronyms = _surface(surface)
    if identifier or acronyms or not stems:
        return True
    at = question.at
    weights = [0.5 if n in STOPWORDS or len(n) == 1 else 1.0 for n in stems]
    met = sum(w for n, w in zip(stems, weights, strict=True) if n in at)
    return met / sum(weights) >= least


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
    least = min(threshold, distinctive)
    for hit in hits:
        best: Link | None = None
        for surface in (hit.name, *hit.aliases):
            if not _may_cover_share(question, surface, least):
                continue  # (its coverage could not reach ``least``: no link, as below)
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
