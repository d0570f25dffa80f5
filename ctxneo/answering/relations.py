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
from typing import Protocol

from ctxneo.answering.entities import EXACT, PREFIX, RELATED
from ctxneo.answering.question import Question
from ctxneo.errors import ConfigError
from ctxneo.text import STOPWORDS, Token, name_stems, split_words, stem

HINT_WEIGHT = 0.8
PARTICLE_BONUS = 0.25
_HINT_PARTICLES = {stem("location"): {"in", "at"}, stem("date"): {"on"}}
_PARTICLES = {"on", "by", "to", "at", "in", "for", "from", "with", "of", "into", "onto"}


class Meaning(Protocol):
    """Word meaning: the cosine similarity of two lower-case words, in [-1, 1]."""

    def similarity(self, a: str, b: str) -> float: ...


class NoMeaning:
    """Words only: no two different words mean the same."""

    def similarity(self, a: str, b: str) -> float:
        return 0.0


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


@lru_cache(maxsize=20_000)
def _particles(predicate: str) -> frozenset[str]:
    return frozenset(w for w in split_words(predicate) if w in _PARTICLES)


class Relations:
    """Matches question words to predicate and name words (see the module docstring)."""

    def __init__(self, lexicon: Lexicon | None = None, meaning: Meaning | None = None) -> None:
        self.lexicon = lexicon or Lexicon.default()
        self.meaning: Meaning = meaning or NoMeaning()
        self._words: dict[tuple[str, str, str, str], float] = {}

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
        return 0.0

    def stems(self, q_stem: str, n_stem: str) -> float:
        """:meth:`word` for two stems whose words are not known."""
        return self.word(q_stem, q_stem, n_stem, n_stem)

    def match(self, question: Question, predicate: str) -> dict[int, float]:
        """Question positions explained by a predicate's words, with their strength.

        A predicate word explains every question word that stands for it ("what
        *date* was it *planned* for" -> ``SCHEDULED_FOR``). The question word
        counts too, more weakly, through its hint: "where" is explained by
        ``LOCATED_AT``, "when" by ``SCHEDULED_FOR``.
        """
        out: dict[int, float] = {}
        candidates: list[tuple[Token, float]] = [(t, 1.0) for t in question.content]
        if question.hint is not None:
            candidates.append((question.hint, HINT_WEIGHT))
        particles = _particles(predicate)
        hint = question.hint
        if hint is not None and particles & _HINT_PARTICLES.get(hint.stem, set()):
            # "where" is answered by X_IN / X_AT, "when" by X_ON: HELD_IN, STAYING_AT, FILED_ON.
            out[hint.pos] = RELATED * HINT_WEIGHT
        words = question.words
        for n_word, n_stem in predicate_words(predicate):
            for t, weight in candidates:
                s = self.word(t.word, t.stem, n_word, n_stem) * weight
                nxt = t.pos + 1
                if s and nxt < len(words) and words[nxt].word in particles:
                    s += PARTICLE_BONUS  # "the hold *on*" fits WAITING_ON better than HELD_BY
                if s > out.get(t.pos, 0.0):
                    out[t.pos] = s
        return out
