"""Size, load time and lookup latency of the shipped word-vector table.

A measurement, not a test. Loads the table in fresh subprocesses (so the load is
cold for Python, warm for the page cache), then times per call, as p50/p95: a
word's first ``vector`` (half of them whole vocabulary words, half invented
compounds that need a WordPiece split), ``similarity`` of a new pair of cached
words, and ``similarity`` of a pair seen before.

    python scripts/measure_word_vectors.py
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxneo.meaning import WordVectors  # noqa: E402

LOAD = (
    "import time; from ctxneo.meaning import WordVectors; "
    "w, c = time.perf_counter(), time.process_time(); WordVectors.default(); "
    "print(time.perf_counter() - w, time.process_time() - c)"
)


def quantiles(samples: list[float]) -> str:
    cuts = statistics.quantiles(samples, n=100)
    return f"p50 {cuts[49] * 1e6:.1f} µs, p95 {cuts[94] * 1e6:.1f} µs"


def main() -> None:
    size = len(resources.files("ctxneo").joinpath("data/word_vectors.npz").read_bytes())
    print(f"table: {size:,} bytes ({size / 1e6:.2f} MB)")

    walls, cpus = [], []
    for _ in range(9):
        out = subprocess.run([sys.executable, "-c", LOAD], capture_output=True, text=True)
        wall, cpu = map(float, out.stdout.split())
        walls.append(wall)
        cpus.append(cpu)
    ms = 1e3
    print(
        f"WordVectors.default() in a fresh process ({len(walls)} runs): median "
        f"{statistics.median(walls) * ms:.1f} ms wall (min {min(walls) * ms:.1f}), "
        f"{statistics.median(cpus) * ms:.1f} ms CPU (min {min(cpus) * ms:.1f})"
    )

    m = WordVectors.default()
    words = sorted(p for p in m._index if p.isalpha() and p.isascii() and len(p) > 2)
    rng = random.Random(0)
    # Half whole words, half invented compounds that need a WordPiece split.
    pool = rng.sample(words, 2000) + [
        a + b for a, b in zip(rng.sample(words, 2000), rng.sample(words, 2000), strict=True)
    ]
    pairs = [(rng.choice(pool), rng.choice(pool)) for _ in range(20_000)]

    clock = time.perf_counter
    cold, warm, again = [], [], []
    for w in pool:  # a word's first lookup: split, rows gathered, mean, normalised
        t = clock()
        m.vector(w)
        cold.append(clock() - t)
    for a, b in pairs:  # both word vectors cached, the pair not: the dot product
        t = clock()
        m.similarity(a, b)
        warm.append(clock() - t)
    for a, b in pairs:
        t = clock()
        m.similarity(a, b)
        again.append(clock() - t)
    print(f"vector(word), first lookup: {quantiles(cold)} ({len(pool):,} words, half split)")
    print(f"similarity, words cached, pair new: {quantiles(warm)} ({len(pairs):,} pairs)")
    print(f"similarity, pair cached: {quantiles(again)}")


if __name__ == "__main__":
    main()
