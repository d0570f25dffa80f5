"""The plain data ctxneo passes around: facts, turns, scenarios and answers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from ctxneo.errors import InvalidFactError

#: A predicate is stored as a Neo4j relationship type, so it must be a plain
#: identifier; anything else is refused instead of being pasted into Cypher.
PREDICATE_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,99}")
MAX_NAME_LENGTH = 10_000


@lru_cache(maxsize=4096)
def _valid_predicate(predicate: str) -> bool:
    return bool(PREDICATE_PATTERN.fullmatch(predicate))


def check_predicate(predicate: str) -> str:
    """Return ``predicate`` if it is a valid relationship type name.

    Raises:
        InvalidFactError: it is empty, too long or has characters other than
            ASCII letters, digits and underscores (or starts with a non-letter).
    """
    if not isinstance(predicate, str) or not _valid_predicate(predicate):
        suggestion = re.sub(r"[^A-Za-z0-9]+", "_", str(predicate)).strip("_").upper()
        hint = f" (did you mean {suggestion!r}?)" if PREDICATE_PATTERN.fullmatch(suggestion) else ""
        raise InvalidFactError(
            f"invalid predicate {predicate!r}: use letters, digits and underscores, "
            f"starting with a letter, at most 100 characters{hint}"
        )
    return predicate


def check_name(value: str, what: str) -> str:
    """Return ``value`` if it can name an entity: a non-blank string of sane length."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidFactError(f"{what} must be a non-empty string, got {value!r}")
    if len(value) > MAX_NAME_LENGTH:
        raise InvalidFactError(f"{what} is longer than {MAX_NAME_LENGTH} characters")
    return value


@dataclass(frozen=True, slots=True)
class Fact:
    """One stated (subject, predicate, object) fact and where it came from.

    ``seq`` increases with every write to a memory; ``valid_from`` is the
    sequence number that made the fact current and ``valid_to`` the one that
    closed it (``None`` while it is current).
    """

    subject: str
    predicate: str
    object: str
    seq: int
    valid_from: int
    valid_to: int | None = None
    speaker: str | None = None
    turn_id: int | None = None
    fact_id: str | None = None

    @property
    def current(self) -> bool:
        return self.valid_to is None

    def closed_at(self, at: int) -> Fact:
        """This fact as it stands once closed at sequence number ``at``."""
        return replace(self, valid_to=at)

    def valid_at(self, as_of: int | None) -> bool:
        """Whether the fact held at sequence number ``as_of`` (``None``: now)."""
        if as_of is None:
            return self.valid_to is None
        return self.valid_from <= as_of and (self.valid_to is None or self.valid_to > as_of)

    def to_dict(self) -> dict[str, object]:
        return {
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
            "seq": self.seq,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "speaker": self.speaker,
            "turn_id": self.turn_id,
            "fact_id": self.fact_id,
        }

    def line(self) -> str:
        """The compact one-line form used in answer contexts and listings."""
        said = ", ".join(
            x for x in (self.speaker, None if self.turn_id is None else f"turn {self.turn_id}") if x
        )
        closed = "" if self.valid_to is None else f" (until #{self.valid_to})"
        return (
            f"{self.subject} {self.predicate} {self.object}"
            + (f" [{said}]" if said else "")
            + closed
        )


