"""``AuditLog``: exactly one record per invocation, written when the invocation ends."""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Final

from .._outcome import Outcome
from .._records import UNTRUSTED_SOURCES, InvocationRecord
from ._content import delivered_model_text, delivered_tool_result
from ._decisions import Decision, cache_match, decisions_of, is_quiet
from ._sinks import BackgroundWriter, LoggingSink, Sink, SinkTarget, as_sink, sink_name

logger = logging.getLogger("adk_lattice")

#: Bumped when a field changes meaning; readers can tell old records apart.
RECORD_VERSION: Final = 2
_BLOCKING_HOOKS: Final = frozenset({"before_run", "before_agent", "before_model"})
_TOOL_DECISIONS: Final = ("deny", "defer", "cache_hit", "override")
#: Decisions that stop a step: on a blocking hook they end the invocation as ``blocked``
#: (a redaction or trim on ``before_model`` lets the run go on).
_STOPS: Final = frozenset({"block", "deny"})


@dataclass(slots=True)
class _Run:
    """What one AuditLog gathered about one invocation so far."""

    model_calls: int = 0
    served: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tools: dict[int, dict[str, Any]] = field(default_factory=dict)
    calls: list[Any] = field(default_factory=list)  # keeps ids in ``tools`` unique
    policy: list[dict[str, Any]] = field(default_factory=list)
    blocked: bool = False
    responses: list[str] = field(default_factory=list)
    semantic: list[dict[str, Any]] = field(default_factory=list)


