"""``LoopbackOpenAI``: a scripted OpenAI-compatible chat API on 127.0.0.1, for ``LiteLlm``."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from .._script import ScriptedResponse, ScriptExhaustedError
from .server import LoopbackRequest, ScriptedServer, objects, read_body, safe_headers

if TYPE_CHECKING:
    from google.adk.models.lite_llm import LiteLlm
    from starlette.requests import Request
    from starlette.responses import Response

logger = logging.getLogger("adk_lattice.testing")

_CLOSE = {"connection": "close"}
_ids = itertools.count(1)
#: OpenAI's error types by HTTP status, as its API reports them.
_ERROR_TYPES = {429: "rate_limit_exceeded", 400: "invalid_request_error", 401: "invalid_api_key"}
#: Gemini finish reasons scripts use, in OpenAI's words.
_FINISH = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter"}


def _error(status: int, message: str) -> Response:
    from starlette.responses import JSONResponse

    kind = _ERROR_TYPES.get(status, "server_error")
    body = {"error": {"message": message, "type": kind, "param": None, "code": kind}}
    return JSONResponse(body, status_code=status, headers=_CLOSE)


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    calls = [json.dumps(c.get("function", {})) for c in message.get("tool_calls") or ()]
    return (content or "") + "".join(calls)


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return _message_text(message)
    return ""


def _shape_problem(body: dict[str, Any]) -> str | None:
    """Why a body is not a chat completion request the server can read, or None."""
    messages = body.get("messages")
    if not objects(messages):
        return "messages must be a list of objects"
    for message in messages or ():
        content = message.get("content")
        if not (content is None or isinstance(content, str) or objects(content)):
            return "a message's content must be a string or a list of objects"
        if isinstance(content, list) and not all(
            isinstance(p.get("text", ""), str) for p in content
        ):
            return "a content part's text must be a string"
        calls = message.get("tool_calls")
        if not objects(calls) or not all(
            isinstance(c.get("function", {}), dict) for c in calls or ()
        ):
            return "a message's tool_calls must be a list of objects with a function object"
    if not isinstance(body.get("stream_options") or {}, dict):
        return "stream_options must be an object"
    return None


def _finish(turn: ScriptedResponse) -> str:
    if turn.calls():
        return "tool_calls"
    return _FINISH.get(turn.effective_finish_reason(), "stop")


def _usage(counts: tuple[int, int] | None) -> dict[str, int] | None:
    if counts is None:
        return None
    return {"prompt_tokens": counts[0], "completion_tokens": counts[1], "total_tokens": sum(counts)}


def _tool_calls(turn: ScriptedResponse) -> list[dict[str, Any]]:
    return [
        {
            "id": call.id or f"call_{next(_ids)}",
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(dict(call.args))},
        }
        for call in turn.calls()
    ]


class LoopbackOpenAI(ScriptedServer):
    """A scripted OpenAI-compatible ``/v1/chat/completions`` API, streaming and tool calls.

    The second provider path: ADK's ``LiteLlm`` model (needs the ``litellm`` extra) and
    the OpenAI client underneath it run against this server, answering from the same
    :class:`ScriptedResponse` turns as :class:`LoopbackGemini`. Text streams as ``delta``
    chunks, function calls as ``tool_calls`` (their arguments split over two chunks), usage
    in a last chunk when the client asks for it, ``SAFETY`` as ``content_filter``, and
    HTTP errors in OpenAI's error shape.

    Args:
        script: the turns, in order.
        strict, loop, per_conversation: as for :class:`LoopbackGemini`.

    Attributes:
        script, requests, cancelled_streams: as for :class:`LoopbackGemini`.
    """

    def __init__(
        self,
        script: Sequence[ScriptedResponse] = (),
        *,
        strict: bool = True,
        loop: bool = False,
        per_conversation: bool = False,
    ) -> None:
        super().__init__(
            script,
            "/v1/chat/completions",
            self._handle,
            strict=strict,
            loop=loop,
            per_conversation=per_conversation,
            warn=logger.warning,
        )

    def model(self, name: str = "openai/gpt-4o-mini", **kwargs: Any) -> LiteLlm:
        """ADK's ``LiteLlm`` pointed at this server (the OpenAI client's retries off).

        Sets ``LITELLM_LOCAL_MODEL_COST_MAP=True`` (unless set) before importing LiteLLM,
        which otherwise fetches its model price list from the network on import.

        Args:
            name: the LiteLLM model name (``openai/...`` routes to an OpenAI-style API).
            **kwargs: more ``LiteLlm``/``litellm.acompletion`` arguments.

        Returns:
            The model.
        """
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        from google.adk.models.lite_llm import LiteLlm

        kwargs.setdefault("max_retries", 0)
        return LiteLlm(model=name, api_base=f"{self.url}/v1", api_key="loopback-key", **kwargs)

    async def _handle(self, request: Request) -> Response:
        from starlette.responses import JSONResponse, StreamingResponse

        if not request.headers.get("authorization"):
            return _error(401, "You didn't provide an API key.")
        body = await read_body(request)
        if isinstance(body, tuple):
            return _error(*body)
        problem = _shape_problem(body)
        if problem is not None:
            return _error(400, problem)
        messages = body.get("messages") or []
        stream = bool(body.get("stream"))
        model = str(body.get("model") or "")
        headers = safe_headers(request.headers)
        self.requests.append(LoopbackRequest(request.url.path, model, stream, body, headers))
        self._cursor.turns = self.script
        turns = sum(1 for m in messages if m.get("role") == "assistant")
        try:
            _, turn = self._cursor.next(turns, _last_user_text(messages))
        except ScriptExhaustedError as exc:
            self._failures.append(str(exc))
            return _error(500, str(exc))
        turn = turn if turn is not None else ScriptedResponse(usage=False)
        if turn.delay:
            await asyncio.sleep(turn.delay)
        if turn.error is not None:
            return _error(500, f"scripted failure: {type(turn.error).__name__}")
        if turn.http_status is not None and not (stream and turn.text_chunks):
            message = turn.error_message or f"scripted {turn.http_status}"
            return _error(turn.http_status, message)
        counts = turn.usage_counts("".join(map(_message_text, messages)))
        if not stream:
            return JSONResponse(self._completion(turn, model, counts), headers=_CLOSE)
        usage = (body.get("stream_options") or {}).get("include_usage")
        events = self._events(turn, model, counts if usage else None)
        return StreamingResponse(events, media_type="text/event-stream", headers=_CLOSE)

    def _completion(
        self, turn: ScriptedResponse, model: str, counts: tuple[int, int] | None
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(turn.text_chunks) or None,
        }
        if turn.calls():
            message["tool_calls"] = _tool_calls(turn)
        choice = {"index": 0, "message": message, "finish_reason": _finish(turn)}
        body = {"id": f"chatcmpl-{next(_ids)}", "object": "chat.completion", "created": 0}
        return {**body, "model": model, "choices": [choice], "usage": _usage(counts)}

    async def _events(
        self, turn: ScriptedResponse, model: str, counts: tuple[int, int] | None
    ) -> AsyncIterator[bytes]:
        head = {"id": f"chatcmpl-{next(_ids)}", "object": "chat.completion.chunk", "created": 0}
        head["model"] = model

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return f"data: {json.dumps({**head, 'choices': [choice]})}\n\n".encode()

        deltas: list[dict[str, Any]] = [
            {"role": "assistant", "content": t} for t in turn.text_chunks
        ]
        for n, call in enumerate(_tool_calls(turn)):
            arguments = call["function"]["arguments"]
            half = len(arguments) // 2
            opening = {**call, "function": {"name": call["function"]["name"], "arguments": ""}}
            deltas.append({"tool_calls": [{"index": n, **opening}]})
            deltas.append(
                {"tool_calls": [{"index": n, "function": {"arguments": arguments[:half]}}]}
            )
            deltas.append(
                {"tool_calls": [{"index": n, "function": {"arguments": arguments[half:]}}]}
            )
        done = False
        try:
            for n, delta in enumerate(deltas):
                if n and turn.chunk_delay:
                    await asyncio.sleep(turn.chunk_delay)
                yield chunk(delta)
            if turn.http_status is not None:  # an error after what was already streamed
                error = {"message": turn.error_message or "scripted", "type": "server_error"}
                yield f"data: {json.dumps({'error': error})}\n\n".encode()
                done = True
                return
            yield chunk({}, _finish(turn))
            if counts is not None:
                usage = {**head, "choices": [], "usage": _usage(counts)}
                yield f"data: {json.dumps(usage)}\n\n".encode()
            yield b"data: [DONE]\n\n"
            done = True
        finally:
            if not done:
                self.cancelled_streams += 1
