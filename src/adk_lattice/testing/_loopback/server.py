"""Serve an ASGI app on a random loopback port from a background thread, for tests."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    from .._script import ScriptedResponse

#: Seconds to wait for the server to accept connections, and for it to stop.
_START_TIMEOUT = 10.0
_STOP_TIMEOUT = 5.0


@dataclass(frozen=True, slots=True)
class LoopbackRequest:
    """One request a loopback API received.

    Attributes:
        path: the URL path, e.g. ``/v1beta/models/gemini-2.5-flash:generateContent``.
        model: the model the request named.
        stream: whether the response was streamed (server-sent events).
        body: the JSON body, as sent.
        headers: the request headers, lower-case names (API keys replaced by ``***``).
    """

    path: str
    model: str
    stream: bool
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


_SECRET_HEADERS = frozenset({"x-goog-api-key", "authorization", "x-api-key", "api-key"})


def safe_headers(raw: Any) -> dict[str, str]:
    """Request headers with credentials masked, for :class:`LoopbackRequest`."""
    return {k.lower(): ("***" if k.lower() in _SECRET_HEADERS else v) for k, v in raw.items()}


#: The largest request body a loopback API reads (a test's model request is far smaller):
#: a larger one is refused with HTTP 413 before it is held in memory.
MAX_BODY_BYTES = 32 * 2**20


#: How much of a refused body is read and dropped so that the client, still sending, reads
#: the 413 rather than a reset connection.
_DISCARD_BYTES = 4 * MAX_BODY_BYTES


async def _discard(chunks: AsyncIterator[bytes]) -> None:
    """Read and drop what is left of a refused body, up to :data:`_DISCARD_BYTES`.

    A server that answers and closes while unread bytes sit in its socket makes the kernel
    reset the connection, and the client may never see the answer.
    """
    seen = 0
    async for chunk in chunks:
        seen += len(chunk)
        if seen > _DISCARD_BYTES:
            return


async def read_body(request: Any) -> dict[str, Any] | tuple[int, str]:
    """The request's JSON object, or ``(status, why)`` when it is refused.

    Refused: a body past :data:`MAX_BODY_BYTES` (413), one that is not JSON or nests past
    Python's recursion limit, or JSON that is not an object (400).
    """
    too_large = 413, f"the request body is larger than {MAX_BODY_BYTES} bytes"
    declared = request.headers.get("content-length", "")
    chunks: AsyncIterator[bytes] = request.stream()
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        await _discard(chunks)
        return too_large
    raw = bytearray()
    async for chunk in chunks:
        raw += chunk
        if len(raw) > MAX_BODY_BYTES:
            await _discard(chunks)
            return too_large
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        return 400, "the request body is not JSON"
    if not isinstance(body, dict):
        return 400, "the request body is not a JSON object"
    return body


def objects(value: Any, *, optional: bool = True) -> bool:
    """Whether ``value`` is a list of JSON objects (or absent, when ``optional``)."""
    if value is None:
        return optional
    return isinstance(value, list) and all(isinstance(v, dict) for v in value)


class LoopbackServer:
    """An ASGI app served by uvicorn on ``127.0.0.1`` at a free port, in a daemon thread.

    Use it as a context manager, or call :meth:`start` and :meth:`stop`.

    Args:
        app: the ASGI application.
    """

    def __init__(self, app: Any) -> None:
        self._app = app
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``.

        Raises:
            RuntimeError: when the server is not running.
        """
        if self._port is None:
            raise RuntimeError("the loopback server is not running: call start() first")
        return f"http://127.0.0.1:{self._port}"

    def start(self) -> Self:
        """Start serving; returns once the server accepts connections.

        Raises:
            RuntimeError: when it is already running or does not start in time.
        """
        import uvicorn  # google-adk depends on uvicorn; imported only when serving

        if self._thread is not None:
            raise RuntimeError("the loopback server is already running")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app,
            log_level="warning",
            lifespan="off",
            access_log=False,
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the loopback server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread (streams still open are cut)."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(_STOP_TIMEOUT)
        self._server, self._thread, self._port = None, None, None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class ScriptedServer(LoopbackServer):
    """A loopback model API that answers one POST route from :class:`ScriptedResponse` turns.

    Holds what both scripted APIs share: the script and its cursor, the requests received,
    streams the client cancelled, failed expectations, and :meth:`assert_consumed`.

    Args:
        script: the turns, in order.
        route: the POST route's path (Starlette syntax).
        handler: the route's handler.
        strict, loop, per_conversation: how the script is walked (see ``Script``).
        warn: where a non-strict script's exhaustion is reported.
    """

    def __init__(
        self,
        script: Sequence[ScriptedResponse],
        route: str,
        handler: Callable[[Any], Awaitable[Any]],
        *,
        strict: bool,
        loop: bool,
        per_conversation: bool,
        warn: Callable[..., None],
    ) -> None:
        from starlette.applications import Starlette
        from starlette.routing import Route

        from .._script import Script

        self.script = list(script)
        self.requests: list[LoopbackRequest] = []
        self.cancelled_streams = 0
        self._failures: list[str] = []
        self._cursor = Script(
            self.script,
            loop=loop,
            per_conversation=per_conversation,
            strict=strict,
            owner=type(self).__name__,
            warn=warn,
        )
        super().__init__(Starlette(routes=[Route(route, handler, methods=["POST"])]))

    @property
    def calls(self) -> int:
        """How many model calls were answered (or refused)."""
        return self._cursor.calls

    def assert_consumed(self) -> None:
        """Check that every turn was requested and no request failed its turn.

        Raises:
            AssertionError: listing unrequested turns, failed expectations and calls
                beyond a strict script.
        """
        self._cursor.turns = self.script
        unconsumed = self._cursor.unconsumed()
        first = len(self.script) - len(unconsumed)
        problems = list(self._failures) + [
            f"turn {first + i} was never requested: {t.describe()}"
            for i, t in enumerate(unconsumed)
        ]
        if problems:
            raise AssertionError(
                f"{type(self).__name__} after {self.calls} call(s) of {len(self.script)} "
                f"scripted:\n  " + "\n  ".join(problems)
            )
