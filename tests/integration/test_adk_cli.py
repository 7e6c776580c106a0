"""The lattice under ADK's own CLI servers, started as subprocesses on a loopback port."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.integration._adk_cli import adk_server, write_app, write_module


def _tool_responses(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        part["functionResponse"]["response"]
        for event in events
        for part in (event.get("content") or {}).get("parts") or []
        if part.get("functionResponse")
    ]


def test_extra_lattice_stands_down_next_to_the_apps_own(tmp_path: Path) -> None:
    """--extra_plugins adk_lattice.Lattice next to App.plugins' Lattice: one audit record."""
    agents = tmp_path / "agents"
    write_app(agents, '[Lattice(name="billing_guard", policy=[no_refunds])]')
    extra = ("--extra_plugins", "adk_lattice.Lattice")
    with adk_server("api_server", agents, *extra) as server:
        events = server.run("billing", "u1", "s1", "refund c1")
        first = server.run("billing", "u1", "s2", "refund c1 again")
        assert _tool_responses(events)[0]["code"] == "refunds_frozen"
        assert _tool_responses(first)[0]["code"] == "refunds_frozen"
        records = server.audit_records()
        output = server.output()
    assert len(records) == 2  # two invocations, one record each
    assert {r["session"] for r in records} == {"s1", "s2"}
    assert all(r["tool_calls"][0]["decision"] == "deny" for r in records)
    warnings = [line for line in output.splitlines() if "two Lattice plugins" in line]
    assert len(warnings) == 1
    assert "'billing_guard'" in warnings[0]
    assert "'adk_lattice.Lattice'" in warnings[0]


def test_extra_plugins_takes_a_configured_instance(tmp_path: Path) -> None:
    """--extra_plugins guards.lattice uses the module's Lattice instance, policies and all."""
    agents = tmp_path / "agents"
    write_app(agents, "[]")
    audit = tmp_path / "audit.jsonl"
    write_module(
        tmp_path / "pkgs",
        "guards",
        f"""
        from adk_lattice import Lattice, on
        from adk_lattice.telemetry import AuditLog

        deny = on("before_tool", name="frozen")(
            lambda **_: {{"status": "denied", "code": "frozen_by_guards", "reason": "frozen"}}
        )
        lattice = Lattice(name="guards", policy=[deny], telemetry=[AuditLog({str(audit)!r})])
        """,
    )
    extra = ("--extra_plugins", "guards.lattice")
    with adk_server("api_server", agents, *extra, pythonpath=tmp_path / "pkgs") as server:
        events = server.run("billing", "u1", "s1", "refund c1")
    assert _tool_responses(events)[0]["code"] == "frozen_by_guards"
    (record,) = [json.loads(line) for line in audit.read_text().splitlines()]
    assert record["tool_calls"][0]["decision"] == "deny"


def test_audit_records_are_recognisable_in_adks_cli_log(tmp_path: Path) -> None:
    """Under ADK's CLI log format (no logger name) each audit line starts with a fixed prefix."""
    agents = tmp_path / "agents"
    write_app(agents, '[Lattice(name="billing_guard")]')
    with adk_server("api_server", agents) as server:
        server.run("billing", "u1", "s1", "refund c1")
        lines = [line for line in server.output().splitlines() if "adk_lattice.audit {" in line]
    assert len(lines) == 1
    assert "INFO" in lines[0]


def test_adk_web_dev_ui_shows_lattice_span_attributes(tmp_path: Path) -> None:
    """Under adk web the session trace endpoint carries the lattice's span attributes."""
    agents = tmp_path / "agents"
    write_app(agents, '[Lattice(name="billing_guard", policy=[no_refunds])]')
    with adk_server("web", agents) as server:
        server.run("billing", "u1", "s1", "refund c1")
        trace = httpx.get(f"{server.url}/dev/apps/billing/debug/trace/session/s1", timeout=30)
    assert trace.status_code == 200
    attributes = json.dumps(trace.json())
    assert "adk_lattice." in attributes
    assert "no_refunds" in attributes