class AuditLog:
    """An observer writing one audit record per invocation to its sinks.

    The record is built from the outcomes of the invocation and written at its
    ``after_run`` outcome, which the lattice guarantees exactly once per invocation (also
    when it was blocked, failed, cancelled or abandoned). Fields are documented in
    ``docs/telemetry.md``. Records hold no content unless ``capture_content`` is on, and
    then only what was delivered after every decider (output policy included) acted.

    A failing sink never raises into the run: the failure is counted in
    :attr:`sink_errors` and logged on ``adk_lattice`` at ERROR with the invocation id and the
    record itself attached (``log_record.audit``), so a record a sink lost is still in the
    logs.

    Args:
        sinks: one sink or a list: a file path (JSON Lines), a ``logging.Logger``, or any
            callable taking the record (sync or async). Default: Python logging, logger
            ``adk_lattice.audit``, level INFO.
        capture_content: add the delivered model texts and tool results.
        name: the observer's name in the lattice's counters.
        background: format and write records on a worker thread: the run only queues the
            record. Records are written in batches (a JSON Lines file takes a batch in one
            ``write``), at most ``flush_interval`` seconds after they were queued, and all
            of them by :meth:`flush` and :meth:`close` (and at interpreter exit). A record
            the full queue cannot take is counted in :attr:`dropped` and logged on
            ``adk_lattice`` at ERROR with the record attached. Sinks must be synchronous.
        max_pending: with ``background``, how many records may wait for the worker.
        flush_interval: with ``background``, seconds the worker gathers a batch.

    Raises:
        TypeError: on a sink of an unsupported type, or an async sink with ``background``.
        ValueError: on a ``max_pending`` under 1 or a negative ``flush_interval``.
    """

    partial = False

    def __init__(
        self,
        sinks: SinkTarget | Sequence[SinkTarget] | None = None,
        *,
        capture_content: bool = False,
        name: str = "AuditLog",
        background: bool = False,
        max_pending: int = 10_000,
        flush_interval: float = 0.1,
    ) -> None:
        if sinks is None:
            targets: Sequence[Any] = (LoggingSink(),)
        elif isinstance(sinks, Sequence) and not isinstance(sinks, str | bytes):
            targets = sinks
        else:
            targets = (sinks,)
        self.sinks: tuple[Sink, ...] = tuple(as_sink(t) for t in targets)
        self.capture_content = capture_content
        self.name = name
        self._key = f"adk_lattice.audit.{id(self)}"
        self._errors: Counter[str] = Counter()
        self._writer: BackgroundWriter | None = None
        if background:
            if max_pending < 1:
                raise ValueError(f"max_pending must be at least 1, not {max_pending}")
            if flush_interval < 0:
                raise ValueError(f"flush_interval must be 0 or more, not {flush_interval}")
            for sink in self.sinks:
                if _is_async(sink):
                    raise TypeError(
                        f"audit sink {sink_name(sink)} is async, and a background AuditLog "
                        "writes on a worker thread: pass a synchronous sink, or "
                        "background=False"
                    )
            self._writer = BackgroundWriter(
                self._deliver,
                self._rejected,
                max_pending=max_pending,
                flush_interval=flush_interval,
                name=f"adk_lattice audit {name}",
            )

    @property
    def sink_errors(self) -> Mapping[str, int]:
        """How many records each sink failed to take, by sink name."""
        return MappingProxyType(self._errors)

    async def observe(self, outcome: Outcome) -> None:
        """Fold one outcome into its invocation's record; write the record at ``after_run``."""
        inv = outcome.invocation
        if inv is None:
            return
        run: _Run | None = inv.data.get(self._key)
        if run is None:
            run = inv.data[self._key] = _Run()
        # A quiet outcome's decisions are inferred allows and cache misses, which no field
        # of the record takes: they are not built for it.
        self._fold(run, outcome, () if is_quiet(outcome) else decisions_of(outcome))
        if outcome.hook == "after_run":
            inv.data.pop(self._key, None)
            await self._write(self._record(inv, run, outcome))

    @property
    def dropped(self) -> int:
        """How many records a full background queue turned away (each logged with it)."""
        return self._writer.dropped if self._writer is not None else 0

    async def flush(self) -> None:
        """Wait until every record queued for the background worker is written."""
        if self._writer is not None:
            await asyncio.to_thread(self._writer.flush)

    async def close(self) -> None:
        """Write what the background worker still holds, then close the sinks that close."""
        if self._writer is not None:
            await asyncio.to_thread(self._writer.close)
        for sink in self.sinks:
            closer = getattr(sink, "close", None)
            if callable(closer):
                result = closer()
                if inspect.isawaitable(result):
                    await result

    # -- folding -------------------------------------------------------------------------------

    def _fold(self, run: _Run, outcome: Outcome, decisions: Sequence[Decision]) -> None:
        hook = outcome.hook
        if not outcome.synthesized:
            for d in decisions:
                if d.tier == "policy" and d.decision != "allow":
                    run.policy.append(_action(outcome, d))
                    run.blocked |= hook in _BLOCKING_HOOKS and d.decision in _STOPS
        if hook == "before_model" and not outcome.synthesized:
            # A value handed back at before_model stands in for the model: it was not called.
            if outcome.value is None:
                run.model_calls += 1
            else:
                run.served += 1
                run.cache_hits += any(d.decision == "cache_hit" for d in decisions)
            matched = cache_match(outcome)
            if matched is not None and matched[1] == "semantic":
                run.semantic.append({"cache": matched[0], "similarity": matched[2]})
        elif hook == "after_model" and not outcome.partial:
            if not outcome.synthesized:  # a served response spent no tokens
                usage = getattr(outcome.final, "usage_metadata", None)
                run.input_tokens += getattr(usage, "prompt_token_count", None) or 0
                run.output_tokens += getattr(usage, "candidates_token_count", None) or 0
            text = delivered_model_text(outcome) if self.capture_content else None
            if text is not None:
                run.responses.append(text)
        elif hook in ("before_tool", "after_tool", "on_tool_error"):
            self._fold_tool(run, outcome, decisions)

    def _fold_tool(self, run: _Run, outcome: Outcome, decisions: Sequence[Decision]) -> None:
        call = outcome.call
        if call is None:
            return
        entry = run.tools.get(id(call))
        if entry is None:
            run.calls.append(call)
            entry = run.tools[id(call)] = {
                "name": call.tool,
                "call_id": call.function_call_id,
                "agent": call.agent,
                "decision": "allow",
                "reason": None,
                "status": None,
                "error_type": None,
                "duration": None,
            }
        if outcome.hook == "before_tool":
            for d in decisions:
                if d.decision in _TOOL_DECISIONS:
                    entry["decision"], entry["reason"] = d.decision, d.reason
                    break
            sources = call.data.get(UNTRUSTED_SOURCES)
            if sources:
                entry["untrusted_sources"] = list(sources)
            return
        if entry["status"] is None:
            if outcome.hook == "on_tool_error":
                cancelled = isinstance(outcome.error, asyncio.CancelledError)
                entry["status"] = "cancelled" if cancelled else "error"
                entry["error_type"] = type(outcome.error).__name__ if outcome.error else None
            elif outcome.synthesized:
                entry["status"] = outcome.reason
            else:  # a short-circuited call never ran the tool
                entry["status"] = "ok" if call.short_circuited_by is None else "skipped"
        entry["duration"] = round(time.perf_counter() - call.started, 6)
        if self.capture_content and outcome.hook == "after_tool" and not outcome.synthesized:
            entry["result"] = delivered_tool_result(outcome)

    # -- the record ----------------------------------------------------------------------------

    def _record(self, inv: InvocationRecord, run: _Run, end: Outcome) -> dict[str, Any]:
        error = end.error or inv.error
        if end.reason in ("run_error", "error"):
            result = "cancelled" if isinstance(error, asyncio.CancelledError) else "error"
        elif end.reason in ("cancelled", "abandoned"):
            result = end.reason
        else:
            result = "blocked" if run.blocked else "completed"
        ended = time.time()
        record: dict[str, Any] = {
            "version": RECORD_VERSION,
            "invocation_id": inv.invocation_id,
            "app": inv.app_name,
            "user": inv.user_id,
            "session": inv.session_id,
            "agents": list(inv.agents_entered),
            "model_calls": {
                "count": run.model_calls,
                "served": run.served,
                "cache_hits": run.cache_hits,
                "input_tokens": run.input_tokens,
                "output_tokens": run.output_tokens,
            },
            "tool_calls": list(run.tools.values()),
            "policy_actions": run.policy,
            "outcome": result,
            "error_type": type(error).__name__ if error is not None else None,
            "started_at": _iso(inv.started_at),
            "ended_at": _iso(ended),
            "duration": round(time.perf_counter() - inv.started, 6),
        }
        if run.semantic:  # hits a semantic cache served, each with its similarity
            record["model_calls"]["semantic_hits"] = run.semantic
        if self.capture_content:
            record["responses"] = run.responses
        return record

    async def _write(self, record: dict[str, Any]) -> None:
        if self._writer is not None:
            self._writer.submit(record)
            return
        for sink in self.sinks:
            try:
                result = sink(record)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                self._failed(sink, record)

    def _deliver(self, batch: list[Mapping[str, Any]]) -> None:
        """Write one batch to every sink (the background worker's side)."""
        for sink in self.sinks:
            many = getattr(sink, "write_many", None)
            if many is not None:
                try:
                    many(batch)
                except Exception:
                    for record in batch:
                        self._failed(sink, record)
                continue
            for record in batch:
                try:
                    result = sink(record)
                    if inspect.isawaitable(result):
                        if inspect.iscoroutine(result):
                            result.close()
                        raise TypeError("an async sink cannot run on the background worker")
                except Exception:
                    self._failed(sink, record)

    def _failed(self, sink: Sink, record: Mapping[str, Any]) -> None:
        name = sink_name(sink)
        self._errors[name] += 1
        # The record rides on the log entry (``record.audit``), so a log handler still
        # holds what this sink lost: no record goes missing without a trace.
        logger.exception(
            "adk_lattice: audit sink %s failed; the record of invocation %s is "
            "attached to this log entry",
            name,
            record.get("invocation_id"),
            extra={"audit": record},
        )

    def _rejected(self, record: Mapping[str, Any]) -> None:
        logger.error(
            "adk_lattice: the audit queue of %s is full; the record of invocation %s is "
            "attached to this log entry",
            self.name,
            record.get("invocation_id"),
            extra={"audit": record},
        )


def _action(outcome: Outcome, d: Decision) -> dict[str, Any]:
    return {
        "hook": outcome.hook,
        "handler": d.handler,
        "decision": d.decision,
        "reason": d.reason,
        "agent": outcome.agent,
        "tool": outcome.tool,
        "mode": d.mode,
    }


def _is_async(sink: Sink) -> bool:
    call = getattr(sink, "__call__", None)  # noqa: B004 (a bound __call__ is what is read)
    return inspect.iscoroutinefunction(sink) or inspect.iscoroutinefunction(call)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")
