"""A memory from the shell: remember, ask, read, retract, declare, clear, list namespaces."""

from __future__ import annotations

from typing import Any

import click

from ctxneo.cli.options import (
    EXIT_USAGE,
    CommandError,
    Integer,
    TakesValues,
    describe,
    emit_json,
    friendly_errors,
    json_option,
    memory_from,
    memory_location,
    min_confidence_option,
    store_options,
)
from ctxneo.cli.tables import echo, print_table
from ctxneo.memory import Memory
from ctxneo.model import MAX_INT, MIN_INT, Answer, Fact, NewFact, check_predicate, shown_name
from ctxneo.vocabulary import closed_before, similar_names

FACT_COLUMNS = ("#", "subject", "predicate", "object", "speaker", "turn", "valid")


def _fact_row(f: Fact) -> list[str]:
    return [
        str(f.seq),
        f.subject,
        f.predicate,
        f.object,
        f.speaker or "",
        "" if f.turn_id is None else str(f.turn_id),
        f"{f.valid_from}–" + ("now" if f.valid_to is None else str(f.valid_to)),
    ]


def _print_facts(memory: Memory, facts: list[Fact], title: str, entity: str, as_json: bool) -> None:
    if as_json:
        emit_json({"facts": [f.to_dict() for f in facts]})
    elif facts:
        print_table(title, FACT_COLUMNS, [_fact_row(f) for f in facts])
    if not facts:
        # Said on stderr: stdout stays empty (or valid JSON) for a script reading it.
        echo(f"{title}: none{_did_you_mean(memory, entity)}", err=True)


def _did_you_mean(memory: Memory, entity: str) -> str:
    # Each name quoted (a name may hold a comma) and escaped (one may hold a terminal's
    # control characters), as the MCP server names them.
    names = memory.stored_names(entity)
    if names:
        return f" (stored as {', '.join(map(repr, names))})"
    if memory.store.facts_of([entity], history=True, limit=1):
        return ""  # (it is in memory: none of what was asked of it)
    # An alias names an entity in questions; these commands take the entity's own name.
    wanted = entity.casefold()
    meant = sorted(
        e
        for e, phrases in memory.store.aliases().items()
        if any(p.casefold() == wanted for p in phrases)
    )
    if meant:
        return f" ({entity!r} is an alias of {', '.join(map(repr, meant))}: give that name)"
    similar = similar_names(memory.store, entity)
    return f" (no entity of that name; similar: {', '.join(map(repr, similar))})" if similar else ""


def _print_answer(answer: Answer, top_k: int) -> None:
    echo(answer.line())
    for fact in answer.evidence:
        echo(f"  <- {fact.line()}")
    if not answer.known and answer.candidate is not None:
        c = answer.candidate
        echo(f"  best reading, not sure enough: {c.answer}  (confidence {c.confidence:.2f})")
    if top_k > 1:
        # The answer's own reading comes first when it has one: it is reading 1, shown above.
        others = list(answer.readings)
        first = 1
        if answer.known and others and others[0].evidence == answer.evidence:
            others, first = others[1:], 2
        for n, reading in enumerate(others, first):
            how = f", {reading.reading}" if reading.reading else ""
            echo(f"reading {n}: {reading.answer}  (confidence {reading.confidence:.2f}{how})")
            for fact in reading.evidence:
                echo(f"  <- {fact.line()}")


