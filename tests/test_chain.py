"""The chain loop, tested without a Runner: first non-None, error modes, the return guard."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_lattice import ReturnGuardError, configure, on
from adk_lattice._chain import denial, guard, run_chain
from adk_lattice._handlers import Bound, bind
from adk_lattice._outcome import Step


def _chain(*entries: tuple[Any, str]) -> tuple[Bound, ...]:
    bound: list[Bound] = []
    for obj, tier in entries:
        hooks, _ = bind(obj, tier)  # type: ignore[arg-type]
        bound.extend(hooks.values())
    return tuple(bound)


async def _run(chain: tuple[Bound, ...], hook: str = "before_tool", **kw: Any) -> Any:
    stats: Counter[tuple[str, str, str]] = Counter()
    steps: list[Step] = []
    kwargs = kw.pop("kwargs", {"tool": None, "tool_args": {}, "tool_context": None})
    value, winner, failed = await run_chain(
        chain,
        hook,  # type: ignore[arg-type]
        kwargs,
        agent=kw.pop("agent", "a"),
        tool=kw.pop("tool", "t"),
        partial=kw.pop("partial", False),
        strict=kw.pop("strict", False),
        stats=stats,
        steps=steps,
    )
    return value, winner, failed, steps, stats


def _returns(value: Any, name: str) -> Any:
    return on("before_tool", name=name)(lambda **_: value)


async def test_first_non_none_wins() -> None:
    """The first handler to return a value wins and later handlers do not run."""
    calls: list[str] = []

    @on("before_tool")
    def first(**_: Any) -> None:
        calls.append("first")

    @on("before_tool")
    def second(**_: Any) -> dict[str, str]:
        calls.append("second")
        return {"status": "second"}

    @on("before_tool")
    def third(**_: Any) -> dict[str, str]:
        calls.append("third")
        return {"status": "third"}

    value, winner, *_ = await _run(
        _chain((first, "handlers"), (second, "handlers"), (third, "handlers"))
    )
    assert value == {"status": "second"}
    assert winner.name == "second"
    assert calls == ["first", "second"]


async def test_async_handlers_are_awaited() -> None:
    """An async handler's awaited value is what wins."""

    @on("before_tool")
    async def later(**_: Any) -> dict[str, str]:
        await asyncio.sleep(0)
        return {"status": "async"}

    value, *_ = await _run(_chain((later, "handlers")))
    assert value == {"status": "async"}


async def test_policy_error_fails_closed_with_a_legible_denial() -> None:
    """A policy handler that raises yields a denial dict naming it, and stops the chain."""

    @on("before_tool")
    def broken(**_: Any) -> None:
        raise RuntimeError("policy service down")

    value, winner, failed, steps, stats = await _run(
        _chain((broken, "policy"), (_returns({"status": "ok"}, "later"), "handlers"))
    )
    assert value["status"] == "denied"
    assert "broken" in value["reason"]
    assert failed == "handler_error"
    assert winner.name == "broken"
    assert stats[("error", "before_tool", "broken")] == 1
    assert [s.status for s in steps] == ["error"]


async def test_custom_handler_error_is_skipped() -> None:
    """A custom handler that raises is skipped and the next handler still decides."""

    @on("before_tool")
    def broken(**_: Any) -> None:
        raise KeyError("bug")

    value, _, failed, steps, _ = await _run(
        _chain((broken, "handlers"), (_returns({"status": "ok"}, "later"), "handlers"))
    )
    assert value == {"status": "ok"}
    assert failed is None
    assert [s.status for s in steps] == ["error", "act"]


async def test_on_error_raise_propagates() -> None:
    """A handler configured with on_error='raise' lets its exception out."""

    @on("before_tool", on_error="raise")
    def broken(**_: Any) -> None:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        await _run(
            _chain(
                (broken, "cache"),
            )
        )


async def test_on_error_skip_overrides_policy_default() -> None:
    """A policy handler configured with on_error='skip' fails open instead of denying."""

    @on("before_tool", on_error="skip")
    def lenient(**_: Any) -> None:
        raise ValueError("bad")

    value, *_ = await _run(
        _chain(
            (lenient, "policy"),
        )
    )
    assert value is None


