"""The helpers every policy shares: the bounded per-invocation map, content text."""

from __future__ import annotations

from google.genai import types

from adk_lattice.policy._common import Keyed, text_of


def test_the_bound_evicts_the_oldest_entry_on_setdefault() -> None:
    """Past max_entries, creating an entry forgets the oldest one and keeps the newest."""
    keyed: Keyed[list[int]] = Keyed(max_entries=2)
    for key in ("a", "b", "c"):
        keyed.setdefault(key, list)
    assert (keyed.get("a"), keyed.get("b"), keyed.get("c")) == (None, [], [])
    assert len(keyed) == 2


def test_the_bound_evicts_the_oldest_entry_on_put() -> None:
    """Past max_entries, putting an entry forgets the oldest one and keeps the newest."""
    keyed: Keyed[int] = Keyed(max_entries=2)
    for i, key in enumerate(("a", "b", "c")):
        keyed.put(key, i)
    assert (keyed.get("a"), keyed.get("b"), keyed.get("c")) == (None, 1, 2)


def test_text_of_joins_text_parts_and_leaves_out_thoughts_and_calls() -> None:
    """A content's text is its text parts joined; thoughts and function calls add nothing."""
    content = types.Content(
        role="model",
        parts=[
            types.Part(text="Hello, "),
            types.Part(text="private reasoning", thought=True),
            types.Part(function_call=types.FunctionCall(name="lookup", args={})),
            types.Part(text="world"),
        ],
    )
    assert text_of(content) == "Hello, world"
    assert text_of(None) == ""


def test_drop_where_forgets_only_that_invocations_keys() -> None:
    """drop_where(inv) forgets the keys of that invocation; other invocations' stay."""
    keyed: Keyed[int] = Keyed()
    keyed.put(("inv-1", "a"), 1)
    keyed.put(("inv-2", "a"), 2)
    keyed.put("inv-1", 3)
    keyed.drop_where("inv-1")
    assert (keyed.get(("inv-1", "a")), keyed.get(("inv-2", "a")), keyed.get("inv-1")) == (
        None,
        2,
        3,
    )
