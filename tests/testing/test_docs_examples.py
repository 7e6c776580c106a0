"""The test files shown in docs/testing.md pass when run with the plugin."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import pytest_asyncio.plugin

import adk_lattice.testing.pytest_plugin

pytest_plugins = ["pytester"]

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
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
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    plugins = [pytest_asyncio.plugin, adk_lattice.testing.pytest_plugin]
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", plugins=plugins)
    expected = sum(
        code.count("\ndef test_") + code.count("\nasync def test_") for code in files.values()
    )
    result.assert_outcomes(passed=expected)
