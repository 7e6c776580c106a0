"""ProtectState against a client of ADK's own ``adk api_server``: writes over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration._adk_cli import Server, adk_server

#: A refund app whose refunds over 100 need ``user:is_manager``.
AGENT_PY = """
from google.adk.agents import LlmAgent
from google.adk.apps import App

from adk_lattice import Lattice
from adk_lattice.policy import Approval, ToolGuard, ToolRule
from adk_lattice.state import StateKey
from adk_lattice.testing import FakeModel, ScriptedResponse

IS_MANAGER = StateKey("user:is_manager", bool, False, "May approve large refunds.")


def issue_refund(charge_id: str, amount: float) -> dict:
    \"\"\"Refund part of a charge.\"\"\"
    return {"status": "refunded", "charge_id": charge_id}


rule = ToolRule(approval=Approval(("amount", 100), role=IS_MANAGER))
guard = ToolGuard({"issue_refund": rule})
turn = [ScriptedResponse.call("issue_refund", charge_id="c1", amount=500.0),
        ScriptedResponse.text("Done.")]
root_agent = LlmAgent(name="billing", model=FakeModel(turn * 8), tools=[issue_refund])
app = App(name="billing", root_agent=root_agent, plugins=[Lattice(policy=[guard])])
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The refund app on ``adk api_server``, on a loopback port."""
    agents = tmp_path_factory.mktemp("protect") / "agents"
    app_dir = agents / "billing"
    app_dir.mkdir(parents=True)
    (app_dir / "__init__.py").write_text("from . import agent\n")
    (app_dir / "agent.py").write_text(AGENT_PY)
    with adk_server("api_server", agents) as running:
        yield running


def _patch(client: httpx.Client, session: str, delta: dict[str, Any]) -> None:
    reply = client.patch(f"/apps/billing/users/u1/sessions/{session}", json={"state_delta": delta})
    reply.raise_for_status()


def _refund(client: httpx.Client, session: str) -> dict[str, Any]:
    body = {
        "app_name": "billing",
        "user_id": "u1",
        "session_id": session,
        "new_message": {"role": "user", "parts": [{"text": "Refund 500 on c1."}]},
    }
    reply = client.post("/run", json=body)
    reply.raise_for_status()
    for event in reply.json():
        for part in (event.get("content") or {}).get("parts") or []:
            response = part.get("function_response") or part.get("functionResponse")
            if response:
                return dict(response["response"])
    raise AssertionError("no tool result in the run")


#: Harmless PATCHes after the forged one. The check reads no window of recent events; the
#: issue's 999 (which outlasted the former 1,000-event window) takes minutes over HTTP, so
#: the suite floods 2,000 events in-process (tests/policy/test_protect.py) and 50 here.
FLOOD = 50


def test_a_patch_flood_does_not_outlast_the_undo(server: Server) -> None:
    """A forged user:is_manager PATCH followed by harmless PATCHes is undone at the run."""
    with httpx.Client(base_url=server.url, timeout=60.0) as client:
        client.post("/apps/billing/users/u1/sessions/flood", json={}).raise_for_status()
        _patch(client, "flood", {"user:is_manager": True})
        for n in range(FLOOD):
            _patch(client, "flood", {"note": n})
        stored = client.get("/apps/billing/users/u1/sessions/flood").json()
        # The set-up holds: the forged value is in storage, behind 999 later events.
        assert stored["state"]["user:is_manager"] is True
        assert len(stored["events"]) == FLOOD + 1
        result = _refund(client, "flood")
        after = client.get("/apps/billing/users/u1/sessions/flood").json()
    assert result["code"] == "approval_required"
    assert after["state"]["user:is_manager"] is None
