"""What a snapshot holds: every structure replay builds in a
:class:`~ctxneo.stores.networkx.NetworkXStore`, as data, and back.

A body is one line of JSON (names, predicates, speakers, the texts and ids of
facts, index keys that are words) followed by little-endian integer arrays
(everything else: sequence numbers, journal offsets, and indexes written as
numbers that point into the lists above). Each index is written in its own
order, so the store built from a snapshot holds the same dicts in the same
order as the writer's: a truncated posting, the newest facts of a key or a
predicate, read the same as after a replay.

Why arrays and not JSON numbers: a 100,000-fact memory is about 1.5 million
numbers, which JSON parses at 0.1-0.3 µs each; an array is one copy. Why the
loader is built from ``map``, ``zip``, slices and comprehensions rather than
one loop over the facts updating every index as replay does: that loop was
half the time of an open. What is left is making the objects themselves, so
the inner dicts of three indexes are not made at open but on first use (see
:class:`Deferred`); the facts (about 80 ms of a 92,000-fact open) still are.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from array import array
from collections import defaultdict, deque
from collections.abc import Iterable, Sequence
from itertools import accumulate, chain, count, repeat
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any

from ctxneo.model import Fact

if TYPE_CHECKING:
    from ctxneo.stores.networkx import NetworkXStore

_SEQ = attrgetter("seq")
_SUBJECT = attrgetter("subject")
_PREDICATE = attrgetter("predicate")
_OBJECT = attrgetter("object")
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
#: Array item sizes the format fixes ("i": 4 bytes, "q": 8).
_SIZES = {"i": 4, "q": 8}
_SWAP = sys.byteorder != "little"


class DamagedState(ValueError):
    """A snapshot's body does not hold together (its parts disagree)."""


# -- writing --------------------------------------------------------------------------


