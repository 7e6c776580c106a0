"""A real ``adk api_server`` with ``--extra_plugins adk_lattice.Lattice`` and a config file."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "config"
ADK = Path(sys.executable).with_name("adk")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve(agents: Path, env: dict[str, str]) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``adk api_server --extra_plugins adk_lattice.Lattice`` on a loopback port, until exit."""
    port = _free_port()
    args = [str(ADK), "api_server", "--host", "127.0.0.1", "--port", str(port)]
    args += ["--session_service_uri", "memory://", "--artifact_service_uri", "memory://"]
    args += ["--extra_plugins", "adk_lattice.Lattice", str(agents)]
    proc = subprocess.Popen(
        args, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                output = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
                pytest.fail(f"adk api_server exited with {proc.returncode}:\n{output[-3000:]}")
            try:
                if httpx.get(f"{base}/list-apps", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("adk api_server did not answer within 60 s")
            time.sleep(0.2)
        yield base, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()


def served_agents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example's agents (ADK writes its files beside the agent)."""
    agents = tmp_path_factory.mktemp("served") / "agents"
    shutil.copytree(EXAMPLE / "agents", agents)
    return agents


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The example's agents served on a loopback port, the lattice built from its config."""
    env = {"ADK_LATTICE_CONFIG": str(EXAMPLE / "lattice.toml")}
    with serve(served_agents(tmp_path_factory), env) as (base, _):
        yield base


def run_refund(base: str, session: str) -> httpx.Response:
    """POST /run with the refund request the example agent turns into an issue_refund call."""
    created = httpx.post(f"{base}/apps/billing/users/u1/sessions/{session}", json={}, timeout=10)
    assert created.status_code == 200, created.text
    body = {
        "app_name": "billing",
        "user_id": "u1",
        "session_id": session,
        "new_message": {"role": "user", "parts": [{"text": "Refund ch_1 in full please."}]},
    }
    return httpx.post(f"{base}/run", json=body, timeout=30)


def _responses(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for event in events:
        for part in (event.get("content") or {}).get("parts") or []:
            response = part.get("function_response") or part.get("functionResponse")
            if response:
                found.append(response["response"])
    return found


def test_a_tool_call_the_config_forbids_is_denied_over_http(server: str) -> None:
    """A guard named only in the config file denies a tool call made through POST /run."""
    reply = run_refund(server, "s1")
    assert reply.status_code == 200, reply.text
    results = _responses(reply.json())
    assert len(results) == 1
    assert results[0]["status"] == "denied"
    assert results[0]["code"] == "schema"
    assert results[0]["policy"] == "ToolGuard"


def test_a_broken_config_refuses_every_run_over_http(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A config with a misspelt class: /run ends refused, the tool never runs, the log names it."""
    bad = tmp_path_factory.mktemp("bad") / "bad.toml"
    bad.write_text(
        '[[policy]]\nuse = "adk_lattice.policy:RequiredState"\nargs = { key = "user:ok" }\n',
        encoding="utf-8",
    )
    agents = served_agents(tmp_path_factory)
    with serve(agents, {"ADK_LATTICE_CONFIG": str(bad)}) as (base, proc):
        reply = run_refund(base, "s2")
        proc.terminate()
        log = proc.communicate(timeout=20)[0].decode(errors="replace")
    assert reply.status_code == 200, reply.text
    events = reply.json()
    assert _responses(events) == []  # no function call was made, so no refund either
    texts = [p.get("text", "") for e in events for p in (e.get("content") or {}).get("parts", [])]
    assert any("refused" in t and "bad.toml" in t for t in texts), texts
    assert f"{bad}: [[policy]] #1 (adk_lattice.policy:RequiredState) use" in log
    assert "every run is refused" in log


def test_a_misspelt_tool_in_the_config_refuses_every_run_over_http(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The example's config with ``issue_refnd`` for ``issue_refund``: /run ends refused, the
    refund never runs, and the reply and the log name the real tool."""
    text = (EXAMPLE / "lattice.toml").read_text(encoding="utf-8")
    misspelt = tmp_path_factory.mktemp("typo") / "lattice.toml"
    misspelt.write_text(text.replace("issue_refund", "issue_refnd"), encoding="utf-8")
    agents = served_agents(tmp_path_factory)
    with serve(agents, {"ADK_LATTICE_CONFIG": str(misspelt)}) as (base, proc):
        reply = run_refund(base, "s3")
        proc.terminate()
        log = proc.communicate(timeout=20)[0].decode(errors="replace")
    assert reply.status_code == 200, reply.text
    events = reply.json()
    assert _responses(events) == []
    texts = [p.get("text", "") for e in events for p in (e.get("content") or {}).get("parts", [])]
    assert any("'issue_refnd'" in t and "'issue_refund'" in t for t in texts), texts
    assert "CallLimits: names the tool 'issue_refnd'" in log
    assert "every run is refused" in log
