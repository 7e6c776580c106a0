"""Record a model's exchanges to a JSON cassette, and replay one with ``FakeModel``.

A cassette keeps each request as the response cache keys it (``request_material``: volatile
ids dropped, transport settings ignored) and each response as ADK received it. Replaying
turns the responses back into scripted turns, so the replayed responses have the real
client's shapes, and checks each new request against the recorded one.
"""

from __future__ import annotations

import difflib
import json
import os
import tempfile
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import errors, types
from pydantic import PrivateAttr

from ..cache import request_material
from ._script import FunctionCall, ScriptedResponse

if TYPE_CHECKING:
    from ..policy import RedactPII
    from ._model import FakeModel

#: The cassette format; bumped when its meaning changes.
CASSETTE_VERSION = 1
_DIFF_LINES = 80


class CassetteError(ValueError):
    """A file is not a cassette this version can replay."""


def _scrub(node: Any, redact: RedactPII) -> Any:
    """Every string leaf of a JSON tree, redacted."""
    if isinstance(node, str):
        return redact.scrub(node)[0]
    if isinstance(node, list):
        return [_scrub(v, redact) for v in node]
    if isinstance(node, dict):
        return {k: _scrub(v, redact) for k, v in node.items()}
    return node


def _error_record(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, errors.APIError):
        return {"type": type(exc).__name__, "code": exc.code, "message": exc.message}
    return {"type": type(exc).__name__, "message": None}


class RecordingModel(BaseLlm):
    """Wraps any ``BaseLlm`` and writes every request/response exchange to a cassette.

    The file is rewritten after each exchange, so a run that fails half-way keeps what it
    recorded. Replay it with :meth:`FakeModel.from_cassette`.

    Example::

        model = RecordingModel(Gemini(model="gemini-2.5-flash"), "tests/cassettes/refund.json",
                               redact=RedactPII())

    Args:
        inner: the model to call.
        path: the cassette to write (replaced).
        redact: scrub every string of the requests and responses with this ``RedactPII``
            before writing (the cassette then records that it was scrubbed).
    """

    inner: BaseLlm
    path: Path
    redact: Any = None
    _exchanges: list[dict[str, Any]] = PrivateAttr(default_factory=list)

    def __init__(self, inner: BaseLlm, path: str | Path, *, redact: RedactPII | None = None):
        fields: dict[str, Any] = {
            "model": inner.model,
            "inner": inner,
            "path": Path(path),
            "redact": redact,
        }
        super().__init__(**fields)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        material = request_material(llm_request)
        responses: list[dict[str, Any]] = []
        exchange: dict[str, Any] = {"request": material, "stream": stream, "responses": responses}
        try:
            async for response in self.inner.generate_content_async(llm_request, stream):
                responses.append(response.model_dump(mode="json", exclude_none=True))
                yield response
        except Exception as exc:
            exchange["error"] = _error_record(exc)
            raise
        finally:
            self._record(exchange)

    def _record(self, exchange: dict[str, Any]) -> None:
        if self.redact is not None:
            exchange = _scrub(exchange, self.redact)
        self._exchanges.append(exchange)
        cassette = {
            "version": CASSETTE_VERSION,
            "model": self.model,
            "scrubbed": self.redact is not None,
            "exchanges": self._exchanges,
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(cassette, out, indent=1, sort_keys=True, ensure_ascii=False)
            out.write("\n")
        os.replace(tmp, self.path)


def _texts(response: dict[str, Any], thought: bool = False) -> str:
    parts = (response.get("content") or {}).get("parts") or ()
    return "".join(p["text"] for p in parts if p.get("text") and bool(p.get("thought")) == thought)


def _turn(exchange: dict[str, Any], expect: Callable[[LlmRequest], object]) -> ScriptedResponse:
    """The scripted turn that gives back one recorded exchange."""
    responses = exchange.get("responses") or []
    error = exchange.get("error")
    partial = [r for r in responses if r.get("partial")]
    final: dict[str, Any] = next((r for r in reversed(responses) if not r.get("partial")), {})
    chunks = [t for t in map(_texts, partial) if t] or [t for t in [_texts(final)] if t]
    thoughts = [t for r in partial if (t := _texts(r, thought=True))]
    thoughts = thoughts or [t for t in [_texts(final, thought=True)] if t]
    if error is not None and error.get("code") is None:
        message = f"recorded {error.get('type')} (message not recorded)"
        return ScriptedResponse(text_chunks=chunks, error=RuntimeError(message), expect=expect)
    calls = [
        FunctionCall(p["function_call"]["name"], p["function_call"].get("args") or {})
        for p in (final.get("content") or {}).get("parts") or ()
        if p.get("function_call")
    ]
    usage = final.get("usage_metadata")
    fields: dict[str, Any] = {
        "text_chunks": chunks,
        "thoughts": thoughts,
        "function_calls": calls,
        "usage": usage is not None,
        "input_tokens": (usage or {}).get("prompt_token_count"),
        "output_tokens": (usage or {}).get("candidates_token_count"),
        "error_code": final.get("error_code"),
        "error_message": final.get("error_message") if final.get("error_code") else None,
        "expect": expect,
    }
    if error is not None:
        fields["http_status"], fields["error_message"] = error["code"], error.get("message")
    elif final.get("finish_reason"):
        fields["finish_reason"] = types.FinishReason(final["finish_reason"])
    return ScriptedResponse(**fields)


def _matcher(
    index: int, recorded: dict[str, Any], redact: RedactPII | None
) -> Callable[[LlmRequest], None]:
    def expect(request: LlmRequest) -> None:
        material = request_material(request)
        if redact is not None:
            material = _scrub(material, redact)
        if material == recorded:
            return
        old = json.dumps(recorded, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
        new = json.dumps(material, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
        diff = list(difflib.unified_diff(old, new, "recorded", "received", lineterm="", n=2))
        shown = diff[:_DIFF_LINES] + (["..."] if len(diff) > _DIFF_LINES else [])
        raise AssertionError(f"request {index} differs from the cassette:\n" + "\n".join(shown))

    return expect


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CassetteError(f"cannot read cassette {path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("version") != CASSETTE_VERSION:
        raise CassetteError(f"{path} is not a version {CASSETTE_VERSION} cassette")
    if not isinstance(data.get("exchanges"), list):
        raise CassetteError(f"{path} has no list of exchanges")
    return data


def replay_model(
    cls: type[FakeModel], path: Path, *, strict: bool, redact: RedactPII | None
) -> FakeModel:
    """A ``cls`` whose script replays the cassette at ``path`` (see ``FakeModel``)."""
    data = _load(path)
    if redact is None and data.get("scrubbed"):
        from ..policy import RedactPII

        redact = RedactPII()
    turns = []
    for index, exchange in enumerate(data["exchanges"]):
        check = _matcher(index, exchange.get("request"), redact) if strict else None
        turns.append(_turn(exchange, check or (lambda _request: None)))
    return cls(turns, model=str(data.get("model") or "fake-model"), strict=strict)
