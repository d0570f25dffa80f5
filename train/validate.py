#!/usr/bin/env python3
"""Check scenario files written for the ctxneo corpora (stand-alone; needs only Python).

Usage: python validate.py FILE_OR_DIR [...]

Prints one line per problem (file, scenario, turn, field) and, at the end, counts of
graded questions by query_type. Exit status 1 when any problem was found.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

FORMAT = "ctxneo-scenarios/1"
PREDICATE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,99}")
TYPES = {
    "direct",
    "join",
    "chain3",
    "history",
    "history_join",
    "multi",
    "count",
    "yesno",
    "confirm",
    "described",
    "provenance",
    "unanswerable",
}
problems: list[str] = []
counts: Counter[str] = Counter()
domains: set[str] = set()


def bad(where: str, msg: str) -> None:
    problems.append(f"{where}: {msg}")


def check_file(path: Path) -> None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        bad(str(path), f"not readable JSON: {e}")
        return
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        bad(str(path), f'"format" must be "{FORMAT}"')
        return
    if isinstance(doc.get("domain"), str):
        domains.add(doc["domain"])
    else:
        bad(str(path), 'add a top-level "domain" string naming the domain of the file')
    scenarios = doc.get("scenarios")
    if not isinstance(scenarios, list) or not scenarios:
        bad(str(path), '"scenarios" must be a non-empty list')
        return
    names = set()
    for s in scenarios:
        name = s.get("name")
        where = f"{path}: scenario {name!r}"
        if not isinstance(name, str) or not name or name in names:
            bad(where, "name missing or repeated")
        names.add(name)
        multi = s.get("multi_valued_predicates", [])
        if not isinstance(multi, list) or not all(
            isinstance(p, str) and PREDICATE.fullmatch(p) for p in multi
        ):
            bad(where, "multi_valued_predicates must be a list of predicate names")
        last = None
        facts: dict[str, dict] = {}
        names_seen: set[str] = set()
        speakers: set[str] = set()
        for t in s.get("turns", []):
            tid = t.get("turn_id")
            w = f"{where} turn {tid}"
            if (
                not isinstance(tid, int)
                or isinstance(tid, bool)
                or (last is not None and tid <= last)
            ):
                bad(w, "turn_id must be an integer, increasing")
            last = tid if isinstance(tid, int) else last
            kind = t.get("turn_type")
            for key in ("speaker", "text"):
                if not isinstance(t.get(key), str) or not t[key].strip():
                    bad(w, f"{key} must be a non-empty string")
            if kind == "fact":
                for key in ("subject", "predicate", "object", "fact_id"):
                    if not isinstance(t.get(key), str) or not t[key].strip():
                        bad(w, f"{key} must be a non-empty string")
                if isinstance(t.get("predicate"), str) and not PREDICATE.fullmatch(t["predicate"]):
                    bad(w, "predicate must be letters, digits, underscores, starting with a letter")
                if "retract" in t and not isinstance(t["retract"], bool):
                    bad(w, "retract must be true or false")
                if t.get("fact_id") in facts:
                    bad(w, "fact_id repeated")
                facts[t.get("fact_id")] = t
                names_seen.update(str(t.get(k)) for k in ("subject", "object"))
                speakers.add(str(t.get("speaker")))
            elif kind == "query":
                qt = t.get("query_type")
                if qt not in TYPES:
                    bad(w, f"query_type must be one of {sorted(TYPES)}")
                req = t.get("required_fact_ids", [])
                if not isinstance(req, list) or any(r not in facts for r in req):
                    bad(w, "required_fact_ids must name facts stated before the query")
                gt = t.get("ground_truth")
                items = [gt] if isinstance(gt, str) else gt
                if (
                    not isinstance(items, list)
                    or not items
                    or not all(isinstance(i, str) and i.strip() for i in items)
                ):
                    bad(w, "ground_truth must be a non-empty string or list of strings")
                    continue
                counts[qt] += 1
                if qt == "unanswerable":
                    if items != ["UNKNOWN"]:
                        bad(w, 'an unanswerable question has ground_truth "UNKNOWN"')
                    continue
                if not req:
                    bad(w, "an answerable question lists the facts it needs")
                if qt == "count":
                    if not items[0].isdigit():
                        bad(w, "a count's first ground_truth item is the number, in digits")
                    continue
                if qt in ("yesno", "confirm"):
                    if items[0].lower() not in ("yes", "no"):
                        bad(w, 'a yes/no question\'s first ground_truth item is "yes" or "no"')
                    items = items[1:]
                if qt == "multi" and items == ["none"]:
                    continue
                pool = names_seen | (speakers if qt == "provenance" else set())
                for i in items:
                    if not any(i.lower() in n.lower() for n in pool):
                        bad(
                            w,
                            f"ground_truth {i!r} is not part of any stated subject or object"
                            + (" or speaker" if qt == "provenance" else ""),
                        )
            elif kind == "distractor":
                extra = [
                    k
                    for k in ("subject", "predicate", "object", "fact_id", "ground_truth")
                    if k in t
                ]
                if extra:
                    bad(w, f"a distractor carries no {extra[0]}")
            else:
                bad(w, "turn_type must be fact, distractor or query")


def main() -> int:
    for arg in sys.argv[1:]:
        p = Path(arg)
        for f in sorted(p.glob("*.json")) if p.is_dir() else [p]:
            check_file(f)
    for line in problems:
        print(line)
    total = sum(counts.values())
    print(f"{len(problems)} problems; {total} graded questions over {len(domains)} domains")
    for k, v in sorted(counts.items()):
        print(f"  {k}: {v}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
