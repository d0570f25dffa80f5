"""Stage 4a, what the ranker sees of a reading: measured, named features.

Every hand rule of the answerers before this one is here as a number the ranker
weighs, not a decision: how surely the anchor is named, how well each hop's
predicate is named (by stem, by word vectors, by learned association), how much
of the question the reading leaves unexplained, whether the values are of the
kind the question word asks for, what form the question asks for, whether a
history or a yes/no reading finds the value the question names. The last few
features compare a reading with its rivals for the same question.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise
from operator import attrgetter

from ctxneo.answering.forms import FORMS
from ctxneo.answering.linking import LINK_FEATURES, Anchor
from ctxneo.answering.match import Association, Matcher, lexical, predicate_stems
from ctxneo.answering.question import Question
from ctxneo.answering.readings import Candidate, Hop, Shape
from ctxneo.answering.relations import (
    Asked,
    RelationModel,
    predicate_words,
    question_words,
    sigmoid,
)
from ctxneo.answering.values import has_shape, only_a_measure, person_like
from ctxneo.meaning import Meaning
from ctxneo.model import Fact
from ctxneo.text import is_identifier, name_stems, said_stems

CANDIDATE_FORMS = ("value", "count", "none", "earlier", "speaker", "yesno")
WH = ("who", "whom", "whose", "what", "which", "where", "when", "how", "howmany", "howmuch")

#: What a reading's values look like (:func:`value_kind`, in this order).
_VALUE_FEATURES = (
    "v_date",
    "v_amount",
    "v_duration",
    "v_measure",
    "v_person",
    "v_identifier",
    "v_digit",
    "v_lower",
    "v_named",
)

FEATURES: tuple[str, ...] = (
    # the anchor
    "anchor_p",
    "anchor_coverage",
    "anchor_exact",
    "anchor_first_person",
    "strong_anchors",
    "unknown_names",
    "strong_unused",
    "best_anchor_gap",
    "described",
    "described_subjects",
    "from_value",
    # the form
    *(f"form_{f}" for f in CANDIDATE_FORMS),
    "p_form",
    *(f"p_{f}" for f in FORMS),
    # the shape
    "hops",
    "back_hops",
    "last_back",
    "values",
    "paths",
    "through_anchor",
    "intersection",
    "value_is_anchor",
    "last_multi",
    # the relation
    "lex_1",
    "vec_1",
    "assoc_1",
    "lex_2",
    "vec_2",
    "assoc_2",
    "lex_3",
    "vec_3",
    "assoc_3",
    "rel_min",
    "rel_sum",
    "rel_last",
    "last_head",
    "last_share",
    "explained",
    "unexplained",
    "wh_assoc",
    # the relation, as the fitted relation model reads the question (P, per hop)
    "learned_1",
    "learned_2",
    "learned_3",
    "learned_room",
    # the values
    *_VALUE_FEATURES,
    "type_value",
    "type_predicate",
    "type_said",
    "kind_fit",
    "kind_sure",
    *(f"wh_{w}" for w in WH),
    "wh_none",
    # history and yes/no
    "cue_first",
    "cue_previous",
    "cue_all",
    "cue_sibling",
    "sibling_walk",
    "variant_first",
    "variant_previous",
    "variant_before",
    "precedes_named",
    "onward",
    "slot_len",
    "claim_p",
    "claim_current",
    "claim_past",
    "claim_absent",
    "claim_kind",
    "claim_elsewhere",
    "speaker_claimed",
    "stated_verdict",
    "stated_yes",
    "stated_alike",
    "stated_assoc",
    "stated_meaning",
    # against the rivals, and against the memory
    "rel_room",
    "newest",
    "rel_gap",
    "rel_rank",
    "shorter_same_end",
    "rel_last_gap",
    # the words the evidence was said in
    "said_none",
    "said_rel",
    "said_rel_gap",
    "said_all",
    "said_all_gap",
)
INDEX = {name: i for i, name in enumerate(FEATURES)}
_VALUE_INDEX = tuple(INDEX[name] for name in _VALUE_FEATURES)
# The shape's features' indices (see Featurizer._shape).
_ANCHOR_P = INDEX["anchor_p"]
_ANCHOR_COVERAGE = INDEX["anchor_coverage"]
_ANCHOR_EXACT = INDEX["anchor_exact"]
_ANCHOR_FIRST_PERSON = INDEX["anchor_first_person"]
_DESCRIBED = INDEX["described"]
_DESCRIBED_SUBJECTS = INDEX["described_subjects"]
_HOPS = INDEX["hops"]
_BACK_HOPS = INDEX["back_hops"]
_LAST_BACK = INDEX["last_back"]
_PATHS = INDEX["paths"]
_THROUGH_ANCHOR = INDEX["through_anchor"]
_LAST_MULTI = INDEX["last_multi"]
_SIBLING_WALK = INDEX["sibling_walk"]
_HOP_INDEX = tuple((INDEX[f"lex_{h}"], INDEX[f"vec_{h}"], INDEX[f"assoc_{h}"]) for h in (1, 2, 3))
_LAST_HEAD = INDEX["last_head"]
_LAST_SHARE = INDEX["last_share"]
_REL_MIN = INDEX["rel_min"]
_REL_SUM = INDEX["rel_sum"]
_REL_LAST = INDEX["rel_last"]
_EXPLAINED = INDEX["explained"]
_UNEXPLAINED = INDEX["unexplained"]
_WH_ASSOC = INDEX["wh_assoc"]
_LEARNED = (INDEX["learned_1"], INDEX["learned_2"], INDEX["learned_3"])
_LEARNED_ROOM = INDEX["learned_room"]
_TYPE_PREDICATE = INDEX["type_predicate"]
_REL_ROOM = INDEX["rel_room"]


@dataclass(slots=True)
class Context:
    """What every reading of one question shares."""

    q: Question
    matcher: Matcher
    meaning: Meaning
    forms: dict[str, float]
    anchors: Sequence[Anchor]
    multi: frozenset[str]
    #: How well the question names the best-named predicate anywhere in memory.
    best_relevance: float
    wh: str | None
    type_words: tuple[tuple[str, str], ...]
    #: The question's stems found in the words each entity's facts were said in.
    said: dict[str, frozenset[str]]
    #: The anchors' slots as the walk read them, current and closed facts: (node, hop) ->
    #: facts. (What a claimed value is, or was, the value of.)
    slots: Mapping[tuple[str, Hop], Sequence[Fact]] = field(default_factory=dict)
    #: The learned (question word, value word) table of yes/no verdicts, when fitted.
    verdicts: Association | None = None
    #: P(the kind of value asked for), over :data:`ctxneo.answering.forms.KINDS`.
    kinds: tuple[float, ...] | None = None
    #: The fitted relation model, when there is one, and the memory's predicates.
    relations: RelationModel | None = None
    predicates: Sequence[str] = ()


def wh_of(q: Question) -> str | None:
    if q.wh is None:
        return None
    w = q.wh.word
    if w == "how" and q.wh.pos + 1 < len(q.words):
        nxt = q.words[q.wh.pos + 1].word
        if nxt in ("many", "much"):
            return f"how{nxt}"
    return w


def _hop_scores(ctx: Context, predicate: str, excluded: frozenset[int]) -> tuple[float, ...]:
    lex, vec, assoc = ctx.matcher.scores(predicate)
    best_lex = max((v for p, v in lex.items() if p not in excluded), default=0.0)
    best_vec = max((v for p, v in vec.items() if p not in excluded), default=0.0)
    best_assoc = max((v for p, v in assoc.items() if p not in excluded), default=0.0)
    return best_lex, best_vec, best_assoc


class Featurizer:
    """Feature rows for the readings of one question; what readings share (the question,
    a shape, a value) is computed once."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        q = ctx.q
        self.strong = [x for x in ctx.anchors if x.p >= 0.5]
        # (entities the question names by their names: an entity found only by the words
        # its facts were said in may well be the answer, whose fact those words stated)
        self.by_name = [x for x in self.strong if x.coverage > 0]
        self.named = {x.entity for x in self.by_name}
        # Names the question says as what it is about: not those that take in the "which
        # X" noun ("which *team* owned payments" may be answered by Payments_Team).
        self.subjects = {x.entity for x in self.by_name if not x.positions & q.type_positions}
        self.best_p = ctx.anchors[0].p if ctx.anchors else 0.0
        self.qstems = frozenset(t.stem for t in q.words if not t.stop)
        base = [0.0] * len(FEATURES)
        base[INDEX["strong_anchors"]] = float(len(self.strong))
        # Words written as names are ("Zeppelin", "INC-77") that no entity's name covers:
        # the question is about something the memory does not know.
        covered = {p for x in ctx.anchors if x.p >= 0.1 for p in x.positions}
        base[INDEX["unknown_names"]] = float(
            sum(1 for t in q.words if t.pos not in covered and not t.stop and t.name_like)
        )
        for name in FORMS:
            base[INDEX[f"p_{name}"]] = ctx.forms.get(name, 0.0)
        if ctx.wh is None:
            base[INDEX["wh_none"]] = 1.0
        elif ctx.wh in WH:
            base[INDEX[f"wh_{ctx.wh}"]] = 1.0
        base[INDEX["cue_first"]] = float(q.history == "first")
        base[INDEX["cue_previous"]] = float(q.history == "previous")
        base[INDEX["cue_all"]] = float(q.history == "all")
        # "the *same* director as", "*share* actors with", "*co*-starred", "which *other*"
        base[INDEX["cue_sibling"]] = float(q.sibling)
        self.base = base
        self._shapes: dict[tuple[object, ...], list[tuple[int, float]]] = {}
        self._through: dict[int, set[str]] = {}
        self._said: dict[tuple[int, ...], frozenset[str]] = {}
        self._shown: dict[tuple[int, ...], set[str]] = {}
        # Per name and per hop: what many readings of one question share.
        self._like: dict[str, float] = {}
        self._hop: dict[tuple[str, frozenset[int]], tuple[float, ...]] = {}
        self._kinds = frozenset(ts for _, ts in ctx.type_words)
        self._alike: dict[tuple[object, ...], tuple[float, float]] = {}
        self._heads: dict[tuple[str, frozenset[int]], tuple[float, float] | None] = {}
        self._by_values: dict[tuple[str, ...], list[tuple[int, float]]] = {}
        self._asked: dict[frozenset[int], Asked | None] = {}
        self._learned: dict[tuple[str, frozenset[int]], float] = {}
        self._learned_best: dict[frozenset[int], float] = {}
        self._outside_of: dict[frozenset[int], tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._said_all: dict[tuple[tuple[int, ...], frozenset[int]], float] = {}
        self._fits: dict[tuple[str, ...], float] = {}
        self._kind_sure = max(ctx.kinds) if ctx.kinds is not None else 0.0

    def row(self, c: Candidate) -> list[float]:
        """The feature row of one reading (see :data:`FEATURES`); rival features are
        filled in by :func:`compare`."""
        ctx = self.ctx
        f = list(self.base)
        s = c.shape
        a = s.anchor
        excluded = a.positions | (c.claim.positions if c.claim is not None else frozenset())
        if c.partner is not None:
            excluded |= c.partner.anchor.positions
        key = (id(s), excluded)
        shared = self._shapes.get(key)
        if shared is None:
            shared = self._shapes[key] = self._shape(c, excluded)
        for i, v in shared:
            f[i] = v
        # The entities named that the reading does not use (its anchor, values, claim and
        # partner): tested against the values as they are, not a set made of a list's
        # hundreds of values for the one or two entities named.
        unused = [
            x
            for x in self.by_name
            if x.entity != a.entity
            and x.entity not in c.values
            and (c.claim is None or x.entity != c.claim.entity)
            and (c.partner is None or x.entity != c.partner.anchor.entity)
        ]
        if unused:  # (the nodes a shape passes through: read only when they can matter)
            passed = self._passed(s)
            f[INDEX["strong_unused"]] = float(sum(1 for x in unused if x.entity not in passed))
        f[INDEX["best_anchor_gap"]] = self.best_p - a.p
        f[INDEX["from_value"]] = float(c.from_value)
        f[INDEX[f"form_{c.form}"]] = 1.0
        f[INDEX["p_form"]] = ctx.forms.get("value" if c.form == "none" else c.form, 0.0)
        f[INDEX["values"]] = math.log1p(len(c.values))
        f[INDEX["intersection"]] = float(c.partner is not None)
        f[INDEX["value_is_anchor"]] = float(
            c.form != "yesno" and not self.subjects.isdisjoint(c.values)
        )
        if c.form not in ("speaker", "none", "count") and c.values:
            first = c.values[:20]
            for i, v in self._valued(first):
                f[i] = v
            if ctx.kinds is not None and c.form in _KIND_FORMS:
                # How likely the question asks for a value of this reading's values' kind
                # (of the forms the kind model was fitted on: a verdict's kind says nothing).
                fit = self._fits.get(first)
                if fit is None:
                    kinds = ctx.kinds
                    # (the same sum, in the same order, of the same floats)
                    total = sum(map(kinds.__getitem__, map(kind_of, first)))
                    fit = self._fits[first] = total / min(20, len(c.values))
                f[INDEX["kind_fit"]] = fit
                f[INDEX["kind_sure"]] = self._kind_sure
        if c.form == "earlier":
            f[INDEX[f"variant_{c.variant}"]] = 1.0
            # The value right after the answer is one the question names ("before it
            # went urgent"): the answer is the value before that one.
            after = [x for x in c.slot if x.seq > c.evidence[0].seq][:1]
            if after:
                nxt = s.hops[0 if c.onward else -1].end(after[0])
                f[INDEX["precedes_named"]] = max(
                    (x.p for x in ctx.anchors if x.entity == nxt), default=0.0
                )
        f[INDEX["onward"]] = float(c.onward)
        f[INDEX["slot_len"]] = math.log1p(len(c.slot))
        if c.claim is not None:
            f[INDEX["claim_p"]] = c.claim.p
            hop = s.hops[0 if c.onward else -1]  # (the slot's hop)
            slot_ends = {hop.end(x) for x in c.slot}
            now = set(s.ends)
            claimed = c.claim.entity
            f[INDEX["claim_current"]] = float(claimed in now)
            f[INDEX["claim_past"]] = float(claimed in slot_ends and claimed not in now)
            f[INDEX["claim_absent"]] = float(claimed not in slot_ends)
            # A "no" is only as good as the claim being a value this relation could hold:
            # "is Okonkwo running kiln 3?" answered by who runs the kiln (a person, as
            # Okonkwo), not by its firing temperature or its fuel.
            kind = value_kind(claimed)[:_KINDS]
            ends = sorted(slot_ends)[:20]
            if ends:
                f[INDEX["claim_kind"]] = sum(
                    1 for e in ends if value_kind(e)[:_KINDS] == kind
                ) / len(ends)
            # Surer still when the claim is, or was, this relation's value for another
            # subject: "is PR-12 approved?" answered "no: rejected" where another request's
            # approval is "approved" (a value the relation takes, not a word for another).
            back = Hop(hop.predicate, not hop.forward)
            own = {back.end(x) for x in c.slot}
            f[INDEX["claim_elsewhere"]] = float(
                any(back.end(x) not in own for x in ctx.slots.get((claimed, back), ()))
            )
        f[INDEX["speaker_claimed"]] = float(c.form == "speaker" and c.variant == "claimed")
        if c.stated:
            f[INDEX["stated_verdict"]] = 1.0
            f[INDEX["stated_yes"]] = float(c.variant == "yes")
            f[INDEX["stated_meaning"]] = float(c.alike)
            if c.values:
                alike, assoc = self._stated_alike(excluded, s.hops[-1].predicate, c.values[:5])
                f[INDEX["stated_alike"]] = alike
                f[INDEX["stated_assoc"]] = assoc
        self._said_features(f, c, excluded)
        return f

    def _said_features(self, f: list[float], c: Candidate, excluded: frozenset[int]) -> None:
        """How much of the question is in what was said when the evidence was stated: a
        reading whose facts were said in the question's words is likelier the one asked
        (what a keyword search of the transcript would find), whatever the predicates
        are named."""
        evidence = c.evidence[:MAX_SAID_FACTS]
        key = tuple(map(_SEQ, evidence))
        said = self._said.get(key)
        if said is None:
            said = self._said[key] = frozenset(
                st for x in evidence if x.text for st in said_stems(x.text)
            )
        # Every content word of the question outside the anchor's name, found in what the
        # evidence shows or was said in (its names, relations and stated words).
        rest, relation = self._outside(excluded)
        if rest:
            found = self._said_all.get((key, excluded))
            if found is None:
                shown = self._shown.get(key)
                if shown is None:
                    # (the stems of the facts' names, added straight from the cached
                    # tuples: a set of each fact's first was a tenth of the features)
                    shown = set(said)
                    for x in evidence:
                        shown.update(
                            name_stems(x.subject), name_stems(x.predicate), name_stems(x.object)
                        )
                    self._shown[key] = shown
                found = self._said_all[(key, excluded)] = sum(
                    1 for st in rest if st in shown
                ) / len(rest)
            f[INDEX["said_all"]] = found
        else:
            f[INDEX["said_all"]] = 1.0
        if not said:
            f[INDEX["said_none"]] = 1.0
            return
        if relation:
            f[INDEX["said_rel"]] = sum(1 for st in relation if st in said) / len(relation)

    def _outside(self, excluded: frozenset[int]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The stems of the question's content words outside ``excluded`` positions, and of
        its relation words among them (per question and positions: readings share them)."""
        found = self._outside_of.get(excluded)
        if found is None:
            words = self.ctx.q.words
            rest = tuple(t.stem for t in words if not t.stop and t.pos not in excluded)
            relation = tuple(
                words[p].stem
                for p in self.ctx.matcher.positions
                if p not in excluded and not words[p].stop
            )
            found = self._outside_of[excluded] = (rest, relation)
        return found

    def _stated_alike(
        self, excluded: frozenset[int], predicate: str, values: Sequence[str]
    ) -> tuple[float, float]:
        """How alike the words a yes/no question states are to a slot's values: the best
        cosine of their word vectors, and the best learned verdict weight (positive: the
        corpus's questions said that value in those words; negative: they asked of
        another value in them). The stated words are the question's content words that
        neither name the entities read nor say the relation's words."""
        key = (excluded, predicate, tuple(values))
        found = self._alike.get(key)
        if found is None:
            ctx = self.ctx
            words = ctx.matcher.stated_words(excluded | ctx.matcher.names(predicate))
            vw = [(w, st) for v in values for w, st in predicate_stems(v)]
            alike = max(
                (ctx.meaning.similarity(t.word, w) for t in words for w, _ in vw), default=0.0
            )
            assoc = 0.0
            if ctx.verdicts is not None:
                weights = [ctx.verdicts.weight(t.stem, st) for t in words for _, st in vw]
                assoc = max(weights, key=abs, default=0.0)
            found = self._alike[key] = (alike, assoc)
        return found

    def _passed(self, s: Shape) -> set[str]:
        found = self._through.get(id(s))
        if found is None:
            # (a one-hop walk passes through nothing between its anchor and its end)
            found = self._through[id(s)] = (
                set()
                if len(s.hops) == 1
                else {n for i in range(min(len(s.paths), 20)) for n in s.nodes(i)[1:-1]}
            )
        return found

    def _shape(self, c: Candidate, excluded: frozenset[int]) -> list[tuple[int, float]]:
        """The features a shape gives every reading of it (with these words excluded), as
        (index, value) pairs (written straight to their indices: a dict of names turned
        into indices cost a fifth of this)."""
        ctx = self.ctx
        s = c.shape
        a = s.anchor
        hops = s.hops
        last = hops[-1]
        out: list[tuple[int, float]] = [
            (_ANCHOR_P, a.p),
            (_ANCHOR_COVERAGE, a.coverage),
            (_ANCHOR_EXACT, float(a.exact)),
            (_ANCHOR_FIRST_PERSON, a.features[_FIRST_PERSON]),
            (_DESCRIBED, float(s.described > 0)),
            (_DESCRIBED_SUBJECTS, math.log1p(s.described)),
            (_HOPS, float(len(hops))),
            (_BACK_HOPS, float(sum(1 for h in hops if not h.forward))),
            (_LAST_BACK, float(not last.forward)),
            (_PATHS, math.log1p(len(s.paths))),
            (
                _THROUGH_ANCHOR,
                float(bool(others := self.named - {a.entity}) and bool(self._passed(s) & others)),
            ),
            (_LAST_MULTI, float(last.predicate in ctx.multi)),
            # Out and back through one relation: the anchor's siblings by it.
            (
                _SIBLING_WALK,
                float(
                    any(
                        a_.predicate == b_.predicate and a_.forward != b_.forward
                        for a_, b_ in pairwise(hops)
                    )
                ),
            ),
        ]
        scores = []
        explained: set[int] = set()
        for i, hop in enumerate(hops[:3]):
            key = (hop.predicate, excluded)
            hs = self._hop.get(key)
            if hs is None:
                hs = self._hop[key] = _hop_scores(ctx, hop.predicate, excluded)
            lx, vc, asc = hs
            lex, vec, assoc = _HOP_INDEX[i]
            out += ((lex, lx), (vec, vc), (assoc, asc))
            scores.append(max(lx, vc, min(1.0, asc / 3.0)))
            explained |= self._explains(hop.predicate)
        # The last relation's head word (its last: the DATE of DEPOSIT_REFUND_DATE), and
        # how many of its words the question says: "what deposit" says a word of that
        # relation, but asks for a deposit, not a date.
        head = self._head(last.predicate, excluded)
        if head is not None:
            out += ((_LAST_HEAD, head[0]), (_LAST_SHARE, head[1]))
        out += ((_REL_MIN, min(scores)), (_REL_SUM, sum(scores)), (_REL_LAST, scores[-1]))
        if ctx.relations is not None:
            learned = [self._learned_score(h.predicate, excluded) for h in hops[:3]]
            if learned and learned[0] is not None:
                out += [(i, v) for i, v in zip(_LEARNED, learned, strict=False) if v is not None]
                best = self._learned_room(excluded)
                out.append((_LEARNED_ROOM, max(0.0, best - max(v or 0.0 for v in learned))))
        relation_positions = [
            p for p in ctx.matcher.positions if p not in excluded and not ctx.q.words[p].stop
        ]
        if relation_positions:
            hit = sum(1 for p in relation_positions if p in explained)
            out.append((_EXPLAINED, hit / len(relation_positions)))
            out.append((_UNEXPLAINED, float(len(relation_positions) - hit)))
        else:
            out.append((_EXPLAINED, 1.0))
        association = ctx.matcher.association
        if ctx.q.wh is not None and association is not None:
            wh_stem = ctx.q.wh.stem
            out.append(
                (
                    _WH_ASSOC,
                    max(
                        (
                            association.weight(wh_stem, ps)
                            for _, ps in predicate_stems(last.predicate)
                        ),
                        default=0.0,
                    ),
                )
            )
        if ctx.type_words:
            out.append((_TYPE_PREDICATE, self._likeness(last.predicate)))
        # A relation the question names better than any hop of this shape, held by
        # other entities: what a memory that lost the asked fact looks like.
        out.append(
            (
                _REL_ROOM,
                max(
                    0.0,
                    ctx.best_relevance - max(self.ctx.matcher.relevance(h.predicate) for h in hops),
                ),
            )
        )
        return out

    def _asked_for(self, excluded: frozenset[int]) -> Asked | None:
        """The question's relation words outside ``excluded`` as the relation model reads
        them (None when none has a vector), read once per anchor."""
        if excluded not in self._asked:
            ctx = self.ctx
            assert ctx.relations is not None
            words = question_words(ctx.q, ctx.matcher.positions, excluded)
            self._asked[excluded] = ctx.relations.question(words, ctx.meaning)
        return self._asked[excluded]

    def _learned_score(self, predicate: str, excluded: frozenset[int]) -> float | None:
        """P(the question asks for ``predicate``) by the relation model, with the words
        at ``excluded`` (the anchor's) set aside; None when no word has a vector."""
        key = (predicate, excluded)
        found = self._learned.get(key)
        if found is None:
            asked = self._asked_for(excluded)
            if asked is None:
                return None
            ctx = self.ctx
            assert ctx.relations is not None
            found = self._learned[key] = sigmoid(
                ctx.relations.score(asked, predicate_words(predicate), ctx.meaning)
            )
        return found

    def _learned_room(self, excluded: frozenset[int]) -> float:
        """The relation model's best P over every predicate of the memory: a relation the
        question asks for better than the reading's, held by other entities, is what a
        memory that lost the asked fact looks like."""
        found = self._learned_best.get(excluded)
        if found is None:
            found = self._learned_best[excluded] = max(
                (self._learned_score(p, excluded) or 0.0 for p in self.ctx.predicates),
                default=0.0,
            )
        return found

    def _head(self, predicate: str, excluded: frozenset[int]) -> tuple[float, float] | None:
        """How strongly the question says a relation's head word, and the share of its
        words it says, with ``excluded`` set aside (per relation: shapes share them)."""
        key = (predicate, excluded)
        if key in self._heads:
            return self._heads[key]
        said = [
            max((v for p, v in at.items() if p not in excluded), default=0.0)
            for at in self.ctx.matcher.word_scores(predicate)
        ]
        found = (said[-1], sum(1 for v in said if v >= 0.5) / len(said)) if said else None
        self._heads[key] = found
        return found

    def _explains(self, predicate: str) -> frozenset[int]:
        """The question positions a predicate's words stand for clearly."""
        return self.ctx.matcher.explains(predicate)

    def _likeness(self, name: str) -> float:
        found = self._like.get(name)
        if found is None:
            found = self._like[name] = _likeness(self.ctx, name)
        return found

    def _valued(self, values: tuple[str, ...]) -> list[tuple[int, float]]:
        """The features of a reading's (first 20) values: what they look like, and how the
        "which X" noun stands for them. (Per question and values: a shape's readings in
        several forms share them.)"""
        found = self._by_values.get(values)
        if found is not None:
            return found
        # Every column is 0.0 or 1.0 for each value, so its sum is a count, exact in any
        # order: the values are counted by kind in C (a list's readings have twenty
        # values each, and a loop over them in Python was a quarter of the features).
        n = len(values)
        counts = [0] * len(_VALUE_INDEX)
        for code, k in Counter(map(_kind_code, values)).items():
            for bit in range(_KIND_BITS):
                if code >> bit & 1:
                    counts[bit] += k
        # (the last column: a value says a word of the question)
        counts[-1] = n - sum(map(self.qstems.isdisjoint, map(_value_stems, values)))
        found = [(i, float(k) / n) for i, k in zip(_VALUE_INDEX, counts, strict=True)]
        ctx = self.ctx
        if ctx.type_words:
            found.append((INDEX["type_value"], max(self._likeness(v) for v in values[:10])))
            # The "which X" noun among the words a value's facts were said in: "the
            # Upstream_Orders dataset" answers "what dataset".
            kinds = self._kinds
            found.append(
                (
                    INDEX["type_said"],
                    float(any(kinds & ctx.said.get(v, frozenset()) for v in values[:10])),
                )
            )
        self._by_values[values] = found
        return found


@lru_cache(maxsize=100_000)
def value_kind(v: str) -> tuple[float, ...]:
    """What a value looks like (read once per value, whatever the question)."""
    date, amount, duration = (has_shape(v, s) for s in ("date", "amount", "duration"))
    return (
        float(date),
        float(amount),
        float(duration),
        # (a value of none of those shapes is not one alone: most values, not read again)
        float((date or amount or duration) and only_a_measure(v)),
        float(person_like(v)),
        float(is_identifier(v)),
        float(any(ch.isdigit() for ch in v)),
        float(v == v.lower()),
    )


_SEQ = attrgetter("seq")
#: The fields of :func:`value_kind`, each 0.0 or 1.0.
_KIND_BITS = 8


@lru_cache(maxsize=100_000)
def _kind_code(v: str) -> int:
    """:func:`value_kind` as bits, field ``i`` in bit ``i``."""
    return sum(1 << i for i, x in enumerate(value_kind(v)) if x)


@lru_cache(maxsize=100_000)
def _value_stems(v: str) -> frozenset[str]:
    """The stems of a value's words (read once per value, whatever the question)."""
    return frozenset(st for _, st in predicate_stems(v))


@lru_cache(maxsize=100_000)
def kind_of(v: str) -> int:
    """The index in :data:`ctxneo.answering.forms.KINDS` of what a value is: its quantity
    kind (date, amount, duration, measure) when it is one, else a word when it is written
    in lower-case letters alone ("on hold"), else a name."""
    kinds = value_kind(v)[:_QUANTITIES]
    first = next((i for i, k in enumerate(kinds) if k), None)
    if first is not None:
        return first
    lower = v == v.lower() and not any(ch.isdigit() for ch in v) and any(ch.isalpha() for ch in v)
    return _QUANTITIES + 1 if lower else _QUANTITIES


_FIRST_PERSON = LINK_FEATURES.index("first_person")
#: The kinds a value can be of (date, amount, duration, measure, person, identifier), the
#: first of value_kind's fields.
_KINDS = 6
#: Of those, the quantities (kind_of's first kinds).
_QUANTITIES = 4
#: The forms whose values the kind model weighs: those that answer with a relation's
#: values, what it is fitted on (not yes/no: "no: rejected" is a verdict, not a value).
_KIND_FORMS = frozenset({"value", "earlier"})
#: The evidence facts whose words are read for the said_* features (a list's first ones).
MAX_SAID_FACTS = 12


def _likeness(ctx: Context, name: str) -> float:
    """How well the "which X" noun stands for a name's words (lexical or vectors)."""
    best = 0.0
    for w, s in predicate_stems(name):
        for tw, ts in ctx.type_words:
            best = max(best, lexical(ts, s), ctx.meaning.similarity(tw, w))
    return best


def compare(rows: Sequence[list[float]], candidates: Sequence[Candidate]) -> None:
    """Fill in the features that compare each reading with its rivals."""
    if not rows:
        return
    newest = [max(map(_SEQ, c.evidence), default=0) for c in candidates]
    top = max(newest) or 1
    rel = [r[INDEX["rel_sum"]] for r in rows]
    best = max(rel)
    order = sorted(range(len(rows)), key=lambda i: -rel[i])
    rank = {i: k for k, i in enumerate(order)}
    # The fewest hops from an anchor that end in the same relation, in the same form: a
    # longer walk to the same kind of end must earn its extra hops.
    fewest: dict[tuple[object, ...], int] = {}
    for c in candidates:
        key = (c.shape.anchor.entity, c.form, c.shape.hops[-1])
        fewest[key] = min(fewest.get(key, 9), len(c.shape.hops))
    last = [r[INDEX["rel_last"]] for r in rows]
    best_last = max(last)
    said = [r[INDEX["said_rel"]] for r in rows]
    best_said = max(said)
    said_all = [r[INDEX["said_all"]] for r in rows]
    best_all = max(said_all)
    for i, r in enumerate(rows):
        c = candidates[i]
        r[INDEX["newest"]] = newest[i] / top
        r[INDEX["rel_gap"]] = best - rel[i]
        r[INDEX["rel_rank"]] = rank[i] / max(1, len(rows) - 1)
        r[INDEX["shorter_same_end"]] = float(
            fewest[(c.shape.anchor.entity, c.form, c.shape.hops[-1])] < len(c.shape.hops)
        )
        r[INDEX["rel_last_gap"]] = best_last - last[i]
        r[INDEX["said_rel_gap"]] = best_said - said[i]
        r[INDEX["said_all_gap"]] = best_all - said_all[i]
