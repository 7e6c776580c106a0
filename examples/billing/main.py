"""A billing coordinator and a refunds specialist under one Lattice, offline on FakeModel.

Run it with ``make demo`` (or ``python examples/billing/main.py``). Each turn prints a tree
of the hooks that fired for each agent, who acted, and what the model saw; each invocation
writes one audit line. ``--model gemini-2.5-flash`` runs the same app live when
``GOOGLE_API_KEY`` is set.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.models.base_llm import BaseLlm
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from adk_lattice import Lattice, Outcome, configure
from adk_lattice.policy import (
    Approval,
    CapToolResult,
    InjectionGuard,
    RedactPII,
    RequireState,
    Round,
    ToolGuard,
    ToolRule,
)
from adk_lattice.state import StateKey
from adk_lattice.testing import FakeModel, ScriptedResponse

REFUND_LIMIT = 1000.0
MAX_ITEMS = 5

# -- tools -----------------------------------------------------------------------------------


def lookup_charge(charge_id: str) -> dict[str, Any]:
    """Look up a charge: its amount, currency, and every line item on it."""
    items = [{"sku": f"sku-{n:03d}", "price": 5.0} for n in range(240)]
    return {"charge_id": charge_id, "amount": 1200.0, "currency": "EUR", "items": items}


def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
    """Refund an amount of a charge to the customer's original payment method."""
    return {"status": "refunded", "charge_id": charge_id, "amount": amount}


# -- state keys and policies: identity and roles come from state, never from arguments -----

ACCOUNT_ACTIVE = StateKey("user:account_active", bool, False, "The account may use billing.")
IS_MANAGER = StateKey("user:is_manager", bool, False, "May approve refunds over the limit.")

REFUND_RULE = ToolRule(
    agents={"refunds"},
    schema={
        "type": "object",
        "required": ["charge_id", "amount"],
        "properties": {
            "charge_id": {"type": "string", "maxLength": 64},
            "amount": {"type": "number", "exclusiveMinimum": 0},
        },
    },
    rewrites=[Round("amount", 2)],  # in place: the model cannot choose sub-cent refunds
    approval=Approval(("amount", REFUND_LIMIT), role=IS_MANAGER),
)


def policies() -> list[Any]:
    """The policy tier: precondition, injection guard, refund rules, result cap, redaction."""
    return [
        RequireState(
            ACCOUNT_ACTIVE,
            message="Your account is inactive. Please contact support to reactivate it.",
        ),
        InjectionGuard(),
        ToolGuard({"issue_refund": REFUND_RULE}),
        configure(CapToolResult(max_items=MAX_ITEMS), tools={"lookup_charge"}),
        RedactPII(),
    ]


class AuditLine:
    """One JSON line per invocation: who, which agents, which tools, what was decided."""

    name = "audit"

    def __init__(self, path: Path) -> None:
        self.path = path

    def observe(self, outcome: Outcome) -> None:
        inv = outcome.invocation
        if inv is None:
            return
        record = inv.data.setdefault("audit", {"tools": [], "decisions": []})
        if outcome.hook == "before_tool":
            record["tools"].append(outcome.tool)
        if outcome.acted_by and not outcome.synthesized:
            record["decisions"].append(f"{outcome.hook}:{outcome.acted_by}")
        if outcome.hook != "after_run":
            return
        line = {
            "invocation_id": inv.invocation_id,
            "user": inv.user_id,
            "agents": inv.agents_entered,
            "tools": record["tools"],
            "decisions": record["decisions"],
            "outcome": outcome.reason or "completed",
            "duration_ms": round((time.perf_counter() - inv.started) * 1000, 2),
        }
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")


class HookTree:
    """Collects each invocation's outcomes and prints them as a tree when it ends."""

    name = "hook_tree"

    def observe(self, outcome: Outcome) -> None:
        inv = outcome.invocation
        if inv is None:
            return
        inv.data.setdefault("tree", []).append(outcome)
        if outcome.hook == "after_run":
            print(render(inv.data["tree"]))


