"""Move a memory between stores and files: journals (JSON lines) and Cypher scripts.

Two file formats carry a whole memory (a :class:`~ctxneo.stores.base.MemoryImage`):

- **the journal**, the embedded store's own file: what ``ctxneo export
  --from-uri`` writes and what ``ctxneo load`` reads first;
- **a Cypher script** for ``cypher-shell -f``: the schema, the namespace's
  memory node (counter, multi-valued predicates), the entities (index stems,
  aliases), then every fact, current and closed, grouped by predicate into
  ``UNWIND`` batches. Values are Cypher literals escaped here; the only
  identifiers written are predicates, validated and backquoted.

``ctxneo load`` never runs a file's text. A script is *parsed*: every
statement must have exactly one of the shapes :func:`cypher_statements`
writes, and only the literal values in it are read. Whatever the file, the
memory it holds is then checked like a journal on replay (names, types,
sequence numbers, one current value per single-valued key) before one
transaction writes it with ctxneo's own parameterized statements. Anything
else is refused with :class:`~ctxneo.errors.LoadFileError`.

Files are written beside their destination and linked into place, so an
export that fails leaves nothing half-written, and an existing file is
replaced only when the caller says so (``force``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import string
import tempfile
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from ctxneo import cypher
from ctxneo.errors import CtxneoError, JournalError, LoadFileError
from ctxneo.model import PREDICATE_PATTERN, Fact
from ctxneo.stores.base import MemoryImage
from ctxneo.stores.journal import FILE_MODE, FORMAT, HEADER, fact_record
from ctxneo.stores.neo4j import search_text
from ctxneo.stores.networkx import NetworkXStore

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

SCRIPT_HEADER = "// ctxneo memory export: run with `cypher-shell -f FILE` or `ctxneo load FILE`."
FORMAT_LINE = "// format: ctxneo-cypher/2"
#: Format 1 (before facts kept the words they were said in) is read too.
FORMAT_LINES = ("// format: ctxneo-cypher/1", FORMAT_LINE)
NAMESPACE_HEADER = "// ctxneo namespace: "

# The statements a script holds besides the schema: the writer formats them,
# the parser matches them field by field. Fields hold one Cypher literal each,
# except {predicate}, a validated relationship type.
MEMORY = (
    "MERGE (m:CtxneoMemory {{ns: {ns}}}) "
    "SET m.seq = {seq}, m.multi = {multi}, m.predicates = {predicates}"
)
ENTITIES = (
    "UNWIND {rows} AS e MERGE (n:Entity {{ns: {ns}, name: e.name}}) "
    "SET n.search = e.search, n.aliases = e.aliases"
)
FACTS = (
    "UNWIND {rows} AS f "
    "MATCH (s:Entity {{ns: {ns}, name: f.subject}}) "
    "MATCH (o:Entity {{ns: {ns}, name: f.object}}) "
    "CREATE (s)-[r:`{predicate}`]->(o) "
    "SET r.seq = f.seq, r.valid_from = f.valid_from, r.valid_to = f.valid_to, "
    "r.speaker = f.speaker, r.turn_id = f.turn_id, r.fact_id = f.fact_id, r.text = f.text"
)
#: The facts statement of format 1 (facts without the words they were said in): still read.
FACTS_V1 = FACTS.removesuffix(", r.text = f.text")
_ENTITY_KEYS = ("name", "search", "aliases")
_FACT_KEYS = (
    "subject",
    "predicate",
    "object",
    "seq",
    "valid_from",
    "valid_to",
    "speaker",
    "turn_id",
    "fact_id",
    "text",
)
_FACT_KEYS_V1 = _FACT_KEYS[:-1]


# -- writing ------------------------------------------------------------------------


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


def cypher_statements(image: MemoryImage, namespace: str = "default") -> Iterator[str]:
    """The statements that recreate ``image`` in a Neo4j namespace, in order."""
    yield from cypher.statements("schema")
    ns = literal(namespace)
    yield MEMORY.format(
        ns=ns,
        seq=literal(image.last_seq),
        multi=literal(sorted(image.multi)),
        predicates=literal(image.predicates),
    )
    entities = [
        {
            "name": n,
            "search": search_text(namespace, n, *image.aliases.get(n, ())),
            "aliases": list(image.aliases.get(n, ())),
        }
        for n in image.entities
    ]
    for rows in _batches(entities):
        yield ENTITIES.format(rows=literal(rows), ns=ns)
    by_predicate: dict[str, list[Fact]] = {}
    for f in image.facts:
        by_predicate.setdefault(f.predicate, []).append(f)
    for predicate, group in sorted(by_predicate.items()):
        if not PREDICATE_PATTERN.fullmatch(predicate):
            raise CtxneoError(f"predicate {predicate!r} cannot be a relationship type")
        for batch in _batches([f.to_dict() for f in group]):
            yield FACTS.format(rows=literal(batch), ns=ns, predicate=predicate)


def write_script(image: MemoryImage, out: IO[str], namespace: str) -> int:
    """Write ``image`` as a script (``;`` after each statement); return how many.

    Comments name the format and the namespace, so ``ctxneo load`` knows the
    file and where it was meant to go.
    """
    out.write(SCRIPT_HEADER + "\n")
    out.write(FORMAT_LINE + "\n")
    out.write(NAMESPACE_HEADER + json.dumps(namespace) + "\n")
    count = 0
    for statement in cypher_statements(image, namespace):
        out.write(statement + ";\n")
        count += 1
    return count


def withdrawn(multi: Collection[str], current: Iterable[tuple[str, str]]) -> list[str]:
    """The predicates, of the (subject, predicate) of each current fact, that hold
    several current values of one subject though not multi-valued (declared, then
    withdrawn: the values stay). A memory written out declares them while its facts
    are written and withdraws them after, or replay would take it for a broken one."""
    seen: set[tuple[str, str]] = set()
    found: set[str] = set()
    for key in current:
        if key[1] not in multi:
            if key in seen:
                found.add(key[1])
            seen.add(key)
    return sorted(found)


def journal_lines(image: MemoryImage) -> Iterator[str]:
    """``image`` as the lines of a journal the embedded store opens (each with its newline)."""
    yield HEADER
    single = withdrawn(
        image.multi, ((f.subject, f.predicate) for f in image.facts if f.valid_to is None)
    )
    for p in sorted(image.multi | set(single)):
        yield json.dumps({"op": "multi", "predicate": p}) + "\n"
    for f in image.facts:
        yield json.dumps(fact_record(f), ensure_ascii=False) + "\n"
    for p in single:
        yield json.dumps({"op": "single", "predicate": p}) + "\n"
    for entity, phrases in image.aliases.items():
        for phrase in phrases:
            record = {"op": "alias", "phrase": phrase, "entity": entity}
            yield json.dumps(record, ensure_ascii=False) + "\n"
    if image.last_seq > max((f.seq for f in image.facts), default=0):
        yield json.dumps({"op": "tick", "at": image.last_seq}) + "\n"  # a final retraction


def write_file(path: str | Path, write: Callable[[IO[str]], Any], *, force: bool = False) -> Any:
    """Write a file whole or not at all; replace an existing one only with ``force``.

    The content goes to a temporary file beside ``path``, is synced, and is
    then linked into place (``force``: renamed over it). Returns what
    ``write`` returns.

    Raises:
        CtxneoError: ``path`` exists and ``force`` is not set.
        OSError: the file cannot be written (nothing is left behind).
    """
    path = Path(path)
    if path.exists() and not force:
        raise CtxneoError(f"{path} already exists: give --force to replace it")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            result = write(out)
            out.flush()
            os.fsync(out.fileno())
        if force:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)  # fails if the file appeared meanwhile: never overwritten
            except FileExistsError:
                raise CtxneoError(f"{path} already exists: give --force to replace it") from None
            os.unlink(tmp)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return result


def write_journal(image: MemoryImage, path: str | Path, *, force: bool = False) -> int:
    """Write ``image`` as a journal file; return the number of facts."""
    write_file(path, lambda out: out.writelines(journal_lines(image)), force=force)
    return len(image.facts)


# -- reading back ------------------------------------------------------------------


def validated(records: Iterator[tuple[str, dict[str, Any]]]) -> MemoryImage:
    """The memory ``records`` (journal records, each with where it came from) describe,
    checked exactly as a journal is on replay.

    Raises:
        LoadFileError: a record breaks an invariant or has the wrong shape.
    """
    store = NetworkXStore()
    try:
        store.replay((where, -1, record) for where, record in records)
    except JournalError as e:
        raise LoadFileError(str(e)) from e
    return store.image()


def read_journal(path: Path) -> MemoryImage:
    """The memory a journal file holds (checked on replay; the file is only read)."""
    try:
        with NetworkXStore(path, create=False) as store:
            return store.image()
    except JournalError as e:
        raise LoadFileError(str(e)) from e


def read_load_file(path: Path) -> tuple[str | None, MemoryImage]:
    """What ``ctxneo load`` loads from ``path``: (the namespace a script names, the memory).

    Raises:
        LoadFileError: the file is neither a ctxneo journal nor a script
            ``ctxneo export`` wrote, or it holds an invalid memory.
    """
    try:
        with open(path, "rb") as f:
            first = f.readline(4096)
    except OSError as e:
        raise LoadFileError(f"cannot read {path}: {e.strerror or e}") from e
    try:
        head = json.loads(first)
    except (ValueError, RecursionError):
        head = None
    if isinstance(head, dict) and head.get("format") == FORMAT:
        return None, read_journal(path)
    if first.rstrip(b"\r\n") == SCRIPT_HEADER.encode():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise LoadFileError(f"cannot read {path}: {e}") from e
        return parse_script(text, str(path))
    raise LoadFileError(
        f"{path} is neither a ctxneo journal nor a script written by `ctxneo export`; "
        "ctxneo load runs nothing else (its first line should be "
        f"{HEADER.strip()} or {SCRIPT_HEADER!r})"
    )


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
            i = text.find("\n", i)  # (not `in text[i:]`: a copy of the rest per comment)
            i = n if i < 0 else i
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


_STRING = re.compile(r"'((?:[^'\\\x00-\x1f\x7f\u2028\u2029]|\\(?:[\\'\"nrtbf]|u[0-9a-fA-F]{4}))*)'")
_UNESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)")
_UNESCAPED = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}
_INT = re.compile(r"-?[0-9]{1,19}(?![0-9])")
_KEY = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`: ")
_TEMPLATES = {name: list(string.Formatter().parse(t)) for name, t in
              (("memory", MEMORY), ("entities", ENTITIES), ("facts", FACTS),
               ("facts_v1", FACTS_V1))}  # fmt: skip


class _Reject(Exception):
    """A statement is not one :func:`cypher_statements` writes."""


class _Literals:
    """Reads the Cypher literals :func:`literal` writes, and nothing else."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def expect(self, constant: str) -> None:
        if not self.text.startswith(constant, self.pos):
            got = self.text[self.pos : self.pos + 30]
            raise _Reject(f"expected {constant[:30]!r} at character {self.pos}, found {got!r}")
        self.pos += len(constant)

    def value(self, depth: int = 0) -> Any:
        if depth > 3:
            raise _Reject("values nested deeper than an export writes them")
        text, pos = self.text, self.pos
        ch = text[pos : pos + 1]
        if ch == "'":
            m = _STRING.match(text, pos)
            if not m:
                raise _Reject(f"a string at character {pos} is not closed or not escaped")
            self.pos = m.end()
            return _UNESCAPE.sub(_unescape, m.group(1))
        if ch == "[":
            self.pos += 1
            items: list[Any] = []
            while not text.startswith("]", self.pos):
                if items:
                    self.expect(", ")
                items.append(self.value(depth + 1))
            self.pos += 1
            return items
        if ch == "{":
            self.pos += 1
            fields: dict[str, Any] = {}
            while not text.startswith("}", self.pos):
                if fields:
                    self.expect(", ")
                m = _KEY.match(text, self.pos)
                if not m or m.group(1) in fields:
                    raise _Reject(f"a map key at character {self.pos} is not a new `name`")
                self.pos = m.end()
                fields[m.group(1)] = self.value(depth + 1)
            self.pos += 1
            return fields
        for word, meaning in (("null", None), ("true", True), ("false", False)):
            if text.startswith(word, pos):
                self.pos += len(word)
                return meaning
        m = _INT.match(text, pos)
        if m:
            self.pos = m.end()
            return int(m.group(0))
        raise _Reject(f"no value an export writes at character {pos}: {text[pos : pos + 30]!r}")


