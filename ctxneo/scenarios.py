"""Load and validate scenario files (format ``ctxneo-scenarios/1``).

A file is checked whole before anything runs; the first problem found is
raised as a :class:`ScenarioError` naming the file, scenario, turn and field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from ctxneo.errors import InvalidFactError, ScenarioError
from ctxneo.model import (
    MAX_INT,
    MAX_NAME_BYTES,
    MAX_QUESTION_CHARS,
    MAX_TEXT_BYTES,
    MIN_INT,
    NewFact,
    Scenario,
    Turn,
    check_predicate,
)
from ctxneo.stores.base import Store

FORMAT = "ctxneo-scenarios/1"
TURN_TYPES = ("fact", "distractor", "query")
_FACT_FIELDS = ("subject", "predicate", "object", "fact_id")
#: The fields each object of a scenario file may have: any other is refused by name, as a
#: misspelt one ("ground_truht") would otherwise be dropped in silence, and with it what
#: it said (a question then answered but never graded).
_DOCUMENT_FIELDS = frozenset({"format", "scenarios", "domain", "source", "description"})
_SCENARIO_FIELDS = frozenset({"name", "description", "multi_valued_predicates", "aliases", "turns"})
_TURN_FIELDS = {
    "fact": frozenset({"turn_id", "turn_type", "speaker", "text", *_FACT_FIELDS, "retract"}),
    "query": frozenset(
        {
            "turn_id",
            "turn_type",
            "speaker",
            "text",
            "query_type",
            "required_fact_ids",
            "ground_truth",
        }
    ),
    # (a fact's or an answer's fields on a distractor are refused below, saying so)
    "distractor": frozenset(
        {"turn_id", "turn_type", "speaker", "text", *_FACT_FIELDS, "ground_truth", "retract"}
    ),
}


def _unknown_field(raw: dict[str, Any], known: frozenset[str]) -> str | None:
    """The first field of ``raw`` (in the file's order) that is not one of ``known``."""
    return next((k for k in raw if k not in known), None)


def shipped_suite() -> list[Path]:
    """The scenario files shipped with ctxneo (the project's own suite), sorted."""
    root = resources.files("ctxneo.bench").joinpath("scenarios")
    return sorted(Path(str(p)) for p in root.iterdir() if p.name.endswith(".json"))


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files named directly, plus every ``*.json`` inside named directories.

    Raises:
        ScenarioError: a directory named holds no ``*.json`` file (a suite of nothing
            would report empty tables as if it had run).
    """
    out: list[Path] = []
    for p in map(Path, paths):
        if not p.is_dir():
            out.append(p)
            continue
        found = sorted(p.glob("*.json"))
        if not found:
            raise ScenarioError("holds no scenario file (*.json)", file=str(p))
        out.extend(found)
    return out


def load_suite(paths: Iterable[str | Path]) -> list[Scenario]:
    """Load every scenario of every file; names must be unique across files.

    Raises:
        ScenarioError: a file is missing, is not JSON or is malformed.
    """
    scenarios: list[Scenario] = []
    seen: dict[str, str] = {}
    for path in expand_paths(paths):
        for scenario in load_file(path):
            if scenario.name in seen:
                raise ScenarioError(
                    f"duplicate scenario name (also in {seen[scenario.name]})",
                    file=str(path),
                    scenario=scenario.name,
                    field="name",
                )
            seen[scenario.name] = str(path)
            scenarios.append(scenario)
    return scenarios


#: The largest scenario file read (the shipped and training files are under 1 MB).
MAX_SCENARIO_BYTES = 64 * 2**20


def load_file(path: str | Path) -> list[Scenario]:
    """Load and validate one scenario file."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            # Bounded: a device (/dev/zero) or a huge file must not fill the memory.
            raw = f.read(MAX_SCENARIO_BYTES + 1)
        if len(raw) > MAX_SCENARIO_BYTES:
            raise ScenarioError(
                f"larger than {MAX_SCENARIO_BYTES // 2**20} MB: not a scenario file "
                "(split it into several)",
                file=str(path),
            )
        text = raw.decode("utf-8")
    except OSError as e:
        raise ScenarioError(f"cannot read: {e.strerror or e}", file=str(path)) from e
    except UnicodeDecodeError as e:
        raise ScenarioError(f"not UTF-8 text ({e.reason} at byte {e.start})", file=str(path)) from e
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ScenarioError(
            f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}", file=str(path)
        ) from e
    except RecursionError:
        raise ScenarioError("not a scenario file: JSON nested too deeply", file=str(path)) from None
    return parse_document(doc, str(path))