@click.command(cls=TakesValues)
@click.argument("subject")
@click.argument("predicate")
@click.argument("object")
@click.option("--speaker", help="Who stated the fact (provenance).")
@click.option(
    "--turn",
    "turn_id",
    type=Integer(MIN_INT, MAX_INT),
    help="The conversation turn it was stated at.",
)
@click.option("--fact-id", help="Your own id for the fact.")
@click.option(
    "--text",
    help="What was said when the fact was stated: kept with it; its words let later "
    "questions name the fact's entities as people spoke of them.",
)
@click.option(
    "--multi",
    is_flag=True,
    help="Add this value beside the current ones: declares the predicate multi-valued "
    "for the whole memory, from this write on (as declare-multi does; declare-multi "
    "--withdraw undoes it).",
)
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
    text: str | None,
    multi: bool,
    as_json: bool,
    **store: Any,
) -> None:
    """Store the fact SUBJECT PREDICATE OBJECT.

    A new value of a (SUBJECT, PREDICATE) closes the current one (it stays in
    the history) unless the predicate is multi-valued; re-stating the current
    value changes nothing.

    \b
    ctxneo remember AuthModule DEPENDS_ON RateLimiter --store memory.jsonl
    """
    with memory_from(store) as memory:
        notes = memory.resemblances(
            [NewFact(subject, predicate, object, speaker, turn_id, fact_id, multi, text)]
        )
        # What the write closed, from the write itself (not read around it).
        written = memory.write(
            [NewFact(subject, predicate, object, speaker, turn_id, fact_id, multi, text)]
        )
    (fact,), (unchanged,), closed = written.facts, written.unchanged(), written.closed
    if as_json:
        emit_json(
            {
                "fact": fact.to_dict(),
                "unchanged": unchanged,
                "closed": [f.to_dict() for f in closed],
                "notes": notes,
            }
        )
        return
    for note in notes:
        # On stderr: a script reading stdout gets the same lines with or without it.
        echo(f"note: {note}", err=True)
    if unchanged:
        echo(f"unchanged: #{fact.seq} {fact.line()}")
        return
    echo(f"remembered #{fact.seq}: {fact.line()}")
    for old in closed:
        echo(f"closed #{old.seq}: {old.subject} {old.predicate} {old.object}")


@click.command(cls=TakesValues)
@click.argument("question")
@click.option("--speaker", help="Who asks (resolves 'I' and 'my').")
@click.option(
    "--as-of",
    type=Integer(0, MAX_INT),
    help="Answer as the memory stood at this sequence number.",
)
@click.option(
    "--top-k",
    type=Integer(min=1),
    default=1,
    show_default=True,
    help="Show this many readings of the question, best first.",
)
@min_confidence_option(
    "Answer UNKNOWN below this confidence. [default: the answerer's, 2/3: a false answer "
    "is taken to cost twice an UNKNOWN]"
)
@click.option(
    "--max-tokens",
    type=Integer(min=1),
    help="A token budget for the context an LLM would be sent.",
)
@store_options
@json_option
@friendly_errors
def ask(
    question: str,
    speaker: str | None,
    as_of: int | None,
    top_k: int,
    min_confidence: float | None,
    max_tokens: int | None,
    as_json: bool,
    **store: Any,
) -> None:
    """Answer QUESTION from the memory, with its evidence.

    Prints the answer and its confidence (or UNKNOWN and why), then the
    evidence; --json prints everything, the context an LLM would be sent
    included.

    \b
    ctxneo ask "Which team owns the service checkout depends on?" --store memory.jsonl
    """
    with memory_from(store, create=False) as memory:
        answer = memory.ask(
            question,
            speaker=speaker,
            as_of=as_of,
            k=top_k,
            min_confidence=min_confidence,
            max_tokens=max_tokens,
        )
    if as_json:
        emit_json(answer.to_dict())
    else:
        _print_answer(answer, top_k)


@click.command(cls=TakesValues)
@click.argument("subject")
@click.argument("predicate", required=False)
@store_options
@json_option
@friendly_errors
def history(subject: str, predicate: str | None, as_json: bool, **store: Any) -> None:
    """Show every value of SUBJECT (and PREDICATE), oldest first.

    Current and closed facts, with who stated them and when each held.
    """
    with memory_from(store, create=False) as memory:
        facts = memory.history(subject, predicate)
        title = f"history of {subject}" + (f" {predicate}" if predicate else "")
        _print_facts(memory, facts, title, subject, as_json)


@click.command(cls=TakesValues)
@click.argument("entity")
@click.option(
    "--as-of",
    type=Integer(0, MAX_INT),
    help="The facts that held at this sequence number.",
)
@click.option("--all", "include_closed", is_flag=True, help="Include closed (superseded) facts.")
@store_options
@json_option
@friendly_errors
def facts(
    entity: str, as_of: int | None, include_closed: bool, as_json: bool, **store: Any
) -> None:
    """Show the facts touching ENTITY, newest first.

    ENTITY is their subject or object. Current facts only, unless --all
    (closed ones too) or --as-of N (those that held at sequence number N).
    """
    with memory_from(store, create=False) as memory:
        found = memory.facts(entity, as_of=as_of, history=include_closed)
        _print_facts(memory, found, f"facts of {entity}", entity, as_json)


