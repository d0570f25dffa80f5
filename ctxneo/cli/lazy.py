"""Modules imported at their first use, so ``ctxneo --help`` starts at once.

The benchmark and export commands need scikit-learn, networkx, rich and the
Neo4j driver; listing the commands needs none of them. A command module names
what it uses with :func:`lazy_module` and pays for the import only when one of
its commands runs.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """``name``, imported when an attribute of it is first read (the standard
    library's :class:`importlib.util.LazyLoader` recipe)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module named {name!r}")
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
