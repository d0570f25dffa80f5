"""The embedded store's append-only journal: JSON lines, replayed on open.

The first line names the format; every later line is one write::

    {"format": "ctxneo-journal/1"}
    {"op": "fact", "seq": 1, "valid_from": 1, "valid_to": null, "s": ..., "p": ..., "o": ...,
     "speaker": ..., "turn_id": ..., "fact_id": ...}
    {"op": "close", "s": ..., "p": ..., "seq": 1, "at": 2}   fact #1 stopped holding at #2
    {"op": "tick", "at": 3}                     a sequence number used by a retraction
    {"op": "multi", "predicate": "DEPENDS_ON"}
    {"op": "single", "predicate": "DEPENDS_ON"}  the declaration withdrawn
    {"op": "alias", "phrase": "the auth module", "entity": "AuthModule"}
    {"op": "batch", "records": [...]}           one write of several changes, all or none

A clear is not a record: it replaces the file with an empty journal (see
:meth:`Journal.clear`). Journals from before that hold ``{"op": "clear"}``
lines, which still replay to nothing before them.

Changes of state are journaled, not commands, so a journal written from a
Neo4j memory replays to the same facts.

What a write promises (see :meth:`Journal.append`):

- **Whole or not at all.** A write is one line, written with ``os.write`` on
  the file descriptor (no Python buffer that could write it later) under an
  exclusive ``flock``; if the system refuses any of it (a full disk, a file
  size limit), the file is cut back to its size before the write and a
  :class:`~ctxneo.errors.JournalError` is raised. A crash mid-write leaves a
  torn last line, which readers skip and the next writer sets aside in
  ``<file>.torn``, and only in a file whose first line says it is a journal.
- **Durable when acknowledged**, to the degree the fsync policy says:
  ``always`` (``fdatasync`` before a write returns: survives power loss),
  ``batch`` (one ``fdatasync`` per :data:`BATCH_WRITES` writes and at close:
  a power loss can lose the writes since the last one) or ``off`` (the kernel
  writes back: survives a process crash, not a power loss). Set it with
  ``fsync=`` or ``CTXNEO_FSYNC``.
- **Readers change nothing.** A journal is opened for reading only; it is
  created, repaired or written only by a write.
- **Files nobody else controls.** The journal and its ``.torn`` side file are
  opened without following a symlink, and must belong to this user (or root)
  and be writable by nobody else, unless ``CTXNEO_SHARED_JOURNAL=1`` says a
  journal is shared on purpose (then it may be another user's, of a group this
  user is in): in a shared directory another user could
  otherwise plant the file, read what is written to it or feed it facts. New
  directories are made 0700. A lock held past ``CTXNEO_LOCK_TIMEOUT`` seconds
  (default :data:`LOCK_TIMEOUT`) is an error, not a hang.
- **Safe across fork.** ``flock`` locks and file offsets belong to the open
  file description a child inherits, so a journal notices a new process id
  and opens the file again before touching it. Reads use ``pread``: no shared
  offset at all.
- **A clear erases.** :meth:`Journal.clear` renames an empty journal over the
  file (and deletes ``.torn`` and the snapshot), so no file keeps a cleared
  line. Every process checks under the lock that its descriptor is still the
  file the path names, and otherwise opens the new one and reads it from the
  start (:attr:`Journal.replaced` tells its store to rebuild).
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import secrets
import stat
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from ctxneo.environment import seconds_from_env
from ctxneo.errors import ConfigError, JournalError
from ctxneo.model import Fact

FORMAT = "ctxneo-journal/1"
HEADER = json.dumps({"format": FORMAT}) + "\n"
_HEADER_BYTES = HEADER.encode("ascii")

#: fsync policies: before every acknowledged write, once per batch of writes, never.
FSYNC_POLICIES = ("always", "batch", "off")
DEFAULT_FSYNC = "always"
#: Under the ``batch`` policy, one fdatasync per this many writes (and at close).
BATCH_WRITES = 64
#: Reads go through the file in chunks this big: a journal is never read whole.
CHUNK = 1 << 20
#: New journals are readable and writable by their owner only: a memory is private.
FILE_MODE = 0o600
#: New parent directories: their owner's only, whatever the umask.
DIR_MODE = 0o700
#: Seconds to wait for another process's lock before giving up with an error.
LOCK_TIMEOUT = 60.0
#: Not following a symlink at the last component of a path.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
#: Flags for opening a name someone else may have planted: no symlink followed, and no
#: wait on a FIFO (opening one blocks until the other end opens, before check_owner
#: could refuse it; a regular file ignores O_NONBLOCK).
_PLANTED = _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
#: What identifies an open file: (device, inode).
FileId = tuple[int, int]


def _file_id(info: os.stat_result) -> FileId:
    return info.st_dev, info.st_ino


def shared_journal() -> bool:
    """Whether ``$CTXNEO_SHARED_JOURNAL`` allows a journal others may write."""
    return os.environ.get("CTXNEO_SHARED_JOURNAL", "") in ("1", "true", "yes")


def lock_timeout() -> float:
    """Seconds to wait for a journal's lock: ``$CTXNEO_LOCK_TIMEOUT`` or the default.

    Raises:
        ConfigError: the value is not a positive number of seconds.
    """
    return seconds_from_env("CTXNEO_LOCK_TIMEOUT", LOCK_TIMEOUT)


def _in_my_groups(gid: int) -> bool:
    return gid == os.getegid() or gid in os.getgroups()


def check_owner(fd: int, path: Path, what: str, *, strict: bool = False) -> None:
    """Refuse a file another user could control: not ours (or root's), or writable
    by group or others, unless ``CTXNEO_SHARED_JOURNAL`` says journals are shared on
    purpose: then a file of another user is taken when its group is one of ours (a
    journal a team writes together belongs to whoever made it, and to their group).
    ``strict``: a file only we ever write (a snapshot), which that never relaxes.

    Raises:
        JournalError: naming the file, its owner and mode, and the way out.
    """
    shared = shared_journal() and not strict
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise JournalError(f"cannot open {what} {path}: not a regular file")
    if info.st_uid not in (os.geteuid(), 0) and not (shared and _in_my_groups(info.st_gid)):
        owner, way_out = (
            (f"user id {info.st_uid} and group id {info.st_gid}, neither yours", "")
            if shared
            else (
                f"user id {info.st_uid}, not to you",
                ""
                if strict
                else ", or set CTXNEO_SHARED_JOURNAL=1 for one shared on purpose with a group "
                "you are in",
            )
        )
        raise JournalError(
            f"cannot open {what} {path}: it belongs to {owner}; another user could read or "
            f"plant facts in it (use a journal of your own{way_out})"
        )
    if info.st_mode & 0o022 and not shared:
        raise JournalError(
            f"cannot open {what} {path}: mode {stat.S_IMODE(info.st_mode):03o} lets other "
            f"users write it; chmod go-w {path}"
            + ("" if strict else ", or set CTXNEO_SHARED_JOURNAL=1 if it is shared on purpose")
        )


class TornJournalWarning(UserWarning):
    """A journal's last line is incomplete (a crash mid-write); it is skipped."""


class SharedDirectoryWarning(UserWarning):
    """A journal's directory lets another user rename or replace the journal."""


def directory_risk(directory: Path) -> str | None:
    """Why another user could swap the journal in ``directory`` for another file (an
    older copy of it, rolling the memory back without a word), or None: the directory
    is another user's (not root's), or others may write it without the sticky bit that
    keeps them from renaming what is not theirs (as /tmp has)."""
    try:
        info = os.stat(directory)
    except OSError:
        return None  # (the journal's own open says what is wrong)
    if info.st_uid not in (os.geteuid(), 0):
        return f"it belongs to user id {info.st_uid}"
    if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
        return f"its mode {stat.S_IMODE(info.st_mode):03o} lets others rename files in it"
    return None


def fsync_policy(value: str | None = None) -> str:
    """The fsync policy to use: ``value``, else ``$CTXNEO_FSYNC``, else ``always``.

    Raises:
        ConfigError: the value is not one of :data:`FSYNC_POLICIES`.
    """
    chosen = value if value is not None else os.environ.get("CTXNEO_FSYNC") or DEFAULT_FSYNC
    if chosen not in FSYNC_POLICIES:
        source = "fsync" if value is not None else "CTXNEO_FSYNC"
        raise ConfigError(
            f"{source}={chosen!r} is not an fsync policy; use one of {', '.join(FSYNC_POLICIES)}"
        )
    return chosen


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
        **({"text": fact.text} if fact.text is not None else {}),
    }


