"""Registration mistakes fail at Lattice(...), with the fix in the message."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import pytest
from google.adk.agents import LlmAgent

from adk_lattice import FunctionHandler, Lattice, configure, on
from adk_lattice.policy import RedactPII
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import run_app


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up a charge."""
    return {"charge_id": charge_id, "amount": 10.0}


def test_a_class_instead_of_an_instance_says_to_instantiate() -> None:
    """policy=[RedactPII] fails at construction and says to pass RedactPII()."""
    with pytest.raises(TypeError, match=r"pass an instance, RedactPII\(\)"):
        Lattice(policy=[RedactPII])


def test_a_class_in_the_telemetry_tier_is_refused_too() -> None:
    """A class given as an observer is refused the same way."""

    class Audit:
        def observe(self, outcome: Any) -> None:
            return None

    with pytest.raises(TypeError, match=r"Audit\(\)"):
        Lattice(telemetry=[Audit])


def test_adk_agent_callback_shape_on_before_tool_is_refused() -> None:
    """A before_tool taking (tool, args, tool_context) names the expected signature."""

    class Guard:
        def before_tool(self, tool: Any, args: Any, tool_context: Any) -> None:
            return None

    with pytest.raises(TypeError) as info:
        Lattice(policy=[Guard()])
    message = str(info.value)
    assert "before_tool(self, *, tool, tool_args, tool_context)" in message
    assert "args -> tool_args" in message


def test_an_on_function_with_the_wrong_keywords_is_refused() -> None:
    """An @on function whose parameters are not the hook's keywords fails at construction."""

    @on("after_tool")
    def cap(*, tool: Any, args: Any, tool_context: Any, tool_response: Any) -> None:
        return None

    with pytest.raises(TypeError, match=r"after_tool\(\*, tool, tool_args, tool_context, result\)"):
        Lattice(handlers=[cap])


def test_a_hook_method_missing_a_keyword_is_refused() -> None:
    """A before_model that does not take llm_request is refused at construction."""

    class Trim:
        def before_model(self, *, callback_context: Any) -> None:
            return None

    with pytest.raises(TypeError, match="callback_context, llm_request"):
        Lattice(policy=[Trim()])


def test_a_method_named_like_adk_plugin_hooks_says_drop_callback() -> None:
    """before_tool_callback on a plain object is refused with 'drop `_callback`'."""

    class Guard:
        def before_tool_callback(self, **kwargs: Any) -> None:
            return None

    with pytest.raises(TypeError, match="drop `_callback`"):
        Lattice(policy=[Guard()])


def test_a_telemetry_entry_without_observe_says_what_observers_need() -> None:
    """telemetry=[object()] says observers need observe(outcome)."""
    with pytest.raises(TypeError, match=r"observe\(outcome\)"):
        Lattice(telemetry=[object()])


def test_an_observe_that_cannot_take_an_outcome_is_refused() -> None:
    """An observe() with no parameter for the outcome is refused at construction."""

    class Counter:
        def observe(self) -> None:
            return None

    with pytest.raises(TypeError, match=r"observe\(self, outcome\)"):
        Lattice(telemetry=[Counter()])


def test_duplicate_handler_names_are_refused() -> None:
    """Two handlers under one name in one lattice are refused, saying how to rename."""
    first = on("before_tool", name="guard")(lambda **_: None)
    second = on("after_tool", name="guard")(lambda **_: None)
    with pytest.raises(TypeError, match=r"two handlers are named 'guard'.*configure"):
        Lattice(policy=[first], handlers=[second])


def test_two_instances_of_one_class_need_their_own_names() -> None:
    """Two default-named instances of one policy class clash; naming them fixes it."""
    with pytest.raises(TypeError, match="RedactPII"):
        Lattice(policy=[RedactPII(), RedactPII()])
    lattice = Lattice(policy=[RedactPII(), configure(RedactPII(), name="RedactPII-2")])
    assert "RedactPII-2" in lattice.chain("after_model")


