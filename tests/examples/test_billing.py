"""The billing demo runs offline and shows what the README promises."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import json
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("billing_demo", ROOT / "examples/billing/main.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[dict[str, object]]]:
    """Run the whole demo once and keep its output and audit lines."""
    audit = tmp_path_factory.mktemp("billing") / "audit.jsonl"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = asyncio.run(_load().main(["--audit", str(audit)]))
    assert code == 0
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    return out.getvalue(), lines


def test_demo_writes_one_audit_line_per_invocation(
    demo_run: tuple[str, list[dict[str, object]]],
) -> None:
    """Five turns give five audit lines, one per invocation."""
    _, lines = demo_run
    assert len(lines) == 5
    assert len({line["invocation_id"] for line in lines}) == 5


def test_demo_denies_the_large_refund_for_a_non_manager(
    demo_run: tuple[str, list[dict[str, object]]],
) -> None:
    """The non-manager's refund above the limit is denied by ToolGuard's approval rule."""
    output, lines = demo_run
    assert (
        "before_tool  ToolGuard:rewrite, ToolGuard:deny, ProtectState:allow  (approval_required)"
        in output
    )
    assert "needs approval" in output
    assert [(t["name"], t["decision"]) for t in lines[1]["tool_calls"]] == [  # type: ignore[union-attr,index]
        ("transfer_to_agent", "allow"),
        ("issue_refund", "deny"),
    ]


def test_demo_rounds_the_managers_refund_in_place(
    demo_run: tuple[str, list[dict[str, object]]],
) -> None:
    """The manager's refund reaches the tool rounded to cents."""
    output, _ = demo_run
    assert "amount=1500.46" in output
    assert "coordinator model call" in output


def test_demo_caps_the_lookup_with_an_announcement(
    demo_run: tuple[str, list[dict[str, object]]],
) -> None:
    """The 240-item lookup result reaches the model capped and announced."""
    output, _ = demo_run
    assert "after_tool  CapToolResult:rewrite" in output
    assert "items=[5 items] truncated=true total_available=240 returned=5" in output


def test_demo_blocks_the_inactive_account_before_the_model(
    demo_run: tuple[str, list[dict[str, object]]],
) -> None:
    """The inactive account's invocation enters one agent and calls no tool."""
    output, lines = demo_run
    assert "before_agent  RequireState:block" in output
    assert lines[3]["outcome"] == "blocked"
    assert lines[3]["tool_calls"] == []


def test_demo_shows_the_transfer_closing_the_coordinator(
    demo_run: tuple[str, list[dict[str, object]]],
) -> None:
    """After the transfer the tree shows the coordinator closed as transferred."""
    output, _ = demo_run
    assert "after_agent  (closed: transferred)" in output


def test_demo_stops_the_injected_refund_by_provenance(
    demo_run: tuple[str, list[dict[str, object]]],
) -> None:
    """The refund a ticket note injected is denied because its charge and amount are ungrounded."""
    output, lines = demo_run
    assert "ProvenanceGuard:deny" in output
    assert "(ungrounded_argument:charge_id,amount)" in output
    refund = lines[4]["tool_calls"][-1]  # type: ignore[index]
    assert (refund["name"], refund["decision"]) == ("issue_refund", "deny")
    assert refund["untrusted_sources"] == ["read_ticket"]
