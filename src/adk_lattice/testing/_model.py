"""``FakeModel``: a scripted ``BaseLlm`` that drives real Runners without a provider."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import PrivateAttr


class ScriptExhaustedError(AssertionError):
    """A strict :class:`FakeModel` was called more times than its script has turns."""


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
    """One turn of ``FakeModel`` output.

    Attributes:
        text_chunks: text emitted one chunk per partial response when streaming; the final
            response carries their concatenation.
        function_calls: calls the turn requests, as :class:`FunctionCall` or
            ``(name, args)`` pairs.
        input_tokens, output_tokens: put in the final response's ``usage_metadata``.
        error: an exception to raise instead of answering (a provider failure).
        finish_reason: the final response's finish reason (default ``STOP``).
        delay: seconds to wait before answering (before the first chunk when streaming).
        error_code, error_message: a provider error reported in the final response (the way
            a provider reports a blocked or failed generation) instead of raising.
        expect: called with the request this turn answers, before answering; it asserts
            on the request (raise ``AssertionError``) and its failure fails the call.
    """

    text_chunks: Sequence[str] = ()
    function_calls: Sequence[FunctionCall | tuple[str, Mapping[str, Any]]] = ()
    input_tokens: int | None = None
    output_tokens: int | None = None
    error: BaseException | None = None
    finish_reason: types.FinishReason = types.FinishReason.STOP
    delay: float = 0.0
    error_code: str | None = None
    error_message: str | None = None
    expect: Callable[[LlmRequest], object] | None = None

    def __post_init__(self) -> None:
        if self.delay < 0:
            raise ValueError(f"delay must be >= 0 seconds, got {self.delay}")
        if self.error_message is not None and self.error_code is None:
            raise ValueError("error_message needs an error_code (ADK reads errors by code)")

    def describe(self) -> str:
        """A short description of the turn, for failure messages."""
        parts = [f"text={''.join(self.text_chunks)!r}"] if self.text_chunks else []
        parts += [f"call {c.name}({dict(c.args)})" for c in self._calls()]
        if self.error is not None:
            parts.append(f"raises {self.error!r}")
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

    def _calls(self) -> list[FunctionCall]:
        return [c if isinstance(c, FunctionCall) else FunctionCall(*c) for c in self.function_calls]


class FakeModel(BaseLlm):
    """A deterministic ``BaseLlm``: each call answers with the next scripted turn.

    With ``stream=True`` each text chunk is its own ``partial=True`` response, then one
    final ``turn_complete=True`` response carries the whole text, the function calls and the
    token usage; with ``stream=False`` only the final response. An exhausted script answers
    with an empty turn-complete response, or raises :class:`ScriptExhaustedError` when
    ``strict=True``.

    Example::

        model = FakeModel(script=[ScriptedResponse.call("lookup_charge", charge_id="c1"),
                                  ScriptedResponse.text("Found it.")], strict=True)
        agent = LlmAgent(name="billing", model=model, tools=[lookup_charge])
        ...
        model.assert_consumed()

    Attributes:
        script: the turns, in order.
        strict: raise on a call beyond the script instead of answering empty.
        calls: how many times the model was called.
        requests: a deep copy of every request it received, in order.
    """

    model: str = "fake-model"
    script: list[ScriptedResponse] = []
    strict: bool = False
    _calls: int = PrivateAttr(default=0)
    _requests: list[LlmRequest] = PrivateAttr(default_factory=list)
    _failures: list[str] = PrivateAttr(default_factory=list)

    def __init__(self, script: Sequence[ScriptedResponse] = (), **kwargs: Any) -> None:
        super().__init__(**{"script": list(script), **kwargs})

    @property
    def calls(self) -> int:
        """How many times ``generate_content_async`` was called."""
        return self._calls

    @property
    def requests(self) -> list[LlmRequest]:
        """Every request received, copied as it was when it arrived."""
        return self._requests

    @property
    def unconsumed(self) -> list[ScriptedResponse]:
        """The scripted turns no call has reached yet."""
        return self.script[self._calls :]

    def assert_consumed(self) -> None:
        """Check that every scripted turn was used and every ``expect`` held.

        Expectation failures are reported here as well as raised in the call, because a
        handler (an ``on_model_error`` fallback) may have swallowed the one in the call.

        Raises:
            AssertionError: listing each unconsumed turn and each failed expectation.
        """
        problems = list(self._failures)
        first = self._calls
        problems += [
            f"turn {first + i} was never requested: {turn.describe()}"
            for i, turn in enumerate(self.unconsumed)
        ]
        if problems:
            raise AssertionError(
                f"FakeModel {self.model!r} after {self._calls} call(s) of "
                f"{len(self.script)} scripted:\n  " + "\n  ".join(problems)
            )

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"fake-.*"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        index = self._calls
        self._calls += 1
        self._requests.append(copy.deepcopy(llm_request))
        if index >= len(self.script):
            if self.strict:
                raise ScriptExhaustedError(
                    f"FakeModel {self.model!r} got call {index} but its script has only "
                    f"{len(self.script)} turn(s) (turns count from 0); last user text: "
                    f"{_last_user_text(llm_request)!r}"
                )
            yield LlmResponse(
                content=types.Content(role="model", parts=[]),
                turn_complete=True,
                finish_reason=types.FinishReason.STOP,
            )
            return
        turn = self.script[index]
        if turn.expect is not None:
            self._check(index, turn.expect, llm_request)
        if turn.delay:
            await asyncio.sleep(turn.delay)
        if turn.error is not None:
            raise turn.error
        if stream:
            for chunk in turn.text_chunks:
                yield LlmResponse(
                    content=types.Content(role="model", parts=[types.Part(text=chunk)]),
                    partial=True,
                )
        yield _final(turn, stream)

    def _check(
        self, index: int, expect: Callable[[LlmRequest], object], request: LlmRequest
    ) -> None:
        try:
            expect(request)
        except AssertionError as exc:
            self._failures.append(f"turn {index}: expectation failed: {exc}")
            raise AssertionError(f"FakeModel turn {index}: expectation failed: {exc}") from exc


def _final(turn: ScriptedResponse, stream: bool) -> LlmResponse:
    """The turn-complete response of one turn: all text, the calls, usage and any error."""
    parts: list[types.Part] = []
    if turn.text_chunks:
        parts.append(types.Part(text="".join(turn.text_chunks)))
    for c in turn._calls():
        call = types.FunctionCall(name=c.name, args=dict(c.args), id=c.id)
        parts.append(types.Part(function_call=call))
    usage = None
    if turn.input_tokens is not None or turn.output_tokens is not None:
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=turn.input_tokens,
            candidates_token_count=turn.output_tokens,
            total_token_count=(turn.input_tokens or 0) + (turn.output_tokens or 0),
        )
    content: types.Content | None = types.Content(role="model", parts=parts)
    if turn.error_code is not None and not parts:
        content = None
    return LlmResponse(
        content=content,
        partial=False if stream else None,
        turn_complete=True,
        finish_reason=turn.finish_reason,
        usage_metadata=usage,
        error_code=turn.error_code,
        error_message=turn.error_message,
    )


def _last_user_text(request: LlmRequest) -> str:
    for content in reversed(request.contents):
        if content.role == "user":
            texts = [p.text for p in content.parts or () if p.text]
            if texts:
                return " ".join(texts)
    return ""
