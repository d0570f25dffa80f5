"""Fuzzing: any value for any API argument, any journal line, any command-line argument.

What must hold whatever the input: the API raises nothing but a
``CtxneoError`` (and a refused call changes nothing); a journal either opens
or is refused with a ``JournalError``, and is never modified by reading; the
CLI ends with exit code 0, 1 or 2 and at most one ``Error:`` line, never a
traceback.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxneo.cli import main
from ctxneo.errors import CtxneoError
from ctxneo.memory import Memory
from ctxneo.model import NewFact

FUZZ = settings(
    max_examples=int(os.environ.get("CTXNEO_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

texts = st.one_of(
    st.text(max_size=20),
    st.text(st.characters(), min_size=1, max_size=8),  # lone surrogates included
    st.sampled_from(
        ["", " ", "A", "OWNED_BY", "depends_on", "x'}) DETACH DELETE n //", "\x00", "a" * 5000]
    ),
)
anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    texts,
    st.binary(max_size=8),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.frozensets(st.integers(), max_size=2),
    st.builds(object),
)
maybe_text = st.one_of(texts, anything)


def state(memory: Memory) -> tuple[Any, ...]:
    return (list(memory.store.all_facts()), memory.store.aliases(), memory.store.multi_valued())


CALLS = st.one_of(
    st.tuples(
        st.just("remember"),
        st.tuples(maybe_text, maybe_text, maybe_text),
        st.fixed_dictionaries(
            {},
            optional={
                "speaker": maybe_text,
                "turn_id": anything,
                "fact_id": maybe_text,
                "multi": anything,
            },
        ),
    ),
    st.tuples(
        st.just("remember_many"), st.tuples(st.one_of(anything, st.lists(anything))), st.just({})
    ),
    st.tuples(st.just("retract"), st.tuples(maybe_text, maybe_text, maybe_text), st.just({})),
    st.tuples(st.just("history"), st.tuples(maybe_text, maybe_text), st.just({})),
    st.tuples(
        st.just("facts"),
        st.tuples(maybe_text),
        st.fixed_dictionaries({}, optional={"as_of": anything, "history": anything}),
    ),
    st.tuples(st.just("alias"), st.tuples(maybe_text, maybe_text), st.just({})),
    st.tuples(st.just("declare_multi_valued"), st.tuples(maybe_text), st.just({})),
    st.tuples(
        st.just("ask"),
        st.tuples(maybe_text),
        st.fixed_dictionaries(
            {},
            optional={
                "speaker": maybe_text,
                "as_of": anything,
                "k": anything,
                "min_confidence": anything,
                "max_tokens": anything,
                "topic": maybe_text,
            },
        ),
    ),
)


def _call(memory: Memory, call: tuple[str, tuple[Any, ...], dict[str, Any]]) -> None:
    name, args, kwargs = call
    before = state(memory)
    try:
        getattr(memory, name)(*args, **kwargs)
    except CtxneoError:
        assert state(memory) == before, f"{name} failed and still changed the memory"
    # Any other exception escapes and fails the test: it is outside the contract.


@FUZZ
@given(calls=st.lists(CALLS, min_size=1, max_size=6))
def test_any_argument_gives_a_result_or_a_ctxneo_error(calls: list[Any], tmp_path: Path) -> None:
    path = tmp_path / f"fuzz-{os.getpid()}-{id(calls)}.jsonl"
    with Memory.open(path) as memory:
        memory.remember("Seed", "OWNED_BY", "Team")
        for call in calls:
            _call(memory, call)
        after = state(memory)
    with Memory.open(path) as again:  # what the process holds is what the file holds
        assert state(again) == after
    path.unlink()


@pytest.mark.neo4j
@settings(FUZZ, max_examples=25)
@given(calls=st.lists(CALLS, min_size=1, max_size=4))
def test_any_argument_on_neo4j_gives_a_result_or_a_ctxneo_error(
    calls: list[Any], neo4j_server: Any
) -> None:
    from conftest import connect

    store = connect(neo4j_server)
    try:
        memory = Memory(store)
        memory.remember("Seed", "OWNED_BY", "Team")
        for call in calls:
            _call(memory, call)
    finally:
        store.clear()
        store.close()


@pytest.mark.neo4j
def test_the_same_values_are_accepted_and_refused_by_both_stores(neo4j_server: Any) -> None:
    """One validation: at the limits, what one store takes the other takes, byte for byte."""
    from conftest import connect

    cases = [
        NewFact("a" * 4096, "OWNED_BY", "é" * 2048),  # exactly 4 KB each: accepted
        NewFact("名", "ownedBy", "B", turn_id=2**63 - 1, fact_id="\x00"),
        NewFact("a" * 4097, "OWNED_BY", "B"),
        NewFact("A", "OWNED_BY", "B", turn_id=2**63),
        NewFact("A", "OWNED_BY", "\udcff"),
        NewFact("A", "OWNED_BY", "B", fact_id=7),  # type: ignore[arg-type]
        NewFact("A", "OWNED_BY", "B", multi=1),  # type: ignore[arg-type]
    ]
    neo = connect(neo4j_server, "n" * 1024)  # the longest namespace, with the longest names
    embedded = Memory.open().store
    try:
        for case in cases:
            outcomes = []
            for store in (embedded, neo):
                try:
                    fact = store.remember(case)
                    outcomes.append(("ok", fact.subject, fact.predicate, fact.object, fact.turn_id))
                except CtxneoError as e:
                    outcomes.append(("refused", type(e).__name__))
            assert outcomes[0] == outcomes[1], case
        assert embedded.image() == neo.image()  # type: ignore[attr-defined]
    finally:
        neo.clear()
        neo.close()


# -- journal records -------------------------------------------------------------------

fields = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=2**64),
    st.floats(),
    st.text(max_size=6),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)


@st.composite
def records(draw: Any) -> Any:
    """A journal record: a valid shape with fields swapped for anything, or any JSON."""
    seq = draw(st.integers(min_value=1, max_value=6))
    valid = draw(
        st.sampled_from(
            [
                {"op": "fact", "seq": seq, "s": "A", "p": "OWNED_BY", "o": f"V{seq}"},
                {"op": "close", "s": "A", "p": "OWNED_BY", "seq": seq, "at": seq + 1},
                {"op": "tick", "at": seq},
                {"op": "multi", "predicate": "OWNED_BY"},
                {"op": "alias", "phrase": "the a", "entity": "A"},
                {"op": "clear"},
            ]
        )
    )
    if draw(st.booleans()):
        key = draw(st.sampled_from([*valid.keys(), "extra"]))
        valid = {**valid, key: draw(fields)}
    if draw(st.integers(0, 9)) == 0:
        return draw(fields)
    if draw(st.integers(0, 9)) == 0:
        return {"op": "batch", "records": [valid, draw(fields)]}
    return valid


@FUZZ
@given(lines=st.lists(records(), max_size=8), torn=st.binary(max_size=12))
def test_any_journal_opens_or_is_refused_and_is_never_changed_by_reading(
    lines: list[Any], torn: bytes, tmp_path: Path
) -> None:
    import warnings

    path = tmp_path / f"j-{os.getpid()}-{id(lines)}.jsonl"
    body = "".join(json.dumps(r) + "\n" for r in lines).encode()
    content = b'{"format": "ctxneo-journal/1"}\n' + body + torn.replace(b"\n", b"")
    path.write_bytes(content)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with Memory.open(path) as m:
                m.stats()
                list(m.store.all_facts())
                m.history("A")
                m.ask("Who owns A?")
        except CtxneoError:
            pass
    assert path.read_bytes() == content
    path.unlink()


# -- command-line arguments ---------------------------------------------------------------

# What a shell can pass: any bytes but NUL (argv entries are C strings), decoded as
# Python decodes argv (non-UTF-8 bytes become lone surrogates).
cli_text = st.one_of(
    st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=12),
    st.binary(min_size=1, max_size=6)
    .filter(lambda b: b"\x00" not in b)
    .map(lambda b: b.decode("utf-8", "surrogateescape")),
    st.sampled_from(["-1", "9223372036854775808", "1e9", "--json", "http://x", "neo4j+s://"]),
)
commands = st.sampled_from(
    [
        ["remember", "{0}", "{1}", "{2}"],
        ["remember", "A", "OWNED_BY", "B", "--turn", "{0}"],
        ["remember", "A", "OWNED_BY", "B", "--speaker", "{0}", "--fact-id", "{1}"],
        ["ask", "{0}"],
        ["ask", "{0}", "--as-of", "{1}"],
        ["history", "{0}", "{1}"],
        ["facts", "{0}", "--as-of", "{1}"],
        ["retract", "{0}", "{1}"],
        ["alias", "{0}", "{1}"],
        ["stats", "--json"],
        ["export", "--store", "{store}", "-o", "{0}"],
        ["export", "--store", "{store}", "--namespace", "{0}"],
        ["load", "{store}", "--to-uri", "{0}"],
        ["load", "{store}", "--to-uri", "bolt://127.0.0.1:9", "--namespace", "{0}"],
    ]
)


@FUZZ
@given(command=commands, values=st.lists(cli_text, min_size=3, max_size=3))
def test_any_command_line_ends_in_one_line_and_a_documented_exit_code(
    command: list[str], values: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "m.jsonl"
    if not store.exists():
        with Memory.open(store) as m:
            m.remember("A", "OWNED_BY", "B")
    args = [part.format(*values, store=store) for part in command]
    if command[0] not in ("export", "load"):
        args += ["--store", str(store)]
    runner = CliRunner(env={"NEO4J_URI": None, "CTXNEO_STORE": None, "CTXNEO_NAMESPACE": None})
    monkeypatch.chdir(tmp_path)  # a fuzzed -o lands here
    result = runner.invoke(main, args)
    assert result.exit_code in (0, 1, 2), (args, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        args,
        result.exception,
    )
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(errors) <= 1 and "Traceback" not in result.output, (args, result.output)


def _files(tmp_path: Path) -> dict[str, Path]:
    header = '{"format": "ctxneo-journal/1"}\n'
    files = {
        "shape": header + '{"op": "fact", "seq": "one", "s": "A", "p": "P", "o": "B"}\n',
        "null": header + '{"op": "fact", "seq": 1, "s": null, "p": "P", "o": "B"}\n',
        "batch": header + '{"op": "batch", "records": 3}\n',
        "deep": "[" * 100_000 + "]" * 100_000,
        "bad": "// not an export\nMATCH (n) DETACH DELETE n;\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return {name: tmp_path / name for name in files}


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            ["remember", "\udcff", "OWNED_BY", "B", "--store", "{dir}/m.jsonl"],
            2,
            "not valid UTF-8",
        ),
        (["ask", "who owns \udcfe?", "--store", "{dir}/m.jsonl"], 2, "not valid UTF-8"),
        (["stats", "--uri", "http://127.0.0.1:7999"], 2, "unsupported Neo4j URI"),
        (["stats", "--store", "{shape}"], 1, "line 2"),
        (["stats", "--store", "{null}"], 1, "subject must be a string"),
        (["history", "A", "--store", "{batch}"], 1, "a batch must hold a list"),
        (["bench", "--scenarios", "{deep}", "--arch", "raw"], 2, "nested too deeply"),
        (["load", "{bad}", "--to-uri", "bolt://127.0.0.1:9"], 2, "neither a ctxneo journal"),
        (
            ["remember", "A", "P", "B", "--turn", str(2**63), "--store", "{dir}/m.jsonl"],
            2,
            "'--turn'",
        ),
    ],
)
def test_the_inputs_that_printed_tracebacks_print_one_line(
    tmp_path: Path, args: list[str], code: int, message: str
) -> None:
    paths = {k: str(v) for k, v in _files(tmp_path).items()}
    argv = [a.format(dir=tmp_path, **paths) for a in args]
    result = CliRunner(env={"NEO4J_URI": None, "CTXNEO_STORE": None}).invoke(main, argv)
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    (line,) = [x for x in result.output.splitlines() if x.startswith("Error")]
    assert message in line


@pytest.mark.neo4j
def test_a_turn_id_beyond_64_bits_on_neo4j_is_one_line(neo4j_server: Any) -> None:
    runner = CliRunner(
        env={
            "NEO4J_URI": None,
            "NEO4J_USER": neo4j_server.user,
            "NEO4J_PASSWORD": neo4j_server.password,
        }
    )
    namespace = f"turn-{os.getpid()}"
    argv = ["remember", "A", "OWNED_BY", "B", "--turn", str(2**63), "--uri", neo4j_server.uri]
    result = runner.invoke(main, [*argv, "--namespace", namespace])
    assert result.exit_code == 2 and "Invalid value for '--turn'" in result.output
    from conftest import connect

    store = connect(neo4j_server, namespace)
    assert store.stats()["facts"] == 0
    store.clear()
    store.close()
