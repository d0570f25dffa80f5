"""Answer a question from the graph, from the question's words alone.

The reader (:mod:`.reader`) works in stages, each a module with its own measure
in ``ctxneo bench --diagnose``:

1. **read** (:mod:`.question`, :mod:`.forms`): words, cues, and how likely each
   form of answer is (a value, a count, yes/no, the speaker, an earlier value);
2. **anchors** (:mod:`.linking`): the entities the question may name, each with
   a learned probability;
3. **candidates** (:mod:`.readings`): every shape of one to three facts from the
   anchors (or from the subjects of a relation the question names), in every
   form it can take;
4. **rank** (:mod:`.features`, :mod:`.match`): a ranker fitted on the training
   corpus orders the readings by features the stages measure;
5. **decide**: a calibrated confidence for the best reading; below the threshold
   the answer is ``UNKNOWN`` with the true reason.

The fitted parts ship in ``ctxneo/data/reader.npz`` (:mod:`.learned`), rebuilt
by ``scripts/build_reader.py`` from the repository's data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxneo.answering.lexicon import Lexicon

if TYPE_CHECKING:
    from ctxneo.answering.reader import DEFAULT_MIN_CONFIDENCE, Reader

    #: The name the rest of ctxneo knows the reader by.
    Answerer = Reader

__all__ = ["DEFAULT_MIN_CONFIDENCE", "Answerer", "Lexicon", "Reader"]


def __getattr__(name: str) -> Any:
    # The reader imports numpy and its fitted model: only when it is asked for,
    # so `import ctxneo`, a write or `ctxneo --help` does not pay for it.
    if name in ("DEFAULT_MIN_CONFIDENCE", "Answerer", "Reader"):
        from ctxneo.answering import reader

        return reader.Reader if name == "Answerer" else getattr(reader, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
