"""A question's neighbourhood read in one round trip, and the reads served from it.

On a remote store each read the reader's walk makes is a round trip (the anchors'
facts, the described relations, the ends of the first hop, the third hop, the
slots' histories, the context around): five or six per answer on Neo4j. The walk
knows before its first read what it will ask for, in outline: from which anchors,
with which relations read through hubs, whether histories are wanted. It names
that outline as a :class:`Plan`; the store reads everything the plan covers in one
statement and returns each read it made (:class:`Neighbourhood`); a :class:`View`
then serves the walk's reads from them. (The described relations, whose subjects
the question describes rather than names, are not read here: their types written
into this statement made its text, and so the server's plan, one per combination.
A remote store reads them ahead with the question's vocabulary, chosen from the
predicates it last saw, and the view serves them when that read was made at the
same sequence number and covers the walk's; see :class:`~ctxneo.stores.base.Described`.)

A read is served only when what was fetched decides it exactly (see
:meth:`EntityRead.serve`); any other read goes to the store, pinned to the same
sequence number. So answers are the same as reading the store read by read, and
one question sees one state of the memory, whatever is written meanwhile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ctxneo.model import Fact

if TYPE_CHECKING:
    from ctxneo.stores.base import Described


@dataclass(frozen=True, slots=True)
class Plan:
    """What a question's walk will read, in outline (the meaning of each part is in
    ``cypher/neighbourhood.cypher``)."""

    anchors: tuple[str, ...]
    as_of: int | None
    first_limit: int  # per anchor, history included
    later_limit: int  # per end of the first hop
    later_history: bool  # the ends' closed facts too (the question may ask for a slot's past)
    hub_limit: int  # facts of the best relations per hub end and per end of the second hop
    best: tuple[str, ...]  # relations read through hubs and at the third hop
    relevance: Mapping[str, float]  # how well the question names each relation: whose ends first
    ends: int  # ends read at each further hop
    #: A shape (an anchor and the relations walked from it) of at most this many ends is
    #: walked on from whatever its relations are named: its ends are read at the third hop.
    small: int = 8
    #: Ends with more facts than this (hubs) are not read through the best relations
    #: ahead: filtering a hub's facts by type reads them all; the walk's own read of them
    #: is narrowed to the types (cypher.with_types) and costs only those.
    hub_degree: int = 10_000
    #: The third hop's ends are chosen as the walk chooses them (Walker._extend): from
    #: the anchors it walks from (``walked``: not those read only for their slots), its
    #: shapes ranked by how well the question names each relation for their anchor
    #: (``relevance_of``: the words of the anchor's own name set aside), then by their
    #: walks (at most ``paths`` counted); the ``shapes`` best and every shape of few
    #: ends are walked on from, the first ``frontier`` ends of the first hop's, until
    #: ``budget`` steps are taken. (No ``walked``: every anchor; an anchor not in
    #: ``relevance_of``: ``relevance``.)
    walked: tuple[str, ...] = ()
    relevance_of: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    shapes: int = 4
    paths: int = 300
    frontier: int = 80
    budget: int = 800


@dataclass(frozen=True, slots=True)
class EntityRead:
    """One entity's facts as ``facts_of`` read them: newest first, at most ``limit``, the
    closed ones too when ``history``, only of ``predicates`` when given."""

    history: bool
    limit: int
    predicates: frozenset[str] | None
    facts: tuple[Fact, ...]

    def serve(
        self, as_of: int | None, history: bool, limit: int, predicates: frozenset[str] | None
    ) -> list[Fact] | None:
        """The answer to that read of the same entity, when this read decides it exactly;
        ``None`` when it does not.

        A read's facts are the newest of what it matched, so the newest of any narrower
        read are among them: exact when this read was not cut by its limit (it holds
        everything it matched), or when it holds at least ``limit`` facts of the narrower
        read (any fact it left out is older than all of them).
        """
        if self.predicates is not None and (
            predicates is None or not predicates <= self.predicates
        ):
            return None
        if history and not self.history:
            return None
        kept = [
            f
            for f in self.facts
            if (predicates is None or f.predicate in predicates) and (history or f.valid_at(as_of))
        ]
        if len(self.facts) < self.limit or len(kept) >= limit:
            return kept[:limit]
        return None


@dataclass(slots=True)
class Neighbourhood:
    """The reads one statement made, all at sequence number ``at``, with ``as_of``."""

    at: int
    as_of: int | None
    reads: dict[str, list[EntityRead]] = field(default_factory=dict)

    def add(self, entity: str, read: EntityRead) -> None:
        self.reads.setdefault(entity, []).append(read)


class PinnedReads(Protocol):
    """A store that can read as the memory stood at a sequence number."""

    def facts_of(
        self,
        entities: Sequence[str],
        *,
        as_of: int | None = None,
        history: bool = False,
        limit: int = ...,
        predicates: Sequence[str] | None = None,
        at: int | None = None,
    ) -> list[Fact]: ...

    def facts_of_few_subjects(
        self,
        predicates: Sequence[str],
        *,
        max_subjects: int,
        as_of: int | None = None,
        limit: int = ...,
        at: int | None = None,
    ) -> dict[str, list[Fact]]: ...


class View:
    """A store's reads for one question, served from its :class:`Neighbourhood` where
    that decides them and read from the store (pinned to the same ``at``) where not;
    what the store reads is kept for the question's later reads too."""

    def __init__(
        self, store: PinnedReads, found: Neighbourhood, described: Described | None = None
    ) -> None:
        self.store = store
        self.found = found
        self.described = described  # read ahead with the vocabulary, maybe at another seq
        self.served = 0  # reads answered without a round trip
        self.missed = 0  # reads that went to the store

    def facts_of(
        self,
        entities: Sequence[str],
        *,
        as_of: int | None = None,
        history: bool = False,
        limit: int = 500,
        predicates: Sequence[str] | None = None,
    ) -> list[Fact]:
        names = list(dict.fromkeys(entities))
        if not names or (predicates is not None and not predicates):
            return []
        wanted = None if predicates is None else frozenset(predicates)
        out: dict[int, Fact] = {}
        missing: list[str] = []
        for name in names:
            got = self._serve(name, as_of, history, limit, wanted)
            if got is None:
                missing.append(name)
            else:
                out.update((f.seq, f) for f in got)
        if missing:
            self.missed += 1
            read = self.store.facts_of(
                missing,
                as_of=as_of,
                history=history,
                limit=limit,
                predicates=predicates,
                at=self.found.at,
            )
            out.update((f.seq, f) for f in read)
            if as_of == self.found.as_of:
                for name in missing:
                    # The read's facts of this entity, newest first, cut at the limit:
                    # exactly its own read (the rest came with another entity's, and are
                    # older than all of its own when it filled its limit).
                    mine = tuple(f for f in read if name in (f.subject, f.object))[:limit]
                    self.found.add(name, EntityRead(history, limit, wanted, mine))
        else:
            self.served += 1
        return sorted(out.values(), key=lambda f: -f.seq)

    def _serve(
        self,
        name: str,
        as_of: int | None,
        history: bool,
        limit: int,
        predicates: frozenset[str] | None,
    ) -> list[Fact] | None:
        if as_of != self.found.as_of:
            return None
        for read in self.found.reads.get(name, ()):
            got = read.serve(as_of, history, limit, predicates)
            if got is not None:
                return got
        return None

    def facts_of_few_subjects(
        self,
        predicates: Sequence[str],
        *,
        max_subjects: int,
        as_of: int | None = None,
        limit: int = 500,
    ) -> dict[str, list[Fact]]:
        # (not read with the neighbourhood, see Neo4jStore.neighbourhood; maybe with the
        # vocabulary, see Neo4jStore.vocabulary)
        if self.described is not None:
            got = self.described.serve(predicates, max_subjects, as_of, limit, self.found.at)
            if got is not None:
                self.served += 1
                return got
        self.missed += 1
        return self.store.facts_of_few_subjects(
            predicates, max_subjects=max_subjects, as_of=as_of, limit=limit, at=self.found.at
        )
