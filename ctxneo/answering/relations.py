"""Which relation a question's words ask for, as a model fitted on the corpus.

The stems, the word vectors and the association table (:mod:`ctxneo.answering.match`)
match a question's words to a predicate's one pair of words at a time, and the table
only knows the pairs the corpus met. Most plain questions that go unanswered say their
relation in other words than the predicate ("in command of" of ``CAPTAIN``), and their
best pair is as weak as a look-alike's. This model reads every relation word of the
question at once: the mean of their word vectors (``q``) against the mean of the
predicate's (``p``), scored ``a·cos(q, p) + (qU)·(pV) + b`` with ``U`` and ``V`` of low
rank, fitted by ``scripts/build_reader.py`` to tell the corpus's asked predicates from the
others its questions' entities have. Through the vectors it carries what it learned to
word pairs the corpus never met.

The score is linear in ``q``: ``q·w + b`` with ``w = a·p + U(pV)``, one vector per
predicate, computed once and cached, so a question costs its mean vector and one dot
product per predicate, with no projection of its own.

Every sum is taken elementwise and rounded correctly (``math.fsum``), as
:meth:`ctxneo.meaning.WordVectors.vector` does: BLAS rounds per CPU kernel, and the
fitted reader splits on these scores, so they must be the same on every machine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ctxneo.answering.match import predicate_stems
from ctxneo.answering.question import Question
from ctxneo.meaning import Meaning

#: How many predicates' projections are kept (a memory's vocabulary is far smaller).
_PREDICATE_CACHE = 20_000


def mean_vector(words: Sequence[str], meaning: Meaning) -> np.ndarray | None:
    """The unit mean of the words' vectors (None when no word has one, or ``meaning``
    has no vectors)."""
    vector = getattr(meaning, "vector", None)
    if vector is None:
        return None
    total: np.ndarray | None = None
    for w in words:
        v = vector(w)
        if v is None:
            continue
        total = v.copy() if total is None else total + v
    if total is None:
        return None
    norm = math.sqrt(math.fsum((total * total).tolist()))
    return total / norm if norm > 0.0 else None


def question_words(q: Question, positions: Sequence[int], excluded: frozenset[int]) -> list[str]:
    """The words the model reads of a question: the matcher's relation positions outside
    the names a reading is anchored on, numbers left out (a number is a name's part)."""
    return [
        q.words[p].word for p in positions if p not in excluded and not q.words[p].word.isdigit()
    ]


def predicate_words(predicate: str) -> tuple[str, ...]:
    """The words of a predicate the model reads (its function words left out)."""
    return tuple(w for w, _ in predicate_stems(predicate))


def _project(v: np.ndarray, m: np.ndarray) -> tuple[float, ...]:
    """``v @ m``, each column summed with :func:`math.fsum` (the same on every CPU)."""
    # (every product taken at once; fsum's sum is correctly rounded in any order)
    return tuple(map(math.fsum, (v[:, None] * m).T.tolist()))


class RelationModel:
    """``score(q, p) = a·cos(q, p) + (qU)·(pV) + b`` over mean word vectors (a logit)."""

    def __init__(self, u: np.ndarray, v: np.ndarray, a: float, b: float) -> None:
        if u.shape != v.shape or u.ndim != 2:
            raise ValueError(f"relation model shapes disagree: U {u.shape}, V {v.shape}")
        self.u = u.astype(np.float64)
        self.v = v.astype(np.float64)
        self.a = float(a)
        self.b = float(b)
        self._predicates: dict[str, np.ndarray | None] = {}

    @property
    def dims(self) -> int:
        return int(self.u.shape[0])

    def question(self, words: Sequence[str], meaning: Meaning) -> Asked | None:
        """A question's relation words, read once (None when none has a vector)."""
        q = mean_vector(words, meaning)
        if q is None or len(q) != self.dims:
            return None
        return Asked(q)

    def _weights(self, predicate_words: Sequence[str], meaning: Meaning) -> np.ndarray | None:
        """``w = a·p + U(pV)`` of a predicate's words (None when none has a vector)."""
        key = " ".join(predicate_words)
        try:
            return self._predicates[key]
        except KeyError:
            pass
        p = mean_vector(predicate_words, meaning)
        found: np.ndarray | None = None
        if p is not None and len(p) == self.dims:
            pv = np.asarray(_project(p, self.v))
            # each w_i = a·p_i + sum_k U_ik (pV)_k, as one correctly rounded sum
            terms = np.concatenate([(self.a * p)[:, None], self.u * pv[None, :]], 1)
            found = np.fromiter(map(math.fsum, terms.tolist()), np.float64, len(p))
        if len(self._predicates) >= _PREDICATE_CACHE:
            self._predicates.clear()
        self._predicates[key] = found
        return found

    def score(self, asked: Asked, predicate_words: Sequence[str], meaning: Meaning) -> float:
        """The logit that the question asks for the relation named by ``predicate_words``
        (``b`` alone when the predicate's words have no vectors)."""
        w = self._weights(predicate_words, meaning)
        if w is None:
            return self.b
        return math.fsum((asked.vector * w).tolist()) + self.b

    def to_dict(self) -> dict[str, Any]:
        return {
            "u": [[round(float(x), 5) for x in row] for row in self.u],
            "v": [[round(float(x), 5) for x in row] for row in self.v],
            "a": round(self.a, 5),
            "b": round(self.b, 5),
        }

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> RelationModel:
        return cls(np.asarray(doc["u"]), np.asarray(doc["v"]), doc["a"], doc["b"])


class Asked:
    """A question's relation words as the model reads them: their unit mean vector."""

    __slots__ = ("vector",)

    def __init__(self, vector: np.ndarray) -> None:
        self.vector = vector


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0
