"""The walks one question's answering scored, kept compactly (what stage 4 hands on).

Thousands of walks of one shape (every film of a director, every genre of those
films) explain the same words of the question and differ only in their facts
and answer. Such walks are kept as rows of their shape and score, and a
:class:`~ctxneo.answering.scoring.Path` is built only for a walk a reading uses:
the best one, the walks of its group (all values of a relation), and every
walk when the caller iterates them all (rival readings). The best walk, a
group and the best score of any other answer come out exactly as they would
from the list of every walk in the order the walks were scored.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import overload

from ctxneo.answering.scoring import Path, _Base
from ctxneo.model import Fact


class _Rows:
    """Walks of one shape and score that explain what their shape does: a row each, as
    columns (its place in scoring order, facts before the last, entities before the
    answer, last fact, answer), so a walk costs no object of its own."""

    __slots__ = (
        "anchor",
        "answers",
        "backward",
        "base",
        "before",
        "directions",
        "hops",
        "lasts",
        "passed",
        "places",
        "score",
    )

    def __init__(
        self,
        anchor: str | None,
        directions: tuple[str, ...],
        score: float,
        base: _Base,
        backward: bool,
    ) -> None:
        self.anchor = anchor
        self.directions = directions
        self.score = score
        self.base = base
        self.backward = backward
        self.hops = len(directions)
        self.places: list[int] = []
        self.before: list[tuple[Fact, ...]] = []
        self.passed: list[tuple[str, ...]] = []
        self.lasts: list[Fact] = []
        self.answers: list[str] = []

    def path(self, i: int) -> Path:
        base = self.base
        claims = base.claims
        return Path(
            self.anchor,
            (*self.before[i], self.lasts[i]),
            (*self.passed[i], self.answers[i]),
            self.directions,
            self.score,
            base.keys,
            self.backward,
            claims.relation,
            claims.sibling,
            base.strengths,
            claims.named[-1] and claims.relation[-1] > 0,
        )


class Candidates(Sequence[Path]):
    """Every walk scored for a question, in scoring order (a sequence of :class:`Path`)."""

    def __init__(self) -> None:
        self._paths: list[Path] = []  # walks built when scored (their entities named words)
        self._places: list[int] = []  # ...and where they come in scoring order
        self._rows: dict[tuple[object, ...], _Rows] = {}  # by (shape, score)
        self._size = 0
        self._best_of: dict[str, float] = {}  # answer -> its best walk's score
        self._built: dict[int, Path] = {}  # row walks built into paths, by place
        self._all: list[Path] | None = None

    # -- filling -------------------------------------------------------------------------

    def add(self, path: Path) -> None:
        """A walk built as a :class:`Path`."""
        self._paths.append(path)
        self._places.append(self._size)
        self._size += 1
        if path.score > self._best_of.get(path.answer, -math.inf):
            self._best_of[path.answer] = path.score
        self._all = None

    def rows(
        self,
        shape: tuple[str | None, tuple[str, ...], tuple[str, ...]],
        score: float,
        base: _Base,
        backward: bool,
    ) -> _Rows:
        """The class of walks of ``shape`` (anchor, predicates, directions) and ``score``
        that explain what ``base`` says."""
        key = (shape, score)
        found = self._rows.get(key)
        if found is None:
            found = self._rows[key] = _Rows(shape[0], shape[2], score, base, backward)
        return found

    def add_row(
        self,
        rows: _Rows,
        before: tuple[Fact, ...],
        passed: tuple[str, ...],
        last: Fact,
        answer: str,
    ) -> None:
        """A walk of the class ``rows``: facts ``before + (last,)``, ends ``passed + (answer,)``."""
        rows.places.append(self._size)
        rows.before.append(before)
        rows.passed.append(passed)
        rows.lasts.append(last)
        rows.answers.append(answer)
        self._size += 1
        if rows.score > self._best_of.get(answer, -math.inf):
            self._best_of[answer] = rows.score
        self._all = None

    # -- reading -------------------------------------------------------------------------

    def _path(self, rows: _Rows, i: int) -> Path:
        place = rows.places[i]
        path = self._built.get(place)
        if path is None:
            path = self._built[place] = rows.path(i)
        return path

    def best(self) -> Path | None:
        """The first walk of the least :meth:`Path.order` (as ``min`` over the list)."""
        if not self._size:
            return None
        top = max(
            max((p.score for p in self._paths), default=-math.inf),
            max((r.score for r in self._rows.values()), default=-math.inf),
        )
        best_key: tuple[object, ...] | None = None
        best: Path | tuple[_Rows, int] | None = None
        for place, p in zip(self._places, self._paths, strict=True):
            if p.score == top:
                key = (*p.order(), place)
                if best_key is None or key < best_key:
                    best_key, best = key, p
        for r in self._rows.values():
            if r.score != top:
                continue
            for i, last in enumerate(r.lasts):
                newest = max([last.seq, *(f.seq for f in r.before[i])])
                key = (-r.score, r.hops, r.backward, -newest, r.answers[i], r.places[i])
                if best_key is None or key < best_key:
                    best_key, best = key, (r, i)
        return self._path(*best) if isinstance(best, tuple) else best

    def group(self, top: Path, as_of: int | None) -> list[Path]:
        """Every walk of ``top``'s shape and score that holds at ``as_of``, oldest last
        fact first (``[top]`` when none does): all values of the winning relation."""
        shape = top.shape
        members = [
            (place, p)
            for place, p in zip(self._places, self._paths, strict=True)
            if abs(p.score - top.score) < 1e-9 and p.shape == shape
        ]
        for (r_shape, score), r in self._rows.items():
            if abs(score - top.score) < 1e-9 and r_shape == shape:
                members += [(place, self._path(r, i)) for i, place in enumerate(r.places)]
        members.sort(key=lambda pp: pp[0])
        chosen = [p for _, p in members if all(f.valid_at(as_of) for f in p.facts)]
        return sorted(chosen, key=lambda p: p.last.seq) or [top]

    def best_other(self, answers: set[str] | frozenset[str]) -> float | None:
        """The best score of a walk whose answer is not one of ``answers`` (None: no such walk)."""
        return max(
            (s for answer, s in self._best_of.items() if answer not in answers), default=None
        )

    # -- the sequence of every walk, built on demand ---------------------------------------

    def _every(self) -> list[Path]:
        if self._all is None:
            out: list[Path] = [None] * self._size  # type: ignore[list-item]
            for place, p in zip(self._places, self._paths, strict=True):
                out[place] = p
            for r in self._rows.values():
                for i, place in enumerate(r.places):
                    out[place] = self._path(r, i)
            self._all = out
        return self._all

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, i: int) -> Path: ...
    @overload
    def __getitem__(self, i: slice) -> list[Path]: ...
    def __getitem__(self, i: int | slice) -> Path | list[Path]:
        return self._every()[i]

    def __iter__(self) -> Iterator[Path]:
        return iter(self._every())
