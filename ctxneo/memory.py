"""``Memory``: the one object applications use, over either store."""

from __future__ import annotations

import os
import threading
import unicodedata
import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxneo.answering.lexicon import Lexicon
from ctxneo.errors import ConfigError, InvalidFactError, StoreError
from ctxneo.model import (
    MAX_QUESTION_CHARS,
    Answer,
    Fact,
    NewFact,
    Trace,
    check_int,
    check_name,
    check_namespace,
    check_predicate,
    check_text,
)
from ctxneo.neo4j_uri import looks_like_uri
from ctxneo.stores.base import Store, Written
from ctxneo.text import index_keys
from ctxneo.vocabulary import VocabularyView, alias_notes, resemblances, vocabulary

if TYPE_CHECKING:
    from ctxneo.answering.reader import Reader

FactLike = NewFact | Mapping[str, Any] | tuple[str, str, str]

#: At most this many readings per answer.
MAX_READINGS = 50


#: Every memory of this process, for a fork (see _hold_readers).
_MEMORIES: weakref.WeakSet[Memory] = weakref.WeakSet()
_HELD: list[Memory] = []


def _hold_readers() -> None:
    """Before a fork: wait for any thread making a memory's reader (its first question,
    which imports the answering code and loads its model) to finish. A reader lock, or
    a module's import lock, that such a thread held at the fork would be copied held
    into the child, where that thread is not, and the child's first question would wait
    on it for ever. (Making a reader reads no store, so no store lock is waited on.)"""
    for memory in list(_MEMORIES):
        memory._reader_lock.acquire()
        _HELD.append(memory)


def _release_readers() -> None:
    while _HELD:
        _HELD.pop()._reader_lock.release()


def _fresh_reader_locks() -> None:
    while _HELD:
        _HELD.pop()._reader_lock = threading.Lock()


os.register_at_fork(
    before=_hold_readers,
    after_in_parent=_release_readers,
    after_in_child=_fresh_reader_locks,
)


