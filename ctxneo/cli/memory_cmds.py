"""A memory from the shell: remember, ask, history, facts, retract, alias, stats."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.table import Table

from ctxneo.cli.options import emit_json, friendly_errors, json_option, memory_from, store_options
from ctxneo.model import Answer, Fact


def _fact_table(facts: list[Fact], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("#", "subject", "predicate", "object", "speaker", "turn", "valid"):
        table.add_column(column, overflow="fold")
    for f in facts:
        valid = f"{f.valid_from}–" + ("now" if f.valid_to is None else str(f.valid_to))
        table.add_row(
            str(f.seq),
            f.subject,
            f.predicate,
            f.object,
            f.speaker or "",
            "" if f.turn_id is None else str(f.turn_id),
            valid,
        )
    return table


def _print_facts(facts: list[Fact], title: str, as_json: bool) -> None:
    if as_json:
        emit_json({"facts": [f.to_dict() for f in facts]})
    elif not facts:
        click.echo(f"{title}: none")
    else:
        Console(soft_wrap=True).print(_fact_table(facts, title))


def answer_document(answer: Answer) -> dict[str, Any]:
    return {
        "question": answer.question,
        "answer": answer.answer,
        "values": list(answer.values),
        "reading": answer.reading,
        "evidence": [f.to_dict() for f in answer.evidence],
        "context": answer.context,
    }


@click.command()
@click.argument("subject")
@click.argument("predicate")
@click.argument("object")
@click.option("--speaker", help="Who stated the fact (provenance).")
@click.option("--turn", "turn_id", type=int, help="The conversation turn it was stated at.")
@click.option("--fact-id", help="Your own id for the fact.")
@click.option("--multi", is_flag=True, help="The predicate is multi-valued: values accumulate.")
@store_options
@json_option
@friendly_errors
def remember(
    subject: str,
    predicate: str,
    object: str,
    speaker: str | None,
    turn_id: int | None,
    fact_id: str | None,
    multi: bool,
    as_json: bool,
    **store: Any,
) -> None:
    """Store the fact SUBJECT PREDICATE OBJECT.

    A new value of a (SUBJECT, PREDICATE) closes the current one (it stays in
    the history) unless the predicate is multi-valued; re-stating the current
    value changes nothing.

    \b
    ctxneo remember AuthModule DEPENDS_ON RateLimiter --multi --store memory.jsonl
    """
    with memory_from(store) as memory:
        before = memory.current(subject, predicate)
        fact = memory.remember(
            subject,
            predicate,
            object,
            speaker=speaker,
            turn_id=turn_id,
            fact_id=fact_id,
            multi=multi,
        )
        still = {f.seq for f in memory.current(subject, predicate)}
        closed = [f for f in before if f.seq not in still]
    unchanged = any(f.seq == fact.seq for f in before)
    if as_json:
        emit_json(
            {
                "fact": fact.to_dict(),
                "unchanged": unchanged,
                "closed": [f.to_dict() for f in closed],
            }
        )
        return
    if unchanged:
        click.echo(f"unchanged: #{fact.seq} {fact.line()}")
        return
    click.echo(f"remembered #{fact.seq}: {fact.line()}")
    for old in closed:
        click.echo(f"closed #{old.seq}: {old.subject} {old.predicate} {old.object}")


@click.command()
@click.argument("question")
@click.option("--speaker", help="Who asks (resolves 'I' and 'my').")
@click.option("--as-of", type=int, help="Answer as the memory stood at this sequence number.")
@store_options
@json_option
@friendly_errors
def ask(question: str, speaker: str | None, as_of: int | None, as_json: bool, **store: Any) -> None:
    """Answer QUESTION from the memory, with the facts used as evidence.

    \b
    ctxneo ask "Which team owns the service checkout depends on?" --store memory.jsonl
    """
    with memory_from(store) as memory:
        answer = memory.ask(question, speaker=speaker, as_of=as_of)
    if as_json:
        emit_json(answer_document(answer))
        return
    click.echo(answer.answer)
    for fact in answer.evidence:
        click.echo(f"  <- {fact.line()}")


@click.command()
@click.argument("subject")
@click.argument("predicate", required=False)
@store_options
@json_option
@friendly_errors
def history(subject: str, predicate: str | None, as_json: bool, **store: Any) -> None:
    """Every fact of SUBJECT (and PREDICATE), current and closed, oldest first."""
    with memory_from(store) as memory:
        facts = memory.history(subject, predicate)
    _print_facts(facts, f"history of {subject}" + (f" {predicate}" if predicate else ""), as_json)


@click.command()
@click.argument("entity")
@click.option("--as-of", type=int, help="The facts that held at this sequence number.")
@click.option("--all", "include_closed", is_flag=True, help="Include closed (superseded) facts.")
@store_options
@json_option
@friendly_errors
def facts(
    entity: str, as_of: int | None, include_closed: bool, as_json: bool, **store: Any
) -> None:
    """The facts with ENTITY as subject or object (current ones unless --all), newest first."""
    with memory_from(store) as memory:
        found = memory.facts(entity, as_of=as_of, history=include_closed)
    _print_facts(found, f"facts of {entity}", as_json)


@click.command()
@click.argument("subject")
@click.argument("predicate")
@click.argument("object", required=False)
@store_options
@json_option
@friendly_errors
def retract(subject: str, predicate: str, object: str | None, as_json: bool, **store: Any) -> None:
    """Close the current value(s) of SUBJECT PREDICATE (only OBJECT, if given).

    The facts stay in the history; exits with 1 when nothing current matches.
    """
    with memory_from(store) as memory:
        closed = memory.retract(subject, predicate, object)
    if as_json:
        emit_json({"closed": [f.to_dict() for f in closed]})
    else:
        for fact in closed:
            click.echo(f"retracted #{fact.seq}: {fact.subject} {fact.predicate} {fact.object}")
    if not closed:
        what = " ".join(x for x in (subject, predicate, object) if x)
        raise click.ClickException(f"nothing current to retract for {what}")


@click.command()
@click.argument("phrase")
@click.argument("entity")
@store_options
@friendly_errors
def alias(phrase: str, entity: str, **store: Any) -> None:
    """Let questions name ENTITY as PHRASE (e.g. "the money team" for Finance_Eng)."""
    with memory_from(store) as memory:
        memory.alias(phrase, entity)
    click.echo(f"alias: {phrase!r} -> {entity}")


@click.command()
@store_options
@json_option
@friendly_errors
def stats(as_json: bool, **store: Any) -> None:
    """Counts of facts, current facts, entities and predicates."""
    with memory_from(store) as memory:
        counts = memory.stats()
    if as_json:
        emit_json(counts)
    else:
        for key, value in counts.items():
            click.echo(f"{key}: {value}")


COMMANDS = [remember, ask, history, facts, retract, alias, stats]
