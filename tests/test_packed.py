"""The shipped model file: a JSON document with its long number lists packed as arrays
(``ctxneo/answering/packed.py``). What a user relies on: the reader reads the same
values it was built with, a rebuild writes the same bytes, and a damaged file is a
clear error rather than a different model."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from ctxneo.answering import packed
from ctxneo.answering.learned import ReaderModel
from ctxneo.errors import ConfigError


def _plain(value: object) -> object:
    """A document as JSON would give it: arrays and tables back to lists and dicts."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, packed.WeightTable):
        return {k: value[k] for k in value}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _doc() -> dict[str, object]:
    rng = np.random.default_rng(7)
    return {
        "note": 'quotes " and \\ and ünïcode',
        "weights": {f"w=word{i}": rng.normal(size=3).tolist() for i in range(300)},
        "small": {"a": [1.0, 2.0]},
        "ints": list(range(400)),
        "floats": [*(rng.normal(size=500) * 1e-300).tolist(), 0.1, 1e308, -0.0],
        "matrix": [[float(i + j) for j in range(20)] for i in range(30)],
        "mixed": [1, 2.0] * 200,
        "bools": [True, False] * 200,
        "ragged": [[1.0] * (i % 3 + 1) for i in range(300)],
        "nested": [{"x": list(range(300))}],
        "short": [1, 2, 3],
    }


def test_a_document_comes_back_value_for_value() -> None:
    doc = _doc()
    back = packed.unpack(packed.pack(doc))
    assert _plain(back) == doc
    # every float bit for bit (-0.0 and the smallest values included), ints stay ints
    assert json.dumps(_plain(back)) == json.dumps(doc)
    assert isinstance(back["ints"], np.ndarray) and back["ints"].dtype == np.int64
    assert isinstance(back["weights"], packed.WeightTable)
    assert back["weights"].get("w=word5") == doc["weights"]["w=word5"]  # type: ignore[index]
    assert back["weights"].get("absent") is None and "absent" not in back["weights"]
    # what JSON tells apart stays apart: these are left in the text as they were
    for kept in ("mixed", "bools", "ragged", "short", "small"):
        assert back[kept] == doc[kept]


def test_the_same_document_gives_the_same_bytes() -> None:
    assert packed.pack(_doc()) == packed.pack(_doc())


def test_a_key_the_packing_uses_is_refused() -> None:
    with pytest.raises(ValueError, match="reserved"):
        packed.pack({"x": {"$packed": "a0"}})


def test_the_shipped_model_is_packed_and_loads(tmp_path: Path) -> None:
    shipped = Path(packed.__file__).parent.parent / "data" / "reader.npz"
    model = ReaderModel.load(shipped)
    assert model.ranker is not None and model.confidence is not None
    assert model.forms is not None and len(model.forms.weights) > 1000
    # written back as JSON and read again: the same trees, the same weights
    doc = packed.unpack(shipped.read_bytes())
    packed.write(_plain(doc), tmp_path / "reader.json")  # type: ignore[arg-type]
    again = ReaderModel.load(tmp_path / "reader.json")
    assert again.ranker is not None
    assert np.array_equal(again.ranker.threshold, model.ranker.threshold)
    assert again.forms is not None and dict(again.forms.weights) == dict(model.forms.weights)


@pytest.mark.parametrize("damage", ["truncated", "not a zip", "no document", "empty", "an array"])
def test_a_damaged_model_file_is_a_clear_error(tmp_path: Path, damage: str) -> None:
    good = packed.pack({"ranker": None, "ints": list(range(300))})
    path = tmp_path / "reader.npz"
    if damage == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif damage == "not a zip":
        path.write_bytes(b"\x93NUMPY garbage")
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "an array":
        with path.open("wb") as f:
            np.save(f, np.arange(3))
    else:
        path.write_bytes(_without_document(good))
    with pytest.raises(ConfigError, match="cannot read the reader model"):
        ReaderModel.load(path)


@pytest.mark.parametrize("name", ["reader.NPZ", "reader.npz.bak", "model"])
def test_a_model_file_is_read_by_what_it_holds_not_by_its_name(tmp_path: Path, name: str) -> None:
    doc = {"ranker": None, "ints": list(range(300))}
    (tmp_path / name).write_bytes(packed.pack(doc))
    assert packed.read((tmp_path / name).read_bytes(), name)["ints"].tolist() == doc["ints"]
    (tmp_path / name).write_text(json.dumps(doc))
    assert packed.read((tmp_path / name).read_bytes(), name) == doc


def _without_document(data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if not info.filename.startswith("__doc__"):
                dst.writestr(info, src.read(info))
    return out.getvalue()
