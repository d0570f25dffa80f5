"""A snapshot of an embedded memory beside its journal: opening loads it and replays
only the journal lines written after it.

The journal stays the memory. A snapshot says "replaying the first N bytes of
this journal builds this state", and it is believed only when it provably
describes this journal's first N bytes; otherwise the journal is replayed
whole, as if there were no snapshot. So a snapshot that is missing, stale,
damaged, unsafe to read or of another journal changes nothing but how long an
open takes.

The file, ``<journal>.snapshot``, is data only, JSON and integer arrays (a
shared directory must not hand a process something that runs code, as a pickle
would)::

    {"format": "ctxneo-snapshot/1", "journal": {...}, "body_bytes": ..., "body_sha256": ...}
    {"names": [...], "arrays": [...], ...}   the state: JSON, then the arrays' bytes

``journal`` names what it covers: the journal's device and inode (a clear
renames a new file over the journal, so its snapshot names another inode), the
offset it covers and the lines before it, and the SHA-256 of every journal
byte before that offset. The whole prefix, not its end nor its size: an inode
is reused by the next file made (a memory deleted and ingested again), and a
file rewritten in place (``cp backup.jsonl memory.jsonl``, a line edited by
hand) keeps its inode and perhaps its length, while a snapshot that does not
describe each byte it covers would make an open differ from a replay. The body
is checked against its length and digest before it is parsed. Checking reads
the covered bytes once, in chunks, at about 1 GB/s, a twentieth of replaying
them (14 ms for a 17 MB journal), so an open costs that, the current state and
the lines after the snapshot. (:mod:`ctxneo.stores.snapshot_state` writes and
reads the body.)

A snapshot is written by a process that writes to the journal (opening and
reading never create a file; nor does anyone for a journal shared on purpose,
which others may write: each user would leave one the others refuse), under
the journal's exclusive lock: to a
temporary name only the lock's holder uses (``.snapshot.tmp``, created
exclusively, 0600, never through a symlink), synced, renamed over the
snapshot, the directory synced. Under the lock no clear can run, so a clear
(which deletes both names under the same lock) can never miss a snapshot being
written, and two writers never write the temporary file at once. The body is
built before the lock is taken, from the writer's own state (which is the
journal's state at the offset it has read, whatever others append meanwhile),
so other writers wait only for the file to be written.

Where another user's file holds the name ``.snapshot`` (anyone may create it
first in a sticky ``/tmp``, where the system then refuses to replace it), a
writer renames its snapshot to ``.snapshot.own.<random>`` instead, a name no
one could have planted, and deletes the one of that kind it replaces; opening
reads the newest of ours there. Another user's file is never replaced nor read.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import secrets
import warnings
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxneo.errors import JournalError
from ctxneo.stores.journal import (
    _NOFOLLOW,
    Journal,
    _fsync_dir,
    _write_all,
    check_owner,
    create_beside,
)

#: /2: the digest is of the whole covered prefix (/1 held one of its last MiB only,
#: and is passed over as another version's).
FORMAT = "ctxneo-snapshot/2"
#: The longest first line read: a header is a few hundred bytes.
MAX_HEADER = 1 << 16


class SnapshotWarning(UserWarning):
    """A journal's snapshot is unsafe or damaged: ignored, the journal is replayed."""


@dataclass(frozen=True)
class Cover:
    """What a snapshot covers: a journal file up to ``offset`` (``lines`` lines)."""

    device: int
    inode: int
    offset: int
    lines: int
    prefix_sha256: str

    def as_json(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "inode": self.inode,
            "offset": self.offset,
            "lines": self.lines,
            "prefix_sha256": self.prefix_sha256,
        }


def cover_of(journal: Journal) -> Cover:
    """What a snapshot of the state read from ``journal`` so far covers."""
    assert journal.file_id is not None
    device, inode = journal.file_id
    offset = journal.offset
    return Cover(device, inode, offset, journal.lines, journal.prefix_sha256(offset))


def _describes(cover: Cover, journal: Journal) -> bool:
    """Whether ``cover`` is a prefix of the file ``journal`` has open (under its lock):
    the cheap checks first, then every byte it covers."""
    if journal.file_id != (cover.device, cover.inode) or cover.lines < 1:
        return False
    if not 0 < cover.offset <= journal.size():
        return False
    return journal.prefix_sha256(cover.offset) == cover.prefix_sha256


def _warn(message: str) -> None:
    warnings.warn(message, SnapshotWarning, stacklevel=5)


