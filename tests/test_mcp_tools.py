"""The MCP tools, in process, through the SDK's real client, on the journal and on Neo4j."""

from __future__ import annotations

import json
import socket
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp
import pytest
from conftest import connect

from ctxneo.mcp_server import MAX_LIMIT, MemoryHandle, build_server
from ctxneo.memory import Memory
from ctxneo.stores.networkx import NetworkXStore

JOIN = "Which team owns the service that checkout depends on?"


def run(main: Callable[[], Awaitable[None]]) -> None:
    """Run ``main`` on an event loop; a failed assertion inside comes out bare."""
    try:
        anyio.run(main)
    except BaseExceptionGroup as group:
        # The client's task groups wrap a failed assertion in exception groups.
        while isinstance(group, BaseExceptionGroup) and len(group.exceptions) == 1:
            group = group.exceptions[0]  # type: ignore[assignment]
        raise group from None


def run_client(handle: MemoryHandle, script: Callable[[mcp.Client], Awaitable[None]]) -> None:
    async def main() -> None:
        async with mcp.Client(build_server(handle)) as client:
            await script(client)

    run(main)


async def ok(client: mcp.Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def error(client: mcp.Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    (content,) = result.content
    text = content.text  # type: ignore[union-attr]
    # The CLI's form: one line, "Error: ..."
    assert text.startswith("Error: ") and "\n" not in text, text
    return text


@pytest.fixture(params=["journal", "neo4j"])
def handle(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryHandle]:
    if request.param == "journal":
        memory = Memory(NetworkXStore(tmp_path / "memory.jsonl"))
    else:
        memory = Memory(connect(request.getfixturevalue("neo4j_server")))
    yield MemoryHandle(lambda: memory, request.param)
    if request.param == "neo4j":
        memory.store.clear()
    memory.close()


def test_every_tool_is_described_typed_bounded_and_annotated() -> None:
    async def script(client: mcp.Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {
            "remember",
            "remember_many",
            "ask",
            "facts",
            "history",
            "retract",
            "stats",
            "vocabulary",
            "declare",
        }
        for tool in tools.values():
            assert len(tool.description or "") > 200, tool.name
            for name, schema in tool.input_schema.get("properties", {}).items():
                assert "description" in schema or "items" in schema, (tool.name, name)
            if "limit" in tool.input_schema.get("properties", {}):
                assert tool.input_schema["properties"]["limit"]["maximum"] == MAX_LIMIT
            hints = tool.annotations
            assert hints is not None and hints.open_world_hint is False, tool.name
        for name in ("ask", "facts", "history", "stats", "vocabulary"):
            assert tools[name].annotations.read_only_hint is True  # type: ignore[union-attr]
        for name in ("remember", "remember_many", "retract", "declare"):
            hints = tools[name].annotations
            assert hints.read_only_hint is False and hints.idempotent_hint is True  # type: ignore[union-attr]
        assert tools["retract"].annotations.destructive_hint is True  # type: ignore[union-attr]
        assert tools["remember"].annotations.destructive_hint is False  # type: ignore[union-attr]
        batch = tools["remember_many"].input_schema["properties"]["facts"]
        assert batch["maxItems"] == 200 and batch["minItems"] == 1

    run_client(MemoryHandle(Memory.open, "in process"), script)


def test_every_tool_on_both_stores(handle: MemoryHandle) -> None:
    async def script(client: mcp.Client) -> None:
        # remember: stores, re-stating changes nothing, a new value closes the old one
        first = await ok(
            client,
            "remember",
            subject="Project_Atlas",
            predicate="USES_DATABASE",
            object="PostgreSQL",
            speaker="Agent_Planner",
            turn=1,
        )
        old = first["stored"]
        assert (old["object"], old["speaker"], old["turn"], old["current"]) == (
            "PostgreSQL",
            "Agent_Planner",
            1,
            True,
        )
        assert first["unchanged"] is False and first["closed"] == []
        again = await ok(
            client,
            "remember",
            subject="Project_Atlas",
            predicate="USES_DATABASE",
            object="PostgreSQL",
        )
        assert again["unchanged"] is True and again["stored"]["seq"] == old["seq"]
        new = await ok(
            client,
            "remember",
            subject="Project_Atlas",
            predicate="USES_DATABASE",
            object="CockroachDB",
            speaker="Agent_Implementer",
            turn=5,
        )
        (closed,) = new["closed"]
        assert closed["object"] == "PostgreSQL" and closed["valid_to"] == new["stored"]["seq"]

        # remember_many: one call, the meaning of one remember after another
        batch = await ok(
            client,
            "remember_many",
            facts=[
                {
                    "subject": "Service_Checkout",
                    "predicate": "DEPENDS_ON",
                    "object": "Service_Payments",
                    "speaker": "Agent_Planner",
                    "turn": 2,
                    "multi": True,
                },
                {
                    "subject": "Service_Checkout",
                    "predicate": "DEPENDS_ON",
                    "object": "Service_Search",
                    "speaker": "Agent_Planner",
                    "turn": 2,
                    "multi": True,
                },
                {
                    "subject": "Service_Payments",
                    "predicate": "OWNED_BY",
                    "object": "Payments_Team",
                    "speaker": "Agent_Implementer",
                    "turn": 3,
                },
                {"subject": "Service_Payments", "predicate": "OWNED_BY", "object": "Payments_Team"},
                {"subject": "Ticket_7", "predicate": "HAS_PRIORITY", "object": "high"},
                {"subject": "Ticket_7", "predicate": "HAS_PRIORITY", "object": "critical"},
                {"subject": "Project_Atlas", "predicate": "USES_DATABASE", "object": "SQLite"},
            ],
        )
        stored = batch["stored"]
        assert [s["unchanged"] for s in stored] == [False, False, False, True, False, False, False]
        assert stored[4]["fact"]["current"] is False  # "high", superseded later in the batch
        # Only what was current before the call is reported closed: CockroachDB.
        assert [c["object"] for c in batch["closed"]] == ["CockroachDB"]
        assert batch["closed_omitted"] == 0

        # ask: a join of two agents' facts, with its evidence
        answer = await ok(client, "ask", question=JOIN)
        assert answer["answer"] == "Payments_Team" and answer["known"] is True
        assert isinstance(answer["confidence"], float) and 0.0 <= answer["confidence"] <= 1.0
        said = {(f["subject"], f["predicate"], f["speaker"], f["turn"]) for f in answer["evidence"]}
        assert said >= {
            ("Service_Checkout", "DEPENDS_ON", "Agent_Planner", 2),
            ("Service_Payments", "OWNED_BY", "Agent_Implementer", 3),
        }
        assert "Payments_Team" in answer["context"] and answer["alternatives"] == []
        # k readings: the answer's own is not repeated among the alternatives
        three = await ok(client, "ask", question=JOIN, k=3)
        assert 1 <= len(three["alternatives"]) <= 2
        assert all(a["answer"] != three["answer"] for a in three["alternatives"])
        unknown = await ok(client, "ask", question="What does the moon eat?")
        assert (unknown["answer"], unknown["known"]) == ("UNKNOWN", False)
        assert unknown["reason"] and unknown["evidence"] == []
        past = await ok(
            client, "ask", question="What database does Project Atlas use?", as_of=old["seq"]
        )
        assert past["answer"] == "PostgreSQL"

        # facts: bounded, with what was left out
        facts = await ok(client, "facts", entity="Service_Checkout", limit=1)
        assert len(facts["facts"]) == 1 and facts["omitted"] == 1 and facts["omitted_exact"]
        atlas = await ok(client, "facts", entity="Project_Atlas", history=True)
        assert [f["object"] for f in atlas["facts"]] == ["SQLite", "CockroachDB", "PostgreSQL"]
        then = await ok(client, "facts", entity="Project_Atlas", as_of=old["seq"])
        assert [f["object"] for f in then["facts"]] == ["PostgreSQL"]
        missing = await error(client, "facts", entity="Service_Chekout")
        assert "no entity 'Service_Chekout'" in missing and "'Service_Checkout'" in missing

        # history: oldest first, the newest `limit` kept
        history = await ok(client, "history", subject="Project_Atlas", predicate="USES_DATABASE")
        values = [(f["object"], f["current"]) for f in history["facts"]]
        assert values == [("PostgreSQL", False), ("CockroachDB", False), ("SQLite", True)]
        newest = await ok(client, "history", subject="Project_Atlas", limit=1)
        assert [f["object"] for f in newest["facts"]] == ["SQLite"]
        # Older facts are not read to be counted: at least one was left out.
        assert newest["omitted"] == 1 and newest["omitted_exact"] is False
        assert history["omitted"] == 0 and history["omitted_exact"] is True
        assert "no entity" in await error(client, "history", subject="Nobody")

        # retract: closes one value of a multi-valued key; twice is an error that says the
        # first call closed it (a client retrying after a lost reply learns it is done)
        retracted = await ok(
            client,
            "retract",
            subject="Service_Checkout",
            predicate="DEPENDS_ON",
            object="Service_Search",
        )
        assert [f["object"] for f in retracted["closed"]] == ["Service_Search"]
        assert retracted["closed"][0]["current"] is False
        again = await error(
            client,
            "retract",
            subject="Service_Checkout",
            predicate="DEPENDS_ON",
            object="Service_Search",
        )
        assert "nothing current to retract" in again
        assert f"already closed at #{retracted['closed'][0]['valid_to']}" in again
        never = await error(client, "retract", subject="Service_Checkout", predicate="HOSTED_ON")
        assert "nothing current to retract" in never and "already closed" not in never

        stats = await ok(client, "stats")
        assert stats["facts"] == 8 and stats["current_facts"] == 4
        assert stats["last_seq"] >= retracted["closed"][0]["valid_to"]
        assert stats["memory"] == handle.name

    run_client(handle, script)


def test_bad_calls_are_one_line_tool_errors_and_store_nothing(handle: MemoryHandle) -> None:
    async def script(client: mcp.Client) -> None:
        fact = {"subject": "Ticket_7", "predicate": "HAS_PRIORITY", "object": "high"}
        bad_predicate = await error(client, "remember", **{**fact, "predicate": "has priority"})
        assert "invalid predicate 'has priority'" in bad_predicate
        assert "did you mean 'HAS_PRIORITY'" in bad_predicate
        assert "turn: " in await error(client, "remember", **fact, turn="soon")
        assert "turn: " in await error(client, "remember", **fact, turn=True)
        assert "subject must be a non-empty string" in await error(
            client, "remember", **{**fact, "subject": " "}
        )
        assert "object: Field required" in await error(
            client, "remember", subject="Ticket_7", predicate="HAS_PRIORITY"
        )
        assert "limit: " in await error(client, "facts", entity="Ticket_7", limit=MAX_LIMIT + 1)
        assert "k: " in await error(client, "ask", question="Which?", k=0)
        # One bad fact in a batch: nothing of the batch is written.
        many = [fact, {**fact, "predicate": "has-priority"}]
        assert "invalid predicate" in await error(client, "remember_many", facts=many)
        assert (await ok(client, "stats"))["facts"] == 0
        assert "remember_many" in await error(client, "remember_many", facts=[])
        # A message that would echo a newline still comes back on one line.
        assert "nothing current" in await error(client, "retract", subject="a\nb", predicate="P")
        # Hostile text is stored literally, and the server goes on answering.
        odd = "Robert'); MATCH (n) DETACH DELETE n; //\n\"ü\\"
        stored = await ok(client, "remember", subject=odd, predicate="NOTE", object=odd)
        assert stored["stored"]["subject"] == odd
        assert (await ok(client, "facts", entity=odd))["facts"][0]["object"] == odd

    run_client(handle, script)


def test_arguments_are_taken_as_the_schema_types_them_and_unknown_keys_are_refused() -> None:
    async def script(client: mcp.Client) -> None:
        fact = {"subject": "Ticket_7", "predicate": "HAS_PRIORITY", "object": "high"}
        # Coercions the Python API refuses are refused here too: nothing is stored.
        # (the value as JSON spells it, as the client sent it)
        assert 'multi: expected boolean (got "yes")' in await error(
            client, "remember", **fact, multi="yes"
        )
        assert "multi: expected boolean (got 1)" in await error(client, "remember", **fact, multi=1)
        assert 'turn: expected integer or null (got "7")' in await error(
            client, "remember", **fact, turn="7"
        )
        assert 'k: expected integer (got "3")' in await error(client, "ask", question="q?", k="3")
        assert "k: expected integer (got true)" in await error(client, "ask", question="q?", k=True)
        typo = await error(client, "remember", **fact, mutli=True)
        assert "mutli: not an argument of this tool" in typo and "multi" in typo
        nested = await error(client, "remember_many", facts=[{**fact, "turn": "2"}])
        assert "facts[0].turn: expected integer or null" in nested
        assert "extra: not an argument" in await error(client, "stats", extra=1)
        # A reply to a bad call is never much longer than the call: a list past its
        # limit is one problem, and at most ten are listed.
        huge = await error(client, "remember_many", facts=[0] * 5000)
        assert huge.endswith("facts: at most 200 items (got 5000)") and len(huge) < 200
        many = (await error(client, "remember_many", facts=[0] * 150)).split("; ")
        assert len(many) == 11 and many[-1] == "the rest not checked"
        assert "at most 200 items" in await error(client, "declare", multi_valued=["A"] * 201)
        # a write number past what either store counts in is refused as such, by every tool
        for tool, args in (("facts", {"entity": "A"}), ("ask", {"question": "who owns A?"})):
            past = await error(client, tool, **args, as_of=10**30)
            assert "as_of" in past and "less than or equal to" in past, past
        assert (await ok(client, "stats"))["facts"] == 0
        assert (await ok(client, "remember", **fact, turn=7, multi=False))["stored"]["turn"] == 7

    run_client(MemoryHandle(Memory.open, "in process"), script)


def test_tool_schemas_suit_clients_strict_modes() -> None:
    async def script(client: mcp.Client) -> None:
        def objects(node: object) -> Iterator[dict[str, object]]:
            if isinstance(node, dict):
                if node.get("type") == "object":
                    yield node
                for value in node.values():
                    yield from objects(value)
            elif isinstance(node, list):
                for value in node:
                    yield from objects(value)

        for tool in (await client.list_tools()).tools:
            text = json.dumps(tool.input_schema)
            assert "$ref" not in text and "$defs" not in text, tool.name
            assert all(o.get("additionalProperties") is False for o in objects(tool.input_schema))

    run_client(MemoryHandle(Memory.open, "in process"), script)


def test_a_memory_that_cannot_open_is_an_error_on_each_call_until_it_opens(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "memory.jsonl"
    journal.mkdir()  # a folder where the journal should be: it cannot be opened
    handle = MemoryHandle(lambda: Memory.open(journal), f"journal {journal}")

    async def script(client: mcp.Client) -> None:
        for _ in range(2):
            assert str(journal) in await error(client, "stats")
        journal.rmdir()
        assert (await ok(client, "stats"))["facts"] == 0
        await ok(client, "remember", subject="A", predicate="IS", object="B")

    run_client(handle, script)
    handle.close()
    assert len(list(NetworkXStore(journal).all_facts())) == 1


def test_neo4j_down_is_a_tool_error_naming_the_uri() -> None:
    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        uri = f"bolt://127.0.0.1:{s.getsockname()[1]}"
    handle = MemoryHandle(lambda: Memory.open(uri=uri), uri)

    async def script(client: mcp.Client) -> None:
        for tool, arguments in [("stats", {}), ("ask", {"question": JOIN})]:
            message = await error(client, tool, **arguments)
            assert f"cannot reach Neo4j at {uri}" in message

    run_client(handle, script)


def test_results_and_the_tool_list_are_compact() -> None:
    # What enters an agent's context: the tool list once, and each result's text.
    async def script(client: mcp.Client) -> None:
        listed = (await client.list_tools()).model_dump(mode="json", by_alias=True)
        assert len(json.dumps(listed, separators=(",", ":"))) < 15_000
        await ok(
            client,
            "remember",
            subject="Service_Checkout",
            predicate="OWNED_BY",
            object="Payments_Team",
            speaker="Agent_Planner",
            turn=1,
        )
        result = await client.call_tool("ask", {"question": "Who owns checkout?"})
        (content,) = result.content
        text = content.text  # type: ignore[union-attr]
        assert json.loads(text) == result.structured_content  # the same JSON, compact
        assert len(text.encode()) < 1_000 and "\n" not in text.replace("\\n", "")
        assert result.structured_content["answer"] == "Payments_Team"
        # A huge argument is refused by the schema, and not echoed back whole.
        for tool, arguments in [
            ("facts", {"entity": "x" * 1_000_000}),
            ("ask", {"question": "who " * 1_000}),
            ("remember", {"subject": "S", "predicate": "P", "object": "y" * 10_000}),
        ]:
            refused = await error(client, tool, **arguments)
            assert "at most" in refused and len(refused) < 500, refused[:500]

    run_client(MemoryHandle(Memory.open, "in process"), script)


def test_vocabulary_lists_names_in_use_and_writes_note_new_names_that_resemble_them(
    handle: MemoryHandle,
) -> None:
    async def script(client: mcp.Client) -> None:
        first = await ok(
            client,
            "remember_many",
            facts=[
                {"subject": "Service_Payments", "predicate": "OWNED_BY", "object": "Team_Ledger"},
                {"subject": "Service_Search", "predicate": "OWNED_BY", "object": "Team_Find"},
                {"subject": "Service_Payments", "predicate": "DEPENDS_ON", "object": "Db_Main"},
            ],
        )
        assert first["notes"] == []
        words = await ok(client, "vocabulary", words="payments")
        assert [p["predicate"] for p in words["predicates"]] == ["OWNED_BY", "DEPENDS_ON"]
        owned = words["predicates"][0]
        assert owned["current_facts"] == 2 and owned["multi_valued"] is False
        assert owned["example"].split()[1] == "OWNED_BY"
        assert words["entities"][0] == "Service_Payments" and words["predicates_omitted"] == 0
        one = await ok(client, "vocabulary", limit=1)
        assert one["predicates_omitted"] == 1 and one["entities"] == []

        # Another agent's habits: a new predicate and a reordered name are noted, and stored.
        second = await ok(
            client, "remember", subject="Payments_Service", predicate="OWNER", object="Team_Ledger"
        )
        assert second["stored"]["object"] == "Team_Ledger"
        notes = " | ".join(second["notes"])
        assert "predicate OWNER is new; the memory has OWNED_BY" in notes
        assert "entity 'Payments_Service' is new; the memory has 'Service_Payments'" in notes
        # Ids that differ in their numbers are different things: no note.
        pumps = await ok(
            client, "remember", subject="Pump_08", predicate="OWNED_BY", object="Team_Find"
        )
        assert pumps["notes"] == []
        again = await ok(
            client, "remember", subject="Pump_09", predicate="OWNED_BY", object="Team_X"
        )
        assert again["notes"] == []

        # declare: multi-valued, withdrawn, aliases
        declared = await ok(
            client,
            "declare",
            multi_valued=["DEPENDS_ON"],
            aliases=[{"phrase": "the ledger crew", "entity": "Team_Ledger"}],
        )
        assert declared["multi_valued"] == ["DEPENDS_ON"]
        assert declared["aliases"] == {"Team_Ledger": ["the ledger crew"]}
        await ok(client, "remember", subject="Service_Payments", predicate="DEPENDS_ON", object="Q")
        both = await ok(client, "facts", entity="Service_Payments")
        assert {f["object"] for f in both["facts"]} >= {"Db_Main", "Q"}
        withdrawn = await ok(client, "declare", single_valued=["DEPENDS_ON"])
        assert withdrawn["multi_valued"] == []
        await ok(client, "remember", subject="Service_Payments", predicate="DEPENDS_ON", object="R")
        now = await ok(client, "history", subject="Service_Payments", predicate="DEPENDS_ON")
        assert [f["object"] for f in now["facts"] if f["current"]] == ["R"]
        assert "nothing to declare" in await error(client, "declare")
        assert "no entity 'Nobody'" in await error(
            client, "declare", aliases=[{"phrase": "x", "entity": "Nobody"}]
        )
        # one bad name refuses the whole declaration: nothing of it is applied
        refused = await error(
            client,
            "declare",
            multi_valued=["DEPENDS_ON"],
            aliases=[
                {"phrase": "the pay team", "entity": "Team_Ledger"},
                {"phrase": "   ", "entity": "Team_Ledger"},
            ],
        )
        assert "alias phrase" in refused
        after = await ok(client, "vocabulary")
        assert after["multi_valued"] == []
        kept = await ok(
            client, "declare", aliases=[{"phrase": "the ledger crew", "entity": "Team_Ledger"}]
        )
        assert kept["aliases"] == {"Team_Ledger": ["the ledger crew"]}

    run_client(handle, script)
