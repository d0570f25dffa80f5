"""Who may call ``ctxneo serve --http``: the names it answers to, and a bearer token.

Two attacks are kept out. A web page the user opens can make the browser send
requests to a server on this machine or network under a name it controls (DNS
rebinding); every request's ``Host`` must therefore be a name this server
answers to, and an ``Origin``, when a browser sends one, one of those names
too, whatever the bind address. And anyone who can reach the port of a
server listening beyond loopback could read and change the memory; such a
server requires ``Authorization: Bearer <token>``, the token read from a file
only its owner can read (made when absent). On loopback the token is
optional: other users of the machine can reach a loopback port, so a shared
machine should give one anyway (``--token-file``).
"""

from __future__ import annotations

import errno
import hmac
import ipaddress
import json
import os
import secrets
import socket
import stat
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from ctxneo.errors import ConfigError

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Bytes of randomness in a generated token (URL-safe base64: 43 characters).
TOKEN_BYTES = 32


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def _with_port(name: str, port: int) -> str:
    return f"[{name}]:{port}" if ":" in name and not name.startswith("[") else f"{name}:{port}"


def allowed_names(host: str, port: int, extra: Sequence[str] = ()) -> list[str]:
    """The ``Host`` values this server answers to: the loopback names, the address
    it listens on (for a wildcard address, this machine's names) and ``extra``
    (``name`` or ``name:port``), each with and without the port."""
    names = ["127.0.0.1", "localhost", "::1"]
    if _is_wildcard(host):
        names += [socket.gethostname(), socket.getfqdn()]
    else:
        names.append(host)
    hosts: list[str] = []
    for name in [*names, *extra]:
        if _has_port(name):
            hosts.append(name)
        else:
            hosts += [_with_port(name, port), f"[{name}]" if ":" in name else name]
    return list(dict.fromkeys(h for h in hosts if h))


def _has_port(name: str) -> bool:
    """``host:8000`` or ``[::1]:8000``, not ``::1`` or ``host``."""
    if name.startswith("["):
        return "]:" in name
    return name.count(":") == 1 and name.rsplit(":", 1)[1].isdigit()


def security_settings(host: str, port: int, extra: Sequence[str] = ()) -> Any:
    """The SDK's Host/Origin checks, on for every bind address."""
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = allowed_names(host, port, extra)
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def read_or_make_token(path: Path) -> tuple[str, bool]:
    """The token in ``path``, made (random, mode 0600) when the file does not exist;
    and whether it was made now.

    Raises:
        ConfigError: the file is a symlink, not a regular file, not the user's own,
            readable by others, or empty.
    """
    # O_NONBLOCK: opening a FIFO for reading would wait for a writer for ever; the
    # regular-file check below then refuses it.
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return _make_token(path), True
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise ConfigError(f"the token file {path} is a symlink: give the file itself") from e
        raise ConfigError(f"cannot read the token file {path}: {e.strerror}") from e
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"the token file {path} is not a regular file")
        if info.st_uid not in (os.getuid(), 0):
            raise ConfigError(f"the token file {path} belongs to another user")
        if info.st_mode & 0o077:
            raise ConfigError(
                f"the token file {path} can be read by others (mode "
                f"{stat.S_IMODE(info.st_mode):o}): chmod 600 {path}"
            )
        token = os.read(fd, 4096).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)
    if not token:
        raise ConfigError(f"the token file {path} is empty")
    return token, False


def _make_token(path: Path) -> str:
    token = secrets.token_urlsafe(TOKEN_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as e:
        raise ConfigError(f"cannot make the token file {path}: {e.strerror}") from e
    try:
        os.write(fd, (token + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    return token


def require_token(app: ASGIApp, token: str) -> ASGIApp:
    """``app`` answering 401 to every HTTP request without ``Authorization: Bearer
    <token>`` (compared in constant time)."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)  # lifespan: the session manager starts here
            return
        given = dict(scope.get("headers") or ()).get(b"authorization", b"")
        if hmac.compare_digest(given, expected):
            await app(scope, receive, send)
            return
        body = json.dumps({"error": "unauthorized: send Authorization: Bearer <token>"}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="ctxneo"'),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    return guarded