class Memory:
    """A context-graph memory: remember facts, ask questions, read history.

    Open one with :meth:`open`; use it as a context manager or call
    :meth:`close`. It is safe to share between threads (each store guards
    its own state).
    """

    def __init__(self, store: Store, *, lexicon: Lexicon | None = None) -> None:
        self.store = store
        # Read now, so a bad $CTXNEO_LEXICON is an error at open, not at the first ask.
        self._lexicon = lexicon or Lexicon.default()
        self._reader: Reader | None = None
        self._reader_lock = threading.Lock()
        _MEMORIES.add(self)

    def __getstate__(self) -> dict[str, Any]:
        # Sent to a multiprocessing child: the store and the lexicon travel; the
        # reader is made again there at its first question.
        return {"store": self.store, "lexicon": self._lexicon}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["store"], lexicon=state["lexicon"])  # type: ignore[misc]

    @property
    def _answerer(self) -> Reader:
        """The reader, made at the first question: it loads numpy and the fitted
        model (a few hundred milliseconds) that writes and listings never need."""
        if self._reader is None:
            with self._reader_lock:
                if self._reader is None:
                    from ctxneo.answering.reader import Reader
                    from ctxneo.meaning import WordVectors

                    self._reader = Reader(self.store, WordVectors.default(), lexicon=self._lexicon)
        return self._reader

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        uri: str | None = None,
        user: str | None = None,
        password: str | None = None,
        database: str | None = None,
        namespace: str = "default",
        lexicon: Lexicon | None = None,
        create: bool = True,
        fsync: str | None = None,
    ) -> Memory:
        """Open a memory.

        Args:
            path: a journal file for the embedded store (made by the first write);
                ``None`` keeps the memory in process only.
            uri: a Neo4j URI (``bolt://``, ``neo4j://``, ``neo4j+s://``...);
                when given, the memory lives in Neo4j instead.
            user, password, database: Neo4j credentials (user ``neo4j`` unless
                given; without a password, the local server's that ``ctxneo neo4j
                start`` runs at ``uri`` is used) and database name.
            namespace: the Neo4j namespace this memory lives in.
            create: make the journal when it does not exist; ``False`` for a
                caller that only reads (a missing file is then a ``JournalError``,
                a Neo4j namespace that holds nothing a ``StoreError`` naming the
                namespaces that exist). Either way a journal is made by the first
                write, never by reading.
            fsync: the journal's fsync policy: ``always`` (before every write
                returns; the default, or ``$CTXNEO_FSYNC``), ``batch`` (every
                64 writes and at close) or ``off`` (the kernel decides).

        Raises:
            JournalError: the journal cannot be read.
            ConfigError: ``uri`` is not a Neo4j URI (e.g. ``http://``).
            StoreUnavailable: Neo4j cannot be reached at ``uri``.
            StoreError: ``create=False`` and the namespace holds nothing.
            InvalidFactError: an argument has the wrong type.
        """
        if not isinstance(create, bool):
            raise InvalidFactError(f"create must be True or False, got {create!r}")
        if uri is not None:
            if path is not None:
                raise InvalidFactError("give either a journal path or a Neo4j URI, not both")
            from ctxneo.stores.neo4j import Neo4jStore

            for value, what in ((user, "user"), (password, "password"), (database, "database")):
                if value is not None:
                    check_text(value, what, secret=what == "password")
            if password is None:
                # As on the command line: the server `ctxneo neo4j start` runs is opened
                # without copying its generated password around.
                from ctxneo.neo4j_local.server import local_credentials

                found = local_credentials(uri)
                if found is not None:
                    user, password = user or found[0], found[1]
            store: Store = Neo4jStore(
                uri,
                user=user or "neo4j",
                password=password,
                database=database,
                namespace=namespace,
            )
            store.connect()  # type: ignore[attr-defined]
            if not create and not store.holds_memory():  # type: ignore[attr-defined]
                # Reading a namespace nothing was written to is a typo to report.
                held = store.namespaces() or {}
                store.close()
                names = sorted(held)
                there = ", ".join(names[:10]) or "none"
                if len(names) > 10:
                    there += f" and {len(names) - 10} more"
                raise StoreError(
                    f"namespace {namespace!r} at {store.uri} holds no memory "
                    f"(namespaces there: {there})"
                )
        else:
            from ctxneo.stores.networkx import NetworkXStore

            check_namespace(namespace)
            _check_journal_path(path, user=user, password=password, database=database)
            store = NetworkXStore(path, create=create, fsync=fsync)
        return cls(store, lexicon=lexicon)

    # -- writes -----------------------------------------------------------------

    def remember(
        self,
        subject: str,
        predicate: str,
        object: str,
        *,
        speaker: str | None = None,
        turn_id: int | None = None,
        fact_id: str | None = None,
        multi: bool = False,
        text: str | None = None,
    ) -> Fact:
        """Store a fact; a new value of a single-valued (subject, predicate) closes the old one.

        ``text`` is what was said when the fact was stated: kept with it, and its words
        let later questions name the fact's entities as people spoke of them.
        Returns the stored fact (the existing one when the value is unchanged).

        Raises:
            InvalidFactError: a name is empty or the predicate is not an identifier.
        """
        if not isinstance(multi, bool):
            raise InvalidFactError(f"multi must be True or False, got {multi!r}")
        return self.store.remember(
            NewFact(subject, predicate, object, speaker, turn_id, fact_id, multi, text)
        )

    def remember_many(self, facts: Iterable[FactLike]) -> list[Fact]:
        """Store facts with exactly the semantics of one-at-a-time :meth:`remember`, batched.

        One write: on the journal one line, on Neo4j one transaction; all or nothing.
        """
        return self.write(facts).facts

    def write(self, facts: Iterable[FactLike]) -> Written:
        """:meth:`remember_many`, saying what the write did: the facts as they now
        stand, which it created (the rest were current already) and the facts
        current before it that it closed, as the write itself saw them."""
        if isinstance(facts, (str, bytes, Mapping)) or not isinstance(facts, Iterable):
            raise InvalidFactError(f"remember_many takes an iterable of facts, got {facts!r}"[:200])
        # (A NewFact, what a batch mostly holds, is taken as it is without a call.)
        return self.store.write([f if f.__class__ is NewFact else _as_new_fact(f) for f in facts])

    def retract(self, subject: str, predicate: str, object: str | None = None) -> list[Fact]:
        """Close the current value(s) of (subject, predicate), or just ``object``; return them."""
        check_name(subject, "subject")
        if object is not None:
            check_name(object, "object")
        return self.store.retract(subject, check_predicate(predicate), object)

    def declare_multi_valued(self, *predicates: str) -> None:
        """Declare predicates multi-valued: from now on their values accumulate.

        A new value of a multi-valued (subject, predicate) is added beside the
        current ones instead of closing them (``retract`` closes one). The
        declaration is stored with the memory, so it holds for every later
        write and every process; no predicate is multi-valued unless declared
        (or written with ``multi=True``).
        """
        self.store.declare_multi_valued([check_predicate(p) for p in predicates])

    def withdraw_multi_valued(self, *predicates: str) -> None:
        """Withdraw multi-valued declarations: from now on a new value of these
        predicates closes the current ones again.

        The values current now stay current until the next write of their
        (subject, predicate) closes them all, or ``retract`` closes one. Like a
        declaration, the withdrawal is stored with the memory, for every process;
        a predicate that is not declared is left as it is.
        """
        self.store.withdraw_multi_valued([check_predicate(p) for p in predicates])

    def multi_valued(self) -> frozenset[str]:
        """The predicates declared multi-valued."""
        return self.store.multi_valued()

    def alias(self, phrase: str, entity: str) -> list[str]:
        """Let questions refer to ``entity`` as ``phrase``; returns what may be amiss
        with it, one line each (``entity 'Finance_Egn' has no fact yet; the memory has
        'Finance_Eng'``): the alias is stored all the same."""
        # Checked as the store checks them, before the notes read the store with them.
        notes = alias_notes(
            self.store, check_name(phrase, "alias phrase"), check_name(entity, "entity")
        )
        self.store.add_alias(phrase, entity)
        return notes

    def vocabulary(self, words: str | None = None, *, limit: int = 20) -> VocabularyView:
        """The names in use, for writers to reuse: the ``limit`` most used predicates
        (current facts and an example each), the multi-valued declarations, and up to
        ``limit`` entity names that ``words`` find."""
        return vocabulary(self.store, words, limit)

    def resemblances(self, facts: Iterable[FactLike]) -> list[str]:
        """What writing ``facts`` would add that resembles names in use, one line each
        (``predicate OWNER is new; the memory has OWNED_BY``); nothing is written."""
        return resemblances(self.store, [_as_new_fact(f).checked() for f in facts])

    # -- reads --------------------------------------------------------------------

    def ask(
        self,
        question: str,
        *,
        speaker: str | None = None,
        as_of: int | None = None,
        k: int = 1,
        min_confidence: float | None = None,
        max_tokens: int | None = None,
        topic: str | None = None,
    ) -> Answer:
        """Answer a question from the graph (``UNKNOWN``, with the reason, when memory
        does not hold an answer it is sure enough of).

        Args:
            question: the question text; nothing else about it is used.
            speaker: who asks (resolves "I", "my").
            as_of: answer as the memory stood at this sequence number.
            k: how many readings to return in ``Answer.readings`` and the context.
            min_confidence: answer only at or above this confidence (default
                :data:`ctxneo.answering.DEFAULT_MIN_CONFIDENCE`); below it the
                answer is ``UNKNOWN`` and the reading is offered as ``candidate``.
            max_tokens: a budget for ``Answer.context`` (whole facts are dropped
                from the lowest reading up to fit it, and a last line says how
                many when it fits after them).
            topic: the entity the question is about, when the caller knows it
                (it is then the only anchor).

        Raises:
            InvalidFactError: an argument has the wrong type or range, or the
                question is longer than :data:`MAX_QUESTION_CHARS`.
        """
        _check_question(question)
        if speaker is not None:
            check_text(speaker, "speaker")
        if topic is not None:
            check_text(topic, "topic")
        if as_of is not None:
            check_int(as_of, "as_of", minimum=0)
        check_int(k, "k", minimum=1)
        if k > MAX_READINGS:
            raise InvalidFactError(f"k must be at most {MAX_READINGS}, got {k}")
        if max_tokens is not None:
            check_int(max_tokens, "max_tokens", minimum=1)
        if min_confidence is not None and (
            not isinstance(min_confidence, (int, float))
            or isinstance(min_confidence, bool)
            or not 0.0 <= min_confidence <= 1.0
        ):
            raise InvalidFactError(
                f"min_confidence must be a number from 0 to 1, got {min_confidence!r}"
            )
        reader = self._answerer  # (made before the store is held: it loads the model)
        # (one state for all the answer's reads: a write between two of them could join
        # a fact with one that replaced its neighbour)
        with self.store.one_state():
            return reader.ask(
                question,
                speaker=speaker,
                as_of=as_of,
                k=k,
                min_confidence=min_confidence,
                max_tokens=max_tokens,
                topic=topic,
            )

    def trace(self, question: str, *, speaker: str | None = None, k: int = 10) -> Trace:
        """How ``question`` is read, stage by stage: the anchors linked and the best
        ``k`` candidate readings before any threshold (for diagnosis; see
        ``ctxneo bench --diagnose``)."""
        _check_question(question)
        check_int(k, "k", minimum=1)
        reader = self._answerer
        with self.store.one_state():
            return reader.trace(question, speaker=speaker, k=min(k, MAX_READINGS))

    def current(self, subject: str, predicate: str | None = None) -> list[Fact]:
        """The current facts of ``subject`` (and ``predicate``), oldest first. Names are
        exact: none for a name spelt otherwise than stored (:meth:`stored_names` gives
        the spellings stored that differ in case only)."""
        return self.store.current_of(subject, predicate)

    def history(
        self, subject: str, predicate: str | None = None, *, limit: int | None = None
    ) -> list[Fact]:
        """Every fact of ``subject`` (and ``predicate``), current and closed, oldest first;
        the newest ``limit`` of them when given."""
        return self.store.history(subject, predicate, limit=limit)

    def facts(self, entity: str, *, as_of: int | None = None, history: bool = False) -> list[Fact]:
        """Facts with ``entity`` as subject or object, newest first.

        ``history`` adds closed facts; with ``as_of``, none written after it.
        """
        check_text(entity, "entity")
        if as_of is not None:
            check_int(as_of, "as_of", minimum=0)
        if not isinstance(history, bool):
            raise InvalidFactError(f"history must be True or False, got {history!r}")
        found = self.store.facts_of([entity], as_of=as_of, history=history)
        return found if as_of is None else [f for f in found if f.seq <= as_of]

    def stats(self) -> dict[str, int]:
        """Counts: facts, current facts, entities, predicates and the last sequence number."""
        return self.store.stats()

    def stored_names(self, name: str) -> list[str]:
        """Entity names stored that differ from ``name`` only in case (for "did you mean").

        An index lookup, not a scan: names whose words differ (``servicepayments``
        for ``Service_Payments``) are not found.
        """
        wanted = name.casefold()
        hits = self.store.find_entities(sorted(index_keys(name)))
        return sorted({h.name for h in hits if h.name != name and h.name.casefold() == wanted})

    def namespaces(self) -> dict[str, dict[str, int]] | None:
        """Every memory on this memory's server by namespace, with its counts.

        ``None`` for a store that holds one memory only (the embedded store).
        """
        return self.store.namespaces()

    def clear(self) -> None:
        """Delete everything this memory holds, and nothing else: facts, aliases and
        multi-valued declarations; sequence numbers start again at 1.

        On Neo4j this memory's namespace (its nodes and relationships) is
        deleted. A journal is replaced, atomically, by an empty one and its
        ``.torn`` side file deleted, so no file of the memory keeps a cleared
        fact; other processes sharing it see the empty memory on their next
        read or write.
        """
        self.store.clear()

    def warm(self) -> None:
        """Read now what the store keeps for answering (on Neo4j, its copy of the names),
        so the first question costs no more round trips than the next: for a client
        that lives for many questions (``ctxneo serve``, a benchmark). A no-op in
        process."""
        self.store.warm()

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_journal_path(
    path: str | Path | None, *, user: str | None, password: str | None, database: str | None
) -> None:
    """A journal path that is a URI, or credentials with a journal, is a mix-up to report:
    ``Memory.open("bolt://...")`` made a journal file under ``./bolt:/`` and ignored the
    password given with it."""
    if path is not None and looks_like_uri(str(path)):
        raise ConfigError(
            f"{str(path)!r} is a URI, not a journal path: a Neo4j memory is opened with "
            "uri= (--uri on the command line), a journal with a file path"
        )
    given = [n for n, v in (("user", user), ("password", password), ("database", database)) if v]
    if given:
        raise InvalidFactError(
            f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} to a Neo4j "
            "memory (uri=...), not to a journal"
        )


