"""Handler options and registration mistakes: each refused at Lattice(...), naming the fix."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.plugins.base_plugin import BasePlugin

from adk_lattice import Lattice, configure, on
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import run_app


def _noop(**_: Any) -> None:
    return None


class Guard:
    """A handler object with one tool hook."""

    name = "guard"

    def before_tool(self, **_: Any) -> None:
        return None


def test_a_bad_on_error_names_the_handler_and_the_choices() -> None:
    """An unknown on_error is refused naming the handler, the three choices and the value."""
    expected = "handler 'check': on_error must be one of ('deny', 'skip', 'raise'), not 'explode'"
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        Lattice(handlers=[on("before_tool", name="check", on_error="explode")(_noop)])  # type: ignore[arg-type]


@pytest.mark.parametrize("timeout", [0, -1.5, "10"])
def test_a_timeout_that_is_not_a_positive_number_is_refused(timeout: Any) -> None:
    """A zero, negative or non-numeric timeout is refused, naming the handler."""
    with pytest.raises(ValueError, match=r"^handler 'guard': timeout must be a positive number"):
        Lattice(handlers=[configure(Guard(), timeout=timeout)])


def test_a_handlers_own_timeout_is_kept_as_seconds() -> None:
    """An integer timeout on a handler is bound as that many seconds."""
    lattice = Lattice(handlers=[configure(Guard(), timeout=2)])
    (bound,) = lattice._dispatch.chains["before_tool"]
    assert bound.timeout == 2.0 and isinstance(bound.timeout, float)


@pytest.mark.parametrize("option", ["agents", "tools"])
def test_agents_or_tools_that_are_not_names_are_refused(option: str) -> None:
    """Scoping to something other than names is refused, naming the handler and option."""
    with pytest.raises(TypeError) as info:
        Lattice(handlers=[configure(Guard(), **{option: [1, 2]})])
    assert str(info.value) == (f"handler 'guard': {option} must be a name or a collection of names")


async def test_one_agent_name_as_a_string_scopes_to_that_agent_only() -> None:
    """agents="billing" scopes a handler to the agent billing, not to its letters."""
    seen: list[str] = []

    @on("before_model", agents="billing")
    def look(*, callback_context: Any, llm_request: Any) -> None:
        seen.append(callback_context.agent_name)

    for name in ("billing", "b"):
        agent = LlmAgent(name=name, model=FakeModel([ScriptedResponse.text("Hi.")]))
        await run_app(agent, Lattice(handlers=[look]))
    assert seen == ["billing"]


def test_an_unknown_option_is_refused_listing_it() -> None:
    """configure() with a misspelt option is refused, listing the unknown names sorted."""
    with pytest.raises(TypeError) as info:
        configure(Guard(), tool=["x"], agent=["y"])
    assert str(info.value) == "unknown handler option(s): agent, tool"


def test_configure_sets_each_option_on_the_handler() -> None:
    """configure() sets every option it is given and returns the same handler."""
    guard = Guard()
    assert configure(guard, name="g2", on_error="skip", partial=True) is guard
    assert (guard.name, guard.on_error, guard.partial) == ("g2", "skip", True)  # type: ignore[attr-defined]


def test_a_hook_attribute_that_is_not_callable_is_refused() -> None:
    """A hook name bound to a non-callable attribute is refused, naming the hook."""

    class Broken:
        before_tool = "deny everything"

    with pytest.raises(TypeError, match=r"^handler 'Broken': before_tool must be callable$"):
        Lattice(policy=[Broken()])


def test_hook_methods_in_the_telemetry_tier_say_to_implement_observe() -> None:
    """A telemetry entry with a hook method is refused, saying to implement observe."""
    with pytest.raises(TypeError) as info:
        Lattice(telemetry=[Guard()])
    message = str(info.value)
    assert "handler 'guard' is in the telemetry tier" in message
    assert "implement observe(outcome) instead of before_tool" in message


def test_a_tool_scoped_handler_without_tool_hooks_is_refused() -> None:
    """tools=... on a handler with only model hooks is refused, naming those hooks."""
    handler = on("before_model", name="lookups", tools={"lookup"})(_noop)
    with pytest.raises(TypeError) as info:
        Lattice(handlers=[handler])
    assert str(info.value) == (
        "handler 'lookups' is scoped to tools but implements no tool hook (before_model)"
    )


def test_a_tool_scoped_handler_with_a_tool_hook_is_accepted() -> None:
    """tools=... on a handler with a tool hook and a model hook is accepted."""

    class Both(Guard):
        tools = frozenset({"lookup"})

        def before_model(self, **_: Any) -> None:
            return None

    lattice = Lattice(handlers=[Both()])
    assert lattice.chain("before_tool") == ("guard",)


def test_an_object_with_nothing_to_run_lists_the_hook_names() -> None:
    """An object with no hook method and no observe is refused listing every hook name."""
    with pytest.raises(TypeError) as info:
        Lattice(handlers=[object()])
    assert "has none of the hook methods (on_user_message, before_run," in str(info.value)


def test_a_handler_reports_under_its_name_attribute() -> None:
    """A handler object's name attribute is the name its chain lists, not its class name."""
    assert Lattice(policy=[Guard()]).chain("before_tool") == ("guard",)


