"""The embedded store: a NetworkX graph in process, optionally journaled to a file.

Layout (every structure is a dict lookup, so a write costs the same whatever
the size of the graph or the length of a key's history):

- ``graph``: a ``networkx.DiGraph`` over entity names (every entity ever
  named); the data dict of edge (subject, object) maps the sequence number of
  each *current* fact between them to the :class:`Fact`.
- ``current``: (subject, predicate) -> object -> the current fact: what
  supersession reads, one lookup however long the history.
- ``current_by_predicate``: predicate -> seq -> current fact, in sequence
  order, read from the newest end for "the X that has P".
- ``current_pointing``: (object, predicate) -> seq -> current fact: the facts
  that point at an entity through one predicate, read without walking the
  entity's other edges (a genre's thousands of films cost nothing to a
  question about its name).
- Closed facts are not kept as objects when the memory is journaled: the
  store keeps, per fact, its sequence number, the offset of its journal line
  and when it closed (24 bytes in three arrays), and the sequence numbers of
  the closed facts per key, entity and predicate; history questions read the
  facts back from the journal. Memory then grows with the current facts, not
  with how often they changed. In process only, closed facts stay in a dict.
- ``postings``: name stem -> entities (and alias owners) having it: the
  inverted index the answerer's entity linking uses instead of a node scan;
  ``said``: the same for the words facts were stated in (a fact's text names
  its subject and object as the speaker did).

A write is planned from the current state without changing it, validated,
serialized, appended to the journal (see :mod:`ctxneo.stores.journal`) and
only then applied: a write the journal refuses leaves the process as it was.
Replay checks the journal's invariants (unique increasing sequence numbers,
one current value per single-valued key, closes of current facts only) and
names the first line that breaks one.

Opening a journal loads its snapshot, when one checks out against the file, and
replays only the lines after it (see :mod:`ctxneo.stores.snapshot`); writers
leave snapshots when they close and, now and then, as the journal grows. A
snapshot's load leaves the inner dicts of ``current``, ``current_pointing`` and
the graph's adjacency to be built on first use: until then such a value is an
``int`` (see :class:`~ctxneo.stores.snapshot_state.Deferred`), so every read of
them goes through ``_live``, ``_pointing``, ``_out`` and ``_in``.
"""

from __future__ import annotations

import bisect
import functools
import gc
import heapq
import itertools
import operator
import os
import threading
import time
import warnings
import weakref
from array import array
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import networkx as nx

from ctxneo.errors import InvalidFactError, JournalError, StoreError
from ctxneo.model import (
    MAX_SEQ,
    Fact,
    NewFact,
    check_facts,
    check_int,
    check_name,
    check_predicate,
    make_fact,
)
from ctxneo.stores import snapshot, snapshot_state
from ctxneo.stores.base import (
    MAX_CANDIDATES,
    MAX_NEIGHBOURS,
    EntityHit,
    MemoryImage,
    PredicateUse,
    Store,
    Written,
    check_slot,
    most_used,
    next_seq,
    said_of,
)
from ctxneo.stores.journal import (
    Journal,
    encode_close,
    encode_fact,
    encode_record,
    encode_texts,
    fsync_policy,
    record_fact,
)
from ctxneo.stores.names import rank_entities
from ctxneo.text import index_keys

#: Parsed journal lines kept for history reads (a batch line holds many facts).
LINE_CACHE = 8
#: A writer snapshots the memory (see :mod:`ctxneo.stores.snapshot`) when the
#: journal lines after the last snapshot are at least this long (about 0.15 s of
#: replay here): a snapshot costs the whole current state, not the lines it saves.
SNAPSHOT_MIN_BYTES = 1 << 20
#: When it closes, once they are also this share of the journal (the next open
#: replays at most about that share of a full replay)...
SNAPSHOT_CLOSE_SHARE = 0.05
#: ...and while it writes, once they are this share of the journal (so snapshots
#: are spaced out geometrically as it grows)...
SNAPSHOT_TAIL_SHARE = 0.5
#: ...and writing one would take at most this share of the writer's time since the
#: last: a bulk ingest runs at full speed and leaves its snapshot when it closes;
#: a long-lived server writing now and then leaves them as it goes.
SNAPSHOT_TIME_SHARE = 0.1
#: Seconds a snapshot takes per current fact, until this process has written one
#: (5-20 µs here, by how busy the machine is: guessed high, a bulk ingest is never
#: interrupted by one).
SNAPSHOT_COST_PER_FACT = 2e-5

_T = TypeVar("_T")
#: A change of state: a :class:`Fact` to insert, or ("close", fact, at), ("tick", at),
#: ("multi", predicate), ("single", predicate), ("alias", phrase, entity), or ("clear",)
#: (replayed from journals written before a clear replaced the file; never written now).
Op = Any


#: Objects made under :func:`_collector_paused` past which they are moved to the
#: collector's oldest generation when it ends, rather than walked by its next
#: young collections: a bulk build, or a batch of a few thousand facts (about four
#: objects a fact; at 50,000 a batch of 10,000 facts was often short of it, and the
#: young collection walking its objects after it was a tenth of a batched ingest).
#: A read or a small write makes far fewer.
PROMOTE_OBJECTS = 10_000


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Keep the cyclic garbage collector out of a bulk build: replay and a snapshot's
    load allocate objects that live as long as the memory and form no cycles worth
    collecting, and the collector walking them again and again was a quarter of the
    time to open a large journal.

    When the build made many objects, they go straight to the oldest generation
    (``gc.freeze`` then ``gc.unfreeze``, which moves every tracked object there
    without walking any): otherwise the first young collection after it walked
    them all, a quarter of an open from a snapshot. Young objects of the rest of
    the process move with them, so a cycle among them that is already garbage is
    freed by the next full collection rather than a young one. Not done while the
    process has frozen objects of its own (unfreezing would release them)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_count()[0] > PROMOTE_OBJECTS and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if collecting:
            gc.enable()


def _locked(method: Callable[..., _T]) -> Callable[..., _T]:
    """Run a public method under the store's lock: one thread at a time touches the graph."""

    @functools.wraps(method)
    def wrapper(self: NetworkXStore, *args: Any, **kwargs: Any) -> _T:
        with self._lock:
            return method(self, *args, **kwargs)

    return wrapper


# A fork while another thread is inside a store would copy a half-made change
# into the child: hold every store's lock across fork(), and give the child
# fresh locks (its copies belong to threads that do not exist there).
_STORES: weakref.WeakSet[NetworkXStore] = weakref.WeakSet()
_HELD: list[NetworkXStore] = []