# -- reading --------------------------------------------------------------------------


def _open(journal: Journal, *, quiet: bool = False) -> tuple[int, Path] | None:
    """The snapshot, opened for reading if it is safe to read (the journal's rules: no
    symlink, ours or root's, writable by nobody else), and its path: the journal's
    ``.snapshot``, or, when another user's file holds that name, the one of ours kept
    under a name no one could plant (see :func:`save`). ``None``, with a warning when
    something is wrong, not when there is simply none."""
    if journal.shared():
        # Writers never snapshot a journal a team shares (see NetworkXStore), so one
        # found beside it is another member's, who could have written any state in it
        # (its cover proves nothing: every member can read the journal and hash it).
        return None
    path = journal.snapshot_path
    if _foreign(path):
        own = _own_newest(journal)
        if own is not None:
            fd = _open_file(own, quiet=quiet)
            return None if fd is None else (fd, own)
    fd = _open_file(path, quiet=quiet)
    return None if fd is None else (fd, path)


def _open_file(path: Path, *, quiet: bool) -> int | None:
    try:
        # O_NONBLOCK: opening a FIFO (planted, or made by mistake) for reading would
        # otherwise wait for a writer for ever, with the journal's lock held. It
        # changes nothing for a regular file, and check_owner refuses anything else.
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | _NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as e:
        if not quiet:
            why = "it is a symlink" if e.errno == errno.ELOOP else e.strerror or str(e)
            _warn(f"snapshot {path} ignored ({why}); the journal is replayed instead")
        return None
    try:
        check_owner(fd, path, "snapshot", strict=True)
    except (JournalError, OSError) as e:
        os.close(fd)
        if not quiet:
            _warn(f"{e}; ignored, the journal is replayed instead")
        return None
    return fd


def _foreign(path: Path) -> bool:
    """Whether another user's file (of any kind: a symlink, a FIFO) holds ``path``: not
    ours to replace, and in a sticky directory (/tmp) the system would refuse it."""
    try:
        return os.lstat(path).st_uid not in (os.geteuid(), 0)
    except OSError:
        return False


def _own_newest(journal: Journal) -> Path | None:
    """The newest of our snapshots kept under a name of their own (several only when a
    writer was killed before it deleted the one its snapshot replaced)."""
    newest: tuple[int, Path] | None = None
    for path in journal.left_beside(journal.own_snapshot_path):
        with suppress(OSError):
            at = os.lstat(path).st_mtime_ns
            if newest is None or at > newest[0]:
                newest = (at, path)
    return None if newest is None else newest[1]


def _read_header(
    fd: int, path: object, *, quiet: bool = False
) -> tuple[dict[str, Any], int] | None:
    """The first line, parsed, and where the body starts; ``None`` when it is not a
    snapshot header this version reads (warned when it is damaged)."""
    head = os.pread(fd, MAX_HEADER, 0)
    end = head.find(b"\n")
    try:
        if end < 0:
            raise ValueError("no whole first line")
        header = json.loads(head[:end])
        if not isinstance(header, dict):
            raise ValueError("its first line is not a JSON object")
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        if not quiet:
            _warn(f"snapshot {path} is damaged ({e}); ignored, the journal is replayed instead")
        return None
    if header.get("format") != FORMAT:
        return None  # another version's: replaced by the next snapshot written
    return header, end + 1


def _count(value: Any, what: str) -> int:
    """A header's number, which must be a count. ``type``, not ``isinstance``: JSON reads
    ``true`` as an int; and Infinity, NaN and 1e400 as floats, whose ``int()`` raises
    OverflowError or ValueError where it does not silently round.

    Raises:
        ValueError: it is anything else (a damaged header).
    """
    if type(value) is not int or value < 0:
        raise ValueError(f"its {what} is not a count")
    return value


def _digest(value: Any, what: str) -> str:
    if type(value) is not str:
        raise ValueError(f"its {what} is not a digest")
    return value


def _cover(header: dict[str, Any]) -> Cover:
    """What the header says the snapshot covers.

    Raises:
        ValueError: a field is missing or not what it must be (a damaged header).
    """
    j = header.get("journal")
    if not isinstance(j, dict):
        raise ValueError("it names no journal")
    counts = [_count(j.get(name), name) for name in ("device", "inode", "offset", "lines")]
    return Cover(*counts, _digest(j.get("prefix_sha256"), "prefix_sha256"))