def parse_document(doc: Any, file: str) -> list[Scenario]:
    """Validate a decoded scenario document; ``file`` is used in error messages."""
    if not isinstance(doc, dict):
        raise ScenarioError("the document must be a JSON object", file=file)
    if doc.get("format") != FORMAT:
        raise ScenarioError(
            f"expected {FORMAT!r}, got {doc.get('format')!r}", file=file, field="format"
        )
    stray = _unknown_field(doc, _DOCUMENT_FIELDS)
    if stray is not None:
        raise ScenarioError(
            f"not a field of a scenario file (it has {', '.join(sorted(_DOCUMENT_FIELDS))})",
            file=file,
            field=stray,
        )
    items = doc.get("scenarios")
    if not isinstance(items, list) or not items:
        raise ScenarioError("must be a non-empty list", file=file, field="scenarios")
    names: set[str] = set()
    out = []
    for i, item in enumerate(items):
        scenario = _parse_scenario(item, file, i)
        if scenario.name in names:
            raise ScenarioError(
                "duplicate scenario name", file=file, scenario=scenario.name, field="name"
            )
        names.add(scenario.name)
        out.append(scenario)
    return out


def _parse_scenario(item: Any, file: str, index: int) -> Scenario:
    label = f"#{index + 1}"
    if not isinstance(item, dict):
        raise ScenarioError("must be a JSON object", file=file, scenario=label)
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ScenarioError("must be a non-empty string", file=file, scenario=label, field="name")

    def fail(message: str, field: str, turn_id: object = None) -> ScenarioError:
        return ScenarioError(message, file=file, scenario=name, turn_id=turn_id, field=field)

    stray = _unknown_field(item, _SCENARIO_FIELDS)
    if stray is not None:
        raise fail(
            f"not a field of a scenario (it has {', '.join(sorted(_SCENARIO_FIELDS))})", stray
        )
    description = item.get("description", "")
    if not isinstance(description, str):
        raise fail("must be a string", "description")
    multi = item.get("multi_valued_predicates", [])
    if not isinstance(multi, list) or not all(isinstance(p, str) for p in multi):
        raise fail("must be a list of predicate names", "multi_valued_predicates")
    for p in multi:
        _check_predicate(p, fail, "multi_valued_predicates")
    aliases = item.get("aliases", {})
    if not isinstance(aliases, dict) or not all(
        isinstance(k, str) and k.strip() and isinstance(v, str) and v.strip()
        for k, v in aliases.items()
    ):
        raise fail("must map phrases to entity names (non-empty strings)", "aliases")
    raw_turns = item.get("turns")
    if not isinstance(raw_turns, list) or not raw_turns:
        raise fail("must be a non-empty list", "turns")

    turns: list[Turn] = []
    fact_ids: set[str] = set()
    last_id: int | None = None
    for position, raw in enumerate(raw_turns):
        turn = _parse_turn(raw, position, fail)
        if last_id is not None and turn.turn_id <= last_id:
            problem = (
                f"duplicate turn id {last_id}"
                if turn.turn_id == last_id
                else f"turn ids must increase (previous was {last_id})"
            )
            raise fail(problem, "turn_id", turn.turn_id)
        last_id = turn.turn_id
        if turn.turn_type == "fact":
            assert turn.fact_id is not None
            if turn.fact_id in fact_ids:
                raise fail(f"duplicate fact_id {turn.fact_id!r}", "fact_id", turn.turn_id)
            fact_ids.add(turn.fact_id)
        elif turn.turn_type == "query":
            unknown = [f for f in turn.required_fact_ids if f not in fact_ids]
            if unknown:
                raise fail(
                    f"names facts not stated before this turn: {unknown}",
                    "required_fact_ids",
                    turn.turn_id,
                )
        turns.append(turn)
    return Scenario(
        name=name,
        description=description,
        turns=tuple(turns),
        multi_valued_predicates=frozenset(multi),
        aliases=tuple(sorted(aliases.items())),
    )


