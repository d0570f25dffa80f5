"""Start-up stays light: what `import ctxneo` and `ctxneo --help` import, not how fast
(the machine's speed is not the code's)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("numpy", "networkx", "neo4j", "sklearn", "rich", "mcp", "ctxneo.answering.reader")


def imported_after(code: str) -> set[str]:
    script = f"import sys\n{code}\nimport json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-P", "-c", script], capture_output=True, text=True, check=True
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY)


def test_importing_ctxneo_loads_no_numpy_networkx_driver_or_reader() -> None:
    assert heavy(imported_after("import ctxneo; from ctxneo import Memory, Fact")) == []


def test_the_command_list_imports_none_of_the_benchmark_or_store_libraries() -> None:
    listed = imported_after(
        "from click.testing import CliRunner\n"
        "from ctxneo.cli import main\n"
        "result = CliRunner().invoke(main, ['--help'])\n"
        "assert result.exit_code == 0, result.output\n"
        "assert 'remember' in result.output and 'bench' in result.output"
    )
    assert heavy(listed) == []


def test_the_reader_is_loaded_at_the_first_question() -> None:
    asked = imported_after(
        "from ctxneo import Memory\n"
        "m = Memory.open()\n"
        "m.remember('Service_A', 'OWNED_BY', 'Team_A')\n"
        "import sys; assert 'numpy' not in sys.modules\n"
        "assert m.ask('Who owns Service_A?').answer == 'Team_A'"
    )
    assert "ctxneo.answering.reader" in asked and "numpy" in asked