@click.command(cls=TakesValues)
@click.argument("subject")
@click.argument("predicate")
@click.argument("object", required=False)
@store_options
@json_option
@friendly_errors
def retract(subject: str, predicate: str, object: str | None, as_json: bool, **store: Any) -> None:
    """Close the current value(s) of SUBJECT PREDICATE.

    With OBJECT, only that value is closed. The facts stay in the history;
    exits with 1 when nothing current matches.
    """
    with memory_from(store, create=False) as memory:
        closed = memory.retract(subject, predicate, object)
        # (a value closed already is said as such, not offered as a misspelt name)
        hint = (
            ""
            if closed
            else closed_before(memory.store, subject, predicate, object)
            or _did_you_mean(memory, subject)
        )
    if as_json:
        emit_json({"closed": [f.to_dict() for f in closed]})
    else:
        for fact in closed:
            echo(f"retracted #{fact.seq}: {fact.subject} {fact.predicate} {fact.object}")
    if not closed:
        what = " ".join(x for x in (subject, predicate, object) if x)
        raise CommandError(f"nothing current to retract for {what}{hint}")


@click.command()
@click.argument("phrase")
@click.argument("entity")
@store_options
@json_option
@friendly_errors
def alias(phrase: str, entity: str, as_json: bool, **store: Any) -> None:
    """Let questions name ENTITY as PHRASE.

    A note on stderr says when ENTITY has no fact yet (a typo, or the two
    given the other way round), with the names in use it resembles; the alias
    is stored all the same.

    \b
    ctxneo alias "the money team" Finance_Eng --store memory.jsonl
    """
    with memory_from(store) as memory:
        notes = memory.alias(phrase, entity)
    if as_json:
        emit_json({"phrase": phrase, "entity": entity, "notes": notes})
        return
    for note in notes:
        echo(f"note: {note}", err=True)
    echo(f"alias: {phrase!r} -> {entity}")


@click.command(name="declare-multi")
@click.argument("predicates", nargs=-1, required=True, metavar="PREDICATE...")
@click.option(
    "--withdraw",
    is_flag=True,
    help="Withdraw the declarations instead: later writes of these predicates close "
    "the current values again; the values current now stay until then.",
)
@store_options
@json_option
@friendly_errors
def declare_multi(predicates: tuple[str, ...], withdraw: bool, as_json: bool, **store: Any) -> None:
    """Declare predicates multi-valued, once for the whole memory.

    A new value of a multi-valued predicate is added beside the current ones
    instead of closing them (DEPENDS_ON: a service depends on several). The
    declaration is stored with the memory and holds for every later write
    until withdrawn (--withdraw); without it, every predicate holds one value
    per subject. Prints the predicates multi-valued afterwards.

    \b
    ctxneo declare-multi DEPENDS_ON USES --store memory.jsonl
    ctxneo declare-multi --withdraw USES --store memory.jsonl
    """
    # Withdrawing reads a memory that must exist; declaring may be its first write.
    with memory_from(store, create=not withdraw) as memory:
        before = memory.multi_valued()
        if withdraw:
            memory.withdraw_multi_valued(*predicates)
        else:
            memory.declare_multi_valued(*predicates)
        declared = sorted(memory.multi_valued())
    if as_json:
        emit_json({"multi_valued": declared})
        return
    if withdraw:
        undeclared = [p for p in dict.fromkeys(predicates) if check_predicate(p) not in before]
        if undeclared:
            # On stderr: a script reading stdout gets the same line with or without it.
            echo(f"note: not declared multi-valued: {', '.join(undeclared)}", err=True)
    click.echo(f"multi-valued: {', '.join(declared) or 'none'}")


