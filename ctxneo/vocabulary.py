"""The names a memory uses, and which new names resemble them.

Agents sharing a memory each invent names: ``OWNER`` beside ``OWNED_BY``,
``Service_Payments`` beside ``Payments_Service``, and questions then miss the
facts stated under the other name. :func:`vocabulary` lists what exists so an
agent can reuse it; :func:`resemblances` answers a write whose predicate or
entity name is new but close to existing ones with those names. It is a
warning, never a refusal: two names that look alike may well be two things.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from ctxneo.errors import CtxneoError
from ctxneo.model import NewFact
from ctxneo.stores.base import PredicateUse, Store
from ctxneo.text import STOPWORDS, index_keys, split_words, stem

if TYPE_CHECKING:
    from ctxneo.meaning import Meaning

#: How many existing names one warning offers.
MAX_SIMILAR = 3
#: Names this alike as strings are taken for one another (a typo, a dropped letter).
SPELLING = 0.85
#: The characters of a name compared as spelling (a typo is in a name's first hundred).
SPELLED_CHARS = 100
#: At most this many (new name, known name) pairs compared for one write's notes.
MAX_COMPARED_PAIRS = 20_000
#: Predicates are short; their words alike as strings or in meaning this much.
PREDICATE_SPELLING = 0.8
PREDICATE_MEANING = 0.75


@dataclass(frozen=True, slots=True)
class VocabularyView:
    """The most used predicates, the declarations, and entity names matching some words."""

    predicates: list[PredicateUse]
    predicates_total: int
    multi_valued: list[str]
    entities: list[str]
    entities_more: bool  # more names matched than were returned


def vocabulary(store: Store, words: str | None, limit: int) -> VocabularyView:
    """What ``store`` holds: its ``limit`` most used predicates with an example each, the
    predicates declared multi-valued, and up to ``limit`` entity names that the given
    words find (as questions find them: by their words, stemmed; none without words)."""
    uses = store.predicate_uses(limit)
    entities: list[str] = []
    more = False
    if words and (keys := sorted(index_keys(words))):
        names = [h.name for h in store.find_entities(keys, limit=limit + 1)]
        entities, more = names[:limit], len(names) > limit
    return VocabularyView(
        predicates=uses,
        predicates_total=len(store.predicates()),
        multi_valued=sorted(store.multi_valued()),
        entities=entities,
        entities_more=more,
    )


def resemblances(store: Store, facts: Sequence[NewFact]) -> list[str]:
    """One line per name ``facts`` would introduce that resembles names already in
    ``store``: ``predicate OWNER is new; the memory has OWNED_BY``. Read before the
    write (one store read, plus one per name that resembles another)."""
    names = list(dict.fromkeys(n for f in facts for n in (f.subject, f.object)))
    keys = sorted(set().union(*(index_keys(n) for n in names))) if names else []
    known = store.vocabulary(keys, limit=max(40, 4 * len(names)))
    existing = [h.name for h in known.hits]
    notes: list[str] = []
    meaning: Meaning | None = None
    for predicate in dict.fromkeys(f.predicate for f in facts if f.multi):
        if predicate in known.predicates and predicate not in known.multi:
            # (one agent's multi=True changes the predicate for every subject, its facts
            # written by others until now included: say so to the writer)
            notes.append(
                f"predicate {predicate} becomes multi-valued for every subject: a new value "
                "no longer closes the one before (withdrawing the declaration undoes it)"
            )
    for predicate in dict.fromkeys(f.predicate for f in facts):
        if predicate in known.predicates:
            continue
        if meaning is None:
            from ctxneo.meaning import WordVectors  # numpy: only for a new predicate

            meaning = WordVectors.default()
        alike = [p for p in known.predicates if _predicates_alike(predicate, p, meaning)]
        if alike:
            notes.append(f"predicate {predicate} is new; the memory has {_names(alike)}")
    budget = MAX_COMPARED_PAIRS
    for name in names:
        if name in existing:
            continue
        if budget <= 0:
            break  # (notes are advice: a huge batch of new names gets some, not minutes)
        budget -= len(existing)
        alike = [e for e in existing if _names_alike(name, e)]
        # The store proposes at most a bounded list: confirm the name is really new.
        if alike and not store.facts_of([name], history=True, limit=1):
            notes.append(f"entity {name!r} is new; the memory has {_names(alike, quote=True)}")
    return notes


def closed_before(store: Store, subject: str, predicate: str, obj: str | None = None) -> str:
    """When a value asked to be retracted was closed already, when (" (already closed at
    #N)", "" when it never held): a client that retries a retraction whose reply it lost
    learns that the first call did it (retract is idempotent: a second call closes
    nothing more), and a name spelt as stored is not offered another spelling."""
    try:
        past = [
            f
            for f in store.history(subject, predicate)
            if f.valid_to is not None and (obj is None or f.object == obj)
        ]
    except CtxneoError:
        return ""
    if not past:
        return ""
    last = max(past, key=lambda f: f.valid_to or 0)
    return f" (already closed at #{last.valid_to})"


def similar_names(store: Store, name: str, limit: int = MAX_SIMILAR) -> list[str]:
    """Up to ``limit`` entity names in use that share a word with ``name`` (not ``name``
    itself), best first: what to offer for a name in no fact ("did you mean")."""
    hits = store.find_entities(sorted(index_keys(name)), limit=limit + 2)
    return [h.name for h in hits if h.name != name][:limit]


def alias_notes(store: Store, phrase: str, entity: str) -> list[str]:
    """What may be amiss with letting questions name ``entity`` as ``phrase``, one line
    each: ``entity`` has no fact yet (a typo, or the two given the other way round:
    the phrase comes first), with the names in use it resembles. A warning, never a
    refusal: an alias may well be given before the facts it is for."""
    if store.facts_of([entity], history=True, limit=1):
        return []
    note = f"entity {entity!r} has no fact yet"
    known = store.vocabulary(sorted(index_keys(entity)), limit=40)
    alike = [h.name for h in known.hits if h.name != entity and _names_alike(entity, h.name)]
    if alike:
        note += f"; the memory has {_names(alike, quote=True)}"
    if store.facts_of([phrase], history=True, limit=1):
        note += f"; {phrase!r} is an entity: the phrase comes first, then the entity"
    return [note]


def _names(names: list[str], *, quote: bool = False) -> str:
    shown = [repr(n) if quote else n for n in names[:MAX_SIMILAR]]
    return ", ".join(shown) + (f" and {len(names) - MAX_SIMILAR} more" if len(names) > 3 else "")


def _names_alike(new: str, old: str) -> bool:
    """Two entity names for one thing: the same words in another order, case or
    separator (``Payments_Service``, ``service payments``), or a near spelling with
    the same numbers."""
    a, b = _spelt(new), _spelt(old)
    if a.words == b.words:
        return True
    # Numbers tell ids apart: Pump_08 is not a misspelt Pump_09, nor CX_31 of CX_318.
    if a.numbers != b.numbers:
        return False
    # (the cheap upper bounds first, then the ratio on the names' starts: a ratio costs
    # the product of the lengths, and a name of thousands of characters is no typo's)
    alike = difflib.SequenceMatcher(None, a.start, b.start)
    return (
        alike.real_quick_ratio() >= SPELLING
        and alike.quick_ratio() >= SPELLING
        and alike.ratio() >= SPELLING
    )


@dataclass(frozen=True, slots=True)
class _Spelt:
    words: tuple[str, ...]  # its words, case folded, sorted
    numbers: tuple[str, ...]
    start: str  # its first SPELLED_CHARS characters, case folded


@lru_cache(maxsize=4096)
def _spelt(name: str) -> _Spelt:
    """What a name is compared by, read once per name (a write's names are compared with
    hundreds of names in use)."""
    folded = name.casefold()
    return _Spelt(
        tuple(sorted(split_words(folded))),
        tuple(re.findall(r"\d+", folded)),
        folded[:SPELLED_CHARS],
    )


def _predicates_alike(new: str, old: str, meaning: Meaning) -> bool:
    """Two predicates for one relation: a near spelling (``OWENED_BY``), the same
    content words in any order, or content words close in meaning (``OWNER`` and
    ``OWNED_BY``). Numbers tell them apart, as they do names: ``STEP_1`` and ``STEP_2``
    are two relations, not a misspelling of one."""
    a, b = new.casefold(), old.casefold()
    if re.findall(r"\d+", a) != re.findall(r"\d+", b):
        return False
    if difflib.SequenceMatcher(None, a, b).ratio() >= PREDICATE_SPELLING:
        return True
    wa, wb = _content_words(a), _content_words(b)
    if not wa or not wb:
        return False
    if {stem(w) for w in wa} == {stem(w) for w in wb}:
        return True
    if len(wa) == len(wb) and all(_shortened(x, y) or x == y for x, y in zip(wa, wb, strict=True)):
        return True  # the same words, some cut short: TEMP for TEMPERATURE, QTY_ORDERED
    return any(meaning.similarity(x, y) >= PREDICATE_MEANING for x in wa for y in wb)


def _shortened(a: str, b: str) -> bool:
    """One word written as the first four letters or more of the other (``temp``,
    ``temperature``; ``addr``, ``address``)."""
    short, whole = sorted((a, b), key=len)
    return len(short) >= 4 and short != whole and whole.startswith(short)


def _content_words(predicate: str) -> list[str]:
    # "by", "has", "is" say nothing of which relation it is.
    return [w for w in split_words(predicate) if w not in STOPWORDS and not w.isdigit()]
