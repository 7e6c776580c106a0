"""``FakeModel``: a scripted ``BaseLlm`` that drives real Runners without a provider."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncGenerator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.utils.streaming_utils import StreamingResponseAggregator
from google.genai import errors, types
from pydantic import PrivateAttr

from ._loopback.wire import gemini_chunks, prompt_text_of_request
from ._script import Script, ScriptedResponse

if TYPE_CHECKING:
    from ..policy import RedactPII


class FakeModel(BaseLlm):
    """A deterministic ``BaseLlm``: each call answers with the next scripted turn.

    Each turn is rendered as the Gemini API would send it and handed to ADK's own response
    code, so the responses have the real client's shape: with ``stream=True`` one
    ``partial=True`` response per text chunk (and one for the function calls), each
    reporting the prompt's tokens, then a final ``partial=False`` response with all parts,
    the finish reason and the full usage; with ``stream=False`` one response. Token usage
    is counted from the text unless the turn gives it. See ``docs/testing.md`` for what
    still differs from ``google-genai``'s HTTP client.

    Beyond the script, a strict model raises :class:`ScriptExhaustedError`; otherwise it
    warns (:class:`ScriptExhaustedWarning`) and answers an empty turn. ``loop=True``
    starts the script again instead, and ``per_conversation=True`` replays it for each
    conversation (a model shared by every session of a server), picking the turn by the
    number of model turns already in the request's history.

    Example::

        model = FakeModel(script=[ScriptedResponse.call("lookup_charge", charge_id="c1"),
                                  ScriptedResponse.text("Found it.")], strict=True)
        agent = LlmAgent(name="billing", model=model, tools=[lookup_charge])
        ...
        model.assert_consumed()

    Attributes:
        script: the turns, in order.
        strict: raise on a call beyond the script instead of warning and answering empty.
        loop: start the script again when it runs out.
        per_conversation: replay the script for each conversation.
        calls: how many times the model was called.
        requests: a deep copy of every request it received, in order.
    """

    model: str = "fake-model"
    script: list[ScriptedResponse] = []
    strict: bool = False
    loop: bool = False
    per_conversation: bool = False
    _cursor: Script = PrivateAttr()
    _requests: list[LlmRequest] = PrivateAttr(default_factory=list)
    _failures: list[str] = PrivateAttr(default_factory=list)

    def __init__(self, script: Sequence[ScriptedResponse] = (), **kwargs: Any) -> None:
        super().__init__(**{"script": list(script), **kwargs})
        self._cursor = Script(
            self.script,
            loop=self.loop,
            per_conversation=self.per_conversation,
            strict=self.strict,
            owner=f"FakeModel {self.model!r}",
        )

    @classmethod
    def from_cassette(
        cls, path: str | Path, *, strict: bool = True, redact: RedactPII | None = None
    ) -> FakeModel:
        """A model that replays a cassette written by :class:`RecordingModel`.

        Args:
            path: the cassette file.
            strict: each request must match the recorded one, normalised as the response
                cache keys it (the call fails with a diff of the two otherwise), and a call
                beyond the cassette fails; False answers in order without checking.
            redact: scrubs each request before comparing; by default a scrubbed cassette is
                compared with ``RedactPII()``'s defaults.

        Returns:
            A FakeModel named after the recorded model, scripted with the recorded answers.

        Raises:
            CassetteError: when the file is not a cassette.
        """
        from ._cassette import replay_model

        return replay_model(cls, Path(path), strict=strict, redact=redact)

    @property
    def calls(self) -> int:
        """How many times ``generate_content_async`` was called."""
        return self._cursor.calls

    @property
    def requests(self) -> list[LlmRequest]:
        """Every request received, copied as it was when it arrived."""
        return self._requests

    @property
    def unconsumed(self) -> list[ScriptedResponse]:
        """The scripted turns no call has reached yet."""
        self._cursor.turns = self.script
        return self._cursor.unconsumed()

    def assert_consumed(self) -> None:
        """Check that every scripted turn was used and every ``expect`` held.

        Expectation failures are reported here as well as raised in the call, because a
        handler (an ``on_model_error`` fallback) may have swallowed the one in the call.

        Raises:
            AssertionError: listing each unconsumed turn and each failed expectation.
        """
        problems = list(self._failures)
        first = len(self.script) - len(self.unconsumed)
        problems += [
            f"turn {first + i} was never requested: {turn.describe()}"
            for i, turn in enumerate(self.unconsumed)
        ]
        if problems:
            raise AssertionError(
                f"FakeModel {self.model!r} after {self.calls} call(s) of "
                f"{len(self.script)} scripted:\n  " + "\n  ".join(problems)
            )

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"fake-.*"]

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self._requests.append(copy.deepcopy(llm_request))
        self._cursor.turns = self.script
        model_turns = sum(1 for c in llm_request.contents if c.role == "model")
        index, turn = self._cursor.next(model_turns, _last_user_text(llm_request))
        if turn is None:
            turn = ScriptedResponse(usage=False)
        elif turn.expect is not None:
            self._check(index, turn.expect, llm_request)
        if turn.delay:
            await asyncio.sleep(turn.delay)
        if turn.error is not None:
            raise turn.error
        code = turn.error_code
        if code is not None and not _is_gemini_code(code):
            yield _custom_error(turn, stream)  # a code no Gemini API sends
            return
        rendered = gemini_chunks(
            turn, prompt_text=prompt_text_of_request(llm_request), model=self.model, stream=stream
        )
        responses = [types.GenerateContentResponse.model_validate(c) for c in rendered]
        if not stream:
            if turn.http_status is not None:
                raise _http_error(turn)
            yield LlmResponse.create(responses[0])
            return
        async for response in _stream(responses, turn):
            yield response

    def _check(
        self, index: int, expect: Callable[[LlmRequest], object], request: LlmRequest
    ) -> None:
        try:
            expect(request)
        except AssertionError as exc:
            self._failures.append(f"turn {index}: expectation failed: {exc}")
            raise AssertionError(f"FakeModel turn {index}: expectation failed: {exc}") from exc


async def _stream(
    responses: list[types.GenerateContentResponse], turn: ScriptedResponse
) -> AsyncGenerator[LlmResponse, None]:
    """What ADK's ``Gemini`` yields for these streamed chunks (same aggregator)."""
    aggregator = StreamingResponseAggregator()
    usage = None
    for n, response in enumerate(responses):
        if n and turn.chunk_delay:
            await asyncio.sleep(turn.chunk_delay)
        usage = response.usage_metadata or usage
        async for llm_response in aggregator.process_response(response):
            yield llm_response
    if turn.http_status is not None:
        if turn.chunk_delay and responses:
            await asyncio.sleep(turn.chunk_delay)
        raise _http_error(turn)
    final = aggregator.close()
    if final is not None:
        if usage is not None:
            final.usage_metadata = usage
        yield final


def _is_gemini_code(code: str) -> bool:
    return code in types.FinishReason.__members__ or code in types.BlockedReason.__members__


def _http_error(turn: ScriptedResponse) -> errors.APIError:
    """The error google-genai raises for the turn's HTTP status and body."""
    assert turn.http_status is not None
    body = turn.http_error_body()
    if turn.http_status < 500:
        return errors.ClientError(turn.http_status, body)
    return errors.ServerError(turn.http_status, body)


def _custom_error(turn: ScriptedResponse, stream: bool) -> LlmResponse:
    """A response reporting an error code of the app's own (not one Gemini sends)."""
    text = "".join(turn.text_chunks)
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=text)]) if text else None,
        partial=False if stream else None,
        finish_reason=turn.finish_reason,
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