def _before_fork() -> None:
    for store in list(_STORES):
        store._lock.acquire()
        _HELD.append(store)


def _after_fork_in_parent() -> None:
    while _HELD:
        _HELD.pop()._lock.release()


def _after_fork_in_child() -> None:
    while _HELD:
        store = _HELD.pop()
        store._lock = threading.RLock()
        store._one_state = False  # (the thread that held it is not in the child)


os.register_at_fork(
    before=_before_fork,
    after_in_parent=_after_fork_in_parent,
    after_in_child=_after_fork_in_child,
)


class FactGraph(nx.DiGraph):  # type: ignore[misc]
    """A DiGraph whose edge (subject, object) data maps sequence numbers to current facts.

    :meth:`put` and :meth:`drop` write the adjacency dicts directly (the route
    NetworkX documents for subclasses): ``add_edge`` and the views cost more.
    The store builds an entity's adjacency before either is called (see
    ``NetworkXStore._out`` and ``_in``).
    """

    def put(self, fact: Fact) -> None:
        """Store ``fact`` on its edge (both nodes must exist)."""
        s, o = fact.subject, fact.object
        edge = self._succ[s].get(o)
        if edge is None:
            edge = self._succ[s][o] = {}
            self._pred[o][s] = edge
        edge[fact.seq] = fact

    def drop(self, fact: Fact) -> None:
        """Take ``fact`` off its edge, and the edge away when it was the last one."""
        s, o = fact.subject, fact.object
        edge = self._succ[s][o]
        del edge[fact.seq]
        if not edge:
            del self._succ[s][o]
            del self._pred[o][s]


_SEQ = operator.attrgetter("seq")


def _newest(facts: list[Fact], limit: int) -> list[Fact]:
    """The newest ``limit`` of ``facts`` (distinct sequence numbers): all of them, in no
    particular order, when there are no more than ``limit``."""
    if len(facts) <= limit:
        return facts
    facts.sort(key=_SEQ, reverse=True)
    return facts[:limit]


def _newest_of(
    entry: dict[Any, Fact], limit: int | None, before: int | None, skip: str | None = None
) -> Iterable[Fact]:
    """The facts of an index entry (oldest first), newest first: those written at or
    before ``before`` (when given) whose subject is not ``skip``, at most ``limit``."""
    facts: Iterable[Fact] = reversed(entry.values())
    if before is not None or skip is not None:
        facts = (f for f in facts if (before is None or f.seq <= before) and f.subject != skip)
    elif limit is None or len(entry) <= limit:
        return facts
    return facts if limit is None else itertools.islice(facts, limit)


def _reopen(path: Path, fsync: str) -> NetworkXStore:
    return NetworkXStore(path, fsync=fsync)


