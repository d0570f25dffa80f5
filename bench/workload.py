"""A deterministic synthetic memory for the scale benchmark, with its own answer key.

Services with multi-token names (``Svc_Amber_Gateway_1042``) are owned by
teams, run on clusters, depend on other services (multi-valued) and carry a
status and a priority; clusters are managed by teams. About one fact in ten
re-states a service's owner or status, closing the old value. Questions are
asked in words, through the real answerer: direct ("Which team owns ...?") and
two-hop ("Which team manages the cluster that ... runs on?"); the workload
knows the right answer to each because it wrote the facts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ctxneo.model import NewFact

SEED = 2026
_ADJ = (
    "amber azure brisk cedar coral crimson dusky ember fallow frost gilded granite hazel indigo "
    "ivory jade juniper lunar maple mossy nimble ochre onyx opal pine quartz rapid russet sable "
    "scarlet "
    "silver slate solar spruce stone swift tawny teal thorn umber velvet violet willow"
).split()
_NOUN = (
    "gateway ledger router indexer billing checkout search catalog profile session payments "
    "notifier scheduler uploader renderer tracker mailer archive broker cache planner auditor"
).split()
_STATUS = ("healthy", "degraded", "paused", "migrating", "deprecated")
_PRIORITY = ("P1", "P2", "P3", "P4")
MULTI_VALUED = ("DEPENDS_ON",)


@dataclass(frozen=True)
class Question:
    kind: str  # "direct" or "two-hop"
    text: str
    expected: str
    #: The lookups that answer it without reading words: a subject, then the predicate
    #: of each hop (what the floor of a structured lookup is timed on).
    chain: tuple[str, ...] = ()


@dataclass(frozen=True)
class Workload:
    facts: list[NewFact]
    questions: list[Question]


def _service(rng: random.Random, i: int) -> str:
    return f"Svc_{rng.choice(_ADJ).capitalize()}_{rng.choice(_NOUN).capitalize()}_{i}"


def _spoken(name: str, rng: random.Random) -> str:
    """A service as a colleague says it: its name, or its words ("the amber gateway 17 service")."""
    if rng.random() < 0.5:
        return name
    _, adj, noun, number = name.split("_")
    return f"the {adj.lower()} {noun.lower()} {number} service"


def build(n_facts: int, questions: int = 200, seed: int = SEED) -> Workload:
    """About ``n_facts`` facts, and ``questions`` questions of each kind."""
    rng = random.Random(seed)
    services = max(4, int(n_facts / 6.4))
    teams = [f"Team_{rng.choice(_ADJ).capitalize()}_{i}" for i in range(max(4, services // 10))]
    clusters = [
        f"Cluster_{rng.choice(_ADJ).capitalize()}_{i}" for i in range(max(2, services // 25))
    ]
    names = [_service(rng, i) for i in range(services)]
    owner: dict[str, str] = {}
    runs_on: dict[str, str] = {}
    manager: dict[str, str] = {}
    facts: list[NewFact] = []
    for c in clusters:
        manager[c] = rng.choice(teams)
        facts.append(NewFact(c, "MANAGED_BY", manager[c], "Agent_Infra"))
    for s in names:
        owner[s] = rng.choice(teams)
        runs_on[s] = rng.choice(clusters)
        facts += [
            NewFact(s, "OWNED_BY", owner[s], "Agent_Planner"),
            NewFact(s, "RUNS_ON", runs_on[s], "Agent_Infra"),
            NewFact(s, "HAS_STATUS", rng.choice(_STATUS), "Agent_Monitor"),
            NewFact(s, "HAS_PRIORITY", rng.choice(_PRIORITY), "Agent_Planner"),
            NewFact(s, "DEPENDS_ON", rng.choice(names), "Agent_Builder"),
        ]
        if rng.random() < 0.3:
            facts.append(NewFact(s, "DEPENDS_ON", rng.choice(names), "Agent_Builder"))
    # Re-statements: about one fact in ten changes an owner or a status.
    for _ in range(len(facts) // 10):
        s = rng.choice(names)
        if rng.random() < 0.5:
            owner[s] = rng.choice(teams)
            facts.append(NewFact(s, "OWNED_BY", owner[s], "Agent_Reorg"))
        else:
            facts.append(NewFact(s, "HAS_STATUS", rng.choice(_STATUS), "Agent_Monitor"))
    asked = [rng.choice(names) for _ in range(questions)]
    qs = [
        Question("direct", f"Which team owns {_spoken(s, rng)}?", owner[s], (s, "OWNED_BY"))
        for s in asked
    ]
    asked = [rng.choice(names) for _ in range(questions)]
    qs += [
        Question(
            "two-hop",
            f"Which team manages the cluster that {_spoken(s, rng)} runs on?",
            manager[runs_on[s]],
            (s, "RUNS_ON", "MANAGED_BY"),
        )
        for s in asked
    ]
    return Workload(facts, qs)
