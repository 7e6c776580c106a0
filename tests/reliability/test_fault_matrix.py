"""Every hook x every tier x every fault has its documented outcome (docs/reliability.md).

Faults: the handler raises, returns the wrong type, returns a suspicious empty value, or
hangs (an async handler past its timeout). The run never aborts because of a handler.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_lattice import HOOKS, Lattice, on
from adk_lattice._chain import DENIAL_TEXT
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import run_app

TIERS = ("policy", "cache", "handlers", "telemetry")
FAULTS = ("raises", "wrong_type", "empty", "hangs")
ERROR_HOOKS = {"on_tool_error", "on_agent_error", "on_run_error"}
TIMEOUT = 0.05

#: What a failing policy handler (raises, hangs, or returns a wrong or empty value) does,
#: per hook. Every other cell: the
#: turn completes exactly as without the faulty handler.
POLICY_DENIES = {
    "on_user_message": "run ends with the denial before any agent runs",
    "before_run": "run ends with the denial before any agent runs",
    "before_agent": "agent skipped, denial is the answer",
    "before_model": "model not called, denial is the answer",
    "after_model": "model answer replaced by the denial",
    "before_tool": "tool not run, denial dict is its result",
    "after_tool": "tool result replaced by the denial dict",
    "after_agent": "denial appended after the agent's answer",
}


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up a charge."""
    ran.append(charge_id)
    return {"charge_id": charge_id, "amount": 10.0}


def broken_lookup(charge_id: str) -> dict[str, Any]:
    """A lookup whose backend is down."""
    raise ValueError("backend down")


ran: list[str] = []


def _empty(hook: str) -> Any:
    if hook in ("before_tool", "after_tool", "on_tool_error", "on_event"):
        return {}
    if hook in ("before_model", "after_model", "on_model_error"):
        return LlmResponse()
    if hook in ("after_run", "on_agent_error", "on_run_error"):
        return {}
    return types.Content(role="model", parts=[])


def _faulty(hook: str, tier: str, fault: str) -> Any:
    async def hang() -> None:
        await asyncio.sleep(60)

    def act(**_: Any) -> Any:
        if fault == "raises":
            raise RuntimeError("injected fault")
        if fault == "wrong_type":
            return "oops"
        if fault == "empty":
            return _empty(hook)
        return hang()

    timeout = TIMEOUT if fault == "hangs" else None
    if tier != "telemetry":
        return on(hook, name="faulty", timeout=timeout)(act)  # type: ignore[arg-type]

    @dataclass
    class FaultyObserver:
        name: str = "faulty"
        partial: bool = True

        def observe(self, outcome: Any) -> Any:
            return act() if outcome.hook == hook else None

    observer = FaultyObserver()
    observer.timeout = timeout  # type: ignore[attr-defined]
    return observer


@dataclass
class Result:
    texts: list[str]
    model_calls: int
    error: BaseException | None
    stats: dict[tuple[str, str, str], int]


async def _run(hook: str, tier: str, fault: str) -> Result:
    ran.clear()
    faulty = _faulty(hook, tier, fault)
    lattice = Lattice(**{tier: [faulty]})
    if hook in ERROR_HOOKS:
        script = [ScriptedResponse.call("broken_lookup", charge_id="c1")]
        tools = [broken_lookup]
    elif hook == "on_model_error":
        script = [ScriptedResponse(error=ConnectionError("provider down"))]
        tools = []
    else:
        script = [
            ScriptedResponse.call("lookup_charge", charge_id="c1"),
            ScriptedResponse.text("Done."),
        ]
        tools = [lookup_charge]
    model = FakeModel(script)
    agent = LlmAgent(name="billing", model=model, tools=tools)
    try:
        turn = await run_app(agent, lattice)
        texts, error = turn.texts, None
    except Exception as exc:
        texts, error = [], exc
    return Result(texts, model.calls, error, dict(lattice.stats))


def _expected_counter(hook: str, tier: str, fault: str) -> tuple[str, str, str]:
    if tier == "telemetry":
        return ("observer_error", hook, "faulty")
    if fault in ("wrong_type", "empty"):
        return ("rejected", hook, "faulty")
    return ("timeout" if fault == "hangs" else "error", hook, "faulty")


CELLS = [(h, t, f) for h in HOOKS for t in TIERS for f in FAULTS]


@pytest.mark.parametrize(("hook", "tier", "fault"), CELLS)
async def test_fault_cell(hook: str, tier: str, fault: str) -> None:
    """The run does not abort because of the faulty handler, and the fault is counted."""
    result = await _run(hook, tier, fault)
    if tier == "telemetry" and fault in ("wrong_type", "empty"):
        assert result.stats == {}  # observers' return values are ignored by design
    else:
        assert result.stats.get(_expected_counter(hook, tier, fault), 0) >= 1
    if hook in ERROR_HOOKS:
        assert isinstance(result.error, ValueError)  # the tool's own error, not the plugin's
        return
    if hook == "on_model_error":
        assert isinstance(result.error, ConnectionError)
        return
    assert result.error is None
    denies = tier == "policy" and hook in POLICY_DENIES
    if not denies:
        assert result.texts[-1] == "Done."
        assert ran == ["c1"]
        return
    assert DENIAL_TEXT in result.texts or hook in ("before_tool", "after_tool")
    if hook in ("on_user_message", "before_run", "before_agent", "before_model"):
        assert result.model_calls == 0
    if hook in ("before_tool", "after_model"):
        assert ran == []
    if hook == "after_agent":
        assert result.texts[-2:] == ["Done.", DENIAL_TEXT]
