"""A clear erases, and a multi-valued declaration can be withdrawn.

Clear: no file of a journaled memory keeps a cleared byte; a crash at any
step leaves the old memory or the empty one; every process sharing the
journal, whatever it had read, sees the empty memory next and writes into the
new file. On Neo4j the namespace's nodes and relationships are gone.

Withdraw: later writes of the predicate supersede again, the values current
at the withdrawal stay, and the withdrawal is stored with the memory (in the
journal, replayed; in the export).
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import signal
import stat
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from ctxneo.cli import main
from ctxneo.errors import JournalError
from ctxneo.export import journal_lines, parse_script, write_script
from ctxneo.memory import Memory
from ctxneo.model import NewFact
from ctxneo.stores.base import Store
from ctxneo.stores.journal import HEADER
from ctxneo.stores.networkx import NetworkXStore

#: Words only the cleared memory holds: none may be in any file after the clear.
SECRETS = (b"Zanzibar_Vault", b"Quokka_Ledger", b"HAS_CIPHER", b"marmalade", b"the aubergine")


def _fill(store: Store) -> None:
    """A memory with every kind of record, each naming a secret: facts (one closed,
    with text), a declaration, an alias."""
    store.declare_multi_valued(["HAS_CIPHER"])
    store.remember(NewFact("Zanzibar_Vault", "OWNED_BY", "Team_A", text="said over marmalade"))
    store.remember(NewFact("Zanzibar_Vault", "OWNED_BY", "Quokka_Ledger"))
    store.remember(NewFact("Zanzibar_Vault", "HAS_CIPHER", "Rot13"))
    store.add_alias("the aubergine", "Zanzibar_Vault")


def _tear(path: Path) -> None:
    """Leave a torn last line naming a secret, then let a write set it aside in .torn."""
    with open(path, "ab") as f:
        f.write(b'{"op": "fact", "seq": 99, "s": "Zanzibar_Vault", "p": "OWNED_BY", "o": "Qu')
    with pytest.warns(UserWarning), NetworkXStore(path) as store:
        store.remember(NewFact("Zanzibar_Vault", "HAS_STATUS", "sealed"))
    assert b"Zanzibar_Vault" in path.with_name(path.name + ".torn").read_bytes()


def _leaked(directory: Path) -> dict[str, list[bytes]]:
    """Every file under ``directory`` that holds a secret, with the secrets it holds."""
    found: dict[str, list[bytes]] = {}
    for file in sorted(directory.rglob("*")):
        if file.is_file() and not file.is_symlink():
            held = [s for s in SECRETS if s in file.read_bytes()]
            if held:
                found[file.name] = held
    return found


def _facts(store: Store) -> list[tuple[str, str, str, int, int | None]]:
    return [(f.subject, f.predicate, f.object, f.seq, f.valid_to) for f in store.all_facts()]


# -- clear: erased ----------------------------------------------------------------------


def test_a_clear_leaves_no_cleared_byte_in_any_file(tmp_path: Path) -> None:
    path = tmp_path / "memory" / "memory.jsonl"
    with NetworkXStore(path) as store:
        _fill(store)
    _tear(path)
    assert set(_leaked(path.parent)) == {"memory.jsonl", "memory.jsonl.torn"}
    with NetworkXStore(path) as store:
        store.clear()
        # What clear keeps: nothing. Aliases and declarations go with the facts,
        # and numbering starts again.
        assert _facts(store) == [] and store.aliases() == {} and store.multi_valued() == set()
        assert store.stats()["last_seq"] == 0
    assert _leaked(path.parent) == {}
    # The journal's directory holds the journal (an empty one) and nothing else: no
    # side file, no copy, no lock file (the lock is the journal's own flock).
    assert sorted(p.name for p in path.parent.iterdir()) == ["memory.jsonl"]
    assert path.read_bytes() == HEADER.encode()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with NetworkXStore(path) as again:
        assert again.remember(NewFact("Zanzibar_Vault", "OWNED_BY", "Team_B")).seq == 1
    with NetworkXStore(path) as again:
        assert _facts(again) == [("Zanzibar_Vault", "OWNED_BY", "Team_B", 1, None)]


def test_a_clear_through_the_memory_and_the_command_line_erases_too(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    with Memory.open(path) as memory:
        _fill(memory.store)
        memory.clear()
    assert _leaked(tmp_path) == {}
    with Memory.open(path) as memory:
        _fill(memory.store)
    result = CliRunner().invoke(main, ["clear", "--yes", "--store", str(path)])
    assert result.exit_code == 0, result.output
    assert result.output == f"cleared the journal {path} (3 facts)\n"
    assert _leaked(tmp_path) == {}


def test_clearing_a_memory_never_written_creates_no_file(tmp_path: Path) -> None:
    path = tmp_path / "not" / "yet.jsonl"
    with Memory.open(path) as memory:
        memory.clear()
    assert not (tmp_path / "not").exists()


def test_a_store_that_read_past_the_new_end_reads_the_empty_memory_and_writes_into_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.jsonl"
    a, b = NetworkXStore(path), NetworkXStore(path)
    _fill(a)
    assert len(_facts(b)) == 3  # b's offset is now far past the end of an empty journal
    a.clear()
    assert _facts(b) == [] and b.aliases() == {} and b.multi_valued() == set()
    written = b.remember(NewFact("Svc", "OWNED_BY", "Team_C"))
    assert written.seq == 1
    assert _facts(a) == [("Svc", "OWNED_BY", "Team_C", 1, None)]
    a.close()
    b.close()
    with NetworkXStore(path) as c:  # a third, fresh: exactly the write made after the clear
        assert _facts(c) == [("Svc", "OWNED_BY", "Team_C", 1, None)]
    assert _leaked(tmp_path) == {}


def test_a_store_whose_offset_lands_inside_the_new_content_starts_over(tmp_path: Path) -> None:
    """A reader's offset that the new journal has grown past is no place to resume."""
    path = tmp_path / "memory.jsonl"
    a, b = NetworkXStore(path), NetworkXStore(path)
    a.remember(NewFact("Zanzibar_Vault", "OWNED_BY", "Team_A"))
    assert len(_facts(b)) == 1
    read = b._journal.offset  # type: ignore[union-attr]
    a.clear()
    for n in range(6):  # superseding values: closed facts b reads back from the file
        a.remember(NewFact("Svc", "OWNED_BY", f"Team_{n}", text=f"handed over, round {n}"))
    assert path.stat().st_size > read
    expected = [
        ("Svc", "OWNED_BY", f"Team_{n}", n + 1, None if n == 5 else n + 2) for n in range(6)
    ]
    assert _facts(b) == expected
    assert [f.object for f in b.history("Svc", "OWNED_BY")] == [f"Team_{n}" for n in range(6)]
    assert b.remember(NewFact("Svc", "OWNED_BY", "Team_B")).seq == 7
    a.close()
    b.close()
    with NetworkXStore(path) as c:
        assert len(_facts(c)) == 7 and c.history("Svc", "OWNED_BY")[-1].object == "Team_B"


