"""Every separator people write between digit groups, for every digit kind, with and
without the ``pii`` extra: the same redaction either way."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from hypothesis import given, settings
from hypothesis import strategies as st

from adk_lattice import Lattice
from adk_lattice.policy import RedactPII
from adk_lattice.policy.pii import _phone
from adk_lattice.policy.pii._checks import card_ok
from adk_lattice.testing import FakeModel, ScriptedResponse, callback_context

from .conftest import run_app

#: What people write between digit groups: spaces, no-break spaces, dashes, dots, slashes,
#: zero-width characters and line breaks.
SEPARATORS = (
    " ", "\u00a0", "\u202f", "-", ".", "/", "\u200b", "\u2060", "\ufeff", "\n", "\r\n", "\t",
)  # fmt: skip

#: Values of each digit kind, grouped as they are written (the groups joined by a separator).
VALUES: dict[str, tuple[tuple[str, ...], ...]] = {
    "CARD": (
        ("4111", "1111", "1111", "1111"),
        ("5555", "5555", "5555", "4444"),
        ("3782", "822463", "10005"),  # 4-6-5
        ("3056", "930902", "5904"),  # 4-6-4
        ("4222", "2222", "2222", "2"),  # 13 digits
        ("4111", "1111", "1111", "1111", "110"),  # 19 digits
    ),
    "IBAN": (
        ("DE89", "3704", "0044", "0532", "0130", "00"),
        ("GB82", "WEST", "1234", "5698", "7654", "32"),
        ("FR14", "2004", "1010", "0505", "0001", "3M02", "606"),
    ),
    "SSN": (("123", "45", "6789"), ("078", "05", "1120")),
    # A secret whose value is a run of digits, after its name.
    "SECRET": (("1234", "5678", "9012"), ("8472", "1934", "5521", "07")),
}
#: What a value may stand between.
CONTEXTS = (("pay ", " now"), ("", ""), ("Card: ", "."), ("(", ")"), ("it is ", ", thanks"))

SSE = RunConfig(streaming_mode=StreamingMode.SSE)
DOTTED = (
    "4111.1111.1111.1111",
    "4111/1111/1111/1111",
    "4111.1111-1111 1111",
    "4111.\u200b1111.\u200b1111.\u200b1111",
    "4111.\u00a01111.\u00a01111.\u00a01111",
    "4111.1111.1111.1111".replace(".", "\u2060.", 1),
)


@contextmanager
def _without_the_extra() -> Iterator[None]:
    """RedactPII built inside reads phone numbers with the fallback pattern."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_phone, "_pn", None)
        yield


def _both(**kwargs: object) -> tuple[RedactPII, RedactPII]:
    """The same RedactPII with the ``pii`` extra and without it."""
    with_extra = RedactPII(**kwargs)  # type: ignore[arg-type]
    with _without_the_extra():
        without = RedactPII(**kwargs)  # type: ignore[arg-type]
    return with_extra, without


WITH, WITHOUT = _both()


def test_the_two_redactors_read_phones_differently() -> None:
    """One redactor reads phone numbers with libphonenumber, the other with the pattern."""
    assert WITH.detectors != WITHOUT.detectors
    # A national number of a region other than the default: only the pattern reads it.
    text = "call 030 1234 5678 now"
    assert WITH.scrub(text)[0] != WITHOUT.scrub(text)[0]


def _written(kind: str, groups: Sequence[str], gaps: Sequence[str]) -> tuple[str, str]:
    """The value written with ``gaps`` between its groups, and what it redacts to."""
    value = groups[0] + "".join(g + v for g, v in zip(gaps, groups[1:], strict=False))
    if kind == "SECRET":
        return f"password: {value}", "password: [REDACTED:SECRET]"
    return value, f"[REDACTED:{kind}]"


@st.composite
def _values(draw: st.DrawFn) -> tuple[str, str]:
    kind = draw(st.sampled_from(sorted(VALUES)))
    groups = draw(st.sampled_from(VALUES[kind]))
    if kind == "SSN":  # one separator, twice (what makes an SSN of nine digits)
        gaps = [draw(st.sampled_from(SEPARATORS))] * 2
    else:
        gaps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=6, max_size=6))
    value, redacted = _written(kind, groups, gaps)
    # A secret's value runs to the end of its token: punctuation right after it goes too.
    contexts = [c for c in CONTEXTS if kind != "SECRET" or c[1][:1] in ("", " ")]
    before, after = draw(st.sampled_from(contexts))
    return before + value + after, before + redacted + after


@settings(deadline=None, max_examples=300)
@given(_values())
def test_every_separator_is_redacted_alike_with_and_without_the_extra(
    case: tuple[str, str],
) -> None:
    """A card, IBAN, SSN or digit secret with any separators redacts whole, extra or not."""
    text, expected = case
    assert WITH.scrub(text)[0] == expected
    assert WITHOUT.scrub(text)[0] == expected


