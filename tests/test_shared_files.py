"""Files nobody else controls, and a counter that cannot run past its end.

In a shared directory another user can plant a journal or its ``.torn`` side
file, or a symlink in its place; the memory must refuse them rather than read
planted facts or write its own into someone else's file. The tests that need a
second user run as root and hand files to ``nobody`` (uid 65534).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import stat
import tempfile
import traceback
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ctxneo import Memory
from ctxneo.errors import JournalError, StoreError
from ctxneo.model import MAX_SEQ, NewFact
from ctxneo.stores.journal import HEADER, SharedDirectoryWarning, TornJournalWarning
from ctxneo.stores.networkx import NetworkXStore

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="handing a file to another user needs root")


@pytest.fixture(autouse=True)
def _not_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CTXNEO_SHARED_JOURNAL", raising=False)


def _journal(path: Path, *records: dict[str, object]) -> Path:
    path.write_text(HEADER + "".join(json.dumps(r) + "\n" for r in records))
    path.chmod(0o600)
    return path


def _fact(seq: int) -> dict[str, object]:
    return {
        "op": "fact",
        "seq": seq,
        "valid_from": seq,
        "valid_to": None,
        "s": "A",
        "p": "OWNED_BY",
        "o": "B",
    }


def test_a_journal_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_bytes(b"")
    target.chmod(0o600)
    link = tmp_path / "memory.jsonl"
    link.symlink_to(target)
    with pytest.raises(JournalError, match="symlink"):
        Memory.open(link).remember("A", "OWNED_BY", "B")
    with pytest.raises(JournalError, match="symlink"):
        Memory.open(link).current("A")
    assert target.read_bytes() == b""  # nothing written through the link


def test_a_journal_others_may_write_is_refused_unless_shared_on_purpose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _journal(tmp_path / "memory.jsonl", _fact(1))
    path.chmod(0o666)
    with pytest.raises(JournalError, match="chmod go-w"):
        Memory.open(path).current("A")
    with pytest.raises(JournalError, match="CTXNEO_SHARED_JOURNAL"):
        Memory.open(path).remember("A", "OWNED_BY", "C")
    monkeypatch.setenv("CTXNEO_SHARED_JOURNAL", "1")
    assert [f.object for f in Memory.open(path).current("A")] == ["B"]


@as_root
def test_a_journal_shared_on_purpose_may_belong_to_another_user_of_our_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A team's journal belongs to whoever made it: CTXNEO_SHARED_JOURNAL=1 takes it when
    # its group is one of ours, and still refuses one whose group is not.
    path = _journal(tmp_path / "memory.jsonl", _fact(1))
    os.chown(path, NOBODY, os.getegid())
    path.chmod(0o664)
    with pytest.raises(JournalError, match="CTXNEO_SHARED_JOURNAL=1"):
        Memory.open(path).current("A")
    monkeypatch.setenv("CTXNEO_SHARED_JOURNAL", "1")
    Memory.open(path).remember("A", "OWNED_BY", "C")
    assert [f.object for f in Memory.open(path).current("A")] == ["C"]
    stranger = next(g for g in range(60000, 65000) if g != os.getegid() and g not in os.getgroups())
    os.chown(path, NOBODY, stranger)
    with pytest.raises(JournalError, match=f"group id {stranger}, neither yours"):
        Memory.open(path).current("A")


@as_root
def test_a_journal_planted_by_another_user_is_refused(tmp_path: Path) -> None:
    path = _journal(tmp_path / "memory.jsonl", _fact(1))
    os.chown(path, NOBODY, NOBODY)
    before = path.read_bytes()
    with pytest.raises(JournalError, match="belongs to user id 65534"):
        Memory.open(path).current("A")
    with pytest.raises(JournalError, match="belongs to user id 65534"):
        Memory.open(path).remember("A", "OWNED_BY", "secret")
    assert path.read_bytes() == before


def _torn_journal(tmp_path: Path) -> Path:
    path = _journal(tmp_path / "memory.jsonl", _fact(1))
    with path.open("ab") as f:
        f.write(b'{"op": "fact", "seq": 2, "s"')  # a writer killed mid-line
    return path


def _set_aside_beside(path: Path) -> bytes:
    """The torn line set aside in a file of ours under a name no one could plant, with
    the write that found it made (a planted .torn must not stop every write)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TornJournalWarning)
        Memory.open(path).remember("A", "OWNED_BY", "C")
    aside_in = re.compile(r"set aside in .*memory\.jsonl\.torn\.[0-9a-f]{16}$")
    assert any(aside_in.search(str(w.message)) for w in caught), [str(w.message) for w in caught]
    assert [f.object for f in Memory.open(path).current("A")] == ["C"]
    (aside,) = path.parent.glob("memory.jsonl.torn.*")
    assert aside.stat().st_uid == os.geteuid() and stat.S_IMODE(aside.stat().st_mode) == 0o600
    return aside.read_bytes()


