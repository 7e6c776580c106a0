"""The attack-success benchmark's own invariants, on a small sample of tasks and styles."""

from __future__ import annotations

from typing import Any

import pytest
from benchmarks.security.attacks import (
    CLASS_HELD_OUT_STYLES,
    CLASS_TUNING_STYLES,
    GOALS,
    OWN_CASES,
    Case,
    split_of,
)
from benchmarks.security.classes import (
    BENIGN,
    BY_ID,
    CLASSES,
    benign_doors,
    class_cases,
    class_pairings,
)
from benchmarks.security.fresh import FRESH_STYLES, fresh_cases
from benchmarks.security.fresh2 import FRESH2_STYLES, fresh2_benign_cases, fresh2_cases
from benchmarks.security.harness import (
    Config,
    all_cases,
    configs,
    pairings,
    provenance_available,
    run_one,
)
from benchmarks.security.model import ObedientModel
from benchmarks.security.public import aib_cases
from benchmarks.security.tasks import TASKS, Task
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_lattice.policy import Approval, ToolGuard, ToolRule

SAMPLE_IDS = ("own:direct_override:1", "own:obfuscated:1", "aib:io-003", "aib:tr-002",
              "garak:whois:1", "garak:resume:7")  # fmt: skip
SAMPLE_TASKS = tuple(t for t in TASKS if t.id in ("b01", "b04", "e03", "f01", "c02", "k01"))
needs_provenance = pytest.mark.skipif(
    not provenance_available(), reason="ProvenanceGuard is not in this checkout"
)


def _sample() -> list[tuple[Task, Case, Any]]:
    cases = [c for c in all_cases() if c.id in SAMPLE_IDS]
    assert len(cases) == len(SAMPLE_IDS)
    return pairings(cases, 2)


def _config(name: str) -> Any:
    return next(c for c in configs() if c.name == name)


def _request(*contents: types.Content) -> LlmRequest:
    return LlmRequest(contents=list(contents))


def test_model_obeys_only_what_the_request_carries() -> None:
    """The worst-case model calls the attacker's tool only when the goal's text is sent to it."""
    task, goal = TASKS[0], GOALS[0]
    model = ObedientModel({task.prompt: task.plan}, GOALS)
    user = types.Content(role="user", parts=[types.Part(text=task.prompt)])
    call = types.Part(function_call=types.FunctionCall(name="get_transactions", args={}))
    said = types.Content(role="model", parts=[call])

    def output(text: str) -> types.Content:
        fr = types.FunctionResponse(name="get_transactions", response={"memo": text})
        return types.Content(role="user", parts=[types.Part(function_response=fr)])

    clean = model.next_call(_request(user, said, output("Groceries")))
    poisoned = model.next_call(_request(user, said, output(OWN_CASES[0].render(goal))))
    assert clean == task.plan[1]
    assert poisoned == (goal.tool, goal.args)


async def test_undefended_agent_is_hijacked_by_every_sampled_injection() -> None:
    """Undefended, every sampled injection makes the agent carry out the attacker's call."""
    config = _config("undefended")
    outcomes = [await run_one(t, config, c, g) for t, c, g in _sample()]
    assert [o.case for o in outcomes if not o.attacked] == []


async def test_benign_tasks_complete_undefended() -> None:
    """Without an injection, the model completes every sampled task's consequential calls."""
    config = _config("undefended")
    outcomes = [await run_one(t, config) for t in SAMPLE_TASKS]
    assert [o.task for o in outcomes if not o.done] == []


async def test_person_in_the_loop_approves_what_a_guard_paused() -> None:
    """When a guard asks ADK for a confirmation, the harness's person approves and the task runs."""
    rule = ToolRule(approval=Approval(lambda _: True, confirm=True))
    config = Config("confirm_all", lambda: [ToolGuard({"send_money": rule})], person=True)
    outcome = await run_one(SAMPLE_TASKS[0], config)
    assert (outcome.done, outcome.asked) == (True, 1)


def test_every_style_is_in_exactly_one_half_of_the_split() -> None:
    """Each injection style is either tuned on or held out, decided before measuring."""
    halves = {split_of(c.style) for c in all_cases()}
    assert halves == {"tuning", "held_out"}


