"""What the MCP tools return: typed, bounded results built from ctxneo's own values.

These pydantic models become each tool's ``outputSchema`` and its
``structuredContent``, so an agent gets the same field names from every
tool. Every list in them is cut at a limit, and the count of what was cut is
returned beside it (``*_omitted``), so no call can flood a context window.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from ctxneo.model import Answer, Fact, Reading, render_values


class FactOut(BaseModel):
    """A stored fact. seq: the write that stored it; valid_from / valid_to: the writes
    from which it held and that superseded or retracted it (valid_to null while
    current); speaker and turn: who stated it and when; fact_id: the caller's id."""

    # One docstring instead of a description per field: this model is repeated in
    # every tool's output schema, and the tool list is read into agents' contexts.
    subject: str
    predicate: str
    object: str
    seq: int
    valid_from: int
    valid_to: int | None
    current: bool
    speaker: str | None
    turn: int | None
    fact_id: str | None

    @classmethod
    def of(cls, fact: Fact) -> FactOut:
        return cls(
            subject=fact.subject,
            predicate=fact.predicate,
            object=fact.object,
            seq=fact.seq,
            valid_from=fact.valid_from,
            valid_to=fact.valid_to,
            current=fact.valid_to is None,
            speaker=fact.speaker,
            turn=fact.turn_id,
            fact_id=fact.fact_id,
        )


def bounded(facts: Sequence[Fact], limit: int) -> tuple[list[FactOut], int]:
    """The first ``limit`` facts and how many were left out."""
    return [FactOut.of(f) for f in facts[:limit]], max(0, len(facts) - limit)


class StoredFact(BaseModel):
    """A fact a write asked for, as it now stands."""

    fact: FactOut
    unchanged: bool = Field(
        description="True when this value was already current: nothing was written for it."
    )


class RememberResult(BaseModel):
    """What one ``remember`` stored and what it closed."""

    stored: FactOut = Field(description="The fact as stored (the existing one when unchanged).")
    unchanged: bool = Field(description="True when the value was already current.")
    closed: list[FactOut] = Field(
        description="The values this write superseded; they stay in the history."
    )
    notes: list[str] = Field(
        description="New names that resemble names in use (see vocabulary): reuse those, "
        "or declare an alias, so questions find every fact."
    )


class RememberManyResult(BaseModel):
    """What ``remember_many`` stored and what it closed."""

    stored: list[StoredFact] = Field(description="One entry per fact given, in order.")
    closed: list[FactOut] = Field(
        description="Facts that were current before this call and are now superseded by it."
    )
    closed_omitted: int = Field(description="How many more closed facts were left out.")
    notes: list[str] = Field(description="New names that resemble names in use.")


class ReadingOut(BaseModel):
    """One way of reading the question and the answer it gives."""

    answer: str
    values: list[str]
    values_omitted: int
    confidence: float = Field(ge=0.0, le=1.0)
    reading: str = Field(description="The path shape: one-hop, two-hop, history:first, ...")
    evidence: list[FactOut]
    evidence_omitted: int

    @classmethod
    def of(cls, reading: Reading, limit: int) -> ReadingOut:
        evidence, evidence_omitted = bounded(reading.evidence, limit)
        values = list(reading.values)
        return cls(
            answer=_bounded_answer(reading.answer, values, limit),
            values=values[:limit],
            values_omitted=max(0, len(values) - limit),
            confidence=reading.confidence,
            reading=reading.reading,
            evidence=evidence,
            evidence_omitted=evidence_omitted,
        )


