"""ADK facts: what ADK skips when a plugin short-circuits a hook."""

from __future__ import annotations

from typing import Any

from contract_support import Recorder, event_texts, run
from google.adk.agents.llm_agent import LlmAgent
from google.genai import types

from adk_lattice.testing import FakeModel, ScriptedResponse, function_tool, llm_response


def refund(amount: float) -> dict[str, Any]:
    """Refund an amount."""
    return {"refunded": amount}


async def test_before_model_short_circuit_skips_the_model_and_after_model() -> None:
    """Fact: before_model returning an LlmResponse skips the model and every after_model."""
    model = FakeModel([ScriptedResponse.text("from model")])
    rec = Recorder(returns={"before_model": llm_response("served")})
    events = await run(LlmAgent(name="a", model=model), rec)
    assert model.calls == 0
    assert rec.of("after_model") == []
    assert event_texts(events) == ["served"]


async def test_after_model_replacement_skips_later_plugins() -> None:
    """Fact: after_model returning a replacement skips later plugins' after_model."""
    first = Recorder("first", returns={"after_model": llm_response("replaced")})
    second = Recorder("second")
    model = FakeModel([ScriptedResponse.text("original")])
    events = await run(LlmAgent(name="a", model=model), first, second)
    assert second.of("after_model") == []
    assert event_texts(events) == ["replaced"]


async def test_before_tool_empty_dict_skips_tool_but_after_tool_runs_with_it() -> None:
    """Fact: before_tool returning a dict (even {}) skips the tool; after_tool gets that dict."""
    ran: list[float] = []

    def tracked_refund(amount: float) -> dict[str, Any]:
        """Refund an amount."""
        ran.append(amount)
        return {"refunded": amount}

    rec = Recorder(returns={"before_tool": {}})
    model = FakeModel(
        [ScriptedResponse.call("tracked_refund", amount=5), ScriptedResponse.text("k")]
    )
    agent = LlmAgent(name="a", model=model, tools=[function_tool(tracked_refund)])
    await run(agent, rec)
    assert ran == []
    (after,) = rec.of("after_tool")
    assert after.kwargs["result"] == {}


async def test_before_agent_content_skips_agent_and_after_agent() -> None:
    """Fact: before_agent returning Content skips the agent and no after_agent runs."""
    blocked = types.Content(role="model", parts=[types.Part(text="blocked")])
    model = FakeModel([ScriptedResponse.text("from model")])
    rec = Recorder(returns={"before_agent": blocked})
    events = await run(LlmAgent(name="a", model=model), rec)
    assert model.calls == 0
    assert rec.of("after_agent") == []
    assert event_texts(events) == ["blocked"]


async def test_before_run_content_ends_the_run_but_after_run_still_runs() -> None:
    """Fact: before_run returning Content ends the run with it; after_run still runs."""
    stop = types.Content(role="model", parts=[types.Part(text="closed today")])
    model = FakeModel([ScriptedResponse.text("from model")])
    rec = Recorder(returns={"before_run": stop})
    events = await run(LlmAgent(name="a", model=model), rec)
    assert model.calls == 0
    assert event_texts(events) == ["closed today"]
    assert rec.hooks()[-1] == "after_run"


async def test_on_user_message_content_replaces_what_the_model_sees() -> None:
    """Fact: on_user_message returning Content replaces the user message the model sees."""
    swapped = types.Content(role="user", parts=[types.Part(text="[redacted]")])
    model = FakeModel([ScriptedResponse.text("ok")])
    rec = Recorder(returns={"on_user_message": swapped})
    await run(LlmAgent(name="a", model=model), rec, text="my card is 4111")
    seen = [p.text for c in model.requests[0].contents for p in c.parts or () if p.text]
    assert seen == ["[redacted]"]