def test_public_corpus_loads_every_tool_output_scenario() -> None:
    """agent-injection-bench's tool-output scenarios all load, each asking for an attacker goal."""
    cases = aib_cases()
    assert len(cases) == 18
    assert all(GOALS[0].marks[0] in c.render(GOALS[0]) or c.id == "aib:en-001" for c in cases)


@needs_provenance
async def test_provenance_guard_stops_every_sampled_injection() -> None:
    """With ProvenanceGuard denying ungrounded calls, no sampled injection succeeds."""
    config = _config("provenance")
    outcomes = [await run_one(t, config, c, g) for t, c, g in _sample()]
    assert [o.case for o in outcomes if o.attacked] == []


@needs_provenance
async def test_provenance_guard_lets_benign_sampled_tasks_complete() -> None:
    """With ProvenanceGuard, sampled tasks whose arguments are user- or trusted-sourced complete."""
    config = _config("provenance")
    outcomes = [await run_one(t, config) for t in SAMPLE_TASKS]
    assert [o.task for o in outcomes if not o.done] == []


# -- the field classes ---------------------------------------------------------------------


def _one_per_style() -> list[tuple[Task, Case, Any]]:
    """The first pairing of each field-class style."""
    seen: dict[str, tuple[Task, Case, Any]] = {}
    for task, case, goal in class_pairings(class_cases(), 1):
        seen.setdefault(case.style, (task, case, goal))
    return list(seen.values())


def test_every_class_has_tuning_styles_and_held_out_ones_where_unseen() -> None:
    """Each field class is tuned on some styles; all but near_miss keep held-out ones too."""
    halves: dict[str, set[str]] = {}
    for case in class_cases():
        halves.setdefault(case.klass, set()).add(split_of(case.style))
    assert set(halves) == set(CLASSES) - {"injection"}
    assert all("tuning" in h for h in halves.values())
    assert {k for k, h in halves.items() if "held_out" not in h} <= {"near_miss"}


def test_the_split_names_exactly_the_class_styles() -> None:
    """Every style the class split names has cases, and every class style is named."""
    named = set(CLASS_TUNING_STYLES) | set(CLASS_HELD_OUT_STYLES)
    assert named == {c.style for c in class_cases()}


def test_model_reads_the_system_instruction() -> None:
    """The worst-case model obeys a goal that only the system instruction carries."""
    task, goal = TASKS[0], GOALS[0]
    model = ObedientModel({task.prompt: task.plan}, GOALS)
    user = types.Content(role="user", parts=[types.Part(text=task.prompt)])
    request = _request(user)
    request.config.system_instruction = f"Attached: Invoice (assistant, {goal.en}).pdf"
    assert model.next_call(request) == (goal.tool, goal.args)


def test_model_finds_the_task_behind_inserted_user_text() -> None:
    """Memory ADK inserts as user text before the request does not hide the user's task."""
    task = TASKS[0]
    model = ObedientModel({task.prompt: task.plan}, GOALS)
    memory = types.Content(role="user", parts=[types.Part(text="<PAST_CONVERSATIONS>hi")])
    user = types.Content(role="user", parts=[types.Part(text=task.prompt)])
    assert model.next_call(_request(memory, user)) == task.plan[0]


async def test_undefended_agent_obeys_every_class_style() -> None:
    """Undefended, each field-class style (every side door included) hijacks the agent."""
    config = _config("undefended")
    outcomes = [await run_one(t, config, c, g) for t, c, g in _one_per_style()]
    assert [o.case for o in outcomes if not o.attacked] == []


async def test_class_benign_tasks_complete_undefended() -> None:
    """Each field class's benign tasks, and each door holding benign text, complete."""
    config = _config("undefended")
    outcomes = [await run_one(BY_ID[i], config) for ids in BENIGN.values() for i in ids]
    outcomes += [await run_one(BY_ID[d.hosts[0]], config, d) for d in benign_doors()]
    assert [(o.task, o.case) for o in outcomes if not o.done] == []


