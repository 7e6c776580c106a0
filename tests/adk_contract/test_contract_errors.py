"""ADK facts: plugin exceptions, tool errors and model errors."""

from __future__ import annotations

from typing import Any

import pytest
from contract_support import Recorder, event_texts, run
from google.adk.agents.llm_agent import LlmAgent

from adk_lattice.testing import FakeModel, ScriptedResponse, function_tool, llm_response


def explode(amount: float) -> dict[str, Any]:
    """A tool that always fails."""
    raise LookupError(f"no charge for {amount}")


def explode_agent(*texts_after: str) -> LlmAgent:
    script = [ScriptedResponse.call("explode", amount=5)]
    script += [ScriptedResponse.text(t) for t in texts_after]
    return LlmAgent(name="a", model=FakeModel(script), tools=[function_tool(explode)])


async def test_plugin_exception_becomes_runtime_error_aborting_the_run() -> None:
    """Fact: a plugin hook raising aborts the run with RuntimeError naming plugin and callback."""
    rec = Recorder("buggy", raises={"before_model": ValueError("bug")})
    model = FakeModel([ScriptedResponse.text("x")])
    with pytest.raises(
        RuntimeError, match="Error in plugin 'buggy' during 'before_model_callback' callback: bug"
    ):
        await run(LlmAgent(name="a", model=model), rec)
    assert model.calls == 0
    assert rec.of("on_model_error") == []


async def test_plugin_exception_in_after_run_still_aborts() -> None:
    """Fact: even after_run raising, after every event was yielded, fails the run."""
    rec = Recorder("buggy", raises={"after_run": ValueError("late bug")})
    with pytest.raises(RuntimeError, match="during 'after_run_callback'"):
        await run(LlmAgent(name="a", model=FakeModel([ScriptedResponse.text("x")])), rec)


async def test_tool_raising_unhandled_runs_error_hooks_and_no_after_hooks() -> None:
    """Fact: tool raising -> on_tool_error -> on_agent_error -> on_run_error; no after_run."""
    rec = Recorder()
    with pytest.raises(LookupError, match="no charge"):
        await run(explode_agent("unused"), rec)
    hooks = rec.hooks(skip=("on_event",))
    assert hooks[hooks.index("before_tool") :] == [
        "before_tool",
        "on_tool_error",
        "on_agent_error",
        "on_run_error",
    ]
    assert rec.of("after_agent") == []
    assert rec.of("after_run") == []


async def test_on_tool_error_dict_stands_in_and_after_tool_runs_on_it() -> None:
    """Fact: on_tool_error returning a dict recovers; after_tool runs with that dict."""
    rec = Recorder(returns={"on_tool_error": {"error": "lookup failed"}})
    events = await run(explode_agent("sorry"), rec)
    (after,) = rec.of("after_tool")
    assert after.kwargs["result"] == {"error": "lookup failed"}
    assert event_texts(events) == ["sorry"]
    assert rec.hooks()[-1] == "after_run"


async def test_on_model_error_response_stands_in_and_after_model_runs_on_it() -> None:
    """Fact: on_model_error returning an LlmResponse recovers; after_model runs on it."""
    model = FakeModel([ScriptedResponse(error=ConnectionError("provider down"))])
    fallback = llm_response("try later")
    rec = Recorder(returns={"on_model_error": fallback})
    events = await run(LlmAgent(name="a", model=model), rec)
    (after,) = rec.of("after_model")
    assert after.kwargs["llm_response"] is fallback
    assert event_texts(events) == ["try later"]


async def test_errors_raised_in_on_run_error_are_swallowed() -> None:
    """Fact: on_run_error is notification-only; its own exception does not replace the error."""
    rec = Recorder(raises={"on_run_error": ValueError("observer bug")})
    with pytest.raises(LookupError, match="no charge"):
        await run(explode_agent(), rec)


async def test_after_run_raising_is_reported_to_on_run_error() -> None:
    """Fact (not in ADK_FACTS): a failing after_run is reported to on_run_error as well."""
    rec = Recorder("buggy", raises={"after_run": ValueError("late bug")})
    with pytest.raises(RuntimeError):
        await run(LlmAgent(name="a", model=FakeModel([ScriptedResponse.text("x")])), rec)
    (report,) = rec.of("on_run_error")
    assert isinstance(report.kwargs["error"], RuntimeError)
    assert "late bug" in str(report.kwargs["error"])
