"""RecordingHandler: records each hook call, answers on cue, raises on demand."""

from __future__ import annotations

import copy

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions.in_memory_session_service import InMemorySessionService
from google.genai import types

from adk_lattice import Lattice
from adk_lattice.testing import (
    FakeModel,
    RecordingHandler,
    ScriptedResponse,
    callback_context,
    function_tool,
    llm_request,
    llm_response,
    returns_in_turn,
    tool_context,
)


def refund(amount: float) -> dict[str, float]:
    """Refund an amount."""
    return {"refunded": amount}


def test_records_each_call_with_its_kwargs() -> None:
    """Every call is recorded with its hook name and keyword arguments."""
    rec = RecordingHandler()
    ctx, request = callback_context(), llm_request("hi")
    rec.before_model(callback_context=ctx, llm_request=request)
    assert rec.hooks_called() == ["before_model"]
    assert rec.calls_to("before_model") == [{"callback_context": ctx, "llm_request": request}]


def test_returns_none_by_default() -> None:
    """Without a scripted value, a hook returns None (passes)."""
    rec = RecordingHandler(["before_tool"])
    assert rec.before_tool(tool=None, tool_args={}, tool_context=None) is None


def test_returns_the_scripted_value() -> None:
    """A scripted value is returned on every call to that hook."""
    answer = llm_response("cached")
    rec = RecordingHandler(returns={"before_model": answer})
    got = rec.before_model(callback_context=callback_context(), llm_request=llm_request())
    assert got is answer


def test_returns_in_turn_gives_values_then_none() -> None:
    """returns_in_turn answers its values one per call, then None."""
    rec = RecordingHandler(["before_tool"], returns={"before_tool": returns_in_turn({"a": 1})})
    kwargs = {"tool": None, "tool_args": {}, "tool_context": None}
    assert [rec.before_tool(**kwargs), rec.before_tool(**kwargs)] == [{"a": 1}, None]


def test_callable_answer_sees_the_kwargs() -> None:
    """A callable answer is called with the hook's keyword arguments."""
    rec = RecordingHandler(
        ["before_tool"], returns={"before_tool": lambda **kw: {"echo": kw["tool_args"]["x"]}}
    )
    got = rec.before_tool(tool=None, tool_args={"x": 3}, tool_context=None)
    assert got == {"echo": 3}


def test_raises_on_demand_after_recording() -> None:
    """A scripted exception is raised, and the call is still recorded."""
    rec = RecordingHandler(["after_tool"], raises={"after_tool": ValueError("boom")})
    with pytest.raises(ValueError, match="boom"):
        rec.after_tool(tool=None, tool_args={}, tool_context=None, result={})
    assert rec.hooks_called() == ["after_tool"]


async def test_async_hooks_are_coroutines() -> None:
    """is_async=True makes each hook a coroutine function returning the scripted value."""
    rec = RecordingHandler(["before_tool"], returns={"before_tool": {"x": 1}}, is_async=True)
    got = await rec.before_tool(tool=None, tool_args={}, tool_context=None)
    assert got == {"x": 1}


def test_only_chosen_hooks_exist() -> None:
    """A hook not chosen is absent, so a lattice never binds it."""
    rec = RecordingHandler(["before_tool"])
    assert not hasattr(rec, "after_tool")


def test_unknown_hook_is_refused() -> None:
    """An unknown hook name is a ValueError naming it."""
    with pytest.raises(ValueError, match="before_tools"):
        RecordingHandler(["before_tools"])


def test_answer_for_a_missing_hook_is_refused() -> None:
    """Scripting a return for a hook not implemented is a ValueError."""
    with pytest.raises(ValueError, match="after_tool"):
        RecordingHandler(["before_tool"], returns={"after_tool": {}})


def test_options_become_attributes() -> None:
    """Handler options (tools, on_error) are set as attributes the lattice reads."""
    rec = RecordingHandler(["before_tool"], name="rec", tools={"refund"}, on_error="raise")
    assert (rec.name, rec.tools, rec.on_error) == ("rec", {"refund"}, "raise")


@pytest.mark.parametrize("is_async", [False, True])
async def test_recording_handler_in_a_lattice_short_circuits_a_tool(is_async: bool) -> None:
    """Registered on a Lattice, its before_tool answer (sync or async) replaces the tool."""
    rec = RecordingHandler(
        ["before_tool", "after_tool"],
        returns={"before_tool": {"refunded": 0, "denied": True}},
        is_async=is_async,
    )
    model = FakeModel([ScriptedResponse.call("refund", amount=5), ScriptedResponse.text("ok")])
    agent = LlmAgent(name="billing", model=model, tools=[function_tool(refund)])
    app = App(name="app", root_agent=agent, plugins=[Lattice(handlers=[rec])])
    service = InMemorySessionService()
    runner = Runner(app=app, session_service=service)
    session = await service.create_session(app_name="app", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="refund")])
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass
    assert rec.hooks_called() == ["before_tool", "after_tool"]
    assert rec.calls_to("after_tool")[0]["result"] == {"refunded": 0, "denied": True}


def test_direct_call_with_fake_tool_context() -> None:
    """Called directly with a fake tool context, the recorded context is that context."""
    rec = RecordingHandler(["before_tool"])
    ctx = tool_context(function_call_id="fc-1")
    rec.before_tool(tool=function_tool(refund), tool_args={"amount": 1}, tool_context=ctx)
    assert rec.calls_to("before_tool")[0]["tool_context"].function_call_id == "fc-1"


def test_copies_keep_recording_separately() -> None:
    """A deep copy is a working handler (fakes get copied by fixtures and frameworks)."""
    rec = RecordingHandler(["before_tool"], name="orig")
    clone = copy.deepcopy(rec)
    clone.before_tool(tool=None, tool_args={}, tool_context=None)
    assert (len(rec.calls), len(clone.calls)) == (0, 1)
