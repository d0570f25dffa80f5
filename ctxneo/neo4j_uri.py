"""Neo4j URIs: which ones ctxneo accepts, and how one is shown without its secrets."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ctxneo.errors import ConfigError

#: The Bolt schemes of the official driver: direct (bolt) and routed (neo4j), plain,
#: TLS (+s) or TLS trusting any certificate (+ssc). The driver's HTTP preview is not one.
SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")

#: A URI's user and password: everything after its scheme up to its last "@" (a password
#: may hold "/", "?" or "#", which end the userinfo for a URI parser).
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s'\"]*@")


#: A scheme and a colon-slash: what a URI starts with, and no file path does (a drive
#: letter is one character: ``C:/...`` is a path).
_URI_LIKE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:/")


def looks_like_uri(text: str) -> bool:
    """Whether ``text`` is written as a URI (``bolt://h``, ``neo4j+s://h``), not a path.
    (``Path`` folds ``bolt://h`` to ``bolt:/h``, which still reads as one.)"""
    return _URI_LIKE.match(text) is not None


def redact(text: str) -> str:
    """``text`` with the user and password of every URI in it replaced by ``***``."""
    return _USERINFO.sub(r"\1***@", text)


def check_uri(uri: str) -> str:
    """Return ``uri`` if the driver can use it as a Neo4j address.

    Raises:
        ConfigError: it is not a string, its scheme is not a Bolt scheme (e.g.
            ``http://``), it has no host, its port is out of range, or it holds
            credentials (they go in ``user``/``password``; the message never
            repeats them).
    """
    if not isinstance(uri, str) or not uri.strip():
        raise ConfigError(f"a Neo4j URI must be a non-empty string, got {uri!r}")
    supported = ", ".join(f"{s}://" for s in SCHEMES)
    if "@" in uri.partition("://")[2]:
        # (before parsing: a password holding "/", "?" or "#" ends the host for a parser,
        # which then reads it as a host or quotes it as a port in its error)
        raise ConfigError(
            f"credentials in a Neo4j URI are not supported ({redact(uri)}): give them "
            "with --user/--password or NEO4J_USER/NEO4J_PASSWORD"
        )
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError as e:
        raise ConfigError(f"bad Neo4j URI {redact(uri)!r}: {e}") from e
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        what = f"scheme {scheme + '://'!r}" if scheme else "no scheme"
        raise ConfigError(
            f"unsupported Neo4j URI {redact(uri)!r} ({what}): use one of {supported} "
            "(e.g. bolt://127.0.0.1:7687)"
        )
    if "@" in parts.netloc:
        raise ConfigError(
            f"credentials in a Neo4j URI are not supported ({redact(uri)}): give them "
            "with --user/--password or NEO4J_USER/NEO4J_PASSWORD"
        )
    if not parts.hostname:
        raise ConfigError(f"bad Neo4j URI {uri!r}: no host (e.g. bolt://127.0.0.1:7687)")
    if port == 0:
        raise ConfigError(f"bad Neo4j URI {uri!r}: port 0")
    return uri