def test_the_new_journal_is_locked_until_the_clear_is_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whoever opens the journal just after the rename waits for the clearer to let go."""
    path = tmp_path / "memory.jsonl"
    store = NetworkXStore(path)
    _fill(store)
    checked: list[bool] = []
    replace = os.replace

    def replacing(src: Any, dst: Any) -> None:
        replace(src, dst)
        fd = os.open(path, os.O_RDONLY)  # another open file description: its own lock
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            checked.append(True)
        finally:
            os.close(fd)

    monkeypatch.setattr(os, "replace", replacing)
    store.clear()
    monkeypatch.undo()
    assert checked == [True]
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # and free once it is done
    finally:
        os.close(fd)
    store.close()


def test_a_child_forked_before_a_clear_reads_the_new_journal(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    store, clearer = NetworkXStore(path), NetworkXStore(path)
    _fill(store)
    assert len(_facts(store)) == 3
    clearer.clear()
    clearer.remember(NewFact("Svc", "OWNED_BY", "Team_New"))
    pid = os.fork()
    if pid == 0:  # the child reopens the file by its name, and must start over
        ok = _facts(store) == [("Svc", "OWNED_BY", "Team_New", 1, None)]
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert _facts(store) == [("Svc", "OWNED_BY", "Team_New", 1, None)]
    store.close()
    clearer.close()


#: Another process: opens the journal, says what it holds, waits for a line, then
#: reads and writes, and says what it read.
OTHER = """
import sys
from ctxneo.model import NewFact
from ctxneo.stores.networkx import NetworkXStore
store = NetworkXStore(sys.argv[1])
print(store.stats()["facts"], flush=True)
sys.stdin.readline()
print(store.stats()["facts"], flush=True)
fact = store.remember(NewFact("Svc", "OWNED_BY", "Team_Other"))
print(fact.seq, flush=True)
store.close()
"""


def test_another_process_sees_the_clear_and_its_write_lands_in_the_new_journal(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.jsonl"
    with NetworkXStore(path) as store:
        _fill(store)
    other = subprocess.Popen(
        [sys.executable, "-c", OTHER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert other.stdin is not None and other.stdout is not None
    try:
        assert other.stdout.readline() == "3\n"  # it holds the old file open
        with NetworkXStore(path) as store:
            store.clear()
        other.stdin.write("go\n")
        other.stdin.flush()
        assert other.stdout.readline() == "0\n"
        assert other.stdout.readline() == "1\n"
    finally:
        other.stdin.close()
        assert other.wait(timeout=120) == 0
    with NetworkXStore(path) as store:
        assert _facts(store) == [("Svc", "OWNED_BY", "Team_Other", 1, None)]
    assert _leaked(tmp_path) == {}


#: Clears, killed (SIGKILL) at one step: after deleting .torn, before the rename that
#: switches files, or right after it.
CRASH = """
import os, signal, sys
from ctxneo.stores.networkx import NetworkXStore
path, step = sys.argv[1], sys.argv[2]
store = NetworkXStore(path)
unlink, replace = os.unlink, os.replace

