"""The tools' JSON schemas as strict clients need them, and arguments checked against them.

Clients' strict modes (OpenAI's ``strict`` tools among them) refuse ``$ref`` and
objects open to undeclared keys; every schema is published closed and inlined.
Arguments are checked as JSON types before pydantic sees them, since pydantic
would coerce ``"yes"`` to a boolean. Pydantic's ``title`` keywords repeat each
property's name and are dropped: a tool list is read into every agent's context.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

# JSON types as Python sees them after decoding (a bool is not an integer here).
_JSON_TYPES: dict[str, Callable[[object], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


#: The problems one refused call lists at most.
MAX_PROBLEMS = 10


def strict_problems(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Where ``arguments`` break the tool's published schema as JSON types, not as
    pydantic would coerce them: ``"yes"`` is not a boolean, ``"7"`` not an integer,
    and a key the schema does not declare (a typo such as ``mutli``) is refused.

    Ranges and lengths are left to the tool's own validation (one message style), but
    for an array longer than its ``maxItems``, which is one problem, its items unread;
    and at most :data:`MAX_PROBLEMS` are listed, then a last line that there are more
    (a reply is never much longer than the request, nor its check slow on a huge one)."""
    defs = schema.get("$defs", {})
    problems: list[str] = []
    cut = False

    def problem(text: str) -> None:
        nonlocal cut
        if len(problems) < MAX_PROBLEMS:
            problems.append(text)
        else:
            cut = True

    def resolve(node: dict[str, Any]) -> dict[str, Any]:
        ref = node.get("$ref", "")
        return defs.get(ref.rsplit("/", 1)[-1], node) if ref.startswith("#/$defs/") else node

    def check(node: dict[str, Any], value: object, where: str) -> None:
        node = resolve(node)
        options = node.get("anyOf")
        if options is not None:
            fits = [resolve(o) for o in options if _fits(resolve(o), value)]
            if not fits:
                problem(f"{where}: expected {_type_names(options)} (got {_json(value)})")
            else:
                check(fits[0], value, where)
            return
        kind = node.get("type")
        if not _fits(node, value):
            expected = " or ".join(kind) if isinstance(kind, list) else kind
            problem(f"{where}: expected {expected} (got {_json(value)})")
            return
        if kind == "object" and isinstance(value, dict):
            declared = node.get("properties", {})
            for key, item in value.items():
                if key not in declared:
                    known = ", ".join(sorted(declared)) or "none"
                    problem(f"{where}{key}: not an argument of this tool (known: {known})")
                else:
                    check(declared[key], item, f"{where}{key}")
        elif kind == "array" and isinstance(value, list):
            limit = node.get("maxItems")
            if limit is not None and len(value) > limit:
                problem(f"{where}: at most {limit} items (got {len(value)})")
                return
            for i, item in enumerate(value if "items" in node else ()):
                if len(problems) >= MAX_PROBLEMS:
                    problem("")  # the rest unread: there may be more
                    break
                check(node["items"], item, f"{where}[{i}].")

    check({**schema, "type": "object"}, arguments, "")
    listed = [p.replace(".:", ":") for p in problems]
    return listed + (["the rest not checked"] if cut else [])


def _fits(node: dict[str, Any], value: object) -> bool:
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return kind is None or any(_JSON_TYPES.get(k, lambda v: True)(value) for k in kinds)


def _type_names(options: list[dict[str, Any]]) -> str:
    return " or ".join(str(o.get("type", "a value")) for o in options)


def closed_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every ``$ref`` inlined and every object closed
    (``additionalProperties: false``): what clients' strict modes require (OpenAI's
    ``strict`` tools refuse ``$ref`` and open objects), and what :func:`strict_problems`
    enforces anyway."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref", "")
        if ref.startswith("#/$defs/"):
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return walk({**defs[ref.rsplit("/", 1)[-1]], **rest})
        out = {k: walk(v) for k, v in node.items() if k != "$defs"}
        if out.get("type") == "object":
            out["additionalProperties"] = False
        return out

    return walk(schema)


#: Keys whose value maps names to schemas (not a schema itself).
_NAMED = ("properties", "$defs", "definitions")
#: Keys whose value is one schema or a list of them.
_NESTED = ("items", "additionalProperties", "not", "anyOf", "oneOf", "allOf", "prefixItems")


def lean_schema(node: Any) -> Any:
    """``node`` without pydantic's ``title`` keywords (a property named ``title`` stays)."""
    if isinstance(node, list):
        return [lean_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    options = node.get("anyOf")
    if options and all(set(o) == {"type"} and isinstance(o["type"], str) for o in options):
        # {"anyOf": [{"type": "integer"}, {"type": "null"}]} says {"type": ["integer", "null"]}.
        node = {
            "type": [o["type"] for o in options],
            **{k: v for k, v in node.items() if k != "anyOf"},
        }
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key in _NAMED and isinstance(value, dict):
            out[key] = {name: lean_schema(schema) for name, schema in value.items()}
        elif key in _NESTED:
            out[key] = lean_schema(value)
        else:
            out[key] = value
    return out


def _json(value: object, limit: int = 80) -> str:
    """A value as the client wrote it (JSON: true, null, "text"), cut short."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"