#: A string as a JSON string literal, non-ASCII escaped: what ``json.dumps`` writes.
_JSON_STRING = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined]


def encode_fact(fact: Fact) -> str:
    """``fact_record(fact)`` as the JSON text :func:`encode_line` writes for it, byte for
    byte, without the dict: a batched ingest writes one per fact, and building the
    dict and walking it in the encoder was a fifth of the write. Only for a fact
    whose fields were validated (strings, ints, ``None``)."""
    # Each field's type is known once validated (speaker and fact_id a str or None,
    # turn_id an int or None): each is encoded by its own rule, inline (a call a field
    # to a function that tried each type was a third of this).
    seq, valid_from, valid_to = fact.seq, fact.valid_from, fact.valid_to
    speaker, turn_id, fact_id, text = fact.speaker, fact.turn_id, fact.fact_id, fact.text
    number = int.__repr__(seq)  # (an int subclass too, as json writes it)
    return (
        f'{{"op":"fact","seq":{number},'
        # (A write makes valid_from the same int object as seq: written once.)
        f'"valid_from":{number if valid_from is seq else int.__repr__(valid_from)},'
        f'"valid_to":{"null" if valid_to is None else int.__repr__(valid_to)},'
        f'"s":{_JSON_STRING(fact.subject)},"p":{_JSON_STRING(fact.predicate)},'
        f'"o":{_JSON_STRING(fact.object)},'
        f'"speaker":{"null" if speaker is None else _JSON_STRING(speaker)},'
        f'"turn_id":{"null" if turn_id is None else int.__repr__(turn_id)},'
        f'"fact_id":{"null" if fact_id is None else _JSON_STRING(fact_id)}'
        + ("}" if text is None else f',"text":{_JSON_STRING(text)}}}')
    )


