"""Stage 5b, judging: how sure a reading is, and whether to answer at all.

A reading is trusted as far as it explains the question: the entity the
question names is the walk's anchor, every relation word is matched by a
hop, no name the question uses is left off the walk, the answer is of the
kind asked for, and no other reading comes close. Those are measured as
features of the best path and turned into a probability by a logistic model
fitted on calibration scenario sets kept apart from the ones the benchmark
reports (``scripts/fit_confidence.py`` writes ``data/confidence.json``), so
that among answers with confidence >= c roughly a fraction c is right.

Below the caller's threshold the answer is ``UNKNOWN`` with the reason, and
the reading is offered as a candidate, never as the answer.
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ctxneo.answering.candidates import Candidates
from ctxneo.answering.decide import Finding
from ctxneo.answering.entities import Link
from ctxneo.answering.question import FILLER, STATED, Question
from ctxneo.answering.scoring import Path, Scoring
from ctxneo.answering.values import has_shape, person_like
from ctxneo.errors import ConfigError
from ctxneo.text import Token

#: The features, in the order the model file lists its coefficients.
FEATURES = (
    "score",
    "hops",
    "described",
    "anchor_coverage",
    "anchor_exact",
    "relation_min",
    "relation_lexical",
    "unexplained",
    "unexplained_share",
    "relation_words",
    "names_unexplained",
    "missed_mention",
    "margin",
    "kind",
    "only_relation",
    "history",
    "provenance",
    "values",
)
MARGIN_CAP = 3.0


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the judge sees of one question's answering: the reading and its rivals."""

    q: Question
    finding: Finding
    paths: Sequence[Path]
    links: Sequence[Link]
    ctx: Scoring | None
    #: Question positions whose word is part of some name in this memory ("service" when
    #: there is a ``Service_Search``), linked to an entity or not.
    name_words: frozenset[int] = frozenset()


def features(e: Evidence) -> dict[str, float]:
    """The measurable signs that a reading explains its question (see the module docstring)."""
    f = dict.fromkeys(FEATURES, 0.0)
    top = e.finding.path
    f["only_relation"] = float(e.finding.reading.endswith("only-relation"))
    f["history"] = float(e.finding.reading.startswith("history"))
    f["provenance"] = float("provenance" in e.finding.reading)
    f["values"] = math.log1p(len(e.finding.values))
    provenance = "provenance" in e.finding.reading
    # Asking who said it: the asking words ("which agent", "who flagged") are explained by
    # the reading itself, which answers with the agent who stated the fact.
    said = {t.pos for t in e.q.content if t.stem in STATED} if provenance else set()
    if provenance:
        said |= e.q.type_positions
    content = [t for t in e.q.content if t.word not in FILLER and t.pos not in said]
    if top is None:
        f["unexplained"] = float(len(content))
        f["unexplained_share"] = 1.0
        return f
    f["score"] = top.score
    f["hops"] = float(len(top.facts))
    f["described"] = float(top.anchor is None)
    link = next((lk for lk in e.links if lk.entity == top.anchor), None)
    if link is not None:
        f["anchor_coverage"] = link.coverage
        f["anchor_exact"] = float(link.exact)
    hops = [s for s in top.relation if s > 0] if top.sibling else list(top.relation)
    f["relation_min"] = min(hops, default=0.0)
    f["relation_lexical"] = float(f["relation_min"] >= 0.95)
    missing = [t for t in content if t.pos not in top.explained]
    f["unexplained"] = float(len(missing))
    f["unexplained_share"] = len(missing) / max(1, len(content))
    # The words that say which relation is asked: not a name, the kind asked for, a cue.
    named = {p for lk in e.links for p in lk.positions}
    cues = e.q.type_positions | e.q.sibling_positions | e.q.cue_positions | named
    relation_words = [t for t in content if t.pos not in cues]
    strength = e.ctx.explained_strength(top) if e.ctx is not None else {}
    f["relation_words"] = (
        sum(min(1.0, strength.get(t.pos, 0.0)) for t in relation_words) / len(relation_words)
        if relation_words
        else 1.0
    )
    # A name the memory does not know (written as a name, explained by nothing).
    f["names_unexplained"] = float(
        sum(1 for t in missing if t.pos not in named and _looks_like_a_name(t))
    )
    on_path = set(top.ends)
    f["missed_mention"] = max(
        (lk.coverage for lk in e.links if lk.entity not in on_path), default=0.0
    )
    answers = set(e.finding.values)
    rival = _best_rival(e.paths, answers | {top.answer})
    f["margin"] = min(MARGIN_CAP, top.score - rival) if rival is not None else MARGIN_CAP
    f["kind"] = 1.0 if provenance else _kind(e.q, top)
    return f


