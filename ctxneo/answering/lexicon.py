"""Groups of related words a user (or the package) declares: an extension of relation
matching for a domain's own vocabulary, not its mechanism.

``ctxneo/data/related_words.txt`` holds general English relation words that may stand
for one another; ``CTXNEO_LEXICON`` or ``Lexicon.default([path])`` add a user's groups.
A question word and a predicate word in one group match as a shared prefix does
(:func:`ctxneo.answering.match.lexical`): one signal among the ranker's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path

from ctxneo.errors import ConfigError
from ctxneo.text import split_words, stem


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
        """The shipped groups, with ``extra`` files and ``CTXNEO_LEXICON``'s added."""
        lines = resources.files("ctxneo").joinpath("data/related_words.txt").read_text("utf-8")
        texts = [lines]
        env = os.environ.get("CTXNEO_LEXICON")
        for path in [*extra, *([env] if env else [])]:
            try:
                texts.append(Path(path).read_text("utf-8"))
            except (OSError, UnicodeDecodeError) as e:
                raise ConfigError(f"cannot read the lexicon {path} (CTXNEO_LEXICON?): {e}") from e
        return cls("\n".join(texts).splitlines())
