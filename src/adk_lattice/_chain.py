"""The chain loop: first non-None wins, with timing, error modes and the return guard."""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
import traceback
from collections import Counter
from typing import Any, Final, Literal

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from ._handlers import Bound
from ._hooks import EXPECTED, HookName
from ._outcome import Step, StepStatus

logger = logging.getLogger("adk_lattice")

DENIAL_TEXT: Final = (
    "Sorry, I can't complete this request right now: a required safety check could not run."
)


#: ``tuple.__new__``: makes a :class:`Step` from its five fields in one C call.
_new_step: Final[Any] = tuple.__new__


class ReturnGuardError(TypeError):
    """A handler returned a value of the wrong type, or a suspicious empty one (strict mode)."""


def stack_of(exc: BaseException) -> str:
    """Where ``exc`` was raised (file, line, function, code), never its message.

    An exception's message may quote what the model or the user sent
    (``invalid literal for int(): '<value>'``), so logs carry its type and this stack only.
    """
    frames = traceback.format_list(traceback.extract_tb(exc.__traceback__))
    return ("\n" + "".join(frames).rstrip()) if frames else ""


def guard(hook: HookName, value: Any) -> str | None:
    """Why a handler's non-None return must not reach ADK, or None when it may.

    A wrong type is refused, and so is a suspicious empty value that would silently replace
    a real result: ``{}`` for a tool hook, a Content with no parts, an LlmResponse with
    neither content parts nor an error code.
    """
    expected = EXPECTED[hook]
    if expected is None:
        return f"{hook} is notification-only but the handler returned {type(value).__name__}"
    if not isinstance(value, expected):
        return f"{hook} expects {expected.__name__} or None, got {type(value).__name__}"
    if isinstance(value, dict):
        return None if value else f"{hook} returned an empty dict"
    if isinstance(value, types.Content):
        return None if value.parts else f"{hook} returned a Content with no parts"
    if isinstance(value, LlmResponse) and value.error_code is None:
        content = value.content
        if content is None or not content.parts:
            return f"{hook} returned an LlmResponse with no content parts and no error code"
    return None


#: Hooks where a failing "deny" handler cannot deny in place. ``on_user_message``'s value
#: would replace the user's words, so the lattice ends the run in ``before_run`` instead;
#: the error hooks already carry a failure that ADK raises, so there is nothing to let through.
NO_DENIAL: Final = frozenset({"on_user_message", "on_model_error", "on_tool_error", "on_event"})


#: Why a handler failed: it raised (or timed out), or it returned a value the guard refused.
FailCode = Literal["handler_error", "bad_return"]

_WHY: Final[dict[FailCode, str]] = {
    "handler_error": "could not run",
    "bad_return": "returned an invalid result",
}


def denial(hook: HookName, name: str, code: FailCode = "handler_error") -> Any:
    """A legible fail-closed result of the hook's own type, or None where none fits.

    Args:
        hook: the hook the failing handler ran on.
        name: the failing handler's name.
        code: ``handler_error`` (it raised or timed out) or ``bad_return`` (the return
            guard refused its value).
    """
    if hook in NO_DENIAL:
        return None
    expected = EXPECTED[hook]
    if expected is dict:
        return {
            "status": "denied",
            "reason": f"the safety check {name!r} {_WHY[code]}, so this call was not allowed",
            "code": code,
            "policy": name,
        }
    content = types.Content(role="model", parts=[types.Part(text=DENIAL_TEXT)])
    if expected is types.Content:
        return content
    if expected is LlmResponse:
        meta = {"adk_lattice": {"denied_by": name, "reason": code}}
        return LlmResponse(content=content, custom_metadata=meta)
    return None  # notification hooks have nothing to deny with


