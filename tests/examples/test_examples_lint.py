"""The project's own examples pass its own model-facing and state-key lint."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from adk_lattice.state import REGISTRY
from adk_lattice.testing import FakeModel, assert_tools_neutral, undeclared_state_keys

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"example_{name}", ROOT / f"examples/{name}/main.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_billing_tools_are_neutral() -> None:
    """The billing demo's tools, sub-agent and transfer text carry no banned phrase."""
    billing = _load("billing")
    assert_tools_neutral(billing.build_agent(FakeModel(), FakeModel()))


def test_tracing_example_tools_are_neutral() -> None:
    """The tracing example's agents, AgentTool and transfer text carry no banned phrase."""
    assert_tools_neutral(_load("tracing").build_agents())


def test_examples_use_only_declared_state_keys() -> None:
    """Every literal state key in the examples and the package is a declared StateKey."""
    for name in ("billing", "data_agent", "tracing"):
        _load(name)
    findings = undeclared_state_keys([ROOT / "examples", ROOT / "src"], REGISTRY)
    assert findings == []


def test_lint_cli_passes_on_the_tracing_example() -> None:
    """`python -m adk_lattice lint tools` exits 0 on the tracing example, as CI would run it."""
    proc = subprocess.run(
        [sys.executable, "-m", "adk_lattice", "lint", "tools", "main:build_agents"],
        cwd=ROOT / "examples/tracing",
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
