"""The store contract: the writes a memory makes and the graph questions it asks.

The answerer decides *what* to look for; a store only knows *how* to fetch it.
Every read is one question to the store (one Cypher round trip on Neo4j), and
every store returns plain :class:`~ctxneo.model.Fact` values, never driver or
graph-library objects. Lists come back in a documented order so that both
stores give the answerer the same input and so the same answers.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

from ctxneo.errors import StoreError
from ctxneo.model import MAX_SEQ, Fact, NewFact, check_int, check_predicate, check_text
from ctxneo.stores.neighbourhood import Neighbourhood, Plan
from ctxneo.text import said_stems

#: Upper bounds on what one store question returns, so a hub entity or a
#: common predicate cannot turn one question into a scan of the graph.
MAX_NEIGHBOURS = 500
MAX_CANDIDATES = 40


@dataclass(frozen=True, slots=True)
class MemoryImage:
    """A whole memory as data: what export writes and load reads, whatever the store.

    ``facts`` are every fact, current and closed, in sequence order; ``last_seq``
    is the memory's counter (a final retraction uses a number no fact has).
    """

    facts: tuple[Fact, ...]
    aliases: dict[str, tuple[str, ...]]
    multi: frozenset[str]
    last_seq: int

    @property
    def predicates(self) -> list[str]:
        return sorted({f.predicate for f in self.facts})

    @property
    def entities(self) -> list[str]:
        """Every entity: named by a fact or only by an alias, sorted."""
        names = {f.subject for f in self.facts} | {f.object for f in self.facts}
        return sorted(names | set(self.aliases))


#: A stem of the words facts were stated in proposes its entities only when it was said
#: of at most this many of them (a common word names nothing by itself)...
SAID_POSTING = 12
#: ...and at most this many entities are proposed by said words alone.
SAID_HITS = 16


@dataclass(frozen=True, slots=True)
class EntityHit:
    """An entity found in the token index, with the aliases registered for it and the
    question's stems that the words its facts were stated in hold (``said``)."""

    name: str
    aliases: tuple[str, ...] = ()
    said: frozenset[str] = frozenset()


#: The stems kept per entity of the words its facts were said in: the first ones said.
MAX_SAID_PER_ENTITY = 400


def next_seq(seq: int) -> int:
    """The sequence number after ``seq``.

    Raises:
        StoreError: ``seq`` is :data:`~ctxneo.model.MAX_SEQ`: a counter set near
            its end (by hand, or by a loaded script) is refused before anything
            is written, and the memory still opens.
    """
    if seq >= MAX_SEQ:
        raise StoreError(
            f"this memory has used every sequence number (up to {MAX_SEQ:,}): "
            "nothing more can be written to it"
        )
    return seq + 1


def said_of(
    facts: Iterable[Fact], said: dict[str, list[str]] | None = None
) -> dict[str, list[str]]:
    """What the facts' texts add to each entity's said stems (``said``: what it has), in
    the one order every store keeps: facts in order, stems in the order said, the
    subject's then the object's; a stem once; the first :data:`MAX_SAID_PER_ENTITY`."""
    out: dict[str, list[str]] = {} if said is None else said
    for f in facts:
        if not f.text:
            continue
        stems = said_stems(f.text)
        for entity in dict.fromkeys((f.subject, f.object)):
            have = out.setdefault(entity, [])
            for st in stems:
                if len(have) >= MAX_SAID_PER_ENTITY:
                    break
                if st not in have:
                    have.append(st)
    return out


def with_said(
    hits: Sequence[EntityHit],
    said: Mapping[str, Sequence[str]],
    aliases: Mapping[str, Sequence[str]],
) -> list[EntityHit]:
    """``hits`` (found by name) with their said stems, then the entities found by said words
    alone, most stems first, then by name: one rule for every store, so that a store's
    own order never changes an answer.

    Args:
        said: for each stem of the question, every entity whose facts' words hold it.
    """
    matched: dict[str, set[str]] = {}
    for key, names in said.items():
        if len(names) <= SAID_POSTING:
            for name in names:
                matched.setdefault(name, set()).add(key)
    out = [replace(h, said=frozenset(matched.get(h.name, ()))) for h in hits]
    named = {h.name for h in hits}
    extra = sorted((-len(keys), name) for name, keys in matched.items() if name not in named)
    out += [
        EntityHit(name, tuple(aliases.get(name, ())), frozenset(matched[name]))
        for _, name in extra[:SAID_HITS]
    ]
    return out