def _unescape(m: re.Match[str]) -> str:
    code = m.group(1)
    if code.startswith("u") and len(code) == 5:
        return chr(int(code[1:], 16))
    return _UNESCAPED.get(code, code)


def _match(template: str, statement: str) -> dict[str, Any]:
    """The field values of ``statement`` if it has exactly the shape of ``template``."""
    reader = _Literals(statement)
    values: dict[str, Any] = {}
    for constant, field, _, _ in _TEMPLATES[template]:
        reader.expect(constant)
        if field is None:
            continue
        if field == "predicate":
            m = PREDICATE_PATTERN.match(statement, reader.pos)
            if not m:
                raise _Reject(f"no relationship type at character {reader.pos}")
            reader.pos = m.end()
            value: Any = m.group(0)
        else:
            value = reader.value()
        if field in values and values[field] != value:
            raise _Reject(f"two different values for {field}")
        values[field] = value
    if reader.pos != len(statement):
        raise _Reject(f"unexpected text after character {reader.pos}")
    return values


def _rows(value: Any, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(
        isinstance(r, dict) and tuple(r) == keys for r in value
    ):
        raise _Reject(f"rows must be maps of exactly {', '.join(keys)}")
    return value


def parse_script(text: str, name: str = "<script>") -> tuple[str, MemoryImage]:
    """The namespace and memory of a script :func:`write_script` wrote, read as data.

    Raises:
        LoadFileError: the header is not an export's, or any statement differs
            from the shapes an export writes, or the memory it holds is invalid.
    """
    lines = text.splitlines()[:3]
    if len(lines) < 3 or lines[0] != SCRIPT_HEADER or lines[1] not in FORMAT_LINES:
        raise LoadFileError(
            f"{name} does not start like a script from `ctxneo export` ({SCRIPT_HEADER!r}, "
            f"then {FORMAT_LINE!r}); nothing was run"
        )
    try:
        namespace = json.loads(lines[2].removeprefix(NAMESPACE_HEADER))
        if not lines[2].startswith(NAMESPACE_HEADER) or not isinstance(namespace, str):
            raise ValueError(lines[2][:60])
    except ValueError as e:
        raise LoadFileError(f"{name}, line 3: not a namespace line ({e}); nothing was run") from e
    statements = split_statements(text)
    schema = cypher.statements("schema")
    memory: dict[str, Any] | None = None
    aliases: dict[str, tuple[str, ...]] = {}
    facts: list[tuple[str, dict[str, Any]]] = []
    for number, statement in enumerate(statements, 1):
        where = f"{name}, statement {number}"
        try:
            if number <= len(schema):
                if statement != schema[number - 1]:
                    raise _Reject("not the schema statement an export starts with")
                continue
            if memory is None:
                memory = _match("memory", statement)
                values = memory
            elif statement.startswith("UNWIND [{`name`") or statement.startswith("UNWIND []"):
                values = _match("entities", statement)
                for row in _rows(values["rows"], _ENTITY_KEYS):
                    if not isinstance(row["aliases"], list):
                        raise _Reject("aliases must be a list")
                    if row["aliases"]:
                        aliases[row["name"]] = tuple(row["aliases"])
            else:
                v1 = lines[1] == FORMAT_LINES[0]
                values = _match("facts_v1" if v1 else "facts", statement)
                for row in _rows(values["rows"], _FACT_KEYS_V1 if v1 else _FACT_KEYS):
                    if row["predicate"] != values["predicate"]:
                        raise _Reject(
                            f"a {row['predicate']!r} row in a {values['predicate']} batch"
                        )
                    facts.append((where, row))
            if values["ns"] != namespace:
                raise _Reject(f"namespace {values['ns']!r}, not the header's {namespace!r}")
        except _Reject as e:
            raise LoadFileError(
                f"{where}: not a statement `ctxneo export` writes ({e}); nothing was run"
            ) from None
        except RecursionError:
            raise LoadFileError(f"{where}: nested too deeply; nothing was run") from None
    if memory is None:
        raise LoadFileError(f"{name}: no memory statement after the schema; nothing was run")
    multi, last_seq = memory["multi"], memory["seq"]
    if not isinstance(multi, list) or not isinstance(last_seq, int) or isinstance(last_seq, bool):
        raise LoadFileError(f"{name}: the memory statement's seq or multi has the wrong type")
    where_memory = f"{name}, statement {len(schema) + 1}"
    current = [  # (a value of another type is refused by the replay below, named)
        (row["subject"], row["predicate"])
        for _, row in facts
        if row["valid_to"] is None
        and isinstance(row["subject"], str)
        and isinstance(row["predicate"], str)
    ]
    single = withdrawn(multi, current)
    records: list[tuple[str, dict[str, Any]]] = [
        (where_memory, {"op": "multi", "predicate": p}) for p in [*multi, *single]
    ]
    facts.sort(key=lambda wr: wr[1]["seq"] if isinstance(wr[1]["seq"], int) else 0)
    records += [
        (
            where,
            {
                "op": "fact",
                "seq": row["seq"],
                "valid_from": row["valid_from"],
                "valid_to": row["valid_to"],
                "s": row["subject"],
                "p": row["predicate"],
                "o": row["object"],
                "speaker": row["speaker"],
                "turn_id": row["turn_id"],
                "fact_id": row["fact_id"],
                **({"text": row["text"]} if row.get("text") is not None else {}),
            },
        )
        for where, row in facts
    ]
    records += [(where_memory, {"op": "single", "predicate": p}) for p in single]
    records += [
        (name, {"op": "alias", "phrase": phrase, "entity": entity})
        for entity, phrases in aliases.items()
        for phrase in phrases
    ]
    if last_seq > max((row["seq"] for _, row in facts), default=0):
        records.append((where_memory, {"op": "tick", "at": last_seq}))
    image = validated(iter(records))
    if image.last_seq != last_seq:
        raise LoadFileError(
            f"{where_memory}: seq {last_seq} is below the facts' highest number {image.last_seq}"
        )
    return namespace, image