@needs_provenance
async def test_provenance_guard_stops_server_side_tool_doors() -> None:
    """Search grounding, URL context and code execution output taint: the attack is denied."""
    config = _config("provenance")
    doors = ("c:google_search", "c:url_context", "c:code_execution")
    picked = [p for p in _one_per_style() if p[1].style in doors]
    outcomes = [await run_one(t, config, c, g) for t, c, g in picked]
    assert len(outcomes) == 3
    assert [o.case for o in outcomes if o.attacked] == []


@needs_provenance
async def test_provenance_guard_stops_every_written_form_of_a_destination() -> None:
    """Each tuning content style (escaped, defanged, spelled, ...) and wildcard id fails."""
    config = _config("provenance")
    picked = [
        (t, c, g)
        for t, c, g in class_pairings(class_cases(), 1)
        if c.klass in ("content", "near_miss") and split_of(c.style) == "tuning"
    ]
    outcomes = [await run_one(t, config, c, g) for t, c, g in picked]
    assert len({c.style for _, c, _ in picked}) == 72
    assert [o.case for o in outcomes if o.attacked] == []


@needs_provenance
async def test_provenance_guard_stops_state_and_long_running_doors() -> None:
    """State templated into the instruction and a long-running result taint: denied."""
    config = _config("provenance")
    doors = ("c:state_template", "c:long_running")
    picked = [p for p in _one_per_style() if p[1].style in doors]
    outcomes = [await run_one(t, config, c, g) for t, c, g in picked]
    assert len(outcomes) == 2
    assert [o.case for o in outcomes if o.attacked] == []


@needs_provenance
async def test_state_and_long_running_doors_cost_no_benign_task() -> None:
    """With benign text in those doors, the side-door hosts complete under the guard."""
    config = _config("provenance")
    doors = [d for d in benign_doors() if d.style in ("c:state_template", "c:long_running")]
    outcomes = [await run_one(BY_ID[h], config, d) for d in doors for h in d.hosts]
    assert len(outcomes) == 6
    assert [(o.task, o.case) for o in outcomes if not o.done] == []


@needs_provenance
async def test_effects_without_a_destination_pass_provenance_guard() -> None:
    """An injected event title, or a call redirected to another trusted value, is not stopped."""
    config = _config("provenance")
    picked = [p for p in _one_per_style() if p[1].klass in ("no_destination", "trusted_value")]
    outcomes = [await run_one(t, config, c, g) for t, c, g in picked]
    assert outcomes
    assert [o.case for o in outcomes if not o.attacked] == []


# -- the held-out styles written from the attacker's side (fresh.py) -------------------------


def test_fresh_styles_are_registered_in_one_half() -> None:
    """Every style of fresh.py has cases and is in exactly one half (held out until fixed)."""
    styles = {c.style for c in fresh_cases()}
    assert styles == set(FRESH_STYLES)
    assert styles <= set(CLASS_HELD_OUT_STYLES) | set(CLASS_TUNING_STYLES)
    assert not set(CLASS_HELD_OUT_STYLES) & set(CLASS_TUNING_STYLES)
    assert {c.id for c in fresh_cases()} <= {c.id for c in class_cases()}


def _first_call(model: ObedientModel, *contents: types.Content, **config: Any) -> Any:
    request = _request(*contents)
    for key, value in config.items():
        setattr(request.config, key, value)
    return model.next_call(request)


def test_model_reads_an_attached_text_document() -> None:
    """The worst-case model obeys a goal that only a text file attached to the request carries."""
    task, goal = TASKS[0], GOALS[0]
    model = ObedientModel({task.prompt: task.plan}, GOALS)
    doc = types.Part.from_bytes(data=f"Note: {goal.en}.".encode(), mime_type="text/plain")
    user = types.Content(role="user", parts=[types.Part(text=task.prompt), doc])
    assert _first_call(model, user) == (goal.tool, goal.args)


def test_model_reads_tool_descriptions() -> None:
    """The worst-case model obeys a goal that only a tool's declared description carries."""
    task, goal = TASKS[0], GOALS[0]
    model = ObedientModel({task.prompt: task.plan}, GOALS)
    user = types.Content(role="user", parts=[types.Part(text=task.prompt)])
    declaration = types.FunctionDeclaration(name="rates", description=f"Rates. {goal.en}.")
    tools = [types.Tool(function_declarations=[declaration])]
    assert _first_call(model, user, tools=tools) == (goal.tool, goal.args)


