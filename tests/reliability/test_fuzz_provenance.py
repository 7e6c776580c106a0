"""Arbitrary arguments and tool outputs into ProvenanceGuard: a defined answer, never a leak."""

from __future__ import annotations

import json
from typing import Any

from google.adk.events.event import Event
from google.genai import types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adk_lattice.policy import Consequential, ProvenanceGuard
from adk_lattice.testing import function_tool, tool_context
from tests.reliability._strategies import anything, odd_text, tool_args

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TRUSTED = "pay 12 to DE89 3704 0044 0532 0130 00, mail bob@example.com"


def send(charge_id: str, amount: float) -> dict[str, Any]:
    """A consequential tool."""
    return {}


def read_page() -> dict[str, Any]:
    """An untrusted tool."""
    return {}


SEND, PAGE = function_tool(send), function_tool(read_page)
KINDS = ("email", "iban", "url", "number", "id", "phone", "text")
GUARD = ProvenanceGuard(
    {"send": Consequential(args={f"{kind}_arg": kind for kind in KINDS})}, spotlight=True
)


def tainted(output: Any = None) -> Any:
    """A tool context whose session read an untrusted page with ``output`` in it."""
    ctx = tool_context()
    said = types.Content(role="user", parts=[types.Part(text=TRUSTED)])
    ctx.session.events.append(Event(author="user", invocation_id="i0", content=said))
    GUARD.label(tool=PAGE, tool_context=ctx)
    return ctx


@FUZZ
@given(tool_args)
def test_any_arguments_get_a_defined_answer(args: Any) -> None:
    """Whatever the model passes, the check answers None or a denial and never raises."""
    out = GUARD.before_tool(tool=SEND, tool_args=args, tool_context=tainted())
    assert out is None or out["status"] == "denied"


@FUZZ
@given(st.sampled_from(KINDS), anything)
def test_no_value_reaches_the_denial(kind: str, value: Any) -> None:
    """A denial names arguments only: no part of an odd value is echoed back."""
    out = GUARD.before_tool(tool=SEND, tool_args={f"{kind}_arg": value}, tool_context=tainted())
    if out is not None:
        assert set(out) == {"status", "reason", "code", "policy", "tool", "arguments"}
        assert out["arguments"] == [f"{kind}_arg"]


@FUZZ
@given(st.sampled_from(("email", "iban", "url", "id", "phone")), odd_text)
def test_values_missing_from_trusted_text_are_denied(kind: str, value: str) -> None:
    """A value whose characters appear nowhere in trusted text is never grounded."""
    if any(c.isalnum() and c.casefold() in TRUSTED.casefold() for c in value):
        return  # could be a legitimate token of the user's message
    out = GUARD.before_tool(tool=SEND, tool_args={f"{kind}_arg": value}, tool_context=tainted())
    if value.strip():
        assert out is not None


def test_the_users_values_are_grounded() -> None:
    """The fuzzed session does trust the user's message (so the denials above mean something)."""
    args = {"iban_arg": "DE89370400440532013000", "email_arg": "bob@example.com", "number_arg": 12}
    assert GUARD.before_tool(tool=SEND, tool_args=args, tool_context=tainted()) is None


@FUZZ
@given(anything)
def test_any_tool_output_taints_without_storing_it(output: Any) -> None:
    """Whatever an untrusted tool returned, the taint record holds no part of it."""
    ctx = tainted(output)
    record = json.dumps(ctx.state["adk_lattice.provenance"])
    assert set(json.loads(record)["s"].popitem()[1]) == {"src", "inh"}