class VocabularyMoved(Exception):
    """The memory changed what a question's words find since its vocabulary was served,
    by a write of another client: the question is read again (see
    :meth:`Store.confirm_vocabulary`)."""


@dataclass(frozen=True, slots=True)
class DescribedAsk:
    """A :meth:`Store.facts_of_few_subjects` read a question may make, asked for ahead
    with its vocabulary (see :meth:`Store.vocabulary`)."""

    predicates: tuple[str, ...]
    max_subjects: int
    as_of: int | None
    limit: int


@dataclass(frozen=True, slots=True)
class Described:
    """The answer to a :class:`DescribedAsk`, read as the memory stood at ``at``."""

    ask: DescribedAsk
    at: int
    facts: dict[str, list[Fact]]

    def serve(
        self, predicates: Sequence[str], max_subjects: int, as_of: int | None, limit: int, at: int
    ) -> dict[str, list[Fact]] | None:
        """That read's answer when this one decides it (the same state, bounds and as_of,
        and every predicate read: each predicate's part is read on its own); else None."""
        ask = self.ask
        if (at, max_subjects, as_of, limit) != (self.at, ask.max_subjects, ask.as_of, ask.limit):
            return None
        if not set(predicates) <= set(ask.predicates):
            return None
        return {p: list(self.facts[p]) for p in dict.fromkeys(predicates)}


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """What a question's words can meet in a memory: the entities they find, the memory's
    predicates and those declared multi-valued; on a remote store, the described
    relations asked for ahead (``None`` when none were, or in process)."""

    hits: list[EntityHit]
    predicates: list[str]
    multi: frozenset[str]
    described: Described | None = None


@dataclass(frozen=True, slots=True)
class Written:
    """What one write did, from the write itself (not read around it, where another
    writer's changes could be taken for its own)."""

    facts: list[Fact]  # one per fact given, as it now stands
    created: frozenset[int]  # the sequence numbers this write created
    closed: list[Fact]  # facts current before the write that it closed, oldest first

    def unchanged(self) -> list[bool]:
        """Per fact given: whether it wrote nothing (its value was current already,
        or stated earlier in the same write)."""
        seen: set[int] = set()
        out = []
        for fact in self.facts:
            out.append(fact.seq not in self.created or fact.seq in seen)
            seen.add(fact.seq)
        return out


@dataclass(frozen=True, slots=True)
class PredicateUse:
    """How much a predicate is used: its current facts and one of them as an example."""

    predicate: str
    current: int
    example: Fact | None  # None once every fact of it was closed


def check_slot(subject: object, predicate: object, limit: object = None) -> str | None:
    """The arguments of a read of one subject's facts, checked once for every store: the
    predicate in stored form (or ``None``).

    Raises:
        InvalidFactError: the subject is not a string, the predicate not an identifier,
            or the limit not a positive integer.
    """
    check_text(subject, "subject")
    if limit is not None:
        check_int(limit, "limit", minimum=1)
    return None if predicate is None else check_predicate(predicate)


def most_used(uses: Iterable[PredicateUse], limit: int) -> list[PredicateUse]:
    """The ``limit`` predicates with the most current facts (ties by name): one order
    for both stores."""
    return sorted(uses, key=lambda u: (-u.current, u.predicate))[:limit]


