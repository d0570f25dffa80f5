"""Streams for an MCP server over stdio that answer every request received before the end.

A client may write its calls and close its end at once (``ctxneo serve < calls.jsonl``).
The SDK ends the session as soon as its input ends: calls still running are cancelled or
their replies dropped (one reply of eleven came back). :func:`drained` wraps the session's
two streams: the end of input is held back until every request read has had its reply
(or error) written, so a scripted client gets every answer, then the server exits.
"""

from __future__ import annotations

import sys
from collections import Counter
from types import TracebackType
from typing import Any, Self

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)
from pydantic import ValidationError

#: What a client sends to withdraw a request: no reply follows it.
_CANCELLED = "notifications/cancelled"
#: Seconds without a reply after which the end of input is let through although requests
#: are still unanswered: a safety net, so that no request, however it fails to be answered,
#: keeps the server up forever (a store call gives up after 15 s, so a live one replies
#: well within this). (A lost reply once blamed on the SDK was the test client's: it
#: waited with select() on a pipe whose lines its readline() had already buffered.)
IDLE_LIMIT = 60.0


class _Pending:
    """The ids of requests read and not yet answered, counted (a client may, wrongly,
    send several with one id: each is answered)."""

    def __init__(self) -> None:
        self._ids: Counter[int | str] = Counter()
        self._empty = anyio.Event()
        self._empty.set()
        self._replies = 0  # replies written so far: progress while the end waits

    def add(self, request_id: object) -> None:
        if not isinstance(request_id, int | str):
            return  # (not an id JSON-RPC allows: the SDK answers it, or not, as it will)
        if not self._ids:
            self._empty = anyio.Event()
        self._ids[request_id] += 1

    def discard(self, request_id: object) -> None:
        if not isinstance(request_id, int | str) or request_id not in self._ids:
            return  # a malformed or unknown id names nothing we wait for
        self._replies += 1
        self._ids[request_id] -= 1
        if self._ids[request_id] <= 0:
            del self._ids[request_id]
        if not self._ids:
            self._empty.set()

    def clear(self) -> None:
        """Nothing more can be answered (the output is closed): wait for nothing."""
        self._ids.clear()
        self._empty.set()

    async def answered(self, idle_limit: float = IDLE_LIMIT) -> None:
        """Return once every request is answered, or after ``idle_limit`` seconds in which
        none was."""
        while True:
            seen = self._replies
            with anyio.move_on_after(idle_limit):
                await self._empty.wait()
                return
            if self._replies == seen:
                return


class _Stream:
    """What both wrappers share: used as an async context manager, each closes itself."""

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class _Reads(_Stream):
    """The session's input: requests are counted; its end waits for their replies. A line
    that is not a JSON-RPC message is answered with the error JSON-RPC prescribes (id
    null: its id cannot be read), where the SDK would drop it without a word and leave
    its client waiting for a reply."""

    def __init__(self, inner: Any, pending: _Pending, replies: Any = None) -> None:
        self._inner = inner
        self._pending = pending
        self._replies = replies

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            try:
                item = await self._inner.receive()
            except anyio.EndOfStream:
                await self._pending.answered()
                raise
            if not (isinstance(item, Exception) and self._replies is not None):
                break
            await self._refuse(item)
        if isinstance(item, SessionMessage):
            message = item.message
            if isinstance(message, JSONRPCRequest):
                self._pending.add(message.id)
            elif isinstance(message, JSONRPCNotification) and message.method == _CANCELLED:
                params = message.params if isinstance(message.params, dict) else {}
                self._pending.discard(params.get("requestId"))
        return item

    async def _refuse(self, error: Exception) -> None:
        """Answer a line the transport could not read as a message: -32700 when it is not
        JSON, -32600 when it is JSON but no JSON-RPC message."""
        problems = error.errors() if isinstance(error, ValidationError) else []
        unparsed = any(p.get("type") == "json_invalid" for p in problems)
        code, what = (
            (PARSE_ERROR, "Parse error") if unparsed else (INVALID_REQUEST, "Invalid Request")
        )
        detail = str(problems[0].get("msg", "")) if problems else str(error)
        print(
            f"ctxneo: refused a line that is no JSON-RPC message: {what}: {detail}", file=sys.stderr
        )
        reply = JSONRPCError(
            jsonrpc="2.0", id=None, error=ErrorData(code=code, message=f"{what}: {detail}")
        )
        await self._replies.send(SessionMessage(reply))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _Reads:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class _Writes(_Stream):
    """The session's output: a reply written answers its request."""

    def __init__(self, inner: Any, pending: _Pending) -> None:
        self._inner = inner
        self._pending = pending

    async def send(self, item: Any, /) -> None:
        try:
            await self._inner.send(item)
        except BaseException:
            self._pending.clear()  # an output that cannot be written answers nothing more
            raise
        if isinstance(item, SessionMessage) and isinstance(
            item.message, JSONRPCResponse | JSONRPCError
        ):
            self._pending.discard(item.message.id)

    async def aclose(self) -> None:
        self._pending.clear()
        await self._inner.aclose()


def drained(read_stream: Any, write_stream: Any) -> tuple[Any, Any]:
    """``read_stream`` and ``write_stream`` of one stdio session, wrapped so that the end
    of input reaches the session only once every request read has been answered."""
    pending = _Pending()
    writes = _Writes(write_stream, pending)
    return _Reads(read_stream, pending, writes), writes
