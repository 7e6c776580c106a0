"""ADK's plugin hooks take the keyword arguments the lattice passes its handlers."""

from __future__ import annotations

import inspect

import pytest
from google.adk.plugins.base_plugin import BasePlugin

from adk_lattice._hooks import HOOK_ARGS, HOOKS


@pytest.mark.parametrize("hook", HOOKS)
def test_each_plugin_hook_takes_the_lattices_keywords(hook: str) -> None:
    """Fact: BasePlugin.<hook>_callback takes exactly the keywords the lattice checks for."""
    params = inspect.signature(getattr(BasePlugin, f"{hook}_callback")).parameters
    keywords = tuple(n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY)
    assert keywords == HOOK_ARGS[hook]  # type: ignore[index]
