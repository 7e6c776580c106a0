"""``FakeModel``: a scripted ``BaseLlm`` that drives real Runners without a provider."""

from __future__ import annotations

import copy
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import PrivateAttr


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
    """

    text_chunks: Sequence[str] = ()
    function_calls: Sequence[FunctionCall | tuple[str, Mapping[str, Any]]] = ()
    input_tokens: int | None = None
    output_tokens: int | None = None
    error: BaseException | None = None
    finish_reason: types.FinishReason = types.FinishReason.STOP

    @classmethod
    def text(cls, text: str, **kwargs: Any) -> ScriptedResponse:
        """A turn that answers with one text chunk."""
        return cls(text_chunks=(text,), **kwargs)

    @classmethod
    def call(cls, name: str, /, **args: Any) -> ScriptedResponse:
        """A turn that requests one function call."""
        return cls(function_calls=(FunctionCall(name, args),))

    def _calls(self) -> list[FunctionCall]:
        return [c if isinstance(c, FunctionCall) else FunctionCall(*c) for c in self.function_calls]


class FakeModel(BaseLlm):
    """A deterministic ``BaseLlm``: each call answers with the next scripted turn.

    With ``stream=True`` each text chunk is its own ``partial=True`` response, then one
    final ``turn_complete=True`` response carries the whole text, the function calls and the
    token usage; with ``stream=False`` only the final response. An exhausted script answers
    with an empty turn-complete response.

    Example::

        model = FakeModel(script=[ScriptedResponse.call("lookup_charge", charge_id="c1"),
                                  ScriptedResponse.text("Found it.")])
        agent = LlmAgent(name="billing", model=model, tools=[lookup_charge])

    Attributes:
        script: the turns, in order.
        calls: how many times the model was called.
        requests: a deep copy of every request it received, in order.
    """

    model: str = "fake-model"
    script: list[ScriptedResponse] = []
    _calls: int = PrivateAttr(default=0)
    _requests: list[LlmRequest] = PrivateAttr(default_factory=list)

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
            yield LlmResponse(
                content=types.Content(role="model", parts=[]),
                turn_complete=True,
                finish_reason=types.FinishReason.STOP,
            )
            return
        turn = self.script[index]
        if turn.error is not None:
            raise turn.error
        if stream:
            for chunk in turn.text_chunks:
                yield LlmResponse(
                    content=types.Content(role="model", parts=[types.Part(text=chunk)]),
                    partial=True,
                )
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
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            partial=False if stream else None,
            turn_complete=True,
            finish_reason=turn.finish_reason,
            usage_metadata=usage,
        )
