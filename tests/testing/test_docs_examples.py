"""The test files shown in docs/testing.md pass when run with the plugin."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "testing.md"
SRC = ROOT / "src"
PLUGIN = "adk_lattice.testing.pytest_plugin"
BLOCK = re.compile(r"<!-- file: (?P<name>[\w.]+) -->\n```python\n(?P<code>.*?)```", re.DOTALL)
INI = """
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
filterwarnings =
    error
    ignore::UserWarning:google.adk.*
    ignore::DeprecationWarning:google.*
    ignore::DeprecationWarning:pydantic.*
    ignore::pydantic.warnings.PydanticDeprecatedSince20
"""


def doc_files() -> dict[str, str]:
    return {m["name"]: m["code"] for m in BLOCK.finditer(DOC.read_text(encoding="utf-8"))}


def test_docs_show_test_files() -> None:
    """The guide carries its example files (so the run below checks something)."""
    assert len(doc_files()) >= 6


def test_doc_examples_pass(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every example test in the guide passes against the current package."""
    files = doc_files()
    pytester.makeini(INI)
    for name, code in files.items():
        (pytester.path / name).write_text(code, encoding="utf-8")
    # A separate process: the examples' module names must not meet this suite's.
    pythonpath = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
    monkeypatch.setenv("PYTHONPATH", pythonpath)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    args = ("-p", "pytest_asyncio.plugin", "-p", PLUGIN, "-p", "no:cacheprovider", "-q")
    result = pytester.runpytest_subprocess(*args)
    expected = sum(
        code.count("\ndef test_") + code.count("\nasync def test_") for code in files.values()
    )
    result.assert_outcomes(passed=expected)