def die():
    os.kill(os.getpid(), signal.SIGKILL)

def unlinking(name, *args, **kwargs):
    unlink(name, *args, **kwargs)
    if step == "torn deleted" and str(name).endswith(".torn"):
        die()

def replacing(src, dst, *args, **kwargs):
    if step == "before rename":
        die()
    replace(src, dst, *args, **kwargs)
    if step == "after rename":
        die()

os.unlink, os.replace = unlinking, replacing
store.clear()
sys.exit(3)
"""


@pytest.mark.parametrize(
    ("step", "cleared"),
    [("torn deleted", False), ("before rename", False), ("after rename", True)],
)
def test_a_clear_killed_at_any_step_leaves_the_old_memory_or_the_empty_one(
    tmp_path: Path, step: str, cleared: bool
) -> None:
    path = tmp_path / "memory.jsonl"
    with NetworkXStore(path) as store:
        _fill(store)
    _tear(path)
    watcher = NetworkXStore(path)  # has the file open throughout, like another process
    before = _facts(watcher)
    killed = subprocess.run([sys.executable, "-c", CRASH, str(path), step], timeout=120)
    assert killed.returncode == -signal.SIGKILL
    with NetworkXStore(path) as fresh:
        assert _facts(fresh) == ([] if cleared else before)
        assert fresh.multi_valued() == (set() if cleared else {"HAS_CIPHER"})
    assert _facts(watcher) == ([] if cleared else before)
    if cleared:
        assert _leaked(tmp_path) == {}
    # Either way the memory works on, and a clear now erases everything.
    watcher.remember(NewFact("Svc", "OWNED_BY", "Team_After"))
    watcher.clear()
    watcher.close()
    assert _leaked(tmp_path) == {}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.jsonl"]


def test_a_clear_keeps_the_journals_group_and_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXNEO_SHARED_JOURNAL", "1")
    path = tmp_path / "memory.jsonl"
    with NetworkXStore(path) as store:
        _fill(store)
    path.chmod(0o660)
    group = 65534 if os.geteuid() == 0 else os.getgid()  # root can hand it to nogroup
    os.chown(path, -1, group)
    with NetworkXStore(path) as store:
        store.clear()
    info = path.stat()
    assert (stat.S_IMODE(info.st_mode), info.st_gid) == (0o660, group)


def test_a_clear_never_writes_through_a_planted_symlink(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    with NetworkXStore(path) as store:
        _fill(store)
        path.with_name("memory.jsonl.clearing").symlink_to(victim)
        store.clear()
        assert _facts(store) == []
    assert victim.read_bytes() == b"precious\n"
    assert not path.is_symlink() and path.read_bytes() == HEADER.encode()


def test_a_journal_of_another_owner_is_not_replaced_by_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A root-owned journal may be read and written by a user, but a clear would make
    the file that user's, and lock out whoever else shares it: refused, unchanged."""
    path = tmp_path / "memory.jsonl"
    with NetworkXStore(path) as store:
        _fill(store)
    before = path.read_bytes()
    if path.stat().st_uid != 0:
        pytest.skip("needs a journal that belongs to root")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # a user, who may open root's journal
    with NetworkXStore(path) as store, pytest.raises(JournalError, match="clear it as its owner"):
        store.clear()
    assert path.read_bytes() == before


