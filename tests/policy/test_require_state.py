"""RequireState: the agent runs only when a declared key holds."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent

from adk_lattice import Lattice, Outcome
from adk_lattice.policy import RequireState
from adk_lattice.policy._common import DENIAL_STATE_KEY
from adk_lattice.state import StateKey, StateKeys
from adk_lattice.telemetry import notes_of
from adk_lattice.testing import FakeModel, ScriptedResponse

from .conftest import noted, run_app

ACTIVE = StateKey("user:account_active", bool, False, "The account may use the agent.")


async def test_allows_when_the_key_holds(ctx: Any) -> None:
    """A true flag lets the agent run (the handler returns None)."""
    guard = RequireState(ACTIVE, message="inactive")
    c = await ctx({"user:account_active": True})
    assert guard.before_agent(agent=None, callback_context=c) is None
    assert guard.counts == {"allowed": 1}


async def test_denies_with_the_users_message(ctx: Any) -> None:
    """A false flag answers with a model-role Content holding the message."""
    guard = RequireState(ACTIVE, message="Your account is inactive.")
    c = await ctx({"user:account_active": False})
    out = guard.before_agent(agent=None, callback_context=c)
    assert out is not None
    assert out.role == "model"
    assert out.parts
    assert out.parts[0].text == "Your account is inactive."
    assert guard.counts == {"denied": 1}


async def test_a_string_true_is_not_trusted(ctx: Any) -> None:
    """The string "true" for a bool key is malformed and denies."""
    guard = RequireState(ACTIVE, message="inactive")
    c = await ctx({"user:account_active": "true"})
    assert guard.before_agent(agent=None, callback_context=c) is not None


async def test_records_the_denial_in_temp_state(ctx: Any) -> None:
    """A denial is noted under a temp: key with the policy and the key name."""
    guard = RequireState(ACTIVE, message="inactive")
    c = await ctx({})
    guard.before_agent(agent=None, callback_context=c)
    assert c.state[DENIAL_STATE_KEY] == {
        "policy": "RequireState",
        "reason": "state_required",
        "key": "user:account_active",
    }


async def test_equals_compares_the_value(ctx: Any) -> None:
    """equals= requires the key to hold that exact value."""
    plan = StateKey("user:plan", str, "free", registry=StateKeys())
    guard = RequireState(plan, equals="pro", message="Pro only.")
    assert guard.before_agent(agent=None, callback_context=await ctx({"user:plan": "pro"})) is None
    assert guard.before_agent(agent=None, callback_context=await ctx({})) is not None


def test_check_and_equals_together_are_refused() -> None:
    """Giving both check= and equals= raises ValueError."""
    with pytest.raises(ValueError, match=r"^give RequireState either check= or equals=, not both$"):
        RequireState(ACTIVE, check=bool, equals=True)


async def test_runner_stops_before_the_model_is_called() -> None:
    """Through a Runner, an inactive account gets the message and the model is never called."""
    model = FakeModel([ScriptedResponse.text("hello")])
    agent = LlmAgent(name="assistant", model=model)
    guard = RequireState(ACTIVE, message="Your account is inactive.")
    run = await run_app(agent, [Lattice(policy=[guard])], "hi")
    assert run.texts == ["Your account is inactive."]
    assert model.calls == 0


async def test_runner_lets_an_active_account_through() -> None:
    """Through a Runner, an active account reaches the model."""
    model = FakeModel([ScriptedResponse.text("hello")])
    agent = LlmAgent(name="assistant", model=model)
    guard = RequireState(ACTIVE, message="inactive")
    run = await run_app(agent, [Lattice(policy=[guard])], "hi", state={"user:account_active": True})
    assert run.texts == ["hello"]


async def test_a_stop_is_noted_as_block_state_required(ctx: Any) -> None:
    """A failed check is noted for telemetry as block with the code state_required."""
    c = await ctx({"user:account_active": False})
    RequireState(ACTIVE, message="inactive").before_agent(agent=None, callback_context=c)
    assert noted(c, "before_agent") == [("block", "state_required")]


async def test_a_pass_is_not_noted(ctx: Any) -> None:
    """A check that holds leaves no note."""
    c = await ctx({"user:account_active": True})
    RequireState(ACTIVE, message="inactive").before_agent(agent=None, callback_context=c)
    assert noted(c, "before_agent") == []


PLAN = StateKey("user:rs_plan", str, "free", "The user's plan (declared in the default registry).")


async def test_a_declared_key_can_be_named(ctx: Any) -> None:
    """A key name declared elsewhere is read through its declaration (here a str key)."""
    guard = RequireState("user:rs_plan", equals="pro", message="Pro only.")
    assert guard.key is PLAN
    assert (
        guard.before_agent(agent=None, callback_context=await ctx({"user:rs_plan": "pro"})) is None
    )


async def test_an_undeclared_name_is_a_flag_that_defaults_to_off(ctx: Any) -> None:
    """An undeclared name guards a bool defaulting to False: unset denies, True passes."""
    name = f"user:rs_beta_{uuid.uuid4().hex}"  # never declared before, in any earlier test
    guard = RequireState(name, message="Not enabled.")
    assert (guard.key.name, guard.key.type) == (name, bool)
    assert guard.key.doc == "Must be true for the agent to run (RequireState)."
    assert guard.before_agent(agent=None, callback_context=await ctx({})) is not None
    allowed = await ctx({name: True})
    assert guard.before_agent(agent=None, callback_context=allowed) is None


def test_a_key_of_another_type_is_refused_with_the_fix() -> None:
    """A key that is neither a StateKey nor a name fails at construction, saying what it takes."""
    with pytest.raises(
        TypeError, match=r"^RequireState takes a StateKey or a state key name .*, not int$"
    ):
        RequireState(3, message="x")  # type: ignore[arg-type]


@pytest.mark.parametrize("message", ["", "   "])
def test_an_empty_message_is_refused(message: str) -> None:
    """The user must read something: an empty message fails at construction."""
    with pytest.raises(ValueError, match=r"^RequireState needs a non-empty message for the user$"):
        RequireState(ACTIVE, message=message)


async def test_the_default_message_says_the_account_is_not_enabled(ctx: Any) -> None:
    """Without a message, the user reads the default as written."""
    out = RequireState(ACTIVE).before_agent(agent=None, callback_context=await ctx({}))
    assert out is not None and out.parts is not None
    assert out.parts[0].text == (
        "Sorry, I can't help with this right now: your account is not enabled."
    )


async def test_an_undeclared_flag_reads_as_false_when_unset(ctx: Any) -> None:
    """An undeclared name's default is False itself: equals=False passes while it is unset."""
    name = f"user:rs_off_{uuid.uuid4().hex}"  # never declared before, in any earlier test
    guard = RequireState(name, equals=False, message="Only before enabling.")
    assert guard.before_agent(agent=None, callback_context=await ctx({})) is None


async def test_only_the_named_agents_are_guarded() -> None:
    """With agents=, an agent not named runs even when the key does not hold."""
    model = FakeModel([ScriptedResponse.text("hello")])
    billing = LlmAgent(name="billing", model=FakeModel())
    agent = LlmAgent(name="assistant", model=model, sub_agents=[billing])
    guard = RequireState(ACTIVE, message="inactive", agents={"billing"})
    run = await run_app(agent, [Lattice(policy=[guard])], "hi")
    assert run.texts == ["hello"]


async def test_a_stop_is_noted_under_the_handler_name(ctx: Any) -> None:
    """The block note names the handler: RequireState unless renamed."""
    c = await ctx({"user:account_active": False})
    RequireState(ACTIVE, message="inactive", name="active").before_agent(
        agent=None, callback_context=c
    )
    outcome = Outcome(hook="before_agent", args={"callback_context": c})
    assert [n.handler for n in notes_of(outcome)] == ["active"]