def write_turns(store: Store, turns: Sequence[Turn]) -> None:
    """Write the fact turns of ``turns`` to ``store`` in order: consecutive statements as
    one batch, each retraction (``"retract": true``) as the retraction it is."""
    batch: list[NewFact] = []
    for turn in turns:
        if turn.turn_type != "fact":
            continue
        if not turn.retract:
            batch.append(turn.as_fact())
            continue
        if batch:
            store.remember_many(batch)
            batch = []
        assert turn.subject and turn.predicate and turn.object
        store.retract(turn.subject, check_predicate(turn.predicate), turn.object)
    if batch:
        store.remember_many(batch)


def _check_predicate(predicate: str, fail: Any, field: str, turn_id: object = None) -> None:
    try:
        check_predicate(predicate)
    except InvalidFactError as e:
        raise fail(str(e), field, turn_id) from None


def _parse_turn(raw: Any, position: int, fail: Any) -> Turn:
    if not isinstance(raw, dict):
        raise fail(f"turn #{position + 1} must be a JSON object", "turns")
    turn_id = raw.get("turn_id")
    if not isinstance(turn_id, int) or isinstance(turn_id, bool):
        raise fail(f"turn #{position + 1}: must be an integer, got {turn_id!r}", "turn_id")
    if not MIN_INT <= turn_id <= MAX_INT:
        # Stored as a turn on every fact (a 64-bit integer on Neo4j): refused here, by name.
        raise fail(f"turn #{position + 1}: must fit in 64 bits", "turn_id", turn_id)

    def text_field(key: str, *, required: bool = True) -> str | None:
        value = raw.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            raise fail("must be a non-empty string", key, turn_id)
        limit = MAX_TEXT_BYTES if key == "text" else MAX_NAME_BYTES
        if len(value.encode("utf-8", "surrogatepass")) > limit:
            raise fail(f"must be at most {limit:,} bytes of UTF-8", key, turn_id)
        return value

    turn_type = raw.get("turn_type")
    if turn_type not in TURN_TYPES:
        raise fail(
            f"must be one of {', '.join(TURN_TYPES)}, got {turn_type!r}", "turn_type", turn_id
        )
    known = _TURN_FIELDS[turn_type]
    stray = _unknown_field(raw, known)
    if stray is not None:
        raise fail(
            f"not a field of a {turn_type} turn (it has {', '.join(sorted(known))})",
            stray,
            turn_id,
        )
    speaker = text_field("speaker")
    text = text_field("text")
    assert speaker is not None and text is not None
    if turn_type == "fact":
        subject, predicate, obj, fact_id = (text_field(k) for k in _FACT_FIELDS)
        assert predicate is not None
        _check_predicate(predicate, fail, "predicate", turn_id)
        retract = raw.get("retract", False)
        if not isinstance(retract, bool):
            raise fail(f"must be true or false, got {retract!r}", "retract", turn_id)
        return Turn(
            turn_id,
            turn_type,
            speaker,
            text,
            subject=subject,
            predicate=predicate,
            object=obj,
            fact_id=fact_id,
            retract=retract,
        )
    if turn_type == "query":
        if len(text) > MAX_QUESTION_CHARS:
            raise fail(
                f"a question must be at most {MAX_QUESTION_CHARS:,} characters", "text", turn_id
            )
        query_type = text_field("query_type", required=False)
        required = raw.get("required_fact_ids", [])
        if not isinstance(required, list) or not all(isinstance(f, str) for f in required):
            raise fail("must be a list of fact ids", "required_fact_ids", turn_id)
        truth = raw.get("ground_truth")
        if truth is not None:
            items = [truth] if isinstance(truth, str) else truth
            if (
                not isinstance(items, list)
                or not items
                or not all(isinstance(t, str) and t.strip() for t in items)
            ):
                raise fail("must be a non-empty string or a list of them", "ground_truth", turn_id)
            truth = tuple(items)
        return Turn(
            turn_id,
            turn_type,
            speaker,
            text,
            query_type=query_type,
            required_fact_ids=tuple(required),
            ground_truth=truth,
        )
    stray = [k for k in (*_FACT_FIELDS, "ground_truth", "retract") if raw.get(k) is not None]
    if stray:
        raise fail("a distractor carries no fact or answer", stray[0], turn_id)
    return Turn(turn_id, turn_type, speaker, text)
