"""Relation meaning: how well a question's words stand for a predicate's (or a name's) words.

One small interface, :class:`Relations`, that the rest of the answerer asks;
a better model can replace it without touching anything else. It combines:

- the same stem (``owns`` / ``OWNED_BY``), or a prefix of 4+ letters;
- a related-words lexicon (``ctxneo/data/related_words.txt`` plus the user's
  own groups: ``CTXNEO_LEXICON`` or ``Lexicon.default([path])``), a user
  extension for domain words;
- word meaning (:class:`ctxneo.meaning.Meaning`, static word vectors shipped
  with the package): "urgent" stands for ``PRIORITY``, "writer" for
  ``WRITTEN_BY``, with a strength below a shared stem's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path

from ctxneo.answering.entities import EXACT, PREFIX, RELATED
from ctxneo.answering.question import Question
from ctxneo.errors import ConfigError
from ctxneo.meaning import Meaning, NoMeaning
from ctxneo.text import STOPWORDS, Token, name_stems, split_words, stem

HINT_WEIGHT = 0.8
COMPOUND = 0.7
#: Word meaning: a centred similarity below VECTOR_MIN says nothing; above, it counts
#: VECTOR_SCALE times, at most VECTOR_MAX (below a lexicon match, RELATED).
VECTOR_MIN = 0.2
VECTOR_SCALE = 1.5
VECTOR_MAX = 0.75
PARTICLE_BONUS = 0.25
_HINT_PARTICLES = {stem("location"): {"in", "at"}, stem("date"): {"on"}}
_PARTICLES = {"on", "by", "to", "at", "in", "for", "from", "with", "of", "into", "onto"}


class Lexicon:
    """Groups of related words (stemmed), from ``data/related_words.txt`` and extra files."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.groups: dict[str, set[int]] = {}
        for number, line in enumerate(lines):
            line = line.split("#", 1)[0].strip()
            for word in line.split():
                for piece in split_words(word):
                    self.groups.setdefault(stem(piece), set()).add(number)

    def related(self, a: str, b: str) -> bool:
        ga = self.groups.get(a)
        return bool(ga and ga & self.groups.get(b, set()))

    @classmethod
    def default(cls, extra: Sequence[str | Path] = ()) -> Lexicon:
        lines = resources.files("ctxneo").joinpath("data/related_words.txt").read_text("utf-8")
        texts = [lines]
        env = os.environ.get("CTXNEO_LEXICON")
        for path in [*extra, *([env] if env else [])]:
            try:
                texts.append(Path(path).read_text("utf-8"))
            except (OSError, UnicodeDecodeError) as e:
                raise ConfigError(f"cannot read the lexicon {path} (CTXNEO_LEXICON?): {e}") from e
        return cls("\n".join(texts).splitlines())


@lru_cache(maxsize=20_000)
def predicate_words(predicate: str) -> tuple[tuple[str, str], ...]:
    """The meaningful (word, stem) pairs of a predicate name (``HAS_TOKEN_EXPIRY`` ->
    (token, token), (expiry, expiri))."""
    return tuple(
        (w, s)
        for s, w in zip(name_stems(predicate), split_words(predicate), strict=True)
        if w not in STOPWORDS
    )


@lru_cache(maxsize=65_536)
def name_words(name: str) -> tuple[tuple[str, str], ...]:
    """A name's (word, stem) pairs, in order."""
    return tuple(zip(split_words(name), name_stems(name), strict=True))


@lru_cache(maxsize=20_000)
def _particles(predicate: str) -> frozenset[str]:
    return frozenset(w for w in split_words(predicate) if w in _PARTICLES)


