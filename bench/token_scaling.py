"""How the context each architecture sends grows with the conversation.

One decision, then N turns of chatter, then one question about the decision:
the raw dump resends everything, the RAG sends its top chunks, the graph sends
the question and the fact it used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxneo.bench.harness import run_flat, run_graph

from ctxneo.memory import Memory
from ctxneo.model import Scenario, Turn

FILLER_COUNTS = (10, 50, 100, 200, 400, 800)

_CHATTER = (
    "Agent_Writer: Pulling the latest changes before I start on the next section.",
    "Agent_Editor: Thanks, I will take a look after the sync.",
    "Agent_Planner: Reminder that the retro moved to Thursday afternoon.",
    "Agent_Writer: The staging link is slow again, probably the VPN.",
    "Agent_Editor: Nothing blocking on my side for now.",
    "Agent_Planner: Let us keep the thread focused, more notes tomorrow.",
    "Agent_Writer: I left two comments on the outline, nothing urgent.",
    "Agent_Editor: Back from lunch, catching up on messages.",
)


def scenario_with_filler(count: int) -> Scenario:
    turns = [
        Turn(
            1,
            "fact",
            "Agent_Planner",
            "Planner settled that Project_Orion stores its data in PostgreSQL.",
            subject="Project_Orion",
            predicate="USES_DATABASE",
            object="PostgreSQL",
            fact_id="f_db",
        )
    ]
    for i in range(count):
        speaker, text = _CHATTER[i % len(_CHATTER)].split(": ", 1)
        turns.append(Turn(i + 2, "distractor", speaker, text))
    turns.append(
        Turn(
            count + 2,
            "query",
            "Agent_Editor",
            "Which database does Project_Orion use?",
            query_type="distant",
            ground_truth=("PostgreSQL",),
        )
    )
    return Scenario(f"filler_{count}", "one fact, filler, one question", tuple(turns))


def measure(counts: Sequence[int] = FILLER_COUNTS) -> dict[str, Any]:
    """Tokens per query for each architecture at each filler count, and the growth ratios."""
    rows = []
    for count in counts:
        scenario = scenario_with_filler(count)
        row: dict[str, Any] = {"filler_turns": count}
        for arch in ("raw", "rag"):
            (record,) = run_flat(scenario, arch)
            row[arch] = record.tokens
            row[f"{arch}_correct"] = record.correct
        with Memory.open() as memory:
            (record,) = run_graph(scenario, memory, "networkx")
        row["graph"] = record.tokens
        row["graph_correct"] = record.correct
        rows.append(row)
    first, last = rows[0], rows[-1]
    growth = {arch: round(last[arch] / first[arch], 2) for arch in ("raw", "rag", "graph")}
    return {
        "rows": rows,
        "growth": growth,
        "conversation_growth": round(last["filler_turns"] / first["filler_turns"], 2),
    }