def _describe(o: Outcome) -> str:
    if o.hook == "before_model":
        req = o.args["llm_request"]
        tools = sorted((req.tools_dict or {}).keys())
        last = req.contents[-1] if req.contents else None
        saw = _content_text(last)
        return f"model saw {len(req.contents)} message(s), tools {tools}; last: {saw}"
    if o.hook == "after_model":
        resp = o.final
        if resp is None:
            return f"model call ended ({o.reason})"
        text = _content_text(resp.content)
        prefix = f"served by {o.acted_by}: " if o.synthesized else "model answered: "
        return prefix + text
    if o.hook == "before_tool":
        args = json.dumps(o.args["tool_args"])
        return f"tool {o.tool}({args})"
    if o.hook == "after_tool":
        result = o.final
        if not result:
            return f"tool {o.tool} ended"
        if result.get("truncated"):
            shown = f"{result['returned']} of {result['total_available']} items"
            return f"tool {o.tool} -> truncated to {shown}, announced to the model"
        return f"tool {o.tool} -> {_short(json.dumps(result))}"
    return o.hook


def _content_text(content: Any) -> str:
    if content is None or not content.parts:
        return "(nothing)"
    bits = []
    for p in content.parts:
        if p.text:
            bits.append(repr(_short(p.text)))
        elif p.function_call:
            bits.append(f"call {p.function_call.name}({json.dumps(p.function_call.args)})")
        elif p.function_response:
            bits.append(f"result of {p.function_response.name}")
    return ", ".join(bits)


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def render(outcomes: Sequence[Outcome]) -> str:
    """An indented tree of one invocation: agents, their model and tool steps, decisions."""
    lines = [f"  run {outcomes[0].invocation_id}"]
    depth = {"n": 2}
    for o in outcomes:
        pad = "  " * depth["n"]
        acted = ""
        if o.acted_by and not o.synthesized:
            verdict = "DENIED" if o.denied else "replaced"
            acted = f"   <- {verdict} by {o.acted_by}"
        rewrites = [s.handler for s in o.steps if s.status == "pass" and o.hook == "before_tool"]
        if o.hook == "before_agent":
            lines.append(f"{pad}agent {o.agent}{acted}")
            depth["n"] += 1
        elif o.hook == "after_agent":
            depth["n"] -= 1
            if o.synthesized:
                lines.append(f"{'  ' * (depth['n'] + 1)}(agent {o.agent} closed: {o.reason})")
        elif o.hook in ("before_model", "after_model", "before_tool", "after_tool"):
            if o.partial:
                continue
            checked = f"   [checked by {', '.join(rewrites)}]" if rewrites else ""
            lines.append(f"{pad}{o.hook:<12} {_describe(o)}{acted}{checked}")
        elif o.hook == "after_run" and o.synthesized:
            lines.append(f"{pad}(run ended: {o.reason})")
    return "\n".join(lines)


# -- the app ---------------------------------------------------------------------------------

