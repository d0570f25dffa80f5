"""The README's examples, run as written, and what they print compared with what it shows.

How to write an example that this test runs (any README section can):

- A ```console block is a shell session. A line starting with ``$ `` is a
  command (a line ending in ``\\`` continues on the next); the lines after it,
  up to the next ``$ ``, are what it prints, stdout and stderr together as a
  terminal shows them (stdout is a pipe here, so tables are plain rows).
- A ```python block is saved as a file and run with this Python. When the next
  block, with nothing but blank lines before it, is a ```text block, that is
  what the script prints.
- Every block of the README runs in order in one bash session, in a fresh
  temporary directory, with ctxneo's venv first on PATH and no ``NEO4J_*`` or
  ``CTXNEO_*`` variable set: files and exported variables carry from one block
  to the next, so a section can build on an earlier one.
- Shown output matches line by line (trailing spaces ignored). A line of just
  ``...`` matches any number of lines; ``...`` inside a line matches any text
  (timings, ports, paths). A command whose output shows no ``Error:`` line must
  exit with 0.
- An HTML comment on the line before a block (invisible on GitHub) says more:

  ``<!-- test: file NAME -->``  the block is the text of file NAME (written, not run);
  ``<!-- test: neo4j -->``      the block needs Neo4j: it runs only in the Neo4j
  test (marked ``neo4j``), with ``NEO4J_URI``, ``NEO4J_USER`` and
  ``NEO4J_PASSWORD`` set to the test server's (for this block only) and
  ``CTXNEO_NAMESPACE`` to a fresh namespace, deleted afterwards with every
  namespace under it (use the default namespace, or ``$CTXNEO_NAMESPACE/...``,
  in such blocks);
  ``<!-- test: skip REASON -->`` the block is not run (installing, starting a server).

- Blocks in other languages (```sh, ```json, ```cypher ...) are not run: ```sh
  is for commands a test cannot repeat (make, pip, docker).

The test without Neo4j runs every block not marked ``neo4j``; the Neo4j test
runs them all, in order, so a Neo4j block can use files made before it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
READMES = [REPO / "README.md"]

_DIRECTIVE = re.compile(r"^<!--\s*test:\s*(\w+)\s*(.*?)\s*-->\s*$")
_FENCE = re.compile(r"^```\s*([\w+-]*)")


@dataclass
class Command:
    text: str
    expected: list[str]
    line: int  # in the README, 1-based


@dataclass
class Block:
    language: str
    body: list[str]
    line: int
    directive: tuple[str, str] | None = None
    output: list[str] | None = None  # a python block's ```text block
    commands: list[Command] = field(default_factory=list)

    @property
    def needs_neo4j(self) -> bool:
        return self.directive is not None and self.directive[0] == "neo4j"

    @property
    def skipped(self) -> bool:
        return self.directive is not None and self.directive[0] == "skip"


def parse(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, each with the directive just before it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    directive: tuple[str, str] | None = None
    since_last: list[str] = []  # lines between the previous block and this one
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence is None:
            found = _DIRECTIVE.match(lines[i])
            if found is not None:
                directive = (found.group(1), found.group(2))
            elif lines[i].strip():
                directive = None  # a directive belongs to the block right after it
            since_last.append(lines[i])
            i += 1
            continue
        start = i
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        block = Block(fence.group(1).lower(), body, start + 1, directive)
        previous = blocks[-1] if blocks else None
        if (
            block.language == "text"
            and previous is not None
            and previous.language == "python"
            and not any(line.strip() for line in since_last)
        ):
            previous.output = body
        else:
            blocks.append(block)
        directive, since_last = None, []
        i += 1
    for block in blocks:
        if block.language == "console":
            block.commands = _commands(block)
    return blocks


def _commands(block: Block) -> list[Command]:
    commands: list[Command] = []
    lines = iter(enumerate(block.body, block.line + 1))
    for number, line in lines:
        if line.startswith("$ "):
            text = line[2:]
            while text.endswith("\\"):
                text += "\n" + next(lines)[1]
            commands.append(Command(text, [], number))
        elif commands:
            commands[-1].expected.append(line)
        elif line.strip():
            raise AssertionError(f"README line {number}: output before any `$ ` command")
    return commands


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` is what ``expected`` shows, with ``...`` as the wildcard."""
    pattern = "".join(
        r"(?:[^\n]*\n)*?"
        if line.strip() == "..."
        else ".*?".join(re.escape(part) for part in line.rstrip().split("...")) + r"[ \t]*\n"
        for line in expected
    )
    text = "".join(line.rstrip() + "\n" for line in actual)
    return re.fullmatch(pattern, text) is not None


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    while lines and not lines[0].strip():
        lines = lines[1:]
    return lines


def _environment(extra: dict[str, str]) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("NEO4J_", "CTXNEO_", "PYTEST_")) and k != "COLUMNS"
    }
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr interleave as on a terminal
    env.update(extra)
    return env


_MARK = "@@ctxneo-readme@@"


