"""Two lattices on one runner: the later one stands down unless built with stack=True."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService

from adk_lattice import Lattice, on
from adk_lattice.testing import FakeModel, ScriptedResponse, function_tool, tool_context
from tests.support import Recorder, run_app

ran: list[str] = []


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up a charge."""
    ran.append(charge_id)
    return {"charge_id": charge_id, "amount": 10.0}


def _agent() -> LlmAgent:
    ran.clear()
    script = [ScriptedResponse.call("lookup_charge", charge_id="c1"), ScriptedResponse.text("ok")]
    return LlmAgent(name="billing", model=FakeModel(script), tools=[lookup_charge])


_deny = on("before_tool", name="deny_lookups")(lambda **_: {"status": "denied", "code": "x"})


async def _run_two(first: Lattice, second: Lattice) -> None:
    app = App(name="app", root_agent=_agent(), plugins=[first, second])
    runner = Runner(app=app, session_service=InMemorySessionService())
    await run_app(app.root_agent, first, runner=runner)


async def test_the_later_lattice_stands_down(caplog: pytest.LogCaptureFixture) -> None:
    """A second Lattice on the same runner observes nothing and warns once, naming both."""
    kept, extra = Recorder(), Recorder()
    first = Lattice(policy=[_deny], telemetry=[kept])
    second = Lattice(name="adk_lattice.Lattice", telemetry=[extra])
    with caplog.at_level(logging.WARNING, logger="adk_lattice"):
        await _run_two(first, second)
    assert ran == []
    assert kept.of("after_run") and extra.outcomes == []
    (warning,) = [r for r in caplog.records if "two Lattice plugins" in r.getMessage()]
    assert "'adk_lattice'" in warning.getMessage()
    assert "'adk_lattice.Lattice'" in warning.getMessage()


async def test_the_first_lattice_runs_whatever_the_second_is() -> None:
    """The Lattice registered first keeps deciding when the second has stack=True."""
    kept = Recorder()
    first = Lattice(policy=[_deny], telemetry=[kept])
    await _run_two(first, Lattice(name="second", telemetry=(), stack=True))
    assert ran == []
    assert [o.acted_by for o in kept.of("before_tool")] == ["deny_lookups"]


async def test_stack_true_runs_both() -> None:
    """With stack=True the second Lattice runs too: each reports the end of the run."""
    kept, extra = Recorder(), Recorder()
    first = Lattice(policy=[_deny], telemetry=[kept])
    await _run_two(first, Lattice(name="second", telemetry=[extra], stack=True))
    assert len(kept.of("after_run")) == len(extra.of("after_run")) == 1
    assert ran == []


async def test_one_lattice_alone_never_stands_down(recorder: Recorder) -> None:
    """A single Lattice on a runner runs as always."""
    await run_app(_agent(), Lattice(telemetry=[recorder]))
    assert recorder.of("after_run")
    assert ran == ["c1"]


async def test_a_lattice_called_outside_its_runner_still_decides() -> None:
    """Called with a context whose runner does not list it (a unit test), a Lattice decides."""
    lattice = Lattice(policy=[_deny], telemetry=())
    out = await lattice.before_tool_callback(
        tool=function_tool(lookup_charge),
        tool_args={"charge_id": "c1"},
        tool_context=tool_context(),
    )
    assert out == {"status": "denied", "code": "x"}
