"""The billing demo runs offline and shows what the README promises."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import json
import re
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
    """Nine turns give ten audit lines: one per run; the approved call resumes its invocation."""
    _, lines = demo_run
    assert len(lines) == 10
    assert len({line["invocation_id"] for line in lines}) == 9
    assert lines[6]["invocation_id"] == lines[7]["invocation_id"]


def test_demo_denies_the_large_refund_for_a_non_manager(
    demo_run: tuple[str, list[dict[str, object]]],
) -> None:
    """The non-manager's refund above the limit is denied by ToolGuard's approval rule."""
    output, lines = demo_run
    assert "before_tool  ToolGuard:rewrite, ToolGuard:deny  (approval_required)" in output
    assert "needs approval" in output
    assert [(t["name"], t["decision"]) for t in lines[4]["tool_calls"]] == [  # type: ignore[union-attr,index]
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
    assert lines[8]["outcome"] == "blocked"
    assert lines[8]["tool_calls"] == []


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
    refund = lines[9]["tool_calls"][-1]  # type: ignore[index]
    assert (refund["name"], refund["decision"]) == ("issue_refund", "deny")
    assert refund["untrusted_sources"] == ["read_ticket"]


def test_demo_redacts_the_card_and_email_in_the_reply(
    demo_run: tuple[str, list[dict[str, object]]],
) -> None:
    """The card number and email the model repeats reach the user redacted."""
    output, lines = demo_run
    assert "You paid with card [REDACTED:CARD]; receipts go to [REDACTED:EMAIL]." in output
    assert "4111 1111 1111 1111" not in output.split("=== Audit")[0].split("reply ->", 2)[2]
    assert lines[1]["policy_actions"][0]["decision"] == "redact"  # type: ignore[index]


def test_demo_stops_the_injection_before_the_model(
    demo_run: tuple[str, list[dict[str, object]]],
) -> None:
    """The injection attempt is refused in before_model; the model is never called."""
    output, lines = demo_run
    assert "before_model  InjectionGuard:deny  (instruction_override)" in output
    assert lines[2]["outcome"] == "blocked"


def test_demo_answers_the_repeated_question_from_the_cache(
    demo_run: tuple[str, list[dict[str, object]]],
) -> None:
    """The repeated question's two model answers both come from the response cache."""
    output, lines = demo_run
    turn = output.split("=== Turn 4")[1].split("=== Turn 5")[0]
    assert turn.count("[served by response_cache, model not called]") == 1
    assert turn.count("response_cache:cache_hit") == 2
    assert "coordinator model: not called" in turn
    assert lines[3]["model_calls"] == {  # type: ignore[comparison-overlap]
        "count": 0,
        "served": 2,
        "cache_hits": 2,
        "input_tokens": 0,
        "output_tokens": 0,
    }


def test_demo_runs_the_account_closure_once_a_person_approves(
    demo_run: tuple[str, list[dict[str, object]]],
) -> None:
    """The closure waits for ADK's confirmation, then runs when the person approves."""
    output, lines = demo_run
    assert re.search(r"before_tool  ToolGuard:defer.*\(approval_required\)", output)
    assert 'close_account -> status="closed"' in output
    waiting, resumed = lines[6]["tool_calls"], lines[7]["tool_calls"]
    assert [(t["name"], t["decision"]) for t in waiting] == [("close_account", "defer")]  # type: ignore[union-attr,index]
    assert [(t["name"], t["status"]) for t in resumed] == [("close_account", "ok")]  # type: ignore[union-attr,index]


def test_demo_leaves_nothing_in_the_temp_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --audit the demo's audit file lives in a temporary directory it removes."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert asyncio.run(_load().main([])) == 0
    assert list(tmp_path.iterdir()) == []
    assert "pass --audit PATH to keep the file" in out.getvalue()
