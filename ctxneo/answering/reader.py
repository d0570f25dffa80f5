"""The reader: a question's words in, a ranked set of readings and a decision out.

Stages, each a module with its own measure in ``ctxneo bench --diagnose``:

1. **read** (:mod:`.question`, :mod:`.forms`): words, cues, and the probability of
   each form of answer (value, count, yes/no, speaker, earlier value);
2. **anchors** (:mod:`.linking`): entities the question may name, each with a
   learned probability;
3. **candidates** (:mod:`.readings`): every shape of one to three facts from the
   anchors, in every form it can take;
4. **rank** (:mod:`.features`, :mod:`.learned`): a learned ranker orders the
   readings;
5. **decide**: a calibrated confidence for the best one; below the threshold the
   answer is ``UNKNOWN`` with the true reason.

Nothing but the question's text (and who asks, and a topic when the caller knows
it) reaches any stage. Ties are broken by a fixed rule (score, fewer hops, newer
evidence, text), so answers do not depend on hash seeds or store order.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter

import numpy as np

from ctxneo.answering import features as feats
from ctxneo.answering.direction import entity_is_subject, verb_phrase, written_forms
from ctxneo.answering.entities import cover
from ctxneo.answering.forms import FORMS
from ctxneo.answering.learned import ReaderModel
from ctxneo.answering.lexicon import Lexicon
from ctxneo.answering.linking import (
    LINK_FEATURES,
    Anchor,
    candidates,
    first_person,
    look_alike_positions,
    relation_words,
)
from ctxneo.answering.match import STATE_WORDS, Matcher
from ctxneo.answering.question import (
    Question,
    asks_both,
    asks_ever,
    counts_events,
    ended_words,
    left_from,
    lookup_keys,
    names_a_turn,
    read_question,
    reports_speech,
    set_aside,
)
from ctxneo.answering.readings import (
    CLAIM_SUBJECT_P,
    FIRST_HOP_LIMIT,
    LATER_HOP_LIMIT,
    Candidate,
    Hop,
    Reads,
    Walker,
    closing_of,
    described_ahead,
    intersections,
    nones,
    readings,
    replaced,
    withdrawn,
)
from ctxneo.meaning import Meaning, WordVectors
from ctxneo.model import UNKNOWN, Answer, Fact, Reading, Trace, render_values
from ctxneo.stores.base import Store, VocabularyMoved
from ctxneo.text import name_stems, said_stems, split_words, stems_of, tokens
from ctxneo.tokens import estimate_tokens

#: What a false answer costs against an UNKNOWN: an agent acts on what memory says, so a
#: wrong answer (or one to a question memory cannot answer) costs twice a refusal...
FALSE_ANSWER_COST = 2.0
#: ...and, the confidence being calibrated, answering pays at or above this confidence
#: (P(right) - 2 (1 - P(right)) >= 0). Out of fold on train/ (README, "Limits"): at 0.5,
#: 8.9% of the unanswerable variants got an answer and 82% of the answers given were
#: right; at 2/3, 4.8% and 88%, for 12% fewer answers right.
DEFAULT_MIN_CONFIDENCE = FALSE_ANSWER_COST / (1.0 + FALSE_ANSWER_COST)
CANDIDATES = 40  # entities the index proposes per question
#: Entities that may stand for a value the question names (yes/no, "before X").
CLAIM_P = 0.1
#: Verdicts on values the question states without naming an entity are offered only
#: when the form model reads it as a yes/no question at least this surely.
STATED_P = 0.5
#: A form of answer is offered only when the form model gives it at least this chance.
FORM_GATE = 0.05
#: With several readings asked for, the context also holds, after the readings' evidence,
#: facts of the entities the question names (at most AROUND_NAMED) and of those the
#: readings pass through (AROUND_ENTITIES in all): at most AROUND_FACTS that say a word of
#: the question the context does not show yet, and AROUND_PAST more of the best reading's
#: slots (their earlier values, and a list's other values).
AROUND_NAMED = 3
AROUND_ENTITIES = 7
AROUND_FACTS = 6
AROUND_PAST = 3
#: When no reading is sure enough to answer, the LLM decides from the context alone, and
#: what it lacks is most often a fact of these entities beside the readings' paths, current
#: or past (on train/, scripts/measure_evidence.py): then at most AROUND_UNSURE more of
#: their facts (in the same order: current before past), and no more than one for every
#: AROUND_UNSURE_SHARE facts read around them (an entity of few facts is told in few; a
#: busy one in a long log needs more).
AROUND_UNSURE = 5
AROUND_UNSURE_SHARE = 4
MARGIN_CAP = 5.0


#: Distinct answers counted among a question's readings (beyond, the count says "many").
MAX_ANSWERS = 50


def answer_inputs(
    ranked: Sequence[tuple[Sequence[float], float, str]], answer: str
) -> list[list[float]]:
    """What the answering model reads (:data:`~.learned.CONFIDENCE_INPUTS`) of every
    reading that gives ``answer``, of ``ranked`` (features, score, answer; best first):
    its score; its margin over the best reading with another answer, read only for the
    best answer's readings (the answering model is fitted on the best answer alone);
    the share of the ranker's softmax over all readings that the answer's readings hold
    (one answer many readings agree on against one reading that barely leads); how many
    answers the readings give; and its features."""
    rival = next((score for _, score, other in ranked if other != answer), None)
    first = bool(ranked) and ranked[0][2] == answer
    top = max((score for _, score, _ in ranked), default=0.0)
    mass = [math.exp(score - top) for _, score, _ in ranked]
    total = sum(mass) or 1.0
    share = sum(m for m, (_, _, other) in zip(mass, ranked, strict=True) if other == answer)
    answers = float(min(len({other for _, _, other in ranked}), MAX_ANSWERS))
    out = []
    for row, score, other in ranked:
        if other == answer:
            margin = MARGIN_CAP if rival is None else min(MARGIN_CAP, score - rival)
            out.append([score, margin if first else 0.0, share / total, answers, *row])
    return out


def order(score: float, hops: int, newest: int, answer: str, form: str) -> tuple[object, ...]:
    """How readings are ranked: by score, then fewer hops, newer evidence, text (a fixed
    rule, so ties never depend on hash seeds or store order)."""
    return (-round(score, 9), hops, -newest, answer, form)


@dataclass(slots=True)
class Read:
    """One question read: its anchors and its readings, best first."""

    q: Question
    anchors: list[Anchor]
    ranked: list[Candidate]
    forms: dict[str, float]
    hits: int
    #: Where the question's reads were served from (its one state of the memory).
    store: Reads
    #: The last fact of a slot of a named entity whose values were all retracted, of a
    #: relation the question names: why a question may find nothing that holds now.
    retracted: Fact | None = None
    #: The first fact of the best reading dropped for walking the question's verb the
    #: other way (:func:`_against_the_verb`): why a question may find nothing that answers.
    turned: Fact | None = None
    #: The walk's slots (an entity and a hop: its facts, closed ones too), the anchors'
    #: among them: what a slot's history is read from without another read.
    slots: Mapping[tuple[str, Hop], list[Fact]] = field(default_factory=dict)


class Reader:
    """Answers questions over one store (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        meaning: Meaning | None = None,
        model: ReaderModel | None = None,
        lexicon: Lexicon | None = None,
    ) -> None:
        self.store = store
        self._meaning = meaning
        self._model = model
        self.lexicon = lexicon

    @property
    def meaning(self) -> Meaning:
        """Word meaning (the shipped word vectors unless given), read on first use."""
        if self._meaning is None:
            self._meaning = WordVectors.default()
        return self._meaning

    @property
    def model(self) -> ReaderModel:
        """The fitted parts (the shipped model unless given), read on first use."""
        if self._model is None:
            self._model = ReaderModel.default()
        return self._model

    # -- reading ---------------------------------------------------------------

    def read(
        self,
        text: str,
        *,
        speaker: str | None = None,
        as_of: int | None = None,
        topic: str | None = None,
    ) -> Read:
        """The question's readings, ranked. On a remote store, read again when another
        client's write changed what its words find while it was read (the store says so
        after at most a few such reads in a row: see :class:`VocabularyMoved`)."""
        while True:
            try:
                found = self._read(text, speaker=speaker, as_of=as_of, topic=topic)
                self.store.confirm_vocabulary()
                return found
            except VocabularyMoved:
                continue

    def _read(
        self,
        text: str,
        *,
        speaker: str | None,
        as_of: int | None,
        topic: str | None,
    ) -> Read:
        q = read_question(text)
        matcher = Matcher(q, self.meaning, self.model.association, self.lexicon)
        keys = lookup_keys(q)
        if speaker and first_person(q):
            keys = sorted({*keys, *name_stems(speaker)})  # (whose name the asker goes by)
        vocabulary = self.store.vocabulary(
            keys,
            limit=CANDIDATES,
            described=described_ahead(matcher, self.store.known_predicates(), as_of),
        )
        hits = vocabulary.hits
        if topic is not None:
            c = cover(q, topic)
            f = [0.0] * len(LINK_FEATURES)
            f[0], f[1] = 1.0, 1.0
            anchors = [Anchor(topic, frozenset(c.positions), 1.0, True, tuple(f), 1.0)]
        else:
            anchors = candidates(
                q,
                hits,
                self.meaning,
                self.model.linker,
                speaker,
                relation_words(matcher, vocabulary.predicates),
            )
        forms = (
            self.model.forms.probabilities(q.words, q.cues)
            if self.model.forms is not None
            else dict.fromkeys(FORMS, 1.0 / len(FORMS))
        )
        asked = self._forms_asked(forms)
        walker = Walker(
            self.store,
            matcher,
            anchors,
            as_of,
            vocabulary,
            slots=bool(asked & {"earlier", "yesno", "speaker"}),
        )
        shapes = walker.walk()
        claims = [a for a in walker.anchors if a.p >= CLAIM_P]
        multi = vocabulary.multi
        # A verdict on a value no entity names is offered only to a question that reads as
        # yes/no: any other question may state values without asking about them.
        stated = (
            frozenset(t.value_stem for t in q.words if not t.stop or t.word in STATE_WORDS)
            if forms.get("yesno", 0.0) >= STATED_P
            else frozenset()
        )
        found = readings(walker, shapes, claims, asked, stated)
        found += nones(walker)
        found += withdrawn(walker, claims, asked, stated)
        found += intersections(shapes)
        type_words = tuple((q.words[p].word, q.words[p].stem) for p in sorted(q.type_positions))
        ranked_predicates = walker.ranked_predicates()
        best_relevance = ranked_predicates[0][0] if ranked_predicates else 0.0
        ctx = feats.Context(
            q,
            matcher,
            self.meaning,
            forms,
            anchors,
            multi,
            best_relevance,
            feats.wh_of(q),
            type_words,
            {h.name: h.said for h in hits if h.said},
            walker.slots,
            self.model.verdicts,
            self.model.kinds.probabilities(q.words) if self.model.kinds is not None else None,
            self.model.relations,
            tuple(p for _, p in ranked_predicates),
        )
        featurizer = feats.Featurizer(ctx)
        rows = [featurizer.row(c) for c in found]
        feats.compare(rows, found)
        alike = _LookAlikes(q, anchors)
        kept = [
            i for i, r in enumerate(rows) if not _needless(r) and not alike.passes_one(found[i])
        ]
        found, rows = [found[i] for i in kept], [rows[i] for i in kept]
        if found:
            scores = (
                self.model.ranker.predict(np.asarray(rows, dtype=np.float64))
                if self.model.ranker is not None
                else np.asarray([_prior(r) for r in rows])
            )
            for c, r, s in zip(found, rows, scores, strict=True):
                c.features = r
                c.score = float(s)
        ranked = sorted(found, key=_order)
        return Read(
            q,
            anchors,
            ranked,
            forms,
            len(hits),
            walker.store,
            _retracted(walker, matcher),
            slots=walker.slots,
        )

    def _forms_asked(self, forms: dict[str, float]) -> frozenset[str]:
        """The forms worth offering: those the form model gives a chance (all, without one)."""
        optional = ("count", "speaker", "earlier", "yesno")
        if self.model.forms is None:
            return frozenset(optional)
        return frozenset(f for f in optional if forms[f] >= FORM_GATE)

    def confidence(self, r: Read, i: int = 0) -> float:
        """How sure the answer of the ``i``-th reading is: the best the answering model
        says of any reading that gives that answer, each against the best reading with
        another answer. (Two readings often give one answer, "no: rejected" from a stated
        state and from a claim that another entity holds it; which of them the ranker puts
        first says nothing of whether the answer is right, so neither alone decides.)"""
        c = r.ranked[i]
        sure = self._sure(r, c)
        if _not_what_is_asked(r, c) is not None or _same_words(r, c) is not None:
            return min(sure, MISREAD_CAP)
        return sure

    def _sure(self, r: Read, c: Candidate) -> float:
        """What the answering model says of ``c``'s answer (see :meth:`confidence`)."""
        if self.model.confidence is None:
            return float(1.0 / (1.0 + np.exp(-c.score)))
        ranked = [(o.features, o.score, o.answer) for o in r.ranked]
        return self.model.confidence.best(answer_inputs(ranked, c.answer))

    def _without_aside(self, r: Read, i: int) -> Reading | None:
        """A list that is the answer but for the name the question sets aside ("apart
        from act 2, which acts need ladder 5?"): the list without it, as sure as the
        whole list. ``None`` unless the ``i``-th reading is such a list."""
        c = r.ranked[i]
        aside = _set_aside(r, c)
        if aside is None or c.form != "value" or c.shape.anchor.entity == aside:
            return None
        values = tuple(v for v in c.values if v != aside)
        if not values:
            return None
        evidence = tuple(f for f in c.evidence if aside not in (f.subject, f.object))
        return Reading(render_values(values), values, evidence, self._sure(r, c), c.name)

    def _with_middle(self, r: Read, i: int) -> Reading | None:
        """For a question that asks two things, the second of the first's answer ("which
        plough covers km 9, and who drives it?"): the ``i``-th reading's end and the
        entity its last fact starts from (the plough), both its answer, as sure as the
        reading; ``None`` unless it walks more than one fact to one value."""
        c = r.ranked[i]
        if c.form != "value" or len(c.shape.hops) < 2 or len(c.values) != 1:
            return None
        end = c.values[0]
        last = [f for f in c.evidence if end in (f.subject, f.object)]
        if len(last) != 1:
            return None
        middle = last[0].subject if last[0].object == end else last[0].object
        if middle == end or middle == c.shape.anchor.entity:
            return None
        values = (middle, end)
        return Reading(render_values(values), values, c.evidence, self.confidence(r, i), c.name)

    def _held_once(self, r: Read, i: int) -> Reading | None:
        """For a question whether a value ever held ("was Atlas ever REST?"), a "no" of the
        ``i``-th reading, which says it does not hold now, where the slot's history holds
        it: yes, until when, and what holds now; as sure as the reading (the history
        decides the verdict, the reading which slot and value). ``None`` otherwise."""
        c = r.ranked[i]
        if c.form != "yesno" or c.variant != "no" or c.claim is None:
            return None
        claimed = c.claim.entity
        held = sorted(
            (f for f in c.slot if claimed in (f.subject, f.object) and f.valid_to is not None),
            key=lambda f: f.seq,
        )
        if not held:
            return None
        until = _until(held[-1], c.slot)
        now = f"; now {render_values(c.values)}" if c.values else "; nothing holds now"
        evidence = tuple(dict.fromkeys([*held[-1:], *c.evidence]))
        return Reading(
            f"yes: {claimed} {until}{now}", (claimed,), evidence, self.confidence(r, i), c.name
        )

    def _came_off(self, r: Read, i: int) -> Reading | None:
        """For a question that asks what left a named thing ("which duty came off the
        okafor list?", "who left team falcon?"), where the ``i``-th reading gives the
        values that thing holds now: the values that ended in its slot instead, with
        when and what holds now; as sure as the reading (the reading decides which slot,
        its history which values). ``None`` otherwise, or when none ended (then
        :func:`_not_what_is_asked` says why the reading is not the answer)."""
        c = r.ranked[i]
        ended = _left_values(r, c)
        if not ended:
            return None
        hop = c.shape.hops[-1]
        values = tuple(dict.fromkeys(hop.end(f) for f in ended))
        when = _until(ended[0], _last_slot(r, c) or ()) if len(ended) == 1 else "no longer held"
        now = f"now {render_values(c.values)}" if c.values else "nothing holds now"
        evidence = tuple(dict.fromkeys([*ended, *c.evidence]))
        return Reading(
            f"{render_values(values)} ({when}; {now})",
            values,
            evidence,
            self.confidence(r, i),
            c.name,
        )

    def _said_by(self, r: Read, i: int, asker: str | None = None) -> Reading | None:
        """For a question that names who stated a value ("what database did the planner
        pick for Atlas?", of ``Agent_Planner``), the value that speaker stated last in
        the ``i``-th reading's slot, where another speaker's value has replaced it since:
        what the question asks is that speaker's value, not the one now (which the answer
        says too); as sure as the reading. ``None`` otherwise: a one-fact value reading
        only, and a speaker's word said outside the name of the entity asked about. The
        ``asker`` is named by "I" or "my" ("what database did I pick?")."""
        c = r.ranked[i]
        if c.form != "value" or len(c.shape.hops) != 1 or len(c.values) != 1:
            return None
        hop = c.shape.hops[0]
        node = c.shape.anchor.entity
        words = {t.stem for t in r.q.words if not t.stop and t.pos not in c.shape.anchor.positions}
        # (a speaker is asked for by a verb of choosing or saying: "Agent_Fencing" is not
        # named by "with the fence sorted, what is still open?")
        if words.isdisjoint(_DECIDED):
            return None
        # (the anchor's slot as the walk kept it, history included: no read of its own)
        slot = sorted(r.slots.get((node, hop), ()), key=lambda f: f.seq)
        now = [f for f in slot if f.valid_to is None]
        if len(now) != 1 or not now[-1].speaker:
            return None
        for f in reversed(slot):
            if f.valid_to is None or not f.speaker or f.speaker == now[-1].speaker:
                continue
            said = [st for st in name_stems(f.speaker) if st not in _SPEAKER_KINDS]
            mine = f.speaker == asker and first_person(r.q) and now[-1].speaker != asker
            named = bool(said) and set(said) <= words
            if mine or (named and not set(name_stems(now[-1].speaker)) <= words):
                value = hop.end(f)
                turn = f" at turn {f.turn_id}" if f.turn_id is not None else ""
                return Reading(
                    f"{value} (said by {f.speaker}{turn}; now {c.values[0]})",
                    (value,),
                    (f, now[-1]),
                    self.confidence(r, i),
                    c.name,
                )
        return None

    # -- answering -------------------------------------------------------------

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
        threshold = DEFAULT_MIN_CONFIDENCE if min_confidence is None else min_confidence
        r = _answerable(self.read(text, speaker=speaker, as_of=as_of, topic=topic))
        best = self._distinct(r, k)
        shown = [self._reading(r, i) for i in best]
        if shown and (trimmed := self._without_aside(r, best[0])) is not None:
            shown[0] = trimmed
        elif shown and asks_both(r.q) and (both := self._with_middle(r, best[0])) is not None:
            shown[0] = both
        elif shown and asks_ever(r.q) and (ever := self._held_once(r, best[0])) is not None:
            shown[0] = ever
        elif shown and (gone := self._came_off(r, best[0])) is not None:
            shown[0] = gone
        elif shown and as_of is None and (said := self._said_by(r, best[0], speaker)) is not None:
            shown[0] = said
        top = shown[0] if shown else None
        unsure = top is None or top.confidence < threshold
        around = self._around(r, as_of, shown, unsure=unsure) if k > 1 else ()
        if top is not None and top.confidence >= threshold:
            c = r.ranked[best[0]]
            context, sent = compose_context(text, shown, max_tokens, around)
            return Answer(
                text,
                top.answer,
                top.evidence,
                context,
                top.reading,
                top.values,
                top.confidence,
                "",
                tuple(shown),
                context_facts=sent,
                form="list" if c.form == "value" and len(top.values) > 1 else _FORM_NAMES[c.form],
            )
        reason = self._why_unknown(r, top, threshold, as_of)
        if topic is not None and not self.store.facts_of([topic], history=True, limit=1):
            # (the caller named the entity: that it is not in memory is the reason)
            reason = f"the topic {topic!r} is not in memory"
        context, sent = compose_context(text, shown, max_tokens, around)
        return Answer(
            text,
            UNKNOWN,
            (),
            context,
            f"unknown: {reason}",
            (),
            top.confidence if top is not None else 0.0,
            reason,
            tuple(shown),
            top,
            sent,
        )

    def trace(self, text: str, *, speaker: str | None = None, k: int = 10) -> Trace:
        """The anchors linked (best first) and the best ``k`` readings, before any threshold."""
        r = _answerable(self.read(text, speaker=speaker))
        shown = tuple(self._reading(r, i) for i in self._distinct(r, k))
        return Trace(text, tuple(a.entity for a in r.anchors), shown)

    def _distinct(self, r: Read, k: int) -> list[int]:
        """Indices of the best ``k`` readings with distinct answers."""
        seen: set[str] = set()
        out = []
        for i, c in enumerate(r.ranked):
            if c.answer in seen:
                continue
            seen.add(c.answer)
            out.append(i)
            if len(out) >= k:
                break
        return out

    def _reading(self, r: Read, i: int) -> Reading:
        c = r.ranked[i]
        return Reading(c.answer, c.values, c.evidence, self.confidence(r, i), c.name)

    def _around(
        self, r: Read, as_of: int | None, shown: Sequence[Reading], *, unsure: bool = False
    ) -> tuple[Fact, ...]:
        """What an LLM given several readings may still need when none is the right one,
        or to check the one that is: the facts that say why the question is about these
        entities, and what the best reading's slots held before.

        A question names its entity by more than its name ("the crate that came in damp":
        the fact stated as "crate 9 arrived damp"; "who had it before": the slot's earlier
        value), and a reading's evidence is only the path it walks. So the facts of the
        entities the question names and of those the readings pass through are read,
        current and past, and those that say a word of the question which the context
        does not show yet (in their names, relation or the words they were stated in) come
        first, the most such words first; then the best reading's slots' other facts,
        newest first (a list asked "now" is told by what left it). When ``unsure`` (no
        reading is sure enough to answer, and the answer is UNKNOWN), some more of the
        entities' facts, in the same order (see :data:`AROUND_UNSURE`)."""
        if not shown:
            return ()
        named = list(dict.fromkeys(a.entity for a in r.anchors if a.p >= 0.5))[:AROUND_NAMED]
        passed: list[str] = []
        for reading in shown:
            for f in reading.evidence:
                for e in (f.subject, f.object):
                    if e not in named and e not in passed:
                        passed.append(e)
        passed = passed[: max(0, AROUND_ENTITIES - len(named))]
        # Read as the walk reads the anchors' first hop and, when a slot's past may be
        # asked, a further hop's ends: a store that read the walk ahead serves what it holds.
        facts = r.store.facts_of(named, as_of=as_of, history=True, limit=FIRST_HOP_LIMIT)
        if passed:
            facts += r.store.facts_of(passed, as_of=as_of, history=True, limit=LATER_HOP_LIMIT)
        asked = {t.stem for t in r.q.words if not t.stop}
        # What the context shows of the question already: its lines' names and relations
        # (the words a fact was stated in are not sent).
        shown_stems = {
            st
            for reading in shown
            for f in reading.evidence
            for st in stems_of(f.subject, f.predicate, f.object)
        }
        sent = {f.seq for reading in shown for f in reading.evidence}
        pool = {f.seq: f for f in facts if f.seq not in sent}
        best_nodes = {e for f in shown[0].evidence for e in (f.subject, f.object)}

        def says(f: Fact) -> int:
            words = stems_of(f.subject, f.predicate, f.object)
            if f.text:
                words.update(said_stems(f.text))
            return len((words & asked) - shown_stems)

        telling = sorted(
            ((says(f), f) for f in pool.values()),
            key=lambda x: (
                -x[0],
                not ({x[1].subject, x[1].object} & best_nodes),
                x[1].valid_to is not None,
                -x[1].seq,
            ),
        )
        out = [f for n, f in telling[:AROUND_FACTS] if n > 0]
        taken = {f.seq for f in out}
        slots = {(f.subject, f.predicate) for f in shown[0].evidence}
        past = sorted(
            (f for f in pool.values() if (f.subject, f.predicate) in slots and f.seq not in taken),
            key=lambda f: -f.seq,
        )
        out += past[:AROUND_PAST]
        if unsure:
            taken = {f.seq for f in out}
            share = min(AROUND_UNSURE, len(pool) // AROUND_UNSURE_SHARE)
            out += [f for _, f in telling if f.seq not in taken][:share]
        return tuple(out)

    def _why_unknown(
        self, r: Read, top: Reading | None, threshold: float, as_of: int | None
    ) -> str:
        """The true reason in one line."""
        if r.ranked and (why := _not_what_is_asked(r, r.ranked[0])) is not None:
            return why
        if r.ranked and (why := _same_words(r, r.ranked[0])) is not None:
            return why
        strong = [a for a in r.anchors if a.p >= 0.5]
        best = r.ranked[0] if r.ranked else None
        last = (
            max(best.slot, key=lambda f: f.valid_to or 0)
            if best is not None and best.form == "none"
            else r.retracted
        )
        now = "now" if as_of is None else f"at #{as_of}"
        if last is not None:
            return (
                f"{last.subject} {last.predicate} {last.object} was retracted at "
                f"#{last.valid_to}; nothing holds {now}"
            )
        cause = _unclear_entity(r.anchors)
        other_way = r.turned
        # (a fact that would answer the question asked the other way round: say which)
        turned = (
            f"{other_way.subject} {other_way.predicate} {other_way.object} reads the other "
            "way round from the question"
            if other_way is not None
            else ""
        )
        if top is not None:
            # The entity-side cause first, when there is one: "not sure" alone hides
            # that the question's words fit two entities or none.
            return (
                f"not sure enough (confidence {_below(top.confidence, threshold)})"
                f"{': ' + cause if cause else ''}; best reading: {top.answer} [{top.reading}]"
                f"{'; ' + turned if turned else ''}"
            )
        if turned:
            return turned
        if not r.anchors:
            known = self.store.known_predicates()  # (on Neo4j: this question's read)
            if not (known if known is not None else self.store.predicates()):
                # (a journal or namespace misspelt opens a new, empty memory: say so, not
                # that this question's entity is missing)
                return "the memory is empty: nothing has been remembered in it"
            return "no entity of the question is in memory"
        if not strong:
            return cause
        entity = strong[0].entity
        facts = r.store.facts_of([entity], as_of=as_of, history=True, limit=50)
        facts = [f for f in facts if as_of is None or f.valid_from <= as_of]
        if not facts and as_of is not None:
            return f"nothing had been said of {entity} at #{as_of}"
        if facts and not any(f.valid_at(as_of) for f in facts):
            last = max(facts, key=lambda f: f.valid_to or 0)
            # (closed by a newer value of its slot, not withdrawn: say by which, as the
            # slot holds that value and "nothing holds" would say it holds none)
            slot = [
                f
                for f in r.store.facts_of([last.subject], as_of=as_of, history=True, limit=50)
                if f.subject == last.subject and f.predicate == last.predicate
            ]
            closer = closing_of(last, slot)
            if closer is not None:
                return (
                    f"{last.subject} {last.predicate} {last.object} was replaced by "
                    f"{closer.object} at #{last.valid_to}; no fact of {entity} holds {now}"
                )
            return (
                f"{last.subject} {last.predicate} {last.object} was retracted at "
                f"#{last.valid_to}; nothing holds {now}"
            )
        return f"{entity} is in memory, but no fact of it answers the question"


def _unclear_entity(anchors: Sequence[Anchor]) -> str:
    """Why no entity of the question is clear ("" when one is): none was found, the
    words fit several equally, or they fit one too loosely."""
    if not anchors:
        return "no entity of the question was found in memory"
    if any(a.p >= 0.5 for a in anchors):
        return ""
    names = ", ".join(a.entity for a in anchors[:3])
    if len(anchors) > 3:
        names += f" and {len(anchors) - 3} more"
    if len(anchors) > 1:
        return f"the words fit several entities ({names})"
    return f"no entity is named clearly enough (the words fit {names})"


#: A retracted relation is the reason for UNKNOWN when the question names it this well.
RETRACTED_RELEVANCE = 0.5


def _retracted(walker: Walker, matcher: Matcher) -> Fact | None:
    """The newest retracted fact among the named anchors' slots that hold nothing now
    (every value withdrawn, none replaced) and whose relation the question names."""
    found: list[Fact] = []
    named = {
        a.entity: a
        for a in walker.anchors
        if a.coverage >= 0.99 or (a.p >= 0.5 and a.coverage > 0)  # (named in full, or surely)
    }
    for (node, hop), slot in walker.slots.items():
        anchor = named.get(node)
        # (as of an earlier state, the slots hold only what had been said by then)
        if anchor is None or not slot or not hop.forward or any(map(walker.current, slot)):
            continue
        if replaced(slot):
            continue  # replaced, then withdrawn: not what a retraction of it says
        if matcher.relevance(hop.predicate, anchor.positions) >= RETRACTED_RELEVANCE:
            found.append(max(slot, key=lambda f: f.valid_to or 0))
    return max(found, key=lambda f: f.valid_to or 0, default=None)


_FORM_NAMES = {
    "value": "value",
    "none": "list",
    "count": "count",
    "yesno": "yes/no",
    "speaker": "speaker",
    "earlier": "earlier",
}


def _order(c: Candidate) -> tuple[object, ...]:
    return order(c.score, len(c.shape.hops), newest(c), c.answer, c.form)


def newest(c: Candidate) -> int:
    return max(map(_SEQ, c.evidence), default=0)  # (in C: a list's evidence is long)


_SEQ = attrgetter("seq")


#: A hop whose predicate the question's words name less than this is an unnamed hop.
UNNAMED = 0.35


def _needless(row: Sequence[float]) -> bool:
    """Whether a reading walks a hop no word names where a shorter walk from the same anchor
    reaches the same relation in the same form: then the shorter one says what was asked
    and the longer one adds a hop nobody asked for (never the answer, however it scores).
    """
    i = feats.INDEX
    if not row[i["shorter_same_end"]]:
        return False
    hops = int(row[i["hops"]])
    return all(
        max(row[i[f"lex_{h}"]], row[i[f"vec_{h}"]], row[i[f"assoc_{h}"]] / 3.0) < UNNAMED
        for h in range(1, hops)
    )


def _answerable(r: Read) -> Read:
    """``r`` without the readings that may be ranked but never given as an answer.

    (Applied when answering, not when reading: the ranker is fitted on what :meth:`Reader.read`
    returns, and keeping that as it was keeps a rebuild of the shipped model the same.)"""
    kept = []
    # (what the verb says, once per anchor and relation: a question's readings share them)
    sides: dict[tuple[frozenset[int], str, bool], bool | None] = {}
    named = {a.entity: a.positions for a in r.anchors if a.p >= CLAIM_SUBJECT_P and a.positions}
    for c in r.ranked:
        if _against_the_verb(r.q, c, sides, named):
            if r.turned is None:
                r.turned = c.evidence[0]  # (the best such: why an UNKNOWN may be one)
        elif not _no_to_its_own_words(c.features) and not _the_relation_not_its_saying(r.q, c):
            kept.append(c)
    r.ranked = kept
    return r


#: The forms whose answer is the far end of the walk (not a verdict, a speaker or a count
#: of a claim): a walk the wrong way from the entity names the wrong ends.
_WALKED_FORMS = frozenset({"value", "count", "earlier", "none"})
#: The forms that answer with what holds now (a value, a list's count, a verdict, "none").
_NOW_FORMS = frozenset({"value", "count", "yesno", "none"})
#: The forms that say something of a value the question names (a verdict on it, who
#: stated it) or, without one, of the walk ("who said Alice manages Bob?").
_CLAIMING_FORMS = frozenset({"yesno", "speaker"})


def _against_the_verb(
    q: Question,
    c: Candidate,
    sides: dict[tuple[frozenset[int], str, bool], bool | None],
    named: Mapping[str, frozenset[int]],
) -> bool:
    """Whether a reading walks its first relation from its entity the other way than the
    question's verb says (:mod:`~ctxneo.answering.direction`): "who manages Alice?" is not
    answered by whom Alice manages, nor by who said that Alice manages someone. A verdict
    or a claimed value's speaker is read the same way at both ends: "does Bob manage
    Alice?" is not answered yes by Alice managing Bob. ``sides`` keeps what was read per
    anchor and relation; ``named`` holds where the question names its entities."""
    if c.form in _WALKED_FORMS:
        return _turned(q, c.shape.anchor.positions, c.shape.hops[0], sides)
    if c.form not in _CLAIMING_FORMS:
        return False
    # (read only where the question says the verb as the predicate writes it: these
    # forms are new to the rule, and a noun named as a relation reads as no verb)
    if _turned(q, c.shape.anchor.positions, c.shape.hops[0], sides, strict=True):
        return True
    hop = c.shape.hops[-1]
    if c.claim is not None and not c.from_value:
        # (the claimed value is the far end of the slot's relation: its object when the
        # slot is walked forward from its subject)
        back = Hop(hop.predicate, not hop.forward)
        return _turned(q, c.claim.positions, back, sides, strict=True)
    if c.from_value and c.shape.ends:
        # (read from the value's side, the claim is the anchor, read above; the slot's
        # subject, when the question names it too, is read as well)
        at = named.get(c.shape.ends[0])
        back = Hop(hop.predicate, not hop.forward)
        return at is not None and _turned(q, at, back, sides, strict=True)
    return False


def _turned(
    q: Question,
    positions: frozenset[int],
    hop: Hop,
    sides: dict[tuple[frozenset[int], str, bool], bool | None],
    *,
    strict: bool = False,
) -> bool:
    """Whether the question's verb puts the entity at ``positions`` at the other end of
    ``hop``'s relation than the hop leaves it from (its subject when forward)."""
    key = (positions, hop.predicate, strict)
    if key not in sides:
        sides[key] = entity_is_subject(q, positions, hop.predicate, strict=strict)
    subject = sides[key]
    return subject is not None and subject != hop.forward


def _the_relation_not_its_saying(q: Question, c: Candidate) -> bool:
    """Whether a speaker reading answers who stated a relation that the question asks
    about by the relation's own verb, with no other verb of stating, choosing or changing: "who
    reports to Marco?" asks who holds REPORTS_TO Marco, not who said it (a verb of saying
    such as "report" is also a relation's name); "who decided Checkout depends on
    Payments?" asks who said it."""
    if c.form != "speaker":
        return False
    predicate = c.shape.hops[-1].predicate
    phrase = verb_phrase(predicate)
    if phrase is None:
        return False
    verb, passive, _ = phrase
    written = written_forms(predicate)
    named = c.shape.anchor.positions | (c.claim.positions if c.claim is not None else frozenset())
    rest = [t for t in q.words if t.pos not in named]
    # (the verb as the predicate writes it, or any form of a passive's: "pallets" in
    # "who changed the pallets to store C?" names PALLETS_TO as a noun does)
    says_it = any(t.stem == verb and (passive or t.word in written) for t in rest)
    return says_it and not any(t.stem in _SAYING and t.stem != verb for t in rest)


def _no_to_its_own_words(row: Sequence[float]) -> bool:
    """Whether a reading answers "no" to a state the question says in words the learned
    verdict table reads as that very value ("finished" of a status "completed"): the
    memory's own table says the question names the value, so "no" contradicts it, however
    the ranker scores it. (The "yes" reading of the same slot stays; when nothing else is
    sure, the answer is UNKNOWN.)"""
    i = feats.INDEX
    return bool(
        row[i["stated_verdict"]] and not row[i["stated_yes"]] and row[i["stated_assoc"]] > 0.0
    )


class _LookAlikes:
    """Whether a reading passes through an entity that stands where the question says
    a look-alike of its name ("line 12" of ``Line 2``, "crane 14" of ``Crane_4``).
    Linking never takes a look-alike for the name said
    (:func:`~.linking.says_a_look_alike`), and a reading that reaches one from another
    anchor ("is priya on line 12?" walked from Priya to the line she leads) is about
    another entity than the one asked, whatever it scores. Where the reading also passes
    through an anchor that stands on those words or on the mark beside them ("the films
    whose directors also directed Scream 3", walked from Scream 3 through Scream 4; "the
    bay pallet 7731's in", from the pallet to Bay 4B), the look-alike is only a neighbour
    of what was asked; an anchor there that the reading never meets ("who leads the gang
    on plot 117?" walked from the plot's site through plot 17) leaves it about another
    entity. A reading's values are not judged here: they are what the question asks or,
    for a yes/no question, what it states (see :func:`~.readings.readings`)."""

    def __init__(self, q: Question, anchors: Sequence[Anchor]) -> None:
        self._words = q.words
        self._at: dict[int, set[str]] = {}
        for a in anchors:
            for p in a.positions:
                self._at.setdefault(p, set()).add(a.entity)
        self._stems = frozenset(t.stem for t in q.words if not t.stop)
        self._seen: set[str] = set()
        #: Each look-alike met, with the anchors standing on or beside its words.
        self._alike: dict[str, frozenset[str]] = {}

    def passes_one(self, c: Candidate) -> bool:
        # (as sets: a list's evidence holds hundreds of facts, most met by earlier readings)
        met = {f.subject for f in c.evidence}
        met.update(f.object for f in c.evidence)
        nodes = met.difference(c.values)
        new = nodes - self._seen
        for node in new:
            if self._stems.isdisjoint(name_stems(node)):
                continue  # (a name the question says no word of is no look-alike of it)
            where = look_alike_positions(self._words, node)
            if where:
                beside = {p + d for p in where for d in (-1, 0, 1)}
                self._alike[node] = frozenset(
                    e for p in beside for e in self._at.get(p, ()) if e != node
                )
        self._seen |= new
        return any(self._alike[node].isdisjoint(met) for node in self._alike.keys() & nodes)


def _prior(row: Sequence[float]) -> float:
    """Before a ranker is fitted: a plain sum of the strongest signals."""
    i = feats.INDEX
    return (
        2.0 * row[i["anchor_p"]]
        + row[i["rel_sum"]] / max(1.0, row[i["hops"]])
        + 2.0 * row[i["p_form"]]
        - 0.3 * row[i["hops"]]
        - row[i["value_is_anchor"]]
    )


def compose_context(
    question: str,
    readings: Sequence[Reading],
    max_tokens: int | None,
    extra: Sequence[Fact] = (),
) -> tuple[str, tuple[Fact, ...]]:
    """What an LLM is sent, and the facts in it: the question, then each reading's
    evidence facts, best reading first, then ``extra`` facts, each fact once; whole
    facts are left out from the end to keep within ``max_tokens``, and a last line says
    how many when it fits after the facts kept (an LLM told nothing would read a fact
    left out as one memory does not hold; a fact is worth more to it than that line)."""
    first: dict[int, Fact] = {}
    for fact in [*(f for r in readings for f in r.evidence), *extra]:
        first.setdefault(fact.seq, fact)
    facts = list(first.values())
    lines = [f"Q: {question}", *(f.line() for f in facts)]
    if max_tokens is None or estimate_tokens("\n".join(lines)) <= max_tokens:
        return "\n".join(lines), tuple(facts)
    kept = 0
    while kept < len(facts) and estimate_tokens("\n".join(lines[: kept + 2])) <= max_tokens:
        kept += 1
    text = "\n".join(lines[: kept + 1])
    noted = f"{text}\n{_left_out(len(facts) - kept)}"
    return (noted if estimate_tokens(noted) <= max_tokens else text), tuple(facts[:kept])


def _left_out(n: int) -> str:
    return f"({n} more fact{'' if n == 1 else 's'} cut)"


#: Words of a speaker's name that say what it is, not which one ("Agent_Planner"): a
#: question that says them names no speaker by them.
_SPEAKER_KINDS = frozenset(name_stems("agent agents bot bots assistant ai llm user"))
#: Verbs that ask for what someone chose or said: with a speaker's word beside them, the
#: value that speaker stated.
_DECIDED = frozenset(
    name_stems(
        "pick picked choose chose chosen decide decided say said propose proposed suggest "
        "suggested recommend recommended select selected prefer preferred want wanted opt "
        "opted settle settled choice"
    )
)

#: Verbs of stating, choosing or changing something: "who *logged* the delay?" asks who
#: stated it.
_SAYING = _DECIDED | frozenset(
    name_stems(
        "state stated tell told report reported log logged note noted record recorded "
        "confirm confirmed mention mentioned claim claimed flag flagged announce announced "
        # (and of changing it: "who changed the arrival time?" asks who did)
        "change changed correct corrected update updated set move moved switch switched "
        "revise revised amend amended"
    )
)


#: The most a reading may be trusted when it answers another question than the one asked
#: (see :func:`_not_what_is_asked`: "is van 7 done loading?" read as whether it is
#: loading): below the default threshold, so it is withheld with that reason.
MISREAD_CAP = 0.5


def _asks_if_ended(q: Question, c: Candidate) -> bool:
    """Whether ``q`` asks if a value of ``c``'s slot has ended: a word of one of its
    values right after "done", "finished", "no longer"..., or "out of" before the word
    of a value placed "in" ("out of repair" of "in repair"). Not when a value of the slot
    says those words itself ("out of action" is a value, not the end of one)."""
    ended = ended_words(q)
    if not ended:
        return False
    values = {v: set(name_stems(v)) for f in c.slot for v in (f.subject, f.object)}
    words = {v: [t.word for t in tokens(v)] for v in values}
    for e in ended:
        target = q.words[e.pos].stem
        holding = [v for v, stems in values.items() if target in stems]
        if not holding or any(e.said <= stems for stems in values.values() if target in stems):
            continue
        if e.out_of and not any(words[v][:1] == ["in"] for v in holding):
            continue
        return True
    return False


def _below(value: float, threshold: float) -> str:
    """``value < threshold`` with as many decimals as it takes to show the difference
    ("0.666 < 0.667", never "0.67 < 0.67")."""
    for digits in range(2, 7):
        shown, limit = f"{value:.{digits}f}", f"{threshold:.{digits}f}"
        if shown != limit:
            break
    return f"{shown} < {limit}"


def _set_aside(r: Read, c: Candidate) -> str | None:
    """The entity the question sets aside ("other than Scene_12, what needs crane 2?")
    that reading ``c`` starts from or gives as its answer; ``None`` when it does not."""
    aside = set_aside(r.q)
    if not aside:
        return None
    # (a weak link is enough: the words set aside are not the question's subject)
    names = {a.entity for a in r.anchors if a.p >= 0.1 and a.positions and a.positions <= aside}
    if c.shape.anchor.entity in names:
        return c.shape.anchor.entity
    return next((v for v in c.values if v in names), None)


def _same_words(r: Read, c: Candidate) -> str | None:
    """Why ``c``'s answer cannot be told from another: an entity whose name is the same
    words as its anchor's ("North Dock" and "north_dock": one place spelt two ways by two
    agents, or two things) is read the same way, to another answer. No word of the
    question can say which of them it means, so neither answer is given as the answer;
    ``None`` when no such reading is ranked."""
    mine = c.shape.anchor.entity
    words = _name_words(mine)
    # (the anchors first: few, where the readings may be hundreds)
    alike = {a.entity for a in r.anchors if a.entity != mine and _name_words(a.entity) == words}
    if not alike:
        return None
    seen: set[str] = set()
    for o in r.ranked:  # (best first: each other entity's best reading of that shape)
        other = o.shape.anchor.entity
        if other not in alike or other in seen or o.shape.hops != c.shape.hops or o.form != c.form:
            continue
        seen.add(other)
        # (by values: "no: Bob since turn 3" and "since turn 7" agree)
        if set(o.values) != set(c.values) or o.variant != c.variant:
            return (
                f"{mine} and {other} are the same words, and read the same way they answer "
                f"differently: {c.answer} and {o.answer}"
            )
    return None


@lru_cache(maxsize=10_000)
def _name_words(name: str) -> tuple[str, ...]:
    return tuple(split_words(name))


def _until(fact: Fact, slot: Sequence[Fact]) -> str:
    """When a closed value of ``slot`` stopped holding: the turn of the value that
    replaced it, or the write that withdrew it (no turn said a retraction)."""
    closing = closing_of(fact, slot)
    if closing is None:
        return f"until withdrawn at #{fact.valid_to}"
    if closing.turn_id is not None:
        return f"until turn {closing.turn_id}"
    return f"until #{fact.valid_to}"


#: Stems of verbs of leaving: a relation named by one of them ("LEFT_BY", "REMOVED_FROM")
#: is what a question with that verb asks for, not a slot the answer left.
_LEAVING_STEMS = frozenset(
    "leav left remov delet drop took taken pull struck cross knock came come move longer "
    "cut clear wipe scrub strip withdraw withdrawn withdrew discharg unload releas exclud".split()
)


def _last_slot(r: Read, c: Candidate) -> list[Fact] | None:
    """The slot ``c``'s answer is read from (its last hop, from the one entity every path
    of ``c`` reaches it through), as the walk kept it, closed facts too, oldest first;
    ``None`` when the paths reach it through several entities or the walk kept no such
    slot."""
    node = _slot_node(c)
    slot = None if node is None else r.slots.get((node, c.shape.hops[-1]))
    return None if slot is None else sorted(slot, key=attrgetter("seq"))


def _slot_node(c: Candidate) -> str | None:
    """The one entity every path of ``c`` reads its answer from (its last hop's near
    end), or ``None`` when the paths reach the answer through several."""
    hop = c.shape.hops[-1]
    nodes = {p[-1].subject if hop.forward else p[-1].object for p in c.shape.paths}
    return nodes.pop() if len(nodes) == 1 else None


def _left_values(r: Read, c: Candidate) -> tuple[Fact, ...] | None:
    """For a question that asks what left a thing it names (see
    :func:`~ctxneo.answering.question.left_from`), where ``c`` reads the values that
    thing holds now (from it, or through one other entity: "which duty came off the
    okafor list?" of the duties of the job whose homeowner is Okafor): the facts of the
    values that ended in that slot (of a slot one value replaced another in, the one
    replaced last), newest first; empty when none ended. ``None`` when the question does
    not ask that of ``c``'s slot, or a relation of the walk is named by a verb of leaving
    itself ("who left the note?" of ``Note LEFT_BY Ana``)."""
    if c.form != "value" or not c.shape.paths:
        return None
    left = left_from(r.q)
    named = c.shape.anchor.positions
    if not left:
        return None
    if not named or not named <= left:
        # A walk from elsewhere that reads the slot of an entity named there is read so
        # too: "which pallet was pulled out of bay 77?" of the pallets of Bay_77.
        node = _slot_node(c)
        if not any(
            a.entity == node and a.p >= 0.5 and a.positions and a.positions <= left
            for a in r.anchors
        ):
            return None
    if any(not _LEAVING_STEMS.isdisjoint(name_stems(h.predicate)) for h in c.shape.hops):
        return None
    slot = _last_slot(r, c)
    if slot is None:
        return None
    hop = c.shape.hops[-1]
    now = {hop.end(f) for f in slot if f.valid_to is None}
    ended = sorted(
        (f for f in slot if f.valid_to is not None and hop.end(f) not in now),
        key=lambda f: (f.valid_to or 0, f.seq),
        reverse=True,
    )
    if len(now) <= 1 and replaced(slot):
        ended = ended[:1]  # one value at a time: the one that left last
    return tuple(ended)


#: Words that, right before a relation's own words, name another role of that kind: the
#: assistant site manager is not the site manager, nor the deputy lead the lead.
_OTHER_ROLE = frozenset(
    "assistant deputy vice acting interim associate backup relief standby alternate "
    "trainee apprentice junior second 2nd third 3rd".split()
)


def _words_of(predicate: str) -> str:
    return " ".join(split_words(predicate))


def _named_positions(r: Read, c: Candidate) -> set[int]:
    """The question positions names stand in: ``c``'s anchor and claim, and every anchor
    named surely (what a rule reading the question's other words leaves out)."""
    named = set(c.shape.anchor.positions) | (set(c.claim.positions) if c.claim else set())
    for a in r.anchors:
        if a.p >= 0.5:
            named |= a.positions
    return named


def _another_role(r: Read, c: Candidate) -> tuple[str, str] | None:
    """A word the question says right before the words of a relation ``c`` walks, that
    names another role than the relation does ("who's the assistant site manager on
    block B?" of ``SITE_MANAGER``; or right after them, the relation's holder said as
    an owner: "the site manager's deputy"), and that relation; ``None`` when there is
    none. (A relation whose name says the word, ``ASSISTANT_MANAGER``, is that role.)"""
    if c.form == "speaker":
        return None  # (who said it: the role is in what was said, not in the answer's relation)
    words = r.q.words
    named = _named_positions(r, c)
    for hop in c.shape.hops:
        own = set(name_stems(hop.predicate))
        said = [t.pos for t in words if not t.stop and t.stem in own and t.pos not in named]
        if not said or min(said) == 0:
            continue
        t = words[min(said) - 1]
        if t.word in _OTHER_ROLE and t.stem not in own and t.pos not in named:
            return t.word, hop.predicate
        # "the site lead's deputy": a role of the relation's holder is another role too
        end = words[max(said)]
        if end.possessive and end.pos + 1 < len(words):
            t = words[end.pos + 1]
            if t.word in _OTHER_ROLE and t.stem not in own and t.pos not in named:
                return t.word, hop.predicate
    return None


_OTHER_WORD = LINK_FEATURES.index("other_word")


def _number_unsaid(r: Read, c: Candidate) -> tuple[str, Fact] | None:
    """A number the question says outside the names it names ("who reported the *40%*
    fill on tank 2?"), and the fact a speaker reading of ``c`` rests on, when that
    fact does not say it (``Tank_2 STATUS filling``); ``None`` otherwise. Who stated
    a value is asked of the statement the question describes, and a number it gives
    is part of that description: a fact without it is another statement. (A word that
    starts with letters is a name's, "the XC90", not a number said.)"""
    if c.form != "speaker" or not c.evidence:
        return None
    covered = _named_positions(r, c)
    stated = next((f for f in c.evidence if f.speaker in c.values), c.evidence[0])
    said = {int(n) for n in _DIGITS.findall(f"{stated.subject} {stated.object}")}
    words = r.q.words
    for t in words[1:]:
        before = words[t.pos - 1]
        if before.word in _CLAUSE:
            break  # "while the 12 was off": what else held then, not what was stated
        if t.pos in covered or t.pos in r.q.masked or not t.word[:1].isdigit():
            continue
        # A number said as a value follows a function word ("to 14", "the 40%"); after
        # a noun it names a thing ("lane 1"), in a word that starts with letters too
        # ("XC90"); after "at" it is a time, after "not" a value denied.
        if not before.stop or before.group == t.group or before.word in _NOT_A_VALUE:
            continue
        if any(int(n) not in said for n in _DIGITS.findall(t.word)):
            return t.written, stated
    return None


_DIGITS = re.compile(r"\d+")
#: Words before a number that make it no value stated: a time ("logged at 1130"), a
#: value denied ("12, not 21").
_NOT_A_VALUE = frozenset("at around about by not".split())
#: Words that open a clause of circumstances ("while the 12 was off", "before 9"):
#: what follows is not the statement asked.
_CLAUSE = frozenset("while when whilst because as since after before until till if".split())


def _another_surname(r: Read, c: Candidate) -> str | None:
    """The words a question names a person by, when they are the first name of ``c``'s
    anchor (of two words) and another surname ("where's rob baillie posted?" of ``Rob
    Kerr``): a person memory holds nothing of, who shares a first name with one it does;
    ``None`` when it does not. (Linking weighs any word beside a name that may take the
    place of its own, :func:`~ctxneo.answering.linking._other_word`; a person's name of
    two words, the first said and the second replaced, is the case that says another
    person. After a capitalised first word, a word in lower case is a kind: "the
    Kestrel invoice".)"""
    a = c.shape.anchor
    if len(a.features) <= _OTHER_WORD or not a.features[_OTHER_WORD] or len(a.positions) != 1:
        return None
    parts = split_words(a.entity)
    if len(parts) != 2 or not all(w.isalpha() and len(w) >= 3 for w in parts):
        return None
    words = r.q.words
    (at,) = a.positions
    if at + 1 >= len(words) or words[at].stem != name_stems(a.entity)[0]:
        return None
    other = words[at + 1]
    if other.stop or not other.word.isalpha() or words[at].possessive:
        return None
    if words[at].written[:1].isupper() and not other.written[:1].isupper():
        return None  # "the Ardcairn barrique": a capitalised name, then a word of a kind
    return f"{words[at].written} {other.written}"


def _not_what_is_asked(r: Read, c: Candidate) -> str | None:
    """Why reading ``c`` answers another question than ``r.q`` asks, whatever the ranker
    says of it (the reason an answer is then withheld); ``None`` when it does not.

    Each is a way of asking that the readings cannot answer, only mistake for one
    they can: whether a value has *ended*, where a verdict says whether it holds; what
    was *said* of a thing, where an earlier value reads the tense of the saying as the
    value's; a count of *events*, where a count reading counts values held now; a name
    *set aside*, where a reading starts from it or gives it; what *left* a thing, where
    the values it holds now are read and none has ended (see :meth:`Reader._came_off`);
    *another role* than a relation's ("the deputy lead" of ``LEAD``, "the lead's
    deputy"); who stated a *number* a fact does not say; *another person*
    than the anchor, by a first name and another surname ("rob baillie" of ``Rob Kerr``)."""
    if c.form == "yesno" and _asks_if_ended(r.q, c):
        now = [f for f in c.slot if f.valid_to is None]
        held = (
            f"{now[-1].subject} {now[-1].predicate}: {render_values([f.object for f in now])}"
            if now
            else "nothing holds now"
        )
        return (
            'the question asks whether a value has ended ("done", "no longer", "out of"), '
            "which a yes or no about whether it holds would answer the wrong way round; "
            f"now {held}"
        )
    if (gone := _left_values(r, c)) is not None and not gone:
        return (
            "the question asks what left "
            f"{c.shape.anchor.entity} (came off, removed, no longer in it), which the values "
            f"it holds now answer the wrong way round; none of them has ended: now {c.answer}"
        )
    if (unsaid := _number_unsaid(r, c)) is not None:
        number, fact = unsaid
        return (
            f'the question asks who stated something with "{number}" in it, and the fact '
            f"{fact.subject} {fact.predicate}: {fact.object} does not say it; the best "
            f"reading is {c.answer}"
        )
    if (person := _another_surname(r, c)) is not None:
        return (
            f'the question names "{person}", and memory holds {c.shape.anchor.entity}, who '
            "shares the first name: another person, of whom nothing is held"
        )
    if (role := _another_role(r, c)) is not None:
        return (
            f"the question asks for the {role[0]} {_words_of(role[1])}, another role than "
            f"the relation {role[1]} records; the best reading is {c.answer}"
        )
    if c.form in _NOW_FORMS and (turn := names_a_turn(r.q)) is not None:
        return (
            f'the question asks about a past turn ("{turn}"), which memory does not read '
            f"from a question's words; what holds now is {c.answer} (pass as_of to ask as "
            "of a write's #, or ask what it was before)"
        )
    if c.form == "earlier" and reports_speech(r.q):
        return (
            'the question asks what was said of it ("did you say"), which is its value '
            "now unless it asks for an earlier one; the best reading is an earlier value: "
            f"{c.answer}"
        )
    if c.form == "count" and counts_events(r.q):
        return (
            'the question counts events ("how many times"); memory counts the values a '
            f"relation holds now, not how often it changed: best reading {c.answer}"
        )
    aside = _set_aside(r, c)
    if aside is not None:
        return (
            f'the question sets {aside} aside ("other than", "besides"), and the best '
            f"reading is of it or gives it: {c.answer}"
        )
    return None
