"""The streaming buffer under any chunking: nothing of a value is ever released, and what is
released is always a prefix of the redacted final answer."""

from __future__ import annotations

import itertools

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