def test_a_journal_written_before_clears_replaced_the_file_still_opens(tmp_path: Path) -> None:
    """Older journals hold clear records (and no withdrawals): they replay as before."""
    path = tmp_path / "old.jsonl"
    records: list[dict[str, Any]] = [
        {"op": "multi", "predicate": "DEPENDS_ON"},
        {"op": "fact", "seq": 1, "valid_to": None, "s": "A", "p": "OWNED_BY", "o": "B"},
        {"op": "clear"},
        {"op": "fact", "seq": 1, "valid_to": None, "s": "A", "p": "OWNED_BY", "o": "C"},
    ]
    path.write_text(HEADER + "".join(json.dumps(r) + "\n" for r in records))
    path.chmod(0o600)
    with NetworkXStore(path) as store:
        assert _facts(store) == [("A", "OWNED_BY", "C", 1, None)]
        assert store.multi_valued() == set()
        store.clear()
    assert path.read_bytes() == HEADER.encode()


@pytest.mark.neo4j
def test_a_clear_on_neo4j_deletes_the_namespaces_nodes_and_relationships(
    neo4j_server: Any,
) -> None:
    from conftest import connect

    namespace, other = f"clear-{uuid.uuid4().hex}", f"kept-{uuid.uuid4().hex}"
    store, neighbour = connect(neo4j_server, namespace), connect(neo4j_server, other)
    try:
        _fill(store)
        neighbour.remember(NewFact("Zanzibar_Vault", "OWNED_BY", "Team_Next_Door"))

        def held(ns: str) -> tuple[int, int]:
            with store._driver.session() as session:  # type: ignore[attr-defined]
                nodes = session.run(
                    "MATCH (n) WHERE n.ns = $ns RETURN count(n) AS n", ns=ns
                ).single()
                edges = session.run(
                    "MATCH (a)-[r]-(b) WHERE a.ns = $ns OR b.ns = $ns RETURN count(r) AS n", ns=ns
                ).single()
                return nodes["n"], edges["n"]

        assert held(namespace) == (5, 6)  # 4 entities and the memory node; 3 facts both ways
        store.clear()
        assert held(namespace) == (0, 0)
        assert held(other) == (3, 2)  # another namespace is not touched
        with store._driver.session() as session:  # type: ignore[attr-defined]
            (row,) = session.run(
                "MATCH (n) WHERE n.ns = $ns AND any(k IN keys(n) WHERE toString(n[k]) "
                "CONTAINS 'aubergine' OR toString(n[k]) CONTAINS 'marmalade') RETURN count(n)",
                ns=namespace,
            )
            assert row[0] == 0
        assert not store.holds_memory()  # type: ignore[attr-defined]
        assert store.stats()["last_seq"] == 0 and store.multi_valued() == set()
        assert store.remember(NewFact("Svc", "OWNED_BY", "Team_B")).seq == 1
    finally:
        store.clear()
        neighbour.clear()
        store.close()
        neighbour.close()


