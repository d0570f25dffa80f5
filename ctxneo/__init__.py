"""ctxneo: a context-graph memory for multi-agent LLM systems.

Facts agents state are stored as (subject, predicate, object) with who said
them and when; questions are answered by walking the graph, with no LLM call.

    >>> from ctxneo import Memory
    >>> with Memory.open() as memory:
    ...     _ = memory.remember("Service_Checkout", "DEPENDS_ON", "Service_Payments")
    ...     _ = memory.remember("Service_Payments", "OWNED_BY", "Payments_Team")
    ...     memory.ask("Which team owns the service that checkout depends on?").answer
    'Payments_Team'
"""

from ctxneo.errors import (
    ConfigError,
    CtxneoError,
    DatasetError,
    InvalidFactError,
    JournalError,
    LoadFileError,
    NamespaceInUse,
    ScenarioError,
    StoreError,
    StoreUnavailable,
    WriteOutcomeUnknown,
)
from ctxneo.memory import Memory
from ctxneo.model import UNKNOWN, Answer, Fact, NewFact

__version__ = "0.1.0"

__all__ = [
    "UNKNOWN",
    "Answer",
    "ConfigError",
    "CtxneoError",
    "DatasetError",
    "Fact",
    "InvalidFactError",
    "JournalError",
    "LoadFileError",
    "Memory",
    "NamespaceInUse",
    "NewFact",
    "ScenarioError",
    "StoreError",
    "StoreUnavailable",
    "WriteOutcomeUnknown",
    "__version__",
]
