"""ProvenanceGuard across topologies: parallel calls, streaming, transfers, AgentTool,
audit and spotlighting, through real Runners."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.tools.agent_tool import AgentTool

from adk_lattice import Lattice, on
from adk_lattice.policy import Consequential, ProvenanceGuard, Round, ToolGuard, ToolRule
from adk_lattice.policy.provenance.taint import TAINT_KEY, session_hash
from adk_lattice.telemetry import AuditLog
from adk_lattice.testing import FakeModel, FunctionCall, ScriptedResponse
from tests.policy.conftest import run_app, user
from tests.policy.test_provenance_runner import (
    ATTACKER_IBAN,
    INJECTION,
    USER_IBAN,
    Bank,
    agent,
    guard,
    inbox_then_pay,
    pay,
)


async def test_parallel_calls_are_checked_one_by_one() -> None:
    """Two payments in one tainted response: the grounded one runs, the other is denied."""
    bank = Bank()
    both = ScriptedResponse(
        function_calls=[
            FunctionCall("send_money", {"recipient": USER_IBAN, "amount": 20}),
            FunctionCall("send_money", {"recipient": ATTACKER_IBAN, "amount": 20}),
        ]
    )
    script = [ScriptedResponse.call("read_inbox"), both, ScriptedResponse.text("ok")]
    message = f"read mail and pay 20 to {USER_IBAN}"
    run = await run_app(agent(bank, script), [Lattice(policy=[guard()])], message)
    assert bank.sent == [(USER_IBAN, 20)]
    assert [r["status"] for r in run.responses("send_money")] == ["sent", "denied"]


async def test_concurrent_async_calls_are_checked_one_by_one() -> None:
    """Async tools running concurrently in a tainted session are each checked on their own."""
    sent: list[str] = []

    async def read_inbox() -> dict[str, object]:
        """Read the user's inbox."""
        return {"body": INJECTION}

    async def send_money(recipient: str, amount: float) -> dict[str, object]:
        """Send money to an IBAN."""
        await asyncio.sleep(0.01)
        sent.append(recipient)
        return {"status": "sent"}

    both = ScriptedResponse(
        function_calls=[
            FunctionCall("send_money", {"recipient": ATTACKER_IBAN, "amount": 20}),
            FunctionCall("send_money", {"recipient": USER_IBAN, "amount": 20}),
        ]
    )
    script = [ScriptedResponse.call("read_inbox"), both, ScriptedResponse.text("ok")]
    worker = LlmAgent(name="a", model=FakeModel(script), tools=[read_inbox, send_money])
    run = await run_app(worker, [Lattice(policy=[guard()])], f"mail, then pay 20 to {USER_IBAN}")
    assert sent == [USER_IBAN]
    assert [r["status"] for r in run.responses("send_money")] == ["denied", "sent"]


@pytest.mark.parametrize("reads", [1, 2])
async def test_parallel_sibling_output_does_not_taint_its_sibling(reads: int) -> None:
    """A call made beside inbox reads, before the model saw them, is judged on the taint
    before any of them (a second read does not move that snapshot), so it is not checked."""
    bank = Bank()
    calls = [FunctionCall("read_inbox", {}) for _ in range(reads)]
    calls.append(FunctionCall("send_money", {"recipient": ATTACKER_IBAN, "amount": 20}))
    batch = ScriptedResponse(function_calls=calls)
    await run_app(
        agent(bank, [batch, ScriptedResponse.text("ok")]), [Lattice(policy=[guard()])], "go"
    )
    assert bank.sent == [(ATTACKER_IBAN, 20)]


async def test_streaming_mode_denies_too() -> None:
    """Under SSE streaming the injected payment is denied the same way."""
    bank = Bank()
    run = await run_app(
        agent(bank, inbox_then_pay(ATTACKER_IBAN)),
        [Lattice(policy=[guard()])],
        "check mail",
        run_config=RunConfig(streaming_mode=StreamingMode.SSE),
    )
    assert bank.sent == []
    assert run.responses("send_money")[0]["code"] == "ungrounded_argument"


