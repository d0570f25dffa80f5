"""Fault injection for the reliability benchmark and tests: a TCP proxy that cuts Bolt
connections at the worst moment.

:class:`CuttingProxy` forwards connections to a Neo4j server. Armed, it cuts a
connection when the client sends ``COMMIT``: either before the server sees it
(nothing applied) or after the server has answered it, dropping the answer
(the write applied, but the client cannot know). It can also refuse every
connection for a while, as a server restart looks from the client.
"""

from __future__ import annotations

import contextlib
import random
import socket
import threading
import time
from dataclasses import dataclass, field

#: Bolt sends a message in chunks: a two-byte size, the bytes, then 00 00.
#: COMMIT is a structure with no fields (B0) and signature 0x12.
COMMIT = b"\x00\x02\xb0\x12\x00\x00"


@dataclass
class CutCounts:
    """What the proxy did, for a report."""

    before_commit: int = 0
    after_commit: int = 0
    outages: int = 0
    connections: int = 0


@dataclass
class _Link:
    client: socket.socket
    server: socket.socket
    commit_sent: bool = False
    drop_answer: bool = False
    closed: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def close(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
        for s in (self.client, self.server):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                s.close()


class CuttingProxy:
    """A TCP proxy in front of Neo4j that can cut connections around COMMIT.

    Args:
        target: the server's (host, port).
        before, after: probability that a COMMIT is cut before the server
            gets it, or after the server answered it (the answer is dropped).
        seed: for a reproducible sequence of cuts.
    """

    def __init__(
        self,
        target: tuple[str, int],
        *,
        before: float = 0.0,
        after: float = 0.0,
        seed: int = 0,
    ) -> None:
        self.target = target
        self.before = before
        self.after = after
        self.counts = CutCounts()
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()
        self._links: list[_Link] = []
        self._refusing_until = 0.0
        self._forced: list[str] = []  # the next cuts, in order, whatever the odds
        self._outage_after = 0.0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._stopped = False
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self._listener.getsockname()[1]}"

    def __enter__(self) -> CuttingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stopped = True
        with contextlib.suppress(OSError):
            self._listener.close()
        for link in list(self._links):
            link.close()

    def cut_next(self, *how: str, then_outage: float = 0.0) -> None:
        """Cut the next COMMITs this way, one each: ``"before"`` or ``"after"``; with
        ``then_outage``, refuse connections for that long after the last of them."""
        with self._rng_lock:
            self._forced.extend(how)
            self._outage_after = then_outage

    def outage(self, seconds: float) -> None:
        """Drop every connection and refuse new ones for ``seconds`` (a restart, as seen
        from the client)."""
        self.counts.outages += 1
        self._refusing_until = time.monotonic() + seconds
        for link in list(self._links):
            link.close()

    def _decide(self) -> str | None:
        with self._rng_lock:
            if self._forced:
                how = self._forced.pop(0)
                if not self._forced and self._outage_after:
                    self._refusing_until = time.monotonic() + self._outage_after
                    self.counts.outages += 1
                    self._outage_after = 0.0
                return how
            roll = self._rng.random()
        if roll < self.before:
            return "before"
        if roll < self.before + self.after:
            return "after"
        return None

    def _accept(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if time.monotonic() < self._refusing_until:
                client.close()
                continue
            try:
                server = socket.create_connection(self.target, timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            link = _Link(client, server)
            self._links.append(link)
            self.counts.connections += 1
            threading.Thread(target=self._upstream, args=(link,), daemon=True).start()
            threading.Thread(target=self._downstream, args=(link,), daemon=True).start()

    def _upstream(self, link: _Link) -> None:
        tail = b""
        try:
            while not link.closed:
                data = link.client.recv(65536)
                if not data:
                    break
                seen = tail + data
                if COMMIT in seen:
                    how = self._decide()
                    if how == "before":
                        self.counts.before_commit += 1
                        break  # the server never gets the COMMIT: it rolls back
                    link.drop_answer = how == "after"
                    link.commit_sent = True  # before sending: the answer may come back at once
                link.server.sendall(data)
                tail = seen[-(len(COMMIT) - 1) :]
        except OSError:
            pass
        link.close()
        self._forget(link)

    def _downstream(self, link: _Link) -> None:
        try:
            while not link.closed:
                data = link.server.recv(65536)
                if not data:
                    break
                if link.commit_sent and link.drop_answer:
                    self.counts.after_commit += 1
                    break  # the server answered the COMMIT: it applied; the client never hears
                link.commit_sent = False
                link.client.sendall(data)
        except OSError:
            pass
        link.close()
        self._forget(link)

    def _forget(self, link: _Link) -> None:
        with contextlib.suppress(ValueError):
            self._links.remove(link)
