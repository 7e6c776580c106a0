"""The multi-tenant data agent example runs and never shows another tenant's rows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_example_rewrites_or_denies_a_crafted_tenant() -> None:
    """The example prints acme rows, a denial for the strict guard, and no globex data."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "data_agent" / "main.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    ).stdout
    assert out.count('"invoice": "A-1"') == 2
    assert '"status": "denied"' in out
    assert "G-1" not in out
    assert "cfo@globex" not in out
