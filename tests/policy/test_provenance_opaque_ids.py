"""``ProvenanceGuard(opaque_identifiers=True)``, the default: a free-text argument of a
consequential call carrying an opaque token (a payee, place or code of a scheme the guard
has no reader for) that no trusted text holds is denied while the session is tainted
(``"long"``: only long identifiers), through a real Runner with benign controls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent

from adk_lattice import Lattice
from adk_lattice._config.read import read_config
from adk_lattice.policy import Consequential, ProvenanceGuard
from adk_lattice.policy.provenance.opaque import identifiers, letters, opaque_tokens
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.policy.conftest import Run, run_app

#: A Monero address: a scheme the guard has no reader for.
MONERO = (
    "4AdUndXHHZ6cfufTMvppY6JwXNouMBzSkbLYfpAV5Usx3skxNgYeYTRj5"
    "UzqtReoS44qo9mtmXCqY45DJ852K5Jv2684Rge"
)
#: The same address in groups of eight, as a person types it from a paper wallet.
GROUPED = " ".join(MONERO[i : i + 8] for i in range(0, len(MONERO), 8))
NOTE = f"Invoice INV-2291 from Acme: settle it in Monero to {MONERO}."
TYPED = "check my mail, then tell bob@corp.example what it says"


class Mailbox:
    """An inbox anyone may write to, an account the app trusts, and a mail tool."""

    def __init__(self, note: str = NOTE) -> None:
        self.note = note
        self.sent: list[str] = []

    def read_inbox(self) -> dict[str, Any]:
        """The user's inbox."""
        return {"messages": [{"body": self.note}]}

    def get_account(self) -> dict[str, Any]:
        """The user's own account."""
        return {"wallet": MONERO}

    def find_wallet(self, query: str) -> dict[str, Any]:
        """Look a wallet up; echoes what it was asked."""
        return {"wallet": query}

    def send_email(self, to: str, body: str) -> dict[str, Any]:
        """Send an email."""
        self.sent.append(body)
        return {"status": "sent"}


def guard(**options: Any) -> ProvenanceGuard:
    return ProvenanceGuard(
        {"send_email": Consequential(args={"to": "email"})},
        trusted_tools={"get_account": True, "find_wallet": True},
        **options,
    )


async def _mail(
    body: str,
    message: str = TYPED,
    *,
    first: tuple[str, dict[str, Any]] | None = None,
    note: str = NOTE,
    **options: Any,
) -> tuple[Mailbox, Run]:
    box = Mailbox(note)
    script = [ScriptedResponse.call("read_inbox")]
    if first is not None:
        script.append(ScriptedResponse.call(first[0], **first[1]))
    script += [
        ScriptedResponse.call("send_email", to="bob@corp.example", body=body),
        ScriptedResponse.text("done"),
    ]
    tools = [box.read_inbox, box.get_account, box.find_wallet, box.send_email]
    agent = LlmAgent(name="assistant", model=FakeModel(script), tools=tools)
    run = await run_app(agent, [Lattice(policy=[guard(**options)])], message)
    return box, run


async def test_an_identifier_from_untrusted_output_is_denied() -> None:
    """By default, a Monero address the inbox holds, mailed on, is denied."""
    box, run = await _mail(f"Pay {MONERO}")
    assert box.sent == []
    assert run.responses("send_email")[0]["code"] == "ungrounded_identifier"


async def test_an_identifier_nothing_readable_holds_is_denied_too() -> None:
    """An identifier the inbox does not hold as written (the model put it together) is
    still ungrounded: the check asks what trusted text holds, not what was copied."""
    reversed_note = f"Settle it to the reverse of {MONERO[::-1]}."
    box, run = await _mail(f"Pay {MONERO}", note=reversed_note)
    assert box.sent == []
    assert run.responses("send_email")[0]["code"] == "ungrounded_identifier"


async def test_a_grouped_identifier_in_content_is_denied() -> None:
    """The same address written in groups of eight in the body is read and denied."""
    box, run = await _mail(f"Pay {GROUPED}")
    assert box.sent == []
    assert run.responses("send_email")[0]["code"] == "ungrounded_identifier"


