"""The MCP server: ctxneo's memory as tools an agent calls (``ctxneo serve``).

Built on the official ``mcp`` SDK (2.x, ``MCPServer``). Every tool is a thin
layer over :class:`ctxneo.Memory`: typed parameters in, a bounded pydantic
result out (see :mod:`ctxneo.mcp_results`). A ctxneo error becomes a tool
error whose text is the CLI's one line (``Error: ...``), and so does an
argument that fails its schema; the server itself never stops on a call.

The memory is opened lazily and opened again after a failure, so a server
started while Neo4j is down answers each call with an error naming the URI and
starts working once Neo4j is up. Several server processes may share one
journal (one per MCP client): the embedded store reads what the others
appended before every read and write.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Callable
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, BeforeValidator, Field, ValidationError

from ctxneo import __version__
from ctxneo.errors import CtxneoError, InvalidFactError
from ctxneo.mcp_drain import drained
from ctxneo.mcp_results import (
    AskResult,
    DeclareResult,
    FactList,
    FactOut,
    PredicateOut,
    RememberManyResult,
    RememberResult,
    RetractResult,
    StatsResult,
    StoredFact,
    VocabularyResult,
    bounded,
)
from ctxneo.mcp_schemas import closed_schema, lean_schema, strict_problems
from ctxneo.memory import Memory
from ctxneo.model import (
    MAX_INT,
    MAX_NAME_BYTES,
    MAX_QUESTION_CHARS,
    MAX_TEXT_BYTES,
    NewFact,
    check_name,
    check_predicate,
)
from ctxneo.vocabulary import closed_before, similar_names

#: Names are at most 4 KB of UTF-8 (checked exactly later); no character is less than a
#: byte, so a longer string is refused before anything reads it.
MAX_NAME_CHARS = MAX_NAME_BYTES

#: Lists come back at most this long unless the caller asks for more...
DEFAULT_LIMIT = 20
#: ...and never longer than this.
MAX_LIMIT = 200
#: Facts one ``remember_many`` call may carry.
MAX_BATCH = 200
#: Readings one ``ask`` may return.
MAX_K = 10
#: The token budget of an answer's context unless the caller sets one.
DEFAULT_MAX_TOKENS = 2_000
#: How far ``facts`` counts past its limit before reporting a lower bound.
COUNT_CAP = 5_000

INSTRUCTIONS = """\
ctxneo is a shared memory of facts for agents. Store each decision as one fact
(subject, predicate, object) with remember, saying who you are (speaker) and the
turn; read with ask (a question in plain words, answered from the facts with the
evidence), facts (what touches an entity), history (every value a subject had).
A subject and predicate hold one current value: stating a new one supersedes the
old, which stays in the history. Use multi=true for predicates that hold many
values (DEPENDS_ON). Other agents name things too: call vocabulary to reuse the
predicates and entity names in use; a write's notes say when a new name
resembles one. Predicates are identifiers like OWNED_BY. Answers may be
UNKNOWN with a reason; every answer comes with its confidence and the facts it
rests on: the memory reads questions by their words and can misread one, so check
an answer's evidence before acting on it. Other agents write to the same memory:
ask again rather than trusting what you read earlier."""

# -- parameters -----------------------------------------------------------------


def _not_bool(value: object) -> object:
    # JSON true/false would otherwise pass as the numbers 1 and 0.
    if isinstance(value, bool):
        raise ValueError("expected a number, not true or false")
    return value


Number = BeforeValidator(_not_bool)

Subject = Annotated[
    str,
    Field(
        description="The entity the fact is about, e.g. Service_Checkout. Stored literally: "
        "spell an entity the same way every time.",
        max_length=MAX_NAME_CHARS,
    ),
]
Predicate = Annotated[
    str,
    Field(
        description="The relation, an identifier: letters, digits and underscores, starting "
        "with a letter, e.g. OWNED_BY, DEPENDS_ON, USES_DATABASE.",
        max_length=MAX_NAME_CHARS,
    ),
]
Object = Annotated[
    str,
    Field(
        description="The value or the other entity, e.g. Payments_Team. Stored literally.",
        max_length=MAX_NAME_CHARS,
    ),
]
Speaker = Annotated[
    str | None,
    Field(
        description="Who states it: your agent name, e.g. Agent_Planner.",
        max_length=MAX_NAME_CHARS,
    ),
]
Turn = Annotated[
    Annotated[int, Number] | None,
    Field(description="The conversation turn or step at which it was stated."),
]
Text = Annotated[
    str | None,
    Field(
        description="What was said when the fact was stated (one sentence): kept with it; "
        "its words let later questions name the fact's things as people spoke of them.",
        max_length=MAX_TEXT_BYTES,
    ),
]
Multi = Annotated[
    bool,
    Field(
        description="The predicate holds many values at once (DEPENDS_ON, HAS_MEMBER): values "
        "accumulate instead of replacing each other. Once given, the predicate stays "
        "multi-valued in this memory (declare single_valued undoes it)."
    ),
]
AsOf = Annotated[
    Annotated[int, Field(ge=0, le=MAX_INT), Number] | None,
    Field(
        description="Read the memory as it stood right after write number as_of (a seq from "
        "any fact, or last_seq from stats). Omit for now.",
    ),
]
Limit = Annotated[
    int,
    Field(ge=1, le=MAX_LIMIT, description=f"At most this many items (1-{MAX_LIMIT})."),
    Number,
]


class AliasIn(BaseModel):
    """A phrase questions may use for an entity."""

    phrase: Annotated[
        str, Field(description="How people name it, e.g. the pay team.", max_length=MAX_NAME_CHARS)
    ]
    entity: Annotated[
        str, Field(description="The entity, exactly as stored.", max_length=MAX_NAME_CHARS)
    ]


class FactIn(BaseModel):
    """One fact for remember_many."""

    subject: Subject
    predicate: Predicate
    object: Object
    speaker: Speaker = None
    turn: Turn = None
    multi: Multi = False
    text: Text = None


# -- descriptions -----------------------------------------------------------------

REMEMBER = """\
Store one fact or decision as (subject, predicate, object), with who stated it
(speaker) and when (turn). Names are stored literally; no LLM is called and
nothing is inferred.

