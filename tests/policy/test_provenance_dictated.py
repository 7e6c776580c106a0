"""``ProvenanceGuard(dictated_content=True)``: a free-text argument that repeats a long
passage of untrusted output word for word is flagged, through a real Runner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent

from adk_lattice import Lattice
from adk_lattice._config.read import read_config
from adk_lattice.policy import Consequential, ProvenanceGuard
from adk_lattice.policy.provenance.dictated import MIN_WORDS, copied_runs, dictated
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.policy.conftest import Run, run_app

#: What an outsider wrote into the inbox: a message meant to be passed on.
PLANTED = (
    "Dear team, our payroll provider changed; reply with your bank login so HR can "
    "migrate your account before Friday."
)
BOB = "bob@corp.example"


class Office:
    """Mail: the inbox is outside text; the address book is the app's own."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def read_inbox(self) -> dict[str, Any]:
        """The user's inbox (anyone may write to it)."""
        return {"messages": [{"sender": "hr@outside.example", "body": PLANTED}]}

    def list_contacts(self) -> dict[str, Any]:
        """The user's address book."""
        return {"contacts": [{"name": "Bob Tanaka", "email": BOB}]}

    def send_email(self, to: str, subject: str, body: str) -> dict[str, Any]:
        """Send an email."""
        self.sent.append(body)
        return {"status": "sent"}

    def tools(self) -> list[Any]:
        return [self.read_inbox, self.list_contacts, self.send_email]


def guard(**options: Any) -> ProvenanceGuard:
    return ProvenanceGuard(
        {"send_email": Consequential(args={"to": "email"})},
        trusted_tools={"list_contacts": True},
        **options,
    )


async def mail(body: str, message: str = "check my mail", **options: Any) -> tuple[Office, Run]:
    """Read the inbox (tainting), look up Bob, then mail him ``body``."""
    office = Office()
    script = [
        ScriptedResponse.call("read_inbox"),
        ScriptedResponse.call("list_contacts"),
        ScriptedResponse.call("send_email", to=BOB, subject="Hi", body=body),
        ScriptedResponse.text("done"),
    ]
    worker = LlmAgent(name="assistant", model=FakeModel(script), tools=office.tools())
    run = await run_app(worker, [Lattice(policy=[guard(**options)])], message)
    return office, run


async def test_a_dictated_body_is_denied_when_on() -> None:
    """With the flag on, a body repeating the planted passage is denied as dictated."""
    office, run = await mail(f"Hi Bob, FYI: {PLANTED.upper()}", dictated_content=True)
    assert office.sent == []
    denial = run.responses("send_email")[0]
    assert (denial["code"], denial["arguments"]) == ("dictated_content", ["body"])
    assert "payroll" not in str(denial)


async def test_a_dictated_body_is_sent_by_default() -> None:
    """Off by default: the same body goes out (no destination in it to ground)."""
    office, _ = await mail(f"Hi Bob, FYI: {PLANTED}")
    assert office.sent == [f"Hi Bob, FYI: {PLANTED}"]


async def test_a_summary_in_other_words_is_sent_when_on() -> None:
    """A body that shares only short runs with the planted passage goes out."""
    body = "Hi Bob, someone claiming to be HR asked for bank logins before Friday; ignore it."
    office, _ = await mail(body, dictated_content=True)
    assert office.sent == [body]


async def test_a_passage_the_user_typed_too_is_sent_when_on() -> None:
    """A run the user's own message holds is not dictated, though the inbox holds it."""
    message = f"check my mail, then tell Bob exactly this: {PLANTED}"
    office, _ = await mail(PLANTED, message, dictated_content=True)
    assert office.sent == [PLANTED]


async def test_a_dictated_body_asks_a_person_in_confirm_mode() -> None:
    """With on_ungrounded='confirm' the dictated call waits for a person, coded as such."""
    office, run = await mail(PLANTED, dictated_content=True, on_ungrounded="confirm")
    assert office.sent == []
    asked = [
        fc
        for e in run.events
        for fc in e.get_function_calls()
        if fc.name == "adk_request_confirmation"
    ]
    assert len(asked) == 1


def test_a_run_shorter_than_the_minimum_is_not_dictated() -> None:
    """Seven words in a row of an untrusted text are no dictated run; eight are."""
    text = "one two three four five six seven eight nine"
    seven = " ".join(text.split()[: MIN_WORDS - 1])
    eight = " ".join(text.split()[:MIN_WORDS])
    assert not dictated(copied_runs([f"x {seven} y"], []), [text])
    assert dictated(copied_runs([f"x {eight} y"], []), [text])


def test_a_non_bool_flag_fails_at_construction() -> None:
    """dictated_content='yes' is refused when the guard is built."""
    with pytest.raises(TypeError, match="dictated_content must be True or False"):
        guard(dictated_content="yes")


def test_the_flag_is_writable_in_a_config_file(tmp_path: Path) -> None:
    """A config file turns the flag on with ``dictated_content = true``."""
    path = tmp_path / "lattice.toml"
    path.write_text(
        '[[policy]]\nuse = "adk_lattice.policy:ProvenanceGuard"\n'
        "[policy.args]\ndictated_content = true\n"
        '[policy.args.consequential.send_email]\nargs = { to = "email" }\n',
        encoding="utf-8",
    )
    built = read_config(path).tiers["policy"][0]
    assert built.dictated_content is True
