"""Word meaning without a model at run time: a shipped table of word-piece vectors.

The answerer matches the words of a question to the words of predicates. Stems
catch "wrote"/"written"; they do not catch "urgent" for ``HAS_PRIORITY`` or
"genre" for ``kind``. :class:`WordVectors` gives a cosine similarity between
two words from ``data/word_vectors.npz``: every WordPiece of the
all-MiniLM-L6-v2 vocabulary run alone through that model, centred, reduced to
128 dimensions and stored as int8 (``scripts/build_word_vectors.py`` builds it;
``data/NOTICE`` names the source and its licence). Nothing is downloaded, no
model runs: a lookup is a dict hit and a 128-float dot product.

A word that is not a vocabulary entry as a whole is split as BERT splits it
(lower-case, accents stripped, greedy longest-match-first with ``##``
continuations) and stands for the normalised mean of its pieces' vectors, so
"represented" and "reps" still get a vector. Words with no letters ("2010",
"--") get none, and a similarity of 0.

Measured with ``scripts/measure_word_vectors.py`` on a shared 2-core machine: the
table is 4.1 MB; ``WordVectors.default()`` takes ~23 ms of CPU in a fresh process; a
word's first ``vector`` 17.5 µs p50 / 24 µs p95; ``similarity`` of a new pair of known
words 6.3 µs p50 / 8.9 µs p95 (an exactly rounded sum, the same on every CPU: a BLAS
dot took 2.2 µs), of a pair seen before 0.1 / 0.3 µs. The shipped suite reads ~28 new
pairs a question.

    >>> m = WordVectors.default()
    >>> m.similarity("writer", "author") > m.similarity("writer", "banana")
    True
"""

from __future__ import annotations

import math
import os
import threading
import unicodedata
from collections.abc import Container
from importlib import resources
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Meaning", "NoMeaning", "WordVectors", "wordpiece"]

_TABLE = "data/word_vectors.npz"
_MAX_WORD = 100  # BERT's max_input_chars_per_word: longer words are [UNK]
_PAIR_CACHE = 200_000
_WORD_CACHE = 100_000


@runtime_checkable
class Meaning(Protocol):
    """How alike two words are in meaning."""

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of two lower-case words, in [-1, 1]; 0.0 when unknown."""
        ...

    def common_word(self, word: str) -> bool:
        """Whether ``word`` (lower case) is a word of the language in its own right, not a
        name or handle made up of pieces ("timber", "fixed": yes; "mbalogun": no)."""
        ...


class NoMeaning:
    """A :class:`Meaning` that knows no word: every similarity is 0.0 (words only)."""

    def similarity(self, a: str, b: str) -> float:
        return 0.0

    def common_word(self, word: str) -> bool:
        return False


def normalise(word: str) -> str:
    """Lower-case with accents stripped, as BERT's uncased tokenizer does."""
    word = word.lower()
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn")


def wordpiece(word: str, vocab: Container[str]) -> list[str] | None:
    """BERT's WordPiece split of one normalised word: greedy longest match first,
    continuations prefixed ``##``. None when some part matches no piece ([UNK])."""
    if len(word) > _MAX_WORD:
        return None
    pieces = []
    start = 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                break
            end -= 1
        else:
            return None
        pieces.append(piece)
        start = end
    return pieces


# BERT's CJK ideograph blocks: each such character is a word of its own.
_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def _is_cjk(c: str) -> bool:
    cp = ord(c)
    return any(lo <= cp <= hi for lo, hi in _CJK)


def _parts(word: str) -> list[str]:
    """A word split where BERT splits it: at whitespace and punctuation, and around
    each CJK ideograph."""
    if word.isalnum() and word.isascii():
        return [word]
    parts = []
    current: list[str] = []
    for c in word:
        if c.isalnum() and not _is_cjk(c):
            current.append(c)
            continue
        if current:
            parts.append("".join(current))
            current = []
        if _is_cjk(c):
            parts.append(c)
    if current:
        parts.append("".join(current))
    return parts


