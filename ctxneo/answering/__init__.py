"""Answer a question from the graph, in five stages, from the question's words alone.

1. **read** (:mod:`.question`): words, stems and cues (history, provenance,
   siblings, the kind and shape of the answer asked for);
2. **anchors** (:mod:`.entities`): the entities the question names, found in
   the store's token index, and the predicates its words speak of
   (:mod:`.relations`, the one interface for relation meaning);
3. **paths** (:mod:`.paths`): candidate walks of one to three facts from the
   anchors (or from facts the question describes), pruned by what the
   question asks before anything is scored;
4. **score** (:mod:`.scoring`): how much of the question each walk explains;
5. **decide** (:mod:`.decide`, :mod:`.judge`): the reading the best walk gives
   (values, history, provenance), how sure it is, and whether to answer at
   all.

Ties are broken by a fixed rule (score, fewer hops, the subject's history
before the reverse reading for history questions, newer evidence, text), so
answers do not depend on hash seeds or store order.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxneo.answering import decide, paths
from ctxneo.answering.entities import Link, cover, link_entities
from ctxneo.answering.question import STATED, lookup_keys, read_question
from ctxneo.answering.relations import Lexicon, Relations
from ctxneo.answering.scoring import Path, Scoring
from ctxneo.model import UNKNOWN, Answer, Reading, render_values
from ctxneo.stores.base import Store

__all__ = ["DEFAULT_MIN_CONFIDENCE", "Answerer", "Lexicon", "Relations"]

DEFAULT_MIN_CONFIDENCE = 0.5
MAX_ANCHORS = 4
CANDIDATES = 24  # entities the index proposes per question, best first
#: "I", "my": the asking agent. ("we", "our" are the team, not the asker.)
_FIRST_PERSON = {"i", "me", "my", "mine"}


class Answerer:
    """Answers questions over one store."""

    def __init__(self, store: Store, relations: Relations | None = None) -> None:
        self.store = store
        self.relations = relations or Relations()

    def ask(
        self,
        text: str,
        *,
        speaker: str | None = None,
        as_of: int | None = None,
        k: int = 1,
        min_confidence: float | None = None,
        max_tokens: int | None = None,
        topic: str | None = None,
    ) -> Answer:
        """Answer ``text``; ``speaker`` resolves "I"/"my"; ``as_of`` reads the past;
        ``topic`` is the entity the question is about, when the caller knows it."""
        finding = self.find(text, speaker=speaker, as_of=as_of, topic=topic)
        q = read_question(text)
        if not finding.known:
            reason = finding.reason
            context = _context(text, finding.evidence)
            return Answer(
                text, UNKNOWN, finding.evidence, context, f"unknown: {reason}", (), 0.0, reason
            )
        values = finding.values
        shown = render_values(values)
        if q.count:
            shown = f"{len(values)} ({shown})"
        reading = Reading(shown, values, finding.evidence, 1.0, finding.reading)
        return Answer(
            text,
            shown,
            finding.evidence,
            _context(text, finding.evidence),
            finding.reading,
            values,
            1.0,
            "",
            (reading,),
        )

    def find(
        self,
        text: str,
        *,
        speaker: str | None = None,
        as_of: int | None = None,
        topic: str | None = None,
    ) -> decide.Finding:
        """The best reading of ``text`` (stages 1 to 5, before confidence)."""
        q = read_question(text)
        hits, vocabulary = self.store.vocabulary(lookup_keys(q), limit=CANDIDATES)
        if topic is not None:
            c = cover(q, topic)
            links = [Link(topic, topic, 1.0, dict.fromkeys(c.positions, 1.0), True)]
        else:
            links = link_entities(q, hits)
        if speaker and any(t.word in _FIRST_PERSON for t in q.words):
            mine = {t.pos: 1.0 for t in q.words if t.word in _FIRST_PERSON}
            links = [Link(speaker, speaker, 1.0, mine, True), *links]
        # Words of a name are the name's, not cues: "Before Midnight" asks no history.
        q = q.masking(p for lk in links if lk.exact and len(lk.positions) > 1 for p in lk.positions)
        # A name met only in the "which X" noun is the answer's kind, not where to start
        # ("which *films*" names no film called "film"), unless it is a name of several words.
        anchors = [
            lk
            for lk in links
            if (lk.exact and len(lk.positions) > 1) or not lk.positions.keys() <= q.type_positions
        ]
        anchors = anchors[:MAX_ANCHORS]
        predicates = {p: m for p in vocabulary if (m := self.relations.match(q, p))}
        mentioned = {lk.entity for lk in links if lk.coverage >= 0.999}
        v = decide.verb(q, anchors)
        if (
            q.asks_speaker
            and q.hint is not None
            and v is not None
            and q.words[v].stem in STATED
            and not any(v in m for m in predicates.values())
        ):
            # "Who caught X": the "who" is whoever said it, not an owner relation.
            hint = q.hint.pos
            predicates = {
                p: kept
                for p, found in predicates.items()
                if (kept := {k: s for k, s in found.items() if k != hint})
            }
        ctx = Scoring(q, predicates, mentioned, {lk.entity: lk for lk in anchors}, self.relations)

        # Who-questions may ask for the agent who stated a fact rather than for a
        # value: read them leniently first (stated values may be named, closed
        # facts count), then decide from the best path which reading it is.
        lenient = q.asks_speaker or q.history is not None
        top, found = self._best(ctx, anchors, as_of, lenient)
        if top is None:
            return decide.only_relation(self.store, anchors, as_of)
        provenance = q.asks_speaker and decide.asks_who_said(ctx, top)
        if q.asks_speaker and not provenance and q.history is None:
            top, found = self._best(ctx, anchors, as_of, False)
            if top is None:
                return decide.unknown("no fact answers the question")
        if q.history is not None:
            return decide.from_history(self.store, q, top, provenance, mentioned, as_of)
        return decide.from_paths(q, top, found, provenance, as_of)

    def _best(
        self, ctx: Scoring, anchors: Sequence[Link], as_of: int | None, lenient: bool
    ) -> tuple[Path | None, list[Path]]:
        ctx.lenient = lenient
        found = paths.entity_paths(self.store, ctx, anchors, as_of)
        top = paths.best(found)
        if paths.needs_description(ctx, top):
            found += paths.described_paths(self.store, ctx, as_of)
            top = paths.best(found)
        return top, found


def _context(question: str, evidence: Sequence[object]) -> str:
    return "\n".join([f"Q: {question}", *(f.line() for f in evidence)])  # type: ignore[attr-defined]
