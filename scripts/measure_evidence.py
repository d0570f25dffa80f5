"""Measure what ``ask(k=3)`` sends an LLM on a sample of the training corpus (never
reported as accuracy): how often the facts a question needs are all in the context, and
at how many tokens, beside the raw dump's.

    python scripts/measure_evidence.py --offset 5      # every sixth file of train/
    python scripts/measure_evidence.py --offset 2      # another sixth
    python scripts/measure_evidence.py --every 1       # all of it (a few minutes)

How the facts sent beside several readings were chosen (``Reader._around``): each
design's recall@3 and tokens@3 on the two samples above, against the design before
(run with ``PYTHONPATH`` set to a checkout of it); the facts added beside an UNKNOWN
(``AROUND_UNSURE``) on all of it too. Keys are
read to grade, as in the benchmark; answers are not changed by what is sent.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from ctxneo.bench import harness

from ctxneo.memory import Memory
from ctxneo.scenarios import load_suite
from ctxneo.stores.networkx import NetworkXStore

ROOT = Path(__file__).resolve().parents[1]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", default=str(ROOT / "train"), help="a folder of scenario files")
    ap.add_argument("--every", type=int, default=6, help="take every N-th file (default 6)")
    ap.add_argument("--offset", type=int, default=0, help="starting at this one (default 0)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    files = sorted(Path(args.train).glob("*.json"))[args.offset :: max(1, args.every)]
    # Only recall at k = 3 is measured: one more ask per question, not seven.
    harness.EVIDENCE_AT = (("3", 3, None),)
    recalled: dict[str, list[bool]] = defaultdict(list)
    tokens: list[int] = []
    raw: list[int] = []
    for path in files:
        for scenario in load_suite([path]):
            memory = Memory(NetworkXStore())
            try:
                records = harness.run_graph(scenario, memory, "networkx")
            finally:
                memory.close()
            measured = set()
            for r in records:
                if r.recall:
                    recalled[r.query_type].append(r.recall["3"])
                    tokens.append(r.context_tokens["3"])
                    measured.add(r.turn_id)
            # (the raw dump's tokens over the same questions)
            raw += [r.tokens for r in harness.run_flat(scenario, "raw") if r.turn_id in measured]
    hits = [ok for oks in recalled.values() for ok in oks]
    if not hits:
        print("no question with required facts in the files given", file=sys.stderr)
        return 1
    out = {
        "files": len(files),
        "questions": len(hits),
        "recall@3": round(sum(hits) / len(hits), 4),
        "tokens@3": round(statistics.mean(tokens), 1),
        "raw_dump_tokens": round(statistics.mean(raw), 1) if raw else None,
        "by_type": {t: f"{sum(oks)}/{len(oks)}" for t, oks in sorted(recalled.items())},
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(
            f"{out['files']} files, {out['questions']} questions: recall@3 "
            f"{out['recall@3']:.1%} at {out['tokens@3']} tokens "
            f"(raw dump {out['raw_dump_tokens']} tokens)"
        )
        for t, share in out["by_type"].items():
            print(f"  {t:>13}: {share}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