def _best_rival(paths: Sequence[Path], answers: set[str]) -> float | None:
    """The best score of a walk to an answer not among ``answers``."""
    if isinstance(paths, Candidates):
        return paths.best_other(answers)
    return max((p.score for p in paths if p.answer not in answers), default=None)


def _looks_like_a_name(t: Token) -> bool:
    return (t.pos > 0 and t.written[:1].isupper()) or any(c.isdigit() for c in t.word)


def _kind(q: Question, top: Path) -> float:
    """+1 when the answer is of the kind asked for, -1 when it is not, 0 when nothing is asked."""
    if q.shape is not None:
        return 1.0 if has_shape(top.answer, q.shape) else -1.0
    if q.type_positions:
        return 1.0 if q.type_positions <= top.explained else -1.0
    if q.asks_person:
        return 1.0 if person_like(top.answer) else -1.0
    return 0.0


@dataclass(frozen=True, slots=True)
class Calibration:
    """A logistic model over :data:`FEATURES`: standardised inputs, one weight each."""

    means: tuple[float, ...]
    scales: tuple[float, ...]
    weights: tuple[float, ...]
    intercept: float
    #: A monotone map from the logistic output to the share right (isotonic regression).
    iso_x: tuple[float, ...] = ()
    iso_y: tuple[float, ...] = ()

    def probability(self, values: Mapping[str, float]) -> float:
        z = self.intercept
        for name, mean, scale, weight in zip(
            FEATURES, self.means, self.scales, self.weights, strict=True
        ):
            z += weight * (values[name] - mean) / scale
        p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
        return _interpolate(p, self.iso_x, self.iso_y) if self.iso_x else p

    @classmethod
    def from_dict(cls, doc: Mapping[str, object]) -> Calibration:
        names = tuple(doc["features"])  # type: ignore[arg-type]
        if names != FEATURES:
            raise ConfigError(
                f"the confidence model was fitted on features {names}, this code uses {FEATURES}:"
                " refit it with scripts/fit_confidence.py"
            )
        return cls(
            tuple(doc["means"]),  # type: ignore[arg-type]
            tuple(doc["scales"]),  # type: ignore[arg-type]
            tuple(doc["weights"]),  # type: ignore[arg-type]
            float(doc["intercept"]),  # type: ignore[arg-type]
            tuple(doc.get("isotonic_x", ())),  # type: ignore[arg-type]
            tuple(doc.get("isotonic_y", ())),  # type: ignore[arg-type]
        )


def _interpolate(x: float, xs: Sequence[float], ys: Sequence[float]) -> float:
    """Piecewise-linear through (xs, ys), flat beyond the ends (as the isotonic fit clips)."""
    if x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    i = bisect.bisect_right(xs, x)
    x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
    return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)


@cache
def default_calibration() -> Calibration | None:
    """The model shipped in ``data/confidence.json`` (None before one is fitted)."""
    path = resources.files("ctxneo").joinpath("data/confidence.json")
    if not path.is_file():
        return None
    return Calibration.from_dict(json.loads(path.read_text("utf-8")))


def confidence(e: Evidence, calibration: Calibration | None) -> tuple[float, dict[str, float]]:
    """The probability that the reading is right, and the features it came from."""
    values = features(e)
    if not e.finding.known:
        return 0.0, values
    if calibration is None:
        return 1.0, values
    return round(calibration.probability(values), 4), values