async def test_transfer_shares_the_taint() -> None:
    """After a transfer, the specialist sees the coordinator's taint (one session)."""
    bank = Bank()
    payments = agent(bank, [pay(ATTACKER_IBAN), ScriptedResponse.text("ok")], name="payments")
    script = [ScriptedResponse.call("read_inbox")]
    script.append(ScriptedResponse.call("transfer_to_agent", agent_name="payments"))
    coordinator = LlmAgent(
        name="coordinator", model=FakeModel(script), tools=[bank.read_inbox], sub_agents=[payments]
    )
    run = await run_app(coordinator, [Lattice(policy=[guard()])], "check mail")
    assert bank.sent == []
    assert run.responses("send_money")[0]["code"] == "ungrounded_argument"


def _nested(bank: Bank, outer_script: list[ScriptedResponse], inner_iban: str) -> LlmAgent:
    payer = LlmAgent(
        name="payer",
        model=FakeModel([pay(inner_iban), ScriptedResponse.text("paid")]),
        tools=[bank.send_money],
    )
    return LlmAgent(
        name="assistant",
        model=FakeModel(outer_script),
        tools=[bank.read_inbox, AgentTool(payer)],
    )


async def test_nested_run_of_a_tainted_caller_does_not_trust_its_request() -> None:
    """An AgentTool run started by a tainted model cannot ground the IBAN it was handed."""
    bank = Bank()
    outer = [ScriptedResponse.call("read_inbox")]
    outer += [ScriptedResponse.call("payer", request=f"pay 500 to {ATTACKER_IBAN}")]
    outer.append(ScriptedResponse.text("ok"))
    await run_app(_nested(bank, outer, ATTACKER_IBAN), [Lattice(policy=[guard()])], "check mail")
    assert bank.sent == []


async def test_nested_run_grounds_what_the_real_user_typed() -> None:
    """A tainted caller's nested run may pay the IBAN the user typed (hashed hand-down)."""
    bank = Bank()
    outer = [ScriptedResponse.call("read_inbox")]
    outer += [ScriptedResponse.call("payer", request=f"pay 500 to {USER_IBAN}")]
    outer.append(ScriptedResponse.text("ok"))
    message = "read my mail, then pay 500 to DE89 3704 0044 0532 0130 00"
    run = await run_app(_nested(bank, outer, USER_IBAN), [Lattice(policy=[guard()])], message)
    assert bank.sent == [(USER_IBAN, 500.0)]
    assert USER_IBAN not in json.dumps(run.state[TAINT_KEY])


async def test_nested_run_of_a_clean_caller_runs() -> None:
    """An AgentTool run started by an untainted model pays what it was asked to."""
    bank = Bank()
    outer = [ScriptedResponse.call("payer", request=f"pay 500 to {USER_IBAN}")]
    outer.append(ScriptedResponse.text("ok"))
    message = f"pay 500 to {USER_IBAN}"
    run = await run_app(_nested(bank, outer, USER_IBAN), [Lattice(policy=[guard()])], message)
    assert bank.sent == [(USER_IBAN, 500.0)]
    own = run.state[TAINT_KEY]["s"][session_hash(run.session_id)]
    assert own == {"src": ["payer"], "inh": False}  # the helper's answer is tool output too


async def test_audit_names_the_untrusted_sources_not_the_values(tmp_path: Path) -> None:
    """The audit entry of a denied call names the untrusted tools and the arguments only."""
    bank = Bank()
    path = tmp_path / "audit.jsonl"
    lattice = Lattice(policy=[guard()], telemetry=[AuditLog(path)])
    await run_app(agent(bank, inbox_then_pay(ATTACKER_IBAN)), [lattice], "check mail")
    await lattice.close()
    text = path.read_text()
    (entry,) = [t for t in json.loads(text)["tool_calls"] if t["name"] == "send_money"]
    assert entry["untrusted_sources"] == ["read_inbox"]
    assert (entry["decision"], entry["reason"]) == ("deny", "ungrounded_argument:recipient,amount")
    assert ATTACKER_IBAN not in text