class WordVectors:
    """A :class:`Meaning` from the shipped table of word-piece vectors.

    Args:
        vectors: int8 rows, one per piece.
        scale: float32, one per row (``row ≈ vectors[i] * scale[i]``).
        vocab: the pieces, in row order.
    """

    _default: WordVectors | None = None
    _lock = threading.Lock()

    def __init__(self, vectors: np.ndarray, scale: np.ndarray, vocab: list[str]) -> None:
        if vectors.ndim != 2 or len(vectors) != len(vocab) or len(scale) != len(vocab):
            raise ValueError(
                f"word vector table shapes disagree: vectors {vectors.shape}, "
                f"scale {scale.shape}, vocab {len(vocab)}"
            )
        self._vectors = vectors
        self._scale = scale.astype(np.float32)
        self._index = dict(zip(vocab, range(len(vocab)), strict=True))
        self._words: dict[str, np.ndarray | None] = {}
        self._pairs: dict[tuple[str, str], float] = {}

    @property
    def dims(self) -> int:
        return int(self._vectors.shape[1])

    def __len__(self) -> int:
        return len(self._index)

    @classmethod
    def load(cls, path: object) -> WordVectors:
        """Read a table written by ``scripts/build_word_vectors.py`` (a path or file object)."""
        with np.load(path, allow_pickle=False) as data:  # type: ignore[arg-type]
            vocab = data["vocab"].tobytes().decode("utf-8").split("\n")
            return cls(data["vectors"], data["scale"], vocab)

    @classmethod
    def default(cls) -> WordVectors:
        """The table shipped with ctxneo, loaded once per process on first use."""
        if cls._default is None:
            with cls._lock:
                if cls._default is None:
                    with resources.files("ctxneo").joinpath(_TABLE).open("rb") as f:
                        cls._default = cls.load(f)
        return cls._default

    def pieces(self, word: str) -> list[str]:
        """The vocabulary pieces that stand for ``word`` ([] when none do)."""
        out: list[str] = []
        for part in _parts(normalise(word)):
            if part in self._index:
                out.append(part)
            else:
                out.extend(wordpiece(part, self._index) or ())
        return out

    def common_word(self, word: str) -> bool:
        """Whether ``word`` is a whole piece of the table's vocabulary (a common word)."""
        return word.isalpha() and word in self._index

    def vector(self, word: str) -> np.ndarray | None:
        """The unit vector of ``word`` (float64), or None when it has no letter or no
        known piece."""
        try:
            return self._words[word]
        except KeyError:
            pass
        vec = None
        if any(c.isalpha() for c in word):
            rows = [self._index[p] for p in self.pieces(word)]
            if rows:
                # Exact to the bit on every machine: the fitted reader splits on these
                # similarities, and BLAS's dot and norm round differently per CPU kernel
                # (enough to move a shipped answer's confidence by 0.01). Elementwise IEEE
                # operations and math.fsum (correctly rounded) do not depend on the CPU.
                raw = self._vectors[rows].astype(np.float64) * self._scale[rows, None]
                mean = raw[0].copy()
                for row in raw[1:]:
                    mean += row
                mean /= len(rows)
                norm = math.sqrt(math.fsum((mean * mean).tolist()))
                if norm > 0.0:
                    vec = mean / norm
                    vec.flags.writeable = False  # shared through the cache
        if len(self._words) >= _WORD_CACHE:
            self._words.clear()
        self._words[word] = vec
        return vec

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of two words, in [-1, 1]; 0.0 when either has no vector."""
        key = (a, b) if a <= b else (b, a)
        try:
            return self._pairs[key]
        except KeyError:
            pass
        va, vb = self.vector(a), self.vector(b)
        sim = (
            0.0 if va is None or vb is None else max(-1.0, min(1.0, math.fsum((va * vb).tolist())))
        )
        if len(self._pairs) >= _PAIR_CACHE:
            self._pairs.clear()
        self._pairs[key] = sim
        return sim


def _fresh_lock() -> None:
    # A lock another thread held at a fork (loading the table) is copied held into the
    # child, where that thread is not: its first load would wait for ever.
    WordVectors._lock = threading.Lock()


os.register_at_fork(after_in_child=_fresh_lock)
