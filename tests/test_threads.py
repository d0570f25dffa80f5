"""Many threads at once: MCP tools run in worker threads, so the words code and the
answerer must give every thread the answer it gives one thread alone."""

from __future__ import annotations

import random
import string
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import snowballstemmer

from ctxneo import UNKNOWN, Memory
from ctxneo.text import stem


@pytest.fixture(autouse=True)
def _switch_often() -> Iterator[None]:
    # Threads switch every 5 ms by default, far longer than one stem takes:
    # switching every microsecond makes an unsafe interleaving likely at once.
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def _new_words(count: int, seed: int) -> list[str]:
    # Words no cache has seen, long enough to exercise every Snowball step.
    rng = random.Random(seed)
    suffixes = ["ational", "ization", "fulness", "ing", "edly", "ousness", "ivities", "s"]
    return [
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(4, 9))) + rng.choice(suffixes)
        for _ in range(count)
    ]


def test_stems_from_many_threads_are_the_stems_of_one() -> None:
    words = _new_words(4000, seed=7)
    alone = snowballstemmer.stemmer("english")
    expected = [alone.stemWord(word) for word in words]
    chunks = [words[i::8] for i in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda chunk: [stem(word) for word in chunk], chunks))
    got = {
        word: s
        for chunk, stems in zip(chunks, results, strict=True)
        for word, s in zip(chunk, stems, strict=True)
    }
    assert [got[word] for word in words] == expected


def test_the_stems_are_the_pure_python_snowball_stems() -> None:
    # PyStemmer (a dependency, in C) is what snowballstemmer hands out when installed:
    # it must stem as the reference implementation does, or a journal written with one
    # and read with the other would not find its own names.
    from snowballstemmer.english_stemmer import EnglishStemmer

    reference = EnglishStemmer()
    words = [*_new_words(4000, seed=3), "running", "agreed", "generously", "dying", "skies"]
    assert [stem(w) for w in words] == [reference.stemWord(w) for w in words]


def test_asking_from_many_threads_gives_every_thread_the_same_answers() -> None:
    memory = Memory.open()
    for i in range(30):
        memory.remember(f"Service_{i:02d}", "OWNED_BY", f"Team_{i % 7}")
        memory.remember(f"Service_{i:02d}", "DEPENDS_ON", f"Service_{(i + 1) % 30:02d}")
    # Each question carries words nobody has stemmed yet (stems are cached, so the
    # answers asked alone use other new words of the same kind).

    def questions(seed: int) -> list[str]:
        words = _new_words(1200, seed=seed)
        return [
            f"who owns service {i % 30:02d}, the {' '.join(words[3 * i : 3 * i + 3])} one?"
            for i in range(400)
        ]

    alone = [memory.ask(q).answer for q in questions(seed=11)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(lambda q: memory.ask(q).answer, questions(seed=12)))
    assert together == alone


#: Two states of one memory, each answering the question below alone: the service
#: Checkout depends on is Payments, owned by Team_Red (A), or Ledger, owned by Team_Blue,
#: while Payments has passed to Team_Green (B).
_STATE_A = [("Checkout", "DEPENDS_ON", "Payments"), ("Payments", "OWNED_BY", "Team_Red")]
_STATE_B = [("Checkout", "DEPENDS_ON", "Ledger"), ("Payments", "OWNED_BY", "Team_Green")]


_FLIP_IN_ANOTHER_PROCESS = """
import sys
from pathlib import Path
from ctxneo import Memory
memory = Memory.open(sys.argv[1], fsync="off")
a, b = {a!r}, {b!r}
print("flipping", flush=True)
for _ in range(2000):
    if Path(sys.argv[2]).exists():
        break
    memory.remember_many(b)
    memory.remember_many(a)
"""


@pytest.mark.parametrize("writer", ["another thread", "another process"])
def test_an_answer_reads_one_state_of_the_memory_while_it_is_written(
    tmp_path: Path, writer: str
) -> None:
    # An answer that read its first hop in one state and its second in the other joins
    # Checkout -> Payments with Payments -> Team_Green: an answer no state ever gave.
    # Without one state per answer, 5-25% of the answers here were Team_Green.
    sys.setswitchinterval(1e-4)  # (every microsecond, as the other tests here: too slow)
    path = tmp_path / "memory.jsonl"
    memory = Memory.open(path, fsync="off")
    memory.remember_many([*_STATE_A, ("Ledger", "OWNED_BY", "Team_Blue")])
    memory.ask("Who owns Ledger?")  # (the reader made before the writes start)
    stop = tmp_path / "stop"
    if writer == "another thread":

        def flip() -> None:
            for _ in range(2000):  # (bounded: each flip adds to the slots' histories)
                if stop.exists():
                    return
                memory.remember_many(_STATE_B)
                memory.remember_many(_STATE_A)

        flipping = threading.Thread(target=flip)
        flipping.start()
        wait = flipping.join
    else:
        script = _FLIP_IN_ANOTHER_PROCESS.format(a=_STATE_A, b=_STATE_B)
        child = subprocess.Popen(
            [sys.executable, "-c", script, str(path), str(stop)], stdout=subprocess.PIPE, text=True
        )
        assert child.stdout is not None and child.stdout.readline() == "flipping\n"
        wait = child.wait  # type: ignore[assignment]
    try:
        question = "Which team owns the service that Checkout depends on?"
        answers = Counter(memory.ask(question).answer for _ in range(40))
    finally:
        stop.touch()
        wait()
    assert set(answers) <= {"Team_Red", "Team_Blue", UNKNOWN}, answers
    assert answers["Team_Red"] + answers["Team_Blue"] > 0, answers


_FORK_WHILE_THE_READER_IS_MADE = r"""
import os, signal, sys, threading, time
from ctxneo import Memory
m = Memory.open(sys.argv[1])
m.remember("Atlas", "USES_DATABASE", "Postgres")
first = threading.Thread(target=lambda: m.ask("What database does Atlas use?"))
first.start()
deadline = time.monotonic() + 10
while not m._reader_lock.locked() and time.monotonic() < deadline:
    time.sleep(0.0001)
pid = os.fork()
if pid == 0:
    signal.alarm(60)  # (a child that waits for ever is killed, and the test fails)
    print(m.ask("What database does Atlas use?").answer, flush=True)
    os._exit(0)
first.join()
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="fork")
def test_a_fork_while_another_thread_makes_the_reader_leaves_the_child_able_to_ask(
    tmp_path: Path,
) -> None:
    """The README promises a memory safe across fork(): a child forked while another
    thread was making the reader (importing the answering code, loading its model, under
    locks that thread holds) answers, where it waited for ever on a lock copied held."""
    for trial in range(2):
        out = subprocess.run(
            [sys.executable, "-c", _FORK_WHILE_THE_READER_IS_MADE, str(tmp_path / f"m{trial}")],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == "Postgres"
