"""CallLimits: per-invocation caps on model calls, tool calls and calls per tool."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.function_tool import FunctionTool

from adk_lattice import Lattice, Outcome
from adk_lattice.policy import CallLimits
from adk_lattice.policy._common import DENIAL_STATE_KEY
from adk_lattice.policy.limits.calls import Roots
from adk_lattice.telemetry import notes_of
from adk_lattice.testing import FakeModel, ScriptedResponse

from .conftest import noted, run_app, user


def ping() -> dict[str, Any]:
    """Ping."""
    return {"pong": True}


PING = FunctionTool(ping)


async def test_model_calls_under_the_cap_pass(ctx: Any) -> None:
    """Model calls up to the cap pass."""
    limits = CallLimits(max_model_calls=2)
    c = await ctx()
    assert limits.before_model(callback_context=c, llm_request=None) is None
    assert limits.before_model(callback_context=c, llm_request=None) is None


async def test_model_call_over_the_cap_is_refused(ctx: Any) -> None:
    """The call past the cap gets a model-role refusal, counted."""
    limits = CallLimits(max_model_calls=1)
    c = await ctx()
    limits.before_model(callback_context=c, llm_request=None)
    out = limits.before_model(callback_context=c, llm_request=None)
    assert out is not None
    assert out.custom_metadata["adk_lattice"]["reason"] == "model_call_limit"
    assert limits.counts == {"denied:model": 1}


async def test_caps_are_per_invocation(ctx: Any) -> None:
    """Another invocation starts with fresh counts."""
    limits = CallLimits(max_model_calls=1)
    limits.before_model(callback_context=await ctx(invocation_id="a"), llm_request=None)
    assert (
        limits.before_model(callback_context=await ctx(invocation_id="b"), llm_request=None) is None
    )


async def test_per_tool_cap_denies_legibly(ctx: Any) -> None:
    """The second call of a tool capped at one is denied with a reason."""
    limits = CallLimits(per_tool={"ping": 1})
    c = await ctx(function_call_id="f")
    assert limits.before_tool(tool=PING, tool_args={}, tool_context=c) is None
    out = limits.before_tool(tool=PING, tool_args={}, tool_context=c)
    assert out == {
        "status": "denied",
        "reason": "ping may be called at most 1 time(s) per request",
        "code": "tool_call_limit",
        "policy": "CallLimits",
        "tool": "ping",
    }


async def test_total_tool_cap_denies(ctx: Any) -> None:
    """Past max_tool_calls, any tool is denied."""
    limits = CallLimits(max_tool_calls=1)
    c = await ctx(function_call_id="f")
    limits.before_tool(tool=PING, tool_args={}, tool_context=c)
    assert limits.before_tool(tool=PING, tool_args={}, tool_context=c)["status"] == "denied"


def test_negative_caps_are_refused() -> None:
    """A negative or non-integer cap raises ValueError."""
    with pytest.raises(ValueError, match="non-negative"):
        CallLimits(max_model_calls=-1)
    with pytest.raises(ValueError, match="non-negative"):
        CallLimits(per_tool={"x": 1.5})  # type: ignore[dict-item]


async def test_runner_stops_a_tool_loop_and_frees_its_counters() -> None:
    """Through a Runner, a model looping on a tool is cut off and the counters are freed."""
    model = FakeModel([ScriptedResponse.call("ping") for _ in range(10)])
    agent = LlmAgent(name="assistant", model=model, tools=[ping])
    limits = CallLimits(max_model_calls=3, per_tool={"ping": 2})
    run = await run_app(agent, [Lattice(policy=[limits])], "go")
    assert model.calls == 3
    assert [r.get("status") for r in run.responses("ping")] == [None, None, "denied"]
    assert run.texts[-1] == limits.message
    assert limits.open_invocations == 0


async def test_a_refused_model_call_is_noted_model_call_limit(ctx: Any) -> None:
    """The model call past the cap is noted as deny with the code model_call_limit."""
    limits = CallLimits(max_model_calls=0)
    c = await ctx()
    limits.before_model(callback_context=c, llm_request=None)
    assert noted(c, "before_model") == [("deny", "model_call_limit")]


async def test_a_denied_tool_call_is_noted_tool_call_limit(ctx: Any) -> None:
    """A tool call past the total cap carries and notes the code tool_call_limit."""
    limits = CallLimits(max_tool_calls=0)
    c = await ctx(function_call_id="f")
    out = limits.before_tool(tool=PING, tool_args={}, tool_context=c)
    assert out["code"] == "tool_call_limit"
    assert noted(c, "before_tool") == [("deny", "tool_call_limit")]


async def test_calls_under_the_caps_are_not_noted(ctx: Any) -> None:
    """Model and tool calls under their caps leave no note."""
    limits = CallLimits(max_model_calls=1, max_tool_calls=1)
    c = await ctx(function_call_id="f")
    limits.before_model(callback_context=c, llm_request=None)
    limits.before_tool(tool=PING, tool_args={}, tool_context=c)
    assert noted(c, "before_tool") == []


def _nested_refunds(done: list[str]) -> LlmAgent:
    """A coordinator that asks a refunds helper (an AgentTool) twice, in two turns."""

    def issue_refund(charge_id: str) -> dict[str, Any]:
        """Refund a charge."""
        done.append(charge_id)
        return {"status": "refunded"}

    helper_model = FakeModel(
        [
            ScriptedResponse.call("issue_refund", charge_id="c1"),
            ScriptedResponse.text("first done"),
            ScriptedResponse.call("issue_refund", charge_id="c2"),
            ScriptedResponse.text("second done"),
        ]
    )
    helper = LlmAgent(name="refunds", model=helper_model, tools=[issue_refund])
    root_model = FakeModel(
        [
            ScriptedResponse.call("refunds", request="refund c1"),
            ScriptedResponse.call("refunds", request="refund c2"),
            ScriptedResponse.text("all done"),
        ]
    )
    return LlmAgent(name="coordinator", model=root_model, tools=[AgentTool(helper)])


async def test_a_per_request_cap_holds_across_agent_tool_runs() -> None:
    """per_tool={"issue_refund": 1} allows one refund per user request, nested runs included."""
    done: list[str] = []
    limits = CallLimits(per_tool={"issue_refund": 1})
    run = await run_app(_nested_refunds(done), [Lattice(policy=[limits])], "refund both")
    assert done == ["c1"]
    assert limits.counts == {"denied:issue_refund": 1}
    assert limits.open_invocations == 0
    assert run.texts[-1] == "all done"


async def test_the_next_request_gets_a_fresh_budget() -> None:
    """After a request with a nested run ends, the next request in the session counts anew."""
    done: list[str] = []

    def issue_refund(charge_id: str) -> dict[str, Any]:
        """Refund a charge."""
        done.append(charge_id)
        return {"status": "refunded"}

    model = FakeModel(
        [
            ScriptedResponse.call("issue_refund", charge_id="c1"),
            ScriptedResponse.text("one"),
            ScriptedResponse.call("issue_refund", charge_id="c2"),
            ScriptedResponse.text("two"),
        ]
    )
    agent = LlmAgent(name="billing", model=model, tools=[issue_refund])
    limits = CallLimits(per_tool={"issue_refund": 1})
    run = await run_app(agent, [Lattice(policy=[limits])], "refund c1")
    await run.send(user("refund c2"))
    assert done == ["c1", "c2"]
    assert limits.open_invocations == 0  # the second request was not taken for a nested run


async def test_the_default_refusal_asks_for_a_more_specific_request(ctx: Any) -> None:
    """Past the model-call cap, the user reads the default message as written."""
    limits = CallLimits(max_model_calls=0)
    out = limits.before_model(callback_context=await ctx(), llm_request=None)
    assert out is not None
    assert out.content.parts[0].text == (
        "I've reached the limit of steps I can take for one request. "
        "Please ask again, more specifically."
    )


async def test_a_per_tool_denial_is_noted(ctx: Any) -> None:
    """A call past its tool's own cap is noted as deny/tool_call_limit."""
    limits = CallLimits(per_tool={"ping": 0})
    c = await ctx(function_call_id="f")
    limits.before_tool(tool=PING, tool_args={}, tool_context=c)
    assert noted(c, "before_tool") == [("deny", "tool_call_limit")]