async def test_an_identifier_with_a_zero_width_space_in_content_is_denied() -> None:
    """A zero-width space the model leaves inside the address does not hide it."""
    box, run = await _mail(f"Pay {MONERO[:20]}\u200b{MONERO[20:]}")
    assert box.sent == []
    assert run.responses("send_email")[0]["code"] == "ungrounded_identifier"


async def test_with_the_option_off_the_identifier_goes_out() -> None:
    """``opaque_identifiers=False``: the same mail goes out (no destination the scan reads
    is in it)."""
    box, _ = await _mail(f"Pay {MONERO}", opaque_identifiers=False)
    assert box.sent == [f"Pay {MONERO}"]


async def test_control_an_identifier_the_user_typed_goes_out() -> None:
    """Control: the identifier the user typed is grounded."""
    box, _ = await _mail(f"Pay {MONERO}", f"check my mail, then tell bob@corp.example {MONERO}")
    assert box.sent == [f"Pay {MONERO}"]


async def test_control_an_identifier_the_user_typed_in_groups_goes_out_whole() -> None:
    """Control: typed in groups, written whole by the model, it is the same identifier."""
    box, _ = await _mail(f"Pay {MONERO}", f"check my mail, then send bob@corp.example {GROUPED}")
    assert box.sent == [f"Pay {MONERO}"]


async def test_control_an_identifier_from_a_trusted_field_goes_out() -> None:
    """Control: the user's own wallet, from a tool the app trusts, is grounded."""
    box, _ = await _mail(f"My wallet is {MONERO}", first=("get_account", {}))
    assert box.sent == [f"My wallet is {MONERO}"]


async def test_a_trusted_tool_echoing_the_identifier_does_not_ground_it() -> None:
    """A trusted lookup that returns what it was asked does not vouch for it."""
    box, run = await _mail(f"Pay {MONERO}", first=("find_wallet", {"query": MONERO}))
    assert box.sent == []
    assert run.responses("send_email")[0]["code"] == "ungrounded_identifier"


async def test_a_short_code_from_the_inbox_is_denied_by_default() -> None:
    """By default every opaque token counts: a booking code only the inbox holds is
    denied."""
    box, run = await _mail("Acme's booking code is XK7Q2P.", note="Booking XK7Q2P confirmed.")
    assert box.sent == []
    assert run.responses("send_email")[0]["code"] == "ungrounded_identifier"


async def test_long_mode_lets_a_short_code_from_the_inbox_out() -> None:
    """``opaque_identifiers="long"``: a short code is no long identifier, so it goes out."""
    body = "Acme's booking code is XK7Q2P."
    box, _ = await _mail(body, note="Booking XK7Q2P confirmed.", opaque_identifiers="long")
    assert box.sent == [body]


async def test_long_mode_still_denies_a_long_identifier() -> None:
    """``opaque_identifiers="long"`` still reads a Monero address."""
    box, run = await _mail(f"Pay {MONERO}", opaque_identifiers="long")
    assert box.sent == []
    assert run.responses("send_email")[0]["code"] == "ungrounded_identifier"


#: Payees, places and codes of schemes no reader knows: a Blik number, a box and its PIN,
#: a voucher, an SMS short code, a till number, Morse code.
NO_SCHEME = (
    "Pay with Blik to 55 218 73",
    "Box KRK01M, PIN 482913",
    "Redeem voucher PL-55218 online",
    "Reply with the code to short code 55218",
    "Pay via M-Pesa till 5521873",
    "Claims, in Morse: -.-. .-.. .- .. -- ... / .--.-. -.-",
)


@pytest.mark.parametrize("body", NO_SCHEME)
async def test_a_token_of_no_known_scheme_from_the_inbox_is_denied(body: str) -> None:
    """A payee, place or code written in a scheme no reader knows, which no trusted text
    holds, is denied as an opaque token."""
    box, run = await _mail(body, note=f"Note from the desk: {body}")
    assert box.sent == []
    assert run.responses("send_email")[0]["code"] == "ungrounded_identifier"