@pytest.mark.parametrize("kind", sorted(VALUES))
@pytest.mark.parametrize("separator", SEPARATORS, ids=repr)
def test_each_kind_reads_each_separator_alone(kind: str, separator: str) -> None:
    """Each kind is caught by its own detector with each separator, other kinds off."""
    groups = VALUES[kind][0]
    value, redacted = _written(kind, groups, [separator] * (len(groups) - 1))
    r = RedactPII(kinds=[kind.lower()])
    assert r.scrub(f"see {value} now")[0] == f"see {redacted} now"


def _streamed(r: RedactPII, chunks: Sequence[str]) -> tuple[str, str]:
    """What the partial chunks released, joined, and the final answer, through after_model."""
    ctx = callback_context()
    released = []
    for chunk in chunks:
        resp = LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=chunk)]), partial=True
        )
        r.after_model(callback_context=ctx, llm_response=resp)
        assert resp.content is not None
        released.append("".join(p.text or "" for p in resp.content.parts or ()))
    final = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="".join(chunks))]),
        partial=False,
    )
    r.after_model(callback_context=ctx, llm_response=final)
    assert final.content is not None
    return "".join(released), "".join(p.text or "" for p in final.content.parts or ())


@pytest.mark.parametrize("extra", ["with", "without"])
@pytest.mark.parametrize("card", DOTTED, ids=repr)
def test_a_dotted_card_streams_redacted_at_every_split(card: str, extra: str) -> None:
    """A card with dots or slashes split at any offset never streams out, extra or not."""
    text = f"The card on file is {card}. Anything else?"
    expected = "The card on file is [REDACTED:CARD]. Anything else?"
    for cut in range(1, len(text)):
        r = RedactPII() if extra == "with" else _without()
        released, final = _streamed(r, [text[:cut], text[cut:]])
        assert "1111" not in released and expected.startswith(released), cut
        assert final == expected, cut


def _without() -> RedactPII:
    with _without_the_extra():
        return RedactPII()


@pytest.mark.parametrize("extra", ["with", "without"])
@pytest.mark.parametrize("card", DOTTED, ids=repr)
def test_a_dotted_card_in_a_whole_answer_is_redacted(card: str, extra: str) -> None:
    """A whole answer holding a card with dots or slashes reads it redacted, extra or not."""
    r = WITH if extra == "with" else WITHOUT
    assert r.scrub(f"Your card {card} is saved.")[0] == "Your card [REDACTED:CARD] is saved."


@pytest.mark.parametrize("extra", ["with", "without"])
async def test_a_dotted_card_streamed_through_a_runner_is_redacted(extra: str) -> None:
    """Through a real Runner in SSE mode, 4111.1111.1111.1111 never reaches the user."""
    text = "Sure: 4111.1111.1111.1111 is the card you asked me to format."
    for cut in range(text.index("4111") - 1, text.index(" is the")):
        redactor = RedactPII() if extra == "with" else _without()
        model = FakeModel([ScriptedResponse(text_chunks=[text[:cut], text[cut:]])])
        agent = LlmAgent(name="assistant", model=model)
        run = await run_app(agent, [Lattice(policy=[redactor])], "hi", run_config=SSE)
        assert "1111" not in "".join(run.partial_texts), cut
        assert run.texts[-1] == "Sure: [REDACTED:CARD] is the card you asked me to format.", cut


@pytest.mark.parametrize(
    "text",
    [
        "Version 2.69.83482.71775 is out.",  # a version with build numbers
        "OID 1.2.840.615150.2.79.25 signed.",  # an object identifier
        "Host 93.88.41.238 228.229 up.",  # an address and more digits
        "From 2020.04.14 2004.08.14 inclusive.",  # two dotted dates
        '{"score": 0.6637953328363724}',  # a float as a program prints it
    ],
)
def test_a_dotted_number_passing_luhn_is_no_card(text: str) -> None:
    """Digits that pass Luhn but are dotted as a version, date or decimal stay as written."""
    assert RedactPII(kinds=["card"]).scrub(text)[0] == text


@pytest.mark.parametrize(
    ("candidate", "expected"),
    [
        ("4111.1111.1111.1111", True),
        ("3782.822463.10005", True),  # 4-6-5
        ("3056/930902/5904", True),  # 4-6-4
        ("4111.1111.1111.1111.110", True),  # 19 digits
        ("41.11.11.11.11.11.11.11", False),  # pairs: no card is printed so
        ("411.111.111.111.1111", False),
        ("4111 11 11 1111 1111", True),  # spaces and dashes: any grouping
        ("4111.1111.1111.1112", False),  # fails Luhn
    ],
)
def test_card_ok_reads_dots_and_slashes_only_in_a_cards_grouping(
    candidate: str, expected: bool
) -> None:
    """card_ok wants Luhn, and a card's own grouping when a dot or slash separates groups."""
    assert card_ok(candidate) is expected


def test_a_card_whose_first_digits_dial_is_still_a_card_with_the_extra() -> None:
    """A card whose first ten digits are a valid US number is redacted as a card, brackets kept."""
    assert WITH.scrub("(3056 930902 5904)")[0] == "([REDACTED:CARD])"