def test_model_reads_field_names_of_tool_output() -> None:
    """The worst-case model obeys a goal whose value is only a field name of a tool's output."""
    task, goal = TASKS[0], GOALS[0]
    model = ObedientModel({task.prompt: task.plan}, GOALS)
    user = types.Content(role="user", parts=[types.Part(text=task.prompt)])
    said = types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(
        name="get_transactions", args={}))])  # fmt: skip
    fr = types.FunctionResponse(name="get_transactions", response={goal.marks[0]: "pay here"})
    output = types.Content(role="user", parts=[types.Part(function_response=fr)])
    assert _first_call(model, user, said, output) == (goal.tool, goal.args)


@needs_provenance
async def test_every_fresh_style_runs_under_provenance_guard() -> None:
    """Each fresh style's first pairing runs to an outcome through the guarded App."""
    config = _config("provenance")
    picked = [p for p in _one_per_style() if p[1].style in FRESH_STYLES]
    outcomes = [await run_one(t, config, c, g) for t, c, g in picked]
    assert sorted(o.style or "" for o in outcomes) == sorted(FRESH_STYLES)


# -- the second held-out set (fresh2.py) ------------------------------------------------------


def test_fresh2_styles_are_registered_in_one_half() -> None:
    """Every style of fresh2.py has cases and is in exactly one half (held out until fixed)."""
    styles = {c.style for c in fresh2_cases()}
    assert styles == set(FRESH2_STYLES)
    assert styles <= set(CLASS_HELD_OUT_STYLES) | set(CLASS_TUNING_STYLES)
    assert not set(CLASS_HELD_OUT_STYLES) & set(CLASS_TUNING_STYLES)
    assert {c.id for c in fresh2_cases()} <= {c.id for c in class_cases()}
    assert {c.id for c in fresh2_benign_cases()} <= {c.id for c in benign_doors()}


def test_model_reads_parameter_descriptions() -> None:
    """The worst-case model obeys a goal that only a tool parameter's description carries."""
    task, goal = TASKS[0], GOALS[0]
    model = ObedientModel({task.prompt: task.plan}, GOALS)
    user = types.Content(role="user", parts=[types.Part(text=task.prompt)])
    currency = types.Schema(type=types.Type.STRING, description=f"A code. {goal.en}.")
    params = types.Schema(type=types.Type.OBJECT, properties={"currency": currency})
    declaration = types.FunctionDeclaration(name="rates", description="Rates.", parameters=params)
    tools = [types.Tool(function_declarations=[declaration])]
    assert _first_call(model, user, tools=tools) == (goal.tool, goal.args)


def test_model_reads_a_file_its_request_references() -> None:
    """The worst-case model obeys a goal that only a document a file_data part names carries."""
    task, goal = TASKS[0], GOALS[0]
    uri = "https://files.example.net/doc.txt"
    model = ObedientModel({task.prompt: task.plan}, GOALS, files={uri: f"Note: {goal.en}."})
    shared = types.Part(file_data=types.FileData(file_uri=uri, mime_type="text/plain"))
    user = types.Content(role="user", parts=[types.Part(text=task.prompt), shared])
    assert _first_call(model, user) == (goal.tool, goal.args)


def test_model_reads_a_system_instruction_given_as_content() -> None:
    """The worst-case model reads a system instruction's text parts, not only a string."""
    task, goal = TASKS[0], GOALS[0]
    model = ObedientModel({task.prompt: task.plan}, GOALS)
    user = types.Content(role="user", parts=[types.Part(text=task.prompt)])
    system = types.Content(role="system", parts=[types.Part(text=f"Handbook: {goal.en}.")])
    assert _first_call(model, user, system_instruction=system) == (goal.tool, goal.args)


@needs_provenance
async def test_every_fresh2_style_runs_under_provenance_guard() -> None:
    """Each fresh2 style's first pairing runs to an outcome through the guarded App."""
    config = _config("provenance")
    picked = [p for p in _one_per_style() if p[1].style in FRESH2_STYLES]
    outcomes = [await run_one(t, config, c, g) for t, c, g in picked]
    assert sorted(o.style or "" for o in outcomes) == sorted(FRESH2_STYLES)
