"""A card number is found where other digits run into it, and digit lists stay as written."""

from __future__ import annotations

import pytest
from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.genai import types

from adk_lattice import Lattice
from adk_lattice.policy import RedactPII
from adk_lattice.policy.pii._checks import card_ok
from adk_lattice.testing import FakeModel, ScriptedResponse

from .conftest import run_app

CARDS = RedactPII(kinds=["card"])
SSE = RunConfig(streaming_mode=StreamingMode.SSE)


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        (
            "call +1 415 555 0132 4111 1111 1111 1111",
            "call +1 415 555 0132 [REDACTED:CARD]",
        ),
        ("order 77 4111111111111111", "order 77 [REDACTED:CARD]"),
        ("ref 12 4111 1111 1111 1111 thanks", "ref 12 [REDACTED:CARD] thanks"),
        ("id 5 4111-1111-1111-1111", "id 5 [REDACTED:CARD]"),
        ("ref 9 3782 822463 10005", "ref 9 [REDACTED:CARD]"),  # 4-6-5
        ("qty 3 5555.5555.5555.4444.", "qty 3 [REDACTED:CARD]."),
    ],
)
def test_digits_written_before_a_card_do_not_hide_it(text: str, redacted: str) -> None:
    """A number, phone or quantity written just before a card leaves the card redacted."""
    assert CARDS.scrub(text)[0] == redacted


def test_a_card_followed_by_more_digits_is_still_redacted() -> None:
    """A card followed by a year (``4111 1111 1111 1111 2025``) is redacted, the year kept."""
    assert CARDS.scrub("4111 1111 1111 1111 2025")[0] == "[REDACTED:CARD] 2025"


def test_two_cards_in_one_run_are_both_redacted() -> None:
    """Two cards separated only by a space are each redacted."""
    text = "4111 1111 1111 1111 5555 5555 5555 4444"
    assert CARDS.scrub(text)[0] == "[REDACTED:CARD] [REDACTED:CARD]"


def _luhn_window_without_issuer() -> str:
    """A list of 4-digit numbers whose last four pass Luhn but start with no network's digits."""
    for n in range(10**15, 10**15 + 10_000):
        tail = f"9{n % 10**15:015d}"
        if card_ok(tail):
            return "codes 1234 " + " ".join(tail[k : k + 4] for k in range(0, 16, 4))
    raise AssertionError("no such number")  # pragma: no cover


def test_a_list_inside_a_run_is_no_card_without_a_networks_first_digits() -> None:
    """Inside a run of numbers, 16 digits that pass Luhn but start with 9 are left alone."""
    text = _luhn_window_without_issuer()
    assert CARDS.scrub(text)[0] == text


def test_a_card_after_a_dash_joined_number_is_an_identifier() -> None:
    """Digits joined to a card by a dash read as one identifier, as before (no window there)."""
    assert CARDS.scrub("part 12-4111111111111111")[0] == "part 12-4111111111111111"


def test_a_long_run_of_digit_groups_is_scanned_in_linear_steps() -> None:
    """Ten thousand one-digit groups end in the card they hold, found once."""
    text = " ".join("7" * 10_000) + " 4111 1111 1111 1111"
    assert CARDS.scrub(text)[0].endswith(" [REDACTED:CARD]")


async def test_a_card_after_a_phone_never_reaches_the_user_through_a_runner() -> None:
    """Through a real Runner in SSE mode, a card written after a phone number is redacted."""
    text = "Call +1 415 555 0132 4111 1111 1111 1111 today."
    model = FakeModel([ScriptedResponse(text_chunks=[text[:25], text[25:]])])
    agent = LlmAgent(name="assistant", model=model)
    run = await run_app(agent, [Lattice(policy=[RedactPII()])], "hi", run_config=SSE)
    assert "1111" not in "".join(run.partial_texts)
    assert "1111" not in run.texts[-1]
    assert "[REDACTED:CARD]" in run.texts[-1]


async def test_a_card_after_an_order_number_in_a_users_message_is_redacted() -> None:
    """A user's message reaches the model with the card redacted and the order number kept."""
    model = FakeModel([ScriptedResponse(text_chunks=["noted"])])
    agent = LlmAgent(name="assistant", model=model)
    await run_app(
        agent, [Lattice(policy=[RedactPII(inputs=True)])], "order 77 4111111111111111 please"
    )
    sent = model.requests[0].contents[-1]
    assert isinstance(sent, types.Content)
    assert "".join(p.text or "" for p in sent.parts or []) == "order 77 [REDACTED:CARD] please"
