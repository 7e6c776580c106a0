"""Declarations checked against the app: a name that names nothing real refuses every run."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.function_tool import FunctionTool

from adk_lattice import Lattice, configure
from adk_lattice.policy import CallLimits, Consequential, ProvenanceGuard
from adk_lattice.testing import FakeModel, LatticeRunner, ScriptedResponse

POLICY_DOC = (Path(__file__).resolve().parents[1] / "docs" / "policy.md").read_text("utf-8")


class Mail:
    """A mail tool that records what it sent."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def send_email(self, to: str, body: str) -> dict[str, str]:
        """Send an email."""
        self.sent.append(to)
        return {"status": "sent"}


def _script(tool: str = "send_email") -> FakeModel:
    call = ScriptedResponse.call(tool, to="x@outside.example", body="the ledger")
    return FakeModel([call, ScriptedResponse.text("Sent.")])


def _guard(tool: str = "send_email", arg: str = "to", **options: Any) -> ProvenanceGuard:
    return ProvenanceGuard({tool: Consequential(args={arg: "email"})}, **options)


def _flat(mail: Mail) -> LlmAgent:
    return LlmAgent(name="desk", model=_script(), tools=[mail.send_email])


class Listed(BaseToolset):
    """A toolset that lists its tools, or fails to, counting each listing."""

    def __init__(self, tools: list[Any], *, fail: bool = False) -> None:
        super().__init__()
        self._tools, self.fail, self.listed = tools, fail, 0

    async def get_tools(self, readonly_context: Any = None) -> list[Any]:
        self.listed += 1
        if self.fail:
            raise ConnectionError("server down")
        return [FunctionTool(t) for t in self._tools]


async def _run(agent: Any, lattice: Lattice, text: str = "mail the ledger") -> list[str]:
    runner = LatticeRunner(agent, lattice=lattice)
    return runner.texts(await runner.run(text))


async def test_a_misspelt_consequential_tool_refuses_the_run_naming_the_nearest() -> None:
    """A guard naming ``send_mail`` refuses the run, the mail is not sent, and the reply
    names the handler, the unknown name and ``send_email``."""
    mail = Mail()
    texts = await _run(_flat(mail), Lattice(policy=[_guard("send_mail")], telemetry=()))
    assert mail.sent == []
    (text,) = texts
    assert "ProvenanceGuard" in text and "'send_mail'" in text
    assert "nearest real name is 'send_email'" in text


async def test_the_right_name_runs() -> None:
    """With the real tool name the same app runs its tool."""
    mail = Mail()
    texts = await _run(_flat(mail), Lattice(policy=[_guard()], telemetry=()))
    assert mail.sent == ["x@outside.example"]
    assert texts == ["Sent."]


async def test_a_misspelt_argument_refuses_the_run_naming_the_parameter() -> None:
    """A sensitive argument the tool does not take (``recipient``) refuses, naming ``to``'s
    tool and the arguments it does take."""
    mail = Mail()
    texts = await _run(_flat(mail), Lattice(policy=[_guard(arg="recipent")], telemetry=()))
    assert mail.sent == []
    assert "'recipent' of 'send_email'" in texts[0]
    assert "the arguments of 'send_email': body, to" in texts[0]


async def test_the_refusal_is_logged_loudly(caplog: pytest.LogCaptureFixture) -> None:
    """Each refused run logs one ERROR line naming the handler and the nearest name."""
    with caplog.at_level(logging.ERROR, logger="adk_lattice"):
        await _run(_flat(Mail()), Lattice(policy=[_guard("send_mail")], telemetry=()))
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert any("every run is refused" in m and "'send_email'" in m for m in lines)


def _transfer_tree(mail: Mail) -> LlmAgent:
    mailer = LlmAgent(name="mailer", model=_script(), tools=[mail.send_email])
    model = FakeModel([ScriptedResponse.call("transfer_to_agent", agent_name="mailer")])
    return LlmAgent(name="desk", model=model, sub_agents=[mailer])