def test_a_lattice_inside_a_lattice_is_refused() -> None:
    """A Lattice given as a handler of another is refused: list its handlers instead."""
    with pytest.raises(TypeError, match="cannot run inside another"):
        Lattice(handlers=[Lattice(telemetry=())])


async def test_a_kwargs_handler_is_accepted_and_gets_adks_arguments() -> None:
    """A handler taking **kwargs passes the check and receives ADK's keywords on a Runner."""
    seen: list[list[str]] = []

    @on("before_tool")
    def look(**kwargs: Any) -> None:
        seen.append(sorted(kwargs))

    script = [ScriptedResponse.call("lookup_charge", charge_id="c1"), ScriptedResponse.text("ok")]
    agent = LlmAgent(name="billing", model=FakeModel(script), tools=[lookup_charge])
    await run_app(agent, Lattice(handlers=[look], telemetry=()))
    assert seen == [["tool", "tool_args", "tool_context"]]


def test_a_function_registered_with_on_stays_callable_as_itself() -> None:
    """@on keeps the function callable directly, with positional and keyword arguments."""

    @on("before_tool")
    def double(value: int, *, times: int = 2) -> int:
        return value * times

    assert double(3, times=4) == 12


def test_an_unknown_hook_name_lists_the_hooks_to_choose_from() -> None:
    """on() with a misspelt hook name is refused, listing every hook name."""
    with pytest.raises(ValueError, match=r"^unknown hook") as info:
        on("before_tol")(lambda **_: None)  # type: ignore[arg-type]
    assert str(info.value) == (
        "unknown hook 'before_tol'; expected one of on_user_message, before_run, "
        "before_agent, before_model, after_model, on_model_error, before_tool, after_tool, "
        "on_tool_error, on_event, after_agent, on_agent_error, after_run, on_run_error"
    )


def test_registering_something_not_callable_names_what_it_got() -> None:
    """on() applied to a non-callable is refused, naming the hook and the type given."""
    with pytest.raises(TypeError) as info:
        on("before_tool")(42)  # type: ignore[arg-type]
    assert str(info.value) == "on('before_tool') needs a callable, got int"


def test_a_function_handler_made_directly_keeps_its_hook_and_name() -> None:
    """FunctionHandler(hook, fn) with no name takes the function's; it reports its hook."""

    def round_amount(**_: Any) -> None:
        return None

    handler = FunctionHandler("before_tool", round_amount)
    assert (handler.hook, handler.name) == ("before_tool", "round_amount")
    assert repr(handler) == "<handler 'round_amount' on before_tool>"
    assert Lattice(handlers=[handler]).chain("before_tool") == ("round_amount",)


def test_a_callable_without_a_name_reports_under_its_type() -> None:
    """A nameless callable (a functools.partial) registered with on() is named by its type."""

    def cap(*, limit: float, tool: Any, tool_args: Any, tool_context: Any) -> None:
        return None

    handler = on("before_tool")(functools.partial(cap, limit=100.0))
    assert handler.name == "partial"
    assert Lattice(handlers=[handler]).chain("before_tool") == ("partial",)


def refund_check(*, tool: Any, tool_args: Any, tool_context: Any) -> None:
    """A hook-shaped function registered without on()."""


def test_a_plain_function_is_refused_saying_to_register_it_with_on() -> None:
    """A bare function in a tier is refused by its name, saying to register it with @on."""
    with pytest.raises(TypeError) as info:
        Lattice(policy=[refund_check])
    assert str(info.value) == (
        "'refund_check' is a plain function: register it on a hook with "
        "@on('before_tool') (or another hook name) so the lattice knows when to call it"
    )


def test_a_bound_method_is_refused_like_a_plain_function() -> None:
    """A bound method in a tier is refused by its name, saying to register it with @on."""

    class Checks:
        def refund(self, **_: Any) -> None:
            return None

    with pytest.raises(TypeError, match=r"^'refund' is a plain function: register it"):
        Lattice(policy=[Checks().refund])


