"""Scoping that would silently switch a policy off is refused at construction, with the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from adk_lattice import ConfigError, Lattice, configure
from adk_lattice.policy import CallLimits, RedactPII


def test_a_model_call_cap_scoped_to_tools_is_refused() -> None:
    """``CallLimits(max_model_calls=...)`` with ``tools=`` fails, saying to register it unscoped."""
    limits = configure(CallLimits(max_model_calls=3), tools={"lookup"})
    with pytest.raises(TypeError, match=r"max_model_calls with tools= can never count") as info:
        Lattice(policy=[limits])
    assert "on a CallLimits without tools=" in str(info.value)


def test_a_tool_call_cap_scoped_to_tools_is_accepted() -> None:
    """A ``CallLimits`` with only tool caps may be scoped to tools: it counts their calls."""
    limits = configure(CallLimits(max_tool_calls=3), tools={"lookup"})
    assert Lattice(policy=[limits]).chain("before_tool") == ("CallLimits",)


def test_redaction_scoped_to_tools_is_refused() -> None:
    """``RedactPII`` with ``tools=`` fails: it would skip model text; the message says how."""
    with pytest.raises(TypeError, match=r"skips every model answer") as info:
        Lattice(policy=[configure(RedactPII(), tools={"lookup"})])
    assert "remove tools=" in str(info.value) and "restore_args" in str(info.value)


def test_a_config_file_scoping_redaction_to_tools_is_a_finding(tmp_path: Path) -> None:
    """The same mistake in a config file is a finding naming the entry."""
    path = tmp_path / "lattice.toml"
    path.write_text('[[policy]]\nuse = "adk_lattice.policy:RedactPII"\ntools = ["lookup"]\n')
    with pytest.raises(ConfigError) as info:
        Lattice.from_config(path, on_config_error="raise")
    (finding,) = info.value.findings
    assert "[[policy]] #1 (adk_lattice.policy:RedactPII)" in finding
    assert "skips every model answer" in finding