Supersession: a (subject, predicate) holds one current value. A new value
closes the current one, which stays in the history (see history); the result
lists what was closed. Re-stating the current value changes nothing
(unchanged=true). With multi=true the predicate holds many values at once and
they accumulate until retracted.

Returns the stored fact with its sequence number (seq) and the closed facts."""

REMEMBER_MANY = f"""\
Store several facts in one call (at most {MAX_BATCH}) with exactly the meaning of
calling remember for each in order: a later fact supersedes an earlier one with
the same subject and predicate unless multi. Every fact is checked before any is
written: one bad fact stores nothing.

Returns each fact as stored (unchanged=true when it was already current) and the
facts that were current before the call and are now closed."""

ASK = """\
Answer a question in plain words from the stored facts, with no LLM call: one
fact ("What database does Project Atlas use?"), a join of two facts ("Which team
owns the service that checkout depends on?"), history ("What was it
originally?") or provenance ("Who decided it?").

Returns the answer with its confidence (0-1), the evidence (the facts walked,
each with speaker, turn and seq), up to k-1 alternatives (other readings) and
a context (question plus evidence as compact lines, to quote). When the memory does not
hold an answer it is sure of, answer is UNKNOWN and reason says why; candidate
may offer the best rejected reading: a lead to check, not a fact.

as_of answers as the memory stood after that write; speaker is who asks
(resolves "I" and "my")."""

FACTS = """\
List the facts that touch one entity, as subject or as object, newest first.
Current facts only unless history=true, which adds the superseded and
retracted ones (valid_to set). as_of gives the facts as they stood after that
write.

At most `limit` facts are returned; `omitted` says how many more matched. An
entity that is not in the memory is an error naming similar entities."""

HISTORY = """\
Every value a subject has had, oldest first, current and closed: when each
became current (valid_from), when it was superseded or retracted (valid_to,
null while current), who stated it and at which turn. Give predicate to follow
one slot, e.g. subject=Project_Atlas predicate=USES_DATABASE.

Returns the newest `limit` facts (oldest first); older ones are not read, so
`omitted` is 1 with `omitted_exact` false when some were left out. A subject
that is not in the memory is an error naming similar entities."""

RETRACT = """\
Close the current value of (subject, predicate) because it no longer holds, or
only the given object (for a multi-valued predicate). Nothing is deleted: the
facts stay in the history with valid_to set, and a later remember can state a
value again.

Returns the closed facts; when nothing current matches it is an error, which says
when the value was closed if it was (a retried call closes nothing more)."""

VOCABULARY = """\
The names this memory already uses, so you reuse them instead of inventing new
ones (OWNED_BY, not OWNER beside it): the most used predicates, each with its
count of current facts, whether it is multi-valued and an example fact; and,
given words, the entity names they find (words="payments" finds
Payments_Team, Service_Payments). Call it before writing into a memory others
share."""

DECLARE = """\
Declare how this memory reads its names, for every agent and every later
write: multi_valued lists predicates whose values accumulate (DEPENDS_ON);
single_valued withdraws such a declaration (later values supersede again;
current values stay); aliases let questions name an entity by a phrase
({"phrase": "the pay team", "entity": "Payments_Team"}).

Returns the multi-valued predicates and the aliases of the entities named."""

STATS = """\
Counts for this memory: facts (current and closed), current facts, entities,
predicates, and last_seq, the latest write's sequence number (pass it as as_of
to pin later reads). Also names the memory served (a journal file, or a Neo4j
URI and namespace). On a large Neo4j memory this counts every fact."""


def _annotations(title: str, *, writes: bool, destructive: bool = False) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=not writes,
        # Supersession closes a value, it does not delete it: only retract takes
        # a value out of the current view.
        destructive_hint=destructive,
        idempotent_hint=True,
        open_world_hint=False,
    )


# -- the memory behind the tools ---------------------------------------------------


class MemoryHandle:
    """The memory the tools use: opened on first use, and again after a failed open.

    Args:
        opener: makes the memory (``Memory.open(...)`` with the server's options).
        name: how the memory is named to agents (never holds a password).
    """

    def __init__(self, opener: Callable[[], Memory], name: str) -> None:
        self._opener = opener
        self.name = name
        self._memory: Memory | None = None
        self._lock = threading.Lock()

    def get(self) -> Memory:
        """The open memory.

        Raises:
            CtxneoError: it cannot be opened (the same error on every call until it can).
        """
        with self._lock:
            if self._memory is None:
                self._memory = self._opener()
            return self._memory

    def close(self) -> None:
        with self._lock:
            if self._memory is not None:
                self._memory.close()
                self._memory = None


class CtxneoMCPServer(MCPServer):
    """``MCPServer`` whose tool errors read like the CLI's: ``Error: <one line>``, and
    whose tool calls in one session run one at a time, in the order they came."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_order: weakref.WeakKeyDictionary[object, anyio.Lock] = weakref.WeakKeyDictionary()
        self._one_lock = anyio.Lock()

    def _session_lock(self, context: Any) -> anyio.Lock:
        """The lock that puts the calls of this call's client connection in order.

        The key is the SDK's per-client ``Connection`` (the session object is made anew
        for each request). The SDK keeps it private on the session; where it is not
        found, one lock serves the whole server: calls stay in order, and only clients
        over HTTP lose running beside each other.
        """
        try:
            session = context.request_context.session if context is not None else None
        except (AttributeError, ValueError):  # a context outside any request
            session = None
        connection = getattr(session, "connection", None) or getattr(session, "_connection", None)
        if connection is None:
            return self._one_lock
        try:
            lock = self._in_order.get(connection)
            if lock is None:
                lock = self._in_order[connection] = anyio.Lock()
        except TypeError:  # not weakly referable
            return self._one_lock
        return lock

    async def run_stdio_async(self) -> None:
        """As the SDK serves stdio, but a client that closes its input gets a reply to
        every request it sent first (:mod:`ctxneo.mcp_drain`)."""
        lowlevel = getattr(self, "_lowlevel_server", None)
        if lowlevel is None:  # (an SDK that keeps it elsewhere: serve as it does)
            await super().run_stdio_async()
            return
        async with stdio_server() as (read_stream, write_stream):
            reads, writes = drained(read_stream, write_stream)
            await lowlevel.run(reads, writes, lowlevel.create_initialization_options())

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        # The SDK runs each request as its own task, and a sync tool in a worker thread,
        # so a client that sends "remember" and then "facts" without waiting for the
        # first reply could have the second run first (36 times in 40 over stdio): a
        # memory must show a write to the calls sent after it. The lock is fair (FIFO)
        # and taken before anything here awaits, so calls run in the order they came;
        # other sessions (other agents over HTTP) still run beside this one.
        # Shielded: when a client closes its end (stdin at EOF), the SDK cancels its
        # requests; one still waiting for its turn would then be dropped, though it was
        # received (39 of 40 pipelined writes lost). A sync tool already running in its
        # worker thread was never cancellable, so every call received runs to its end,
        # in order, and the server exits after them.
        with anyio.CancelScope(shield=True):
            async with self._session_lock(context):
                return await self._call_tool(name, arguments, context)

    async def _call_tool(self, name: str, arguments: dict[str, Any], context: Any) -> Any:
        schema = self._tool_input_schema(name)
        if schema is not None:
            problems = strict_problems(schema, arguments or {})
            if problems:
                raise ToolError(f"Error: invalid arguments for {name}: " + "; ".join(problems))
        try:
            result = await super().call_tool(name, arguments, context)
        except ToolError as e:
            cause = e.__cause__
            if isinstance(cause, CtxneoError):
                # One line, as the CLI prints it, even when a driver's message has several.
                raise ToolError("Error: " + " ".join(str(cause).splitlines())) from cause
            if isinstance(cause, ValidationError):
                raise ToolError(f"Error: {arguments_error(name, cause)}") from cause
            raise
        if isinstance(result, CallToolResult) and not result.is_error:
            # A tool returns a pydantic model, which the SDK renders as indented JSON
            # text (no outputSchema is published: see build_server). The result
            # carries it as structured content and as the same JSON, compact.
            (block,) = result.content
            assert isinstance(block, TextContent)
            result.structured_content = json.loads(block.text)
            text = json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
            result.content = [TextContent(type="text", text=text)]
        return result


def arguments_error(tool: str, error: ValidationError) -> str:
    """A schema failure in one line: each bad argument, what was wrong, what was given."""
    problems = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        given = "" if item["type"] == "missing" else f" (got {item.get('input')!r:.80})"
        problems.append(f"{where}: {item['msg']}{given}")
    return f"invalid arguments for {tool}: " + "; ".join(problems)


def build_server(handle: MemoryHandle, *, log_level: str = "WARNING") -> MCPServer:
    """An MCP server whose tools read and write the memory behind ``handle``."""
    server = CtxneoMCPServer(
        "ctxneo",
        title="ctxneo memory",
        description="A shared context-graph memory: facts with provenance and history.",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level=log_level,  # type: ignore[arg-type]
    )

    @server.tool(description=REMEMBER, annotations=_annotations("Remember a fact", writes=True))
    def remember(
        subject: Subject,
        predicate: Predicate,
        object: Object,
        speaker: Speaker = None,
        turn: Turn = None,
        multi: Multi = False,
        text: Text = None,
    ) -> RememberResult:
        (stored,), closed, notes = _write(
            handle.get(), [NewFact(subject, predicate, object, speaker, turn, None, multi, text)]
        )
        return RememberResult(
            stored=stored.fact, unchanged=stored.unchanged, closed=closed, notes=notes
        )

    @server.tool(
        description=REMEMBER_MANY,
        annotations=_annotations("Remember several facts", writes=True),
    )
    def remember_many(
        facts: Annotated[
            list[FactIn],
            Field(min_length=1, max_length=MAX_BATCH, description="The facts, in order."),
        ],
    ) -> RememberManyResult:
        stored, closed, notes = _write(
            handle.get(),
            [
                NewFact(f.subject, f.predicate, f.object, f.speaker, f.turn, None, f.multi, f.text)
                for f in facts
            ],
        )
        return RememberManyResult(
            stored=stored,
            closed=closed[:MAX_LIMIT],
            closed_omitted=max(0, len(closed) - MAX_LIMIT),
            notes=notes,
        )

    @server.tool(description=ASK, annotations=_annotations("Ask the memory", writes=False))
    def ask(
        question: Annotated[
            str,
            Field(description="The question, in plain words.", max_length=MAX_QUESTION_CHARS),
        ],
        speaker: Annotated[
            str | None,
            Field(
                description="Who asks: resolves 'I' and 'my' to this name.",
                max_length=MAX_NAME_CHARS,
            ),
        ] = None,
        as_of: AsOf = None,
        k: Annotated[
            int,
            Field(ge=1, le=MAX_K, description=f"How many readings to return (1-{MAX_K})."),
            Number,
        ] = 1,
        min_confidence: Annotated[
            Annotated[float, Field(ge=0.0, le=1.0), Number] | None,
            Field(
                description="Answer only at or above this confidence (0-1); below it the answer "
                "is UNKNOWN and the reading is offered as candidate.",
            ),
        ] = None,
        max_tokens: Annotated[
            int,
            Field(
                ge=16,
                le=100_000,
                description="A token budget for the context (facts cut to fit it are "
                "counted in its last line).",
            ),
            Number,
        ] = DEFAULT_MAX_TOKENS,
        topic: Annotated[
            str | None,
            Field(
                description="The entity the question is about, when you know it exactly.",
                max_length=MAX_NAME_CHARS,
            ),
        ] = None,
        limit: Annotated[
            int,
            Field(
                ge=1,
                le=MAX_LIMIT,
                description=f"At most this many values and evidence facts (1-{MAX_LIMIT}).",
            ),
            Number,
        ] = DEFAULT_LIMIT,
    ) -> AskResult:
        answer = handle.get().ask(
            question,
            speaker=speaker,
            as_of=as_of,
            k=k,
            min_confidence=min_confidence,
            max_tokens=max_tokens,
            topic=topic,
        )
        return AskResult.of(answer, limit)

    @server.tool(description=FACTS, annotations=_annotations("Facts of an entity", writes=False))
    def facts(
        entity: Annotated[
            str,
            Field(description="The entity's name, exactly as stored.", max_length=MAX_NAME_CHARS),
        ],
        as_of: AsOf = None,
        history: Annotated[
            bool, Field(description="Include superseded and retracted facts.")
        ] = False,
        limit: Limit = DEFAULT_LIMIT,
    ) -> FactList:
        memory = handle.get()
        # Ask the store for more than the limit, so the count of what is left out is exact.
        found = memory.store.facts_of([entity], as_of=as_of, history=history, limit=COUNT_CAP)
        if as_of is not None:
            found = [f for f in found if f.seq <= as_of]
        if not found:
            _require_entity(memory, entity)
        kept, omitted = bounded(found, limit)
        return FactList(facts=kept, omitted=omitted, omitted_exact=len(found) < COUNT_CAP)

    @server.tool(
        description=HISTORY, annotations=_annotations("History of a subject", writes=False)
    )
    def history(
        subject: Annotated[
            str,
            Field(description="The subject's name, exactly as stored.", max_length=MAX_NAME_CHARS),
        ],
        predicate: Annotated[
            str | None,
            Field(description="Only this relation, e.g. USES_DATABASE.", max_length=MAX_NAME_CHARS),
        ] = None,
        limit: Limit = DEFAULT_LIMIT,
    ) -> FactList:
        memory = handle.get()
        # One more than asked: whether older facts were left out, without reading them all.
        found = memory.history(subject, predicate, limit=limit + 1)
        if not found:
            _require_entity(memory, subject)
        newest = found[-limit:]
        return FactList(
            facts=[FactOut.of(f) for f in newest],
            omitted=len(found) - len(newest),
            omitted_exact=len(found) <= limit,
        )

    @server.tool(
        description=RETRACT,
        annotations=_annotations("Retract a value", writes=True, destructive=True),
    )
    def retract(
        subject: Subject,
        predicate: Predicate,
        object: Annotated[
            str | None,
            Field(
                description="Only this value; omit to close every current value.",
                max_length=MAX_NAME_CHARS,
            ),
        ] = None,
        limit: Limit = DEFAULT_LIMIT,
    ) -> RetractResult:
        memory = handle.get()
        closed = memory.retract(subject, predicate, object)
        if not closed:
            what = " ".join(x for x in (subject, predicate, object) if x)
            closed_at = closed_before(memory.store, subject, predicate, object)
            raise InvalidFactError(f"nothing current to retract for {what}{closed_at}")
        kept, omitted = bounded(closed, limit)
        return RetractResult(closed=kept, closed_omitted=omitted)

    @server.tool(description=STATS, annotations=_annotations("Memory counts", writes=False))
    def stats() -> StatsResult:
        counts = handle.get().stats()
        return StatsResult(memory=handle.name, **counts)

    @server.tool(description=VOCABULARY, annotations=_annotations("Names in use", writes=False))
    def vocabulary(
        words: Annotated[
            str | None,
            Field(
                description="Words of entity names to look up; omit for predicates only.",
                max_length=MAX_QUESTION_CHARS,
            ),
        ] = None,
        limit: Limit = DEFAULT_LIMIT,
    ) -> VocabularyResult:
        view = handle.get().vocabulary(words, limit=limit)
        multi = set(view.multi_valued)
        return VocabularyResult(
            predicates=[
                PredicateOut(
                    predicate=u.predicate,
                    current_facts=u.current,
                    multi_valued=u.predicate in multi,
                    example=None if u.example is None else u.example.line(),
                )
                for u in view.predicates
            ],
            predicates_omitted=view.predicates_total - len(view.predicates),
            multi_valued=view.multi_valued,
            entities=view.entities,
            entities_more=view.entities_more,
        )

    @server.tool(description=DECLARE, annotations=_annotations("Declare names", writes=True))
    def declare(
        multi_valued: Annotated[
            list[str] | None,
            Field(description="Predicates to declare multi-valued.", max_length=MAX_BATCH),
        ] = None,
        single_valued: Annotated[
            list[str] | None,
            Field(description="Predicates to make single-valued again.", max_length=MAX_BATCH),
        ] = None,
        aliases: Annotated[
            list[AliasIn] | None, Field(description="Phrases for entities.", max_length=MAX_BATCH)
        ] = None,
    ) -> DeclareResult:
        memory = handle.get()
        if not (multi_valued or single_valued or aliases):
            raise InvalidFactError("nothing to declare: give multi_valued, single_valued, aliases")
        if set(multi_valued or ()) & set(single_valued or ()):
            raise InvalidFactError("a predicate cannot be both multi- and single-valued")
        # Every name checked before any is applied: a bad one leaves the memory as it was.
        for predicate in [*(multi_valued or ()), *(single_valued or ())]:
            check_predicate(predicate)
        for alias in aliases or ():
            check_name(alias.phrase, "alias phrase")
            _require_entity(memory, alias.entity)
        if multi_valued:
            memory.declare_multi_valued(*multi_valued)
        if single_valued:
            memory.withdraw_multi_valued(*single_valued)
        for alias in aliases or ():
            memory.alias(alias.phrase, alias.entity)
        named = {a.entity for a in aliases or ()}
        return DeclareResult(
            multi_valued=sorted(memory.multi_valued()),
            aliases={e: list(p) for e, p in memory.store.aliases().items() if e in named},
        )

    for tool in server._tool_manager.list_tools():
        tool.parameters = lean_schema(closed_schema(tool.parameters))
        # No outputSchema: the tool list is read into every agent's context, and the
        # results' schemas were over half of it (the results are documented in the
        # README and typed in ctxneo.mcp_results; call_tool still returns them as
        # structured content).
        tool.fn_metadata.output_schema = None
    return server


# -- helpers ---------------------------------------------------------------------------


def _write(memory: Memory, new: list[NewFact]) -> tuple[list[StoredFact], list[FactOut], list[str]]:
    """Write ``new`` in one batch; say which were already current, what the batch closed
    (from the write itself: a concurrent writer's closures are never reported as
    ours), and which new names resemble names in use."""
    # resemblances checks every fact before it reads: a bad fact is refused first.
    notes = memory.resemblances(new)
    written = memory.write(new)
    stored = [
        StoredFact(fact=FactOut.of(fact), unchanged=unchanged)
        for fact, unchanged in zip(written.facts, written.unchanged(), strict=True)
    ]
    return stored, [FactOut.of(f) for f in written.closed], notes


def _require_entity(memory: Memory, name: str) -> None:
    """Raise a clear error, with similar names, when ``name`` is in no fact of the memory."""
    if memory.store.facts_of([name], history=True, limit=1):
        return
    similar = similar_names(memory.store, name)
    hint = f"; similar: {', '.join(repr(s) for s in similar)}" if similar else ""
    raise InvalidFactError(f"no entity {name!r} in this memory{hint}")