async def test_a_name_only_a_sub_agent_has_is_accepted() -> None:
    """A tool only a sub-agent has (reached by transfer) is a real name for the lattice."""
    mail = Mail()
    texts = await _run(_transfer_tree(mail), Lattice(policy=[_guard()], telemetry=()))
    assert mail.sent == ["x@outside.example"]
    assert "Sent." in texts


async def test_a_misspelt_name_in_a_sub_agent_tree_is_refused() -> None:
    """The same tree with a misspelt name refuses before any agent runs."""
    mail = Mail()
    texts = await _run(_transfer_tree(mail), Lattice(policy=[_guard("send_emails")], telemetry=()))
    assert mail.sent == []
    assert "'send_email'" in texts[0]


async def test_a_tool_of_an_agent_tool_is_a_real_name_and_its_nested_run_is_not_refused() -> None:
    """A tool only the agent behind an AgentTool has is accepted, and the nested run (whose
    root is that agent) shares the app's verdict instead of being checked alone."""
    mail = Mail()
    helper = LlmAgent(name="mailer", model=_script(), tools=[mail.send_email])
    model = FakeModel(
        [ScriptedResponse.call("mailer", request="mail it"), ScriptedResponse.text("Done.")]
    )
    root = LlmAgent(name="desk", model=model, tools=[AgentTool(helper)])
    texts = await _run(root, Lattice(policy=[_guard()], telemetry=()))
    assert mail.sent == ["x@outside.example"]
    assert texts[-1] == "Done."


async def test_the_tree_is_walked_once_per_root_agent() -> None:
    """A second run of the same app does not list the toolsets again (the verdict is kept)."""
    mail = Mail()
    toolset = Listed([mail.send_email])
    model = FakeModel([ScriptedResponse.text("one"), ScriptedResponse.text("two")])
    agent = LlmAgent(name="desk", model=model, tools=[toolset])
    runner = LatticeRunner(agent, lattice=Lattice(policy=[_guard()], telemetry=()))
    await runner.run("hi")
    walked = toolset.listed
    await runner.run("again")
    assert walked >= 1
    assert toolset.listed - walked == 1  # ADK's own listing for the model call, not ours


async def test_a_tool_from_a_toolset_is_a_real_name() -> None:
    """A toolset's tools (listed as ADK lists them) are real names, arguments included."""
    mail = Mail()
    agent = LlmAgent(name="desk", model=_script(), tools=[Listed([mail.send_email])])
    # The toolset is the app's own: declared trusted, its description does not taint.
    guard = _guard(trusted_tools={"send_email": True})
    await _run(agent, Lattice(policy=[guard], telemetry=()))
    assert mail.sent == ["x@outside.example"]


async def test_a_toolset_that_cannot_list_refuses_and_is_asked_again() -> None:
    """A declared name that may live in a toolset that failed to list refuses the run, says
    so, and is checked again at the next run (not remembered)."""
    mail = Mail()
    toolset = Listed([mail.send_email], fail=True)
    agent = LlmAgent(name="desk", model=_script(), tools=[toolset])
    guard = _guard(trusted_tools={"send_email": True})  # the app's own toolset
    runner = LatticeRunner(agent, lattice=Lattice(policy=[guard], telemetry=()))
    texts = runner.texts(await runner.run("mail it"))
    assert mail.sent == []
    assert "could not be listed" in texts[0] and "Listed" in texts[0]
    toolset.fail = False
    await runner.run("mail it again")
    assert mail.sent == ["x@outside.example"]


async def test_dynamic_tools_are_accepted_unseen() -> None:
    """A name listed in ``dynamic_tools`` is not checked (a tool added at run time)."""
    lattice = Lattice(policy=[_guard("added_later")], telemetry=(), dynamic_tools=["added_later"])
    mail = Mail()
    await _run(_flat(mail), lattice)
    assert mail.sent == ["x@outside.example"]


