"""``ProvenanceGuard(opaque_identifiers=True)``, the default: a free-text argument of a
consequential call carrying an opaque identifier (a payee of a scheme the guard has no
reader for) that no trusted text holds is denied while the session is tainted, through a
real Runner with benign controls."""

from __future__ import annotations

from typing import Any

import pytest
from google.adk.agents import LlmAgent

from adk_lattice import Lattice
from adk_lattice.policy import Consequential, ProvenanceGuard
from adk_lattice.policy.provenance.opaque import identifiers, letters
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


async def test_control_a_short_reference_from_the_inbox_goes_out() -> None:
    """Control: a short reference the inbox holds (``INV-2291``) is no opaque identifier."""
    box, _ = await _mail("Acme sent invoice INV-2291.")
    assert box.sent == ["Acme sent invoice INV-2291."]


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


def test_opaque_identifiers_must_be_a_bool() -> None:
    """A non-boolean ``opaque_identifiers`` fails at construction."""
    with pytest.raises(TypeError, match="opaque_identifiers must be True or False"):
        guard(opaque_identifiers="yes")