@dataclass(frozen=True, slots=True)
class NewFact:
    """A fact to be written: what :meth:`Memory.remember_many` takes."""

    subject: str
    predicate: str
    object: str
    speaker: str | None = None
    turn_id: int | None = None
    fact_id: str | None = None
    multi: bool = False

    def checked(self) -> NewFact:
        check_name(self.subject, "subject")
        check_name(self.object, "object")
        check_predicate(self.predicate)
        if self.speaker is not None:
            check_name(self.speaker, "speaker")
        if self.turn_id is not None and (
            not isinstance(self.turn_id, int) or isinstance(self.turn_id, bool)
        ):
            raise InvalidFactError(f"turn_id must be an integer, got {self.turn_id!r}")
        return self


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a scenario: a fact, a distractor or a query."""

    turn_id: int
    turn_type: str
    speaker: str
    text: str
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    fact_id: str | None = None
    query_type: str | None = None
    required_fact_ids: tuple[str, ...] = ()
    ground_truth: tuple[str, ...] | None = None

    @property
    def graded(self) -> bool:
        return self.turn_type == "query" and self.ground_truth is not None


@dataclass(frozen=True, slots=True)
class Scenario:
    """A scripted multi-agent conversation with graded questions."""

    name: str
    description: str
    turns: tuple[Turn, ...]
    multi_valued_predicates: frozenset[str] = frozenset()
    aliases: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Reading:
    """One way of reading a question and the answer it gives.

    ``confidence`` is the calibrated probability that the answer is right;
    ``reading`` names the path shape (``one-hop``, ``two-hop``, ``sibling``,
    ``history:first``, ``provenance``...).
    """

    answer: str
    values: tuple[str, ...]
    evidence: tuple[Fact, ...]
    confidence: float
    reading: str

    def to_dict(self) -> dict[str, object]:
        return {
            "answer": self.answer,
            "values": list(self.values),
            "confidence": self.confidence,
            "reading": self.reading,
            "evidence": [f.to_dict() for f in self.evidence],
        }


@dataclass(frozen=True, slots=True)
class Answer:
    """What the answerer returns for a question.

    ``answer`` is ``UNKNOWN`` when the memory does not hold an answer the
    answerer is sure enough of, and ``reason`` then says why in one line (no
    entity, no relation, the entity has no such fact, the value was
    retracted, too unsure). ``values`` lists every value (several for a
    multi-valued relation); ``answer`` renders them unambiguously (see
    :func:`render_values`). ``confidence`` is the calibrated probability that
    the answer is right. ``evidence`` is the path of facts used; ``readings``
    are the best readings found, best first (the answer's own first, when
    known); ``candidate`` is the best reading rejected when the answer is
    ``UNKNOWN``, offered to the caller, never as the answer. ``context`` is
    what an LLM would be sent: the question and the readings' evidence, within
    the token budget asked for. ``reading`` says how the question was read.
    """

    question: str
    answer: str
    evidence: tuple[Fact, ...] = ()
    context: str = ""
    reading: str = ""
    values: tuple[str, ...] = field(default=())
    confidence: float = 0.0
    reason: str = ""
    readings: tuple[Reading, ...] = ()
    candidate: Reading | None = None

    @property
    def known(self) -> bool:
        return self.answer != UNKNOWN

    def line(self) -> str:
        """The answer in one line, with its confidence or the reason it is unknown."""
        if not self.known:
            return f"{UNKNOWN}: {self.reason}" if self.reason else UNKNOWN
        return f"{self.answer}  (confidence {self.confidence:.2f})"

    def to_dict(self) -> dict[str, object]:
        return {
            "question": self.question,
            "answer": self.answer,
            "values": list(self.values),
            "confidence": self.confidence,
            "reason": self.reason,
            "reading": self.reading,
            "evidence": [f.to_dict() for f in self.evidence],
            "readings": [r.to_dict() for r in self.readings],
            "candidate": None if self.candidate is None else self.candidate.to_dict(),
            "context": self.context,
        }


UNKNOWN = "UNKNOWN"

#: How several values are printed: joined by this, each quoted when it holds it.
VALUE_SEPARATOR = "; "


def render_values(values: tuple[str, ...] | list[str]) -> str:
    """Several values as one unambiguous string.

    Values are joined with ``"; "``; a value that holds a semicolon, a double
    quote or leading/trailing spaces is written as a JSON string, so the list
    can always be read back (names may hold commas: "Gates, Bill").
    """
    import json

    if len(values) == 1:
        return values[0]
    return VALUE_SEPARATOR.join(
        json.dumps(v, ensure_ascii=False) if (";" in v or '"' in v or v != v.strip()) else v
        for v in values
    )