def test_both_agent_callback_names_are_pointed_out() -> None:
    """An after_tool taking ADK's agent-callback args and tool_response names both renames."""

    class Cap:
        def after_tool(
            self, *, tool: Any, args: Any, tool_context: Any, tool_response: Any
        ) -> None:
            return None

    with pytest.raises(TypeError) as info:
        Lattice(handlers=[Cap()])
    assert str(info.value).endswith(
        "(or **kwargs) (args -> tool_args, tool_response -> result: that is ADK's "
        "agent-callback shape; plugin hooks, and the lattice, pass other names)"
    )


def test_a_name_that_is_not_a_string_falls_back_to_the_class_name() -> None:
    """A handler whose name attribute is a method, not a string, reports under its class."""

    class Lookup:
        def name(self) -> str:
            return "lookup"

        def before_tool(self, **_: Any) -> None:
            return None

    assert Lattice(handlers=[Lookup()]).chain("before_tool") == ("Lookup",)


def test_a_telemetry_entry_without_observe_is_named_with_its_type() -> None:
    """A telemetry entry that is not an observer is refused naming it and its type."""

    class Sink:
        name = "audit_sink"

    with pytest.raises(TypeError) as info:
        Lattice(telemetry=[Sink()])
    assert str(info.value) == (
        "telemetry entry 'audit_sink' (Sink) is not an observer: "
        "telemetry entries need an observe(outcome) method"
    )


def test_a_handler_with_nothing_to_run_is_named_with_its_type() -> None:
    """An object with no hook method and no observe is refused naming it and its type."""

    class Sink:
        name = "audit_sink"

    with pytest.raises(TypeError, match=r"^handler 'audit_sink' \(Sink\) has none of the hook"):
        Lattice(handlers=[Sink()])


def test_a_tool_scoped_handler_without_tool_hooks_lists_every_hook_it_has() -> None:
    """A handler scoped to tools with only model hooks is refused, listing those hooks."""

    class Trim:
        name = "trim"
        tools = ("lookup_charge",)

        def before_model(self, **_: Any) -> None:
            return None

        def after_model(self, **_: Any) -> None:
            return None

    with pytest.raises(TypeError) as info:
        Lattice(handlers=[Trim()])
    assert str(info.value) == (
        "handler 'trim' is scoped to tools but implements no tool hook (before_model, after_model)"
    )


def test_a_hook_method_with_the_wrong_signature_is_refused_under_the_handlers_name() -> None:
    """A hook method that cannot take ADK's keywords is refused naming its handler."""

    class Guard:
        name = "refund_guard"

        def before_tool(self, tool: Any) -> None:
            return None

    with pytest.raises(TypeError, match=r"^handler 'refund_guard': before_tool\(tool"):
        Lattice(policy=[Guard()])


async def test_the_lattice_timeout_cuts_off_an_observer_without_its_own() -> None:
    """Lattice(timeout=...) bounds an async observer that sets no timeout; the run completes."""

    class Hangs:
        name = "hangs"

        async def observe(self, outcome: Any) -> None:
            await asyncio.sleep(3600)

    agent = LlmAgent(name="chat", model=FakeModel([ScriptedResponse.text("Hi.")]))
    lattice = Lattice(telemetry=[Hangs()], timeout=0.05)
    turn = await asyncio.wait_for(run_app(agent, lattice), 5)
    assert turn.texts[-1] == "Hi."
    assert lattice.stats[("observer_error", "before_run", "hangs")] == 1


async def test_an_observer_that_does_not_ask_for_chunks_gets_none() -> None:
    """An observer with no partial attribute sees the final answer of a stream, never a chunk."""
    seen: list[bool] = []

    class Watch:
        def observe(self, outcome: Any) -> None:
            seen.append(outcome.partial)

    model = FakeModel([ScriptedResponse(text_chunks=["Hel", "lo"])])
    agent = LlmAgent(name="chat", model=model)
    await run_app(agent, Lattice(telemetry=[Watch()]), streaming=True)
    assert seen and not any(seen)