class Store(ABC):
    """A fact store. Implementations: NetworkX (in process) and Neo4j."""

    #: Short name used in reports ("networkx", "neo4j").
    backend: str = ""
    #: Whether :meth:`neighbourhood` reads a question's reads ahead (a remote store):
    #: where it does not, the walk does not outline them.
    reads_ahead: bool = False

    # -- writes ---------------------------------------------------------------

    @abstractmethod
    def write(self, facts: Sequence[NewFact]) -> Written:
        """Write facts in order, with supersession, as one write; say what it did.

        A fact whose (subject, predicate) has a current value closes it, unless
        the predicate is multi-valued (declared, or the fact says ``multi``);
        re-stating a current value writes nothing and returns the existing fact.
        """

    def remember_many(self, facts: Sequence[NewFact]) -> list[Fact]:
        """:meth:`write`, returning only the resulting facts."""
        return self.write(facts).facts

    def remember(self, fact: NewFact) -> Fact:
        return self.remember_many([fact])[0]

    @abstractmethod
    def retract(self, subject: str, predicate: str, obj: str | None = None) -> list[Fact]:
        """Close the current facts of (subject, predicate[, object]); return them closed."""

    @abstractmethod
    def declare_multi_valued(self, predicates: Iterable[str]) -> None:
        """Mark predicates whose values accumulate instead of replacing each other."""

    @abstractmethod
    def withdraw_multi_valued(self, predicates: Iterable[str]) -> None:
        """Withdraw declarations: later writes of these predicates supersede again.

        The values current now stay current (a new value then closes them all);
        a predicate not declared is left as it is.
        """

    @abstractmethod
    def multi_valued(self) -> frozenset[str]:
        """The predicates declared multi-valued."""

    @abstractmethod
    def add_alias(self, phrase: str, entity: str) -> None:
        """Register ``phrase`` as another name of ``entity`` (data, not code)."""

    @abstractmethod
    def clear(self) -> None:
        """Delete everything this memory holds (and only that): facts, aliases,
        declarations and the sequence counter, which starts again at 1."""

    # -- the graph questions --------------------------------------------------

    @abstractmethod
    def find_entities(self, keys: Sequence[str], limit: int = MAX_CANDIDATES) -> list[EntityHit]:
        """Entities whose name or alias has any of the stemmed ``keys``.

        Ranked by relevance (rarer keys weigh more), best first; at most
        ``limit``. This is an index lookup, never a scan of every entity. On a
        small memory every entity with a key is returned, whatever the store.
        """

    def vocabulary(
        self,
        keys: Sequence[str],
        limit: int = MAX_CANDIDATES,
        described: DescribedAsk | None = None,
    ) -> Vocabulary:
        """What a question's words can meet: :meth:`find_entities`, :meth:`predicates` and
        :meth:`multi_valued` together (one round trip on a remote store, which also reads
        ``described`` in it, for the question's walk; in process it is read when asked)."""
        return Vocabulary(self.find_entities(keys, limit), self.predicates(), self.multi_valued())

    def confirm_vocabulary(self) -> None:
        """Check that the vocabulary this thread was last served still holds, after a
        question was read from it (a remote store serves it from a copy kept in process,
        checked by the question's neighbourhood read, or here when no such read was made).

        Raises:
            VocabularyMoved: the memory changed what the question's words find: read the
                question again (the copy now holds the change).
        """
        return None  # (in process the vocabulary is read when asked: nothing to check)

    @contextmanager
    def one_state(self) -> Iterator[None]:
        """Serve every read made inside from one state of the memory: an answer's reads
        (its words, then each hop) must not see a write that lands between them, or it
        could join a fact with one that replaced its neighbour and answer what never
        held. A remote store pins each question's reads to one sequence number by
        itself; this is for a store whose reads each look at the memory as it is then.
        Nothing may be written inside (by this thread)."""
        yield

    def warm(self) -> None:  # noqa: B027 - a store with nothing to keep reads nothing
        """Fill what this connection keeps for answering, now rather than in its first
        question (a remote store's copy of the names: see :meth:`known_predicates`), so
        that a long-lived client's first answer costs what the others do. Nothing in
        process, whose indexes are the memory's own."""

    def known_predicates(self) -> list[str] | None:
        """The predicates as this connection last read them, without a read of their
        own (a store that keeps the names in process reads them whole here the first
        time, the read its first vocabulary makes anyway): what a question's described
        relations are chosen from before its vocabulary is read (``None`` in process,
        where nothing is read ahead)."""
        return None

    @abstractmethod
    def aliases(self) -> dict[str, tuple[str, ...]]:
        """Every registered alias, by entity (sorted by entity)."""

    @abstractmethod
    def predicates(self) -> list[str]:
        """Every predicate the memory has seen, sorted."""

    @abstractmethod
    def predicate_uses(self, limit: int) -> list[PredicateUse]:
        """The ``limit`` most used predicates (see :func:`most_used`), each with its count
        of current facts and one current fact as an example (on Neo4j this counts every
        current fact, as ``stats`` does)."""

    @abstractmethod
    def facts_of(
        self,
        entities: Sequence[str],
        *,
        as_of: int | None = None,
        history: bool = False,
        limit: int = MAX_NEIGHBOURS,
        predicates: Sequence[str] | None = None,
    ) -> list[Fact]:
        """Facts with any of ``entities`` as subject or object, newest first.

        Current facts only (or those valid at ``as_of``); with ``history`` also
        the closed ones; with ``predicates``, only facts of those predicates
        (read through an index, so a hub's other facts cost nothing). At most
        ``limit`` per entity.
        """

    @abstractmethod
    def facts_with_predicate(
        self, predicate: str, *, as_of: int | None = None, limit: int = MAX_NEIGHBOURS
    ) -> list[Fact]:
        """Facts with this predicate, current (or at ``as_of``), newest first."""

    def facts_of_few_subjects(
        self,
        predicates: Sequence[str],
        *,
        max_subjects: int,
        as_of: int | None = None,
        limit: int = MAX_NEIGHBOURS,
    ) -> dict[str, list[Fact]]:
        """For each predicate that holds (now, or at ``as_of``) for at most
        ``max_subjects`` subjects, its newest ``limit`` facts; ``[]`` for one that holds
        for more. One round trip on a remote store, and work bounded by
        ``max_subjects`` for a widespread relation: a question that names a relation
        of a few subjects ("the valve that failed the test") finds them this way.
        """
        out: dict[str, list[Fact]] = {}
        for predicate in predicates:
            facts = self.facts_with_predicate(predicate, as_of=as_of, limit=2**31)
            few = len({f.subject for f in facts}) <= max_subjects
            out[predicate] = facts[:limit] if few else []
        return out

    def neighbourhood(self, plan: Plan) -> Neighbourhood | None:
        """The reads a question's walk outlines (``plan``), made at once and pinned to one
        sequence number, for a :class:`~ctxneo.stores.neighbourhood.View` to serve the
        walk from; ``None`` where reads cost no round trip (the embedded store answers
        each read from its indexes in process, so reading ahead would only add work)."""
        return None

    @abstractmethod
    def current_of(self, subject: str, predicate: str | None = None) -> list[Fact]:
        """The current facts of ``subject`` (and ``predicate``), oldest first: what holds
        now, whatever the length of the history behind it."""

    @abstractmethod
    def history(
        self, subject: str, predicate: str | None = None, *, limit: int | None = None
    ) -> list[Fact]:
        """Every fact of ``subject`` (and ``predicate``), current and closed, oldest first;
        only the newest ``limit`` when given (read alone: a long history costs nothing)."""

    @abstractmethod
    def all_facts(self) -> Iterator[Fact]:
        """Every fact, current and closed, in sequence order."""

    @abstractmethod
    def stats(self) -> dict[str, int]:
        """Counts: facts, current facts, entities, predicates."""

    def namespaces(self) -> dict[str, dict[str, int]] | None:
        """Every memory on this store's server, by namespace, with its counts.

        ``None`` for a store that holds one memory only (the embedded store).
        """
        return None

    def image(self) -> MemoryImage:
        """The whole memory as data (a consistent view: no write lands in the middle)."""
        return MemoryImage(
            tuple(self.all_facts()),
            self.aliases(),
            self.multi_valued(),
            self.stats()["last_seq"],
        )

    def close(self) -> None:  # noqa: B027 - stores without resources need not override it
        """Release connections and files. Idempotent."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def supersede(
    existing: Sequence[Fact], new: NewFact, multi: bool
) -> tuple[Fact | None, list[Fact]]:
    """The supersession rule, shared by the stores that decide it in Python.

    Given the current facts of (new.subject, new.predicate), return the
    current fact that already states ``new.object`` (nothing to write) and the
    facts the new one closes (none for a multi-valued predicate).
    """
    for fact in existing:
        if fact.object == new.object:
            return fact, []
    return None, ([] if multi else [f for f in existing if f.valid_to is None])
