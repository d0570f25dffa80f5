"""The embedded store: a NetworkX graph in process, optionally journaled to a file.

Layout (every structure is a dict lookup, so a write is O(1) in the graph size):

- ``graph``: a ``networkx.DiGraph`` over entity names; the data dict of edge
  (subject, object) maps each fact's sequence number to the :class:`Fact`, so
  parallel facts between two entities (different predicates, or a value
  stated, changed and stated again) share one edge.
- ``by_key``: (subject, predicate) -> that pair's facts in sequence order:
  supersession reads it instead of scanning edges, and it is the history.
- ``by_predicate``: predicate -> (subject, seq) of its facts in sequence order,
  read from the newest end to find "the X that has P" without a scan.
- ``postings``: name stem -> entities (and alias owners) having it: the
  inverted index the answerer's entity linking uses instead of a node scan.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import networkx as nx

from ctxneo.errors import JournalError, StoreError
from ctxneo.model import Fact, NewFact, check_name, check_predicate
from ctxneo.stores.base import (
    MAX_CANDIDATES,
    MAX_NEIGHBOURS,
    MAX_PATHS,
    EntityHit,
    Store,
    supersede,
)
from ctxneo.stores.journal import Journal, fact_record, record_fact
from ctxneo.text import index_keys

#: Postings longer than this only score candidates, they do not propose them.
CANDIDATE_POSTING = 128

_T = TypeVar("_T")


def _locked(method: Callable[..., _T]) -> Callable[..., _T]:
    """Run a public method under the store's lock: one thread at a time touches the graph."""

    @functools.wraps(method)
    def wrapper(self: NetworkXStore, *args: Any, **kwargs: Any) -> _T:
        with self._lock:
            return method(self, *args, **kwargs)

    return wrapper


class FactGraph(nx.DiGraph):  # type: ignore[misc]
    """A DiGraph whose edge (subject, object) data maps sequence numbers to facts.

    :meth:`put` writes the adjacency dicts directly (the route NetworkX documents
    for subclasses): ``add_edge`` and the views cost more than the dict writes.
    """

    def put(self, fact: Fact) -> None:
        """Store ``fact`` on its edge (both nodes must exist), replacing its older version."""
        s, o = fact.subject, fact.object
        edge = self._succ[s].get(o)
        if edge is None:
            edge = self._succ[s][o] = {}
            self._pred[o][s] = edge
        edge[fact.seq] = fact