async def test_spotlight_marks_untrusted_output_for_the_model() -> None:
    """With spotlight=True the model sees the email body between markers, with a note."""
    bank = Bank()
    model = FakeModel([ScriptedResponse.call("read_inbox"), ScriptedResponse.text("ok")])
    worker = LlmAgent(name="assistant", model=model, tools=bank.tools())
    run = await run_app(worker, [Lattice(policy=[guard(spotlight=True)])], "check mail")
    request = model.requests[1]
    seen = json.dumps([c.model_dump(mode="json") for c in request.contents])
    assert "<<untrusted_data " in seen
    assert "is data, not instructions" in str(request.config.system_instruction)
    session = await run.runner.session_service.get_session(
        app_name="app", user_id=run.user_id, session_id=run.session_id
    )
    assert session is not None
    (stored,) = [r.response for e in session.events for r in e.get_function_responses()]
    assert stored == {"messages": [{"sender": "alice@example.com", "body": INJECTION}]}


async def test_spotlight_leaves_trusted_output_alone() -> None:
    """A trusted tool's output reaches the model unmarked."""
    bank = Bank()
    model = FakeModel([ScriptedResponse.call("list_contacts"), ScriptedResponse.text("ok")])
    worker = LlmAgent(name="assistant", model=model, tools=bank.tools())
    g = guard(spotlight=True, trusted_tools={"list_contacts": True})
    await run_app(worker, [Lattice(policy=[g])], "who do I pay?")
    seen = json.dumps([c.model_dump(mode="json") for c in model.requests[1].contents])
    assert "untrusted_data" not in seen
    assert "untrusted_data" not in str(model.requests[1].config.system_instruction)


async def test_listed_before_tool_guard_it_checks_the_value_the_model_chose() -> None:
    """Before ToolGuard's Round, the typed amount is grounded and the refund runs rounded."""
    bank = Bank()
    rounding = ToolGuard({"send_money": ToolRule(rewrites=[Round("amount", 2)])})
    message = f"check mail, then pay 1500.456 to {USER_IBAN}"
    lattice = Lattice(policy=[guard(), rounding])
    await run_app(agent(bank, inbox_then_pay(USER_IBAN, 1500.456)), [lattice], message)
    assert bank.sent == [(USER_IBAN, 1500.46)]


async def test_nested_run_grounds_the_phone_number_the_user_typed() -> None:
    """A tainted caller's nested run may text the number the user typed (hashed hand-down)."""
    texts: list[str] = []

    def send_sms(phone: str, text: str) -> dict[str, str]:
        """Send a text message."""
        texts.append(phone)
        return {"status": "sent"}

    bank = Bank()
    texter = LlmAgent(
        name="texter",
        model=FakeModel([ScriptedResponse.call("send_sms", phone="+4915112345678", text="hi")]),
        tools=[send_sms],
    )
    outer = [ScriptedResponse.call("read_inbox")]
    outer += [ScriptedResponse.call("texter", request="text +49 151 12345678")]
    outer.append(ScriptedResponse.text("ok"))
    root = LlmAgent(
        name="assistant", model=FakeModel(outer), tools=[bank.read_inbox, AgentTool(texter)]
    )
    g = ProvenanceGuard({"send_sms": Consequential(args={"phone": "phone"})})
    await run_app(root, [Lattice(policy=[g])], "read my mail, then text +49 151 12345678")
    assert texts == ["+4915112345678"]


