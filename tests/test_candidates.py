"""Scored walks kept compactly answer as the list of every walk would (answering.candidates)."""

from __future__ import annotations

import random

from ctxneo.answering import decide, judge
from ctxneo.answering.candidates import Candidates
from ctxneo.answering.scoring import Path, _Base, _Claims
from ctxneo.model import Fact


def _base(relation: tuple[float, ...]) -> _Base:
    claims = _Claims({0: 1.0}, relation, tuple(True for _ in relation), False, {})
    return _Base(claims, 1.0, frozenset({0}), ((0, 1.0),), ((True, True), (True, True)))


def test_best_group_and_rivals_are_those_of_the_list_in_scoring_order() -> None:
    rnd = random.Random(7)
    for _ in range(40):
        found, every = Candidates(), []
        for n in range(1, rnd.randint(2, 60)):
            hops = rnd.choice((1, 2))
            preds = tuple(rnd.choice(("DIRECTED_BY", "HAS_GENRE")) for _ in range(hops))
            directions = tuple(rnd.choice(("out", "in")) for _ in range(hops))
            ends = (
                "X",
                *(f"M{rnd.randint(0, 3)}" for _ in range(hops - 1)),
                f"A{rnd.randint(0, 2)}",
            )
            # Closed facts, sequence numbers shared by several walks, tied scores: on purpose.
            facts = tuple(
                Fact(ends[i], p, ends[i + 1], seq, seq, rnd.choice((None, None, 99)))
                for i, p in enumerate(preds)
                if (seq := rnd.randint(1, min(n, 6)))
            )
            score = rnd.choice((1.0, 1.5, 2.0))
            base = _base(tuple(1.0 for _ in preds))
            backward = rnd.random() < 0.2
            if rnd.random() < 0.5:  # a walk kept as a row of its shape and score
                rows = found.rows(("X", preds, directions), score, base, backward)
                found.add_row(rows, facts[:-1], ends[:-1], facts[-1], ends[-1])
                path = rows.path(len(rows.places) - 1)
            else:  # a walk built as a Path when scored
                claims = base.claims
                path = Path(
                    "X",
                    facts,
                    ends,
                    directions,
                    score,
                    base.keys,
                    backward,
                    claims.relation,
                    claims.sibling,
                    base.strengths,
                    True,
                )
                found.add(path)
            every.append(path)
        assert list(found) == every
        top = found.best()
        assert top == min(every, key=Path.order) and top is not None
        for as_of in (None, 50):
            assert found.group(top, as_of) == decide.group(every, top, as_of)
        answers = {p.answer for p in decide.group(every, top, None)} | {top.answer}
        assert found.best_other(answers) == judge._best_rival(every, answers)
