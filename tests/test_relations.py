"""The relation model: what the ranker reads of which relation a question asks for."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ctxneo.answering.learned import ReaderModel
from ctxneo.answering.question import read_question
from ctxneo.answering.relations import (
    RelationModel,
    mean_vector,
    predicate_words,
    question_words,
)
from ctxneo.meaning import NoMeaning, WordVectors


@pytest.fixture(scope="module")
def wv() -> WordVectors:
    return WordVectors.default()


def cosine_only(dims: int) -> RelationModel:
    """A model that has learned nothing: its score is the cosine of the mean vectors."""
    zeros = np.zeros((dims, 4))
    return RelationModel(zeros, zeros, 1.0, 0.0)


def test_the_mean_vector_is_a_unit_vector_and_none_without_vectors(wv):
    v = mean_vector(["shipped", "warehouse"], wv)
    assert v is not None
    assert float(np.dot(v, v)) == pytest.approx(1.0)
    assert mean_vector(["shipped"], NoMeaning()) is None
    assert mean_vector(["4471", "--"], wv) is None


def test_question_words_leave_out_the_anchor_and_numbers():
    q = read_question("who is in charge of crane 7730 today?")
    taken = frozenset(t.pos for t in q.words if t.word in ("crane", "7730"))
    positions = [t.pos for t in q.words]
    words = question_words(q, positions, taken)
    assert "crane" not in words and "7730" not in words
    assert "charge" in words


def test_a_relation_said_in_its_own_field_scores_above_an_unrelated_one(wv):
    model = cosine_only(wv.dims)
    asked = model.question(["who", "supervises"], wv)
    assert asked is not None
    near = model.score(asked, predicate_words("SUPERVISED_BY"), wv)
    far = model.score(asked, predicate_words("unit_price"), wv)
    assert near > far


def test_scores_survive_the_model_file_round_trip(wv):
    rng = np.random.default_rng(3)
    model = RelationModel(
        rng.normal(0, 0.1, (wv.dims, 4)), rng.normal(0, 0.1, (wv.dims, 4)), 1.3, -0.7
    )
    again = RelationModel.from_dict(json.loads(json.dumps(model.to_dict())))
    rounded = RelationModel.from_dict(model.to_dict())
    asked, asked_again = (
        rounded.question(["where", "parked"], wv),
        again.question(["where", "parked"], wv),
    )
    assert asked is not None and asked_again is not None
    for predicate in ("LOCATED_AT", "parkedIn", "owner"):
        words = predicate_words(predicate)
        assert rounded.score(asked, words, wv) == again.score(asked_again, words, wv)


def test_the_score_is_the_cosine_and_the_low_rank_product_it_is_written_as(wv):
    # Kept as one vector per predicate (a·p + U(pV)) for speed; it must stay the formula
    # the build fits: a·cos(q, p) + (qU)·(pV) + b.
    rng = np.random.default_rng(5)
    u, v = rng.normal(0, 0.2, (wv.dims, 6)), rng.normal(0, 0.2, (wv.dims, 6))
    model = RelationModel(u, v, 0.8, 0.3)
    asked = model.question(["who", "signs", "off"], wv)
    words = predicate_words("APPROVED_BY")
    q, p = asked.vector, mean_vector(words, wv)
    expected = 0.8 * float(q @ p) + float((q @ u) @ (p @ v)) + 0.3
    assert model.score(asked, words, wv) == pytest.approx(expected, abs=1e-12)


def test_a_predicate_without_vectors_scores_the_bias(wv):
    model = RelationModel(np.zeros((wv.dims, 2)), np.zeros((wv.dims, 2)), 1.0, -2.5)
    asked = model.question(["status"], wv)
    assert asked is not None
    assert model.score(asked, ("--",), wv) == -2.5


def test_mismatched_shapes_are_refused():
    with pytest.raises(ValueError, match="shapes disagree"):
        RelationModel(np.zeros((8, 2)), np.zeros((8, 3)), 1.0, 0.0)


def test_the_shipped_reader_has_a_relation_model_that_reads_its_vectors(wv):
    relations = ReaderModel.default().relations
    assert relations is not None
    assert relations.dims == wv.dims