def test_dynamic_tools_must_be_names() -> None:
    """A single string for ``dynamic_tools`` fails at construction, saying what it takes."""
    with pytest.raises(TypeError, match="list of tool names"):
        Lattice(policy=[_guard()], dynamic_tools="added_later")


async def test_a_misspelt_scoping_tool_refuses() -> None:
    """``configure(handler, tools={"send_mial"})`` names a tool too: it is checked."""
    limits = configure(CallLimits(max_tool_calls=1), tools={"send_mial"})
    mail = Mail()
    texts = await _run(_flat(mail), Lattice(policy=[limits], telemetry=()))
    assert mail.sent == []
    assert "CallLimits" in texts[0] and "'send_email'" in texts[0]


async def test_a_misspelt_scoping_agent_refuses() -> None:
    """``agents={"dsk"}`` names an agent the app has not: refused, naming ``desk``."""
    limits = configure(CallLimits(max_tool_calls=0), agents={"dsk"})
    mail = Mail()
    texts = await _run(_flat(mail), Lattice(policy=[limits], telemetry=()))
    assert mail.sent == []
    assert "agent 'dsk'" in texts[0] and "'desk'" in texts[0]


async def test_check_declarations_reports_before_any_run() -> None:
    """``await lattice.check_declarations(root)`` lists the same findings without a run."""
    lattice = Lattice(policy=[_guard("send_mail")], telemetry=())
    (finding,) = await lattice.check_declarations(_flat(Mail()))
    assert "'send_mail'" in finding and "'send_email'" in finding
    assert await Lattice(policy=[_guard()]).check_declarations(_flat(Mail())) == ()


async def test_a_far_name_lists_the_real_ones() -> None:
    """With no close real name the finding lists the app's tools instead."""
    lattice = Lattice(policy=[_guard("wire_funds")], telemetry=())
    (finding,) = await lattice.check_declarations(_flat(Mail()))
    assert "no real name is close" in finding and "send_email" in finding


async def test_declared_names_that_raise_refuse() -> None:
    """A handler whose ``declared_names()`` raises fails closed: its names cannot be read."""

    class Broken:
        def declared_names(self) -> dict[str, frozenset[str]]:
            raise RuntimeError("bug")

        def before_tool(self, *, tool: Any, tool_args: Any, tool_context: Any) -> None:
            return None

    mail = Mail()
    texts = await _run(_flat(mail), Lattice(policy=[Broken()], telemetry=()))
    assert mail.sent == []
    assert "declared_names() raised RuntimeError" in texts[0]


@pytest.mark.parametrize("option", ["tools", "agents"])
def test_a_scoped_provenance_guard_is_refused_at_construction(option: str) -> None:
    """ProvenanceGuard scoped with ``tools=`` or ``agents=`` fails at construction with the
    fix: it must see every call."""
    guard = configure(_guard(), **{option: {"send_email"}})
    with pytest.raises(TypeError, match=f"must see every tool and model call.*remove {option}="):
        Lattice(policy=[guard])


def test_the_documented_check_runs() -> None:
    """The check_declarations example in docs/policy.md runs as shown."""
    section = POLICY_DOC[POLICY_DOC.index("## Declarations checked against the app") :]
    start = section.index("```python\n") + 10
    code = section[start : section.index("```\n", start)]
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/policy.md", "exec"), namespace)
    assert namespace["findings"]


async def test_a_documented_finding_is_what_the_check_prints() -> None:
    """The argument finding shown in docs/policy.md is the text the check writes."""

    def send_money(recipient: str, amount: float) -> dict[str, str]:
        """Send money."""
        return {}

    agent = LlmAgent(name="bank", model=FakeModel(), tools=[send_money])
    guard = ProvenanceGuard({"send_money": Consequential(args={"recipent": "iban"})})
    (finding,) = await Lattice(policy=[guard]).check_declarations(agent)
    assert finding in POLICY_DOC
