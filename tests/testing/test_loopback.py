"""LoopbackGemini and LoopbackOpenAI at the HTTP level: routes, keys, scripts, failures."""

from __future__ import annotations

import json

import httpx
import pytest

from adk_lattice.testing import LoopbackGemini, LoopbackOpenAI, ScriptedResponse
from adk_lattice.testing._loopback.server import MAX_BODY_BYTES

S = ScriptedResponse
KEY = {"x-goog-api-key": "k"}
BODY = {"contents": [{"role": "user", "parts": [{"text": "hello there"}]}]}


def post(api: LoopbackGemini, method: str, body: object = BODY, **kwargs: object) -> httpx.Response:
    url = f"{api.url}/v1beta/models/gemini-2.5-flash:{method}"
    return httpx.post(url, json=body, **kwargs)  # type: ignore[arg-type]


def test_generate_content_answers_the_gemini_json_shape() -> None:
    """generateContent answers one GenerateContentResponse with usage counted from text."""
    with LoopbackGemini([S.text("Hi.")]) as api:
        answer = post(api, "generateContent", headers=KEY).json()
    (candidate,) = answer["candidates"]
    assert candidate["content"] == {"role": "model", "parts": [{"text": "Hi."}]}
    assert candidate["finishReason"] == "STOP"
    assert answer["usageMetadata"] == {
        "promptTokenCount": 3,
        "candidatesTokenCount": 1,
        "totalTokenCount": 4,
    }


def test_stream_sends_one_sse_event_per_chunk() -> None:
    """streamGenerateContent sends data: lines, the finish reason on the last one only."""
    with LoopbackGemini([S(text_chunks=["a", "b"])]) as api:
        text = post(api, "streamGenerateContent?alt=sse", headers=KEY).text
    events = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    assert [e["candidates"][0].get("finishReason") for e in events] == [None, "STOP"]


def test_a_request_without_an_api_key_is_refused() -> None:
    """No key gives Google's 403 PERMISSION_DENIED, and no turn is used."""
    with LoopbackGemini([S.text("Hi.")]) as api:
        response = post(api, "generateContent")
        assert api.calls == 0
    assert (response.status_code, response.json()["error"]["status"]) == (403, "PERMISSION_DENIED")


def test_a_wrong_api_key_is_refused_when_one_is_set() -> None:
    """With api_key=, any other key gives 400 INVALID_ARGUMENT."""
    with LoopbackGemini([S.text("Hi.")], api_key="right") as api:
        response = post(api, "generateContent", headers={"x-goog-api-key": "wrong"})
    assert response.status_code == 400


def test_recorded_requests_mask_the_api_key() -> None:
    """requests keeps the body and headers, with the key masked."""
    with LoopbackGemini([S.text("Hi.")]) as api:
        post(api, "generateContent", headers=KEY)
    (request,) = api.requests
    assert (request.model, request.stream, request.body) == ("gemini-2.5-flash", False, BODY)
    assert request.headers["x-goog-api-key"] == "***"


def test_http_error_uses_google_error_shape() -> None:
    """http_error(503) answers 503 with code, message and status UNAVAILABLE."""
    with LoopbackGemini([S.http_error(503, "overloaded")]) as api:
        response = post(api, "generateContent", headers=KEY)
    assert response.status_code == 503
    assert response.json() == {
        "error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}
    }


def test_strict_server_fails_a_call_beyond_the_script() -> None:
    """A call beyond a strict script gets HTTP 500 and fails assert_consumed."""
    with LoopbackGemini([]) as api:
        assert post(api, "generateContent", headers=KEY).status_code == 500
    with pytest.raises(AssertionError, match="only 0 turn"):
        api.assert_consumed()


def test_unused_turns_fail_assert_consumed() -> None:
    """A turn nobody requested is listed by assert_consumed."""
    with LoopbackGemini([S.text("never")]) as api:
        pass
    with pytest.raises(AssertionError, match="turn 0 was never requested: text='never'"):
        api.assert_consumed()


def test_a_failed_expectation_is_refused_and_reported() -> None:
    """A turn whose expect fails answers 400 and fails assert_consumed."""

    def wants_refund(request: object) -> None:
        raise AssertionError("no refund asked")

    with LoopbackGemini([S.text("ok", expect=wants_refund)]) as api:
        assert post(api, "generateContent", headers=KEY).status_code == 400
    with pytest.raises(AssertionError, match="expectation failed: no refund asked"):
        api.assert_consumed()


