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
from dataclasses import replace

from ctxneo.answering import decide, judge, paths
from ctxneo.answering.candidates import Candidates
from ctxneo.answering.entities import Link, cover, link_entities
from ctxneo.answering.question import FILLER, STATED, Question, lookup_keys, read_question
from ctxneo.answering.relations import Lexicon, Relations
from ctxneo.answering.scoring import Path, Scoring
from ctxneo.answering.values import has_shape, measure_word, only_a_measure
from ctxneo.meaning import Meaning, WordVectors
from ctxneo.model import UNKNOWN, Answer, Fact, Reading, Trace, render_values
from ctxneo.stores.base import Store
from ctxneo.text import is_identifier, name_stems
from ctxneo.tokens import estimate_tokens

__all__ = ["DEFAULT_MIN_CONFIDENCE", "Answerer", "Lexicon", "Relations"]

#: Answer only at or above this confidence. The highest value at which the seed suite
#: keeps 18/18 and the shipped suite loses at most a few points to abstention with the
#: fitted model; the isotonic map moves in steps, so refitting can move it.
DEFAULT_MIN_CONFIDENCE = 0.12
MAX_ANCHORS = 4
#: With several readings asked for, the context also holds this many facts of each of
#: this many entities the question names, after the readings' evidence.
AROUND_ENTITIES = 2
AROUND_FACTS = 8
CANDIDATES = 24  # entities the index proposes per question, best first
#: "I", "my": the asking agent. ("we", "our" are the team, not the asker.)
_FIRST_PERSON = {"i", "me", "my", "mine"}
_ASKS_PERSON_OR_PLACE = {"who", "whom", "whose", "where"}