async def test_timeout_counts_as_failure() -> None:
    """An async handler slower than its timeout is treated as failed (policy: denied)."""

    @on("before_tool", timeout=0.01)
    async def hung(**_: Any) -> None:
        await asyncio.sleep(5)

    value, _, failed, steps, stats = await _run(
        _chain(
            (hung, "policy"),
        )
    )
    assert value["status"] == "denied"
    assert failed == "handler_error"
    assert steps[0].status == "timeout"
    assert stats[("timeout", "before_tool", "hung")] == 1


async def test_wrong_type_from_a_custom_handler_is_skipped_and_counted() -> None:
    """A custom handler's value of the wrong type is refused, counted, and the chain goes on."""
    value, winner, _, steps, stats = await _run(
        _chain((_returns("oops", "bad"), "handlers"), (_returns({"ok": 1}, "good"), "handlers"))
    )
    assert value == {"ok": 1}
    assert winner.name == "good"
    assert steps[0].status == "rejected"
    assert stats[("rejected", "before_tool", "bad")] == 1


async def test_empty_dict_from_a_custom_handler_is_refused() -> None:
    """A custom handler's empty dict on a tool hook is refused and replaces nothing."""
    value, *_ = await _run(
        _chain(
            (_returns({}, "empty"), "handlers"),
        )
    )
    assert value is None


async def test_strict_mode_raises_on_a_bad_return() -> None:
    """Under strict=True a bad return raises ReturnGuardError naming the handler."""
    with pytest.raises(ReturnGuardError, match="empty"):
        await _run(
            _chain(
                (_returns({}, "empty"), "handlers"),
            ),
            strict=True,
        )


async def test_partial_chunks_skip_handlers_not_marked_partial() -> None:
    """On a partial chunk only handlers declaring partial=True run."""
    seen: list[str] = []

    @on("after_model")
    def whole(**_: Any) -> None:
        seen.append("whole")

    @on("after_model", partial=True)
    def chunks(**_: Any) -> None:
        seen.append("chunks")

    await _run(
        _chain((whole, "handlers"), (chunks, "handlers")),
        "after_model",
        kwargs={"callback_context": None, "llm_response": None},
        partial=True,
    )
    assert seen == ["chunks"]


async def test_agent_and_tool_scoping() -> None:
    """Handlers scoped to other agents or tools are skipped."""
    seen: list[str] = []

    @on("before_tool", agents={"billing"})
    def billing_only(**_: Any) -> None:
        seen.append("billing_only")

    @on("before_tool", tools="issue_refund")
    def refunds_only(**_: Any) -> None:
        seen.append("refunds_only")

    chain = _chain((billing_only, "handlers"), (refunds_only, "handlers"))
    await _run(chain, agent="support", tool="issue_refund")
    await _run(chain, agent="billing", tool="lookup_charge")
    assert seen == ["refunds_only", "billing_only"]


def test_guard_accepts_real_values() -> None:
    """The guard lets through a non-empty value of the hook's type."""
    content = types.Content(role="model", parts=[types.Part(text="hi")])
    assert guard("before_agent", content) is None
    assert guard("before_model", LlmResponse(content=content)) is None
    assert guard("before_model", LlmResponse(error_code="X", error_message="y")) is None
    assert guard("after_tool", {"a": 1}) is None


@pytest.mark.parametrize(
    ("hook", "value"),
    [
        ("before_agent", types.Content(role="model", parts=[])),
        ("before_model", LlmResponse()),
        ("after_model", LlmResponse(content=types.Content(role="model", parts=[]))),
        ("before_tool", {}),
        ("before_model", "text"),
        ("after_run", {"status": "x"}),
    ],
)
def test_guard_refuses_empty_or_wrong_values(hook: str, value: Any) -> None:
    """The guard names what is wrong with an empty or wrongly typed value."""
    assert guard(hook, value) is not None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("hook", "kind"),
    [("before_tool", dict), ("before_agent", types.Content), ("after_model", LlmResponse)],
)
def test_denials_have_the_hooks_type(hook: str, kind: type) -> None:
    """A fail-closed denial is of the type ADK expects for the hook, and passes the guard."""
    value = denial(hook, "p")  # type: ignore[arg-type]
    assert isinstance(value, kind)
    assert guard(hook, value) is None  # type: ignore[arg-type]


