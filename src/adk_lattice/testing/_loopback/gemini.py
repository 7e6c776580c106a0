"""``LoopbackGemini``: a scripted Gemini API on 127.0.0.1 for google-genai's real client."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from google.adk.models.llm_request import LlmRequest
from google.genai import types

from .._script import ScriptedResponse, ScriptExhaustedError
from .server import LoopbackRequest, ScriptedServer, objects, read_body, safe_headers
from .wire import gemini_chunks, last_user_text_of_body, model_turns_of_body, prompt_text_of_body

if TYPE_CHECKING:
    from google.adk.models.google_llm import Gemini
    from starlette.requests import Request
    from starlette.responses import Response

logger = logging.getLogger("adk_lattice.testing")

_API_KEY_ENVS = ("GOOGLE_API_KEY", "GEMINI_API_KEY")


#: Every response closes its connection: ADK never closes the clients it builds (one per
#: event loop), so a kept-alive connection would outlive each test's loop unclosed.
_CLOSE = {"connection": "close"}


def _error(status: int, google_status: str, message: str) -> Response:
    from starlette.responses import JSONResponse

    body = {"error": {"code": status, "message": message, "status": google_status}}
    return JSONResponse(body, status_code=status, headers=_CLOSE)


def _sse(data: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(data)}\r\n\r\n".encode()


def _as_llm_request(model: str, body: dict[str, Any]) -> LlmRequest:
    """The request body as an ``LlmRequest``, for a turn's ``expect``."""
    config = types.GenerateContentConfig()
    if body.get("systemInstruction"):
        config.system_instruction = types.Content.model_validate(body["systemInstruction"])
    contents = [types.Content.model_validate(c) for c in body.get("contents") or ()]
    return LlmRequest(model=model, contents=contents, config=config)


def _shape_problem(body: dict[str, Any]) -> str | None:
    """Why a body is not a ``generateContent`` request the server can read, or None."""
    contents = body.get("contents")
    if not objects(contents) or not all(objects(c.get("parts")) for c in contents or ()):
        return "contents must be a list of objects, each with a list of parts (objects)"
    system = body.get("systemInstruction")
    if system is not None and not (isinstance(system, dict) and objects(system.get("parts"))):
        return "systemInstruction must be an object with a list of parts (objects)"
    parts = [p for c in [*(contents or ()), system or {}] for p in c.get("parts") or ()]
    if not all(isinstance(p.get("text", ""), str) for p in parts):
        return "a part's text must be a string"
    return None