class Answerer:
    """Answers questions over one store."""

    def __init__(
        self,
        store: Store,
        relations: Relations | None = None,
        calibration: judge.Calibration | None = None,
    ) -> None:
        self.store = store
        # By default it reads as a Memory does: the lexicon and the shipped word vectors.
        self.relations = relations or Relations(meaning=WordVectors.default())
        self.calibration = calibration or judge.default_calibration()

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
        threshold = DEFAULT_MIN_CONFIDENCE if min_confidence is None else min_confidence
        e = self.find(text, speaker=speaker, as_of=as_of, topic=topic)
        readings = self._readings(e, k)
        around = self._around(e, as_of) if k > 1 else ()
        top = readings[0] if readings and e.finding.known else None
        unexplained = top is not None and answers_another_question(e, self.relations.meaning)
        if top is not None and top.confidence >= threshold and not unexplained:
            context, sent = compose_context(text, readings, max_tokens, around)
            return Answer(
                text,
                top.answer,
                top.evidence,
                context,
                top.reading,
                top.values,
                top.confidence,
                "",
                tuple(readings),
                context_facts=sent,
            )
        if top is not None and not unexplained:
            reason = (
                f"not sure enough (confidence {top.confidence:.2f} < {threshold:.2f}); "
                f"best reading: {top.answer} [{top.reading}]"
            )
        else:
            reason = self._why_unknown(e, as_of)
        evidence = () if top is not None else e.finding.evidence
        context, sent = compose_context(text, readings, max_tokens, (*evidence, *around))
        return Answer(
            text,
            UNKNOWN,
            evidence,
            context,
            f"unknown: {reason}",
            (),
            top.confidence if top is not None else 0.0,
            reason,
            tuple(readings),
            top,
            sent,
        )

    def trace(self, text: str, *, speaker: str | None = None, k: int = 10) -> Trace:
        """The anchors linked and the best ``k`` readings of ``text``, before any
        threshold: what the stages produced, for diagnosis."""
        e = self.find(text, speaker=speaker)
        anchors = tuple(dict.fromkeys(lk.entity for lk in e.links))
        readings = self.ask(text, speaker=speaker, k=k, min_confidence=0.0).readings
        return Trace(text, anchors, readings)

    def _around(self, e: judge.Evidence, as_of: int | None) -> tuple[Fact, ...]:
        """The current facts of the entities the question names (the best-named first,
        newest first, a few each): after the readings, what an LLM given several
        readings may still need when none of them is the right one."""
        named = sorted(
            (lk for lk in e.links if lk.coverage >= 0.5),
            key=lambda lk: (not lk.exact, -lk.coverage, lk.entity),
        )[:AROUND_ENTITIES]
        out: list[Fact] = []
        for link in named:
            out += self.store.facts_of([link.entity], as_of=as_of, history=True, limit=AROUND_FACTS)
        return tuple(out)

    def _readings(self, e: judge.Evidence, k: int) -> list[Reading]:
        """The best reading and up to ``k - 1`` rival ones, each with its confidence."""
        out: list[Reading] = []
        if e.finding.known:
            out.append(self._reading(e))
        if k <= 1 or e.finding.path is None:
            return out[:k]
        seen = {tuple(e.finding.values)}
        # A walk of a shape and score read already reads the same (the group of a current
        # walk is its whole shape and score): skip it rather than regroup every value.
        grouped: set[tuple[object, ...]] = set()
        for p in sorted(e.paths, key=Path.order):
            if len(out) >= k:
                break
            key = (p.shape, p.score)
            if key in grouped:
                continue
            rival = decide.from_paths(e.q, p, e.paths, False, None)
            if all(f.valid_at(None) for f in p.facts):
                grouped.add(key)
            if tuple(rival.values) in seen:
                continue
            seen.add(tuple(rival.values))
            out.append(self._reading(replace(e, finding=rival)))
        return out

    def _reading(self, e: judge.Evidence) -> Reading:
        conf, _ = judge.confidence(e, self.calibration)
        return Reading(
            self.render(e), e.finding.values, e.finding.evidence, conf, e.finding.reading
        )

    @staticmethod
    def render(e: judge.Evidence) -> str:
        """The answer text of a reading: its values, unambiguous; "N (values)" for a count."""
        shown = render_values(e.finding.values)
        return f"{len(e.finding.values)} ({shown})" if e.q.count else shown

    def _why_unknown(self, e: judge.Evidence, as_of: int | None) -> str:
        """One line: no entity, no relation, the entity has no such fact, or it was retracted."""
        if e.finding.reason.startswith("history"):
            return e.finding.reason
        named = [lk for lk in e.links if lk.coverage >= 0.5]
        relations = e.ctx.predicates if e.ctx is not None else {}
        if not named and not relations:
            return "no entity or relation of the question is in memory"
        if not named:
            return "no entity of the question is in memory"
        entity = named[0].entity
        # The named entities, and those the best reading passed through ("the service
        # checkout depends on"): a value of a relation the question names, retracted.
        near = [lk.entity for lk in named]
        if e.finding.path is not None:
            near += [n for n in e.finding.path.ends if n not in near]
        strong = {p for p, m in relations.items() if max(m.values()) >= 0.99} or set(relations)
        if strong:
            everything = self.store.facts_of(near, as_of=as_of, history=True)
            current = {
                (f.subject, f.predicate)
                for f in everything
                if f.predicate in strong and f.valid_at(as_of)
            }
            gone = [
                f
                for f in everything
                if f.predicate in strong
                and not f.valid_at(as_of)
                and (f.subject, f.predicate) not in current
            ]
            if gone:
                last = max(gone, key=lambda f: f.valid_to or 0)
                return (
                    f"{last.subject} {last.predicate} {last.object} was retracted at "
                    f"#{last.valid_to}; nothing holds now"
                )
        return f"{entity} is in memory, but no fact of it answers the question"

    def find(
        self,
        text: str,
        *,
        speaker: str | None = None,
        as_of: int | None = None,
        topic: str | None = None,
    ) -> judge.Evidence:
        """The best reading of ``text`` and its rivals (stages 1 to 5, before judging)."""
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
            if topic is not None
            or (lk.exact and len(lk.positions) > 1)
            or not lk.positions.keys() <= q.type_positions
        ]
        anchors = anchors[:MAX_ANCHORS]
        # Words of a name are not relation words, but a plain word may be both: "acted"
        # meets a tag called "acting" and also asks who starred.
        named = frozenset(
            p for lk in links if lk.coverage >= 0.5 and _a_name(q, lk) for p in lk.positions
        )
        by_word = self.relations.match_all(q, vocabulary, named)
        predicates = {p: _merged(found) for p, found in by_word.items()}
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
        ctx = Scoring(
            q, predicates, mentioned, {lk.entity: lk for lk in anchors}, self.relations, by_word
        )
        stems = {st for hit in hits for sf in (hit.name, *hit.aliases) for st in name_stems(sf)}
        name_words = frozenset(t.pos for t in q.content if t.stem in stems)

        # Who-questions may ask for the agent who stated a fact rather than for a
        # value: read them leniently first (stated values may be named, closed
        # facts count), then decide from the best path which reading it is.
        lenient = q.asks_speaker or q.history is not None
        top, found = self._best(ctx, anchors, as_of, lenient)
        if top is None:
            finding = decide.only_relation(self.store, anchors, as_of)
            return judge.Evidence(q, finding, found, links, ctx, name_words)
        provenance = q.asks_speaker and decide.asks_who_said(ctx, top)
        if q.asks_speaker and not provenance and q.history is None:
            # (read strictly again only where the strict reading can differ)
            top, found = (
                self._best(ctx, anchors, as_of, False) if ctx.strict_differs else (top, found)
            )
            ctx.lenient = False
            if top is None:
                finding = decide.unknown("no fact answers the question")
                return judge.Evidence(q, finding, found, links, ctx, name_words)
        if q.history is not None:
            finding = decide.from_history(self.store, q, top, provenance, mentioned, as_of)
        else:
            finding = decide.from_paths(q, top, found, provenance, as_of)
        return judge.Evidence(q, finding, found, links, ctx, name_words)

    def _best(
        self, ctx: Scoring, anchors: Sequence[Link], as_of: int | None, lenient: bool
    ) -> tuple[Path | None, Candidates]:
        ctx.lenient = lenient
        ctx.strict_differs = False
        found = paths.entity_paths(self.store, ctx, anchors, as_of)
        top = found.best()
        if paths.needs_description(ctx, top):
            paths.described_paths(self.store, ctx, as_of, found)
            top = found.best()
        return top, found


