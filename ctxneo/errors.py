"""Exceptions raised by ctxneo.

Every error ctxneo raises on purpose derives from :class:`CtxneoError`, so a
caller can catch one class; driver and OS errors are wrapped once, at the edge
of the store that met them (``raise ... from e``)::

    CtxneoError
    ├── ScenarioError        a scenario file is malformed (names file, scenario, turn, field)
    ├── InvalidFactError     a fact or predicate is refused before anything is written
    ├── JournalError         a journal file cannot be read or written
    ├── ConfigError          a setting points at something unusable (e.g. a lexicon file)
    ├── DatasetError         a benchmark data file (knowledge base, questions) is malformed
    ├── LoadFileError        a file given to ``ctxneo load`` is not one ctxneo wrote
    └── StoreError           a store failed at run time
        ├── StoreUnavailable     the store cannot be reached (e.g. Neo4j down at a URI)
        │   └── WriteOutcomeUnknown  a commit went unanswered and the store stayed out of
        │                            reach: the write may or may not have been applied
        ├── NamespaceInUse       a load would land on a memory that is already there
        └── Neo4jLaunchError     the local jar-launched Neo4j could not be started
"""

from __future__ import annotations


class CtxneoError(Exception):
    """Base class of every error ctxneo raises on purpose."""


class ScenarioError(CtxneoError):
    """A scenario file does not follow the ``ctxneo-scenarios/1`` format."""

    def __init__(
        self,
        message: str,
        *,
        file: str,
        scenario: str | None = None,
        turn_id: object = None,
        field: str | None = None,
    ) -> None:
        self.file = file
        self.scenario = scenario
        self.turn_id = turn_id
        self.field = field
        where = [file]
        if scenario is not None:
            where.append(f"scenario {scenario!r}")
        if turn_id is not None:
            where.append(f"turn {turn_id}")
        if field is not None:
            where.append(f"field {field!r}")
        super().__init__(f"{': '.join([', '.join(where), message])}")


class InvalidFactError(CtxneoError, ValueError):
    """A fact, predicate or argument is refused before anything is written."""


class JournalError(CtxneoError):
    """A journal file cannot be opened, replayed or appended to."""


class ConfigError(CtxneoError):
    """A setting (an environment variable, a file it names) cannot be used."""


class DatasetError(CtxneoError):
    """A benchmark data file (knowledge base, question set) is malformed; names file and line."""


class LoadFileError(CtxneoError):
    """A file given to ``ctxneo load`` is neither a journal nor a script ``ctxneo export``
    wrote (or it is damaged): nothing of it is run."""


class StoreError(CtxneoError):
    """A store failed while running a question or a write."""


class StoreUnavailable(StoreError):
    """The store cannot be reached."""


class WriteOutcomeUnknown(StoreUnavailable):
    """A write's commit went unanswered and the store could not be reached again, within
    the time limit, to find out whether it was applied. ``write_id`` names the write."""

    def __init__(self, message: str, *, write_id: str) -> None:
        super().__init__(message)
        self.write_id = write_id


class NamespaceInUse(StoreError):
    """A memory is being loaded into a namespace that already holds one."""


class Neo4jLaunchError(StoreError):
    """The local, jar-launched Neo4j server could not be started or stopped."""
