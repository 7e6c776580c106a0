"""A real ``adk api_server`` with ``--extra_plugins adk_lattice.Lattice`` and a config file."""

from __future__ import annotations

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


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The example's agents served on a loopback port, the lattice built from its config."""
    agents = tmp_path_factory.mktemp("served") / "agents"
    shutil.copytree(EXAMPLE / "agents", agents)  # ADK writes its files beside the agent
    port = _free_port()
    env = {**os.environ, "ADK_LATTICE_CONFIG": str(EXAMPLE / "lattice.toml")}
    args = [str(ADK), "api_server", "--host", "127.0.0.1", "--port", str(port)]
    args += ["--session_service_uri", "memory://", "--artifact_service_uri", "memory://"]
    args += ["--extra_plugins", "adk_lattice.Lattice", str(agents)]
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
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
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()


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
    session = httpx.post(f"{server}/apps/billing/users/u1/sessions/s1", json={}, timeout=10)
    assert session.status_code == 200, session.text
    body = {
        "app_name": "billing",
        "user_id": "u1",
        "session_id": "s1",
        "new_message": {"role": "user", "parts": [{"text": "Refund ch_1 in full please."}]},
    }
    reply = httpx.post(f"{server}/run", json=body, timeout=30)
    assert reply.status_code == 200, reply.text
    results = _responses(reply.json())
    assert len(results) == 1
    assert results[0]["status"] == "denied"
    assert results[0]["code"] == "schema"
    assert results[0]["policy"] == "ToolGuard"