class AskResult(BaseModel):
    """An answer from the graph with the facts that support it."""

    question: str
    answer: str = Field(description="The value(s), joined by '; ', or UNKNOWN.")
    known: bool = Field(
        description="False when the memory does not know (answer is then UNKNOWN); a value "
        "stored as the word UNKNOWN is known."
    )
    values: list[str] = Field(description="Each value of the answer (several when multi-valued).")
    values_omitted: int = Field(description="How many more values were left out (see limit).")
    confidence: float = Field(ge=0.0, le=1.0, description="How likely the answer is right, 0-1.")
    reason: str = Field(description="Why the answer is UNKNOWN, in one line (empty otherwise).")
    reading: str = Field(description="How the question was read (one-hop, two-hop, ...).")
    form: str = Field(
        description="The answer's form: value, list, count, yes/no, speaker or earlier "
        "(empty when UNKNOWN)."
    )
    evidence: list[FactOut] = Field(
        description="The facts walked to the answer, with speaker, turn and seq."
    )
    evidence_omitted: int = Field(description="How many more evidence facts were left out.")
    alternatives: list[ReadingOut] = Field(
        description="Other readings found, best first (k - 1 at most): the answer's own "
        "reading (or the candidate's) is not repeated here."
    )
    candidate: ReadingOut | None = Field(
        description="When UNKNOWN: the best reading that was rejected as too unsure. "
        "A guess to verify, never an answer."
    )
    context: str = Field(
        description="The question and the evidence as compact lines, to quote to an LLM."
    )

    @classmethod
    def of(cls, answer: Answer, limit: int) -> AskResult:
        evidence, evidence_omitted = bounded(answer.evidence, limit)
        values = list(answer.values)
        return cls(
            question=answer.question,
            answer=_bounded_answer(answer.answer, values, limit),
            known=answer.known,
            values=values[:limit],
            values_omitted=max(0, len(values) - limit),
            confidence=answer.confidence,
            reason=answer.reason,
            reading=answer.reading,
            form=answer.form,
            evidence=evidence,
            evidence_omitted=evidence_omitted,
            alternatives=[ReadingOut.of(r, limit) for r in _alternatives(answer)],
            candidate=None if answer.candidate is None else ReadingOut.of(answer.candidate, limit),
            context=answer.context,
        )


def _alternatives(answer: Answer) -> list[Reading]:
    """The readings other than the one the answer (or its candidate) already shows."""
    shown = answer.readings[0] if answer.known and answer.readings else answer.candidate
    return [r for r in answer.readings if r != shown]


def _bounded_answer(answer: str, values: list[str], limit: int) -> str:
    # A multi-valued answer renders every value; past the limit it renders the kept ones.
    return render_values(values[:limit]) if len(values) > limit else answer


class FactList(BaseModel):
    """A bounded list of facts."""

    facts: list[FactOut]
    omitted: int = Field(description="How many more matching facts were left out (see limit).")
    omitted_exact: bool = Field(
        description="False when there were too many to count: omitted is then a lower bound."
    )


class RetractResult(BaseModel):
    """The values a retraction closed."""

    closed: list[FactOut] = Field(description="The facts closed; they stay in the history.")
    closed_omitted: int = Field(description="How many more closed facts were left out.")


class StatsResult(BaseModel):
    """Counts for the memory this server serves."""

    memory: str = Field(description="Which memory: a journal file or a Neo4j URI and namespace.")
    facts: int = Field(description="Facts stored, current and closed.")
    current_facts: int
    entities: int
    predicates: int
    last_seq: int = Field(description="The latest sequence number; use it as as_of to pin a read.")


class PredicateOut(BaseModel):
    """A predicate in use."""

    predicate: str
    current_facts: int
    multi_valued: bool
    example: str | None = Field(description="One current fact of it, as a line.")


class VocabularyResult(BaseModel):
    """The names a memory uses."""

    predicates: list[PredicateOut] = Field(description="The most used first.")
    predicates_omitted: int
    multi_valued: list[str] = Field(description="Every predicate declared multi-valued.")
    entities: list[str] = Field(description="Entity names the words found, best first.")
    entities_more: bool = Field(description="True when more names matched than were returned.")


class DeclareResult(BaseModel):
    """The declarations as they now stand."""

    multi_valued: list[str] = Field(description="Every predicate now declared multi-valued.")
    aliases: dict[str, list[str]] = Field(description="Phrases by entity, for the entities named.")