# -- withdrawing a multi-valued declaration ----------------------------------------------


def test_withdrawing_makes_later_writes_supersede_and_keeps_the_current_values(
    store: Store,
) -> None:
    store.declare_multi_valued(["DEPENDS_ON", "USES"])
    store.remember(NewFact("Flow", "DEPENDS_ON", "PushGateway"))
    store.remember(NewFact("Flow", "DEPENDS_ON", "Profile_API"))
    store.withdraw_multi_valued(["dependsOn"])  # spelt as people write it, like a declaration
    assert store.multi_valued() == {"USES"}
    # Nothing closed by the withdrawal itself.
    assert {f.object for f in store.facts_of(["Flow"])} == {"PushGateway", "Profile_API"}
    # Re-stating a current value changes nothing, as ever.
    assert store.remember(NewFact("Flow", "DEPENDS_ON", "Profile_API")).seq == 2
    new = store.remember(NewFact("Flow", "DEPENDS_ON", "Queue"))
    history = store.history("Flow", "DEPENDS_ON")
    assert [(f.object, f.valid_to) for f in history] == [
        ("PushGateway", new.seq),
        ("Profile_API", new.seq),
        ("Queue", None),
    ]
    store.remember(NewFact("Flow", "DEPENDS_ON", "Cache"))
    assert [f.object for f in store.facts_of(["Flow"])] == ["Cache"]


def test_withdrawing_what_is_not_declared_changes_nothing_and_declaring_again_works(
    store: Store,
) -> None:
    store.withdraw_multi_valued(["OWNED_BY"])
    store.withdraw_multi_valued([])
    assert store.multi_valued() == set()
    store.declare_multi_valued(["TAGGED"])
    store.withdraw_multi_valued("TAGGED")
    store.declare_multi_valued(["TAGGED"])
    store.remember(NewFact("Doc", "TAGGED", "a"))
    store.remember(NewFact("Doc", "TAGGED", "b"))
    assert {f.object for f in store.facts_of(["Doc"])} == {"a", "b"}
    assert store.multi_valued() == {"TAGGED"}