def test_an_on_function_takes_the_function_name_unless_named() -> None:
    """on() names a handler after its function, or after name= when given."""

    def round_amount(**_: Any) -> None:
        return None

    plain = on("before_tool")(round_amount)
    named = on("before_tool", name="rounder")(round_amount)
    assert (plain.name, named.name) == ("round_amount", "rounder")
    assert Lattice(handlers=[plain]).chain("before_tool") == ("round_amount",)


def test_an_observe_that_cannot_take_an_outcome_names_the_fix() -> None:
    """observe() without an outcome parameter is refused saying observers need one."""

    class Audit:
        def observe(self) -> None:
            return None

    with pytest.raises(TypeError) as info:
        Lattice(telemetry=[Audit()])
    message = str(info.value)
    assert message.startswith("observer 'Audit': observe(")
    assert message.endswith("cannot take an outcome; observers need observe(self, outcome)")


class Idle(BasePlugin):
    """An ADK plugin that overrides none of BasePlugin's callbacks."""

    def __init__(self) -> None:
        super().__init__(name="idle")


class BadSignature(BasePlugin):
    """An ADK plugin whose before_tool_callback takes the agent-callback arguments."""

    def __init__(self) -> None:
        super().__init__(name="bad_signature")

    async def before_tool_callback(self, tool: Any, args: Any, tool_context: Any) -> None:  # type: ignore[override]
        return None


def test_a_plugin_overriding_no_callback_is_refused() -> None:
    """An ADK plugin that overrides no hook callback is refused: it would never run."""
    with pytest.raises(TypeError) as info:
        Lattice(handlers=[Idle()])
    assert str(info.value) == (
        "ADK plugin 'idle' (Idle) overrides none of BasePlugin's hook callbacks, "
        "so it would never run"
    )


def test_a_plugin_callback_with_the_wrong_arguments_names_the_callback() -> None:
    """A plugin callback that cannot take ADK's arguments is refused under its own name."""
    with pytest.raises(TypeError) as info:
        Lattice(handlers=[BadSignature()])
    message = str(info.value)
    assert message.startswith("handler 'bad_signature': before_tool_callback(")
    assert "expected before_tool_callback(self, *, tool, tool_args, tool_context)" in message


