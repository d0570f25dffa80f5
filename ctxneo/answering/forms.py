"""What form of answer a question asks for: a value, a count, yes or no, the speaker, an
earlier value. Learned, not ruled: a multinomial logistic model over the question's
words and their places (the first and last words, the question word and the word after
it), fitted on the training corpus by ``scripts/build_reader.py``.

A list is not a form of its own: asking for a relation's value gives every current
value, one or many. The probabilities are features of every reading (a count reading
is likelier when "how many" opens the question) rather than a decision taken first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ctxneo.answering.question import HISTORY_CUES
from ctxneo.text import Token, stem

FORMS = ("value", "count", "yesno", "speaker", "earlier")

#: The form each training label stands for (labels are read only when fitting).
FORM_OF_LABEL = {
    "direct": "value",
    "distant": "value",
    "join": "value",
    "chain3": "value",
    "described": "value",
    "multi": "value",
    "count": "count",
    "yesno": "yesno",
    "confirm": "yesno",
    "provenance": "speaker",
    "history": "earlier",
    "history_join": "earlier",
}

_WH = frozenset("who whom whose what which where when why how".split())
_AUX = frozenset(
    "is are was were do does did has have had can could will would should shall am isn aren "
    "wasn weren doesn didn hasn haven".split()
)


def cue_words(words: Sequence[Token]) -> list[str]:
    """The question's words as the form model reads them (sparse, named features).

    Every word (function words too: "is" opening a question asks yes or no), the first
    two and last two words, the first question word and the word after it.
    """
    lowered = [t.word for t in words]
    out = [f"w={w}" for w in lowered]
    out += [f"s={t.stem}" for t in words if not t.stop]
    if lowered:
        out.append(f"f={lowered[0]}")
        out.append(f"l={lowered[-1]}")
    if len(lowered) > 1:
        out.append(f"f2={lowered[0]}_{lowered[1]}")
        out.append(f"l2={lowered[-2]}_{lowered[-1]}")
    wh = next((i for i, w in enumerate(lowered) if w in _WH), None)
    if wh is None:
        out.append("nowh")
    else:
        nxt = lowered[wh + 1] if wh + 1 < len(lowered) else "END"
        out.append(f"wh={lowered[wh]}")
        out.append(f"whn={lowered[wh]}_{nxt}")
    first_content = next((w for w in lowered if w not in _FILLER_OPENERS), "")
    if first_content in _AUX:
        out.append("aux_opens")
    return out


#: Words that open a request before its question ("hey, quick one: is ..."), skipped when
#: asking whether an auxiliary verb opens the question.
_FILLER_OPENERS = frozenset("hey hi ok okay so quick one q sorry also and but um oh yo".split())


def softmax(
    weights: Mapping[str, Sequence[float]], bias: Sequence[float], words: Sequence[Token]
) -> list[float]:
    """A multinomial logistic model over the question's :func:`cue_words`."""
    scores = list(bias)
    for feature in cue_words(words):
        w = weights.get(feature)
        if w is not None:
            for i, x in enumerate(w):
                scores[i] += x
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


class FormModel:
    """P(form | question words): softmax over summed feature weights."""

    def __init__(self, weights: Mapping[str, Sequence[float]], bias: Sequence[float]) -> None:
        self.weights = weights
        self.bias = list(bias)
        self._known_cue: dict[str, str] = {}

    def probabilities(
        self, words: Sequence[Token], cues: Sequence[tuple[int, str, bool]] = ()
    ) -> dict[str, float]:
        """``cues``: the question's history cues (:attr:`.question.Question.cues`). The
        model learned the cue words its corpus used; one it never read ("formerly"), or
        a cue of several words (it reads words one by one: "used to"), is read as the
        cue's class's word it knows best, so a synonym the rules know is not lost; only
        when it is all the question has of a cue (with a cue the model knows beside it,
        nothing is missing, and a second "before" would weigh what one does)."""
        p = softmax(self.weights, self.bias, self._read_cues(words, cues))
        return dict(zip(FORMS, p, strict=True))

    def _read_cues(
        self, words: Sequence[Token], cues: Sequence[tuple[int, str, bool]]
    ) -> Sequence[Token]:
        swap = {
            pos: cls
            for pos, cls, phrase in cues
            if phrase or f"w={words[pos].word}" not in self.weights
        }
        if not swap or len(swap) < len(cues):
            return words  # (a cue it knows is there: nothing is missing)
        out = []
        for t in words:
            cls = swap.get(t.pos)
            if cls is None:
                out.append(t)
                continue
            known = self._best_known(cls)
            if known is not None:
                out.append(replace(t, word=known, stem=stem(known)))
        return out

    def _best_known(self, cls: str) -> str | None:
        """The word of cue class ``cls`` whose weight says "earlier" most surely."""
        if cls not in self._known_cue:
            stems = HISTORY_CUES[cls]
            earlier = FORMS.index("earlier")
            margins = {
                feature[2:]: w[earlier] - max(x for i, x in enumerate(w) if i != earlier)
                for feature, w in self.weights.items()
                if feature.startswith("w=") and stem(feature[2:]) in stems
            }
            self._known_cue[cls] = max(margins, key=lambda k: (margins[k], k), default="")
        return self._known_cue[cls] or None

    def to_dict(self) -> dict[str, object]:
        return {"forms": list(FORMS), "weights": dict(self.weights), "bias": self.bias}

    @classmethod
    def from_dict(cls, doc: Mapping[str, object]) -> FormModel:
        if list(doc["forms"]) != list(FORMS):  # type: ignore[call-overload]
            raise ValueError(f"form model for {doc['forms']}, expected {FORMS}")
        return cls(doc["weights"], doc["bias"])  # type: ignore[arg-type]


#: What the value a question asks for is (:func:`ctxneo.answering.features.kind_of`): a
#: quantity of one of four shapes, a name (of a person, team, place or thing, however it
#: is written: "Dana Whitfield", "Team_Solar_2", "REQ-5521"), or a word ("on hold").
#: Names are one kind because how a name is written says nothing of what it names.
KINDS = ("date", "amount", "duration", "measure", "name", "word")


class KindModel:
    """P(the kind of value asked for | question words): the form model's cues and softmax,
    over :data:`KINDS` ("how far behind" asks for a duration, "where's 12 at" for a
    state), fitted on the corpus's answers by ``scripts/build_reader.py``."""

    def __init__(self, weights: Mapping[str, Sequence[float]], bias: Sequence[float]) -> None:
        self.weights = weights
        self.bias = list(bias)

    def probabilities(self, words: Sequence[Token]) -> tuple[float, ...]:
        return tuple(softmax(self.weights, self.bias, words))

    def to_dict(self) -> dict[str, object]:
        return {"kinds": list(KINDS), "weights": dict(self.weights), "bias": self.bias}

    @classmethod
    def from_dict(cls, doc: Mapping[str, object]) -> KindModel:
        if list(doc["kinds"]) != list(KINDS):  # type: ignore[call-overload]
            raise ValueError(f"kind model for {doc['kinds']}, expected {KINDS}")
        return cls(doc["weights"], doc["bias"])  # type: ignore[arg-type]