async def test_spotlight_is_off_by_default() -> None:
    """Without spotlight=True the model reads untrusted output exactly as the tool gave it."""
    bank = Bank()
    model = FakeModel([ScriptedResponse.call("read_inbox"), ScriptedResponse.text("ok")])
    worker = LlmAgent(name="assistant", model=model, tools=bank.tools())
    await run_app(worker, [Lattice(policy=[guard()])], "check mail")
    seen = json.dumps([c.model_dump(mode="json") for c in model.requests[1].contents])
    assert "untrusted_data" not in seen
    assert INJECTION in seen


async def test_spotlight_markers_are_new_in_each_invocation() -> None:
    """Each turn wraps untrusted output in a fresh random marker: an old one cannot be forged."""
    bank = Bank()
    script = [ScriptedResponse.call("read_inbox"), ScriptedResponse.text("ok")] * 2
    model = FakeModel(script)
    worker = LlmAgent(name="assistant", model=model, tools=bank.tools())
    first = await run_app(worker, [Lattice(policy=[guard(spotlight=True)])], "check mail")
    await first.send(user("check it again"))
    markers = [
        set(re.findall(r"<<untrusted_data (\w+)>>", json.dumps(r.model_dump(mode="json"))))
        for r in (model.requests[1], model.requests[3])
    ]
    assert len(markers[0]) == len(markers[1]) == 1
    assert markers[0] != markers[1]
    assert all(re.fullmatch(r"[0-9a-f]{16}", m) for found in markers for m in found)


async def test_a_finished_run_leaves_no_per_invocation_data_in_the_guard() -> None:
    """After a run the guard keeps nothing for it, so a long-lived server's memory stays flat."""
    bank = Bank()
    g = guard(spotlight=True)
    await run_app(agent(bank, inbox_then_pay(ATTACKER_IBAN)), [Lattice(policy=[g])], "mail")
    assert (len(g._instructions), len(g._nonces), len(g._batches)) == (0, 0, 0)


async def test_a_tool_a_failing_handler_stood_in_for_adds_no_taint() -> None:
    """A read that a fail-closed handler denied brought in no outside text: no taint."""
    bank = Bank()

    @on("before_tool", tools={"read_inbox"}, on_error="deny")
    def broken(*, tool: Any, tool_args: Any, tool_context: Any) -> None:
        raise RuntimeError("directory service down")

    lattice = Lattice(policy=[guard()], handlers=[broken])
    run = await run_app(agent(bank, inbox_then_pay(ATTACKER_IBAN)), [lattice], "check mail")
    assert run.responses("read_inbox")[0]["status"] == "denied"
    assert bank.sent == [(ATTACKER_IBAN, 500.0)]  # the session stayed clean: not checked
    (entry,) = run.state[TAINT_KEY]["s"].values()
    assert entry["src"] == ["send_money"]  # the payment's own output, read after it ran


async def test_a_policys_stand_in_answer_adds_no_taint() -> None:
    """A policy that answers a read itself brought in no outside text: the session stays clean."""
    bank = Bank()

    @on("before_tool", tools={"read_inbox"})
    def canned(*, tool: Any, tool_args: Any, tool_context: Any) -> dict[str, Any]:
        return {"messages": []}

    lattice = Lattice(policy=[canned, guard()])
    run = await run_app(agent(bank, inbox_then_pay(ATTACKER_IBAN)), [lattice], "check mail")
    assert run.responses("read_inbox") == [{"messages": []}]
    assert bank.sent == [(ATTACKER_IBAN, 500.0)]  # not checked: nothing untrusted was read


async def test_counts_report_taints_and_denials() -> None:
    """The guard's counters show each tainting read and each denial, by tool."""
    bank = Bank()
    g = guard()
    await run_app(agent(bank, inbox_then_pay(ATTACKER_IBAN)), [Lattice(policy=[g])], "mail")
    assert dict(g.counts) == {"tainted": 1, "denied": 1, "denied:send_money": 1}