def test_per_conversation_server_replays_the_script_per_history() -> None:
    """per_conversation=True answers each fresh conversation with the first turn."""
    with LoopbackGemini([S.text("first")], per_conversation=True) as api:
        answers = [post(api, "generateContent", headers=KEY).json() for _ in range(3)]
    assert {a["candidates"][0]["content"]["parts"][0]["text"] for a in answers} == {"first"}


def test_model_passes_a_dummy_key_when_the_environment_has_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """model() works without GOOGLE_API_KEY by handing the client a dummy key."""
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with LoopbackGemini() as api:
        model = api.model()
        assert model.base_url == api.url
        assert model.client_kwargs == {"api_key": "loopback-key"}


def test_url_before_start_is_a_clear_error() -> None:
    """Reading url before start() names the fix."""
    with pytest.raises(RuntimeError, match="call start"):
        _ = LoopbackGemini().url


def test_openai_api_answers_a_chat_completion() -> None:
    """LoopbackOpenAI answers /v1/chat/completions with a tool call and usage."""
    body = {"model": "m", "messages": [{"role": "user", "content": "hello there"}]}
    with LoopbackOpenAI([S.call("lookup", charge_id="c1")]) as api:
        answer = httpx.post(
            f"{api.url}/v1/chat/completions", json=body, headers={"authorization": "Bearer k"}
        ).json()
    (choice,) = answer["choices"]
    assert choice["finish_reason"] == "tool_calls"
    call = choice["message"]["tool_calls"][0]["function"]
    assert (call["name"], json.loads(call["arguments"])) == ("lookup", {"charge_id": "c1"})
    assert answer["usage"]["prompt_tokens"] == 3


@pytest.mark.parametrize(
    "raw",
    [
        b"[1, 2]",
        b'{"contents": "abc"}',
        b'{"contents": [1]}',
        b'{"contents": [{"role": "user", "parts": "x"}]}',
        b'{"contents": [{"role": "user", "parts": [{"text": 5}]}]}',
        b'{"systemInstruction": "be brief"}',
        b"[" * 100_000,
    ],
)
def test_a_malformed_gemini_request_is_a_400_in_googles_shape(raw: bytes) -> None:
    """A body that is not a readable generateContent request gets HTTP 400 with a reason;
    no turn is spent and nothing is recorded."""
    with LoopbackGemini([S.text("hi")]) as api:
        url = f"{api.url}/v1beta/models/gemini-2.5-flash:generateContent"
        answer = httpx.post(url, content=raw, headers=KEY)
        assert (api.calls, api.requests) == (0, [])
    assert answer.status_code == 400
    assert answer.json()["error"]["status"] == "INVALID_ARGUMENT"


@pytest.mark.parametrize(
    "raw",
    [
        b"[1, 2]",
        b'{"messages": "abc"}',
        b'{"messages": [1]}',
        b'{"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]}',
        b'{"messages": [{"role": "assistant", "tool_calls": [{"function": "f"}]}]}',
        b'{"messages": [], "stream_options": true}',
        b"[" * 100_000,
    ],
)
def test_a_malformed_chat_request_is_a_400_in_openais_shape(raw: bytes) -> None:
    """A body that is not a readable chat completion request gets HTTP 400 with a reason."""
    with LoopbackOpenAI([S.text("hi")]) as api:
        url = f"{api.url}/v1/chat/completions"
        answer = httpx.post(url, content=raw, headers={"authorization": "Bearer k"})
        assert (api.calls, api.requests) == (0, [])
    assert answer.status_code == 400
    assert answer.json()["error"]["type"] == "invalid_request_error"


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_body_past_the_cap_is_refused_unread(chunked: bool) -> None:
    """A body larger than MAX_BODY_BYTES gets HTTP 413, with or without a Content-Length."""
    raw = b'{"contents": [], "pad": "' + b"x" * MAX_BODY_BYTES + b'"}'
    content = iter([raw[i : i + 2**20] for i in range(0, len(raw), 2**20)]) if chunked else raw
    with LoopbackGemini([S.text("hi")]) as api:
        url = f"{api.url}/v1beta/models/gemini-2.5-flash:generateContent"
        answer = httpx.post(url, content=content, headers=KEY, timeout=60)
        assert api.calls == 0
    assert answer.status_code == 413
