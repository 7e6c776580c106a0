"""Answer a tool confirmation the way a person does in ``adk web``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from google.adk.events.event import Event
from google.genai import types

#: The function call ADK makes when a tool asks a person (``ToolContext.request_confirmation``).
CONFIRMATION_CALL: Final = "adk_request_confirmation"


def _asked_for(call: types.FunctionCall) -> str | None:
    original = (call.args or {}).get("originalFunctionCall")
    return original.get("name") if isinstance(original, dict) else None


def confirmation_reply(
    events: Iterable[Event],
    *,
    confirmed: bool = True,
    payload: Any = None,
    tool: str | None = None,
) -> types.Content:
    """The user's message answering every confirmation ``events`` asked for.

    It is the message ADK's own clients send when a person clicks confirm or reject: one
    ``adk_request_confirmation`` function response per request, with the request's id and
    ``{"confirmed": ..., "payload": ...}``. Send it as the next ``new_message`` of the same
    session to resume the paused run.

    Args:
        events: the events of the run that paused (as a Runner yielded them).
        confirmed: the person's answer.
        payload: the data a tool asked for with its confirmation, if any (JSON-like).
        tool: answer only the requests for this tool's calls.

    Returns:
        A user-role ``Content`` with one function response per request answered.

    Raises:
        LookupError: when the events asked for no confirmation (of ``tool``), naming what
            they asked for instead.
        TypeError: when ``confirmed`` is not a bool.
    """
    if not isinstance(confirmed, bool):
        raise TypeError(f"confirmed must be True or False, not {confirmed!r}")
    parts: list[types.Part] = []
    asked: list[str] = []
    for event in events:
        for call in event.get_function_calls():
            if call.name != CONFIRMATION_CALL:
                continue
            name = _asked_for(call)
            if name is not None:
                asked.append(name)
            if tool is not None and name != tool:
                continue
            response: dict[str, Any] = {"confirmed": confirmed}
            if payload is not None:
                response["payload"] = payload
            reply = types.FunctionResponse(name=CONFIRMATION_CALL, id=call.id, response=response)
            parts.append(types.Part(function_response=reply))
    if not parts:
        which = "" if tool is None else f" for {tool!r}"
        seen = f" (it asked for {', '.join(sorted(set(asked)))})" if asked else ""
        raise LookupError(f"the run asked for no confirmation{which}{seen}")
    return types.Content(role="user", parts=parts)
