"""Move a memory between stores: a Cypher script of an embedded memory, and a journal of a
Neo4j memory.

The script recreates the memory exactly: the schema first, then the namespace's
memory node (counter, multi-valued predicates), the entities (with their
index stems and aliases), then every fact, current and closed, with all its
properties. Values are Cypher string literals escaped here (quotes,
backslashes, control characters; other unicode is written as is); the only
identifiers written are predicates, validated first and backquoted. Facts are
grouped by predicate into ``UNWIND`` batches, so the script also runs with
``cypher-shell -f`` on any Neo4j 5.26+.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ctxneo import cypher
from ctxneo.model import Fact, check_predicate
from ctxneo.stores.base import Store
from ctxneo.stores.journal import HEADER, fact_record
from ctxneo.stores.neo4j import search_text

BATCH = 500
_ESCAPES = {
    "\\": "\\\\",
    "'": "\\'",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def literal(value: Any) -> str:
    """A Cypher literal for a string, int, bool, None, list or map of those."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        escaped = "".join(_ESCAPES.get(ch, ch) for ch in value)
        escaped = _CONTROL.sub(lambda m: f"\\u{ord(m.group(0)):04x}", escaped)
        return f"'{escaped}'"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"`{k}`: {literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no Cypher literal for {type(value).__name__}")


def _batches(rows: list[Any], size: int = BATCH) -> Iterator[list[Any]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def cypher_statements(store: Store, namespace: str = "default") -> Iterator[str]:
    """The statements that recreate ``store``'s memory in a Neo4j namespace, in order."""
    facts = list(store.all_facts())
    aliases = store.aliases()
    stats = store.stats()
    yield from cypher.statements("schema")
    predicates = sorted({f.predicate for f in facts})
    yield (
        f"MERGE (m:CtxneoMemory {{ns: {literal(namespace)}}}) "
        f"SET m.seq = {literal(stats['last_seq'])}, "
        f"m.multi = {literal(sorted(store.multi_valued()))}, m.predicates = {literal(predicates)}"
    )
    names = sorted({f.subject for f in facts} | {f.object for f in facts} | set(aliases))
    entities = [
        {
            "name": n,
            "search": search_text(namespace, n, *aliases.get(n, ())),
            "aliases": list(aliases.get(n, ())),
        }
        for n in names
    ]
    for rows in _batches(entities):
        yield (
            f"UNWIND {literal(rows)} AS e "
            f"MERGE (n:Entity {{ns: {literal(namespace)}, name: e.name}}) "
            "SET n.search = e.search, n.aliases = e.aliases"
        )
    by_predicate: dict[str, list[Fact]] = {}
    for f in facts:
        by_predicate.setdefault(check_predicate(f.predicate), []).append(f)
    for predicate, group in sorted(by_predicate.items()):
        rows = [f.to_dict() for f in group]
        for batch in _batches(rows):
            yield (
                f"UNWIND {literal(batch)} AS f "
                f"MATCH (s:Entity {{ns: {literal(namespace)}, name: f.subject}}) "
                f"MATCH (o:Entity {{ns: {literal(namespace)}, name: f.object}}) "
                f"CREATE (s)-[r:`{predicate}`]->(o) "
                "SET r.seq = f.seq, r.valid_from = f.valid_from, r.valid_to = f.valid_to, "
                "r.speaker = f.speaker, r.turn_id = f.turn_id, r.fact_id = f.fact_id"
            )


NAMESPACE_HEADER = "// ctxneo namespace: "


def write_script(statements: Iterable[str], out: Any, namespace: str) -> int:
    """Write statements as a script (``;`` after each); return how many.

    A comment names the namespace, so ``ctxneo load`` can refuse to load into
    one that already holds a memory (which would duplicate every fact).
    """
    out.write("// ctxneo memory export: run with `cypher-shell -f FILE` or `ctxneo load FILE`.\n")
    out.write(NAMESPACE_HEADER + json.dumps(namespace) + "\n")
    count = 0
    for statement in statements:
        out.write(statement + ";\n")
        count += 1
    return count


def script_namespace(text: str) -> str | None:
    """The namespace a script written by :func:`write_script` loads into, if it says."""
    for line in text.splitlines()[:5]:
        if line.startswith(NAMESPACE_HEADER):
            value = json.loads(line[len(NAMESPACE_HEADER) :])
            return value if isinstance(value, str) else None
    return None


def split_statements(text: str) -> list[str]:
    """Split a Cypher script at ``;`` outside strings, quoted names and comments."""
    statements: list[str] = []
    current: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "'\"`":
            end = i + 1
            while end < n and text[end] != ch:
                end += 2 if text[end] == "\\" and ch != "`" else 1
            current.append(text[i : end + 1])
            i = end + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif ch == ";":
            statements.append("".join(current).strip())
            current = []
            i += 1
        else:
            current.append(ch)
            i += 1
    statements.append("".join(current).strip())
    return [s for s in statements if s]


def write_journal(store: Store, path: str | Path) -> int:
    """Write ``store``'s memory as a journal the embedded store opens; return the fact count."""
    facts = list(store.all_facts())
    last = store.stats()["last_seq"]
    lines = [HEADER.rstrip("\n")]
    lines += [json.dumps({"op": "multi", "predicate": p}) for p in sorted(store.multi_valued())]
    lines += [json.dumps(fact_record(f), ensure_ascii=False) for f in facts]
    for entity, phrases in store.aliases().items():
        lines += [
            json.dumps({"op": "alias", "phrase": p, "entity": entity}, ensure_ascii=False)
            for p in phrases
        ]
    if last > max((max(f.seq, f.valid_to or 0) for f in facts), default=0):
        lines.append(json.dumps({"op": "tick", "at": last}))  # a final retraction's number
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(facts)
