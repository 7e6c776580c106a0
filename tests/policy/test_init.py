"""The policy package's public surface."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import adk_lattice.policy as policy

SRC = Path(__file__).resolve().parents[2] / "src"


def test_all_is_sorted_and_complete() -> None:
    """__all__ is sorted and names every public class the package exports."""
    public = {
        n for n in dir(policy) if not n.startswith("_") and isinstance(getattr(policy, n), type)
    }
    assert policy.__all__ == sorted(policy.__all__)
    assert set(policy.__all__) == public


def test_importing_the_policies_does_not_load_the_opentelemetry_sdk() -> None:
    """Policies report to telemetry through the API only: the SDK stays unimported."""
    code = (
        "import sys\n"
        "import adk_lattice.policy\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry.sdk')))\n"
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
    assert done.stdout.strip() == "[]"
