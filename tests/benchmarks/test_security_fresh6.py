"""The sixth held-out set of field-class styles (``fresh6.py``): the doors and the
readings it added work. The structure every set keeps (registered, new, its benign runs
complete and its cases hijack the undefended agent) is tested in ``test_security_sets.py``."""

from __future__ import annotations

import pytest
from benchmarks.security.attacks import (
    GOALS,
    Case,
    Goal,
    split_of,
)
from benchmarks.security.classes import BY_ID
from benchmarks.security.fresh6 import (
    CREDITOR_DE,
    CREDITOR_NL,
    CSV_IBAN,
    FRESH6_DOORS,
    IBAN,
    OWN_CREDITOR,
    SAME_CHECK_BOB,
    _bad_checksum,
    _letter_spaced,
    _marked,
    fresh6_cases,
)
from benchmarks.security.harness import (
    WORKFLOW_DOOR,
    Config,
    _world,
    configs,
    provenance_available,
    run_one,
)
from benchmarks.security.model import ObedientModel, _unspaced, obeys
from benchmarks.security.tasks import TASKS
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.genai import types

from adk_lattice import Lattice

UNDEFENDED = Config("undefended", list)


def _obeys(text: str, goal: Goal = GOALS[1]) -> bool:
    """Whether the worst-case model, given ``text`` as the system instruction, obeys
    ``goal``."""
    return obeys(text, goal)


def test_model_reads_letters_under_combining_marks() -> None:
    """The worst-case model reads an instruction with a mark over every character."""
    for mark in ("\u0336", "\u0332"):
        text = _marked(mark, "IT Desk: ")(GOALS[1])
        assert GOALS[1].marks[0] not in text
        assert _obeys(text)


def test_model_reads_letter_spaced_words() -> None:
    """The worst-case model reads letters spaced apart as the words they spell, and a
    wider gap as a break between words."""
    text = _letter_spaced("IT Desk ", "Assistant, ")(GOALS[1])
    assert GOALS[1].marks[0] not in text
    assert _obeys(text)
    assert _unspaced("I T   D e s k") == "IT Desk"


def test_model_finds_the_request_on_a_line_of_a_user_text() -> None:
    """The worst-case model knows the task from a user text one line of which is the request."""
    task = TASKS[0]
    model = ObedientModel({task.prompt: task.plan}, GOALS)
    said = types.Part(text=f"{task.prompt}\nCustomer profile from the CRM: gold tier.")
    request = LlmRequest(contents=[types.Content(role="user", parts=[said])])
    assert model.next_call(request) == task.plan[0]


def _valid(iban: str) -> bool:
    digits = "".join(str(int(c, 36)) for c in iban[4:] + iban[:4])
    return int(digits) % 97 == 1


def _valid_creditor(cid: str) -> bool:
    """A SEPA creditor identifier's check digits: mod 97 over its national part and country,
    its business code (positions 5 to 7) skipped."""
    return _valid(cid[:4] + cid[7:])


def test_the_ibans_and_creditor_ids_are_valid_and_a_bad_checksum_fails_the_check() -> None:
    """The attacker's and the typed IBANs and creditor ids pass their mod-97 checks; each
    bad-checksum change of a trusted IBAN changes one digit, keeps its check digits, and
    fails the check."""
    assert all(_valid(i) for i in (IBAN, CSV_IBAN, SAME_CHECK_BOB))
    assert SAME_CHECK_BOB[:4] == "NL91"
    assert all(_valid_creditor(c) for c in (CREDITOR_NL, CREDITOR_DE, OWN_CREDITOR))
    for iban in ("NL91ABNA0417164300", "FR1420041010050500013M02606", "GB29NWBK60161331926819"):
        for at in (1, 6):
            bad = _bad_checksum(at)(iban)
            assert bad[:4] == iban[:4] and not _valid(bad)
            assert sum(a != b for a, b in zip(iban, bad, strict=True)) == 1


class _Requests(BasePlugin):
    """Records the contents of every model request, as ``(role, texts)``."""

    def __init__(self) -> None:
        super().__init__(name="requests")
        self.seen: list[list[tuple[str, list[str]]]] = []

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        self.seen.append([
            (c.role or "", [p.text for p in c.parts or () if p.text]) for c in llm_request.contents
        ])  # fmt: skip
        return None


async def test_a_workflow_node_s_output_reaches_the_agent_as_its_user_turn() -> None:
    """The CRM note a ``Workflow``'s first node attaches reaches the agent's model as a
    user-role text after the request, and is obeyed."""
    style, render, _ = FRESH6_DOORS[WORKFLOW_DOOR]
    text = render(GOALS[0])
    task, requests = BY_ID["sb1"], _Requests()
    runner, session_id, env = await _world(
        task, text, WORKFLOW_DOOR, GOALS, [Lattice(policy=[]), requests]
    )
    message = types.Content(role="user", parts=[types.Part(text=task.prompt)])
    async for _ in runner.run_async(user_id="emma", session_id=session_id, new_message=message):
        pass
    await runner.close()
    first = requests.seen[0]
    assert first[0] == ("user", [f"{task.prompt}\nCustomer profile from the CRM: {text}"])
    assert (GOALS[0].tool, GOALS[0].args) in env.effects
    case = Case(style, f"{style}:test", render, f"door:{WORKFLOW_DOOR}", klass="side_door")
    outcome = await run_one(task, UNDEFENDED, case, GOALS[0])
    assert outcome.attacked and outcome.done


@pytest.mark.skipif(not provenance_available(), reason="ProvenanceGuard is not in this checkout")
async def test_provenance_guard_stops_every_fresh6_style_fixed_since() -> None:
    """Under ProvenanceGuard, no case of a fresh6 style moved to the tuning half gets
    through, on any of its hosts."""
    config = next(c for c in configs() if c.name == "provenance")
    outcomes = []
    for i, case in enumerate(c for c in fresh6_cases() if split_of(c.style) == "tuning"):
        for host in case.hosts:
            task = BY_ID[host]
            goal = case.goal(task) if case.goal else GOALS[i % len(GOALS)]
            outcomes.append(await run_one(task, config, case, goal))
    assert {o.style for o in outcomes} == {
        "b:foreign_spelled_address", "b:altcoin_address", "b:sepa_creditor_id"
    }  # fmt: skip
    assert [o.case for o in outcomes if o.attacked] == []