class LoopbackGemini(ScriptedServer):
    """A scripted Gemini API (``generateContent``, ``streamGenerateContent?alt=sse``).

    ADK's real ``Gemini`` model, google-genai's HTTP client, its SSE parser, error mapping
    and retries all run against it, on ``127.0.0.1`` at a free port. Each call answers with
    the next :class:`ScriptedResponse`, sent as the Gemini API sends it: text chunks,
    function calls, usage (counted from the text unless the turn gives it), finish reasons
    such as ``SAFETY``, and HTTP errors (``http_error(429)``) in Google's JSON error shape.
    A turn with ``error=`` is answered with HTTP 500.

    Example::

        with LoopbackGemini([ScriptedResponse.text("Hello.")]) as api:
            agent = LlmAgent(name="greeter", model=api.model("gemini-2.5-flash"))
            ...
            api.assert_consumed()

    Args:
        script: the turns, in order.
        strict: beyond the script, answer HTTP 500 and fail :meth:`assert_consumed`
            (default); otherwise log a warning and answer an empty turn.
        loop, per_conversation: as for :class:`FakeModel`.
        api_key: the key requests must carry; by default any key is accepted, but a
            request without one is refused (HTTP 403), as Google does.

    Attributes:
        script: the turns (append to it while the server runs).
        requests: every request received, in order.
        cancelled_streams: streams the client closed before they ended.
    """

    def __init__(
        self,
        script: Sequence[ScriptedResponse] = (),
        *,
        strict: bool = True,
        loop: bool = False,
        per_conversation: bool = False,
        api_key: str | None = None,
    ) -> None:
        super().__init__(
            script,
            "/{version}/models/{target}",
            self._handle,
            strict=strict,
            loop=loop,
            per_conversation=per_conversation,
            warn=logger.warning,
        )
        self.api_key = api_key

    def model(self, name: str = "gemini-2.5-flash", **kwargs: Any) -> Gemini:
        """ADK's real ``Gemini`` model pointed at this server.

        The API key comes from ``GOOGLE_API_KEY`` (the pytest fixture sets a dummy one);
        when neither it nor ``GEMINI_API_KEY`` is set, a dummy key is passed to the client.

        Args:
            name: the model name.
            **kwargs: more ``Gemini`` fields (``retry_options``, ``client_kwargs``, ...).

        Returns:
            The model.
        """
        from google.adk.models.google_llm import Gemini

        if not any(os.environ.get(k) for k in _API_KEY_ENVS):
            client_kwargs = dict(kwargs.pop("client_kwargs", None) or {})
            client_kwargs.setdefault("api_key", self.api_key or "loopback-key")
            kwargs["client_kwargs"] = client_kwargs
        given: dict[str, Any] = kwargs.get("client_kwargs") or {}
        if given.get("http_options") is not None:
            # Older ADK releases let client_kwargs' http_options replace base_url's: carry
            # the server's address inside them too.
            options = _with_base_url(given["http_options"], self.url)
            kwargs["client_kwargs"] = {**given, "http_options": options}
        return Gemini(model=name, base_url=self.url, **kwargs)

    def _authorised(self, request: Request) -> Response | None:
        key = request.headers.get("x-goog-api-key") or request.query_params.get("key")
        if not key:
            message = "Method doesn't allow unregistered callers. Please use an API key."
            return _error(403, "PERMISSION_DENIED", message)
        if self.api_key is not None and key != self.api_key:
            return _error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid key.")
        return None

    async def _handle(self, request: Request) -> Response:
        model, _, method = request.path_params["target"].partition(":")
        if method not in ("generateContent", "streamGenerateContent"):
            return _error(404, "NOT_FOUND", f"method {method!r} is not served here")
        refused = self._authorised(request)
        if refused is not None:
            return refused
        body = await read_body(request)
        if isinstance(body, tuple):
            status, why = body
            return _error(status, "INVALID_ARGUMENT", why)
        problem = _shape_problem(body)
        if problem is not None:
            return _error(400, "INVALID_ARGUMENT", problem)
        stream = method == "streamGenerateContent"
        headers = safe_headers(request.headers)
        self.requests.append(LoopbackRequest(request.url.path, model, stream, body, headers))
        return await self._answer(model, body, stream)

    async def _answer(self, model: str, body: dict[str, Any], stream: bool) -> Response:
        from starlette.responses import JSONResponse, StreamingResponse

        self._cursor.turns = self.script
        try:
            index, turn = self._cursor.next(model_turns_of_body(body), last_user_text_of_body(body))
        except ScriptExhaustedError as exc:
            self._failures.append(str(exc))
            return _error(500, "INTERNAL", str(exc))
        turn = turn if turn is not None else ScriptedResponse(usage=False)
        if turn.expect is not None:
            try:
                seen = _as_llm_request(model, body)
            except ValueError:  # pydantic's ValidationError: a part of no known kind
                return _error(400, "INVALID_ARGUMENT", "the contents are not Gemini contents")
            try:
                turn.expect(seen)
            except AssertionError as exc:
                self._failures.append(f"turn {index}: expectation failed: {exc}")
                return _error(400, "INVALID_ARGUMENT", f"turn {index}: expectation failed")
        if turn.delay:
            await asyncio.sleep(turn.delay)
        if turn.error is not None:
            return _error(500, "INTERNAL", f"scripted failure: {type(turn.error).__name__}")
        chunks = gemini_chunks(
            turn, prompt_text=prompt_text_of_body(body), model=model, stream=stream
        )
        if turn.http_status is not None and not (stream and chunks):
            return JSONResponse(
                turn.http_error_body(), status_code=turn.http_status, headers=_CLOSE
            )
        if not stream:
            return JSONResponse(chunks[0], headers=_CLOSE)
        events = self._events(turn, chunks)
        return StreamingResponse(events, media_type="text/event-stream", headers=_CLOSE)

    async def _events(
        self, turn: ScriptedResponse, chunks: list[dict[str, Any]]
    ) -> AsyncIterator[bytes]:
        done = False
        try:
            for n, chunk in enumerate(chunks):
                if n and turn.chunk_delay:
                    await asyncio.sleep(turn.chunk_delay)
                yield _sse(chunk)
            if turn.http_status is not None:  # an error after what was already streamed
                if turn.chunk_delay:
                    await asyncio.sleep(turn.chunk_delay)
                yield _sse(turn.http_error_body())
            done = True
        finally:
            if not done:
                self.cancelled_streams += 1


def _with_base_url(options: Any, url: str) -> Any:
    """``http_options`` (a dict or ``HttpOptions``) with ``base_url`` set when it has none."""
    if isinstance(options, dict):
        return {"base_url": url, **options}
    if getattr(options, "base_url", None) is None and hasattr(options, "model_copy"):
        return options.model_copy(update={"base_url": url})
    return options
