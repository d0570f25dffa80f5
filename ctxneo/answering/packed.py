"""A JSON document with its long lists of numbers kept as numpy arrays, in one ``.npz``.

The reader's fitted parts are a JSON document of 9–10 MB, most of it numbers (the
trees' thresholds, the form and kind models' weights per cue word). Parsing that text
took ~0.5 s, paid by every process on its first answer (each CLI ``ask``, each MCP
server). Packed, the numbers are read as arrays and the rest is a small JSON text; the
document that comes back is the one that went in, value for value (floats are float64
both ways), so no part of the reader reads it differently.

Packed are: a list of at least :data:`LONG` numbers, all ints or all floats (or a list
of such lists, all of one length), which comes back as an array (every reader of one
takes it with ``np.asarray``); and a mapping of at least :data:`LONG` keys whose values
are all lists of floats of one length (a weight table), which comes back as a
:class:`WeightTable`, a read-only mapping that makes a row's list when it is asked for
(most of 50,000 rows are never read by a process). Anything else stays in the JSON
text. Read with ``allow_pickle=False``: the file holds no Python objects.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

#: Lists shorter than this stay in the JSON text, where they cost less than an array.
LONG = 256
_DOC = "__doc__"
_REF = "$packed"
_DATE = (1980, 1, 1, 0, 0, 0)


class WeightTable(Mapping[str, list[float]]):
    """A mapping of str to equal-length lists of floats, held as one matrix."""

    def __init__(self, keys: list[str], matrix: np.ndarray) -> None:
        self._rows = dict(zip(keys, range(len(keys)), strict=True))
        self._matrix = matrix

    def __getitem__(self, key: str) -> list[float]:
        return self._matrix[self._rows[key]].tolist()  # type: ignore[no-any-return]

    def get(self, key: str, default: object = None) -> object:  # type: ignore[override]
        # (``Mapping.get`` goes through ``__getitem__`` and a KeyError: twice the time)
        row = self._rows.get(key)
        return default if row is None else self._matrix[row].tolist()

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, key: object) -> bool:
        return key in self._rows


def _numbers(values: list[Any]) -> type | None:
    """``int`` or ``float`` when every value is one of that type (numpy's too, as a
    fitting script may hand them over; bools are not ints here: JSON tells ``true``
    from ``1``), else None."""
    if all(isinstance(v, float) for v in values):
        return float
    if all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in values):
        return int
    return None


def _as_array(value: Any) -> np.ndarray | None:
    """``value`` as one array when it is a long list of numbers of one type, or a
    rectangular list of such lists; else None."""
    if not isinstance(value, list) or not value:
        return None
    if all(isinstance(row, list) for row in value):
        width = len(value[0])
        if width == 0 or any(len(row) != width for row in value):
            return None
        kinds = {_numbers(row) for row in value}
        if len(kinds) != 1 or None in kinds or len(value) * width < LONG:
            return None
        return np.asarray(value, dtype=np.int64 if kinds == {int} else np.float64)
    kind = _numbers(value)
    if kind is None or len(value) < LONG:
        return None
    return np.asarray(value, dtype=np.int64 if kind is int else np.float64)


def _as_table(value: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """A long mapping of str to equal-length lists of floats, as its keys (UTF-8, one
    a line) and matrix."""
    if not isinstance(value, Mapping) or len(value) < LONG:
        return None
    if any("\n" in key for key in value):
        return None
    rows = list(value.values())
    if not all(isinstance(row, list) for row in rows):
        return None
    width = len(rows[0])
    if width == 0 or any(len(row) != width or _numbers(row) is not float for row in rows):
        return None
    keys = "\n".join(value).encode("utf-8")
    return np.frombuffer(keys, dtype=np.uint8), np.asarray(rows, dtype=np.float64)


def pack(doc: Mapping[str, Any]) -> bytes:
    """``doc`` (a JSON document) as the bytes of an ``.npz`` archive."""
    arrays: dict[str, np.ndarray] = {}

    def walk(value: Any) -> Any:
        array = _as_array(value)
        if array is not None:
            name = f"a{len(arrays)}"
            arrays[name] = array
            return {_REF: name}
        table = _as_table(value)
        if table is not None:
            name = f"a{len(arrays)}"
            arrays[name + "k"], arrays[name + "v"] = table
            return {_REF: name, "table": True}
        if isinstance(value, Mapping):
            if _REF in value:
                raise ValueError(f"a mapping in the document has the reserved key {_REF!r}")
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    text = json.dumps(walk(doc), separators=(",", ":"))
    arrays[_DOC] = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    # Written as ``np.savez`` writes it, but with a fixed date on every member, so that
    # the same document gives the same bytes (a rebuild of the model gives the same
    # file). Not compressed: inflating it took longer than reading it, and git
    # compresses it anyway.
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_DATE)
            with archive.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)
    return out.getvalue()


def unpack(data: bytes) -> Any:
    """The document :func:`pack` was given (its packed parts as arrays and tables)."""
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    text = arrays.pop(_DOC).tobytes().decode("utf-8")

    def restore(value: dict[str, Any]) -> Any:
        ref = value.get(_REF)
        if ref is None:
            return value
        if value.get("table"):
            keys = arrays[ref + "k"].tobytes().decode("utf-8").split("\n")
            return WeightTable(keys, arrays[ref + "v"])
        return arrays[ref]

    return json.loads(text, object_hook=restore)


def write(doc: Mapping[str, Any], path: str | Path) -> None:
    """``doc`` to ``path``: packed for ``.npz``, else as JSON text."""
    path = Path(path)
    if path.suffix == ".npz":
        path.write_bytes(pack(doc))
    else:
        path.write_text(json.dumps(doc, separators=(",", ":")) + "\n", "utf-8")


def read(data: bytes, name: str) -> Any:
    """The document in ``data``, the contents of the file ``name``: packed if it is a zip
    archive (as ``.npz`` files are; told by its first bytes, whatever the file is
    named), else JSON text.

    Raises:
        ValueError: neither (naming ``name`` and what was found).
    """
    if data[:4] == b"PK\x03\x04":
        try:
            return unpack(data)
        except (zipfile.BadZipFile, KeyError, EOFError, OSError, ValueError) as e:
            raise ValueError(f"{name} is a zip archive but not a packed document ({e})") from e
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        what = "empty" if not data else "neither a packed document (.npz) nor JSON text"
        raise ValueError(f"{name} is {what}") from e
