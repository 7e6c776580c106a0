"""ADK facts: several function calls in one model response."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from contract_support import ADK_VERSION, Recorder, run
from google.adk.agents.llm_agent import LlmAgent

from adk_lattice.testing import FakeModel, FunctionCall, ScriptedResponse, function_tool


async def test_parallel_tool_calls_run_concurrently() -> None:
    """Fact: two function calls in one response run as concurrent asyncio tasks."""
    started: dict[str, asyncio.Event] = {"a": asyncio.Event(), "b": asyncio.Event()}

    async def meet(who: str) -> dict[str, Any]:
        """Wait until the other call has started too."""
        started[who].set()
        other = started["b" if who == "a" else "a"]
        try:
            # If ADK ran the calls one after another, the other would never start.
            await asyncio.wait_for(other.wait(), timeout=5)
        except TimeoutError:
            return {"met": False}
        return {"met": True}

    turn = ScriptedResponse(
        function_calls=[FunctionCall("meet", {"who": "a"}), FunctionCall("meet", {"who": "b"})]
    )
    model = FakeModel([turn, ScriptedResponse.text("ok")])
    rec = Recorder()
    await run(LlmAgent(name="p", model=model, tools=[function_tool(meet)]), rec)
    assert [r.kwargs["result"] for r in rec.of("after_tool")] == [{"met": True}, {"met": True}]


async def test_a_raising_call_cancels_its_siblings_with_on_tool_error() -> None:
    """Fact: one call raising cancels siblings; each gets on_tool_error(CancelledError).

    Before 2.13 the cancelled siblings get no hook at all (the lattice closes them as
    cancelled when the run fails).
    """
    slow_started = asyncio.Event()

    async def slow() -> dict[str, Any]:
        """Take a long time."""
        slow_started.set()
        await asyncio.sleep(30)
        return {"done": True}

    async def fail() -> dict[str, Any]:
        """Fail once the slow call is under way."""
        await slow_started.wait()
        raise LookupError("fail")

    turn = ScriptedResponse(function_calls=[FunctionCall("slow", {}), FunctionCall("fail", {})])
    model = FakeModel([turn, ScriptedResponse.text("unused")])
    agent = LlmAgent(name="p", model=model, tools=[function_tool(slow), function_tool(fail)])
    rec = Recorder()
    with pytest.raises(LookupError, match="fail"):
        await run(agent, rec)
    errors = {r.kwargs["tool"].name: r.kwargs["error"] for r in rec.of("on_tool_error")}
    assert isinstance(errors["fail"], LookupError)
    if ADK_VERSION >= (2, 13):
        assert isinstance(errors["slow"], asyncio.CancelledError)
    else:
        assert "slow" not in errors
    assert rec.of("after_run") == []