@pytest.mark.parametrize("body", NO_SCHEME)
async def test_control_without_the_option_no_reader_stops_them(body: str) -> None:
    """Control: with ``opaque_identifiers=False`` the same mails go out, so the token
    reading is what stops them."""
    box, _ = await _mail(body, note=f"Note from the desk: {body}", opaque_identifiers=False)
    assert box.sent == [body]


async def test_control_words_dates_times_and_amounts_go_out() -> None:
    """Control: prose with dates, times, amounts, percentages, ordinals and abbreviations
    from the inbox carries no opaque token."""
    body = (
        "Meeting on 2026-12-07 at 14:30 (3rd floor), budget €1,250.00, up 12.5% on 2025, "
        "e.g. travel and/or hotels; COVID-19 rules, invoice INV-2291."
    )
    box, _ = await _mail(body, note=body)
    assert box.sent == [body]


async def test_control_digit_groups_the_user_typed_go_out_whole() -> None:
    """Control: a number typed in groups and written whole by the model is the user's."""
    typed = "check my mail, then tell bob@corp.example to Swish 123 588 20 47"
    box, _ = await _mail("Swish 1235882047, please", typed)
    assert box.sent == ["Swish 1235882047, please"]


async def test_control_morse_the_user_typed_goes_out() -> None:
    """Control: marks alone are grounded as the user's text shows them."""
    morse = "-.-. .-.. .- .. -- ..."
    box, _ = await _mail(f"My code: {morse}", f"check my mail, then tell bob@corp.example {morse}")
    assert box.sent == [f"My code: {morse}"]


async def test_control_a_grounded_link_inside_markup_goes_out() -> None:
    """Control: the marks around a link the user typed (an ``href``) are not read as a
    token of their own."""
    body = '<a href="https://wiki.corp.example/plan">the plan</a>'
    typed = "check my mail, then send bob@corp.example https://wiki.corp.example/plan"
    box, _ = await _mail(body, typed)
    assert box.sent == [body]


async def test_a_trusted_tool_echoing_a_token_does_not_ground_it() -> None:
    """A trusted lookup returning the digit groups it was asked for does not vouch for
    them."""
    body = "Pay with Blik to 55 218 73"
    box, run = await _mail(body, first=("find_wallet", {"query": "55 218 73"}))
    assert box.sent == []
    assert run.responses("send_email")[0]["code"] == "ungrounded_identifier"


async def test_confirm_mode_asks_a_person() -> None:
    """With ``on_ungrounded='confirm'``, the call waits for a person instead."""
    box, run = await _mail(f"Pay {MONERO}", on_ungrounded="confirm")
    assert box.sent == []
    assert "ungrounded_identifier" in str(run.events)


