"""Every Cypher statement the Neo4j store runs, one ``.cypher`` file each.

Values always travel as ``$parameters``; a relationship type comes from a
predicate validated by :func:`ctxneo.model.check_predicate` and is passed as
a parameter too, through Cypher 5.26 dynamic types ``$(...)``, except where a
read must start from the relationships of one type (a dynamic type cannot use
the type scan and reads every fact): there :func:`with_type` writes the
validated predicate, quoted, into the text. The export script, which has no
parameters, does the same.
"""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def load(name: str) -> str:
    """The text of ``<name>.cypher``, without comment lines."""
    text = resources.files(__name__).joinpath(f"{name}.cypher").read_text(encoding="utf-8")
    return "\n".join(
        line for line in text.splitlines() if not line.lstrip().startswith("//")
    ).strip()


def with_type(name: str, predicate: str) -> str:
    """``<name>.cypher`` with its ``TYPE`` placeholder replaced by ``predicate``, which
    must have passed :func:`ctxneo.model.check_predicate` (letters, digits and
    underscores: nothing that could end the quoted name)."""
    if not predicate.replace("_", "").isalnum() or not predicate.isascii():
        raise ValueError(f"not a validated predicate: {predicate!r}")
    return load(name).replace("`TYPE`", f"`{predicate}`")


def with_types(name: str, predicates: list[str]) -> str:
    """``<name>.cypher`` with its ``(e)-[r]-()`` pattern narrowed to ``predicates`` (each
    passed :func:`ctxneo.model.check_predicate`): a typed expansion reads only those
    relationships of a node, where ``WHERE type(r) IN $list`` reads them all (a hub's
    100,000 facts: 1 ms against 110 ms)."""
    for predicate in predicates:
        if not predicate.replace("_", "").isalnum() or not predicate.isascii():
            raise ValueError(f"not a validated predicate: {predicate!r}")
    types = "|".join(f"`{p}`" for p in predicates)
    return load(name).replace("(e)-[r]-()", f"(e)-[r:{types}]-()")


def statements(name: str) -> list[str]:
    """The ``;``-separated statements of ``<name>.cypher``."""
    return [s.strip() for s in load(name).split(";") if s.strip()]