def encode_close(fact: Fact, at: int) -> str:
    """The record closing ``fact`` at ``at``, as the JSON text :func:`encode_line` writes
    for it, byte for byte (a batch that restates values writes one per value it
    replaces; json.dumps of its dict cost three times as much)."""
    return (
        f'{{"op":"close","s":{_JSON_STRING(fact.subject)},"p":{_JSON_STRING(fact.predicate)},'
        f'"seq":{int.__repr__(fact.seq)},"at":{int.__repr__(at)}}}'
    )


def encode_record(record: dict[str, Any]) -> str:
    """One record as the JSON text :func:`encode_line` writes for it."""
    return json.dumps(record, ensure_ascii=True, separators=(",", ":"))


def encode_texts(records: list[str]) -> bytes:
    """:func:`encode_line` of records already encoded one by one (see
    :func:`encode_fact`): the same bytes."""
    if len(records) == 1:
        return (records[0] + "\n").encode("ascii")
    # (One string made, then encoded: a batch's line is megabytes, each copy a pass.)
    return f'{{"op":"batch","records":[{",".join(records)}]}}\n'.encode("ascii")


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
        text=record.get("text"),
    )


def encode_line(records: list[dict[str, Any]]) -> bytes:
    """One write's records as one journal line (a ``batch`` when there are several).

    ASCII escapes keep the line plain bytes whatever the text.

    Raises:
        TypeError, ValueError: a value is not JSON (the caller validates first).
    """
    record = records[0] if len(records) == 1 else {"op": "batch", "records": records}
    return (json.dumps(record, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")


class Journal:
    """An append-only JSON-lines file shared safely between processes (and forks)."""

    def __init__(self, path: str | Path, *, fsync: str | None = None) -> None:
        self.path = Path(path)
        self.fsync = fsync_policy(fsync)
        self._fd: int | None = None
        self._writable = False
        self._pid = os.getpid()
        self._offset = 0  # bytes read and applied: always the end of a whole line
        self._lines = 0  # lines read, for error messages
        self._is_journal = False  # the header has been read (or written) at offset 0
        self._unsynced = 0  # writes since the last fdatasync (batch policy)
        self._warned_torn: int | None = None
        self._dir_checked = False  # (the directory is checked at the first open)
        self.torn_tail: int = 0  # bytes after the last whole line, as last read
        self._fd_id: FileId | None = None  # the file self._fd is open on
        self._read_id: FileId | None = None  # the file self._offset counts in
        #: How often the file was found replaced (a clear, here or by another
        #: process) and reading started over: a store built from the old file
        #: rebuilds when this changes.
        self.replaced = 0

    @property
    def torn_path(self) -> Path:
        """Where a torn last line is set aside."""
        return self.path.with_name(self.path.name + ".torn")

    @property
    def clearing_path(self) -> Path:
        """The start of the names :meth:`clear` writes the empty journal under before
        renaming it over the file (a random ending: see :func:`create_beside`)."""
        return self.path.with_name(self.path.name + ".clearing")

    @property
    def snapshot_path(self) -> Path:
        """Where a snapshot of the memory the journal holds is kept (see
        :mod:`ctxneo.stores.snapshot`); a clear deletes it."""
        return self.path.with_name(self.path.name + ".snapshot")

    @property
    def own_snapshot_path(self) -> Path:
        """The start of the names a snapshot is kept under when :attr:`snapshot_path` is
        another user's file (a random ending: see :mod:`ctxneo.stores.snapshot`); a
        clear deletes them."""
        return self.path.with_name(self.path.name + ".snapshot.own")

    @property
    def snapshot_temp_path(self) -> Path:
        """The start of the names a snapshot is written under before it is renamed into
        place (a random ending: see :func:`create_beside`); a clear deletes those a
        crash left."""
        return self.path.with_name(self.path.name + ".snapshot.tmp")

    # -- the file descriptor -------------------------------------------------------

    @property
    def offset(self) -> int:
        """Where the next line starts: everything before it has been read."""
        return self._offset

    @property
    def lines(self) -> int:
        """How many lines were read (the header included): the next line's number - 1."""
        return self._lines

    @property
    def file_id(self) -> FileId | None:
        """The (device, inode) of the file open now; under :meth:`locked`, the file
        the path names."""
        return self._fd_id

    @property
    def writable(self) -> bool:
        """Whether this process has the file open for writing (it wrote, or will)."""
        return self._fd is not None and self._writable and not self._forked()

    def size(self) -> int:
        """The size of the file open now, in bytes (0 when none is)."""
        if self._fd is None:
            return 0
        try:
            return os.fstat(self._fd).st_size
        except OSError as e:
            raise self._fail("read", e) from e

    def shared(self) -> bool:
        """Whether the file open now lets its group or others write it: a journal shared
        on purpose (``CTXNEO_SHARED_JOURNAL=1``; without it, one is refused at open)."""
        if self._fd is None:
            return False
        try:
            return bool(os.fstat(self._fd).st_mode & 0o022)
        except OSError as e:
            raise self._fail("read", e) from e

    def prefix_sha256(self, offset: int) -> str:
        """The SHA-256 of the first ``offset`` bytes of the file open now (of fewer when
        it is shorter): what a snapshot covering the journal up to ``offset`` is
        checked against. Read in :data:`CHUNK` pieces, never whole: about 1 GB/s,
        a twentieth of what replaying those bytes costs."""
        digest = hashlib.sha256()
        fd = self._fd
        pos = 0
        try:
            while fd is not None and pos < offset:
                chunk = os.pread(fd, min(CHUNK, offset - pos), pos)
                if not chunk:
                    break
                digest.update(chunk)
                pos += len(chunk)
        except OSError as e:
            raise self._fail("read", e) from e
        return digest.hexdigest()

    def _fail(self, doing: str, e: OSError) -> JournalError:
        return JournalError(f"cannot {doing} journal {self.path}: {e.strerror or e}")

    def _forked(self) -> bool:
        """Whether this process is a child of the one that opened the file."""
        return self._fd is not None and self._pid != os.getpid()

    def _reopen_after_fork(self) -> None:
        # The inherited descriptor shares its lock and offset with the parent:
        # let it go (closing our copy releases nothing the parent holds).
        assert self._fd is not None
        writable = self._writable
        with suppress(OSError):
            os.close(self._fd)
        self._fd, self._writable, self._pid = None, False, os.getpid()
        self._open(write=writable)

    def _open(self, *, write: bool) -> bool:
        """Open the file (for writing, creating it, when ``write``); whether it exists."""
        if self._forked():
            self._reopen_after_fork()
        if self._fd is not None and (self._writable or not write):
            return True
        stale = None
        if self._fd is not None:  # upgrade a reader to a writer: one descriptor, one lock
            # (closed once the writer's is open: see :meth:`locked`)
            stale, self._fd = self._fd, None
        try:
            return self._open_named(write=write)
        finally:
            if stale is not None:
                os.close(stale)

    def _open_named(self, *, write: bool) -> bool:
        """Open the file the path names (see :meth:`_open`)."""
        try:
            if write:
                self._fd = self._open_for_writing()
                self._writable = True
            else:
                self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC | _PLANTED)
        except FileNotFoundError:
            return False
        except (OSError, ValueError) as e:
            if isinstance(e, ValueError):  # a NUL byte in the path
                raise JournalError(f"cannot open journal {self.path!r}: {e}") from e
            if e.errno == errno.ELOOP:
                raise JournalError(
                    f"cannot open journal {self.path}: it is a symlink; name the file itself"
                ) from e
            raise self._fail("open", e) from e
        try:
            check_owner(self._fd, self.path, "journal")
            self._fd_id = _file_id(os.fstat(self._fd))
        except (JournalError, OSError) as e:
            os.close(self._fd)
            self._fd = None
            self._writable = False
            if isinstance(e, JournalError):
                raise
            raise self._fail("open", e) from e
        if not self._dir_checked:
            # (after the file is open and held: a warning made an error leaves it held,
            # closed with the journal, not half-checked inside the checks above)
            self._dir_checked = True
            self._warn_of_directory()
        return True

    def _open_for_writing(self, *, made_dirs: bool = False) -> int:
        flags = os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | _PLANTED
        try:
            fd = os.open(self.path, flags | os.O_CREAT | os.O_EXCL, FILE_MODE)
        except FileExistsError:
            return os.open(self.path, flags)
        except FileNotFoundError as e:
            # Once the directories exist, "not found" means the name cannot be made
            # there (/proc, a directory removed meanwhile): an error, not a retry.
            if made_dirs:
                raise self._fail("create", e) from e
            _make_dirs(self.path.parent)
            return self._open_for_writing(made_dirs=True)
        if self.fsync != "off":  # the new name must survive a power loss too
            _fsync_dir(self.path.parent)
        return fd

    def close(self) -> None:
        """Sync what the policy still owes, then close. Idempotent."""
        if self._fd is None:
            return
        if self._forked():  # the parent's descriptor: our copy closes, nothing is synced
            os.close(self._fd)
            self._fd = None
            return
        try:
            if self._writable and self._unsynced and self.fsync == "batch":
                os.fdatasync(self._fd)
        except OSError:
            pass
        finally:
            os.close(self._fd)
            self._fd = None
            self._writable = False

    @contextmanager
    def locked(self, *, write: bool = False) -> Iterator[bool]:
        """Hold the journal's lock: exclusive to write, shared to read.

        Yields whether the file exists (a reader of a journal nobody has
        written yet reads nothing and creates nothing). The lock held is the
        lock of the file the path names: a clear that renamed a new journal
        over it is noticed here, and the new file is opened and read from the
        start (:attr:`replaced` counts it).
        """
        kind = fcntl.LOCK_EX if write else fcntl.LOCK_SH
        # The file read stays open until the one the path names is open and known: closed
        # first, its inode could be freed and given to a file another process's clear
        # makes meanwhile, which would then pass for the file already read.
        stale: int | None = None
        try:
            while True:
                if not self._open(write=write):
                    if self._read_id is not None:
                        # The file read before is gone (deleted by hand): the path holds
                        # nothing now, as it would for a process opening it afresh.
                        self.rewind()
                        self.replaced += 1
                        self._read_id = None
                    yield False
                    return
                fd = self._fd
                assert fd is not None
                self._lock(fd, kind)
                try:
                    named = self._named_id()
                except BaseException:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    raise
                # Checked under the lock, since a clear renames under the lock of the
                # file it replaces: holding that lock and finding the path unchanged
                # means no clear can replace it until we let go.
                if named == self._fd_id:
                    break
                # Our descriptor (and the lock just taken) is a file the path no longer
                # names: replaced by a clear, or deleted by hand (writing on through the
                # descriptor acknowledged facts that no process could ever read again).
                # Let go of it and take the file the path names, or, to write, a new one.
                fcntl.flock(fd, fcntl.LOCK_UN)
                if stale is None and self._fd_id == self._read_id:
                    stale = fd  # (the file read: kept open until another is known)
                else:
                    os.close(fd)  # (one opened and replaced meanwhile, never read)
                self._fd, self._writable = None, False
            if self._fd_id != self._read_id:
                if self._read_id is not None:  # what we read is another file's: start over
                    self.rewind()
                    self.replaced += 1
                self._read_id = self._fd_id
        finally:
            if stale is not None:
                os.close(stale)
        try:
            yield True
        finally:
            # self._fd, not fd: clear() hands over to the new file's descriptor,
            # whose lock it took, and closes the old one (which drops its lock).
            if self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def _named_id(self) -> FileId | None:
        """The file the path names now (``None``: nothing, a journal deleted by hand)."""
        try:
            return _file_id(os.stat(self.path, follow_symlinks=False))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            if isinstance(e, ValueError):
                raise JournalError(f"cannot open journal {self.path!r}: {e}") from e
            raise self._fail("open", e) from e

    def _lock(self, fd: int, kind: int) -> None:
        """Take the lock, waiting at most :func:`lock_timeout` seconds: the file's
        owner (or a stuck process) holding it forever must not hang every caller."""
        try:
            fcntl.flock(fd, kind | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        except OSError as e:
            raise self._fail("lock", e) from e
        limit = lock_timeout()
        deadline = time.monotonic() + limit
        pause = 0.001
        while True:
            time.sleep(pause)
            try:
                fcntl.flock(fd, kind | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise JournalError(
                        f"journal {self.path} stayed locked by another process for {limit:g} s; "
                        "find it with: fuser -v " + str(self.path)
                    ) from None
            except OSError as e:
                raise self._fail("lock", e) from e
            pause = min(pause * 2, 0.05)

    # -- reading ----------------------------------------------------------------------

    def rewind(self) -> None:
        """Read from the start again (after a clear of every structure built from it)."""
        self._offset = self._lines = 0
        self._is_journal = False
        self._warned_torn = None
        self.torn_tail = 0

    def resume(self, offset: int, lines: int) -> None:
        """Read on from ``offset`` (the end of line ``lines``), which a snapshot of this
        file was checked to cover; call under :meth:`locked`, on the file the snapshot
        names, before anything else was read from it."""
        assert self._offset == 0 and offset > 0 and self._read_id == self._fd_id
        self._offset, self._lines = offset, lines
        self._is_journal = True  # a snapshot covers the header, which was read to make it
        self._warned_torn = None
        self.torn_tail = 0

    def read_new(self) -> Iterator[tuple[int, int, dict[str, Any]]]:
        """``(line number, line offset, record)`` for each record appended since the
        last call, by anyone; call under :meth:`locked`. A batch's records share
        their line. The file is read in chunks, never whole.

        Raises:
            JournalError: a line is not a record, or the file is not a journal.
        """
        fd = self._fd
        if fd is None:
            return
        try:
            size = os.fstat(fd).st_size
        except OSError as e:
            raise self._fail("read", e) from e
        if size < self._offset:
            raise JournalError(
                f"{self.path} is shorter than what was already read from it "
                f"({size} < {self._offset} bytes): it was replaced or cut; open it again"
            )
        pos = self._offset
        pending = bytearray()
        start = self._offset  # file offset of pending[0]
        while pos < size:
            try:
                chunk = os.pread(fd, min(CHUNK, size - pos), pos)
            except OSError as e:
                raise self._fail("read", e) from e
            if not chunk:
                break
            pos += len(chunk)
            pending += chunk
            cut = 0
            while (newline := pending.find(b"\n", cut)) >= 0:
                raw = bytes(pending[cut:newline])
                line_offset = start + cut
                line_no = self._lines + 1
                cut = newline + 1
                for record in self._records(raw, line_no, line_offset):
                    yield line_no, line_offset, record
                self._offset = start + cut
                self._lines = line_no
            del pending[:cut]
            start += cut
        self.torn_tail = len(pending)
        if pending:
            self._torn(bytes(pending))

    def _records(self, raw: bytes, line_no: int, line_offset: int) -> list[dict[str, Any]]:
        if line_offset == 0:
            if self._parse(raw, line_no).get("format") != FORMAT:
                raise self._not_a_journal()
            self._is_journal = True
            return []
        if not raw.strip():
            return []
        record = self._parse(raw, line_no)
        if "op" not in record:
            raise JournalError(f"{self.path}, line {line_no}: record without an 'op'")
        if record["op"] != "batch":
            return [record]
        inner = record.get("records")
        if not isinstance(inner, list) or not all(
            isinstance(r, dict) and r.get("op") not in (None, "batch") for r in inner
        ):
            raise JournalError(
                f"{self.path}, line {line_no}: a batch must hold a list of records with an 'op'"
            )
        return inner

    def _not_a_journal(self) -> JournalError:
        return JournalError(
            f"{self.path} is not a ctxneo journal (its first line should be {HEADER.strip()}); "
            "it was not changed"
        )

    def _parse(self, raw: bytes, line_no: int) -> dict[str, Any]:
        try:
            record = json.loads(raw)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
        except (ValueError, UnicodeDecodeError, RecursionError) as e:
            if line_no == 1:
                raise self._not_a_journal() from e
            reason = "nested too deeply" if isinstance(e, RecursionError) else str(e)
            raise JournalError(
                f"{self.path}, line {line_no}: not a journal record ({reason}); the file is damaged"
            ) from e
        return record

    def _warn_of_directory(self) -> None:
        """Warn, once, of a directory another user could swap the journal in (unless
        journals are shared on purpose): the file's own checks cannot see that."""
        if shared_journal():
            return
        risk = directory_risk(self.path.parent)
        if risk is not None:
            warnings.warn(
                f"{self.path}: another user could replace this journal with an older copy "
                f"of it (its directory {self.path.parent}: {risk}); keep journals in a "
                "directory of your own, or set CTXNEO_SHARED_JOURNAL=1 if it is shared on "
                "purpose",
                SharedDirectoryWarning,
                stacklevel=6,
            )

    def _torn(self, tail: bytes) -> None:
        if self._offset == 0 and not _HEADER_BYTES.startswith(tail):
            raise self._not_a_journal()  # one line, no newline: not ours to judge or repair
        if self._warned_torn != self._offset:
            self._warned_torn = self._offset
            warnings.warn(
                f"{self.path}, line {self._lines + 1}: incomplete last line ({len(tail)} bytes, "
                "from a crash mid-write) skipped; the next write sets it aside",
                TornJournalWarning,
                stacklevel=5,
            )

    def line_at(self, offset: int) -> bytes:
        """The whole line that starts at ``offset`` (a line :meth:`read_new` has read)."""
        if self._forked():
            self._reopen_after_fork()
        fd = self._fd
        if fd is None or offset >= self._offset:
            raise JournalError(f"{self.path}: no line read at offset {offset}")
        out = bytearray()
        pos = offset
        while True:
            try:
                chunk = os.pread(fd, 64 * 1024 if not out else CHUNK, pos)
            except OSError as e:
                raise self._fail("read", e) from e
            end = chunk.find(b"\n")
            if end >= 0 or not chunk:
                out += chunk[: end if end >= 0 else len(chunk)]
                return bytes(out)
            out += chunk
            pos += len(chunk)

    def records_at(self, offset: int) -> list[dict[str, Any]]:
        """The records of the line at ``offset`` (parsed again from the file)."""
        raw = self.line_at(offset)
        record = self._parse(raw, 0)
        return record["records"] if record.get("op") == "batch" else [record]

    # -- writing ----------------------------------------------------------------------

    def repair(self) -> None:
        """Set a torn last line aside in ``<file>.torn`` and cut it off; call under
        ``locked(write=True)`` after :meth:`read_new`.

        Only a writer repairs, and only a file that is recognisably a journal
        (its header was read, or the torn bytes are the start of one).
        """
        fd = self._fd
        assert fd is not None and self._writable
        size = os.fstat(fd).st_size
        if size == self._offset:
            return
        tail = os.pread(fd, size - self._offset, self._offset)
        if not (self._is_journal or (self._offset == 0 and _HEADER_BYTES.startswith(tail))):
            raise self._not_a_journal()
        try:
            side, torn = self._open_torn()
            try:
                if self.shared() and os.fstat(side).st_uid == os.geteuid():
                    # A team's journal: the next torn line may be another member's
                    # to set aside, so .torn is the journal's group's as the journal is.
                    _keep_access(side, os.fstat(fd))
                _write_all(side, tail + b"\n")
                if self.fsync != "off":
                    os.fdatasync(side)
            finally:
                os.close(side)
            os.ftruncate(fd, self._offset)
        except OSError as e:
            raise self._fail("repair", e) from e
        self.torn_tail = 0
        warnings.warn(
            f"{self.path}, line {self._lines + 1}: incomplete last line ({len(tail)} bytes) "
            f"set aside in {torn}",
            TornJournalWarning,
            stacklevel=4,
        )

    def _open_torn(self) -> tuple[int, Path]:
        """The file torn lines are set aside in, open for appending: ``<file>.torn``, or,
        where that name is another user's file we may not write or must not trust (in
        a directory others may write, a sticky /tmp, anyone can plant it, and nobody
        but its owner can remove it), a new file of ours under a name no one could have
        planted: a planted ``.torn`` would otherwise stop every write after a crash."""
        torn = self.torn_path
        try:
            side = os.open(
                torn, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | _PLANTED, FILE_MODE
            )
        except OSError:
            # (not ours to write, a symlink, a FIFO no one reads, a directory planted in
            # its place: any name we cannot use is left for one of our own; a failure
            # that is not the name's, a full disk, fails that too and is said there)
            pass
        else:
            try:
                check_owner(side, torn, "the torn-line file")
                return side, torn
            except JournalError:
                os.close(side)
        return create_beside(torn, os.O_WRONLY | os.O_APPEND)

    def append(self, line: bytes) -> int:
        """Append one write (whole lines) and sync it as the policy says; return the
        offset it starts at. Call under ``locked(write=True)``, after :meth:`read_new`
        and :meth:`repair`, so the file ends where this journal has read.

        The line reaches the file whole or not at all: a short or failed
        ``write`` cuts the file back to its size before it.

        Raises:
            JournalError: the system refused the write (e.g. ENOSPC, EFBIG, EIO);
                nothing of it stays in the file.
        """
        fd = self._fd
        assert fd is not None and self._writable and line.endswith(b"\n")
        before = self._offset
        data = line if before else _HEADER_BYTES + line
        try:
            _write_all(fd, data)
            if self.fsync == "always" or (
                self.fsync == "batch" and self._unsynced + 1 >= BATCH_WRITES
            ):
                os.fdatasync(fd)
                self._unsynced = 0
            else:
                self._unsynced += 1
        except OSError as e:
            try:
                os.ftruncate(fd, before)
            except OSError as cut:
                raise JournalError(
                    f"cannot append to journal {self.path}: {e.strerror or e}; cutting the "
                    f"partial write off failed too ({cut.strerror or cut}): the next writer "
                    "sets it aside"
                ) from e
            raise self._fail("append to", e) from e
        if not before:
            self._is_journal = True
            self._lines = 1
            self._offset = len(_HEADER_BYTES)
        start = self._offset
        self._offset += len(line)
        self._lines += line.count(b"\n")
        return start

    def clear(self) -> None:
        """Replace the file with an empty journal, atomically, and delete ``.torn`` and
        the snapshot.

        Call under ``locked(write=True)`` after :meth:`read_new` (which refuses a
        file that is not a journal). Afterwards no file of this journal holds a
        line written before; :attr:`replaced` counts the new file.

        Why a rename and not a truncation in place: the new journal is written
        and synced under another name, then renamed over the old one, so a
        crash at any point leaves the old file or the new one, each whole.
        Cutting the file in place and writing a new header has a moment when
        the file is empty; once it grows again, a process that kept its
        offset cannot tell it from the old file. And processes with the old
        file open read it with ``pread`` at offsets they remember, outside the
        lock too (history reads): renamed away, it stays what they read, where
        a file rewritten in place would not. Under the lock each finds its
        descriptor is not the file the path names and reads the new one from
        the start (see :meth:`locked`). The new file is locked before it is
        renamed into place, so whoever opens it waits until this clear is done.

        Raises:
            JournalError: the file is someone else's (root's: the new one would
                be ours, and whoever shares it could no longer open it), or the
                system refused a step; the journal is then as it was.
        """
        fd = self._fd
        assert fd is not None and self._writable
        try:
            old = os.fstat(fd)
            head = os.pread(fd, len(_HEADER_BYTES), 0) if not self._is_journal else b""
        except OSError as e:
            raise self._fail("clear", e) from e
        if old.st_uid != os.geteuid():
            raise JournalError(
                f"cannot clear journal {self.path}: it belongs to user id {old.st_uid}, and "
                "clearing writes a new file, which would be yours; clear it as its owner"
            )
        if not _HEADER_BYTES.startswith(head):  # read_new refuses it first; to be sure
            raise self._not_a_journal()
        try:
            # A torn line may hold a cleared fact. It is never replayed, so a
            # crash after this leaves the old memory whole, only without it. So
            # may a snapshot (or one a crash left half written): a snapshot is
            # only a shortcut to replay, so without it the old memory is whole too.
            self.remove_side_files()
            new, temp = self._create_clearing()
        except OSError as e:
            raise self._fail("clear", e) from e
        try:
            fcntl.flock(new, fcntl.LOCK_EX | fcntl.LOCK_NB)  # nobody has it open yet
            _keep_access(new, old)
            _write_all(new, _HEADER_BYTES)
            if self.fsync != "off":
                os.fsync(new)  # whole on disk before its name can be the journal's
            new_id = _file_id(os.fstat(new))
            os.replace(temp, self.path)  # the one step that switches memories
        except BaseException as e:
            os.close(new)
            with suppress(OSError):
                os.unlink(temp)
            if isinstance(e, OSError):
                raise self._fail("clear", e) from e
            raise
        # Hand over at once: a descriptor dropped on the floor here would keep its
        # lock, and every process waiting for it, until this one exits.
        self._fd, self._fd_id, self._read_id = new, new_id, new_id
        # Closing the old descriptor drops its lock; the old file's blocks are freed
        # once no process has it open (the others let go on their next read or write).
        os.close(fd)
        if self.fsync != "off":  # the rename must survive a power loss too
            _fsync_dir(self.path.parent)
        self.rewind()
        self._is_journal = True
        self._offset = len(_HEADER_BYTES)
        self._lines = 1
        self._unsynced = 0
        self.replaced += 1

    def remove_side_files(self) -> None:
        """Delete the snapshot, a half-written one and ``.torn``: part of a clear, even
        of a journal deleted by hand, since each may hold every fact it held.
        ``unlink`` removes a symlink, never what it names.

        Raises:
            OSError: the system refused to delete one.
        """
        sides = [self.snapshot_path, self.torn_path]
        sides += self.left_beside(
            self.snapshot_temp_path, self.own_snapshot_path, self.clearing_path, self.torn_path
        )
        for side in sides:
            try:
                os.unlink(side)
            except FileNotFoundError:
                pass
            except PermissionError:
                # (A sticky directory: another user's file of that name, planted or a
                # team member's, is not ours to remove, and holds no fact of ours.)
                with suppress(FileNotFoundError):
                    if os.lstat(side).st_uid != os.geteuid():
                        continue
                raise

    def left_beside(self, *starts: Path) -> list[Path]:
        """Our files named ``start`` or ``start`` and an ending (see
        :func:`create_beside`): half-written snapshots or clears a crash left, each of
        which may hold every fact the journal held."""
        names = tuple(start.name for start in starts)
        found = []
        try:
            with os.scandir(self.path.parent) as entries:
                for entry in entries:
                    if entry.name in names or entry.name.startswith(tuple(n + "." for n in names)):
                        with suppress(OSError):
                            if entry.stat(follow_symlinks=False).st_uid == os.geteuid():
                                found.append(Path(entry.path))
        except OSError:
            pass
        return found

    def _create_clearing(self) -> tuple[int, Path]:
        """Create the file a clear writes, as a journal is created (its owner's, no
        symlink followed), under a name no one could have planted."""
        return create_beside(self.clearing_path, os.O_RDWR | os.O_APPEND)


def create_beside(start: Path, flags: int) -> tuple[int, Path]:
    """A new file of ours (mode 0600) named ``start`` and a random ending, opened with
    ``flags``: in a directory others may write (a sticky /tmp), any fixed name may
    already be another user's file, which we could neither open safely nor remove,
    and which would stop a clear or a snapshot for good."""
    flags |= os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | _NOFOLLOW
    while True:
        path = start.with_name(f"{start.name}.{secrets.token_hex(8)}")
        try:
            return os.open(path, flags, FILE_MODE), path
        except FileExistsError:
            continue  # (2^64 names: someone planted this one; take another)


def _keep_access(fd: int, old: os.stat_result) -> None:
    """Give the new journal the old one's group and permissions: a journal shared
    through its group stays shared. Group permissions go only with the group."""
    mode = stat.S_IMODE(old.st_mode) & 0o777
    if os.fstat(fd).st_gid != old.st_gid:
        try:
            os.fchown(fd, -1, old.st_gid)
        except PermissionError:
            mode &= ~0o070  # another group must not gain what the old one had
    os.fchmod(fd, mode)


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until all of ``data`` is written; a write of nothing is ENOSPC."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on a directory; the file's data is still synced
    finally:
        os.close(fd)


def _make_dirs(path: Path) -> None:
    """Make ``path`` and its missing parents, each readable by its owner only (a
    memory's directory is as private as its journal, whatever the umask)."""
    missing: list[Path] = []
    while not path.exists():
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    for directory in reversed(missing):
        with suppress(FileExistsError):  # another writer made it first
            directory.mkdir(mode=DIR_MODE)
