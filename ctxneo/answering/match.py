"""How well the words of a question stand for the words of a predicate (or a value).

Three signals, each kept apart so the ranker weighs them (none is a decision):

- **lexical**: the same stem, a shared prefix of four letters or more
  (``owns`` / ``OWNED_BY``, ``superv`` in "supervisor" / ``SUPERVISED_BY``), or
  words a lexicon groups together (:mod:`ctxneo.answering.lexicon`);
- **vectors**: the cosine of the shipped static word vectors
  (:class:`ctxneo.meaning.WordVectors`: "urgent" for ``PRIORITY``);
- **learned association**: a table of (question word, predicate word) pairs
  fitted on the training corpus by ``scripts/build_reader.py`` ("where" goes
  with ``LOCATED``, "who's on" with ``ASSIGNED``), which also covers the
  question words that carry a relation by themselves.

A question's *relation words* are its content words outside the names the
reading is anchored on. Scores are per (question position, predicate), read
once per question and predicate.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from ctxneo.answering.lexicon import Lexicon
from ctxneo.answering.question import Question
from ctxneo.meaning import Meaning
from ctxneo.text import STOPWORDS, Token, name_stems, split_words

#: Question words that say nothing of which relation is asked.
FILLER = frozenset(
    """please tell remind know say sorry hey hi thanks thank quick question actually exactly
    really again right ok okay just still anyway currently latest news update moment point
    think mean like need want wondering wonder remember recall check confirm guess happen
    going get got give look see find final finally today these days things stand pls plz
    rn atm now yet yes yeah correct""".split()
)
#: Function words that say a state by themselves ("is 12 *done*?", "the line is *down*"):
#: what a yes/no question may state of a value in other words than its own.
STATE_WORDS = frozenset("done down off out up".split())
#: Question words kept as relation words although they are function words: they carry a
#: relation by themselves ("where", "when", "who's *on*", "*with* whom").
CARRIERS = frozenset("who whom whose where when how much many long on with at in by for".split())
_VECTOR_FLOOR = 0.25


@lru_cache(maxsize=50_000)
def predicate_stems(predicate: str) -> tuple[tuple[str, str], ...]:
    """The (word, stem) pairs of a predicate or value name, function words left out."""
    words = split_words(predicate)
    out = tuple(
        (w, s) for w, s in zip(words, name_stems(predicate), strict=True) if w not in STOPWORDS
    )
    return out or tuple(zip(words, name_stems(predicate), strict=True))


def lexical(q_stem: str, p_stem: str) -> float:
    """1.0 for the same stem, 0.8 for a shared prefix of 4+ letters, else 0."""
    if q_stem == p_stem:
        return 1.0
    n = min(len(q_stem), len(p_stem))
    if n >= 4 and q_stem[:n] == p_stem[:n]:
        return 0.8
    return 0.0


class Association:
    """Learned pair weights: (question stem, predicate stem) -> weight (log-odds units)."""

    def __init__(self, pairs: Mapping[str, float]) -> None:
        self.pairs = dict(pairs)

    def weight(self, q_stem: str, p_stem: str) -> float:
        return self.pairs.get(f"{q_stem}|{p_stem}", 0.0)

    def to_dict(self) -> dict[str, float]:
        return dict(sorted(self.pairs.items()))


class Matcher:
    """Per-question relation matching, cached per predicate."""

    def __init__(
        self,
        q: Question,
        meaning: Meaning,
        association: Association | None,
        lexicon: Lexicon | None = None,
    ) -> None:
        self.q = q
        self.meaning = meaning
        self.association = association
        self.lexicon = lexicon
        words = q.words
        self.positions = tuple(
            t.pos
            for t in words
            if (not t.stop or t.word in CARRIERS) and t.word not in FILLER and len(t.word) > 1
        )
        self._cache: dict[str, tuple[dict[int, float], dict[int, float], dict[int, float]]] = {}
        self._relevance: dict[tuple[str, frozenset[int]], float] = {}
        self._explained: dict[str, frozenset[int]] = {}
        self._pairs: dict[str, dict[int, list[tuple[float, float]]]] = {}
        self._word_scores: dict[str, tuple[dict[int, float], ...]] = {}

    def _per_word(self, name: str) -> dict[int, list[tuple[float, float]]]:
        """Per question position (not a function word), for each word of ``name`` in
        order: (lexical, vector) strength. What :meth:`scores` and :meth:`word_scores`
        read, computed once per predicate."""
        found = self._pairs.get(name)
        if found is not None:
            return found
        p_words = predicate_stems(name)
        words = self.q.words
        found = {}
        for pos in self.positions:
            t = words[pos]
            if t.stop:
                continue
            row = []
            for pw, ps in p_words:
                lx = lexical(t.stem, ps)
                if not lx and self.lexicon is not None and self.lexicon.related(t.stem, ps):
                    lx = 0.8
                row.append((lx, self.meaning.similarity(t.word, pw)))
            found[pos] = row
        self._pairs[name] = found
        return found

    def scores(self, name: str) -> tuple[dict[int, float], dict[int, float], dict[int, float]]:
        """Per question position: (lexical, vector, association) strength for ``name``."""
        found = self._cache.get(name)
        if found is not None:
            return found
        lex: dict[int, float] = {}
        vec: dict[int, float] = {}
        assoc: dict[int, float] = {}
        p_words = predicate_stems(name)
        pairs = self._per_word(name)
        words = self.q.words
        for pos in self.positions:
            row = pairs.get(pos, ())
            lx = max((x for x, _ in row), default=0.0)
            vc = max((v for _, v in row), default=0.0)
            if lx:
                lex[pos] = lx
            if vc > _VECTOR_FLOOR:
                vec[pos] = vc
            if self.association is not None:
                t = words[pos]
                a = max((self.association.weight(t.stem, ps) for _, ps in p_words), default=0.0)
                if a:
                    assoc[pos] = a
        found = (lex, vec, assoc)
        self._cache[name] = found
        return found

    def explains(self, name: str) -> frozenset[int]:
        """The question positions ``name``'s words stand for clearly."""
        found = self._explained.get(name)
        if found is None:
            assoc = self.scores(name)[2]
            found = self._explained[name] = self.names(name) | {
                p for p, v in assoc.items() if v >= 1.0
            }
        return found

    def word_scores(self, name: str) -> tuple[dict[int, float], ...]:
        """For each word of ``name`` (function words left out), in order: how strongly each
        question position says it (the same stem or a related one, or alike in meaning)."""
        found = self._word_scores.get(name)
        if found is None:  # (every shape ending in this relation asks again)
            pairs = self._per_word(name)
            found = self._word_scores[name] = tuple(
                {pos: v for pos, row in pairs.items() if (v := max(row[i])) > _VECTOR_FLOOR}
                for i in range(len(predicate_stems(name)))
            )
        return found

    def stated_words(self, excluded: frozenset[int]) -> list[Token]:
        """The words that may state a value, outside ``excluded`` positions: content words
        and words that say a state ("done"), not filler ("still", "now")."""
        return [
            t
            for t in self.q.words
            if (not t.stop or t.word in STATE_WORDS)
            and t.word not in FILLER
            and len(t.word) > 1
            and t.pos not in excluded
        ]

    def names(self, name: str) -> frozenset[int]:
        """The question positions that say ``name``'s words: the same stem or a related
        one, or a word alike in meaning (the learned association left out, so that what
        is fitted before it reads the same)."""
        lex, vec, _ = self.scores(name)
        return frozenset(
            {p for p, v in lex.items() if v >= 0.8} | {p for p, v in vec.items() if v >= 0.5}
        )

    def relevance(self, name: str, excluded: frozenset[int] = frozenset()) -> float:
        """One number for pruning walks: the best signal at any relation position."""
        key = (name, excluded)
        found = self._relevance.get(key)
        if found is None:
            found = self._relevance[key] = self._best(name, excluded)
        return found

    def _best(self, name: str, skip: frozenset[int]) -> float:
        lex, vec, assoc = self.scores(name)
        best = 0.0
        for pos in self.positions:
            if pos in skip:
                continue
            s = max(lex.get(pos, 0.0), vec.get(pos, 0.0), min(1.0, assoc.get(pos, 0.0) / 3.0))
            best = max(best, s)
        return best
