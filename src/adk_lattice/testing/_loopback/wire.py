"""What the Gemini API sends for a scripted turn: ``GenerateContentResponse`` JSON chunks.

One renderer serves both the loopback Gemini API (which sends the chunks over HTTP) and
``FakeModel`` (which hands the same chunks to ADK's own response code), so a script gives
the same responses whether or not google-genai's HTTP client is in the way.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping
from typing import Any

from google.adk.models.llm_request import LlmRequest
from google.genai import types

from .._script import ScriptedResponse, estimate_tokens

_ids = itertools.count(1)


def _part_text(part: Mapping[str, Any]) -> str:
    """The countable text of one part given as JSON (camelCase keys, as on the wire)."""
    if part.get("text"):
        return str(part["text"])
    call = part.get("functionCall")
    if call:
        return json.dumps({"name": call.get("name"), "args": call.get("args") or {}})
    response = part.get("functionResponse")
    if response:
        return json.dumps({"name": response.get("name"), "response": response.get("response")})
    return ""


def _contents_text(contents: Iterable[Mapping[str, Any]]) -> str:
    return "".join(_part_text(p) for c in contents for p in c.get("parts") or ())


def prompt_text_of_body(body: Mapping[str, Any]) -> str:
    """The countable text of a ``generateContent`` request body."""
    system = body.get("systemInstruction") or {}
    return _contents_text([system]) + _contents_text(body.get("contents") or ())


def prompt_text_of_request(request: LlmRequest) -> str:
    """The countable text of an ``LlmRequest``, as its wire body would give it."""
    contents = [
        c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in request.contents
    ]
    instruction = request.config.system_instruction if request.config else None
    if isinstance(instruction, str):
        return instruction + _contents_text(contents)
    if isinstance(instruction, types.Content):
        system = instruction.model_dump(mode="json", by_alias=True, exclude_none=True)
        return _contents_text([system]) + _contents_text(contents)
    return _contents_text(contents)


def model_turns_of_body(body: Mapping[str, Any]) -> int:
    """How many model turns a request body's history already holds."""
    return sum(1 for c in body.get("contents") or () if c.get("role") == "model")


def last_user_text_of_body(body: Mapping[str, Any]) -> str:
    """The last user text in a request body, for messages."""
    for content in reversed(body.get("contents") or ()):
        texts = [p["text"] for p in content.get("parts") or () if p.get("text")]
        if content.get("role") == "user" and texts:
            return " ".join(texts)
    return ""


def _usage(counts: tuple[int, int] | None, final: bool, thoughts: int = 0) -> dict[str, Any] | None:
    if counts is None:
        return None
    prompt, output = counts
    if not final:  # every chunk but the last reports the prompt only
        return {"promptTokenCount": prompt, "totalTokenCount": prompt}
    usage = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": output,
        "totalTokenCount": prompt + output + thoughts,
    }
    if thoughts:  # Gemini counts thinking apart from the answer
        usage["thoughtsTokenCount"] = thoughts
    return usage


def _call_part(call: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": call.name, "args": dict(call.args)}
    if call.id is not None:
        body["id"] = call.id
    return {"functionCall": body}


def gemini_chunks(
    turn: ScriptedResponse, *, prompt_text: str, model: str, stream: bool
) -> list[dict[str, Any]]:
    """The ``GenerateContentResponse`` JSON the Gemini API sends for ``turn``.

    Streaming gives one chunk per text chunk and one for the function calls; every chunk
    reports the prompt's tokens and the last one adds the finish reason and the output
    tokens, as the Gemini API does. Without streaming, one response carries it all. A
    turn with ``http_status`` gives its text chunks only (the error follows them); a
    blocked prompt (a ``BlockedReason`` code) gives ``promptFeedback`` and no candidate.

    Args:
        turn: the scripted turn.
        prompt_text: the request's text, to count the prompt's tokens from.
        model: reported as ``modelVersion``.
        stream: whether the turn is streamed.

    Returns:
        The response bodies, in order (one when not streaming).
    """
    counts = turn.usage_counts(prompt_text)
    base: dict[str, Any] = {"modelVersion": model, "responseId": f"loopback-{next(_ids)}"}
    code = turn.error_code
    if code is not None and _prompt_blocked(code):
        blocked: dict[str, Any] = {**base, "promptFeedback": {"blockReason": code}}
        if turn.error_message:
            blocked["promptFeedback"]["blockReasonMessage"] = turn.error_message
        usage = _usage(counts, True)
        if usage is not None:
            blocked["usageMetadata"] = usage
        return [blocked]
    texts = list(turn.text_chunks)
    thoughts = list(turn.thoughts)
    if not stream:
        texts, thoughts = [t for t in ["".join(texts)] if t], [t for t in ["".join(thoughts)] if t]
    groups: list[list[dict[str, Any]]] = [[{"text": t, "thought": True}] for t in thoughts]
    groups += [[{"text": t}] for t in texts]
    if turn.parts:  # server-side tool parts come before the answer's text
        extra = [dict(p) for p in turn.parts]
        if groups and not stream:
            groups[-1][:0] = extra
        else:
            groups.insert(len(thoughts), extra)
    if not stream and len(groups) == 2:
        groups = [groups[0] + groups[1]]
    calls = [_call_part(c) for c in turn.calls()]
    if calls:
        if stream or not groups:
            groups.append(calls)
        else:
            groups[0].extend(calls)
    if turn.http_status is not None:  # the error follows whatever text was streamed
        return [_chunk(base, parts, _usage(counts, False)) for parts in groups]
    chunks = [_chunk(base, parts, _usage(counts, False)) for parts in groups or [[]]]
    last = chunks[-1]
    candidate = last["candidates"][0]
    known = code is None or code in types.FinishReason.__members__
    candidate["finishReason"] = turn.effective_finish_reason() if known else "OTHER"
    if turn.grounding is not None:
        candidate["groundingMetadata"] = dict(turn.grounding)
    if turn.url_context is not None:
        candidate["urlContextMetadata"] = dict(turn.url_context)
    if code is not None and turn.error_message:
        candidate["finishMessage"] = turn.error_message
    usage = _usage(counts, True, estimate_tokens("".join(turn.thoughts)))
    if usage is not None:
        last["usageMetadata"] = usage
    return chunks


def _prompt_blocked(code: str) -> bool:
    """A code only ``promptFeedback`` carries (``SAFETY`` is a finish reason too)."""
    return code not in types.FinishReason.__members__ and code in types.BlockedReason.__members__


def _chunk(
    base: dict[str, Any], parts: list[dict[str, Any]], usage: dict[str, Any] | None
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"index": 0}
    if parts:
        candidate["content"] = {"role": "model", "parts": parts}
    chunk = {**base, "candidates": [candidate]}
    if usage is not None:
        chunk["usageMetadata"] = usage
    return chunk