class Relations:
    """Matches question words to predicate and name words (see the module docstring)."""

    def __init__(self, lexicon: Lexicon | None = None, meaning: Meaning | None = None) -> None:
        self.lexicon = lexicon or Lexicon.default()
        self.meaning: Meaning = meaning or NoMeaning()
        self._words: dict[tuple[str, str, str, str], float] = {}
        self._names: dict[tuple[str, str, str], float] = {}
        self._centred: tuple[tuple[str, ...], dict[str, tuple[tuple[str, float], ...]]] = ((), {})

    def name(self, q_word: str, q_stem: str, name: str) -> float:
        """How well a question word stands for the best of a name's words (0: none)."""
        key = (q_word, q_stem, name)
        found = self._names.get(key)
        if found is None:
            found = max([self.word(q_word, q_stem, w, s) for w, s in name_words(name)], default=0.0)
            if len(self._names) < 100_000:
                self._names[key] = found
        return found

    def word(self, q_word: str, q_stem: str, n_word: str, n_stem: str) -> float:
        """How well a question word stands for a name or predicate word (0: not at all)."""
        key = (q_word, q_stem, n_word, n_stem)
        found = self._words.get(key)
        if found is None:
            found = self._word(*key)
            if len(self._words) < 500_000:
                self._words[key] = found
        return found

    def _word(self, q_word: str, q_stem: str, n_word: str, n_stem: str) -> float:
        if q_stem == n_stem:
            return EXACT
        if min(len(q_stem), len(n_stem)) >= 4 and (
            q_stem.startswith(n_stem) or n_stem.startswith(q_stem)
        ):
            return PREFIX
        if self.lexicon.related(q_stem, n_stem):
            return RELATED
        # A compound ends in its head: a "screenwriter" is a writer, a "gatekeeper" a keeper.
        for k in range(len(q_word) - 3, 3, -1):
            head = stem(q_word[-k:])
            if head == n_stem or self.lexicon.related(head, n_stem):
                return COMPOUND
        return 0.0

    def match_all(
        self,
        question: Question,
        predicates: Sequence[str],
        names: frozenset[int] = frozenset(),
    ) -> dict[str, list[dict[int, float]]]:
        """:meth:`match_words` for every predicate of a memory, with word meaning centred.

        A question word's similarity to a predicate word counts by how much it
        exceeds that word's typical similarity to the memory's predicates: "film"
        is somewhat alike to every relation of a film database and so says
        nothing, while "genre" stands out for ``HAS_GENRE``. ``names`` are the
        positions of the names the question mentions.
        """
        # Likeness of meaning is for words that could name a relation: not the words of a
        # name the question mentions ("Lindqvist"), not a letter or a number ("10X2").
        words = [
            t
            for t in question.content
            if t.pos not in names and len(t.word) > 2 and any(c.isalpha() for c in t.word)
        ]
        if question.hint is not None:
            words.append(question.hint)
        vectors = self._vector_table(words, predicates)
        out: dict[str, list[dict[int, float]]] = {}
        for p in predicates:
            found = self.match_words(question, p, vectors)
            if found:
                out[p] = found
        return out

    def _vector_table(
        self, words: Sequence[Token], predicates: Sequence[str]
    ) -> dict[tuple[int, str], float]:
        """Centred similarity of each question word to each predicate word."""
        if isinstance(self.meaning, NoMeaning) or not predicates:
            return {}
        # A word's centred likenesses depend only on the word and the memory's predicates:
        # kept per word while the predicates stay the same.
        # (one (predicates, cache) pair, read once: a thread only fills a cache of its own
        # predicates)
        key = tuple(predicates)
        kept_for, centred = self._centred
        if kept_for != key:
            centred = {}
            self._centred = (key, centred)
        table: dict[tuple[int, str], float] = {}
        for t in words:
            found = centred.get(t.word)
            if found is None:
                found = self._centred_word(t.word, predicates)
                if len(centred) < 50_000:
                    centred[t.word] = found
            for n, value in found:
                table[(t.pos, n)] = value
        return table

    def _centred_word(self, word: str, predicates: Sequence[str]) -> tuple[tuple[str, float], ...]:
        names = {w for p in predicates for w, _ in predicate_words(p)}
        sims = {n: self.meaning.similarity(word, n) for n in names}
        best_per_predicate = [
            max((sims[w] for w, _ in predicate_words(p)), default=0.0) for p in predicates
        ]
        baseline = sum(best_per_predicate) / len(best_per_predicate)
        found = []
        for n, sim in sims.items():
            centred = sim - baseline
            if centred >= VECTOR_MIN:
                found.append((n, min(VECTOR_MAX, VECTOR_SCALE * centred)))
        return tuple(found)

    def match(
        self,
        question: Question,
        predicate: str,
        vectors: dict[tuple[int, str], float] | None = None,
    ) -> dict[int, float]:
        """Question positions explained by a predicate's words (see :meth:`match_words`),
        each at its best strength."""
        out: dict[int, float] = {}
        for found in self.match_words(question, predicate, vectors):
            for pos, s in found.items():
                if s > out.get(pos, 0.0):
                    out[pos] = s
        return out

    def match_words(
        self,
        question: Question,
        predicate: str,
        vectors: dict[tuple[int, str], float] | None = None,
    ) -> list[dict[int, float]]:
        """For each word of a predicate, the question positions it explains and how well.

        A predicate word explains every question word that stands for it ("what
        *date* was it *planned* for" -> ``SCHEDULED_FOR``), by stem, prefix,
        lexicon or (from ``vectors``, see :meth:`match_all`) meaning. The question
        word counts too, more weakly, through its hint: "where" is explained by
        ``LOCATED_AT``, "when" by ``SCHEDULED_FOR``.
        """
        vectors = vectors or {}
        out: list[dict[int, float]] = []
        candidates: list[tuple[Token, float]] = [(t, 1.0) for t in question.content]
        if question.hint is not None:
            candidates.append((question.hint, HINT_WEIGHT))
        particles = _particles(predicate)
        hint = question.hint
        if hint is not None and particles & _HINT_PARTICLES.get(hint.stem, set()):
            # "where" is answered by X_IN / X_AT, "when" by X_ON: HELD_IN, STAYING_AT, FILED_ON.
            out.append({hint.pos: RELATED * HINT_WEIGHT})
        words = question.words
        for n_word, n_stem in predicate_words(predicate):
            mine: dict[int, float] = {}
            out.append(mine)
            for t, weight in candidates:
                s = max(
                    self.word(t.word, t.stem, n_word, n_stem), vectors.get((t.pos, n_word), 0.0)
                )
                s *= weight
                nxt = t.pos + 1
                if s and nxt < len(words) and words[nxt].word in particles:
                    s += PARTICLE_BONUS  # "the hold *on*" fits WAITING_ON better than HELD_BY
                if s > mine.get(t.pos, 0.0):
                    mine[t.pos] = s
        return [found for found in out if found]