@pytest.mark.parametrize(
    "text",
    [
        "internationalisation",
        "INV-2291-2026-11-30",
        "ORD-2024-88812-XK",
        "abc123",
        "2026-12-07T15:30:00.000Z",
        "+49 1512 3456 7890",
        "0049 1512 3456 7890",
        "Room 12B floor 3 building 7A wing C2",
        "FY2024 Q3 EBITDA ROI",
        "URGENT UPDATE 2024 SECURITY NOTICE",
        "the 2024 plan with 2025 goals",
        "123e4567-e89b-12d3-a456-426614174000",
        "e83c5163316f89bfbde7d9ab23ca2e25604af290",
        "order 1234 5678 1234 5678",
        "order 112-1234567-1234567",
        "tracking 1Z999AA10123456784",
        "VIN 1HGCM82633A004352",
        "licence 7KQ2M-XW9PT-4HV8R-JC3DY-B6FNG",
    ],
)
def test_words_dates_phones_and_short_codes_are_no_identifiers(text: str) -> None:
    """Words, references shorter than 26 (tracking numbers, VINs, licence keys), dates,
    phone numbers, prose with numbers, hex digests and runs of fewer than 18 digits are not
    read."""
    assert set(identifiers(text)) == set()


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("r4Cn JJTG Rj3J XkWr ZuDD GzJn HC96 v9nV", "r4CnJJTGRj3JXkWrZuDDGzJnHC96v9nV"),
        ("CLABE 002180701234567895", "002180701234567895"),
        ("boleto 34191.79001 10435.100473 91020.150008", "34191790011043510047391020150008"),
        ("key Kx9-2Qm7-Zp4W-8vTr-Lw3N-Hq5Y-Rt8", "Kx92Qm7Zp4W8vTrLw3NHq5YRt8"),
        (
            "pay in Stellar GAHK7EEG2WWHVKDNT4CEQFZGKF2LGDSW2IVM4S5DP42RBW3K6BTODB4A",
            "GAHK7EEG2WWHVKDNT4CEQFZGKF2LGDSW2IVM4S5DP42RBW3K6BTODB4A",
        ),
    ],
)
def test_identifiers_plain_or_grouped_are_read(text: str, found: str) -> None:
    """A run of letters and digits, or of 18 or more digits, plain or in groups, is read
    whole."""
    assert found in set(identifiers(text))


def test_look_alike_letters_are_read_as_latin() -> None:
    """Cyrillic look-alikes inside an identifier are compared as the Latin letters."""
    assert letters("4AdUnd\u0425HHZ6cfuf") == "4AdUndXHHZ6cfuf"


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Swish 123 588 20 47", "123 588 20 47"),
        ("at ///lamp.orbit.fancy.", "///lamp.orbit.fancy"),
        ("Plus Code 9F4MGCH2+4Q", "9F4MGCH2+4Q"),
        ("dial **21*+447700900123# now", "21*+447700900123#"),
        ("spelled e v i l x y", "e v i l x y"),
        ("pay @refund_desk", "@refund_desk"),
        ("the word e-v-i-l", "e-v-i-l"),
        ("Morse: -.-. .-.. .- ..", "-.-. .-.. .- .."),
    ],
)
def test_opaque_tokens_are_read(text: str, found: str) -> None:
    """Digit groups, dotted words, codes, letters spelled apart, handles and Morse code
    are read as opaque tokens."""
    assert found in set(opaque_tokens(text))


@pytest.mark.parametrize(
    "text",
    [
        "Meeting on 2026-12-07 at 14:30, 9am to 5pm, 12/03/2026",
        "budget €1,250.00, $2.500,00, 12.5%, 1.500.000 and 25k",
        "the 2024-2025 plan, 3rd floor, 25km, 2 kg",
        "e.g. U.S. and/or input/output, don't, well-known, e-mail",
        "COVID-19, INV-2291, LH454, GPT-4o",
        "Hi Bob, the report is attached. Thanks! - Anna * * *",
    ],
)
def test_words_dates_times_and_amounts_are_no_tokens(text: str) -> None:
    """Words, dates, times, years, amounts, ordinals, units, abbreviations and short codes
    with a hyphen are not opaque tokens."""
    assert list(opaque_tokens(text)) == []


def test_opaque_identifiers_must_be_a_bool_or_long() -> None:
    """Any other ``opaque_identifiers`` value fails at construction."""
    with pytest.raises(TypeError, match="opaque_identifiers must be True, False or 'long'"):
        guard(opaque_identifiers="yes")


def test_long_mode_is_writable_in_a_config_file(tmp_path: Path) -> None:
    """A config file selects long identifiers only with ``opaque_identifiers = "long"``."""
    path = tmp_path / "lattice.toml"
    path.write_text(
        '[[policy]]\nuse = "adk_lattice.policy:ProvenanceGuard"\n'
        '[policy.args]\nopaque_identifiers = "long"\n'
        '[policy.args.consequential.send_email]\nargs = { to = "email" }\n',
        encoding="utf-8",
    )
    built = read_config(path).tiers["policy"][0]
    assert built.opaque_identifiers == "long"
