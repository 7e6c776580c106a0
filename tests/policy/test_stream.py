"""The streaming buffer under any chunking: nothing of a value is ever released, and what is
released is always a prefix of the redacted final answer."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adk_lattice.policy import RedactPII
from adk_lattice.testing import callback_context, llm_response

KEY = "sk-" + "a1B2c3D4e5" * 30
PEM = (
    "-----BEGIN PRIVATE KEY-----\n"
    + "\n".join(["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" * 1] * 12)
    + "\n-----END PRIVATE KEY-----"
)
VALUES = [KEY, PEM, "jane.doe@example.com", "4111 1111 1111 1111", "123-45-6789"]


def _stream(text: str, cuts: list[int], redactor: RedactPII) -> tuple[str, str]:
    """Released text of every chunk, and the final answer, through after_model."""
    ctx = callback_context()
    bounds = [0, *sorted(set(cuts)), len(text)]
    released = []
    for a, b in itertools.pairwise(bounds):
        chunk = llm_response(text[a:b])
        chunk.partial = True
        redactor.after_model(callback_context=ctx, llm_response=chunk)
        assert chunk.content is not None and chunk.content.parts is not None
        released.append("".join(p.text or "" for p in chunk.content.parts))
    final = llm_response(text)
    redactor.after_model(callback_context=ctx, llm_response=final)
    assert final.content is not None and final.content.parts is not None
    return "".join(released), "".join(p.text or "" for p in final.content.parts)


@settings(max_examples=60, deadline=None)
@given(
    value=st.sampled_from(VALUES),
    before=st.text(alphabet="abc ,.\n", max_size=120),
    after=st.text(alphabet="xyz ,.\n", max_size=120),
    cuts=st.lists(st.integers(min_value=1, max_value=1200), max_size=12),
)
def test_no_chunking_releases_part_of_a_value(
    value: str, before: str, after: str, cuts: list[int]
) -> None:
    """Any chunking releases no piece of a value, and only a prefix of the final answer."""
    text = f"{before} {value} {after}"
    released, final = _stream(text, [c for c in cuts if c < len(text)], RedactPII(hold=48))
    assert final.startswith(released)
    assert value not in final
    probe = value[len(value) // 2 : len(value) // 2 + 8]
    assert probe not in released


SPACED = [
    "jane (at) example (dot) com",
    "jane [at] example [dot] co [dot] uk",
    "password = hunter2hunter2",
    "4111 1111 1111 1111",
    "**4111** **1111** **1111** **1111**",
    "4111\u00a01111\u00a01111\u00a01111",
    "+1 415 555 0132",
    "(415) 555-0132",
    "( +1 415 555 0132",
    "GB82 WEST 1234 5698 7654 32",
    "123-45-6789",
    "jane%40example.com",
    '{"password": "hunter2hunter2"}',
    "api_key='sk-abcdefghijklmnopqrstuvwx'",
]


@pytest.mark.parametrize("value", SPACED)
@pytest.mark.parametrize(
    ("before", "after"),
    [("From the vault: ", ". Anything else? Let me know."), ("    x = call(", ")\n    y = 0\n")],
)
def test_a_value_a_space_splits_is_held_whole_in_chunks_of_any_size(
    value: str, before: str, after: str
) -> None:
    """Held only while a value may still be growing, a spaced value never leaks in any chunking."""
    text = f"{before}{value}{after}"
    expected, _ = RedactPII().scrub(text)
    assert value not in expected
    for size in range(1, 18):
        for first in (0, size // 2):
            cuts = [first, *range(first + size, len(text), size)] if first else []
            cuts = cuts or list(range(size, len(text), size))
            released, final = _stream(text, cuts, RedactPII())
            assert final == expected
            assert expected.startswith(released), (size, first, released)


def test_a_closed_number_does_not_hold_the_words_after_it() -> None:
    """A number a word has closed is read whole already: the text after it is not held."""
    text = "    balance = 0\n    for entry in ledger.open_entries(account):\n"
    ctx = callback_context()
    chunk = llm_response(text)
    chunk.partial = True
    RedactPII().after_model(callback_context=ctx, llm_response=chunk)
    assert chunk.content is not None and chunk.content.parts is not None
    assert "".join(p.text or "" for p in chunk.content.parts) == text


@settings(max_examples=80, deadline=None)
@given(
    value=st.sampled_from(SPACED),
    before=st.text(alphabet="ab(at)c ,.\n=:'\"!", max_size=60),
    after=st.text(alphabet="xyz ,.\n)(=", max_size=60),
    cuts=st.lists(st.integers(min_value=1, max_value=200), max_size=14),
)
def test_no_chunking_of_code_or_punctuation_releases_part_of_a_spaced_value(
    value: str, before: str, after: str, cuts: list[int]
) -> None:
    """Brackets, quotes, ``=`` and line breaks around a spaced value never let a piece out."""
    text = f"{before} {value} {after}"
    expected, _ = RedactPII(hold=48).scrub(text)
    released, final = _stream(text, [c for c in cuts if c < len(text)], RedactPII(hold=48))
    assert final == expected
    assert expected.startswith(released)