async def run_chain(
    chain: tuple[Bound, ...],
    hook: HookName,
    kwargs: dict[str, Any],
    *,
    agent: str | None,
    tool: str | None,
    partial: bool,
    strict: bool,
    stats: Counter[tuple[str, str, str]],
    steps: list[Step] | None,
) -> tuple[Any, Bound | None, FailCode | None]:
    """Run deciders in order until one returns a value.

    Args:
        chain: the bound handlers for this hook, tiers already in order.
        hook: the hook name.
        kwargs: ADK's keyword arguments, passed through unchanged.
        agent, tool: names for scoping (None where the hook has none).
        partial: True for a streamed partial chunk: only ``partial=True`` handlers run.
        strict: raise :class:`ReturnGuardError` on a bad return, whatever the handler's
            ``on_error``.
        stats: counters, bumped on every failure and rejection.
        steps: when a list, receives one :class:`Step` per handler that ran.

    Returns:
        The winning value (or None), the handler it came from, and, when the lattice denied
        for a failing handler (fail closed), why: ``handler_error`` (it raised or timed out)
        or ``bad_return`` (the return guard refused its value). A failing "deny" handler
        stops the chain even on hooks with no denial value (see :data:`NO_DENIAL`), where
        the value is None.

    Raises:
        ReturnGuardError: a bad return under ``strict`` or from an ``on_error="raise"``
            handler.
    """
    for b in chain:
        if partial and not b.partial:
            continue
        if b.agents is not None and agent not in b.agents:
            continue
        if b.tools is not None and tool not in b.tools:
            continue
        start = time.perf_counter() if steps is not None else 0.0
        try:
            value = b.call(**kwargs)
            if b.is_async or (value is not None and inspect.isawaitable(value)):
                value = await (asyncio.wait_for(value, b.timeout) if b.timeout else value)
        except Exception as exc:
            timed_out = isinstance(exc, TimeoutError)
            status: StepStatus = "timeout" if timed_out else "error"
            stats[(status, hook, b.name)] += 1
            if steps is not None:
                steps.append(Step(b.name, b.tier, status, time.perf_counter() - start, exc))
            if b.on_error == "raise":
                raise
            logger.error(
                "adk_lattice: %s handler %r %s in %s (%s); %s%s",
                b.tier,
                b.name,
                "timed out" if timed_out else "raised",
                hook,
                type(exc).__name__,
                "denying" if b.on_error == "deny" else "skipping it",
                "" if timed_out else stack_of(exc),
            )
            if b.on_error == "deny":
                return denial(hook, b.name), b, "handler_error"
            continue
        if value is None:
            if steps is not None:  # the common case, built without the named tuple's __new__
                elapsed = time.perf_counter() - start
                steps.append(_new_step(Step, (b.name, b.tier, "pass", elapsed, None)))
            continue
        elapsed = time.perf_counter() - start
        problem = guard(hook, value)
        if problem is None:
            if steps is not None:
                steps.append(Step(b.name, b.tier, "act", elapsed))
            return value, b, None
        if _refused(b, hook, problem, elapsed, strict=strict, stats=stats, steps=steps):
            return denial(hook, b.name, "bad_return"), b, "bad_return"
    return None, None, None


def _refused(
    b: Bound,
    hook: HookName,
    problem: str,
    elapsed: float,
    *,
    strict: bool,
    stats: Counter[tuple[str, str, str]],
    steps: list[Step] | None,
) -> bool:
    """Handle a value the guard refused, as a failure of its handler: True to deny.

    The problem names types only (never the value), so it is safe to log.
    """
    stats[("rejected", hook, b.name)] += 1
    if steps is not None:
        steps.append(Step(b.name, b.tier, "rejected", elapsed, problem))
    if strict or b.on_error == "raise":
        raise ReturnGuardError(f"handler {b.name!r}: {problem}")
    deny = b.on_error == "deny"
    logger.warning(
        "adk_lattice: %s handler %r returned an unusable value in %s (%s); %s",
        b.tier,
        b.name,
        hook,
        problem,
        "denying" if deny else "skipping it",
    )
    return deny
