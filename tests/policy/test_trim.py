"""TrimContext: budgets by turns and size, whole turns, calls kept with responses, pins."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_lattice import Lattice
from adk_lattice.policy import TrimContext
from adk_lattice.testing import FakeModel, ScriptedResponse

from .conftest import noted, run_app, user


def text(role: str, s: str) -> types.Content:
    return types.Content(role=role, parts=[types.Part(text=s)])


def call(name: str, cid: str) -> types.Content:
    fc = types.FunctionCall(name=name, args={"q": "x"}, id=cid)
    return types.Content(role="model", parts=[types.Part(function_call=fc)])


def response(name: str, cid: str) -> types.Content:
    fr = types.FunctionResponse(name=name, response={"r": "y" * 50}, id=cid)
    return types.Content(role="user", parts=[types.Part(function_response=fr)])


def history() -> list[types.Content]:
    return [
        text("user", "turn one"),
        call("lookup", "c1"),
        response("lookup", "c1"),
        text("model", "answer one"),
        text("user", "turn two"),
        text("model", "answer two"),
        text("user", "turn three"),
    ]


def texts(req: LlmRequest) -> list[str]:
    out = []
    for c in req.contents:
        p = c.parts[0]
        out.append(p.text or (p.function_call and "call") or (p.function_response and "response"))
    return out


def trim(policy: TrimContext, contents: list[types.Content]) -> LlmRequest:
    req = LlmRequest(contents=contents)
    policy.before_model(callback_context=None, llm_request=req)
    return req


def test_within_budget_nothing_changes() -> None:
    """A request within every budget is left as it is."""
    req = trim(TrimContext(max_turns=5), history())
    assert len(req.contents) == 7


def test_max_turns_drops_the_oldest_whole_turns() -> None:
    """max_turns=2 drops the first turn, its tool call and its response together."""
    req = trim(TrimContext(max_turns=2), history())
    assert texts(req) == ["turn two", "answer two", "turn three"]


def test_max_chars_drops_until_within_budget() -> None:
    """A character budget drops oldest turns until the rest fits."""
    req = trim(TrimContext(max_chars=40), history())
    assert texts(req) == ["turn two", "answer two", "turn three"]


def test_newest_turn_is_always_kept() -> None:
    """Even a tiny budget keeps the current request."""
    req = trim(TrimContext(max_chars=1), history())
    assert texts(req) == ["turn three"]


def test_a_call_is_never_orphaned_from_its_response() -> None:
    """Whatever the budget, no function call survives without its response or vice versa."""
    for budget in range(1, 200, 7):
        req = trim(TrimContext(max_chars=budget), history())
        kinds = texts(req)
        assert kinds.count("call") == kinds.count("response")


def test_pinned_content_survives() -> None:
    """A pinned content is kept even when its turn is dropped."""
    contents = [text("user", "[pin] my account is ACME-1"), *history()[1:]]
    policy = TrimContext(max_turns=1, pin=lambda c: "[pin]" in (c.parts[0].text or ""))
    req = trim(policy, contents)
    assert texts(req) == ["[pin] my account is ACME-1", "turn three"]


def test_pinned_call_keeps_its_response() -> None:
    """Pinning a function response keeps its call with it."""
    policy = TrimContext(max_turns=1, pin=lambda c: bool(c.parts[0].function_response))
    req = trim(policy, history())
    assert texts(req) == ["call", "response", "turn three"]


def test_a_failing_pin_keeps_the_content() -> None:
    """A pin callable that raises keeps the content rather than losing it."""
    policy = TrimContext(max_turns=1, pin=lambda c: 1 / 0)  # type: ignore[arg-type,return-value]
    req = trim(policy, history())
    assert len(req.contents) == 7


def test_empty_request_passes() -> None:
    """A request with no contents is left alone."""
    assert trim(TrimContext(max_turns=1), []).contents == []


def test_needs_a_budget() -> None:
    """Without any budget, or with a bad one, construction raises ValueError."""
    with pytest.raises(ValueError, match="needs"):
        TrimContext()
    with pytest.raises(ValueError, match="positive"):
        TrimContext(max_tokens=0)


def test_counts_trimmed_requests_and_dropped_contents() -> None:
    """Counters record trimmed requests and how many contents were dropped."""
    policy = TrimContext(max_turns=1)
    trim(policy, history())
    assert policy.counts == {"trimmed": 1, "dropped": 6}


async def test_runner_model_sees_only_the_budgeted_turns() -> None:
    """Through a Runner over three turns, the model sees only the last two turns."""
    model = FakeModel([ScriptedResponse.text(f"answer {i}") for i in range(3)])
    agent = LlmAgent(name="assistant", model=model)
    run = await run_app(agent, [Lattice(policy=[TrimContext(max_turns=2)])], "first")
    run = await run.send(user("second"))
    await run.send(user("third"))
    seen = [c.parts[0].text for c in model.requests[2].contents]
    assert seen == ["second", "answer 1", "third"]


async def test_a_trimmed_request_is_noted(ctx: Any) -> None:
    """Dropping turns is noted as rewrite trimmed."""
    c = await ctx()
    TrimContext(max_turns=1).before_model(
        callback_context=c, llm_request=LlmRequest(contents=history())
    )
    assert noted(c, "before_model") == [("rewrite", "trimmed")]


async def test_a_request_within_budget_is_not_noted(ctx: Any) -> None:
    """A request left as it is leaves no note."""
    c = await ctx()
    TrimContext(max_turns=5).before_model(
        callback_context=c, llm_request=LlmRequest(contents=history())
    )
    assert noted(c, "before_model") == []
