"""What `pip install .` ships: every package and data folder, and what the commands import."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def _source_dir(package: str) -> Path:
    """Where a package's files are in the checkout, by the package-dir mapping."""
    mapping = SETUPTOOLS.get("package-dir", {})
    parts = package.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in mapping:
            return REPO / mapping[prefix] / Path(*parts[n:])
    return REPO / Path(*parts)


def _shipped_folders() -> set[Path]:
    """Every folder under a listed package's root that holds something to install."""
    roots = {_source_dir(p) for p in SETUPTOOLS["packages"] if "." not in p}
    roots |= {_source_dir(p) for p in SETUPTOOLS["package-dir"]}
    found = set()
    for root in roots:
        for path in root.rglob("*"):
            if (
                path.is_file()
                and "__pycache__" not in path.parts
                and not path.name.startswith(".")
                and path.suffix != ".pyc"
            ):
                found.add(path.parent)
    return found


def test_every_folder_with_files_is_a_listed_package() -> None:
    # A folder missing from the list works from the checkout and is absent from a wheel.
    listed = {_source_dir(p) for p in SETUPTOOLS["packages"]}
    missing = sorted(str(f.relative_to(REPO)) for f in _shipped_folders() - listed)
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {missing}"


def test_every_imported_distribution_is_a_dependency() -> None:
    # What the installed package imports at run time (not the tests) must be installed with it.
    provides = {
        "sklearn": "scikit-learn",
        "snowballstemmer": "snowballstemmer",
        "neo4j": "neo4j",
        "networkx": "networkx",
        "click": "click",
        "rich": "rich",
        "matplotlib": "matplotlib",
        "psutil": "psutil",
        "mcp": "mcp",
        "anyio": "anyio",
        "pydantic": "pydantic",
        "uvicorn": "uvicorn",
        "numpy": "numpy",
    }
    declared = {
        d.split(">")[0].split("<")[0].split("=")[0].split("[")[0].strip().lower()
        for d in PYPROJECT["project"]["dependencies"]
    }
    imported = set()
    for package in SETUPTOOLS["packages"]:
        for file in _source_dir(package).glob("*.py"):
            for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    imported |= {a.name.split(".")[0] for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    imported.add(node.module.split(".")[0])
    third_party = {
        name for name in imported if name not in sys.stdlib_module_names and name != "ctxneo"
    }
    unknown = third_party - provides.keys()
    assert not unknown, f"say which distribution provides {unknown} (and declare it)"
    assert {provides[n] for n in third_party} <= declared
