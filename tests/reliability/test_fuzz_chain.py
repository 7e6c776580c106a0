"""Whatever a handler returns, the chain hands ADK only None or a value of the hook's type."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from google.adk.models.llm_response import LlmResponse
from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st

from adk_lattice import HOOKS, on
from adk_lattice._chain import guard, run_chain
from adk_lattice._handlers import bind

parts = st.lists(
    st.one_of(
        st.builds(types.Part, text=st.text(max_size=20)),
        st.builds(types.Part),
    ),
    max_size=3,
)
contents = st.builds(types.Content, role=st.sampled_from(["model", "user"]), parts=parts)
anything = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=True),
        st.text(max_size=10),
        st.binary(max_size=10),
        contents,
        st.builds(LlmResponse, content=st.one_of(st.none(), contents)),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(hook=st.sampled_from(HOOKS), value=anything)
def test_any_return_value_is_guarded(hook: str, value: Any) -> None:
    """A handler returning anything yields None or a value the return guard accepts."""
    hooks, _ = bind(on(hook)(lambda **_: value), "handlers")  # type: ignore[arg-type]
    stats: Counter[tuple[str, str, str]] = Counter()
    result, _, _ = asyncio.run(
        run_chain(
            (hooks[hook],),
            hook,  # type: ignore[arg-type]
            {},
            agent=None,
            tool=None,
            partial=False,
            strict=False,
            stats=stats,
            steps=None,
        )
    )
    assert result is None or guard(hook, result) is None  # type: ignore[arg-type]
    if result is None and value is not None:
        assert sum(stats.values()) == 1
