"""The reader's fitted parts, loaded from one file shipped with the package.

``ctxneo/data/reader.npz`` is written by ``scripts/build_reader.py`` from the
training corpus (``train/``), the calibration sets (``calibration/``) and MetaQA
dev questions, with fixed seeds: a JSON document with its long lists of numbers packed
as arrays (:mod:`.packed`), which answering needs only numpy to read:

- the form model (:class:`~ctxneo.answering.forms.FormModel`);
- the linker (:class:`~ctxneo.answering.linking.Linker`);
- the association table (:class:`~ctxneo.answering.match.Association`);
- the ranker: gradient-boosted trees fitted with LightGBM's lambdarank, stored as
  flat arrays and evaluated here for all readings of a question at once;
- the kind model (:class:`~ctxneo.answering.forms.KindModel`): what kind of value
  a question asks for (a date, amount, duration, measure, name or word), which the
  ranker weighs each reading's values against;
- the confidence model: boosted trees over the best reading's features, score,
  margin over the next, its answer's share of the ranker's softmax over all readings
  and how many answers they give, fitted on the training corpus's questions and their
  unanswerable variants (and MetaQA's ranker questions) as read out of fold, with a
  logistic map on top (stored as a table) fitted on the calibration sets (and their
  variants), kept apart from every other fit. An answer is as sure as the surest of
  the readings that give it (:func:`~ctxneo.answering.reader.answer_inputs`).
"""

from __future__ import annotations

import bisect
import math
import os
import threading
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ctxneo.answering.features import FEATURES
from ctxneo.answering.forms import FormModel, KindModel
from ctxneo.answering.linking import Linker
from ctxneo.answering.match import Association
from ctxneo.answering.packed import read
from ctxneo.answering.relations import RelationModel
from ctxneo.errors import ConfigError

MODEL_FILE = "data/reader.npz"


