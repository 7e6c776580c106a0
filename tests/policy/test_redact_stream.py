"""RedactPII in SSE streams through real Runners: thoughts, and whole secrets of any length."""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import AsyncGenerator, Sequence
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_lattice import Lattice
from adk_lattice.policy import RedactPII
from adk_lattice.testing import FakeModel

from .conftest import Run, noted, run_app

SSE = RunConfig(streaming_mode=StreamingMode.SSE)
PREFIX = "Here is what you asked for, straight from the vault: "


class ThinkingModel(FakeModel):
    """A scripted model that streams thought chunks, then answer chunks."""

    def __init__(self, thoughts: Sequence[str], answer: Sequence[str]) -> None:
        super().__init__()
        self._thoughts, self._answer = list(thoughts), list(answer)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        for text in self._thoughts:
            part = types.Part(text=text, thought=True)
            yield LlmResponse(content=types.Content(role="model", parts=[part]), partial=True)
        for text in self._answer:
            part = types.Part(text=text)
            yield LlmResponse(content=types.Content(role="model", parts=[part]), partial=True)
        parts = [
            types.Part(text="".join(self._thoughts), thought=True),
            types.Part(text="".join(self._answer)),
        ]
        yield LlmResponse(
            content=types.Content(role="model", parts=parts), partial=False, turn_complete=True
        )


def _partial_thoughts(run: Run) -> str:
    return "".join(
        p.text or ""
        for e in run.events
        if e.partial and e.content
        for p in e.content.parts or ()
        if p.thought
    )


async def test_streamed_thoughts_are_redacted_at_every_split() -> None:
    """A value split across streamed thought chunks never leaks, at any split offset."""
    thought = "The user's card is 4111 1111 1111 1111, so I should not repeat it."
    value_at = thought.index("4111")
    for cut in range(value_at - 1, value_at + 21):
        model = ThinkingModel([thought[:cut], thought[cut:]], ["Done."])
        agent = LlmAgent(name="assistant", model=model)
        run = await run_app(agent, [Lattice(policy=[RedactPII(hold=48)])], "hi", run_config=SSE)
        streamed = _partial_thoughts(run)
        assert "1111 1111" not in streamed, cut
        assert streamed.startswith("The user's card is"), cut


def _pem(length: int) -> str:
    rng = random.Random(length)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    body = "".join(rng.choice(alphabet) for _ in range(length))
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{lines}\n-----END RSA PRIVATE KEY-----"


def _key(length: int) -> str:
    rng = random.Random(length)
    return "sk-" + "".join(
        rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(length)
    )


