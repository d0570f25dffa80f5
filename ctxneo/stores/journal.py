"""The embedded store's append-only journal: JSON lines, replayed on open.

The first line names the format; every later line is one change of state::

    {"format": "ctxneo-journal/1"}
    {"op": "fact", "seq": 1, "valid_from": 1, "valid_to": null, "s": ..., "p": ..., "o": ...,
     "speaker": ..., "turn_id": ..., "fact_id": ...}
    {"op": "close", "s": ..., "p": ..., "seq": 1, "at": 2}   fact #1 stopped holding at #2
    {"op": "tick", "at": 3}                     a sequence number used by a retraction
    {"op": "multi", "predicate": "DEPENDS_ON"}
    {"op": "alias", "phrase": "the auth module", "entity": "AuthModule"}
    {"op": "clear"}                             everything before is gone
    {"op": "batch", "records": [...]}           one write of several changes, all or none

Changes of state are journaled, not commands, so a journal written from a
Neo4j memory replays to the same facts. Every append is one ``write`` of whole
lines under an exclusive ``flock`` and is flushed, so several processes can
share a journal: each one first reads what the others appended. A torn last
line (a crash mid-write) is reported, set aside in ``<file>.torn`` and cut off;
a bad line anywhere else is an error, never silently skipped.
"""

from __future__ import annotations

import fcntl
import json
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ctxneo.errors import JournalError
from ctxneo.model import Fact

FORMAT = "ctxneo-journal/1"
HEADER = json.dumps({"format": FORMAT}) + "\n"


class TornJournalWarning(UserWarning):
    """A journal's last line was incomplete and has been set aside."""


def fact_record(fact: Fact) -> dict[str, Any]:
    return {
        "op": "fact",
        "seq": fact.seq,
        "valid_from": fact.valid_from,
        "valid_to": fact.valid_to,
        "s": fact.subject,
        "p": fact.predicate,
        "o": fact.object,
        "speaker": fact.speaker,
        "turn_id": fact.turn_id,
        "fact_id": fact.fact_id,
    }


def record_fact(record: dict[str, Any]) -> Fact:
    return Fact(
        subject=record["s"],
        predicate=record["p"],
        object=record["o"],
        seq=record["seq"],
        valid_from=record.get("valid_from", record["seq"]),
        valid_to=record.get("valid_to"),
        speaker=record.get("speaker"),
        turn_id=record.get("turn_id"),
        fact_id=record.get("fact_id"),
    )


class Journal:
    """An append-only JSON-lines file shared safely between processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._offset = 0  # bytes already read and applied
        self._lines = 0  # lines already read, for error messages
        self._file: Any = None

    def open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "a+b")  # noqa: SIM115 - held for the store's lifetime
        except OSError as e:
            raise JournalError(f"cannot open journal {self.path}: {e.strerror or e}") from e

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the journal's exclusive lock (between processes) for a read-modify-append."""
        assert self._file is not None, "journal is not open"
        fcntl.flock(self._file.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_UN)

    def rewind(self) -> None:
        """Read from the start again (after a failed append, to rebuild memory)."""
        self._offset = self._lines = 0

    def read_new(self) -> list[dict[str, Any]]:
        """Records appended since the last call (by anyone); call under :meth:`locked`."""
        f = self._file
        assert f is not None
        size = os.fstat(f.fileno()).st_size
        if size == self._offset:
            return []
        f.seek(self._offset)
        data = f.read(size - self._offset)
        if self._offset == 0 and not data.strip():
            return []
        lines = data.split(b"\n")
        tail = lines.pop()  # bytes after the last newline: empty unless torn
        records: list[dict[str, Any]] = []
        line_no = self._lines
        for i, raw in enumerate(lines):
            line_no_i = line_no + i + 1
            if not raw.strip():
                continue
            records.append(self._parse(raw, line_no_i, header=(self._offset == 0 and i == 0)))
        good_end = self._offset + len(data) - len(tail)
        if tail.strip():
            self._set_aside(tail, good_end, line_no + len(lines) + 1)
        self._offset = good_end
        self._lines = line_no + len(lines)
        return [r for r in records if "op" in r]

    def _parse(self, raw: bytes, line_no: int, *, header: bool) -> dict[str, Any]:
        try:
            record = json.loads(raw)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
        except (ValueError, UnicodeDecodeError) as e:
            raise JournalError(
                f"{self.path}, line {line_no}: not a journal record ({e}); "
                "the file is damaged or is not a ctxneo journal"
            ) from e
        if header:
            if record.get("format") != FORMAT:
                raise JournalError(
                    f"{self.path} is not a ctxneo journal (first line should be {HEADER.strip()})"
                )
        elif "op" not in record:
            raise JournalError(f"{self.path}, line {line_no}: record without an 'op'")
        return record

    def _set_aside(self, tail: bytes, good_end: int, line_no: int) -> None:
        torn = self.path.with_name(self.path.name + ".torn")
        with open(torn, "ab") as f:
            f.write(tail + b"\n")
        assert self._file is not None
        self._file.truncate(good_end)
        warnings.warn(
            f"{self.path}, line {line_no}: incomplete last line ({len(tail)} bytes) skipped "
            f"and set aside in {torn}",
            TornJournalWarning,
            stacklevel=4,
        )

    def append(self, records: list[dict[str, Any]]) -> None:
        """Append one write's records as one line and flush; call under :meth:`locked`.

        One line per write makes a write atomic on replay: a torn line loses the
        whole write, never half of it (a close without the fact that closed it).
        ASCII escapes keep any string writable, lone surrogates included.
        """
        f = self._file
        assert f is not None
        record = records[0] if len(records) == 1 else {"op": "batch", "records": records}
        payload = json.dumps(record, ensure_ascii=True, separators=(",", ":")) + "\n"
        if self._offset == 0 and os.fstat(f.fileno()).st_size == 0:
            payload = HEADER + payload
        data = payload.encode("utf-8")
        try:
            f.seek(0, os.SEEK_END)
            f.write(data)
            f.flush()
        except OSError as e:
            raise JournalError(f"cannot append to journal {self.path}: {e.strerror or e}") from e
        self._offset += len(data)
        self._lines += payload.count("\n")
