"""Three scripted agents share one ctxneo memory through its MCP server (no LLM needed).

Each agent is its own MCP client with its own ``ctxneo serve`` process over
stdio, as it would be in Claude Desktop, Claude Code or Cursor. The Planner and
the Implementer record decisions; the Reviewer, who was told nothing, asks
questions that need both of them; the Planner then learns what changed. All
three servers share one memory: a journal file (by default a new one in a
temporary folder) or a Neo4j namespace (with --uri).

    .venv/bin/python examples/three_agents.py
    .venv/bin/python examples/three_agents.py --store project.jsonl
    .venv/bin/python examples/three_agents.py --uri bolt://127.0.0.1:7687 --password ...
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

PLANNER, IMPLEMENTER, REVIEWER = "Agent_Planner", "Agent_Implementer", "Agent_Reviewer"
WIDTH = len(IMPLEMENTER) + 1  # the column the agents' names are printed in

# What each agent says, in order: (agent, turn, subject, predicate, object, multi).
DECISIONS = [
    (PLANNER, 1, "Project_Atlas", "USES_DATABASE", "PostgreSQL", False),
    (PLANNER, 2, "Service_Checkout", "DEPENDS_ON", "Service_Payments", True),
    (PLANNER, 3, "Service_Checkout", "DEPENDS_ON", "Service_Inventory", True),
    (IMPLEMENTER, 4, "Service_Payments", "OWNED_BY", "Payments_Team", False),
    (IMPLEMENTER, 5, "Project_Atlas", "USES_DATABASE", "CockroachDB", False),
]

QUESTIONS = [
    (REVIEWER, "Which team owns the service that checkout depends on?"),
    (REVIEWER, "What database does Project Atlas use?"),
    (REVIEWER, "What database did Project Atlas use originally?"),
    (REVIEWER, "Who decided that Project Atlas uses CockroachDB?"),
    (PLANNER, "What database does Project Atlas use?"),
]


def server_for(args: argparse.Namespace) -> StdioServerParameters:
    """How an MCP client would start ``ctxneo serve`` for this memory."""
    command = [sys.executable, "-m", "ctxneo", "serve", "--silent"]
    env: dict[str, str] = {}
    if args.uri:
        command += ["--uri", args.uri, "--namespace", args.namespace]
        # Credentials go through the environment, not the command line (visible in ps).
        for name, value in [("NEO4J_USER", args.user), ("NEO4J_PASSWORD", args.password)]:
            if value:
                env[name] = value
        if args.database:
            env["NEO4J_DATABASE"] = args.database
    else:
        command += ["--store", str(args.store)]
    return StdioServerParameters(command=command[0], args=command[1:], env=env)


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        text = " ".join(getattr(c, "text", "") for c in result.content)
        raise SystemExit(f"{tool} failed: {text}")
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def fact_line(f: dict[str, Any]) -> str:
    said = ", ".join(x for x in (f["speaker"], f["turn"] and f"turn {f['turn']}") if x)
    return f"{f['subject']} {f['predicate']} {f['object']} [{said}]"


async def main(args: argparse.Namespace) -> None:
    async with AsyncExitStack() as stack:
        # One server process per agent, all open at once, as three MCP clients would have.
        clients = {
            agent: await stack.enter_async_context(Client(server_for(args)))
            for agent in (PLANNER, IMPLEMENTER, REVIEWER)
        }
        stats = await call(clients[REVIEWER], "stats")
        if stats["facts"]:
            raise SystemExit(
                f"{stats['memory']} already holds {stats['facts']} facts: the example needs an "
                "empty memory (give another --store or --namespace)"
            )
        print(f"memory: {stats['memory']}, one `ctxneo serve` process per agent\n")

        for agent, turn, subject, predicate, obj, multi in DECISIONS:
            done = await call(
                clients[agent],
                "remember",
                subject=subject,
                predicate=predicate,
                object=obj,
                speaker=agent,
                turn=turn,
                multi=multi,
            )
            print(f"{agent:<{WIDTH}} stored  #{done['stored']['seq']} {fact_line(done['stored'])}")
            for old in done["closed"]:
                print(f"{'':<{WIDTH}} closed  #{old['seq']} {fact_line(old)}")

        print()
        for agent, question in QUESTIONS:
            answer = await call(clients[agent], "ask", question=question)
            print(f"{agent:<{WIDTH}} asked   {question}")
            if answer["known"]:
                learned = f"{answer['answer']}  (confidence {answer['confidence']:.2f})"
            else:
                learned = f"nothing: {answer['reason']}"
            print(f"{'':<{WIDTH}} learned {learned}")
            for fact in answer["evidence"]:
                print(f"{'':<{WIDTH}}   from  {fact_line(fact)}")

        history = await call(
            clients[REVIEWER], "history", subject="Project_Atlas", predicate="USES_DATABASE"
        )
        print(f"\n{REVIEWER} read the history of Project_Atlas USES_DATABASE:")
        for fact in history["facts"]:
            until = "now" if fact["current"] else f"#{fact['valid_to']}"
            print(f"  #{fact['valid_from']}-{until}: {fact_line(fact)}")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--store", type=Path, help="A journal file (default: a new temporary one).")
    where.add_argument("--uri", default=None, help="A Neo4j URI: the memory lives there instead.")
    parser.add_argument("--user", default=os.environ.get("NEO4J_USER"), help="Neo4j user.")
    parser.add_argument(
        "--password", default=os.environ.get("NEO4J_PASSWORD"), help="Neo4j password."
    )
    parser.add_argument("--database", default=os.environ.get("NEO4J_DATABASE"))
    parser.add_argument(
        "--namespace",
        default=f"three-agents-{time.strftime('%Y%m%d-%H%M%S')}",
        help="The Neo4j namespace (default: a new one per run; it must be empty).",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse()
    if arguments.uri or arguments.store:
        anyio.run(main, arguments)
    else:
        with tempfile.TemporaryDirectory(prefix="ctxneo-example-") as folder:
            arguments.store = Path(folder) / "memory.jsonl"
            anyio.run(main, arguments)