async def test_the_total_cap_allows_exactly_its_number_of_calls(ctx: Any) -> None:
    """max_tool_calls=3 lets three calls through and denies the fourth, saying why."""
    limits = CallLimits(max_tool_calls=3)
    c = await ctx(function_call_id="f")
    outs = [limits.before_tool(tool=PING, tool_args={}, tool_context=c) for _ in range(4)]
    assert outs[:3] == [None, None, None]
    assert outs[3]["reason"] == "at most 3 tool calls are allowed per request"
    assert limits.counts == {"denied:tools": 1}


async def test_a_failed_run_frees_its_counters() -> None:
    """A run that ends in an error leaves no counters, nor its request's link, behind."""

    def broken() -> dict[str, Any]:
        """Always fails."""
        raise RuntimeError("backend down")

    model = FakeModel([ScriptedResponse.call("broken"), ScriptedResponse.text("x")])
    agent = LlmAgent(name="assistant", model=model, tools=[broken])
    limits = CallLimits(max_model_calls=5)
    with pytest.raises(RuntimeError, match="backend down"):
        await run_app(agent, [Lattice(policy=[limits])], "go")
    assert limits.open_invocations == 0
    assert len(limits._roots._roots) == 0


async def test_a_nested_runs_calls_after_its_own_tool_count_against_the_request() -> None:
    """Model calls a helper makes after using a tool still count against the user request."""
    helper_model = FakeModel(
        [ScriptedResponse.call("ping"), ScriptedResponse.text("pinged"), ScriptedResponse.text("x")]
    )
    helper = LlmAgent(name="helper", model=helper_model, tools=[ping])
    root_model = FakeModel(
        [ScriptedResponse.call("helper", request="ping it"), ScriptedResponse.text("done")]
    )
    root = LlmAgent(name="assistant", model=root_model, tools=[AgentTool(helper)])
    limits = CallLimits(max_model_calls=3)
    await run_app(root, [Lattice(policy=[limits])], "go")
    assert (root_model.calls, helper_model.calls) == (1, 2)  # the root's answer is refused


