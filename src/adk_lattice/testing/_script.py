"""Scripted model turns, shared by ``FakeModel`` and the loopback provider APIs."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.adk.models.llm_request import LlmRequest
from google.genai import types

#: The HTTP statuses a scripted provider error may use, with Google's status names.
HTTP_STATUSES: Mapping[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


class ScriptExhaustedError(AssertionError):
    """A strict :class:`FakeModel` was called more times than its script has turns."""


class ScriptExhaustedWarning(UserWarning):
    """A non-strict scripted model ran out of script and answered an empty turn."""


def estimate_tokens(text: str) -> int:
    """A plausible token count for ``text``: one token per four characters, rounded up."""
    return (len(text) + 3) // 4


@dataclass(frozen=True, slots=True)
class FunctionCall:
    """One function call a scripted turn asks for.

    Attributes:
        name: the tool name.
        args: the arguments the model "chose".
        id: the call id; ADK assigns one when omitted.
    """

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True, slots=True)
class ScriptedResponse:
    """One turn of scripted model output.

    Attributes:
        text_chunks: text emitted one chunk per partial response when streaming; the final
            response carries their concatenation.
        thoughts: thought summaries sent before the answer, one chunk each when streaming
            (``thought=True`` parts; the final response carries them merged, first).
        function_calls: calls the turn requests, as :class:`FunctionCall` or
            ``(name, args)`` pairs.
        input_tokens, output_tokens: the usage reported; when None, counted from the
            request's and the answer's text (:func:`estimate_tokens`), as a provider would.
        usage: False reports no usage at all (a provider or proxy that omits it).
        error: an exception to raise instead of answering (a failed provider call).
        http_status: a provider HTTP error (429, 500, 503, ...) in Google's error shape;
            with text chunks and streaming, the chunks arrive first and the error mid-stream.
        finish_reason: the finish reason; a ``provider_error`` whose code is a finish
            reason (``SAFETY``) uses that code, as the real client reports it.
        delay: seconds to wait before answering (before the first chunk when streaming).
        chunk_delay: seconds to wait between streamed chunks (to cancel mid-stream).
        error_code, error_message: a provider error reported in the final response (the way
            a provider reports a blocked or failed generation) instead of raising.
        expect: called with the request this turn answers, before answering; it asserts
            on the request (raise ``AssertionError``) and its failure fails the call.
        parts: extra model parts in the Gemini API's JSON (``{"executableCode": ...}``,
            ``{"codeExecutionResult": ...}``), sent before the text: what a server-side
            code execution returns.
        grounding: the candidate's ``groundingMetadata`` JSON (``google_search``, Vertex AI
            search), on the final response.
        url_context: the candidate's ``urlContextMetadata`` JSON (``url_context``).
    """

    text_chunks: Sequence[str] = ()
    thoughts: Sequence[str] = ()
    function_calls: Sequence[FunctionCall | tuple[str, Mapping[str, Any]]] = ()
    input_tokens: int | None = None
    output_tokens: int | None = None
    usage: bool = True
    error: BaseException | None = None
    http_status: int | None = None
    finish_reason: types.FinishReason = types.FinishReason.STOP
    delay: float = 0.0
    chunk_delay: float = 0.0
    error_code: str | None = None
    error_message: str | None = None
    expect: Callable[[LlmRequest], object] | None = None
    parts: Sequence[Mapping[str, Any]] = ()
    grounding: Mapping[str, Any] | None = None
    url_context: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.delay < 0 or self.chunk_delay < 0:
            raise ValueError(f"delays must be >= 0 seconds, got {self.delay}, {self.chunk_delay}")
        if self.error_message is not None and self.error_code is None and not self.http_status:
            raise ValueError(
                "error_message needs an error_code (ADK reads errors by code) or an http_status"
            )
        if self.http_status is not None and self.http_status not in HTTP_STATUSES:
            known = ", ".join(map(str, HTTP_STATUSES))
            raise ValueError(f"http_status must be one of {known}, got {self.http_status}")

    def describe(self) -> str:
        """A short description of the turn, for failure messages."""
        parts = [f"text={''.join(self.text_chunks)!r}"] if self.text_chunks else []
        parts += [f"call {c.name}({dict(c.args)})" for c in self.calls()]
        if self.error is not None:
            parts.append(f"raises {self.error!r}")
        if self.http_status is not None:
            parts.append(f"HTTP {self.http_status}")
        if self.error_code is not None:
            parts.append(f"error_code={self.error_code!r}")
        return ", ".join(parts) or "empty turn"

    @classmethod
    def text(cls, text: str, **kwargs: Any) -> ScriptedResponse:
        """A turn that answers with one text chunk."""
        return cls(text_chunks=(text,), **kwargs)

    @classmethod
    def call(cls, name: str, /, **args: Any) -> ScriptedResponse:
        """A turn that requests one function call."""
        return cls(function_calls=(FunctionCall(name, args),))

    @classmethod
    def provider_error(cls, code: str, message: str = "", **kwargs: Any) -> ScriptedResponse:
        """A turn the provider answers with an error code and message instead of content."""
        return cls(error_code=code, error_message=message or None, **kwargs)

    @classmethod
    def http_error(cls, status: int, message: str = "", **kwargs: Any) -> ScriptedResponse:
        """A turn the provider refuses with an HTTP error (429, 500, 503, ...)."""
        return cls(http_status=status, error_message=message or None, **kwargs)

    def calls(self) -> list[FunctionCall]:
        """The function calls, each as a :class:`FunctionCall`."""
        return [c if isinstance(c, FunctionCall) else FunctionCall(*c) for c in self.function_calls]

    def text_out(self) -> str:
        """Everything the turn says, for counting output tokens."""
        calls = [json.dumps({"name": c.name, "args": dict(c.args)}) for c in self.calls()]
        return "".join(self.text_chunks) + "".join(calls)

    def effective_finish_reason(self) -> str:
        """The finish reason's name, taking a finish-reason ``error_code`` into account."""
        default = self.finish_reason == types.FinishReason.STOP
        if default and self.error_code in types.FinishReason.__members__:
            return str(self.error_code)
        return str(self.finish_reason.name)

    def usage_counts(self, prompt_text: str) -> tuple[int, int] | None:
        """``(input, output)`` tokens to report, or None when the turn reports no usage."""
        if not self.usage:
            return None
        given_in, given_out = self.input_tokens, self.output_tokens
        return (
            estimate_tokens(prompt_text) if given_in is None else given_in,
            estimate_tokens(self.text_out()) if given_out is None else given_out,
        )

    def http_error_body(self) -> dict[str, Any]:
        """The body Google's APIs send with this turn's HTTP error."""
        assert self.http_status is not None
        status = HTTP_STATUSES[self.http_status]
        message = self.error_message or f"scripted {self.http_status} {status}"
        return {"error": {"code": self.http_status, "message": message, "status": status}}