@click.command()
@click.argument("words", required=False)
@click.option(
    "--limit",
    type=Integer(1, 1000),
    default=20,
    show_default=True,
    help="At most this many predicates and entity names.",
)
@store_options
@json_option
@friendly_errors
def vocabulary(words: str | None, limit: int, as_json: bool, **store: Any) -> None:
    """List the names in use, to reuse them: the most used predicates (current facts,
    an example each) and, given WORDS, the entity names they find. WORDS find a
    name as a question's words do: by whole words of it, in any form ("payment"
    finds Service_Payments), not by their first letters.

    \b
    ctxneo vocabulary --store memory.jsonl
    ctxneo vocabulary "payments" --store memory.jsonl
    """
    with memory_from(store, create=False) as memory:
        view = memory.vocabulary(words, limit=limit)
    multi = set(view.multi_valued)
    if as_json:
        emit_json(
            {
                "predicates": [
                    {
                        "predicate": u.predicate,
                        "current_facts": u.current,
                        "multi_valued": u.predicate in multi,
                        "example": None if u.example is None else u.example.to_dict(),
                    }
                    for u in view.predicates
                ],
                "predicates_omitted": view.predicates_total - len(view.predicates),
                "multi_valued": view.multi_valued,
                "entities": view.entities,
                "entities_more": view.entities_more,
            }
        )
        return
    rows = [
        [
            u.predicate,
            str(u.current),
            "yes" if u.predicate in multi else "",
            # (names shown as facts show them: quoted when a space or a mark would hide them)
            ""
            if u.example is None
            else f"{shown_name(u.example.subject)} {u.predicate} {shown_name(u.example.object)}",
        ]
        for u in view.predicates
    ]
    if rows:
        print_table("predicates", ["predicate", "current", "multi", "example"], rows)
    omitted = view.predicates_total - len(view.predicates)
    if omitted:
        echo(f"... and {omitted} more predicate{'s' if omitted != 1 else ''}")
    if not rows:
        echo("predicates: none", err=True)
    if words is not None:
        more = " (more match: raise --limit or give more words)" if view.entities_more else ""
        # (quoted as a speaker is when it holds a comma: the list is comma-separated)
        found = ", ".join(shown_name(e, speaker=True) for e in view.entities) or "none"
        echo(f"entities for {words!r}: {found}{more}")
        if not view.entities:
            # What a newcomer tries first is the start of a name ("proj").
            echo("(names are found by whole words of them, not by their first letters)", err=True)


@click.command()
@store_options
@json_option
@friendly_errors
def stats(as_json: bool, **store: Any) -> None:
    """Count the facts, current facts, entities and predicates."""
    with memory_from(store, create=False) as memory:
        counts = memory.stats()
    if as_json:
        emit_json(counts)
    else:
        for key, value in counts.items():
            echo(f"{key}: {value}")


@click.command()
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@store_options
@friendly_errors
def clear(yes: bool, **store: Any) -> None:
    """Delete everything a memory holds (asks first).

    Facts, aliases and multi-valued declarations; sequence numbers start
    again at 1. A journal is replaced by an empty one (and its .torn file
    deleted): no file of the memory keeps what was cleared. On Neo4j the
    memory's namespace is deleted, nothing else on the server.
    """
    with memory_from(store, create=False) as memory:
        where = describe(memory)
        held = memory.stats()
        if not yes:
            prompt = f"Delete {held['facts']} facts and everything else in {where}?"
            try:
                confirmed = click.confirm(prompt, default=False, err=True)
            except click.Abort:  # no answer (end of input): the prompt's line still needs ending
                click.echo(err=True)
                confirmed = False
            if not confirmed:
                raise CommandError(f"nothing deleted (answer y, or pass --yes): {where}")
        memory.clear()
    count = held["facts"]
    click.echo(f"cleared {where} ({count} fact{'' if count == 1 else 's'})")


@click.command()
@store_options
@json_option
@friendly_errors
def namespaces(as_json: bool, **store: Any) -> None:
    """List the memories (namespaces) on a Neo4j server.

    Each with its counts of facts, current facts and entities.
    """
    store_path, _ = memory_location(store.get("store_path"), store.get("uri"))
    if store_path is not None:
        raise CommandError(
            f"namespaces are a Neo4j thing: a journal ({store_path}) holds one memory "
            "(see `ctxneo stats`); give --uri to list a server's",
            EXIT_USAGE,
        )
    with memory_from(store) as memory:
        found = memory.namespaces() or {}
    if as_json:
        emit_json({"namespaces": found})
        return
    if not found:
        echo("no memories on this server", err=True)
        return
    columns = ("namespace", "facts", "current", "entities", "last seq")
    rows = [
        [ns, str(c["facts"]), str(c["current_facts"]), str(c["entities"]), str(c["last_seq"])]
        for ns, c in found.items()
    ]
    print_table("namespaces", columns, rows)


COMMANDS = [
    remember,
    ask,
    history,
    facts,
    retract,
    alias,
    declare_multi,
    vocabulary,
    stats,
    clear,
    namespaces,
]
