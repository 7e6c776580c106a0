"""TrimContext: budgets by turns and size, whole turns, calls kept with responses, pins."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_lattice import Lattice, Outcome
from adk_lattice.policy import TrimContext
from adk_lattice.policy.tools.trim import size
from adk_lattice.telemetry import notes_of
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


def test_a_call_in_a_later_turn_stays_with_its_response() -> None:
    """Dropping an older turn keeps a later turn's call and response together."""
    contents = [
        text("user", "turn one"),
        text("model", "answer one"),
        text("user", "turn two"),
        call("lookup", "c1"),
        response("lookup", "c1"),
        text("model", "answer two"),
        text("user", "turn three"),
    ]
    req = trim(TrimContext(max_turns=2), contents)
    assert texts(req) == ["turn two", "call", "response", "answer two", "turn three"]


def test_a_pinned_call_without_ids_keeps_only_its_own_response() -> None:
    """A pinned call (no call ids) keeps its response, not a later response after it."""
    bare_call = types.Content(
        role="model", parts=[types.Part(function_call=types.FunctionCall(name="lookup"))]
    )

    def bare_response(name: str) -> types.Content:
        fr = types.FunctionResponse(name=name, response={"r": "y"})
        return types.Content(role="user", parts=[types.Part(function_response=fr)])

    contents = [
        text("user", "turn one"),
        bare_call,
        bare_response("lookup"),
        bare_response("poll"),
        text("model", "answer one"),
        text("user", "turn two"),
    ]
    policy = TrimContext(max_turns=1, pin=lambda c: bool(c.parts[0].function_call))
    req = trim(policy, contents)
    assert texts(req) == ["call", "response", "turn two"]


def test_size_counts_text_call_name_and_arguments_and_response() -> None:
    """size() is the text plus each call's name and JSON arguments plus each response's JSON."""
    content = types.Content(
        role="model",
        parts=[
            types.Part(text="hello"),
            types.Part(function_call=types.FunctionCall(name="lookup", args={"q": "x"})),
            types.Part(function_response=types.FunctionResponse(name="f", response={"r": 1})),
        ],
    )
    assert size(content) == len("hello") + len("lookup") + len('{"q": "x"}') + len('{"r": 1}')


def test_max_tokens_is_a_character_budget_by_the_ratio() -> None:
    """max_tokens=10 at 4 characters a token trims like max_chars=40."""
    req = trim(TrimContext(max_tokens=10, chars_per_token=4.0), history())
    assert texts(req) == ["turn two", "answer two", "turn three"]


def test_a_request_of_exactly_max_chars_is_within_budget() -> None:
    """max_chars is inclusive: a request of exactly that size is left whole."""
    contents = history()
    req = trim(TrimContext(max_chars=sum(size(c) for c in contents)), contents)
    assert len(req.contents) == 7


def test_several_old_turns_are_dropped_until_the_rest_fits() -> None:
    """The size budget counts what is left after each dropped turn, dropping as many as needed."""
    contents = [
        text(role, s)
        for role, s in [
            ("user", "one 1"),
            ("model", "ans 1"),
            ("user", "two 2"),
            ("model", "ans 2"),
            ("user", "three"),
            ("model", "ans 3"),
            ("user", "four!"),
        ]
    ]
    assert texts(trim(TrimContext(max_chars=12), contents)) == ["four!"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_turns": 0}, "^max_turns must be a positive integer$"),
        ({"max_chars": -1}, "^max_chars must be a positive integer$"),
        ({"max_tokens": 0}, "^max_tokens must be a positive integer$"),
        ({"max_turns": 1, "chars_per_token": 0}, "^chars_per_token must be positive$"),
    ],
)
def test_a_bad_budget_is_refused_naming_the_setting(kwargs: dict[str, Any], message: str) -> None:
    """A non-positive budget or ratio fails at construction naming the setting to fix."""
    with pytest.raises(ValueError, match=message):
        TrimContext(**kwargs)


def test_a_pinned_call_without_name_or_id_keeps_only_its_own_response() -> None:
    """A pinned call with neither name nor id keeps one response, not a later one after it."""
    nameless = types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall())])
    answer = types.Content(
        role="user",
        parts=[types.Part(function_response=types.FunctionResponse(response={"r": "y"}))],
    )
    contents = [text("user", "turn one"), nameless, answer, answer, text("user", "turn two")]
    policy = TrimContext(max_turns=1, pin=lambda c: bool(c.parts[0].function_call))
    assert texts(trim(policy, contents)) == ["call", "response", "turn two"]


def test_size_counts_text_after_a_call_in_one_content() -> None:
    """size() adds a text part that follows a call in the same content."""
    content = types.Content(
        role="model",
        parts=[
            types.Part(function_call=types.FunctionCall(name="lookup", args={})),
            types.Part(text="hello"),
        ],
    )
    assert size(content) == len("lookup") + len("{}") + len("hello")


def test_max_tokens_counts_four_characters_a_token_by_default() -> None:
    """Without chars_per_token, max_tokens=25 trims like max_chars=100 (the request is 121)."""
    req = trim(TrimContext(max_tokens=25), history())
    assert texts(req) == ["turn two", "answer two", "turn three"]


def test_a_ratio_below_one_character_a_token_is_accepted() -> None:
    """chars_per_token may be any positive ratio, under one too."""
    req = trim(TrimContext(max_tokens=80, chars_per_token=0.5), history())
    assert texts(req) == ["turn two", "answer two", "turn three"]


def test_without_a_budget_the_error_names_the_three_settings() -> None:
    """TrimContext() with no budget fails naming max_turns, max_chars and max_tokens."""
    with pytest.raises(ValueError, match=r"^TrimContext needs max_turns, max_chars or max_tokens$"):
        TrimContext()


async def test_a_trim_is_noted_under_the_handler_name(ctx: Any) -> None:
    """The rewrite note names the handler: TrimContext by default, or the name given."""
    handlers = []
    for policy in (TrimContext(max_turns=1), TrimContext(max_turns=1, name="trim")):
        c = await ctx()
        policy.before_model(callback_context=c, llm_request=LlmRequest(contents=history()))
        [note] = notes_of(Outcome(hook="before_model", args={"callback_context": c}))
        handlers.append(note.handler)
    assert handlers == ["TrimContext", "trim"]