class Script:
    """The turns of a scripted model and which one answers the next call.

    Not thread-safe: a model or a loopback server uses it from one event loop.

    Args:
        turns: the turns, in order.
        loop: start again at the first turn when the script runs out.
        per_conversation: pick the turn by the number of model turns already in the
            request's history, so every session replays the script from its start.
        strict: raise :class:`ScriptExhaustedError` beyond the script; otherwise warn with
            :class:`ScriptExhaustedWarning` and answer an empty turn.
        owner: names the model in messages.
        warn: called with the message when a non-strict script runs out (default: a
            :class:`ScriptExhaustedWarning`).
    """

    def __init__(
        self,
        turns: Iterable[ScriptedResponse],
        *,
        loop: bool = False,
        per_conversation: bool = False,
        strict: bool = False,
        owner: str = "scripted model",
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.turns = turns if isinstance(turns, list) else list(turns)
        self.loop, self.per_conversation, self.strict = loop, per_conversation, strict
        self.owner = owner
        self._warn = warn
        self.calls = 0
        self.furthest = 0

    def next(self, model_turns: int, last_user_text: str) -> tuple[int, ScriptedResponse | None]:
        """The index and turn answering this call; the turn is None beyond the script.

        Args:
            model_turns: how many model turns the request's history holds.
            last_user_text: for the exhaustion message.

        Raises:
            ScriptExhaustedError: beyond the script when strict.
        """
        call = self.calls
        self.calls += 1
        index = model_turns if self.per_conversation else call
        if self.loop and self.turns:
            index %= len(self.turns)
        if index < len(self.turns):
            self.furthest = max(self.furthest, index + 1)
            return index, self.turns[index]
        message = (
            f"{self.owner} got call {call} (turn {index}) but its script has only "
            f"{len(self.turns)} turn(s) (turns count from 0); last user text: "
            f"{last_user_text!r}"
        )
        if self.strict:
            raise ScriptExhaustedError(message)
        message += "; answering an empty turn (pass loop=True or per_conversation=True)"
        if self._warn is not None:
            self._warn(message)
        else:
            warnings.warn(message, ScriptExhaustedWarning, stacklevel=3)
        return index, None

    def unconsumed(self) -> list[ScriptedResponse]:
        """The turns no call has reached yet."""
        if self.loop or self.per_conversation:
            return self.turns[self.furthest :]
        return self.turns[self.calls :]
