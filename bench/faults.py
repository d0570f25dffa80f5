"""Fault injection for the reliability benchmark and tests: a TCP proxy that cuts Bolt
connections at the worst moment.

:class:`CuttingProxy` forwards connections to a Neo4j server. Armed, it cuts a
connection when the client commits: either before the server sees the commit
(nothing applied) or after the server has answered it, dropping the answer
(the write applied, but the client cannot know). A commit is a ``COMMIT``
message, or a write run as a transaction of its own (auto-commit), which the
store marks with transaction metadata: the server commits it as it finishes
the statement, and its answer is dropped once it carries the commit's
bookmark. It can also refuse every
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
#: An auto-commit RUN of the store's carries ``tx_metadata`` (a tiny string, 0x8B);
#: an explicit transaction's RUN has none (its BEGIN would, but the store gives
#: none to BEGIN).
AUTO_COMMIT = b"\x8btx_metadata"
#: What ends an auto-commit's answer: the SUCCESS that carries the commit's
#: bookmark, or a FAILURE (a structure of one field, signature 0x7F).
BOOKMARK = b"\x88bookmark"
FAILURE = b"\xb1\x7f"
_MARKERS = (COMMIT, AUTO_COMMIT)
_TAIL = max(map(len, (*_MARKERS, BOOKMARK, FAILURE))) - 1


@dataclass
class CutCounts:
    """What the proxy did, for a report."""

    before_commit: int = 0
    after_commit: int = 0
    #: The commits that went through, by kind: COMMIT messages and auto-commits.
    commits: int = 0
    auto_commits: int = 0
    outages: int = 0
    connections: int = 0


@dataclass
class _Link:
    client: socket.socket
    server: socket.socket
    commit_sent: bool = False
    drop_answer: bool = False
    #: The commit armed to be dropped is an auto-commit: its answer may come in parts.
    auto_commit: bool = False
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
                found = any(m in seen for m in _MARKERS)
                if found:
                    how = self._decide()
                    if how == "before":
                        self.counts.before_commit += 1
                        break  # the server never gets the commit: it rolls back
                    # (set before sending: the answer may come back at once)
                    link.auto_commit = AUTO_COMMIT in seen
                    if link.auto_commit:
                        self.counts.auto_commits += 1
                    else:
                        self.counts.commits += 1
                    link.drop_answer = how == "after"
                    link.commit_sent = True
                link.server.sendall(data)
                # (a marker found is not kept in the tail: a whole COMMIT fits in it,
                # and would be taken for the next one)
                tail = b"" if found else seen[-_TAIL:]
        except OSError:
            pass
        link.close()
        self._forget(link)

    def _downstream(self, link: _Link) -> None:
        tail = b""
        try:
            while not link.closed:
                data = link.server.recv(65536)
                if not data:
                    break
                seen, tail = tail + data, (tail + data)[-_TAIL:]
                if link.commit_sent and link.drop_answer:
                    if link.auto_commit and BOOKMARK not in seen and FAILURE not in seen:
                        continue  # the statement's answer so far: not committed yet
                    self.counts.after_commit += 1
                    break  # the server answered the commit: it applied; the client never hears
                link.commit_sent = False
                link.client.sendall(data)
        except OSError:
            pass
        link.close()
        self._forget(link)

    def _forget(self, link: _Link) -> None:
        with contextlib.suppress(ValueError):
            self._links.remove(link)