def answers_another_question(e: judge.Evidence, meaning: Meaning) -> bool:
    """Whether the best reading, however well it scores, answers some other question
    than the one asked; then it is never the answer (see the three checks)."""
    return _ignores_a_name(e) or _of_another_kind(e, meaning) or _names_itself(e)


def _names_itself(e: judge.Evidence) -> bool:
    """Whether every value is an entity the question names as written, as what it is about:
    "what severity did incident 552 start with" is not answered by Incident_552. (A name
    that takes in the "which X" noun is the kind asked for: "which *team* owned
    payments" may be Payments_Team. Who *stated* something is answered by the agent.)"""
    if "provenance" in e.finding.reading:
        return False
    about = {
        lk.entity for lk in e.links if lk.exact and not lk.positions.keys() & e.q.type_positions
    }
    return all(v in about for v in e.finding.values)


def _ignores_a_name(e: judge.Evidence) -> bool:
    """Whether the best reading leaves out what the question is about, and so answers about
    something else: it walks past an entity the question names in full, or it describes
    its subject by a relation ("the team that owns *a service*") while words the
    memory's names are made of go unexplained ("which team owns the billing *service*"
    answered from the search service, "which team owns *payments*" answered from
    another service's owner)."""
    top = e.finding.path
    if top is None:
        return False
    on_path = set(top.ends)
    q = e.q
    ignored = [
        lk
        for lk in e.links
        if lk.entity not in on_path
        # (words the reading explains otherwise were not that name: "the *release date*")
        and not lk.positions.keys() & top.explained
        and not all(q.words[p].word in _FIRST_PERSON for p in lk.positions)  # "me": the asker
    ]
    if any((lk.exact or lk.coverage >= 0.999) and _a_name(q, lk) for lk in ignored):
        return True
    if e.ctx is not None and q.type_positions and "provenance" not in e.finding.reading:
        # Neither the kind of answer asked for ("which *team*") nor a relation the question
        # names by its very word ("*owns*") is explained: the reading answers some other
        # question (the service checkout depends on, for "which team owns" it).
        named = {p for m in e.ctx.predicates.values() for p, w in m.items() if w >= 0.99}
        if not q.type_positions & top.explained and named - top.explained - q.type_positions:
            return True
    if top.anchor is not None:
        return False
    if any(lk.coverage >= 0.5 for lk in ignored):
        return True
    cues = q.type_positions | q.sibling_positions | q.cue_positions
    return any(
        p not in top.explained and p not in cues and q.words[p].word not in FILLER
        for p in e.name_words
    )