class Trees:
    """A sum of regression trees over feature rows, evaluated for many rows at once.

    Internal nodes are numbered from 0 in each tree; a child below 0 is leaf
    ``-child - 1``. Arrays are padded to the largest tree.
    """

    def __init__(self, doc: Mapping[str, Any]) -> None:
        self.feature = np.asarray(doc["feature"], dtype=np.int32)
        self.left = np.asarray(doc["left"], dtype=np.int32)
        self.right = np.asarray(doc["right"], dtype=np.int32)
        self.threshold = np.asarray(doc["threshold"], dtype=np.float64).reshape(self.feature.shape)
        leaf = np.asarray(doc["leaf"], dtype=np.float64)
        self.leaf = leaf.reshape(doc["shape"][1]) if "shape" in doc else leaf
        self.depth = int(doc["depth"])
        self.names = tuple(doc["features"])
        # Evaluated as one flat array of nodes, every tree's internal nodes and then its
        # leaves, a leaf pointing to itself (threshold +inf): ``depth`` steps take every
        # row to a leaf in every tree at once, with no test of where it is.
        trees, width = self.feature.shape
        leaves = self.leaf.shape[1]
        size = width + leaves
        base = (np.arange(trees) * size)[:, None]

        def node(child: np.ndarray) -> np.ndarray:
            return np.where(child >= 0, base + child, base + width + (-child - 1))

        own = base + width + np.arange(leaves)[None, :]
        pad = np.zeros((trees, leaves), np.int32)
        self._feature = np.concatenate([self.feature, pad], 1).ravel()
        self._threshold = np.concatenate(
            [self.threshold, np.full((trees, leaves), np.inf)], 1
        ).ravel()
        left = np.concatenate([node(self.left), own], 1).ravel()
        right = np.concatenate([node(self.right), own], 1).ravel()
        # Both children of node g side by side (2g right, 2g + 1 left): one step is then
        # one gather of the child at 2g + (x <= threshold), not two and a choice between
        # them, nor a subtraction.
        self._children = np.stack([right, left], 1).ravel().astype(np.intp)
        self._feature = self._feature.astype(np.intp)
        self._value = np.concatenate([np.zeros((trees, width)), self.leaf], 1).ravel()
        self._roots = (np.arange(trees, dtype=np.intp) * size)[None, :]
        # ``depth`` counts a tree's levels, leaves included: one step fewer reaches every
        # leaf (a tree of one leaf is a split to it, and still takes one).
        self._steps = max(1, self.depth - 1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": list(self.names),
            "depth": self.depth,
            "feature": self.feature.tolist(),
            "threshold": [float(f"{x:.7g}") for x in self.threshold.ravel()],
            "left": self.left.tolist(),
            "right": self.right.tolist(),
            "leaf": [float(f"{x:.7g}") for x in self.leaf.ravel()],
            "shape": [list(self.threshold.shape), list(self.leaf.shape)],
        }

    def predict(self, rows: np.ndarray) -> np.ndarray:
        """The sum of the trees for each row of ``rows`` (n x features)."""
        n, width = rows.shape
        flat = rows.ravel()
        at = (np.arange(n, dtype=np.intp) * width)[:, None]
        g = np.repeat(self._roots, n, axis=0)
        children, feature, threshold = self._children, self._feature, self._threshold
        # Each step writes into the same few arrays with ``take`` (faster than indexing
        # with ``[]``): a new array per operation was a third of the time. (``clip``: the
        # indices are always in range, and ``take`` buffers ``out`` in its default mode.)
        index = np.empty_like(g)
        x = np.empty(g.shape)
        limit = np.empty(g.shape)
        for _ in range(self._steps):
            np.take(feature, g, out=index, mode="clip")
            index += at
            np.take(flat, index, out=x, mode="clip")
            np.take(threshold, g, out=limit, mode="clip")
            np.add(g, g, out=index)
            # left when x <= threshold (a NaN goes right, as it did)
            index += x <= limit
            np.take(children, index, out=g, mode="clip")
        return self._value.take(g).sum(axis=1)

    @staticmethod
    def from_lightgbm(dump: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
        """The flat form of a LightGBM ``dump_model()`` (numerical splits only)."""
        flat = [_flatten(t["tree_structure"]) for t in dump["tree_info"]]
        width = max(len(f[0]) for f in flat)
        leaf_width = max(len(f[4]) for f in flat)

        def pad(values: list[Any], size: int, fill: Any) -> list[Any]:
            return values + [fill] * (size - len(values))

        return {
            "features": list(names),
            "depth": max(f[5] for f in flat),
            "feature": [pad(f[0], width, 0) for f in flat],
            "threshold": [pad(f[1], width, 0.0) for f in flat],
            "left": [pad(f[2], width, -1) for f in flat],
            "right": [pad(f[3], width, -1) for f in flat],
            "leaf": [pad(f[4], leaf_width, 0.0) for f in flat],
        }


def _flatten(
    root: Mapping[str, Any],
) -> tuple[list[int], list[float], list[int], list[int], list[float], int]:
    """One LightGBM tree as arrays: split feature, threshold, children, leaf values, depth."""
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    leaves: list[float] = []
    depth = 1
    # (node, depth, where its index goes: (list, position) or None for the root)
    stack: list[tuple[Mapping[str, Any], int, tuple[list[int], int] | None]] = [(root, 1, None)]
    while stack:
        node, d, parent = stack.pop()
        depth = max(depth, d)
        if "leaf_value" in node:
            leaves.append(float(node["leaf_value"]))
            index = -len(leaves)
        else:
            if node.get("decision_type", "<=") != "<=":
                raise ValueError("only numerical splits are supported")
            index = len(feature)
            feature.append(int(node["split_feature"]))
            threshold.append(float(node["threshold"]))
            left.append(0)
            right.append(0)
            stack.append((node["right_child"], d + 1, (right, index)))
            stack.append((node["left_child"], d + 1, (left, index)))
        if parent is not None:
            parent[0][parent[1]] = index
    if not feature:  # a tree of one leaf: a split that always goes left, to it
        feature, threshold, left, right = [0], [math.inf], [-1], [-1]
    return feature, threshold, left, right, leaves, depth


#: What the answering model reads of the best reading: the ranker's score, its margin over
#: the best reading with another answer, its answer's share of the ranker's softmax, how
#: many answers the readings give, and every feature the ranker saw.
CONFIDENCE_INPUTS = ("score", "margin", "share", "answers", *FEATURES)


@dataclass(frozen=True, slots=True)
class Confidence:
    """P(right | the best reading): boosted trees over :data:`CONFIDENCE_INPUTS` (the
    answering model, fitted on the corpus out of fold), then a monotone map fitted on
    the calibration sets, stored as points (``xs``, ``ys``) joined by straight lines."""

    trees: Trees
    xs: tuple[float, ...]
    ys: tuple[float, ...]

    def probability(self, inputs: Sequence[float]) -> float:
        return self.best([inputs])

    def best(self, rows: Sequence[Sequence[float]]) -> float:
        """The highest probability of ``rows``, read in one pass over the trees (the map
        is monotone, so it is the map of the trees' highest output)."""
        z = float(self.trees.predict(np.asarray(rows, dtype=np.float64)).max())
        raw = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
        if not self.xs:
            return raw
        i = bisect.bisect_right(self.xs, raw)
        if i == 0:
            return self.ys[0]
        if i == len(self.xs):
            return self.ys[-1]
        x0, x1, y0, y1 = self.xs[i - 1], self.xs[i], self.ys[i - 1], self.ys[i]
        return y0 if x1 == x0 else y0 + (y1 - y0) * (raw - x0) / (x1 - x0)

    def to_dict(self) -> dict[str, Any]:
        return {"trees": self.trees.to_dict(), "xs": list(self.xs), "ys": list(self.ys)}

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> Confidence:
        trees = Trees(doc["trees"])
        if trees.names != CONFIDENCE_INPUTS:
            raise ConfigError("the answering model reads other inputs than this version gives")
        return cls(trees, tuple(doc["xs"]), tuple(doc["ys"]))


@dataclass(frozen=True, slots=True)
class ReaderModel:
    """Every fitted part; any may be missing while the build script fits the next."""

    forms: FormModel | None = None
    linker: Linker | None = None
    association: Association | None = None
    ranker: Trees | None = None
    confidence: Confidence | None = None
    #: (question word, value word) pairs said of one state or of two: how a yes/no
    #: question's words stand for a value in other words ("finished" / "completed").
    verdicts: Association | None = None
    #: P(the kind of value asked for | the question's words).
    kinds: KindModel | None = None
    #: Which relation the question's words ask for (:mod:`ctxneo.answering.relations`).
    relations: RelationModel | None = None

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> ReaderModel:
        ranker = doc.get("ranker")
        if ranker is not None and tuple(ranker["features"]) != FEATURES:
            raise ConfigError(
                "the shipped reader model was fitted on other features than this version "
                "computes: rebuild it with scripts/build_reader.py"
            )
        return cls(
            FormModel.from_dict(doc["forms"]) if doc.get("forms") else None,
            Linker.from_dict(doc["linker"]) if doc.get("linker") else None,
            Association(doc["association"]) if doc.get("association") else None,
            Trees(ranker) if ranker else None,
            Confidence.from_dict(doc["confidence"]) if doc.get("confidence") else None,
            Association(doc["verdicts"]) if doc.get("verdicts") else None,
            KindModel.from_dict(doc["kinds"]) if doc.get("kinds") else None,
            RelationModel.from_dict(doc["relations"]) if doc.get("relations") else None,
        )

    @classmethod
    def load(cls, path: str | Path) -> ReaderModel:
        """The model in ``path``: packed (``.npz``, as shipped) or a JSON document."""
        try:
            return cls.from_dict(read(Path(path).read_bytes(), str(path)))
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
            raise ConfigError(f"cannot read the reader model {path}: {e}") from e

    _lock = threading.Lock()

    @classmethod
    def default(cls) -> ReaderModel:
        """The model shipped with ctxneo, read once per process."""
        found = _DEFAULT.get("model")
        if found is None:
            with cls._lock:
                found = _DEFAULT.get("model")
                if found is None:
                    ref = resources.files("ctxneo").joinpath(MODEL_FILE)
                    try:
                        doc = read(ref.read_bytes(), MODEL_FILE)
                    except FileNotFoundError:
                        doc = {}
                    found = _DEFAULT["model"] = cls.from_dict(doc)
        return found


_DEFAULT: dict[str, ReaderModel] = {}


def _fresh_lock() -> None:
    # A lock another thread held at a fork (reading the model) is copied held into the
    # child, where that thread is not: its first read would wait for ever.
    ReaderModel._lock = threading.Lock()


os.register_at_fork(after_in_child=_fresh_lock)