def _check_question(question: object) -> None:
    if isinstance(question, str) and len(question) > MAX_QUESTION_CHARS:
        raise InvalidFactError(
            f"a question is at most {MAX_QUESTION_CHARS:,} characters; this one has "
            f"{len(question):,}"
        )
    text = check_text(question, "question", max_bytes=4 * MAX_QUESTION_CHARS)
    if not any(c.isalnum() or unicodedata.category(c) == "So" for c in text):
        # (an empty ask is a caller's slip: "UNKNOWN, no entity of it in memory" hid it;
        # so is one of punctuation alone, "?"; a symbol such as an emoji may be a name)
        raise InvalidFactError(
            "a question must have words; this one is "
            + ("empty" if not text.strip() else f"punctuation only ({text.strip()[:20]!r})")
        )


def _as_new_fact(f: FactLike) -> NewFact:
    if isinstance(f, NewFact):
        return f
    if isinstance(f, tuple):
        if not 3 <= len(f) <= 8:
            raise InvalidFactError(f"a fact tuple is (subject, predicate, object, ...): {f!r}")
        return NewFact(*f)
    if isinstance(f, Mapping):
        try:
            return NewFact(**f)
        except TypeError as e:
            raise InvalidFactError(f"not a fact: {dict(f)!r} ({e})") from e
    raise InvalidFactError(f"not a fact: {f!r}")