def _jwt(length: int) -> str:
    rng = random.Random(length)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
    third = max(8, length // 3)
    segment = ["".join(rng.choice(alphabet) for _ in range(third)) for _ in range(3)]
    return f"eyJ{segment[0]}.eyJ{segment[1]}.{segment[2]}"


def _splits(text: str, start: int, end: int) -> list[int]:
    """Split offsets: every one for a value up to 250 characters; for a longer one every
    offset near its edges and a sample in between (the run time stays small)."""
    if end - start <= 250:
        return list(range(max(1, start - 2), min(len(text), end + 2)))
    edges = list(range(start - 2, start + 12)) + list(range(end - 12, end + 2))
    middle = random.Random(len(text)).sample(range(start, end), 8)
    return sorted({c for c in edges + middle if 0 < c < len(text)})


async def _stream(chunks: list[str], redactor: RedactPII) -> Run:
    from adk_lattice.testing import ScriptedResponse

    model = FakeModel([ScriptedResponse(text_chunks=chunks)])
    agent = LlmAgent(name="assistant", model=model)
    return await run_app(agent, [Lattice(policy=[redactor])], "hi", run_config=SSE)


@pytest.mark.parametrize("length", [20, 200, 1500, 4000])
@pytest.mark.parametrize("make", [_pem, _key, _jwt], ids=["pem", "api_key", "jwt"])
async def test_a_long_secret_is_never_released_in_pieces(length: int, make: Any) -> None:
    """A secret of 20 to 4,000 characters split at any offset never streams out in part."""
    secret = make(length)
    text = f"{PREFIX}{secret} That is all."
    expected = f"{PREFIX}[REDACTED:SECRET] That is all."
    redactor = RedactPII()
    start, end = len(PREFIX), len(PREFIX) + len(secret)
    body = secret[40:60] if len(secret) > 60 else secret[-12:]
    for cut in _splits(text, start, end):
        run = await _stream([text[:cut], text[cut:]], redactor)
        streamed = "".join(run.partial_texts)
        assert body not in streamed, cut
        assert expected.startswith(streamed), cut
        assert run.texts == [expected], cut
    assert redactor.open_streams == 0


async def test_a_key_streamed_in_small_chunks_is_held_whole() -> None:
    """A 3,000-character key streamed 7 characters at a time is redacted whole."""
    secret = _key(3000)
    text = f"{PREFIX}{secret} Bye."
    run = await _stream([text[i : i + 7] for i in range(0, len(text), 7)], RedactPII())
    streamed = "".join(run.partial_texts)
    assert secret[100:120] not in streamed
    assert run.texts == [f"{PREFIX}[REDACTED:SECRET] Bye."]


async def test_a_token_past_the_bound_is_redacted_not_released() -> None:
    """A token longer than max_hold is replaced while streaming and in the final answer."""
    token = "x" * 700
    text = f"{PREFIX}{token} and the rest."
    run = await _stream(
        [text[i : i + 50] for i in range(0, len(text), 50)], RedactPII(max_hold=512)
    )
    streamed = "".join(run.partial_texts)
    assert "x" * 60 not in streamed
    assert run.texts == [f"{PREFIX}[REDACTED:SECRET] and the rest."]
    assert run.texts[0].startswith(streamed)


@pytest.mark.parametrize("split", [600, None], ids=["closed-next-chunk", "one-chunk"])
async def test_a_token_past_the_bound_in_one_chunk_is_redacted_not_released(
    split: int | None,
) -> None:
    """A token past max_hold that arrives in one chunk is replaced; the text after it streams."""
    token = "x" * 700
    text = f"{PREFIX}{token} and the rest."
    chunks = [text] if split is None else [text[:split], text[split:]]
    run = await _stream(chunks, RedactPII(max_hold=512))
    streamed = "".join(run.partial_texts)
    assert "x" * 60 not in streamed
    assert streamed.endswith("[REDACTED:SECRET] and the ")  # the last word waits for the end
    assert run.texts == [f"{PREFIX}[REDACTED:SECRET] and the rest."]


async def test_a_block_kind_in_a_stream_stops_it_and_withholds_the_answer() -> None:
    """A block kind found mid-stream releases nothing more, and the answer is the message."""
    redactor = RedactPII(strategies={"SSN": "block"})
    tail = " and the rest of a long answer that must not reach the client either. " * 3
    text = f"{PREFIX}your ssn is 123-45-6789{tail}"
    run = await _stream([text[i : i + 16] for i in range(0, len(text), 16)], redactor)
    streamed = "".join(run.partial_texts)
    assert "123-45" not in streamed
    assert "must not reach" not in streamed
    assert run.texts == [redactor.block_message]


async def test_a_block_kind_before_an_over_long_token_stops_the_stream() -> None:
    """A block kind found with a token past max_hold releases nothing of what follows."""
    redactor = RedactPII(strategies={"SSN": "block"}, max_hold=512)
    text = f"{PREFIX}ssn 123-45-6789 {'x' * 700} and more that must not reach the client."
    run = await _stream([text[:600], text[600:]], redactor)
    streamed = "".join(run.partial_texts)
    assert "must not reach" not in streamed
    assert "123-45" not in streamed
    assert run.texts == [redactor.block_message]


async def test_a_key_block_past_the_bound_is_redacted_not_released() -> None:
    """A private-key block longer than max_hold is redacted whole; text after END streams."""
    secret = _pem(3000)
    text = f"{PREFIX}{secret} Then we talk."
    chunks = [text[i : i + 40] for i in range(0, len(text), 40)]
    run = await _stream(chunks, RedactPII(max_hold=1024))
    streamed = "".join(run.partial_texts)
    assert secret[100:120] not in streamed
    assert run.texts == [f"{PREFIX}[REDACTED:SECRET] Then we talk."]
    assert run.texts[0].startswith(streamed)


def _held_after_each_chunk(redactor: RedactPII, text: str, chunk: int) -> list[int]:
    """Characters received but not yet released after each partial chunk."""
    from adk_lattice.testing import callback_context

    ctx = callback_context()
    received = released = 0
    held = []
    for start in range(0, len(text), chunk):
        piece = text[start : start + chunk]
        response = LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=piece)]), partial=True
        )
        redactor.after_model(callback_context=ctx, llm_response=response)
        assert response.content is not None and response.content.parts
        received += len(piece)
        released += len(response.content.parts[0].text or "")
        held.append(received - released)
    return held


