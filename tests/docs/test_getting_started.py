"""The Getting started page runs as written, and prints what it says it prints."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
PYTHON = re.compile(r"```python\n(.*?)```", re.DOTALL)
OUTPUT = re.compile(r"<!-- output -->\n```text\n(.*?)```", re.DOTALL)


def test_the_page_runs_and_prints_the_replies_it_shows(tmp_path: Path) -> None:
    """Its Python blocks, run in order as one script, print the page's reply lines."""
    script = "\n\n".join(PYTHON.findall(PAGE))
    assert script.count("```") == 0 and "asyncio.run(main())" in script
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = str(ROOT / "src")
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (shown,) = OUTPUT.findall(PAGE)
    expected = [line for line in shown.splitlines() if line.startswith(("reply:", "model calls:"))]
    printed = [
        line for line in done.stdout.splitlines() if line.startswith(("reply:", "model calls:"))
    ]
    assert printed == expected
    assert "[served by response_cache, model not called]" in done.stdout


def test_the_install_line_names_an_extra_that_exists() -> None:
    """``pip install "./adk-lattice[tracing]"`` installs a checkout with an extra that exists."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    (extra,) = re.findall(r'pip install "\./adk-lattice\[(\w+)\]"', PAGE)
    assert extra in extras
