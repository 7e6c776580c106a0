"""Tracing a multi-agent run: ADK's spans enriched by the lattice, metrics, one audit line.

A billing coordinator looks up two charges in parallel, asks a fraud-check helper (an
AgentTool, so a nested invocation) and transfers to a refunds specialist, whose refund call a
policy denies. Everything runs on FakeModel, offline. Spans go to the console exporter as
they end; then the span tree, the lattice's metrics and the audit file are printed.

Run: ``PYTHONPATH=src python examples/tracing/main.py`` (add ``--quiet`` to skip the raw
console spans).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.agent_tool import AgentTool
from google.genai import types

from adk_lattice import Lattice
from adk_lattice.telemetry import AuditLog, Telemetry, enable_tracing, note, render_span_tree
from adk_lattice.testing import FakeModel, FunctionCall, ScriptedResponse

REFUND_LIMIT = 100.0


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up a card charge by its id."""
    return {"charge_id": charge_id, "amount": 240.0 if charge_id == "ch_2" else 12.5}


def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
    """Refund part or all of a charge."""
    return {"refunded": charge_id, "amount": amount}


class RefundLimit:
    """Policy: refunds above the limit need a human; says why through ``note``."""

    name = "RefundLimit"

    def before_tool(self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any) -> Any:
        if tool.name != "issue_refund" or float(tool_args.get("amount", 0)) <= REFUND_LIMIT:
            return None
        note(tool_context, "deny", handler=self.name, reason="over_limit")
        return {"status": "denied", "reason": "refunds over 100 need a supervisor"}


def build_agents() -> LlmAgent:
    """Coordinator (parallel lookups, AgentTool helper, transfer) and a refunds specialist."""
    fraud_check = LlmAgent(
        name="fraud_check",
        description="Checks a charge for fraud signals.",
        model=FakeModel(
            [ScriptedResponse.text("No fraud signals.", input_tokens=30, output_tokens=4)]
        ),
    )
    refunds = LlmAgent(
        name="refunds",
        description="Issues refunds.",
        model=FakeModel(
            [
                ScriptedResponse.call("issue_refund", charge_id="ch_2", amount=240.0),
                ScriptedResponse.text("A supervisor must approve this refund.", output_tokens=8),
            ]
        ),
        tools=[issue_refund],
    )
    lookups = [FunctionCall("lookup_charge", {"charge_id": c}) for c in ("ch_1", "ch_2")]
    return LlmAgent(
        name="billing",
        model=FakeModel(
            [
                ScriptedResponse(function_calls=lookups, input_tokens=120, output_tokens=20),
                ScriptedResponse.call("fraud_check", request="ch_2"),
                ScriptedResponse.call("transfer_to_agent", agent_name="refunds"),
            ]
        ),
        tools=[lookup_charge, AgentTool(fraud_check)],
        sub_agents=[refunds],
    )


async def main(quiet: bool) -> None:
    console = enable_tracing(
        "none" if quiet else "console_json",
        metrics_exporter="memory",
        service_name="billing-example",
    )
    # A second call adds an in-memory exporter to the provider the first one installed.
    memory = enable_tracing("memory", metrics_exporter="none")
    audit_path = Path(tempfile.mkdtemp(prefix="adk-lattice-")) / "audit.jsonl"
    lattice = Lattice(policy=[RefundLimit()], telemetry=[Telemetry(), AuditLog(audit_path)])
    app = App(name="billing", root_agent=build_agents(), plugins=[lattice])
    runner = Runner(app=app, session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name="billing", user_id="cust_42")
    message = types.Content(role="user", parts=[types.Part(text="Refund my 240 charge please")])
    async for event in runner.run_async(
        user_id="cust_42", session_id=session.id, new_message=message
    ):
        if event.content and event.content.parts and event.content.parts[0].text:
            print(f"[{event.author}] {event.content.parts[0].text}", file=sys.stderr)
    await runner.close()

    print("\n== span tree ==")
    print(render_span_tree(memory.span_exporter.get_finished_spans()))  # type: ignore[union-attr]
    print("\n== lattice metrics ==")
    data = console.metric_reader.get_metrics_data() if console.metric_reader else None
    for rm in data.resource_metrics if data else ():
        for sm in rm.scope_metrics:
            for metric in (m for m in sm.metrics if m.name.startswith("adk_lattice.")):
                for point in metric.data.data_points:
                    value = getattr(point, "value", None)
                    shown = value if value is not None else f"{point.count} runs"
                    labels = ", ".join(
                        f"{k.split('.')[-1]}={v}" for k, v in point.attributes.items()
                    )
                    print(f"{metric.name}{{{labels}}} {shown}")
    print(f"\n== audit file {audit_path.name} (one line per invocation) ==")
    print(audit_path.read_text(encoding="utf-8"), end="")
    memory.shutdown()
    console.shutdown()


if __name__ == "__main__":
    asyncio.run(main(quiet="--quiet" in sys.argv))