def encode(store: NetworkXStore) -> bytes:
    """Everything replay built in ``store``, as a snapshot body."""
    store._build_deferred()  # (a store loaded from a snapshot may not have built it all)
    arrays: dict[str, array[int]] = {}

    def put(name: str, code: str, values: Iterable[int]) -> None:
        arrays[name] = array(code, values)

    graph_succ, graph_pred = store.graph._succ, store.graph._pred
    names = list(graph_succ)  # every entity, in the order they were made
    name_id = dict(zip(names, count(), strict=False)).__getitem__
    predicates = sorted(store.current_by_predicate.keys() | store._closed_by_predicate.keys())
    predicate_id = dict(zip(predicates, count(), strict=False)).__getitem__

    # Current facts, in sequence order, as columns; indexes name them by position.
    facts = sorted(
        chain.from_iterable(map(dict.values, store.current_by_predicate.values())), key=_SEQ
    )
    position = dict(zip(map(_SEQ, facts), count(), strict=False)).__getitem__
    speakers: dict[str | None, int] = {None: 0}
    put("fact.seq", "q", map(_SEQ, facts))
    put("fact.s", "i", map(name_id, map(_SUBJECT, facts)))
    put("fact.p", "i", map(predicate_id, map(_PREDICATE, facts)))
    put("fact.o", "i", map(name_id, map(_OBJECT, facts)))
    put("fact.speaker", "i", [speakers.setdefault(f.speaker, len(speakers)) for f in facts])

    def groups(name: str, index: dict[Any, dict[Any, Fact]], by_seq: bool = True) -> None:
        put(f"{name}.sizes", "i", map(len, index.values()))
        if by_seq:  # keyed by sequence number: read the keys, not the facts (cache misses)
            seqs: Iterable[int] = chain.from_iterable(index.values())
        else:
            seqs = map(_SEQ, chain.from_iterable(map(dict.values, index.values())))
        put(f"{name}.members", "i", map(position, seqs))

    put("current.s", "i", map(name_id, map(_FIRST, store.current)))
    put("current.p", "i", map(predicate_id, map(_SECOND, store.current)))
    groups("current", store.current, by_seq=False)
    put("by_predicate.p", "i", map(predicate_id, store.current_by_predicate))
    groups("by_predicate", store.current_by_predicate)
    put("pointing.o", "i", map(name_id, map(_FIRST, store.current_pointing)))
    put("pointing.p", "i", map(predicate_id, map(_SECOND, store.current_pointing)))
    groups("pointing", store.current_pointing)
    # Edges in the order of the subjects' adjacency; the objects' adjacency names the
    # same edge dicts (one object per edge, shared) by their number in that order (a
    # lookup here, where a snapshot is written once, saves two per edge at each open).
    edges = list(chain.from_iterable(map(dict.values, graph_succ.values())))
    edge_number = dict(zip(map(id, edges), count(), strict=False)).__getitem__
    put("succ.sizes", "i", map(len, graph_succ.values()))
    put("edge.o", "i", map(name_id, chain.from_iterable(graph_succ.values())))
    put("edge.sizes", "i", map(len, edges))
    put("edge.members", "i", map(position, chain.from_iterable(edges)))
    put("pred.sizes", "i", map(len, graph_pred.values()))
    put("pred.s", "i", map(name_id, chain.from_iterable(graph_pred.values())))
    pred_edges = chain.from_iterable(map(dict.values, graph_pred.values()))
    put("pred.edges", "i", map(edge_number, map(id, pred_edges)))

    put("seqs", "q", store._seqs)
    put("lines", "q", store._lines)
    put("valid_to", "q", store._valid_to)
    for name, closed in (
        ("closed_key", store._closed_by_key),
        ("closed_entity", store._closed_by_entity),
        ("closed_predicate", store._closed_by_predicate),
    ):
        put(f"{name}.sizes", "i", map(len, closed.values()))
        put(f"{name}.seqs", "q", chain.from_iterable(closed.values()))
    put("closed_key.s", "i", map(name_id, map(_FIRST, store._closed_by_key)))
    put("closed_key.p", "i", map(predicate_id, map(_SECOND, store._closed_by_key)))
    put("closed_entity.e", "i", map(name_id, store._closed_by_entity))
    put("closed_predicate.p", "i", map(predicate_id, store._closed_by_predicate))
    for name, posting in (("postings", store.postings), ("said", store.said)):
        put(f"{name}.sizes", "i", map(len, posting.values()))
        put(f"{name}.names", "i", map(name_id, chain.from_iterable(posting.values())))

    def optional(values: list[Any]) -> list[Any] | None:
        # Most memories give no turn, id or text: a column of nulls is bytes for nothing.
        return values if any(v is not None for v in values) else None

    head = {
        "names": names,
        "predicates": predicates,
        "speakers": list(speakers),
        "turn_id": optional([f.turn_id for f in facts]),
        "fact_id": optional([f.fact_id for f in facts]),
        "text": optional([f.text for f in facts]),
        "postings": list(store.postings),
        "said": list(store.said),
        "said_of": [[name_id(e), stems] for e, stems in store._said_of.items()],
        "aliases": [[name_id(e), phrases] for e, phrases in store._aliases.items()],
        "multi": sorted(store.multi),
        "seq": store.seq,
        "horizon": store._horizon,
        "facts_total": store.facts_total,
        "facts_current": store.facts_current,
        "arrays": [[name, a.typecode, len(a)] for name, a in arrays.items()],
    }
    text = json.dumps(head, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    blob = []
    for a in arrays.values():
        if _SWAP:
            a.byteswap()
        blob.append(a.tobytes())
    return b"".join([text.encode("ascii"), b"\n", *blob])


# -- reading --------------------------------------------------------------------------


def _arrays(specs: list[list[Any]], blob: memoryview) -> dict[str, array[int]]:
    out: dict[str, array[int]] = {}
    at = 0
    for name, code, length in specs:
        if code not in _SIZES or array(code).itemsize != _SIZES[code]:
            raise DamagedState(f"array {name!r} of type {code!r}")
        end = at + length * _SIZES[code]
        a = array(code)
        a.frombytes(blob[at:end])
        if len(a) != length:
            raise DamagedState(f"array {name!r} is cut short")
        if _SWAP:
            a.byteswap()
        out[name] = a
        at = end
    if at != len(blob):
        raise DamagedState("bytes after the last array")
    return out


def _starts(sizes: Sequence[int], total: int, *, empty: bool = False) -> list[int]:
    """Where each group starts among ``total`` members (and where the last ends)."""
    starts = list(accumulate(sizes, initial=0))
    if starts[-1] != total or (sizes and min(sizes) < (0 if empty else 1)):
        raise DamagedState("group sizes that do not add up")
    return starts


def _dicts(
    sizes: Sequence[int], keys: Sequence[Any], values: Sequence[Any]
) -> list[dict[Any, Any]]:
    """One dict per group of consecutive ``(key, value)`` pairs, ``sizes`` long each.
    A dict display for the groups of one pair (most of them) is the fastest way
    to make many small dicts; a comprehension beats a loop of appends."""
    starts = _starts(sizes, len(keys), empty=True)
    if len(values) != len(keys):
        raise DamagedState("keys and values of different lengths")
    return [
        {keys[at]: values[at]}
        if size == 1
        else dict(zip(keys[at : at + size], values[at : at + size], strict=True))
        for at, size in zip(starts, sizes, strict=False)  # starts has one more: the end
    ]


def _slices(sizes: Sequence[int], total: int) -> Iterable[slice]:
    starts = _starts(sizes, total, empty=True)
    return map(slice, starts[:-1], starts[1:])


def _pairs(
    a: dict[str, array[int]], first: str, first_of: Any, second: str, second_of: Any
) -> Iterable[tuple[Any, Any]]:
    """Keys of two parts, e.g. (subject, predicate), from two arrays of numbers."""
    return zip(map(first_of, a[first]), map(second_of, a[second]), strict=True)


def _keyed(keys: Iterable[Any], values: Iterable[Any], size: int) -> dict[Any, Any]:
    out = dict(zip(keys, values, strict=True))
    if len(out) != size:
        raise DamagedState("a key listed twice")
    return out


#: The fields of :class:`Fact`, in order; see :func:`_facts`.
_FIELDS = tuple(f.name for f in dataclasses.fields(Fact))
_FAST_FACTS = getattr(Fact, "__slots__", None) == _FIELDS and not hasattr(Fact, "__post_init__")


def _facts(columns: Sequence[Sequence[Any] | None]) -> list[Fact]:
    """Facts from one column per field. A frozen dataclass sets each field through
    ``object.__setattr__`` in Python; setting the slots a column at a time from C
    (``map`` over the slot descriptors) takes less than half the time, a tenth of
    an open. Only while :class:`Fact` is a plain slotted dataclass (else its own
    constructor is used)."""
    n = len(columns[0])  # type: ignore[arg-type]
    full = [repeat(None, n) if c is None else c for c in columns]  # None: a column of None
    if not _FAST_FACTS:
        return list(map(Fact, *full))
    facts: list[Fact] = list(map(object.__new__, repeat(Fact, n)))
    for name, column in zip(_FIELDS, full, strict=True):
        deque(map(getattr(Fact, name).__set__, facts, column), maxlen=0)  # run, keep nothing
    return facts


def restore(store: NetworkXStore, body: bytes) -> None:
    """Build ``store`` (just reset) from a snapshot body, as replay built it.

    Raises:
        DamagedState: the body is not one :func:`encode` made, whatever failed on
            it (the error is its cause); ``store`` is then half-built and must be
            reset.
    """
    try:
        _restore(store, body)
    except DamagedState:
        raise
    except Exception as e:
        # One type for every way a body can fail (an index out of range, a string
        # where a number goes, a MemoryError from a size nobody checked...): a list
        # of them at the caller would be outdated by the next change here, and
        # whatever went wrong, replaying the journal instead is right.
        raise DamagedState(f"{type(e).__name__}: {e}") from e


class Deferred:
    """The parts of a snapshot's state an open does not build: the inner dicts of
    ``current`` and ``current_pointing`` and the graph's adjacency and edge dicts,
    made on first use of their key or entity (see :class:`NetworkXStore`'s
    ``_live``, ``_pointing``, ``_out`` and ``_in``).

    Why: they were three objects in four of the ~430,000 an open of a 92,000-fact
    memory made, and a question reads the few entities it names. The outer dicts
    are built at open with each value a group number (an ``int``, where a dict
    will be), so their keys, and so their order, are the ones the writer had; a
    group built later is the dict the eager load made, in its order. Every
    number read here was checked at open to be in range, so building cannot fail.
    """

    __slots__ = (
        "_current",
        "_edge",
        "_edges",
        "_facts",
        "_names",
        "_objects",
        "_pointing",
        "_pred",
        "_seq",
        "_succ",
    )

    def __init__(
        self,
        facts: list[Fact],
        objects: list[str],
        seq: list[int],
        names: list[str],
        groups: dict[str, tuple[list[int], array[int]]],
        succ: tuple[list[int], array[int]],
        pred: tuple[list[int], array[int], array[int]],
    ) -> None:
        self._facts, self._objects, self._seq, self._names = facts, objects, seq, names
        self._current, self._pointing, self._edge = (
            groups["current"],
            groups["pointing"],
            groups["edge"],
        )
        # One dict per edge, shared by its subject's and its object's adjacency.
        self._edges: list[dict[int, Fact] | None] = [None] * (len(self._edge[0]) - 1)
        self._succ, self._pred = succ, pred

    def _group(self, group: tuple[list[int], array[int]], number: int, keys: list[Any]) -> Any:
        starts, members = group
        at, end = starts[number], starts[number + 1]
        facts = self._facts
        if end - at == 1:  # most groups: a dict display is the cheapest dict
            m = members[at]
            return {keys[m]: facts[m]}
        span = members[at:end]
        return dict(zip(map(keys.__getitem__, span), map(facts.__getitem__, span), strict=True))

    def current(self, number: int) -> dict[str, Fact]:
        """Group ``number`` of ``current``: object -> fact."""
        return self._group(self._current, number, self._objects)  # type: ignore[no-any-return]

    def pointing(self, number: int) -> dict[int, Fact]:
        """Group ``number`` of ``current_pointing``: seq -> fact."""
        return self._group(self._pointing, number, self._seq)  # type: ignore[no-any-return]

    def _edge_dict(self, number: int) -> dict[int, Fact]:
        edge = self._edges[number]
        if edge is None:
            edge = self._edges[number] = self._group(self._edge, number, self._seq)
        return edge

    def succ(self, entity: int) -> dict[str, dict[int, Fact]]:
        """The graph's adjacency of entity number ``entity`` as a subject."""
        starts, objects = self._succ
        names, edge = self._names, self._edge_dict
        return {names[objects[k]]: edge(k) for k in range(starts[entity], starts[entity + 1])}

    def pred(self, entity: int) -> dict[str, dict[int, Fact]]:
        """The graph's adjacency of entity number ``entity`` as an object."""
        starts, subjects, edges = self._pred
        names, edge = self._names, self._edge_dict
        return {
            names[subjects[k]]: edge(edges[k]) for k in range(starts[entity], starts[entity + 1])
        }


def _within(values: array[int], bound: int, what: str) -> None:
    """Check numbers that point into a list of ``bound`` items (at open, so that
    building a deferred part later cannot fail)."""
    if values and (min(values) < 0 or max(values) >= bound):
        raise DamagedState(f"{what} out of range")


def _restore(store: NetworkXStore, body: bytes) -> None:
    cut = body.index(b"\n")
    head = json.loads(body[:cut])
    a = _arrays(head["arrays"], memoryview(body)[cut + 1 :])
    names: list[str] = head["names"]
    predicates: list[str] = head["predicates"]
    if not all(isinstance(x, str) for x in chain(names, predicates)):
        raise DamagedState("names that are not strings")
    name_of, predicate_of = names.__getitem__, predicates.__getitem__

    seq = a["fact.seq"].tolist()  # one int object per number, shared as in replay
    n = len(seq)
    subjects = list(map(name_of, a["fact.s"]))
    objects = list(map(name_of, a["fact.o"]))
    columns = [
        subjects,
        list(map(predicate_of, a["fact.p"])),
        objects,
        seq,
        seq,
        None,  # valid_to: current facts only
        list(map(head["speakers"].__getitem__, a["fact.speaker"])),
        head["turn_id"],
        head["fact_id"],
        head["text"],
    ]
    if not all(len(c) == n for c in columns if c is not None):
        raise DamagedState("fact columns of different lengths")
    facts = _facts(columns)

    def groups(name: str, inner: Sequence[Any]) -> list[dict[Any, Fact]]:
        """Each group's facts, keyed by ``inner`` (their object or sequence number)."""
        sizes, members = a[f"{name}.sizes"], a[f"{name}.members"]
        if sizes and min(sizes) < 1:
            raise DamagedState(f"an empty group in {name}")
        keys = list(map(inner.__getitem__, members))
        return _dicts(sizes, keys, list(map(facts.__getitem__, members)))

    def deferred(name: str) -> tuple[list[int], array[int]]:
        """A group index left to build: where each group starts among its members."""
        sizes, members = a[f"{name}.sizes"], a[f"{name}.members"]
        if sizes and min(sizes) < 1:
            raise DamagedState(f"an empty group in {name}")
        _within(members, n, f"members of {name}")
        return _starts(sizes, len(members)), members

    def numbered(name: str, keys: Iterable[Any], size: int) -> dict[Any, int]:
        """An index whose values are group numbers (see :class:`Deferred`)."""
        return _keyed(keys, range(size), size)

    later = {name: deferred(name) for name in ("current", "pointing", "edge")}
    current = numbered(
        "current",
        _pairs(a, "current.s", name_of, "current.p", predicate_of),
        len(a["current.sizes"]),
    )
    by_predicate = _keyed(
        map(predicate_of, a["by_predicate.p"]),
        groups("by_predicate", seq),
        len(a["by_predicate.sizes"]),
    )
    pointing = numbered(
        "pointing",
        _pairs(a, "pointing.o", name_of, "pointing.p", predicate_of),
        len(a["pointing.sizes"]),
    )

    # The graph: each entity's adjacency a group of edges, each edge dict once.
    succ_sizes, pred_sizes = a["succ.sizes"], a["pred.sizes"]
    if len(succ_sizes) != len(names) or len(pred_sizes) != len(names):
        raise DamagedState("adjacency of another number of entities")
    edges = len(a["edge.sizes"])
    edge_objects, pred_subjects, pred_edges = a["edge.o"], a["pred.s"], a["pred.edges"]
    if len(edge_objects) != edges or len(pred_subjects) != len(pred_edges):
        raise DamagedState("edges of another number")
    _within(edge_objects, len(names), "edge objects")
    _within(pred_subjects, len(names), "edge subjects")
    _within(pred_edges, edges, "edges")
    # (Sizes are checked to add up before any is used: one damaged size, up to
    # 2**31 - 1, must not make anything that large.)
    succ_starts = _starts(succ_sizes, edges, empty=True)
    pred_starts = _starts(pred_sizes, len(pred_edges), empty=True)
    numbers = range(len(names))
    store._deferred = Deferred(
        facts,
        objects,
        seq,
        names,
        later,
        (succ_starts, edge_objects),
        (pred_starts, pred_subjects, pred_edges),
    )

    def closed(name: str, keys: Iterable[Any]) -> dict[Any, array[int]]:
        sizes, seqs = a[f"{name}.sizes"], a[f"{name}.seqs"]
        return _keyed(keys, map(seqs.__getitem__, _slices(sizes, len(seqs))), len(sizes))

    def postings(name: str) -> defaultdict[str, dict[str, None]]:
        keys, sizes = head[name], a[f"{name}.sizes"]
        entities = list(map(name_of, a[f"{name}.names"]))
        spans = map(entities.__getitem__, _slices(sizes, len(entities)))
        return defaultdict(dict, _keyed(keys, map(dict.fromkeys, spans), len(sizes)))

    graph = store.graph
    graph._node.update(zip(names, map(dict, repeat((), len(names))), strict=True))
    # Entity numbers where adjacency dicts will be (see Deferred).
    graph._succ.update(_keyed(names, numbers, len(names)))
    graph._pred.update(zip(names, numbers, strict=True))
    store.current, store.current_by_predicate, store.current_pointing = (
        current,
        by_predicate,
        pointing,
    )
    store._seqs, store._lines, store._valid_to = a["seqs"], a["lines"], a["valid_to"]
    store._closed_by_key = closed(
        "closed_key", _pairs(a, "closed_key.s", name_of, "closed_key.p", predicate_of)
    )
    store._closed_by_entity = closed("closed_entity", map(name_of, a["closed_entity.e"]))
    store._closed_by_predicate = closed(
        "closed_predicate", map(predicate_of, a["closed_predicate.p"])
    )
    store.postings = postings("postings")
    store.said = postings("said")
    store._said_of = {name_of(e): list(stems) for e, stems in head["said_of"]}
    store._aliases = {name_of(e): list(phrases) for e, phrases in head["aliases"]}
    store.multi = set(head["multi"])
    store.seq, store._horizon = head["seq"], head["horizon"]
    store.facts_total, store.facts_current = head["facts_total"], head["facts_current"]
    if not (
        len(store._seqs) == len(store._lines) == len(store._valid_to) == store.facts_total
        and n == store.facts_current == store._valid_to.count(0)
        and all(isinstance(v, int) for v in (store.seq, store._horizon))
    ):
        raise DamagedState("counts that disagree")