def test_a_hook_method_with_other_keywords_gets_the_expected_signature_only() -> None:
    """A hook method taking unrelated keywords is refused with the expected signature and no
    agent-callback hint."""

    class Guard2:
        def before_model(self, *, request: Any) -> None:
            return None

    with pytest.raises(TypeError) as info:
        Lattice(policy=[Guard2()])
    assert str(info.value).endswith(
        "expected before_model(self, *, callback_context, llm_request) (or **kwargs)"
    )


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up a charge."""
    return {"charge_id": charge_id, "amount": 10.0}


def _charge_agent() -> LlmAgent:
    script = [ScriptedResponse.call("lookup_charge", charge_id="c1"), ScriptedResponse.text("ok")]
    return LlmAgent(name="billing", model=FakeModel(script), tools=[lookup_charge])


class Refuser(BasePlugin):
    """An ADK plugin whose before_tool refuses every call, after an optional wait."""

    def __init__(self, name: str = "refuser", *, wait: float = 0.0, fail: bool = False) -> None:
        super().__init__(name=name)
        self.wait, self.fail = wait, fail

    async def before_tool_callback(self, **_: Any) -> dict[str, Any]:
        await asyncio.sleep(self.wait)
        if self.fail:
            raise RuntimeError("approval service down")
        return {"status": "denied", "reason": "frozen"}


async def test_a_plugin_scoped_by_configure_skips_other_tools() -> None:
    """configure(plugin, tools=...) keeps an ADK plugin off the tools it is not scoped to."""
    plugin = configure(Refuser(), tools={"issue_refund"})
    turn = await run_app(_charge_agent(), Lattice(policy=[plugin], dynamic_tools=["issue_refund"]))
    assert turn.tool_responses == [{"charge_id": "c1", "amount": 10.0}]


async def test_the_lattice_timeout_bounds_a_plugin_in_a_decider_tier() -> None:
    """Lattice(timeout=...) stops a slow ADK plugin callback; in handlers= it is skipped."""
    lattice = Lattice(handlers=[Refuser(wait=5.0)], timeout=0.05)
    turn = await run_app(_charge_agent(), lattice)
    assert turn.tool_responses == [{"charge_id": "c1", "amount": 10.0}]
    assert lattice.stats[("timeout", "before_tool", "refuser")] == 1


async def test_the_lattice_timeout_bounds_a_plugin_observing() -> None:
    """Lattice(timeout=...) stops a slow ADK plugin in telemetry=, counted as an observer error."""
    lattice = Lattice(telemetry=[Refuser(wait=5.0)], timeout=0.05)
    turn = await run_app(_charge_agent(), lattice)
    assert turn.texts[-1] == "ok"
    assert lattice.stats[("observer_error", "before_tool", "refuser")] == 1


async def test_a_failing_plugin_observing_is_counted_under_its_name() -> None:
    """An ADK plugin in telemetry= whose callback raises is counted under the plugin's name."""
    lattice = Lattice(telemetry=[Refuser("audit_plugin", fail=True)])
    turn = await run_app(_charge_agent(), lattice)
    assert turn.texts[-1] == "ok"
    assert lattice.stats == {("observer_error", "before_tool", "audit_plugin"): 1}


def test_a_plugin_in_telemetry_cannot_be_put_in_shadow_mode() -> None:
    """configure(plugin, mode="shadow") in telemetry= is refused, saying where shadow fits."""
    with pytest.raises(ValueError, match=r"^handler 'refuser'") as info:
        Lattice(telemetry=[configure(Refuser(), mode="shadow")])
    assert str(info.value) == (
        "handler 'refuser': observers only watch, so they have no shadow mode; "
        "set mode='shadow' on a policy, cache or custom handler"
    )


def test_a_misspelt_mode_names_the_handler_and_the_choices() -> None:
    """An unknown mode is refused naming the handler, the two modes and the value given."""
    with pytest.raises(ValueError, match=r"^handler 'guard'") as info:
        Lattice(handlers=[configure(Guard(), mode="shadowed")])
    assert str(info.value) == (
        "handler 'guard': mode must be 'enforce' or 'shadow', not 'shadowed'"
    )


def test_a_handler_scoped_to_agents_and_tools_without_tool_hooks_is_refused() -> None:
    """tools=... with agents=... on a handler with only model hooks is refused: it would never
    run, since no model call is a tool call."""

    class Summarise:
        name = "summarise"

        def before_model(self, **_: Any) -> None:
            return None

    with pytest.raises(TypeError) as info:
        Lattice(handlers=[configure(Summarise(), agents={"billing"}, tools={"lookup"})])
    assert str(info.value) == (
        "handler 'summarise' is scoped to tools but implements no tool hook (before_model)"
    )