def test_configure_sets_options_on_objects() -> None:
    """configure() scopes a handler object, and the binding reads the options."""

    class Audit:
        def before_tool(self, **_: Any) -> None:
            return None

    hooks, _ = bind(configure(Audit(), name="audit", tools=["x"], on_error="raise"), "handlers")
    bound = hooks["before_tool"]
    assert (bound.name, bound.tools, bound.on_error) == ("audit", frozenset({"x"}), "raise")


def test_a_fail_closed_tool_denial_carries_a_code() -> None:
    """The lattice's own tool denial carries the machine-readable code handler_error."""
    value = denial("before_tool", "p")
    assert (value["status"], value["code"], value["policy"]) == ("denied", "handler_error", "p")


async def test_wrong_type_from_a_policy_denies_naming_it() -> None:
    """A policy returning a str from before_tool denies the call, coded bad_return."""
    value, winner, failed, steps, stats = await _run(
        _chain((_returns("yes", "approve"), "policy"), (_returns({"ok": 1}, "later"), "cache"))
    )
    assert (value["status"], value["code"], value["policy"]) == ("denied", "bad_return", "approve")
    assert "approve" in value["reason"]
    assert (winner.name, failed) == ("approve", "bad_return")
    assert [s.status for s in steps] == ["rejected"]
    assert stats[("rejected", "before_tool", "approve")] == 1


async def test_empty_value_from_a_policy_denies() -> None:
    """A policy's suspicious empty value ({}) is a failure of that policy: the call is denied."""
    value, _, failed, *_ = await _run(_chain((_returns({}, "empty"), "policy")))
    assert (value["code"], failed) == ("bad_return", "bad_return")


async def test_empty_response_from_a_policy_denies_with_a_marked_response() -> None:
    """A policy's LlmResponse with no parts on before_model becomes a marked denial response."""
    empty = on("before_model", name="gate")(lambda **_: LlmResponse())
    value, *_ = await _run(
        _chain((empty, "policy")),
        "before_model",
        kwargs={"callback_context": None, "llm_request": None},
    )
    assert value.custom_metadata["adk_lattice"] == {"denied_by": "gate", "reason": "bad_return"}


async def test_bad_return_from_a_lenient_policy_is_skipped() -> None:
    """A policy configured with on_error='skip' that returns a bad value fails open."""
    lenient = on("before_tool", name="lenient", on_error="skip")(lambda **_: "oops")
    value, _, failed, steps, _ = await _run(
        _chain((lenient, "policy"), (_returns({"ok": 1}, "good"), "handlers"))
    )
    assert (value, failed) == ({"ok": 1}, None)
    assert [s.status for s in steps] == ["rejected", "act"]


async def test_bad_return_from_a_deny_configured_cache_handler_denies() -> None:
    """A cache handler configured with on_error='deny' fails closed on a bad return."""
    strict_cache = on("before_tool", name="sc", on_error="deny")(lambda **_: ["not", "a", "dict"])
    value, *_ = await _run(_chain((strict_cache, "cache")))
    assert (value["code"], value["policy"]) == ("bad_return", "sc")


async def test_bad_return_with_on_error_raise_raises_the_guard_error() -> None:
    """A handler configured with on_error='raise' lets a bad return out as ReturnGuardError."""
    loud = on("before_tool", name="loud", on_error="raise")(lambda **_: "oops")
    with pytest.raises(ReturnGuardError, match="loud"):
        await _run(_chain((loud, "handlers")))


async def test_strict_mode_raises_for_a_policy_bad_return_too() -> None:
    """strict=True raises ReturnGuardError for a policy's bad return instead of denying."""
    with pytest.raises(ReturnGuardError, match="expects dict"):
        await _run(_chain((_returns("oops", "p"), "policy")), strict=True)


def test_a_bad_return_denial_carries_its_own_code() -> None:
    """The denial for an unusable return says so in its code and reason."""
    value = denial("before_tool", "p", "bad_return")
    assert value["code"] == "bad_return"
    assert "invalid result" in value["reason"]


async def test_every_refused_value_is_counted() -> None:
    """A handler refused on two calls is counted twice."""
    chain = _chain((_returns("oops", "bad"), "handlers"))
    stats: Counter[tuple[str, str, str]] = Counter()
    for _ in range(2):
        await run_chain(
            chain,
            "before_tool",
            {"tool": None, "tool_args": {}, "tool_context": None},
            agent="a",
            tool="t",
            partial=False,
            strict=False,
            stats=stats,
            steps=None,
        )
    assert stats[("rejected", "before_tool", "bad")] == 2