def test_a_torn_line_is_never_set_aside_through_a_symlink(tmp_path: Path) -> None:
    path = _torn_journal(tmp_path)
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    (tmp_path / "memory.jsonl.torn").symlink_to(victim)
    assert _set_aside_beside(path) == b'{"op": "fact", "seq": 2, "s"\n'
    assert victim.read_bytes() == b"precious\n"


@as_root
def test_a_torn_line_file_planted_by_another_user_is_not_written_nor_in_the_way(
    tmp_path: Path,
) -> None:
    path = _torn_journal(tmp_path)
    planted = tmp_path / "memory.jsonl.torn"
    planted.write_bytes(b"")
    os.chown(planted, NOBODY, NOBODY)
    assert _set_aside_beside(path) == b'{"op": "fact", "seq": 2, "s"\n'
    assert planted.read_bytes() == b""


class Hung(BaseException):
    """Raised out of a hang (not an OSError: the code under test must not catch it)."""


@pytest.fixture
def hang_fails() -> Iterator[None]:
    """A test that would hang (opening a FIFO waits for its other end) fails instead."""

    def stop(*_: object) -> None:
        raise Hung("hung opening a planted file")

    before = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, before)


@pytest.mark.usefixtures("hang_fails")
def test_a_fifo_planted_as_the_journal_is_refused_without_waiting(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    os.mkfifo(path, 0o600)
    with pytest.raises(JournalError, match="not a regular file"):
        Memory.open(path).current("A")  # (reading opens it read-only)
    with pytest.raises(JournalError, match="not a regular file"):
        Memory.open(path).remember("A", "OWNED_BY", "B")


@pytest.mark.usefixtures("hang_fails")
def test_a_fifo_planted_as_the_torn_line_file_is_passed_by_without_waiting(
    tmp_path: Path,
) -> None:
    path = _torn_journal(tmp_path)
    os.mkfifo(tmp_path / "memory.jsonl.torn", 0o600)
    assert _set_aside_beside(path) == b'{"op": "fact", "seq": 2, "s"\n'


@pytest.fixture
def open_umask() -> Iterator[None]:
    before = os.umask(0)
    yield
    os.umask(before)


@pytest.mark.usefixtures("open_umask")
def test_new_directories_are_their_owners_only_whatever_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "memory.jsonl"
    Memory.open(path).remember("A", "OWNED_BY", "B")
    for directory in (tmp_path / "a", tmp_path / "a" / "b"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_lock_held_too_long_is_an_error_not_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _journal(tmp_path / "memory.jsonl", _fact(1))
    monkeypatch.setenv("CTXNEO_LOCK_TIMEOUT", "0.2")
    holder = os.open(path, os.O_RDONLY)  # its own open file: its own lock
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with pytest.raises(JournalError, match=r"stayed locked by another process for 0\.2 s"):
            Memory.open(path).remember("A", "OWNED_BY", "C")
    finally:
        os.close(holder)
    assert Memory.open(path).remember("A", "OWNED_BY", "C").object == "C"


def test_the_counter_stops_at_its_end_and_the_journal_still_opens(tmp_path: Path) -> None:
    path = _journal(tmp_path / "memory.jsonl", _fact(MAX_SEQ))
    before = path.read_bytes()
    memory = Memory.open(path)
    with pytest.raises(StoreError, match="used every sequence number"):
        memory.remember("A", "OWNED_BY", "C")
    with pytest.raises(StoreError, match="used every sequence number"):
        memory.retract("A", "OWNED_BY")
    assert path.read_bytes() == before  # the refused write left no line behind
    again = Memory.open(path)
    assert [(f.object, f.seq) for f in again.current("A")] == [("B", MAX_SEQ)]
    assert again.remember("A", "OWNED_BY", "B").seq == MAX_SEQ  # a restatement needs no number


def test_an_in_process_memory_refuses_past_the_counter_too() -> None:
    memory = Memory.open()
    store = memory.store
    store.seq = MAX_SEQ  # type: ignore[attr-defined]
    with pytest.raises(StoreError, match="used every sequence number"):
        memory.remember("A", "OWNED_BY", "B")
    assert memory.current("A") == []


def test_a_journal_deleted_while_open_is_made_anew_by_the_next_write(tmp_path: Path) -> None:
    """Writing on through the descriptor of a deleted file acknowledged facts no process
    could ever read again: the path holds what a process opening it afresh would read."""
    path = tmp_path / "memory.jsonl"
    memory = Memory.open(path)
    memory.remember("Kiln_4", "FIRED_BY", "Oda")
    path.unlink()
    assert memory.current("Kiln_4") == []  # the path holds nothing now
    memory.remember("Kiln_5", "FIRED_BY", "Ravi")
    with Memory.open(path) as again:
        assert [f.object for f in again.current("Kiln_5")] == ["Ravi"]
    path.unlink()
    memory.clear()  # a clear of a deleted journal, then a write: on a new file too
    memory.remember("Kiln_6", "FIRED_BY", "Ines")
    memory.close()
    with Memory.open(path) as again:
        assert [f.object for f in again.current("Kiln_6")] == ["Ines"]


def _as_user(uid: int, work: Callable[[], None]) -> None:
    """Run ``work`` in a child process as user ``uid`` (root may remove anything, so what
    another user's file does to a clear is seen only as a user); fails if ``work`` does."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        code = 1
        try:
            os.setgid(uid)
            os.setuid(uid)
            work()
            code = 0
        except BaseException:
            traceback.print_exc()  # (pytest shows the child's stderr with the failure)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


@as_root
def test_files_another_user_left_in_a_sticky_directory_do_not_stop_a_clear() -> None:
    """In /tmp anyone may make a file with any name but ours, and none of theirs can be
    removed by us: a clear must not depend on removing them, nor on a name of its own."""
    shared = Path(tempfile.mkdtemp(prefix="ctxneo-sticky-", dir="/tmp"))
    try:
        shared.chmod(0o1777)
        path = shared / "memory.jsonl"
        user = 4242

        def write() -> None:
            with NetworkXStore(path) as store:
                store.remember(NewFact("Vault_2", "CODE_HELD_BY", "Maud"))

        def clear() -> None:
            with NetworkXStore(path) as store:
                store.clear()
                assert store.current_of("Vault_2") == []
            with NetworkXStore(path) as again:
                assert again.current_of("Vault_2") == []

        # The store, not a Memory: the child, another user, may not read the package's
        # data files in a checkout made private (mktemp -d is 0700); and everything the
        # store imports is imported here first, for the same reason.
        with NetworkXStore(shared / "warm.jsonl") as warm:
            warm.remember(NewFact("A", "B", "C"))
            warm.snapshot()
            warm.clear()
        (shared / "warm.jsonl").unlink()

        def torn_then_write() -> None:
            # A crash mid-write, and a .torn someone else planted: the next write still
            # sets the torn line aside (under a name of its own) and writes.
            with path.open("ab") as f:
                f.write(b'{"op": "fact", "seq": 9, "s"')
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TornJournalWarning)
                with NetworkXStore(path) as store:
                    store.remember(NewFact("Vault_2", "CODE_HELD_BY", "Ola"))
            with NetworkXStore(path) as again:
                assert [f.object for f in again.current_of("Vault_2")] == ["Ola"]

        _as_user(user, write)
        for name in ("snapshot", "clearing", "snapshot.tmp", "torn"):
            planted = shared / f"memory.jsonl.{name}"
            planted.write_bytes(b"")
            os.chown(planted, NOBODY, NOBODY)
        _as_user(user, clear)
        _as_user(user, torn_then_write)
        assert (shared / "memory.jsonl.torn").read_bytes() == b""
    finally:
        shutil.rmtree(shared)


@pytest.mark.filterwarnings("ignore::ctxneo.stores.journal.TornJournalWarning")
def test_the_torn_line_file_of_a_shared_journal_is_the_group_s_as_the_journal_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any member's write may be the next to set a torn line aside: a .torn only its
    first maker could open would stop every other member's writes."""
    monkeypatch.setenv("CTXNEO_SHARED_JOURNAL", "1")
    path = _torn_journal(tmp_path)
    path.chmod(0o660)
    Memory.open(path).remember("A", "OWNED_BY", "C")
    torn = tmp_path / "memory.jsonl.torn"
    assert stat.S_IMODE(torn.stat().st_mode) == 0o660
    assert torn.stat().st_gid == path.stat().st_gid


def test_a_journal_in_a_directory_others_may_rename_in_is_warned_of(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another user who may rename files in the journal's directory can put an older copy
    # back over it: the memory rolls back without a word. Said once, at open; a sticky
    # directory (as /tmp) keeps others from renaming what is not theirs.
    folder = tmp_path / "open"
    folder.mkdir()
    folder.chmod(0o777)
    with pytest.warns(SharedDirectoryWarning, match="another user could replace"):
        Memory.open(folder / "m.jsonl").remember("A", "OWNED_BY", "B")
    for mode, env in ((0o1777, None), (0o777, "1"), (0o700, None)):
        folder.chmod(mode)
        if env:
            monkeypatch.setenv("CTXNEO_SHARED_JOURNAL", env)
        with warnings.catch_warnings():
            warnings.simplefilter("error", SharedDirectoryWarning)
            with Memory.open(folder / "m.jsonl") as m:
                assert m.current("A")[0].object == "B"
        monkeypatch.delenv("CTXNEO_SHARED_JOURNAL", raising=False)