class NetworkXStore(Store):
    """In-process store; with ``path`` every change is appended to a journal.

    With ``create=False`` a missing journal is an error instead of a new file.
    """

    backend = "networkx"

    def __init__(self, path: str | Path | None = None, *, create: bool = True) -> None:
        self.path = Path(path) if path is not None else None
        if self.path is not None and not create and not self.path.exists():
            # Reading a memory that is not there is a mistake to report, not a file to make.
            raise JournalError(f"no memory at {self.path}: nothing has been remembered there")
        self.graph = FactGraph()
        self.by_key: dict[tuple[str, str], list[Fact]] = {}
        self.by_predicate: dict[str, list[tuple[str, int]]] = {}
        # Insertion-ordered (a dict, not a set) so a truncated posting is the same
        # under any hash seed.
        self.postings: dict[str, dict[str, None]] = defaultdict(dict)
        self._aliases: dict[str, list[str]] = {}
        self.multi: set[str] = set()
        self.seq = 0
        self.facts_total = 0
        self.facts_current = 0
        self._journal: Journal | None = None
        self._lock = threading.RLock()
        self._closed = False
        if self.path is not None:
            self._journal = Journal(self.path)
            self._journal.open()
            with self._journal.locked():
                self._apply(self._journal.read_new())

    # -- journal --------------------------------------------------------------

    def _sync(self) -> None:
        """Apply what other processes appended to the journal since we last read it."""
        if self._closed:
            raise StoreError("this memory is closed")
        if self._journal is not None:
            with self._journal.locked():
                self._apply(self._journal.read_new())

    def _apply(self, records: list[dict[str, Any]]) -> None:
        for r in records:
            op = r.get("op")
            try:
                if op == "batch":
                    self._apply(r["records"])
                elif op == "clear":
                    self._reset()
                elif op == "fact":
                    self._insert(record_fact(r))
                elif op == "close":
                    self._close(self._find(r["s"], r["p"], r["seq"]), r["at"])
                elif op == "tick":
                    self.seq = max(self.seq, r["at"])
                elif op == "multi":
                    self.multi.add(r["predicate"])
                elif op == "alias":
                    self._alias(r["phrase"], r["entity"])
                else:
                    raise KeyError(f"unknown op {op!r}")
            except (KeyError, TypeError) as e:
                raise JournalError(f"{self.path}: bad {op!r} record {r}: {e}") from e

    def _write(self, records: list[dict[str, Any]], change: Any) -> Any:
        """Run ``change`` (which mutates memory) and journal its records as one line.

        If the journal cannot take them, memory is rebuilt from the journal, so
        it never holds what the file does not.
        """
        if self._closed:
            raise StoreError("this memory is closed")
        if self._journal is None:
            return change()
        journal = self._journal
        with journal.locked():
            self._apply(journal.read_new())
            result = change()
            if records:
                try:
                    journal.append(records)
                except JournalError:
                    self._reset()
                    journal.rewind()
                    self._apply(journal.read_new())
                    raise
            return result

    # -- in-memory structures -------------------------------------------------

    def _insert(self, fact: Fact) -> None:
        s, o, p = fact.subject, fact.object, fact.predicate
        graph = self.graph
        succ = graph._succ
        for name in (s, o):
            if name not in succ:
                graph.add_node(name)
                postings = self.postings
                for key in index_keys(name):
                    postings[key][name] = None
        graph.put(fact)
        history = self.by_key.get((s, p))
        if history is None:
            self.by_key[(s, p)] = [fact]
        else:
            history.append(fact)
        by_predicate = self.by_predicate.get(p)
        if by_predicate is None:
            self.by_predicate[p] = [(s, fact.seq)]
        else:
            by_predicate.append((s, fact.seq))
        last = fact.seq if fact.valid_to is None or fact.valid_to < fact.seq else fact.valid_to
        if last > self.seq:
            self.seq = last
        self.facts_total += 1
        if fact.valid_to is None:
            self.facts_current += 1

    def _find(self, subject: str, predicate: str, seq: int) -> Fact:
        for fact in self.by_key[(subject, predicate)]:
            if fact.seq == seq:
                return fact
        raise KeyError(f"no fact #{seq}")

    def _close(self, fact: Fact, at: int) -> Fact:
        closed = fact.closed_at(at)
        facts = self.by_key[(fact.subject, fact.predicate)]
        facts[facts.index(fact)] = closed
        self.graph.put(closed)
        self.seq = max(self.seq, at)
        if fact.valid_to is None:
            self.facts_current -= 1
        return closed

    def _alias(self, phrase: str, entity: str) -> None:
        if entity not in self.graph._succ:  # an alias names an entity, facts or not
            self.graph.add_node(entity)
            for key in index_keys(entity):
                self.postings[key][entity] = None
        owners = self._aliases.setdefault(entity, [])
        if phrase not in owners:
            owners.append(phrase)
        for key in index_keys(phrase):
            self.postings[key][entity] = None

    # -- writes ---------------------------------------------------------------

    @_locked
    def remember_many(self, facts: Sequence[NewFact]) -> list[Fact]:
        checked = [f.checked() for f in facts]
        records: list[dict[str, Any]] = []
        journaled = self._journal is not None

        by_key = self.by_key

        def change() -> list[Fact]:
            out: list[Fact] = []
            closed_now: dict[int, Fact] = {}  # facts of this batch that a later one closed
            for new in checked:
                predicate = new.predicate
                if new.multi and predicate not in self.multi:
                    self.multi.add(predicate)
                    if journaled:
                        records.append({"op": "multi", "predicate": predicate})
                closing: Sequence[Fact] = ()
                history = by_key.get((new.subject, predicate))
                if history:  # a new (subject, predicate) needs no supersession check
                    current = [f for f in history if f.valid_to is None]
                    same, closing = supersede(current, new, predicate in self.multi)
                    if same is not None:
                        out.append(same)
                        continue
                seq = self.seq + 1
                for old in closing:
                    closed_now[old.seq] = self._close(old, seq)
                    if journaled:
                        records.append(
                            {
                                "op": "close",
                                "s": old.subject,
                                "p": predicate,
                                "seq": old.seq,
                                "at": seq,
                            }
                        )
                fact = Fact(
                    new.subject,
                    predicate,
                    new.object,
                    seq,
                    seq,
                    None,
                    new.speaker,
                    new.turn_id,
                    new.fact_id,
                )
                self._insert(fact)
                if journaled:
                    records.append(fact_record(fact))
                out.append(fact)
            # A fact closed later in the same batch is returned as it now stands.
            return [closed_now.get(f.seq, f) for f in out] if closed_now else out

        return self._write(records, change)

    @_locked
    def retract(self, subject: str, predicate: str, obj: str | None = None) -> list[Fact]:
        check_predicate(predicate)
        records: list[dict[str, Any]] = []

        def change() -> list[Fact]:
            current = [
                f
                for f in self.by_key.get((subject, predicate), ())
                if f.valid_to is None and (obj is None or f.object == obj)
            ]
            if not current:
                return []
            at = self.seq + 1
            records.append({"op": "tick", "at": at})
            closed = [self._close(f, at) for f in current]
            records.extend(
                {"op": "close", "s": f.subject, "p": f.predicate, "seq": f.seq, "at": at}
                for f in closed
            )
            return closed

        return self._write(records, change)

    @_locked
    def declare_multi_valued(self, predicates: Iterable[str]) -> None:
        new = sorted({check_predicate(p) for p in predicates} - self.multi)
        records = [{"op": "multi", "predicate": p} for p in new]
        self._write(records, lambda: self.multi.update(new))

    @_locked
    def multi_valued(self) -> frozenset[str]:
        self._sync()
        return frozenset(self.multi)

    @_locked
    def add_alias(self, phrase: str, entity: str) -> None:
        check_name(phrase, "alias phrase")
        check_name(entity, "entity")
        if phrase in self._aliases.get(entity, ()):
            return
        self._write(
            [{"op": "alias", "phrase": phrase, "entity": entity}],
            lambda: self._alias(phrase, entity),
        )

    @_locked
    def clear(self) -> None:
        # Journaled as a record, not a truncation: other processes sharing the
        # file read it and clear too.
        self._write([{"op": "clear"}], self._reset)

    def _reset(self) -> None:
        self.graph.clear()
        self.by_key.clear()
        self.by_predicate.clear()
        self.postings.clear()
        self._aliases.clear()
        self.multi.clear()
        self.seq = self.facts_total = self.facts_current = 0

    # -- reads ----------------------------------------------------------------

    @_locked
    def find_entities(self, keys: Sequence[str], limit: int = MAX_CANDIDATES) -> list[EntityHit]:
        """Rank like a search engine: rare stems weigh more (idf); only the rarer
        postings propose candidates, so a common stem ("svc" of every service)
        never makes a question scan half the graph."""
        self._sync()
        postings = [p for key in set(keys) if (p := self.postings.get(key))]
        if not postings:
            return []
        postings.sort(key=len)
        total = max(1, self.graph.number_of_nodes())
        candidates: dict[str, None] = {}
        for posting in postings:
            if candidates and len(posting) > CANDIDATE_POSTING:
                break
            candidates.update(dict.fromkeys(itertools.islice(posting, CANDIDATE_POSTING)))
        weights = [(p, math.log(1 + total / len(p))) for p in postings]
        scored = ((sum(w for p, w in weights if name in p), name) for name in candidates)
        best = heapq.nsmallest(limit, scored, key=lambda sn: (-sn[0], sn[1]))
        return [EntityHit(name, tuple(self._aliases.get(name, ()))) for _, name in best]

    @_locked
    def aliases(self) -> dict[str, tuple[str, ...]]:
        self._sync()
        return {entity: tuple(phrases) for entity, phrases in sorted(self._aliases.items())}

    @_locked
    def predicates(self) -> list[str]:
        self._sync()
        return sorted(self.by_predicate)

    def _touching(self, entity: str) -> Iterator[Fact]:
        if entity not in self.graph:
            return
        for _, _, facts in self.graph.out_edges(entity, data=True):
            yield from facts.values()
        for _, _, facts in self.graph.in_edges(entity, data=True):
            yield from facts.values()

    def _adjacent(self, entity: str, as_of: int | None, history: bool, limit: int) -> list[Fact]:
        facts = (f for f in self._touching(entity) if history or f.valid_at(as_of))
        # A self-loop is seen from both ends; keep it once.
        unique = {f.seq: f for f in facts}
        return heapq.nlargest(limit, unique.values(), key=lambda f: f.seq)

    @_locked
    def facts_of(
        self,
        entities: Sequence[str],
        *,
        as_of: int | None = None,
        history: bool = False,
        limit: int = MAX_NEIGHBOURS,
    ) -> list[Fact]:
        self._sync()
        found: dict[int, Fact] = {}
        for entity in entities:
            for fact in self._adjacent(entity, as_of, history, limit):
                found[fact.seq] = fact
        return sorted(found.values(), key=lambda f: -f.seq)

    @_locked
    def two_hop(
        self,
        entities: Sequence[str],
        *,
        through: Sequence[str] | None = None,
        as_of: int | None = None,
        limit: int = MAX_PATHS,
    ) -> list[tuple[Fact, Fact]]:
        self._sync()
        allowed = None if through is None else set(through)
        paths: dict[tuple[int, int], tuple[Fact, Fact]] = {}
        for entity in entities:
            for first in self._adjacent(entity, as_of, False, MAX_NEIGHBOURS):
                middle = first.object if first.subject == entity else first.subject
                if middle == entity or (allowed is not None and middle not in allowed):
                    continue
                for second in self._adjacent(middle, as_of, False, MAX_NEIGHBOURS):
                    far = second.object if second.subject == middle else second.subject
                    if second.seq != first.seq and far != entity:
                        paths[(first.seq, second.seq)] = (first, second)
        ordered = sorted(paths.items(), key=lambda kv: (-kv[0][0], -kv[0][1]))
        return [path for _, path in itertools.islice(ordered, limit)]

    @_locked
    def facts_with_predicate(
        self, predicate: str, *, as_of: int | None = None, limit: int = MAX_NEIGHBOURS
    ) -> list[Fact]:
        self._sync()
        found: list[Fact] = []
        for subject, seq in reversed(self.by_predicate.get(predicate, ())):
            fact = self._find(subject, predicate, seq)
            if fact.valid_at(as_of):
                found.append(fact)
                if len(found) == limit:
                    break
        return found

    @_locked
    def history(self, subject: str, predicate: str | None = None) -> list[Fact]:
        self._sync()
        if predicate is not None:
            return list(self.by_key.get((subject, predicate), ()))
        if subject not in self.graph:
            return []
        facts = [f for _, _, fs in self.graph.out_edges(subject, data=True) for f in fs.values()]
        return sorted(facts, key=lambda f: f.seq)

    @_locked
    def all_facts(self) -> Iterator[Fact]:
        self._sync()
        facts = [f for fs in self.by_key.values() for f in fs]
        return iter(sorted(facts, key=lambda f: f.seq))

    @_locked
    def stats(self) -> dict[str, int]:
        self._sync()
        return {
            "facts": self.facts_total,
            "current_facts": self.facts_current,
            "entities": self.graph.number_of_nodes(),
            "predicates": len(self.by_predicate),
            "last_seq": self.seq,
        }

    @_locked
    def close(self) -> None:
        self._closed = True
        if self._journal is not None:
            self._journal.close()