def _of_another_kind(e: judge.Evidence, meaning: Meaning) -> bool:
    """Whether the values are of a kind the question word rules out, so that the reading
    answers some other question: "when", "what date", "how much" asks for a value of that
    shape; "who" and "where" for someone or somewhere, which a date or a quantity ("10
    March", "45 seconds") is not; "who" for someone, whom a common word written in lower
    case ("fixed", "timber") does not name. Who *stated* a fact is answered by an agent."""
    q, values = e.q, e.finding.values
    if "provenance" in e.finding.reading or not values:
        return False
    if q.shape is not None:
        return not any(has_shape(v, q.shape) for v in values)
    asks_someone_somewhere = q.wh is not None and q.wh.word in _ASKS_PERSON_OR_PLACE
    # "Which X" picks one of several things; a bare date or amount is not one, unless X
    # is itself a measure of time or quantity ("which *month*", "which *shift*").
    picks_a_thing = (
        q.wh is not None
        and q.wh.word == "which"
        and bool(q.type_positions)
        and not any(measure_word(q.words[p].word) for p in q.type_positions)
    )
    if (asks_someone_somewhere or picks_a_thing) and all(only_a_measure(v) for v in values):
        return True
    return q.asks_person and all(meaning.common_word(v) for v in values)


def _a_name(q: Question, link: Link) -> bool:
    """Whether a mention reads as a name: several words, or written as a name is (an
    identifier, a capital letter inside the sentence, digits)."""
    if len(link.positions) != 1 or is_identifier(link.entity):
        return True
    word = q.words[next(iter(link.positions))]
    return word.pos > 0 and (word.written[:1].isupper() or any(c.isdigit() for c in word.word))


def _merged(found: Sequence[dict[int, float]]) -> dict[int, float]:
    out: dict[int, float] = {}
    for per_word in found:
        for pos, s in per_word.items():
            out[pos] = max(out.get(pos, 0.0), s)
    return out


def compose_context(
    question: str,
    readings: Sequence[Reading],
    max_tokens: int | None,
    extra: Sequence[Fact] = (),
) -> tuple[str, tuple[Fact, ...]]:
    """What an LLM is sent, and the facts in it: the question, then each reading's
    evidence facts, best reading first, then ``extra`` facts, each fact once; whole
    facts are left out from the end to keep within ``max_tokens``."""
    lines = [f"Q: {question}"]
    sent: dict[int, Fact] = {}
    for fact in [*(f for r in readings for f in r.evidence), *extra]:
        if fact.seq in sent:
            continue
        line = fact.line()
        if max_tokens is not None and estimate_tokens("\n".join([*lines, line])) > max_tokens:
            break
        sent[fact.seq] = fact
        lines.append(line)
    return "\n".join(lines), tuple(sent.values())
