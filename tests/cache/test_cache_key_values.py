"""Request fields holding bytes, dates, lists or bound functions are keyed, each value apart."""

from __future__ import annotations

import datetime
import functools
from typing import Any

from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_lattice.cache import request_digest, request_material


def _request(**config: Any) -> LlmRequest:
    contents = [types.Content(role="user", parts=[types.Part(text="Read this aloud.")])]
    return LlmRequest(
        model="fake-model", contents=contents, config=types.GenerateContentConfig(**config)
    )


def _voice(sample: bytes) -> types.SpeechConfig:
    cloned = types.ReplicatedVoiceConfig(mime_type="audio/wav", voice_sample_audio=sample)
    return types.SpeechConfig(voice_config=types.VoiceConfig(replicated_voice_config=cloned))


def _search(start: int, end: int) -> types.Tool:
    def day(n: int) -> datetime.datetime:
        return datetime.datetime(2026, 1, n, tzinfo=datetime.UTC)

    window = types.Interval(start_time=day(start), end_time=day(end))
    return types.Tool(google_search=types.GoogleSearch(time_range_filter=window))


def lookup(q: str, lang: str) -> str:
    """Look something up in one language."""
    return q


def test_a_cloned_voice_sample_in_the_settings_is_keyed_per_sample() -> None:
    """Speech settings carrying audio bytes are keyed, and another voice sample is another key."""
    first = request_digest(_request(speech_config=_voice(b"\x00\x01voice-a")))
    assert first == request_digest(_request(speech_config=_voice(b"\x00\x01voice-a")))
    assert first != request_digest(_request(speech_config=_voice(b"\x00\x01voice-b")))


def test_a_search_tool_limited_to_dates_is_keyed_per_date_range() -> None:
    """A search tool with a time range is keyed, and another range is another key."""
    first = request_digest(_request(tools=[_search(1, 2)]))
    assert first == request_digest(_request(tools=[_search(1, 2)]))
    assert first != request_digest(_request(tools=[_search(1, 3)]))


def test_an_instruction_given_as_a_list_is_keyed_by_its_items() -> None:
    """A system instruction given as a list of texts is keyed by what each item says."""
    terse = request_digest(_request(system_instruction=["Be terse.", "Answer in French."]))
    verbose = request_digest(_request(system_instruction=["Be verbose.", "Answer in German."]))
    assert terse != verbose


def test_an_instruction_list_holding_an_image_is_keyed_per_image() -> None:
    """An instruction list with an inline image is keyed, and another image is another key."""

    def with_image(data: bytes) -> LlmRequest:
        image = types.Part(inline_data=types.Blob(mime_type="image/png", data=data))
        return _request(system_instruction=[types.Part(text="Match this style."), image])

    first = request_digest(with_image(b"\x89PNG-a"))
    assert first == request_digest(with_image(b"\x89PNG-a"))
    assert first != request_digest(with_image(b"\x89PNG-b"))


def test_partial_function_tools_binding_other_arguments_get_other_keys() -> None:
    """Two functools.partial tools over one function but other bound arguments never share a
    key (a partial has no qualified name of its own)."""
    french = functools.partial(lookup, lang="fr")
    german = functools.partial(lookup, lang="de")
    assert request_digest(_request(tools=[french])) == request_digest(_request(tools=[french]))
    assert request_digest(_request(tools=[french])) != request_digest(_request(tools=[german]))


def test_bytes_and_dates_outside_the_contents_are_keyed_as_json_text() -> None:
    """Audio bytes in the settings, an image in the instruction and dates in a tool appear in
    the key material as base64 and ISO text, as the contents' own bytes do."""
    image = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x00\x01"))
    request = _request(
        speech_config=_voice(b"\x00\x01"),
        tools=[_search(1, 2)],
        system_instruction=types.Content(parts=[image]),
    )
    material = request_material(request)
    voice = material["settings"]["speech_config"]["voice_config"]["replicated_voice_config"]
    assert voice["voice_sample_audio"] == "AAE="
    assert material["system_instruction"] == {
        "parts": [{"inline_data": {"data": "AAE=", "mime_type": "image/png"}}]
    }
    assert material["tools"][0]["google_search"]["time_range_filter"] == {
        "start_time": "2026-01-01T00:00:00Z",
        "end_time": "2026-01-02T00:00:00Z",
    }


def test_an_instruction_list_is_in_the_key_material_item_by_item() -> None:
    """Each item of a list instruction is in the material: text as text, parts as JSON."""
    image = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x00\x01"))
    material = request_material(_request(system_instruction=["Match this style.", image]))
    assert material["system_instruction"] == [
        "Match this style.",
        {"inline_data": {"data": "AAE=", "mime_type": "image/png"}},
    ]
