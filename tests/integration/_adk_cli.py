"""Run ADK's own CLI server (``adk api_server`` / ``adk web``) on a loopback port for a test."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ADK = Path(sys.executable).parent / "adk"
START_TIMEOUT = 90.0
AUDIT_PREFIX = "adk_lattice.audit "

#: ``agent.py`` of an app named ``billing`` on the scripted FakeModel. ``PLUGINS`` is
#: replaced by the App's plugin list. Each turn asks for a refund, then answers.
AGENT_PY = """
from google.adk.agents import LlmAgent
from google.adk.apps import App

from adk_lattice import Lattice, on
from adk_lattice.testing import FakeModel, ScriptedResponse

refunds = []


def issue_refund(charge_id: str) -> dict:
    \"\"\"Refund a charge.\"\"\"
    refunds.append(charge_id)
    return {"status": "refunded", "charge_id": charge_id}


no_refunds = on("before_tool", name="no_refunds")(
    lambda **_: {"status": "denied", "code": "refunds_frozen", "reason": "refunds are frozen"}
)

turn = [ScriptedResponse.call("issue_refund", charge_id="c1"), ScriptedResponse.text("Done.")]
root_agent = LlmAgent(name="billing", model=FakeModel(turn * 8), tools=[issue_refund])
app = App(name="billing", root_agent=root_agent, plugins=PLUGINS)
"""


def write_app(agents_dir: Path, plugins: str) -> None:
    """Write the ``billing`` app into ``agents_dir`` with ``App(plugins=<plugins>)``."""
    app_dir = agents_dir / "billing"
    app_dir.mkdir(parents=True)
    (app_dir / "__init__.py").write_text("from . import agent\n")
    (app_dir / "agent.py").write_text(AGENT_PY.replace("PLUGINS", plugins))


def write_module(directory: Path, name: str, source: str) -> None:
    """Write a module importable by the server (``directory`` goes on its PYTHONPATH)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.py").write_text(textwrap.dedent(source))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A running ADK CLI server and where its log goes."""

    url: str
    log: Path
    process: subprocess.Popen[bytes]

    def run(self, app: str, user: str, session: str, text: str) -> list[dict[str, Any]]:
        """Create the session, then run one turn through ``POST /run``; the events."""
        with httpx.Client(base_url=self.url, timeout=60.0) as client:
            created = client.post(f"/apps/{app}/users/{user}/sessions/{session}", json={})
            created.raise_for_status()
            body = {
                "app_name": app,
                "user_id": user,
                "session_id": session,
                "new_message": {"role": "user", "parts": [{"text": text}]},
            }
            response = client.post("/run", json=body)
            response.raise_for_status()
            events: list[dict[str, Any]] = response.json()
            return events

    def output(self) -> str:
        """Everything the server logged so far."""
        return self.log.read_text(errors="replace")

    def audit_records(self) -> list[dict[str, Any]]:
        """The audit records the server logged through Python logging."""
        return [
            json.loads(line[line.index(AUDIT_PREFIX) + len(AUDIT_PREFIX) :])
            for line in self.output().splitlines()
            if AUDIT_PREFIX + "{" in line
        ]


@contextmanager
def adk_server(
    command: str, agents_dir: Path, *args: str, pythonpath: Path | None = None
) -> Iterator[Server]:
    """Start ``adk <command> --port N <args> <agents_dir>``, wait until it answers, stop it."""
    port = _free_port()
    log = agents_dir.parent / f"{command}-{port}.log"
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), env.get("PYTHONPATH")]))
    argv = [str(ADK), command, "--host", "127.0.0.1", "--port", str(port), "--no-reload"]
    argv += ["--no_use_local_storage", *args, str(agents_dir)]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            argv, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    server = Server(f"http://127.0.0.1:{port}", log, process)
    try:
        _wait_ready(server)
        yield server
    finally:
        _stop(process)


def _wait_ready(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"adk exited with {server.process.returncode}:\n{server.output()}")
        try:
            if httpx.get(server.url + "/list-apps", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"adk did not answer within {START_TIMEOUT} s:\n{server.output()}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)
