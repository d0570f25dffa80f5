"""The words that find entities, and one rule for ranking what they find.

The embedded store keeps its name and said postings beside its graph; a remote store
keeps a copy of the same postings in process (:class:`NameMirror`), so that a question
is linked to entities without a round trip, and the same rule (:func:`rank_entities`)
ranks the candidates of both.

The mirror is kept current by a counter the server advances with every write that
changes what finds an entity (``names`` on the memory node; every entity such a write
touches carries the value as ``changed``): a read returns the entities changed since the
mirror's position and the mirror takes them in. A namespace cleared and written again
has a new ``epoch``, and the mirror is read again whole.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxneo.stores.base import (
    MAX_SAID_PER_ENTITY,
    SAID_POSTING,
    EntityHit,
    Vocabulary,
    with_said,
)
from ctxneo.text import index_keys

#: Postings longer than this only score candidates, they do not propose them.
CANDIDATE_POSTING = 128


def said_postings(
    said: Mapping[str, Mapping[str, None]], keys: Iterable[str]
) -> dict[str, list[str]]:
    """The entities each stem was said of: at most one more than
    :func:`~ctxneo.stores.base.with_said` keeps, which tells it the stem is too
    common, so a stem said of half the memory costs no more than a rare one."""
    return {
        key: list(itertools.islice(p, SAID_POSTING + 1))
        for key in set(keys)
        if (p := said.get(key))
    }


def rank_entities(
    postings: Mapping[str, Mapping[str, None]],
    said: Mapping[str, Mapping[str, None]],
    aliases: Mapping[str, Sequence[str]],
    total: int,
    keys: Sequence[str],
    limit: int,
) -> list[EntityHit]:
    """Rank like a search engine: rare stems weigh more (idf); only the rarer
    postings propose candidates, so a common stem ("svc" of every service)
    never makes a question scan half the graph. ``total``: how many entities."""
    found = [p for key in set(keys) if (p := postings.get(key))]
    if not found:
        return with_said([], said_postings(said, keys), aliases)
    found.sort(key=len)
    total = max(1, total)
    candidates: dict[str, None] = {}
    for posting in found:
        if candidates and len(posting) > CANDIDATE_POSTING:
            break
        candidates.update(dict.fromkeys(itertools.islice(posting, CANDIDATE_POSTING)))
    # A candidate's score: the weights of the postings it is in, summed in this order
    # (each posting's candidates found by one set intersection, not a lookup apiece).
    weights: dict[str, list[float]] = {name: [] for name in candidates}
    for p in found:
        w = math.log(1 + total / len(p))
        for name in candidates.keys() & p.keys():
            weights[name].append(w)
    # Best first, then by name (names are unique): sorted as plain tuples, no key.
    best = sorted([(-sum(ws), name) for name, ws in weights.items()])[:limit]
    return with_said(
        [EntityHit(name, tuple(aliases.get(name, ()))) for _, name in best],
        said_postings(said, keys),
        aliases,
    )


@dataclass(frozen=True, slots=True)
class Known:
    """An entity as the server holds what finds it."""

    name: str
    aliases: tuple[str, ...]
    said: tuple[str, ...]

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Known:
        return cls(row["name"], tuple(row["aliases"] or ()), tuple(row["said"] or ()))


class NameMirror:
    """A remote namespace's name and said postings, in process (thread-safe).

    ``epoch`` and ``seen`` are the memory node's ``epoch`` and ``names`` as last read;
    ``since`` is where the next read of changed entities starts: one before ``seen``
    when ``seen`` was first met by a read (a read may meet a write's counter before all
    of its entities, while the server applies it: the next read takes that write's
    entities again), ``seen`` once it has been met twice or was this client's write.
    ``version`` counts the changes to what the copy answers, so that a vocabulary it
    served is known to hold without being worked out again.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.version = 0
        self._clear()

    def _clear(self) -> None:
        self.version += 1
        self.loaded = False
        self.epoch: str | None = None
        self.seen = 0
        self.since = 0
        self.predicates: list[str] = []
        self.multi: frozenset[str] = frozenset()
        self.postings: defaultdict[str, dict[str, None]] = defaultdict(dict)
        self.said: defaultdict[str, dict[str, None]] = defaultdict(dict)
        self.said_of: dict[str, list[str]] = {}
        self.aliases: dict[str, list[str]] = {}
        self.entities: dict[str, None] = {}

    def reset(self) -> None:
        """Forget everything (this client cleared the namespace, or it was replaced)."""
        with self.lock:
            self._clear()

    # -- taking in what the server holds ----------------------------------------

    def load(self, memory: Mapping[str, Any], known: Iterable[Mapping[str, Any]]) -> None:
        """Everything (``names_all.cypher``'s ``memory`` and ``all``)."""
        with self.lock:
            self._clear()
            for row in known:
                if row["name"] is not None:  # (an entity a clear deleted as it was read)
                    self._take(Known.of(row))
            self.loaded = True
            self._met(memory)

    def take(
        self, memory: Mapping[str, Any], changed: Iterable[Mapping[str, Any]], *, complete: bool
    ) -> bool:
        """What a read of the changed entities returned (see ``names_changed.cypher``);
        False, and the copy marked to be read again whole, when that cannot bring it up
        to date: the namespace was cleared or replaced since (a new epoch), or the read
        was cut short (not ``complete``)."""
        with self.lock:
            replaced = memory["epoch"] != self.epoch and (
                self.epoch is not None or bool(self.entities)
            )
            if replaced or not complete or not self.loaded:
                self.loaded = False
                return False
            for row in changed:
                if row["name"] is not None:  # (an entity a clear deleted as it was read)
                    self._take(Known.of(row))
            self._met(memory)
            return True

    def _met(self, memory: Mapping[str, Any]) -> None:
        names = memory["names"]
        self.epoch = memory["epoch"]
        self.since = names if names == self.seen else max(0, names - 1)
        self.seen = names
        self._relations(memory["predicates"], memory["multi"])

    def _relations(self, predicates: Iterable[str], multi: Iterable[str]) -> None:
        predicates, multi = sorted(predicates), frozenset(multi)
        if (predicates, multi) != (self.predicates, self.multi):
            self.predicates, self.multi = predicates, multi
            self.version += 1

    def _take(self, known: Known) -> None:
        self._entity(known.name)
        for phrase in known.aliases:
            self._alias(phrase, known.name)
        self._said(known.name, known.said)

    def _said(self, name: str, stems: Iterable[str]) -> None:
        """Stems said of ``name``, by the servers' rule: each once, the first
        :data:`MAX_SAID_PER_ENTITY` kept."""
        have = self.said_of.setdefault(name, [])
        for stem in stems:
            if len(have) >= MAX_SAID_PER_ENTITY:
                break
            if stem not in have:
                have.append(stem)
                self.said[stem][name] = None
                self.version += 1

    def _entity(self, name: str) -> None:
        if name not in self.entities:
            self.version += 1
            self.entities[name] = None
            for key in index_keys(name):
                self.postings[key][name] = None

    def _alias(self, phrase: str, entity: str) -> None:
        self._entity(entity)
        owners = self.aliases.setdefault(entity, [])
        if phrase not in owners:
            self.version += 1
            owners.append(phrase)
            for key in index_keys(phrase):
                self.postings[key][entity] = None

    # -- this client's own writes ------------------------------------------------

    def current_at(self, epoch: str | None, names: int) -> bool:
        """Whether the mirror holds exactly what the server held at (epoch, names): a
        write made from that state can be taken in as written."""
        with self.lock:
            if not self.loaded or names != self.seen:
                return False
            # (a namespace nothing was written to has no epoch yet: its first write's)
            return epoch == self.epoch or (self.epoch is None and not self.entities)

    def wrote(
        self,
        epoch: str | None,
        names: int,
        entities: Iterable[str],
        said: Mapping[str, Sequence[str]],
        aliases: Iterable[tuple[str, str]] = (),
        predicates: Sequence[str] | None = None,
        multi: Iterable[str] | None = None,
    ) -> None:
        """This client's committed write, which moved the counter to ``names`` from the
        state the mirror held (:meth:`current_at`): taken in by the server's own rules
        (said stems appended once each, the first :data:`MAX_SAID_PER_ENTITY` kept)."""
        with self.lock:
            for name in entities:
                self._entity(name)
            for phrase, entity in aliases:
                self._alias(phrase, entity)
            for name, stems in said.items():
                self._entity(name)
                self._said(name, stems)
            # (a write the copy may hold only in part is still read again: see the class)
            doubt = self.since < self.seen
            self.epoch, self.seen = epoch, names
            self.since = self.since if doubt else names
            self._relations(
                self.predicates if predicates is None else predicates,
                self.multi if multi is None else multi,
            )

    def declared(self, multi: Iterable[str], single: Iterable[str]) -> None:
        """This client declared ``multi`` multi-valued and withdrew ``single`` (which
        leave the names counter as it is; a read brings anyone else's change)."""
        with self.lock:
            self._relations(self.predicates, (self.multi | frozenset(multi)) - frozenset(single))

    # -- reading -------------------------------------------------------------------

    def vocabulary(self, keys: Sequence[str], limit: int) -> tuple[Vocabulary, int]:
        """What ``keys`` find (see :meth:`~ctxneo.stores.base.Store.vocabulary`), and the
        copy's version it was found at."""
        with self.lock:
            hits = rank_entities(
                self.postings, self.said, self.aliases, len(self.entities), keys, limit
            )
            return Vocabulary(hits, list(self.predicates), self.multi), self.version
