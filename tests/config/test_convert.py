"""Typed tables: a config file writes the dataclasses built-in policies take."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.adk.agents.llm_agent import LlmAgent

from adk_lattice import ConfigError, Lattice
from adk_lattice._config.read import read_config
from adk_lattice.policy import Approval, Budget, Clamp, Consequential, ProvenanceGuard, ToolRule
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.support import run_app

GUARD = """
[[policy]]
use = "adk_lattice.policy:ToolGuard"
[policy.args.rules.issue_refund]
approval = { when = ["amount", 100], role = "user:cv_manager" }
rewrites = [{ use = "Clamp", field = "amount", low = 0 }]
sensitive = { charge_id = "id" }
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "lattice.toml"
    path.write_text(text, encoding="utf-8")
    return path


def finding(path: Path) -> str:
    with pytest.raises(ConfigError) as raised:
        read_config(path)
    (only,) = raised.value.findings
    return only


def test_a_tool_rule_table_builds_its_approval_and_rewrites(tmp_path: Path) -> None:
    """``approval`` and ``rewrites`` tables become an Approval and a Clamp."""
    rule = read_config(write(tmp_path, GUARD)).tiers["policy"][0].rules["issue_refund"]
    assert isinstance(rule, ToolRule)
    assert isinstance(rule.approval, Approval)
    assert rule.approval.when == ("amount", 100)
    assert rule.rewrites == [Clamp("amount", low=0)]


async def test_an_approval_written_in_the_file_stops_the_large_refund(tmp_path: Path) -> None:
    """Through a real Runner, the file's approval denies a refund over 100: it does not run."""
    done: list[float] = []

    def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
        """Refund part of a charge."""
        done.append(amount)
        return {"status": "refunded"}

    def lookup_charge(charge_id: str) -> dict[str, Any]:
        """Look up a charge (the example trusts its output)."""
        return {"charge_id": charge_id}

    model = FakeModel(
        [
            ScriptedResponse.call("issue_refund", charge_id="c1", amount=250.0),
            ScriptedResponse.text("ok"),
        ]
    )
    agent = LlmAgent(name="billing", model=model, tools=[issue_refund])
    lattice = Lattice.from_config(write(tmp_path, GUARD), on_config_error="raise")
    run = await run_app(agent, lattice, "refund c1")
    assert done == []
    assert run.tool_responses[0]["code"] == "approval_required"


def test_consequential_tables_build_a_provenance_guard(tmp_path: Path) -> None:
    """``consequential`` tables become Consequential declarations."""
    path = write(
        tmp_path,
        '[[policy]]\nuse = "adk_lattice.policy:ProvenanceGuard"\n'
        '[policy.args.consequential.send_email]\nargs = { to = "email" }\n',
    )
    guard = read_config(path).tiers["policy"][0]
    assert isinstance(guard, ProvenanceGuard)
    assert guard.consequential == {"send_email": Consequential(args={"to": "email"})}


def test_from_rules_reads_sensitive_arguments_of_rule_tables(tmp_path: Path) -> None:
    """``ProvenanceGuard.from_rules`` takes rule tables with ``sensitive``."""
    path = write(
        tmp_path,
        '[[policy]]\nuse = "adk_lattice.policy:ProvenanceGuard.from_rules"\n'
        '[policy.args.rules.send_email]\nsensitive = { to = "email" }\n',
    )
    guard = read_config(path).tiers["policy"][0]
    assert guard.consequential == {"send_email": Consequential(args={"to": "email"})}


def test_budget_tables_become_budgets(tmp_path: Path) -> None:
    """``budgets`` tables become Budget objects."""
    path = write(
        tmp_path,
        '[[policy]]\nuse = "adk_lattice.policy:TokenBudget"\n'
        'args = { budgets = [{ scope = "session", output_tokens = 2000 }] }\n',
    )
    assert read_config(path).tiers["policy"][0].budgets == (Budget("session", output_tokens=2000),)


def test_a_misspelt_field_names_its_path_and_the_nearest_field(tmp_path: Path) -> None:
    """An unknown field in a nested table is reported by path, with a did-you-mean."""
    path = write(tmp_path, GUARD.replace("role =", "rol ="))
    assert (
        "args.rules.issue_refund.approval.rol: Approval has no field 'rol' (did you mean 'role'?)"
        in finding(path)
    )


def test_a_rewrite_table_without_use_says_to_name_the_class(tmp_path: Path) -> None:
    """A rewrite table must say which rewrite it is."""
    path = write(tmp_path, GUARD.replace('use = "Clamp", ', ""))
    assert "a table here is one of Clamp, Round, InjectState" in finding(path)


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "config" / "lattice.toml"


def test_the_example_declares_every_guard_without_an_import() -> None:
    """The shipped example builds provenance, approvals, redaction, cache, budget and audit."""
    assert "@import" not in EXAMPLE.read_text(encoding="utf-8")
    config = read_config(EXAMPLE)
    built = {type(h).__name__ for tier in config.tiers.values() for h in tier}
    wanted = {"ProvenanceGuard", "ToolGuard", "RedactPII", "ResponseCache", "TokenBudget"}
    assert wanted | {"AuditLog"} <= built
    rule = next(h for h in config.tiers["policy"] if type(h).__name__ == "ToolGuard")
    assert rule.rules["issue_refund"].approval.role_key.name == "user:is_manager"


async def test_the_example_stops_a_refund_over_the_manager_threshold() -> None:
    """Through a real Runner on the example, a refund of 250 by a non-manager does not run."""
    done: list[float] = []

    def issue_refund(charge_id: str, amount: float) -> dict[str, Any]:
        """Refund part of a charge."""
        done.append(amount)
        return {"status": "refunded"}

    def lookup_charge(charge_id: str) -> dict[str, Any]:
        """Look up a charge (the example trusts its output)."""
        return {"charge_id": charge_id}

    model = FakeModel(
        [
            ScriptedResponse.call("issue_refund", charge_id="ch_1", amount=250.0),
            ScriptedResponse.text("ok"),
        ]
    )
    agent = LlmAgent(name="billing", model=model, tools=[lookup_charge, issue_refund])
    lattice = Lattice.from_config(EXAMPLE, on_config_error="raise")
    run = await run_app(agent, lattice, "Refund 250 on ch_1 please.")
    assert done == []
    assert run.tool_responses[0]["code"] == "approval_required"
