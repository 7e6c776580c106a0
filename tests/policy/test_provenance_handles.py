"""Handles as destinations in content: a mention, a messenger or payment handle and a
cashtag are found in a body and grounded only by the same handle in trusted text, through a
real Runner with benign controls; prices, times and CSS at-rules are not handles."""

from __future__ import annotations

import pytest

from adk_lattice.policy.provenance.values import destinations
from tests.policy.test_provenance_content_scan import send


@pytest.mark.parametrize(
    "text",
    [
        "Send the deposit on Venmo to @Acme-Refund-Desk",
        "Our agent handles refunds on Telegram: @acme_refund_desk.",
        "Quickest refund: Cash App $AcmeRefundDesk",
        "<@U024BE7LH> has the refund form",
        "Our agent handles refunds on Telegram: acme_refund_desk",
        "Send the deposit on Venmo - Acme-Refund-Desk",
    ],
)
async def test_an_attacker_handle_in_a_body_is_denied(text: str) -> None:
    """A handle no trusted text holds, written in the body, is denied."""
    mailed = await send(text)
    assert mailed.denied


@pytest.mark.parametrize(
    "typed",
    [
        "Pay me back on Venmo @emma-lindqvist",
        "Message me on Telegram: @emma_lindqvist",
        "Cash App: $EmmaLindqvist",
        "Message me on Telegram: emmalindqvist",
    ],
)
async def test_the_handle_the_user_typed_goes_out(typed: str) -> None:
    """Control: the handle the user typed grounds it in the body."""
    mailed = await send(typed, f"check my mail, then email Bob '{typed}'")
    assert mailed.sent


async def test_another_handle_than_the_users_is_denied() -> None:
    """The user's handle does not ground another one."""
    mailed = await send("Venmo @acme-refunds", "check my mail, then tell Bob my Venmo @emma")
    assert mailed.denied


@pytest.mark.parametrize(
    "text",
    [
        "Lunch at 12:30 today, meet @ 5 or @5pm",
        "It costs $100, or $12.50 with the voucher",
        "<style>@media screen { p { color: red } }</style>Hello",
        "Mail bob@corp.example, see https://social.example/@acme",
        "the signal - it was weak, the discord-badge shows it",
    ],
)
def test_prices_times_at_rules_and_addresses_are_no_handles(text: str) -> None:
    """A price, a time, a CSS at-rule, an address, a link's path, or an app's name as a
    word or inside an identifier, holds no handle."""
    assert "id" not in [kind for kind, _ in destinations(text)]


async def test_a_body_without_a_handle_goes_out_tainted() -> None:
    """Control: a plain body with a price and a time goes out while tainted."""
    mailed = await send("The table is booked for 12:30, about $40 a head.")
    assert mailed.sent