def run_blocks(
    blocks: list[Block], workdir: Path, env: dict[str, str], neo4j: dict[str, str] | None = None
) -> list[str]:
    """Run the blocks in one bash session; return a description of every mismatch.

    ``neo4j``: the variables a Neo4j block runs with (set for it, unset after it,
    as a reader's shell has them only from the Neo4j section on).
    """
    script = ["exec 2>&1", f"cd {_quote(str(workdir))}"]
    checks: list[tuple[str, list[str], int]] = []  # (what, expected, line)
    for block in blocks:
        if block.directive is not None and block.directive[0] == "file":
            name = block.directive[1]
            (workdir / name).write_text("\n".join(block.body) + "\n", encoding="utf-8")
            continue
        if block.needs_neo4j and neo4j:
            script.append("export " + " ".join(f"{k}={_quote(v)}" for k, v in neo4j.items()))
        if block.language == "console":
            for command in block.commands:
                checks.append((command.text, command.expected, command.line))
                script += [f"echo '{_MARK} {len(checks) - 1}'", command.text]
                script.append(f"rc=$?; echo; echo '{_MARK} rc' $rc")
        elif block.language == "python":
            name = f"readme_{block.line}.py"
            (workdir / name).write_text("\n".join(block.body) + "\n", encoding="utf-8")
            checks.append((f"python {name}", block.output or [], block.line))
            script += [f"echo '{_MARK} {len(checks) - 1}'", f"{_quote(sys.executable)} {name}"]
            script.append(f"rc=$?; echo; echo '{_MARK} rc' $rc")
        if block.needs_neo4j and neo4j:
            script.append("unset " + " ".join(neo4j))
    session = workdir.parent / f"{workdir.name}-session.sh"
    session.write_text("\n".join(script) + "\n", encoding="utf-8")
    result = subprocess.run(
        ["bash", "--noprofile", "--norc", str(session)],
        stdin=subprocess.DEVNULL,  # a command that asks gets no answer, as in a script
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    outputs: dict[int, tuple[list[str], int]] = {}
    current: int | None = None
    lines: list[str] = []
    for line in result.stdout.splitlines():
        if line.startswith(_MARK):
            tag = line[len(_MARK) :].split()
            if tag[0] == "rc" and current is not None:
                outputs[current] = (_trim(lines), int(tag[1]))
                current, lines = None, []
            else:
                current, lines = int(tag[0]), []
        else:
            lines.append(line)
    problems = []
    for n, (what, expected, line) in enumerate(checks):
        if n not in outputs:
            problems.append(f"README line {line}: `{what}` did not finish (the session stopped)")
            continue
        actual, rc = outputs[n]
        wanted = _trim(expected)
        failed_ok = any(e.startswith("Error:") for e in wanted)
        if not matches(wanted, actual) or (rc != 0 and not failed_ok):
            problems.append(
                f"README line {line}: `{what}` exited {rc} and printed:\n"
                + "\n".join(f"    {a}" for a in actual)
                + "\n  but the README shows:\n"
                + "\n".join(f"    {e}" for e in wanted)
            )
    return problems


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


@pytest.mark.parametrize("readme", READMES, ids=lambda p: p.name)
def test_the_readme_examples_print_what_it_shows(readme: Path, tmp_path: Path) -> None:
    blocks = [b for b in parse(readme) if not b.needs_neo4j and not b.skipped]
    assert any(b.commands for b in blocks), "no console examples found"
    problems = run_blocks(blocks, tmp_path, _environment({}))
    assert not problems, "\n\n".join(problems)


@pytest.mark.parametrize("readme", READMES, ids=lambda p: p.name)
def test_the_readme_neo4j_examples_print_what_it_shows(
    readme: Path, tmp_path: Path, neo4j_server: Any
) -> None:
    blocks = [b for b in parse(readme) if not b.skipped]
    if not any(b.needs_neo4j for b in blocks):
        pytest.skip("no Neo4j examples")
    namespace = f"readme-{uuid.uuid4().hex[:12]}"
    neo4j = {
        "NEO4J_URI": neo4j_server.uri,
        "NEO4J_USER": neo4j_server.user or "neo4j",
        "NEO4J_PASSWORD": neo4j_server.password or "",
        "CTXNEO_NAMESPACE": namespace,
    }
    try:
        problems = run_blocks(blocks, tmp_path, _environment({}), neo4j)
    finally:
        _clear_namespaces(neo4j_server, namespace)
    assert not problems, "\n\n".join(problems)


def _clear_namespaces(server: Any, prefix: str) -> None:
    from conftest import connect

    with connect(server, prefix) as store:
        held = store.namespaces() or {}
    for ns in held:
        if ns == prefix or ns.startswith(prefix + "/"):
            with connect(server, ns) as store:
                store.clear()


def test_the_wildcards() -> None:
    assert matches(["a ... c"], ["a b c"])
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "d"], ["a", "d"])
    assert not matches(["a", "d"], ["a", "b", "d"])
    assert not matches(["a ... c"], ["a b", "c"])
    assert not matches(["x"], ["x", "y"])


def test_a_block_and_its_directive_are_read(tmp_path: Path) -> None:
    readme = tmp_path / "R.md"
    readme.write_text(
        "<!-- test: file f.txt -->\n```text\nhello\n```\n\n"
        "```console\n$ cat f.txt\nhello\n$ echo a \\\n  b\na b\n```\n\n"
        "```python\nprint('hi')\n```\n\n```text\nhi\n```\n\n"
        "<!-- test: neo4j -->\n```console\n$ true\n```\n"
    )
    blocks = parse(readme)
    assert [b.language for b in blocks] == ["text", "console", "python", "console"]
    assert blocks[0].directive == ("file", "f.txt")
    assert [c.text for c in blocks[1].commands] == ["cat f.txt", "echo a \\\n  b"]
    assert blocks[2].output == ["hi"] and blocks[3].needs_neo4j
    assert run_blocks(blocks[:3], tmp_path, _environment({})) == []
    blocks[1].commands[0].expected = ["goodbye"]
    (problem,) = run_blocks(blocks[:2], tmp_path, _environment({}))
    assert "`cat f.txt` exited 0 and printed:\n    hello" in problem