TURNS: list[dict[str, Any]] = [
    {
        "title": "An active customer asks about a charge (a 240-item result is capped to 5)",
        "user": "alice",
        "state": {"user:account_active": True},
        "text": "What is on charge ch_1?",
        "coordinator": [
            ScriptedResponse.call("lookup_charge", charge_id="ch_1"),
            ScriptedResponse.text("Charge ch_1 is EUR 1200 for 240 items; here are the first 5."),
        ],
        "refunds": [],
    },
    {
        "title": "A refund above the limit is denied for a non-manager (after a transfer)",
        "user": "alice",
        "state": {"user:account_active": True},
        "text": "Refund 1500.456 on ch_1, please.",
        "coordinator": [ScriptedResponse.call("transfer_to_agent", agent_name="refunds")],
        "refunds": [
            ScriptedResponse.call("issue_refund", charge_id="ch_1", amount=1500.456),
            ScriptedResponse.text("That refund needs a manager's approval; shall I escalate?"),
        ],
    },
    {
        "title": "A manager's refund goes through, rounded to cents in place",
        "user": "bob",
        "state": {"user:account_active": True, "user:is_manager": True},
        "text": "Refund 1500.456 on ch_1.",
        "coordinator": [ScriptedResponse.call("transfer_to_agent", agent_name="refunds")],
        "refunds": [
            ScriptedResponse.call("issue_refund", charge_id="ch_1", amount=1500.456),
            ScriptedResponse.text("Refunded EUR 1500.46 on ch_1."),
        ],
    },
    {
        "title": "An inactive account is stopped before any token is spent",
        "user": "carol",
        "state": {"user:account_active": False},
        "text": "Refund everything!",
        "coordinator": [],
        "refunds": [],
    },
]


def build_agent(coordinator_model: BaseLlm | str, refunds_model: BaseLlm | str) -> LlmAgent:
    """The coordinator with its tools and the refunds specialist it transfers to."""
    refunds = LlmAgent(
        name="refunds",
        model=refunds_model,
        description="Handles refund requests.",
        instruction="Issue refunds with issue_refund. Explain any denial to the customer.",
        tools=[issue_refund],
    )
    return LlmAgent(
        name="coordinator",
        model=coordinator_model,
        instruction="Answer billing questions with lookup_charge; hand refunds to 'refunds'.",
        tools=[lookup_charge],
        sub_agents=[refunds],
    )


def build_lattice(audit_path: Path, *, show_tree: bool = True) -> Lattice:
    """The demo's Lattice: the library's policies, an audit line and the hook tree."""
    observers: list[Any] = [AuditLine(audit_path)]
    if show_tree:
        observers.append(HookTree())
    return Lattice(name="billing_lattice", policy=policies(), telemetry=observers)


async def run_turn(turn: dict[str, Any], model: str | None, audit: Path) -> list[str]:
    """Run one scripted (or live) turn on a fresh session and return the final texts."""
    if model is None:
        agent = build_agent(FakeModel(turn["coordinator"]), FakeModel(turn["refunds"]))
    else:
        agent = build_agent(model, model)
    app = App(name="billing", root_agent=agent, plugins=[build_lattice(audit)])
    runner = Runner(app=app, session_service=InMemorySessionService())
    session = await runner.session_service.create_session(
        app_name="billing", user_id=turn["user"], state=turn["state"]
    )
    message = types.Content(role="user", parts=[types.Part(text=turn["text"])])
    texts = []
    async for event in runner.run_async(
        user_id=turn["user"], session_id=session.id, new_message=message
    ):
        if event.content and event.content.parts and not event.partial:
            text = "".join(p.text or "" for p in event.content.parts)
            if text:
                texts.append(f"{event.author}: {text}")
    await runner.close()
    return texts


async def main(argv: Sequence[str] | None = None) -> int:
    """Run every demo turn and print its hook tree, replies and audit line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--model", help="run live on this Gemini model (needs GOOGLE_API_KEY)")
    parser.add_argument("--audit", type=Path, help="audit file (default: a temporary file)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)  # keep the tree readable
    if args.model and not os.environ.get("GOOGLE_API_KEY"):
        print("--model needs GOOGLE_API_KEY in the environment", file=sys.stderr)
        return 2
    audit = args.audit or Path(tempfile.mkdtemp(prefix="billing-")) / "audit.jsonl"
    for n, turn in enumerate(TURNS, 1):
        print(f"\n=== Turn {n}: {turn['title']}")
        print(f"  user {turn['user']} says: {turn['text']!r}")
        for text in await run_turn(turn, args.model, audit):
            print(f"  reply -> {text}")
    print(f"\n=== Audit lines ({audit})")
    print(audit.read_text(encoding="utf-8"), end="")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
