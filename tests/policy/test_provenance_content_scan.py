"""What the destination scan reads in content: mapping keys, other IBAN separators, any
slash count after a special scheme, HTML tags, address comments, percent-encoded
``mailto:`` addresses, wallets, and phone numbers under a country code, through a real
Runner with benign controls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from google.adk.agents import LlmAgent

from adk_lattice import Lattice
from adk_lattice.policy import ProvenanceGuard
from adk_lattice.policy.provenance.values import destinations
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.policy.conftest import Run, run_app
from tests.policy.test_provenance_content import Office, guard


@dataclass
class Mailed:
    """One run that tried to mail Bob, and what the office sent."""

    run: Run
    office: Office

    @property
    def sent(self) -> bool:
        """Whether the mail went out."""
        return bool(self.office.effects)

    @property
    def denied(self) -> bool:
        """Whether the mail was denied for a destination in its content."""
        code = self.run.responses("send_email")[0].get("code")
        return not self.sent and code == "ungrounded_content"


async def send(
    body: Any, message: str = "check my mail", g: ProvenanceGuard | None = None
) -> Mailed:
    """Read the inbox (tainting), look up Bob, then mail him ``body``."""
    office = Office()
    script = [
        ScriptedResponse.call("read_inbox"),
        ScriptedResponse.call("list_contacts"),
        ScriptedResponse.call("send_email", to=["bob@corp.example"], subject="Hi", body=body),
        ScriptedResponse.text("done"),
    ]
    worker = LlmAgent(name="assistant", model=FakeModel(script), tools=office.tools())
    return Mailed(await run_app(worker, [Lattice(policy=[g or guard()])], message), office)


# -- mapping keys -------------------------------------------------------------------------


async def test_a_link_written_as_a_mapping_key_is_denied() -> None:
    """A body given as a mapping whose key is the attacker's link is denied."""
    mailed = await send({"https://secure-login.acct-verify.example/reset": "sign in here"})
    assert mailed.denied


async def test_a_nested_address_key_is_denied() -> None:
    """An address that is a key of a nested mapping is scanned too."""
    mailed = await send({"contacts": {"billing@pay-desk.example": "send invoices here"}})
    assert mailed.denied


async def test_a_mapping_with_plain_keys_goes_out() -> None:
    """Keys that are words carry no destination: the mail goes out."""
    mailed = await send({"greeting": "hello", "note": "see you at the review"})
    assert mailed.sent


# -- IBAN separators ----------------------------------------------------------------------

USER_IBAN = "DE89 3704 0044 0532 0130 00"


@pytest.mark.parametrize(
    "iban",
    ["LT17_ATTK_0001_2345_6789_01", "LT17/ATTK/0001/2345/6789/01", "LT 17ATTK00012345678901"],
)
async def test_an_iban_in_other_separators_is_denied(iban: str) -> None:
    """An IBAN grouped by underscores or slashes, or spaced after the code, is scanned."""
    mailed = await send(f"New account for refunds: {iban}")
    assert mailed.denied


@pytest.mark.parametrize("written", ["DE89_3704_0044_0532_0130_00", "DE89.3704.0044.0532.0130.00"])
async def test_the_typed_iban_in_other_separators_goes_out(written: str) -> None:
    """The IBAN the user typed in spaced groups grounds the same IBAN in other groups."""
    mailed = await send(f"Pay me at {written}.", f"check my mail, then mail Bob {USER_IBAN}")
    assert mailed.sent


@pytest.mark.parametrize("text", ["meet at 12 noon in room 4 with the team", "DE 89 3704"])
def test_a_code_and_two_digits_in_prose_is_no_iban(text: str) -> None:
    """Two capitals, a space and two digits followed by a space are prose, not an IBAN."""
    assert [kind for kind, _ in destinations(text)] == []