def test_a_withdrawal_is_journaled_replayed_and_seen_by_other_processes(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    a, b = NetworkXStore(path), NetworkXStore(path)
    a.declare_multi_valued(["DEPENDS_ON"])
    a.remember(NewFact("Flow", "DEPENDS_ON", "X"))
    a.remember(NewFact("Flow", "DEPENDS_ON", "Y"))
    assert b.multi_valued() == {"DEPENDS_ON"}
    a.withdraw_multi_valued(["DEPENDS_ON"])
    assert b.multi_valued() == set()
    b.remember(NewFact("Flow", "DEPENDS_ON", "Z"))
    assert [f.object for f in a.facts_of(["Flow"])] == ["Z"]
    a.close()
    b.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert {"op": "single", "predicate": "DEPENDS_ON"} in lines
    with NetworkXStore(path) as again:
        assert again.multi_valued() == set()
        assert [(f.object, f.valid_to) for f in again.history("Flow")] == [
            ("X", 3),
            ("Y", 3),
            ("Z", None),
        ]


def test_an_export_keeps_values_current_after_a_withdrawal(tmp_path: Path) -> None:
    """The memory written out (journal or script) reads back the same: the two values
    stay current although the predicate is single-valued again."""
    source = NetworkXStore()
    source.declare_multi_valued(["DEPENDS_ON", "USES"])
    source.remember(NewFact("Flow", "DEPENDS_ON", "X"))
    source.remember(NewFact("Flow", "DEPENDS_ON", "Y"))
    source.remember(NewFact("Flow", "USES", "Lib"))
    source.withdraw_multi_valued(["DEPENDS_ON"])
    image = source.image()
    path = tmp_path / "exported.jsonl"
    path.write_text("".join(journal_lines(image)))
    path.chmod(0o600)
    with NetworkXStore(path) as back:
        assert back.image() == image
        back.remember(NewFact("Flow", "DEPENDS_ON", "Z"))  # and it supersedes both
        assert [f.object for f in back.facts_of(["Flow"])] == ["Z", "Lib"]
    script = io.StringIO()
    write_script(image, script, "ns")
    assert parse_script(script.getvalue())[1] == image


@pytest.mark.neo4j
def test_a_withdrawal_on_neo4j_is_seen_by_another_client(neo4j_server: Any) -> None:
    from conftest import connect

    namespace = f"withdraw-{uuid.uuid4().hex}"
    one, two = connect(neo4j_server, namespace), connect(neo4j_server, namespace)
    try:
        one.declare_multi_valued(["DEPENDS_ON"])
        one.remember(NewFact("Flow", "DEPENDS_ON", "X"))
        one.remember(NewFact("Flow", "DEPENDS_ON", "Y"))
        two.withdraw_multi_valued(["DEPENDS_ON"])
        assert one.multi_valued() == set()
        one.remember(NewFact("Flow", "DEPENDS_ON", "Z"))
        assert [(f.object, f.valid_to) for f in two.history("Flow")] == [
            ("X", 3),
            ("Y", 3),
            ("Z", None),
        ]
    finally:
        one.clear()
        one.close()
        two.close()


# -- the command line -----------------------------------------------------------------------


def run(*args: str, code: int = 0) -> Result:
    env = {"CTXNEO_STORE": None, "NEO4J_URI": None, "NEO4J_PASSWORD": None}
    result = CliRunner(env=env).invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def test_declare_multi_withdraw_on_the_command_line(tmp_path: Path) -> None:
    store = str(tmp_path / "m.jsonl")
    run("declare-multi", "DEPENDS_ON", "USES", "--store", store)
    run("remember", "Flow", "USES", "A", "--store", store)
    run("remember", "Flow", "USES", "B", "--store", store)
    assert run("declare-multi", "--withdraw", "USES", "--store", store).output == (
        "multi-valued: DEPENDS_ON\n"
    )
    with Memory.open(store) as memory:
        assert [f.object for f in memory.current("Flow", "USES")] == ["A", "B"]
    out = run("remember", "Flow", "USES", "C", "--store", store).output
    assert "closed #1" in out and "closed #2" in out
    withdrawn = run("declare-multi", "--withdraw", "DEPENDS_ON", "--json", "--store", store)
    assert json.loads(withdrawn.output) == {"multi_valued": []}
    again = run("declare-multi", "--withdraw", "USES", "--store", store)
    assert again.stdout == "multi-valued: none\n"
    assert again.stderr == "note: not declared multi-valued: USES\n"  # (withdrawn already)
    helped = run("declare-multi", "--help").output
    assert "--withdraw" in helped and "stay" in helped
    missing = tmp_path / "none.jsonl"
    failed = run("declare-multi", "--withdraw", "USES", "--store", str(missing), code=1)
    assert failed.stderr.startswith("Error: ") and not missing.exists()
    run("declare-multi", "--withdraw", "--store", store, code=2)
