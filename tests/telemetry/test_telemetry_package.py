"""The telemetry package surface and the lattice's default observers."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from _telemetry_support import agent, run

import adk_lattice.telemetry as telemetry
from adk_lattice import Lattice
from adk_lattice.telemetry import AuditLog, Telemetry
from adk_lattice.testing import ScriptedResponse

SRC = Path(__file__).resolve().parents[2] / "src"


def test_all_is_sorted_and_complete() -> None:
    """__all__ is sorted (constants, classes, functions) and every name in it resolves."""

    def kind(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert telemetry.__all__ == sorted(telemetry.__all__, key=kind)
    public = {n for n in vars(telemetry) if not n.startswith("_") and n[0].isupper()}
    assert public - {"TYPE_CHECKING", "Any"} <= set(telemetry.__all__)
    for name in telemetry.__all__:
        assert getattr(telemetry, name) is not None


def test_observers_do_not_load_the_sdk_module() -> None:
    """Building Telemetry and AuditLog leaves the SDK-importing enable_tracing module unloaded."""
    code = (
        "import sys\n"
        "from adk_lattice import Lattice\n"
        "from adk_lattice.telemetry import Telemetry, AuditLog\n"
        "Lattice(telemetry=[Telemetry(), AuditLog()])\n"
        "print('adk_lattice.telemetry._tracing' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_only_enable_tracing_imports_the_sdk() -> None:
    """Only enable_tracing's modules import opentelemetry.sdk (the others load lazily)."""
    package = SRC / "adk_lattice" / "telemetry"
    importing = sorted(
        p.name for p in package.glob("*.py") if "opentelemetry.sdk" in p.read_text("utf-8")
    )
    assert importing == ["_console.py", "_log_export.py", "_otel.py", "_tracing.py"]


def test_default_lattice_gets_telemetry_and_audit() -> None:
    """Lattice() without telemetry= installs a Telemetry and an AuditLog observer."""
    lattice = Lattice()
    kinds = {type(m) for m in lattice._members}
    assert kinds == {Telemetry, AuditLog}


async def test_default_lattice_audits_each_invocation_to_logging(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A default Lattice logs one audit record per invocation to adk_lattice.audit."""
    caplog.set_level(logging.INFO, logger="adk_lattice.audit")
    await run(agent("root", ScriptedResponse.text("hi")), Lattice(name="adk_lattice.Lattice"))
    (entry,) = [r for r in caplog.records if r.name == "adk_lattice.audit"]
    message = entry.getMessage().removeprefix("adk_lattice.audit ")
    assert json.loads(message)["agents"] == ["root"]


def test_telemetry_rejects_a_non_positive_content_limit() -> None:
    """max_content_chars below 1 is refused."""
    with pytest.raises(ValueError, match="max_content_chars"):
        Telemetry(max_content_chars=0)
