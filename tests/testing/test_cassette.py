"""RecordingModel writes cassettes from a real client; FakeModel.from_cassette replays them."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.genai import errors

from adk_lattice.policy import RedactPII
from adk_lattice.testing import (
    CassetteError,
    FakeModel,
    LatticeRunner,
    LoopbackGemini,
    RecordingModel,
    ScriptedResponse,
)

CASSETTE = Path(__file__).parent / "cassettes" / "charge_lookup.json"
QUESTION = "What is on charge ch_1? Mail me at ann@example.com."


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up one charge by its id."""
    return {"charge_id": charge_id, "amount": 42.0, "currency": "EUR"}


def charge_agent(model: Any) -> LlmAgent:
    return LlmAgent(name="billing", model=model, tools=[lookup_charge])


async def record(api: LoopbackGemini, path: Path) -> list[str]:
    """Record the charge conversation against ``api`` into ``path``; returns the answers."""
    api.script += [
        ScriptedResponse.call("lookup_charge", charge_id="ch_1"),
        ScriptedResponse.text("Charge ch_1 is EUR 42.00."),
    ]
    model = RecordingModel(api.model("gemini-2.5-flash"), path, redact=RedactPII())
    events = await LatticeRunner(charge_agent(model)).run(QUESTION)
    return LatticeRunner.texts(events)


async def test_recording_keeps_each_exchange(loopback_gemini, tmp_path: Path) -> None:
    """Each model call is one exchange: the request as the cache keys it, and the responses."""
    path = tmp_path / "c.json"
    await record(loopback_gemini, path)
    cassette = json.loads(path.read_text())
    first, second = cassette["exchanges"]
    assert cassette["model"] == "gemini-2.5-flash"
    assert [c["role"] for c in second["request"]["contents"]] == ["user", "model", "user"]
    call = first["responses"][-1]["content"]["parts"][0]["function_call"]
    assert call["args"] == {"charge_id": "ch_1"}
    assert "id" not in second["request"]["contents"][1]["parts"][0]["function_call"]


async def test_recording_scrubs_personal_data(loopback_gemini, tmp_path: Path) -> None:
    """With redact=RedactPII(), no email reaches the cassette file."""
    path = tmp_path / "c.json"
    await record(loopback_gemini, path)
    text = path.read_text()
    assert "ann@example.com" not in text
    assert "[REDACTED:EMAIL]" in text


async def test_replay_answers_as_recorded() -> None:
    """The committed cassette replays the conversation without any server."""
    model = FakeModel.from_cassette(CASSETTE)
    events = await LatticeRunner(charge_agent(model)).run(QUESTION)
    assert LatticeRunner.texts(events) == ["Charge ch_1 is EUR 42.00."]
    model.assert_consumed()


async def test_replay_shows_a_diff_when_the_request_changed() -> None:
    """A request that no longer matches fails with a diff naming the changed line."""
    model = FakeModel.from_cassette(CASSETTE)
    with pytest.raises(AssertionError) as caught:
        await LatticeRunner(charge_agent(model)).run("What is on charge ch_2?")
    message = str(caught.value)
    assert "request 0 differs from the cassette" in message
    lines = [line.strip() for line in message.splitlines()]
    assert '-     "text": "What is on charge ch_1? Mail me at [REDACTED:EMAIL]."'.strip() in lines
    assert '+     "text": "What is on charge ch_2?"' in lines


async def test_non_strict_replay_does_not_compare_requests() -> None:
    """from_cassette(strict=False) answers in order whatever the requests say."""
    model = FakeModel.from_cassette(CASSETTE, strict=False)
    events = await LatticeRunner(charge_agent(model)).run("Something else entirely.")
    assert LatticeRunner.texts(events) == ["Charge ch_1 is EUR 42.00."]


async def test_recorded_http_error_replays_as_the_same_error(
    loopback_gemini, tmp_path: Path
) -> None:
    """A 429 recorded from the API is raised again, as google-genai's ClientError, on replay."""
    path = tmp_path / "c.json"
    loopback_gemini.script.append(ScriptedResponse.http_error(429, "quota"))
    model = RecordingModel(loopback_gemini.model(), path)
    with pytest.raises(errors.ClientError):
        await LatticeRunner(charge_agent(model)).run("hi")
    replay = FakeModel.from_cassette(path)
    with pytest.raises(errors.ClientError) as caught:
        await LatticeRunner(charge_agent(replay)).run("hi")
    assert (caught.value.code, caught.value.message) == (429, "quota")


def test_a_file_that_is_not_a_cassette_is_refused(tmp_path: Path) -> None:
    """Loading something else is a CassetteError naming the file."""
    path = tmp_path / "x.json"
    path.write_text('{"version": 99}')
    with pytest.raises(CassetteError, match=r"x\.json is not a version 1 cassette"):
        FakeModel.from_cassette(path)


if (
    __name__ == "__main__"
):  # re-record the committed cassette: python tests/testing/test_cassette.py

    async def _main() -> None:
        with LoopbackGemini() as api:
            print(await record(api, CASSETTE))

    sys.exit(asyncio.run(_main()))