def covered(journal: Journal, at_least: int = 0) -> int:
    """The offset up to which the snapshot on disk covers the file ``journal`` has open,
    when it covers ``at_least`` that much (0: it does not, or none that can be read
    does: a writer replaces it, so says nothing). Reads its first line only, and the
    journal's bytes it covers only when it covers enough to matter to the caller."""
    opened = _open(journal, quiet=True)
    if opened is None:
        return 0
    fd, path = opened
    try:
        found = _read_header(fd, path, quiet=True)
        if found is None:
            return 0
        cover = _cover(found[0])
        if cover.offset < at_least:
            return 0
        return cover.offset if _describes(cover, journal) else 0
    except (ValueError, OSError):
        return 0  # a damaged header: the next snapshot replaces it
    finally:
        os.close(fd)


def load(journal: Journal) -> tuple[Cover, bytes] | None:
    """The snapshot of the file ``journal`` has open, when one is there, safe, whole and
    of this file: what it covers and its body (the state, decoded by
    :func:`ctxneo.stores.snapshot_state.restore`). Call under the journal's lock.

    A snapshot of another file or of another version is passed over in silence
    (the next writer replaces it); one that is unsafe or damaged with a
    :class:`SnapshotWarning`. Either way the caller replays the journal.
    """
    opened = _open(journal)
    if opened is None:
        return None
    fd, path = opened
    try:
        found = _read_header(fd, path)
        if found is None:
            return None
        header, start = found
        try:
            cover = _cover(header)
            size = _count(header.get("body_bytes"), "body_bytes")
            digest = _digest(header.get("body_sha256"), "body_sha256")
        except ValueError as e:
            _warn(f"snapshot {path} has a damaged header ({e}); ignored, the journal is replayed")
            return None
        if not _describes(cover, journal):
            return None  # stale: another file, or one cut shorter than it covers
        body = _read_body(fd, start, size)
        if len(body) != size or hashlib.sha256(body).hexdigest() != digest:
            _warn(
                f"snapshot {path} is damaged ({len(body)} of {size} bytes, or not the bytes "
                "written); ignored, the journal is replayed instead"
            )
            return None
        return cover, body
    except OSError as e:
        _warn(f"cannot read snapshot {path} ({e.strerror or e}); the journal is replayed instead")
        return None
    finally:
        os.close(fd)


def _read_body(fd: int, start: int, size: int) -> bytes:
    """``size`` bytes from ``start`` (fewer when the file ends sooner), and no more: a
    file longer than its header says is damaged too (one byte more is read to see)."""
    out = bytearray()
    pos = start
    while len(out) <= size:
        chunk = os.pread(fd, min(1 << 24, size + 1 - len(out)), pos)
        if not chunk:
            break
        out += chunk
        pos += len(chunk)
    return bytes(out)


# -- writing --------------------------------------------------------------------------


def save(journal: Journal, cover: Cover, body: bytes) -> None:
    """Write a snapshot of ``cover`` with ``body``; call under ``journal.locked(write=True)``
    once the file is known to be the one ``cover`` names.

    Raises:
        OSError: the system refused a step; the snapshot on disk is then the one
            that was there, and no temporary file is left.
    """
    header = {
        "format": FORMAT,
        "journal": cover.as_json(),
        "body_bytes": len(body),
        "body_sha256": hashlib.sha256(body).hexdigest(),
    }
    line = json.dumps(header, separators=(",", ":")).encode("ascii") + b"\n"
    # A new name each time (O_EXCL, no symlink followed): a fixed one may be another
    # user's file in a shared directory; one a killed writer left, a clear removes.
    fd, temp = create_beside(journal.snapshot_temp_path, os.O_WRONLY)
    target = journal.snapshot_path
    if _foreign(target):
        # Another user's file holds the name (planted in a sticky /tmp, where the system
        # refuses to replace it): keep ours under a name no one could have guessed.
        own = journal.own_snapshot_path
        target = own.with_name(f"{own.name}.{secrets.token_hex(8)}")
    try:
        _write_all(fd, line + body)
        if journal.fsync != "off":
            # Whole on disk before its name is the snapshot's. (Without: a power loss
            # may leave the name on nothing whole, which its digest then refuses.)
            os.fsync(fd)
        os.replace(temp, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(temp)
        raise
    finally:
        os.close(fd)
    for left in journal.left_beside(journal.snapshot_temp_path, journal.own_snapshot_path):
        if left != target:
            with suppress(OSError):
                os.unlink(left)  # (half-written by a killed writer, or replaced by this)
    if journal.fsync != "off":
        _fsync_dir(journal.path.parent)
