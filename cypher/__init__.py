"""Every Cypher statement the Neo4j store runs, one ``.cypher`` file each.

Values always travel as ``$parameters``; a relationship type comes from a
predicate validated by :func:`ctxneo.model.check_predicate` and is passed as
a parameter too, through Cypher 5.26 dynamic types ``$(...)``. (Only the export
script, which has no parameters, writes validated predicates into its text.)
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


def statements(name: str) -> list[str]:
    """The ``;``-separated statements of ``<name>.cypher``."""
    return [s.strip() for s in load(name).split(";") if s.strip()]
