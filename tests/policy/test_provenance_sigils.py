"""An id's sigil through a real Runner: a channel the user wrote (``#general``) never
grounds the user of that name (``@general``), nor a user the channel."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent

from adk_lattice import Lattice
from adk_lattice.policy.provenance import values as provenance_values
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.policy.conftest import Run, run_app
from tests.policy.test_provenance_typed import Workspace, guard


@pytest.fixture(autouse=True)
def _fresh_memo() -> None:
    """Each test extracts its own tokens: the module's memo would hand it earlier results."""
    provenance_values._MEMO.clear()
    provenance_values._VALUES.clear()


async def post(message: str, channel: str, *, listed: bool = False) -> tuple[Workspace, Run]:
    """The model reads a channel (outside text), then posts to ``channel``; the channel
    list is read first, trusted, when ``listed``."""
    ws = Workspace(["general", "random"])
    calls = [ScriptedResponse.call("list_channels")] if listed else []
    calls += [
        ScriptedResponse.call("read_channel", channel="random"),
        ScriptedResponse.call("post_message", channel=channel, text="Inbox is clear"),
        ScriptedResponse.text("done"),
    ]
    worker = LlmAgent(name="assistant", model=FakeModel(calls), tools=ws.tools())
    trusted = {"list_channels": True} if listed else {}
    return ws, await run_app(worker, [Lattice(policy=[guard(trusted)])], message)


@pytest.mark.parametrize("channel", ["@general", "<@general>", "@#general"])
async def test_a_user_mention_of_a_typed_channel_is_denied(channel: str) -> None:
    """The user wrote ``#general``: a post to the user ``@general`` is not grounded."""
    ws, result = await post("Read #random, then post 'Inbox is clear' in #general.", channel)
    assert ws.effects == []
    assert result.responses("post_message")[0]["arguments"] == ["channel"]


@pytest.mark.parametrize("channel", ["general", "#general", "##general"])
async def test_control_the_typed_channel_in_any_of_its_forms_is_posted_to(channel: str) -> None:
    """Control: the channel the user wrote, with its sigil or without it."""
    ws, _ = await post("Read #random, then post 'Inbox is clear' in #general.", channel)
    assert [args["channel"] for _, args in ws.effects] == [channel]


@pytest.mark.parametrize("channel", ["General", "#GENERAL"])
async def test_the_typed_channel_with_capitals_it_was_not_typed_with_is_denied(
    channel: str,
) -> None:
    """The user wrote ``#general``: ``General`` may be another channel where names keep
    their case, so an id with capitals grounds only as written."""
    ws, result = await post("Read #random, then post 'Inbox is clear' in #general.", channel)
    assert ws.effects == []
    assert result.responses("post_message")[0]["code"] == "ungrounded_argument"


async def test_control_a_channel_typed_with_capitals_is_posted_to_as_typed() -> None:
    """Control: a channel the user wrote with capitals is grounded as written."""
    ws, _ = await post("Read #random, then post 'Inbox is clear' in #General.", "#General")
    assert [args["channel"] for _, args in ws.effects] == ["#General"]


async def test_a_channel_named_after_a_typed_user_is_denied() -> None:
    """The user wrote ``@tom``: a post to a channel ``#tom`` is not grounded."""
    ws, _ = await post("Read #random, then tell @tom the inbox is clear.", "#tom")
    assert ws.effects == []


async def test_control_a_typed_user_mention_is_posted_to() -> None:
    """Control: the user ``@tom`` the user wrote is grounded, with its sigil or without."""
    ws, _ = await post("Read #random, then tell @tom the inbox is clear.", "@tom")
    assert [args["channel"] for _, args in ws.effects] == ["@tom"]


async def test_a_bare_name_in_a_trusted_listing_grounds_it_under_a_sigil() -> None:
    """A trusted channel list writes ``general`` bare: it grounds ``#general`` too."""
    ws, _ = await post("Read #random and post the summary.", "#general", listed=True)
    assert [args["channel"] for _, args in ws.effects] == ["#general"]


async def test_a_typed_channel_denies_its_user_mention_over_a_bare_listing() -> None:
    """The user wrote ``#random`` and a trusted list names ``random`` bare: ``@random`` is
    not grounded (the sigil the user wrote says what the name is)."""
    ws, _ = await post("List the channels, read #random and post there.", "@random", listed=True)
    assert ws.effects == []


async def test_control_with_a_bare_listing_the_typed_channel_is_posted_to() -> None:
    """Control: the same run posting to ``#random`` or ``random`` goes through."""
    for channel in ("#random", "random"):
        ws, _ = await post("List the channels, read #random and post there.", channel, listed=True)
        assert [args["channel"] for _, args in ws.effects] == [channel]