class NetworkXStore(Store):
    """In-process store; with ``path`` every change is appended to a journal.

    Args:
        path: the journal; ``None`` keeps the memory in this process only.
        create: with ``False`` a missing journal is an error. Either way the
            file is created by the first write, never by opening or reading.
        fsync: ``always``, ``batch`` or ``off`` (default ``$CTXNEO_FSYNC``,
            else ``always``); see :mod:`ctxneo.stores.journal`.

    Raises:
        JournalError: the journal cannot be read or breaks an invariant.
        ConfigError: ``fsync`` is not a policy.
    """

    backend = "networkx"

    def __init__(
        self, path: str | Path | None = None, *, create: bool = True, fsync: str | None = None
    ) -> None:
        if path is not None and not isinstance(path, (str, os.PathLike)):
            raise InvalidFactError(f"a journal path must be a string or a Path, got {path!r}")
        self.path = Path(path) if path is not None else None
        self.fsync = fsync_policy(fsync)
        if self.path is not None and not create:
            try:
                exists = self.path.exists()
            except (OSError, ValueError) as e:
                raise JournalError(f"cannot open journal {self.path!r}: {e}") from e
            if not exists:
                # Reading a memory that is not there is a mistake to report, not a file to make.
                raise JournalError(f"no memory at {self.path}: nothing has been remembered there")
        self._journal = Journal(self.path, fsync=self.fsync) if self.path is not None else None
        self._lock = threading.RLock()
        self._closed = False
        # True while one_state() holds the lock: reads then serve the state it synced
        # to, not what other processes append meanwhile (writes still catch up).
        self._one_state = False
        self._replaced = 0  # the journal's count of replaced files this state is built from
        # Off once a snapshot could not be written (said once) or a replay failed
        # part-way (the state is then not the journal's at any offset).
        self._snapshots = True
        self._snapshot_time = time.monotonic()  # when the last one was written (or opened)
        self._snapshot_cost = SNAPSHOT_COST_PER_FACT  # what the last one took, per fact
        self._reset()
        _STORES.add(self)
        if self._journal is not None:
            try:
                with self._journal.locked() as exists:
                    if exists:
                        self._catch_up()
            except BaseException:
                self._journal.close()
                raise

    def __reduce__(self) -> tuple[Any, ...]:
        # A child started with multiprocessing's spawn opens the same journal afresh.
        if self.path is None:
            raise StoreError("an in-process memory cannot be sent to another process; journal it")
        return (_reopen, (self.path, self.fsync))

    # -- state ---------------------------------------------------------------------

    def _reset(self) -> None:
        self.graph = FactGraph()
        # (An int value in these, and in the graph's _succ and _pred, is a dict a
        # snapshot's load left to build: read them through _live, _pointing, _out, _in.)
        self.current: dict[tuple[str, str], dict[str, Fact] | int] = {}
        self.current_by_predicate: dict[str, dict[int, Fact]] = {}
        self.current_pointing: dict[tuple[str, str], dict[int, Fact] | int] = {}
        self._deferred: snapshot_state.Deferred | None = None
        # One entry per fact, in sequence order: seq, journal line offset, closed at (0: current).
        self._seqs = array("q")
        self._lines = array("q")
        self._valid_to = array("q")
        self._closed_by_key: dict[tuple[str, str], array[int]] = {}
        self._closed_by_entity: dict[str, array[int]] = {}
        self._closed_by_predicate: dict[str, array[int]] = {}
        self._closed_facts: dict[int, Fact] = {}  # in process only: nowhere else to read them
        self._line_cache: OrderedDict[int, dict[int, dict[str, Any]]] = OrderedDict()
        # Insertion-ordered (a dict, not a set) so a truncated posting is the same
        # under any hash seed.
        self.postings: dict[str, dict[str, None]] = defaultdict(dict)
        self.said: dict[str, dict[str, None]] = defaultdict(dict)
        self._said_of: dict[str, list[str]] = {}
        self._aliases: dict[str, list[str]] = {}
        self.multi: set[str] = set()
        self.seq = 0
        self._horizon = 0  # the highest valid_to of a fact journaled already closed
        self.facts_total = 0
        self.facts_current = 0
        self._snapshot_at = 0  # the journal offset the newest snapshot known covers

    def _index(self, seq: int) -> int:
        i = bisect.bisect_left(self._seqs, seq)
        if i == len(self._seqs) or self._seqs[i] != seq:
            raise KeyError(seq)
        return i

    # -- what a snapshot's load left to build (see snapshot_state.Deferred) ------------

    def _live(self, key: tuple[str, str]) -> dict[str, Fact] | None:
        """``current[key]`` (``None``: no current fact), built on its first use."""
        live = self.current.get(key)
        if live.__class__ is int:
            assert self._deferred is not None
            live = self.current[key] = self._deferred.current(live)  # type: ignore[arg-type]
        return live  # type: ignore[return-value]

    def _pointing(self, key: tuple[str, str]) -> dict[int, Fact] | None:
        """``current_pointing[key]``, built on its first use."""
        pointing = self.current_pointing.get(key)
        if pointing.__class__ is int:
            assert self._deferred is not None
            pointing = self.current_pointing[key] = self._deferred.pointing(pointing)  # type: ignore[arg-type]
        return pointing  # type: ignore[return-value]

    def _out(self, entity: str) -> dict[str, dict[int, Fact]] | None:
        """The graph's adjacency of ``entity`` as a subject (``None``: no such entity)."""
        succ = self.graph._succ
        out = succ.get(entity)
        if out.__class__ is int:
            assert self._deferred is not None
            out = succ[entity] = self._deferred.succ(out)
        return out  # type: ignore[no-any-return]

    def _in(self, entity: str) -> dict[str, dict[int, Fact]]:
        """The graph's adjacency of ``entity`` (which must exist) as an object."""
        pred = self.graph._pred
        in_ = pred[entity]
        if in_.__class__ is int:
            assert self._deferred is not None
            in_ = pred[entity] = self._deferred.pred(in_)
        return in_  # type: ignore[no-any-return]

    def _build_deferred(self) -> None:
        """Build whatever a snapshot's load left (before the state is read whole)."""
        if self._deferred is None:
            return
        for key in [k for k, v in self.current.items() if v.__class__ is int]:
            self._live(key)
        for key in [k for k, v in self.current_pointing.items() if v.__class__ is int]:
            self._pointing(key)
        for entity in list(self.graph._succ):
            self._out(entity)
            self._in(entity)
        self._deferred = None

    # -- journal ---------------------------------------------------------------------

    @contextmanager
    def one_state(self) -> Iterator[None]:
        """Every read inside sees the memory as it was on entry: the store's lock is held
        throughout (no other thread writes meanwhile) and the journal is read once, on
        entry (what other processes append is read by the next read after it)."""
        with self._lock:
            if self._one_state:  # (nested: the outer one holds the state)
                yield
                return
            self._sync()
            self._one_state = True
            try:
                yield
            finally:
                self._one_state = False

    def _sync(self) -> None:
        """Apply what other processes appended to the journal since we last read it."""
        if self._closed:
            raise StoreError("this memory is closed")
        if self._one_state:
            return  # (one_state() synced on entry, and holds that state)
        if self._journal is not None:
            with self._journal.locked() as exists:
                if exists:
                    self._catch_up()
                elif self._journal.replaced != self._replaced:
                    self._reset()  # the journal was deleted by hand: it holds nothing
                    self._replaced = self._journal.replaced

    def _catch_up(self) -> None:
        journal = self._journal
        assert journal is not None
        if journal.replaced != self._replaced:
            # The file was cleared (replaced) since this state was built from it:
            # the journal reads the new file from its start, so start from nothing.
            self._reset()
            self._replaced = journal.replaced
        if journal.offset == 0:  # nothing read of this file: the state is empty
            self._load_snapshot()  # start from a snapshot, when one fits
        path = self.path
        try:
            self.replay(
                (
                    (f"{path}, line {line_no}", offset, record)
                    for line_no, offset, record in journal.read_new()
                ),
            )
        except BaseException:
            self._snapshots = False
            raise

    def _load_snapshot(self) -> None:
        """Build the state from the journal's snapshot, when one is there and checks out
        against the file, and read on from where it ends; otherwise leave it empty."""
        journal = self._journal
        assert journal is not None
        found = snapshot.load(journal)
        if found is None:
            return
        cover, body = found
        try:
            with _collector_paused():
                snapshot_state.restore(self, body)
        except snapshot_state.DamagedState as e:  # whatever failed (see restore)
            self._reset()  # nothing of it stays: the journal is replayed whole
            why = " ".join(str(e).split())[:100]  # one line, whatever the body held
            warnings.warn(
                f"snapshot {journal.snapshot_path} does not hold a memory this version reads "
                f"({why}); ignored, the journal is replayed instead",
                snapshot.SnapshotWarning,
                stacklevel=2,
            )
            return
        journal.resume(cover.offset, cover.lines)
        self._snapshot_at = cover.offset

    def replay(self, records: Iterable[tuple[str, int, dict[str, Any]]]) -> None:
        """Apply journal records, each checked against the replay invariants first.

        ``records`` are ``(where, line offset, record)``; ``where`` names the
        record in an error (a file and line). Used to read a journal, and to
        check a memory from any other source before it is loaded anywhere.

        Raises:
            JournalError: a record breaks an invariant or has the wrong shape
                (the records before it are applied, nothing after it).
        """
        with _collector_paused():
            for where, offset, record in records:
                try:
                    op = self._op_of(record)
                except (InvalidFactError, KeyError, TypeError, AttributeError) as e:
                    reason = f"missing field {e}" if isinstance(e, KeyError) else str(e)
                    raise JournalError(
                        f"{where}: bad {str(record.get('op'))[:20]!r} record: {reason}"
                    ) from e
                self._apply(op, offset)
        self.seq = max(self.seq, self._horizon)

    def _op_of(self, r: dict[str, Any]) -> Op:
        """A journal record as an operation, checked against the replay invariants."""
        op = r.get("op")
        if op == "fact":
            seq = check_int(r["seq"], "seq", minimum=1)
            if seq <= self.seq:
                raise InvalidFactError(
                    f"sequence number {seq} is not above the one before ({self.seq}): "
                    "numbers must be unique and increasing"
                )
            if r.get("valid_from", seq) != seq:
                raise InvalidFactError(f"valid_from {r.get('valid_from')!r} is not seq {seq}")
            valid_to = r.get("valid_to")
            if valid_to is not None and check_int(valid_to, "valid_to") <= seq:
                raise InvalidFactError(f"valid_to {valid_to} is not after seq {seq}")
            fact = NewFact(
                r["s"],
                r["p"],
                r["o"],
                r.get("speaker"),
                r.get("turn_id"),
                r.get("fact_id"),
                text=r.get("text"),
            ).checked()
            s, p, o = fact.subject, fact.predicate, fact.object
            if valid_to is None:
                live = self._live((s, p))
                if live and o in live:
                    raise InvalidFactError(
                        f"({s!r}, {p}, {o!r}) is already current (#{live[o].seq})"
                    )
                if live and p not in self.multi:
                    (other,) = itertools.islice(live.values(), 1)
                    raise InvalidFactError(
                        f"a second current value of single-valued ({s!r}, {p}): {o!r} (#{seq}) "
                        f"beside {other.object!r} (#{other.seq})"
                    )
            return make_fact(
                s, p, o, seq, seq, valid_to, fact.speaker, fact.turn_id, fact.fact_id, fact.text
            )
        if op == "close":
            seq = check_int(r["seq"], "seq", minimum=1)
            at = check_int(r["at"], "at", minimum=1)
            p = check_predicate(r["p"])
            live_fact = self.current_by_predicate.get(p, {}).get(seq)
            if live_fact is None or live_fact.subject != r["s"]:
                raise InvalidFactError(f"it closes fact #{seq} of ({r['s']!r}, {p}), not current")
            if at <= seq or at < self.seq:
                raise InvalidFactError(f"it closes #{seq} at {at}, before the memory's #{self.seq}")
            return ("close", live_fact, at)
        if op == "tick":
            at = check_int(r["at"], "at", minimum=1)
            if at <= self.seq:
                raise InvalidFactError(f"tick {at} is not above the one before ({self.seq})")
            return ("tick", at)
        if op == "multi":
            return ("multi", check_predicate(r["predicate"]))
        if op == "single":
            return ("single", check_predicate(r["predicate"]))
        if op == "alias":
            return ("alias", check_name(r["phrase"], "phrase"), check_name(r["entity"], "entity"))
        if op == "clear":
            return ("clear",)
        raise InvalidFactError(f"unknown op {str(op)[:40]!r}")

    @staticmethod
    def _record_of(op: Op | Fact) -> str:
        """The journal record of an operation, as JSON text."""
        if op.__class__ is Fact:
            return encode_fact(op)  # type: ignore[arg-type]
        kind = op[0]
        if kind == "close":
            return encode_close(op[1], op[2])
        if kind == "tick":
            record = {"op": "tick", "at": op[1]}
        elif kind == "multi":
            record = {"op": "multi", "predicate": op[1]}
        elif kind == "single":
            record = {"op": "single", "predicate": op[1]}
        elif kind == "alias":
            record = {"op": "alias", "phrase": op[1], "entity": op[2]}
        else:  # a clear replaces the file
            raise AssertionError(f"{kind!r} is not written to a journal")
        return encode_record(record)

    def _write(self, plan: Callable[[], tuple[list[Op], _T]]) -> _T:
        """Plan a change from the current state, make it durable, then apply it.

        ``plan`` reads and never mutates. Its operations are serialized and
        appended as one journal line before anything in the process changes,
        so a refused write (a full disk, a value that is not JSON) leaves
        both the file and the memory as they were.
        """
        if self._closed:
            raise StoreError("this memory is closed")
        journal = self._journal
        if journal is None:
            ops, result = plan()
            _check_counter(ops)
            self._apply_all(ops, -1)
            return result
        with journal.locked(write=True):
            self._catch_up()
            journal.repair()
            ops, result = plan()
            if not ops:
                return result
            _check_counter(ops)
            record_of = self._record_of
            try:
                # (A fact, the common operation, encoded here: one call a fact, not two.)
                line = encode_texts(
                    [encode_fact(op) if op.__class__ is Fact else record_of(op) for op in ops]
                )
            except (TypeError, ValueError) as e:
                raise InvalidFactError(f"cannot write this to the journal: {e}") from e
            offset = journal.append(line)
            self._apply_all(ops, offset)
        if self._snapshot_due(closing=False):
            self._write_snapshot()
        return result

    # -- snapshots (see ctxneo.stores.snapshot) -----------------------------------------

    def _snapshot_due(self, *, closing: bool) -> bool:
        """Whether this writer should snapshot the memory now (see SNAPSHOT_*)."""
        journal = self._journal
        if journal is None or not self._snapshots or not journal.writable:
            return False  # readers never create a file
        tail = journal.offset - self._snapshot_at
        share = SNAPSHOT_CLOSE_SHARE if closing else SNAPSHOT_TAIL_SHARE
        if tail < max(SNAPSHOT_MIN_BYTES, journal.offset * share):
            return False
        if closing:
            return True
        cost = self._snapshot_cost * max(1, self.facts_current)  # about what the last took
        return time.monotonic() - self._snapshot_time >= cost / SNAPSHOT_TIME_SHARE

    @_locked
    def snapshot(self) -> bool:
        """Write a snapshot of the memory beside its journal now, so the next open
        loads it and replays only what follows; whether one was written (not for a
        memory in process, nor for a journal not written yet).

        Writers do this by themselves as the journal grows and when they close
        (see :data:`SNAPSHOT_MIN_BYTES`); this is for a memory written once and
        opened often. A snapshot the system refuses is a :class:`SnapshotWarning`,
        not an error: the journal holds every write either way.
        """
        self._sync()
        journal = self._journal
        if journal is None or journal.offset == 0 or not self._snapshots:
            return False
        return self._write_snapshot()

    def _write_snapshot(self) -> bool:
        """Snapshot the state as of the offset read: built here, written under the
        journal's lock unless the file was replaced (cleared) meanwhile or another
        writer's snapshot already covers as much. Never raises (an Exception): the
        writes it follows were applied and acknowledged, and a caller told otherwise
        would retry them and write them twice; a snapshot is only a shortcut."""
        journal = self._journal
        assert journal is not None
        replaced = journal.replaced
        try:
            if journal.shared():
                # A journal shared on purpose (group-writable) gets no snapshot: each
                # user's writer would leave one of its own (0600, as private as a new
                # journal), which every other user's open refuses with a warning, each
                # time; and one they could all write, any of them could forge. Opens
                # replay it. Off for the process: asked again after every write else.
                self._snapshots = False
                return False
            newest = snapshot.covered(journal, at_least=journal.offset)
            if newest >= journal.offset:
                self._snapshot_at = newest  # another writer's is as recent: no need
                return False
            started = time.monotonic()
            cover = snapshot.cover_of(journal)  # hashes the journal up to the offset read
            with _collector_paused():  # it walks the whole memory: nothing for it to free
                body = snapshot_state.encode(self)
            with journal.locked(write=True):
                if journal.replaced != replaced or journal.file_id != (cover.device, cover.inode):
                    return False  # cleared meanwhile: this state is of a file that is gone
                if snapshot.covered(journal, at_least=cover.offset) >= cover.offset:
                    return False
                snapshot.save(journal, cover, body)
        except Exception as e:
            # Whatever went wrong (a full disk, as much as a MemoryError or a bug), the
            # write before this was acknowledged: say so once, on one line, and stop.
            self._snapshots = False
            if isinstance(e, OSError) and e.strerror:
                reason = e.strerror
            else:
                reason = " ".join(f"{type(e).__name__}: {e}".split())[:200]
            warnings.warn(
                f"cannot write snapshot {journal.snapshot_path} ({reason}); opening the "
                "journal replays it instead, and this process writes no more snapshots",
                snapshot.SnapshotWarning,
                stacklevel=4,
            )
            return False
        self._snapshot_at = cover.offset
        self._snapshot_time = time.monotonic()
        self._snapshot_cost = (self._snapshot_time - started) / max(1, self.facts_current)
        return True

    # -- applying operations (replay and writes alike) ---------------------------------

    def _apply(self, op: Op | Fact, offset: int) -> None:
        if op.__class__ is Fact:  # a fact is its own operation: the common one
            self._insert(op, offset)  # type: ignore[arg-type]
            return
        kind = op[0]  # type: ignore[index]
        if kind == "close":
            self._close(op[1], op[2])
        elif kind == "tick":
            self.seq = max(self.seq, op[1])
        elif kind == "multi":
            self.multi.add(op[1])
        elif kind == "single":
            self.multi.discard(op[1])
        elif kind == "alias":
            self._alias(op[1], op[2])
        elif kind == "clear":
            self._reset()

    def _entity(self, name: str) -> None:
        if name not in self.graph._succ:
            self.graph.add_node(name)
            postings = self.postings
            for key in index_keys(name):
                postings[key][name] = None

    def _insert(self, fact: Fact, offset: int) -> None:
        self._apply_all((fact,), offset)

    def _apply_all(self, ops: Iterable[Op | Fact], offset: int) -> None:
        """Apply operations in order (a write's, or one replayed fact), inserting each fact
        here. One loop with what it touches bound once, the counters kept in locals:
        inserting a batch's facts one call and a dozen attribute lookups apiece was a
        tenth of a batched ingest. Not for a ``clear``, which replaces what is bound
        here (replay applies each operation by itself; no write plans one)."""
        current, by_predicate, pointing_of = (
            self.current,
            self.current_by_predicate,
            self.current_pointing,
        )
        succ, pred = self.graph._succ, self.graph._pred
        add_seq, add_line = self._seqs.append, self._lines.append
        add_valid_to = self._valid_to.append
        entity, apply = self._entity, self._apply
        top = self.seq
        total = made_current = 0
        try:
            for fact in ops:
                if fact.__class__ is not Fact:
                    # A close, tick, declaration or alias: it changes the same dicts and
                    # arrays (through self), and the counters by adding to them.
                    assert fact[0] != "clear"  # type: ignore[index]
                    apply(fact, offset)
                    continue
                s, o, p, seq = fact.subject, fact.object, fact.predicate, fact.seq
                if s not in succ:
                    entity(s)
                if o not in succ:
                    entity(o)
                add_seq(seq)
                add_line(offset)
                if fact.text:
                    self._said(fact)
                if fact.valid_to is None:
                    add_valid_to(0)
                    live = current.get((s, p))
                    if live is None:
                        current[(s, p)] = {o: fact}
                    else:
                        if live.__class__ is int:
                            live = self._live((s, p))
                        live[o] = fact  # type: ignore[index]
                    facts = by_predicate.get(p)
                    if facts is None:
                        by_predicate[p] = {seq: fact}
                    else:
                        facts[seq] = fact
                    pointing = pointing_of.get((o, p))
                    if pointing is None:
                        pointing_of[(o, p)] = {seq: fact}
                    else:
                        if pointing.__class__ is int:
                            pointing = self._pointing((o, p))
                        pointing[seq] = fact  # type: ignore[index]
                    out = succ[s]
                    if out.__class__ is int:
                        out = self._out(s)
                    edge = out.get(o)
                    if edge is None:
                        edge = out[o] = {}
                        in_ = pred[o]
                        if in_.__class__ is int:
                            in_ = self._in(o)
                        in_[s] = edge
                    edge[seq] = fact
                    made_current += 1
                else:
                    add_valid_to(fact.valid_to)
                    self._horizon = max(self._horizon, fact.valid_to)
                    self._file_closed(fact)
                if seq > top:
                    top = seq
                total += 1
        finally:
            # (Added to, not set: a close or tick among the operations changed them too.)
            self.seq = max(self.seq, top)
            self.facts_current += made_current
            self.facts_total += total

    def _said(self, fact: Fact) -> None:
        """Index the words a fact was said in under its entities (the shared rule)."""
        before = {e: len(self._said_of.get(e, ())) for e in (fact.subject, fact.object)}
        said_of([fact], self._said_of)
        for entity, n in before.items():
            for key in self._said_of[entity][n:]:
                self.said[key][entity] = None

    def _close(self, fact: Fact, at: int) -> Fact:
        s, p, o = fact.subject, fact.predicate, fact.object
        live = self._live((s, p))
        assert live is not None
        del live[o]
        if not live:
            del self.current[(s, p)]
        by_predicate = self.current_by_predicate[p]
        del by_predicate[fact.seq]
        if not by_predicate:
            del self.current_by_predicate[p]
        pointing = self._pointing((o, p))
        assert pointing is not None
        del pointing[fact.seq]
        if not pointing:
            del self.current_pointing[(o, p)]
        self._out(s)
        self._in(o)
        self.graph.drop(fact)
        self._valid_to[self._index(fact.seq)] = at
        closed = fact.closed_at(at)
        self._file_closed(closed)
        self.facts_current -= 1
        return closed

    def _file_closed(self, fact: Fact) -> None:
        seq = fact.seq
        for index, key in (
            (self._closed_by_key, (fact.subject, fact.predicate)),
            (self._closed_by_entity, fact.subject),
            (self._closed_by_predicate, fact.predicate),
        ):
            seqs = index.get(key)  # type: ignore[attr-defined]
            if seqs is None:
                index[key] = array("q", (seq,))  # type: ignore[index]
            else:
                seqs.append(seq)
        if fact.object != fact.subject:
            seqs = self._closed_by_entity.get(fact.object)
            if seqs is None:
                self._closed_by_entity[fact.object] = array("q", (seq,))
            else:
                seqs.append(seq)
        if self._journal is None:
            self._closed_facts[seq] = fact

    def _alias(self, phrase: str, entity: str) -> None:
        self._entity(entity)  # an alias names an entity, facts or not
        owners = self._aliases.setdefault(entity, [])
        if phrase not in owners:
            owners.append(phrase)
        for key in index_keys(phrase):
            self.postings[key][entity] = None

    # -- reading closed facts back ------------------------------------------------------

    def _closed_fact(self, seq: int) -> Fact:
        if self._journal is None:
            return self._closed_facts[seq]
        i = self._index(seq)
        offset = self._lines[i]
        facts = self._line_cache.get(offset)
        if facts is None:
            facts = {r["seq"]: r for r in self._journal.records_at(offset) if r.get("op") == "fact"}
            self._line_cache[offset] = facts
            if len(self._line_cache) > LINE_CACHE:
                self._line_cache.popitem(last=False)
        else:
            self._line_cache.move_to_end(offset)
        record = facts[seq]
        # Journals written before predicates were normalised may hold other spellings.
        return record_fact(dict(record, p=check_predicate(record["p"]), valid_to=self._valid_to[i]))

    def _pick(self, live: Iterable[Fact], closed: Iterable[int], limit: int | None) -> list[Fact]:
        """The newest ``limit`` of current facts and closed sequence numbers, as facts."""
        candidates = itertools.chain(((f.seq, f) for f in live), ((s, None) for s in closed))
        top = (
            sorted(candidates, key=lambda c: c[0], reverse=True)
            if limit is None
            else heapq.nlargest(limit, candidates, key=lambda c: c[0])
        )
        return [f if f is not None else self._closed_fact(s) for s, f in top]

    def _held_at(self, seqs: Iterable[int], as_of: int | None, history: bool) -> Iterator[int]:
        """The closed facts among ``seqs`` that held at ``as_of`` (all, with ``history``)."""
        if history:
            yield from seqs
        elif as_of is not None:
            for seq in seqs:
                if seq <= as_of < self._valid_to[self._index(seq)]:
                    yield seq

    # -- writes -------------------------------------------------------------------------

    @_locked
    def write(self, facts: Sequence[NewFact]) -> Written:
        if not isinstance(facts, Sequence) or isinstance(facts, (str, bytes)):
            raise InvalidFactError(f"remember_many takes a list of facts, got {type(facts)}")
        checked = check_facts(facts)

        def plan() -> tuple[list[Op], Written]:
            ops: list[Op] = []
            out: list[Fact] = []
            created: list[int] = []
            closed_stored: list[Fact] = []
            seq = self.seq
            multi = self.multi
            added_multi: set[str] = set()
            added: dict[tuple[str, str, str], Fact] = {}  # this batch's facts still current
            last: dict[tuple[str, str], Fact] = {}  # a single-valued key's current batch fact
            emptied: set[tuple[str, str]] = set()  # keys whose stored current facts it closed
            closed_now: dict[int, Fact] = {}
            current, live = self.current, self._live
            # (Bound once: this loop runs once per fact of the batch.)
            add_op, add_out, add_created = ops.append, out.append, created.append
            for new in checked:
                s, predicate, o = new.subject, new.predicate, new.object
                single = predicate not in multi and predicate not in added_multi
                if new.multi and single:
                    added_multi.add(predicate)
                    add_op(("multi", predicate))
                    single = False
                key = (s, predicate)
                triple = (s, predicate, o)
                same = added.get(triple)
                stored = None  # the key's current facts before this batch, unless it closed them
                if same is None and key not in emptied:
                    stored = current.get(key)
                    if stored.__class__ is int:
                        stored = live(key)
                    if stored:
                        same = stored.get(o)
                if same is not None:
                    add_out(same)
                    continue
                seq += 1
                fact = make_fact(
                    s, predicate, o, seq, seq, None, new.speaker, new.turn_id, new.fact_id, new.text
                )
                if single:
                    previous = last.get(key)
                    if previous is not None:
                        add_op(("close", previous, seq))
                        closed_now[previous.seq] = previous.closed_at(seq)
                        del added[(s, predicate, previous.object)]
                    if stored:
                        for old in stored.values():
                            add_op(("close", old, seq))
                            closed_now[old.seq] = old.closed_at(seq)
                            closed_stored.append(closed_now[old.seq])
                        emptied.add(key)
                    last[key] = fact
                added[triple] = fact
                add_op(fact)
                add_out(fact)
                add_created(seq)
            # A fact closed later in the same batch is returned as it now stands.
            now = [closed_now.get(f.seq, f) for f in out] if closed_now else out
            return ops, Written(now, frozenset(created), sorted(closed_stored, key=lambda f: f.seq))

        # A batch makes facts and index entries that live as long as the memory: the
        # collector walking the whole memory again and again as they are made was a
        # third of a batched ingest (it runs once, after).
        with _collector_paused():
            return self._write(plan)

    @_locked
    def retract(self, subject: str, predicate: str, obj: str | None = None) -> list[Fact]:
        check_name(subject, "subject")
        predicate = check_predicate(predicate)
        if obj is not None:
            check_name(obj, "object")

        def plan() -> tuple[list[Op], list[Fact]]:
            live = self._live((subject, predicate)) or {}
            targets = sorted(
                live.values() if obj is None else [f for f in (live.get(obj),) if f],
                key=lambda f: f.seq,
            )
            if not targets:
                return [], []
            at = self.seq + 1
            ops: list[Op] = [("tick", at)]
            ops.extend(("close", f, at) for f in targets)
            return ops, [f.closed_at(at) for f in targets]

        return self._write(plan)

    @_locked
    def declare_multi_valued(self, predicates: Iterable[str]) -> None:
        if isinstance(predicates, str):
            predicates = [predicates]
        wanted = {check_predicate(p) for p in predicates}
        self._write(lambda: ([("multi", p) for p in sorted(wanted - self.multi)], None))

    @_locked
    def withdraw_multi_valued(self, predicates: Iterable[str]) -> None:
        if isinstance(predicates, str):
            predicates = [predicates]
        unwanted = {check_predicate(p) for p in predicates}
        self._write(lambda: ([("single", p) for p in sorted(unwanted & self.multi)], None))

    @_locked
    def multi_valued(self) -> frozenset[str]:
        self._sync()
        return frozenset(self.multi)

    @_locked
    def add_alias(self, phrase: str, entity: str) -> None:
        check_name(phrase, "alias phrase")
        check_name(entity, "entity")
        self._write(
            lambda: (
                [] if phrase in self._aliases.get(entity, ()) else [("alias", phrase, entity)],
                None,
            )
        )

    @_locked
    def clear(self) -> None:
        # Not a record appended (that would keep every cleared line on disk): the
        # journal is replaced by an empty one, which other processes notice under
        # the lock on their next read or write (see Journal.clear and locked).
        if self._closed:
            raise StoreError("this memory is closed")
        journal = self._journal
        if journal is None:
            self._reset()
            return
        if not os.path.lexists(journal.path):
            # Deleted by hand: a clear creates no file, but the snapshot and .torn
            # beside it still hold the facts, and a clear leaves no file that does.
            # (No journal, no lock: a writer making one meanwhile loses at most a
            # snapshot, a shortcut, or a torn line, never acknowledged.) The next write
            # makes a new journal (see Journal.locked), not one on the deleted file.
            try:
                journal.remove_side_files()
            except OSError as e:
                raise JournalError(f"cannot clear journal {journal.path}: {e.strerror or e}") from e
            with journal.locked():
                pass  # (lets go of the deleted file)
            self._reset()
            self._replaced = journal.replaced
            return
        with journal.locked(write=True):
            self._catch_up()  # refuses a file that is not a journal, before any change
            journal.clear()
            self._catch_up()  # the state of the new, empty file

    # -- reads --------------------------------------------------------------------------

    @_locked
    def find_entities(self, keys: Sequence[str], limit: int = MAX_CANDIDATES) -> list[EntityHit]:
        """See :func:`~ctxneo.stores.names.rank_entities` (the rule every store ranks by)."""
        self._sync()
        return rank_entities(
            self.postings,
            self.said,
            self._aliases,
            self.graph.number_of_nodes(),
            keys,
            limit,
        )

    @_locked
    def aliases(self) -> dict[str, tuple[str, ...]]:
        self._sync()
        return {entity: tuple(phrases) for entity, phrases in sorted(self._aliases.items())}

    @_locked
    def predicates(self) -> list[str]:
        self._sync()
        return sorted(self.current_by_predicate.keys() | self._closed_by_predicate.keys())

    @_locked
    def predicate_uses(self, limit: int) -> list[PredicateUse]:
        self._sync()
        uses = []
        for predicate in self.current_by_predicate.keys() | self._closed_by_predicate.keys():
            live = self.current_by_predicate.get(predicate, {})
            example = next(reversed(live.values()), None)
            uses.append(PredicateUse(predicate, len(live), example))
        return most_used(uses, limit)

    def _touching(self, entity: str) -> list[Fact]:
        succ = self._out(entity)
        if succ is None:
            return []
        facts = [f for edge in succ.values() for f in edge.values()]
        # A self-loop was seen from the subject's side.
        facts += [f for s, edge in self._in(entity).items() if s != entity for f in edge.values()]
        return facts

    def _touching_through(
        self,
        entity: str,
        predicates: Iterable[str],
        limit: int | None,
        before: int | None = None,
    ) -> list[Fact]:
        """The current facts of ``predicates`` touching ``entity`` (written at or before
        ``before``, when given): at most the newest ``limit`` (``None``: all) of each
        index entry read, so a hub costs ``limit``. An entry holds its facts oldest
        first: facts are only ever added, each with a new, higher sequence number (a
        closed and restated value is a new key)."""

        found: list[Fact] = []
        # (_live and _pointing inlined: a walk reads a few predicates of a hundred ends
        # a question, and the two calls per predicate were a third of the read)
        current, pointing_of = self.current, self.current_pointing
        for p in predicates:
            key = (entity, p)
            out = current.get(key)
            if out.__class__ is int:
                out = self._live(key)
            if out:
                found += _newest_of(out, limit, before)  # type: ignore[arg-type]
            pointing = pointing_of.get(key)
            if pointing.__class__ is int:
                pointing = self._pointing(key)
            if pointing:
                # A self-loop is seen from the subject's side.
                skip = entity if out and entity in out else None
                found += _newest_of(pointing, limit, before, skip)  # type: ignore[arg-type]
        return found

    def _hub(self, entity: str, limit: int) -> bool:
        """Whether ``entity`` has more neighbours than a read of ``limit`` facts and than
        there are predicates: then reading each predicate's newest few costs less."""
        succ = self._out(entity)
        if succ is None:
            return False
        neighbours = len(succ) + len(self._in(entity))
        return neighbours > limit and neighbours > len(self.current_by_predicate)

    def _current_adjacent(
        self, entity: str, limit: int, predicates: Sequence[str] | None
    ) -> list[Fact]:
        """The newest ``limit`` current facts touching ``entity`` (in no order when all are)."""
        if predicates is None:
            if entity not in self.graph._succ:
                return []
            if not self._hub(entity, limit):
                return _newest(self._touching(entity), limit)
            # A hub: the newest few of each predicate's index entries, not all its facts.
            predicates = list(self.current_by_predicate)
        return _newest(self._touching_through(entity, predicates, limit), limit)

    def _adjacent(
        self,
        entity: str,
        as_of: int | None,
        history: bool,
        limit: int,
        predicates: Sequence[str] | None = None,
    ) -> list[Fact]:
        if not history and as_of is None:  # current facts only: the common read
            return self._current_adjacent(entity, limit, predicates)
        if predicates is None and self._hub(entity, limit):
            # The newest `limit` of each predicate's index entries, not every fact of the
            # hub: the newest `limit` of all are among them. (With history, current facts
            # count whatever as_of, as below.)
            live = self._touching_through(
                entity, list(self.current_by_predicate), limit, None if history else as_of
            )
            closed = self._held_at(self._closed_by_entity.get(entity, ()), as_of, history)
            return self._pick(live, closed, limit)
        touching = (
            self._touching(entity)
            if predicates is None
            # The newest `limit` of each index entry (written by as_of, without history),
            # as for a hub above: the newest `limit` of all are among them, and a hub's
            # thousands of facts of a relation are not all read and sorted to keep 200.
            else self._touching_through(entity, predicates, limit, None if history else as_of)
        )
        live = touching if history or as_of is None else [f for f in touching if f.seq <= as_of]
        closed = self._held_at(self._closed_by_entity.get(entity, ()), as_of, history)
        if predicates is None:
            return self._pick(live, closed, limit)
        # Closed facts are filed by entity, not predicate: read them to filter.
        wanted = set(predicates)
        live += [f for f in map(self._closed_fact, closed) if f.predicate in wanted]
        return _newest(live, limit)

    @_locked
    def facts_of(
        self,
        entities: Sequence[str],
        *,
        as_of: int | None = None,
        history: bool = False,
        limit: int = MAX_NEIGHBOURS,
        predicates: Sequence[str] | None = None,
    ) -> list[Fact]:
        self._sync()
        found: dict[int, Fact] = {}
        if predicates is not None:
            predicates = sorted({check_predicate(p) for p in predicates})
        for entity in entities:
            facts = self._adjacent(entity, as_of, history, limit, predicates)
            found.update(zip(map(_SEQ, facts), facts, strict=True))
        # (sequence numbers are unique: sorted as ints, without a key read from each fact)
        return list(map(found.__getitem__, sorted(found, reverse=True)))

    @_locked
    def facts_with_predicate(
        self, predicate: str, *, as_of: int | None = None, limit: int = MAX_NEIGHBOURS
    ) -> list[Fact]:
        predicate = check_predicate(predicate)
        self._sync()
        live = self.current_by_predicate.get(predicate, {})
        newest = (f for f in reversed(live.values()) if as_of is None or f.seq <= as_of)
        if as_of is None:
            return list(itertools.islice(newest, limit))
        closed = self._held_at(self._closed_by_predicate.get(predicate, ()), as_of, False)
        return self._pick(newest, closed, limit)

    @_locked
    def facts_of_few_subjects(
        self,
        predicates: Sequence[str],
        *,
        max_subjects: int,
        as_of: int | None = None,
        limit: int = MAX_NEIGHBOURS,
    ) -> dict[str, list[Fact]]:
        self._sync()
        out: dict[str, list[Fact]] = {}
        for predicate in map(check_predicate, predicates):
            if as_of is None:
                live = self.current_by_predicate.get(predicate, {})
                facts: Iterable[Fact] = reversed(live.values())
            else:
                facts = self.facts_with_predicate(predicate, as_of=as_of, limit=2**31)
            subjects: set[str] = set()
            newest: list[Fact] = []
            for f in facts:  # newest first; stop at the subject one too many
                subjects.add(f.subject)
                if len(subjects) > max_subjects:
                    newest = []
                    break
                if len(newest) < limit:
                    newest.append(f)
            out[predicate] = newest
        return out

    @_locked
    def current_of(self, subject: str, predicate: str | None = None) -> list[Fact]:
        predicate = check_slot(subject, predicate)
        self._sync()
        if predicate is not None:
            return sorted((self._live((subject, predicate)) or {}).values(), key=lambda f: f.seq)
        succ = self._out(subject) or {}
        return sorted((f for facts in succ.values() for f in facts.values()), key=lambda f: f.seq)

    @_locked
    def history(
        self, subject: str, predicate: str | None = None, *, limit: int | None = None
    ) -> list[Fact]:
        predicate = check_slot(subject, predicate, limit)
        self._sync()
        if predicate is not None:
            key = (subject, predicate)
            live: Iterable[Fact] = (self._live(key) or {}).values()
            closed: Iterable[int] = self._closed_by_key.get(key, ())
            # Only the kept facts are built: a key's long history costs its sequence numbers.
            return sorted(self._pick(live, closed, limit), key=lambda f: f.seq)
        succ = self._out(subject) or {}
        live = (f for facts in succ.values() for f in facts.values())
        touching = self._pick(live, self._closed_by_entity.get(subject, ()), None)
        own = [f for f in touching if f.subject == subject]  # newest first
        return sorted(own if limit is None else own[:limit], key=lambda f: f.seq)

    @_locked
    def all_facts(self) -> Iterator[Fact]:
        self._sync()
        return iter(self._in_order())

    def _in_order(self) -> list[Fact]:
        live = {seq: f for facts in self.current_by_predicate.values() for seq, f in facts.items()}
        return [
            live[seq] if self._valid_to[i] == 0 else self._closed_fact(seq)
            for i, seq in enumerate(self._seqs)
        ]

    @_locked
    def image(self) -> MemoryImage:
        self._sync()  # one read of the journal: the image is the memory at one point
        aliases = {entity: tuple(phrases) for entity, phrases in sorted(self._aliases.items())}
        return MemoryImage(tuple(self._in_order()), aliases, frozenset(self.multi), self.seq)

    @_locked
    def stats(self) -> dict[str, int]:
        self._sync()
        return {
            "facts": self.facts_total,
            "current_facts": self.facts_current,
            "entities": self.graph.number_of_nodes(),
            "predicates": len(self.current_by_predicate.keys() | self._closed_by_predicate.keys()),
            "last_seq": self.seq,
        }

    @_locked
    def close(self) -> None:
        if self._closed:
            return
        try:
            # A writer leaves a snapshot of what it read for the next open (one that
            # only read creates nothing).
            if self._snapshot_due(closing=True):
                self._write_snapshot()
        finally:
            self._closed = True
            if self._journal is not None:
                self._journal.close()


def _check_counter(ops: Sequence[Op | Fact]) -> None:
    """Refuse, before anything is written, a write that would number a fact past
    :data:`MAX_SEQ` (a counter set near it by hand or by a loaded script)."""
    top = max(
        (op.seq if op.__class__ is Fact else op[1] if op[0] == "tick" else 0 for op in ops),  # type: ignore[union-attr,index]
        default=0,
    )
    if top > MAX_SEQ:
        next_seq(MAX_SEQ)  # raises StoreError, with the one message both stores give