PROSE = (
    "The quarterly review covered the billing migration, which moved every customer to the "
    "new invoicing system without interrupting service. Support volume rose briefly in the "
    "first week and fell back once the help pages were updated. "
) * 20


def test_text_without_values_is_held_back_at_most_one_chunk() -> None:
    """With the built-in detectors, prose with no value streams at most a chunk behind."""
    assert max(_held_after_each_chunk(RedactPII(), PROSE, 64)) <= 64


def test_custom_detectors_keep_the_fixed_hold() -> None:
    """A custom pattern may match plain words, so its stream always holds ``hold`` back."""
    redactor = RedactPII(custom={"PROJECT": r"Project [A-Z][a-z]+"}, hold=96)
    assert min(_held_after_each_chunk(redactor, PROSE, 64)[2:]) >= 96


OBFUSCATED = {
    "EMAIL": "jane (at) example (dot) com",
    "SECRET": "password = hunter2hunter2",
    "CARD": "4111 1111 1111 1111",
    "PHONE": "+1 415 555 0132",
}


@pytest.mark.parametrize(("kind", "value"), OBFUSCATED.items())
async def test_a_value_that_starts_with_a_word_is_held_at_every_split(
    kind: str, value: str
) -> None:
    """Held only where a value may start, a spaced or obfuscated value still never leaks."""
    text = f"{PREFIX}{value}. Anything else?"
    redactor = RedactPII()
    expected, _ = redactor.scrub(text)
    assert f"[REDACTED:{kind}]" in expected and value.split()[-1] not in expected
    for cut in range(len(PREFIX) - 2, len(PREFIX) + len(value) + 2):
        run = await _stream([text[:cut], text[cut:]], redactor)
        streamed = "".join(run.partial_texts)
        assert expected.startswith(streamed), (cut, streamed)
        assert run.texts == [expected], cut


async def test_a_partial_chunk_without_content_passes(ctx: Any) -> None:
    """A partial chunk with no content (metadata only) is passed on untouched."""
    chunk = LlmResponse(partial=True)
    RedactPII().after_model(callback_context=await ctx(), llm_response=chunk)
    assert chunk.content is None


async def test_values_streamed_before_an_empty_final_response_are_noted(ctx: Any) -> None:
    """A stream whose final response has no content still notes what its chunks redacted."""
    c = await ctx()
    redactor = RedactPII()
    for text in ("write to jane.doe@example.com ", "and thank you very much " * 8):
        chunk = LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))
        chunk.partial = True
        redactor.after_model(callback_context=c, llm_response=chunk)
    redactor.after_model(callback_context=c, llm_response=LlmResponse(turn_complete=True))
    assert noted(c, "after_model") == [("redact", "email")]
    assert redactor.open_streams == 0


async def test_a_blocked_answer_keeps_no_thought_and_no_call(ctx: Any) -> None:
    """When a block kind is found, only the block message is left: thoughts and calls go."""
    redactor = RedactPII(strategies={"SSN": "block"})
    parts = [
        types.Part(text="thinking it over", thought=True),
        types.Part(text="your ssn is 123-45-6789"),
        types.Part(function_call=types.FunctionCall(name="lookup", args={"q": "x"})),
    ]
    response = LlmResponse(content=types.Content(role="model", parts=parts))
    redactor.after_model(callback_context=await ctx(), llm_response=response)
    assert response.content is not None
    assert [(p.text, p.thought, p.function_call) for p in response.content.parts or []] == [
        (redactor.block_message, None, None)
    ]


async def test_text_media_in_a_model_answer_is_scrubbed(ctx: Any) -> None:
    """A text file in a model's answer is redacted like its text."""
    blob = types.Part.from_bytes(data=b"email,jane.doe@example.com", mime_type="text/csv")
    response = LlmResponse(content=types.Content(role="model", parts=[blob]))
    RedactPII().after_model(callback_context=await ctx(), llm_response=response)
    assert response.content is not None and response.content.parts
    assert response.content.parts[0].inline_data.data == b"email,[REDACTED:EMAIL]"


def test_the_default_hash_key_is_empty() -> None:
    """Without salt=, hash is HMAC-SHA256 under an empty key: stable across processes."""
    digest = hmac.new(b"", b"jane.doe@example.com", hashlib.sha256).hexdigest()[:12]
    out, _ = RedactPII(strategy="hash").scrub("mail jane.doe@example.com")
    assert out == f"mail [EMAIL:{digest}]"
