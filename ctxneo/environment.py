"""Settings read from the environment, checked where they are read.

A bad value is a :class:`~ctxneo.errors.ConfigError` naming the variable (the
command line exits 2 on it), never a crash later or a silent default.
"""

from __future__ import annotations

import os

from ctxneo.errors import ConfigError


def seconds_from_env(name: str, default: float) -> float:
    """``$name`` as a positive number of seconds, or ``default`` when unset or blank.

    Raises:
        ConfigError: the value is not a number of seconds in (0, 1e6).
    """
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (0.0 < value < 1e6):  # also refuses nan and inf
        raise ConfigError(f"{name}={raw!r} is not a number of seconds in (0, 1e6)")
    return value