def test_a_bad_cap_names_the_rule() -> None:
    """A negative cap fails with the rule it breaks, as written."""
    with pytest.raises(ValueError, match=r"^call limits must be non-negative integers$"):
        CallLimits(max_tool_calls=-1)


async def test_a_refused_model_call_says_who_refused_and_the_cap(ctx: Any) -> None:
    """The refusal's metadata names the handler, the code and the cap it hit."""
    limits = CallLimits(max_model_calls=0, name="limits")
    out = limits.before_model(callback_context=await ctx(), llm_request=None)
    assert out is not None
    assert out.custom_metadata["adk_lattice"] == {
        "denied_by": "limits",
        "reason": "model_call_limit",
        "limit": 0,
    }


async def test_a_refused_model_call_is_recorded_for_later_callbacks(ctx: Any) -> None:
    """The refusal is left in temp state, naming the handler and the code."""
    limits = CallLimits(max_model_calls=0, name="limits")
    c = await ctx()
    limits.before_model(callback_context=c, llm_request=None)
    assert c.state[DENIAL_STATE_KEY] == {"policy": "limits", "reason": "model_call_limit"}


async def test_denials_are_noted_under_the_handler_name(ctx: Any) -> None:
    """Model and tool denials are noted by the handler's name."""
    limits = CallLimits(max_model_calls=0, max_tool_calls=0, name="limits")
    model_ctx, tool_ctx = await ctx(), await ctx(function_call_id="f")
    limits.before_model(callback_context=model_ctx, llm_request=None)
    limits.before_tool(tool=PING, tool_args={}, tool_context=tool_ctx)
    model_notes = notes_of(Outcome(hook="before_model", args={"callback_context": model_ctx}))
    tool_notes = notes_of(Outcome(hook="before_tool", args={"tool_context": tool_ctx}))
    assert [n.handler for n in (*model_notes, *tool_notes)] == ["limits", "limits"]


async def test_a_call_past_the_total_cap_is_denied_naming_the_tool(ctx: Any) -> None:
    """Past max_tool_calls, the denial names the tool, the policy and the cap."""
    limits = CallLimits(max_tool_calls=0)
    out = limits.before_tool(tool=PING, tool_args={}, tool_context=await ctx(function_call_id="f"))
    assert out == {
        "status": "denied",
        "reason": "at most 0 tool calls are allowed per request",
        "code": "tool_call_limit",
        "policy": "CallLimits",
        "tool": "ping",
    }


async def test_a_finished_run_leaves_no_link_behind() -> None:
    """A run that ends normally frees its counters and its request's link."""
    model = FakeModel([ScriptedResponse.call("ping"), ScriptedResponse.text("done")])
    agent = LlmAgent(name="assistant", model=model, tools=[ping])
    limits = CallLimits(max_model_calls=5)
    await run_app(agent, [Lattice(policy=[limits])], "go")
    assert (limits.open_invocations, len(limits._roots._roots)) == (0, 0)


def test_the_request_links_are_bounded_at_4096() -> None:
    """At most 4,096 invocations are linked to their request at once; the oldest go first."""
    roots = Roots()
    for i in range(4_097):
        roots.of(f"inv-{i}")
    assert len(roots._roots) == 4_096


def test_an_invocation_no_longer_linked_ends_as_a_request() -> None:
    """An ending invocation whose link was evicted is treated as a request: its counters go."""
    roots = Roots(max_entries=1)
    roots.of("a")
    roots.of("b")
    assert roots.forget("a") is True
