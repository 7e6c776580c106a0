"""``note()``: how a handler tells telemetry and audit what it decided, and why.

A decider cannot reach the :class:`~adk_lattice.Outcome` of its hook (the outcome is made
after the chain ran), but it holds the hook's context object, and the outcome's ``args``
hold the very same object. So a decider notes against its context; the first telemetry
observer to see the hook's outcome moves the notes into ``outcome.extra``. An observer that
runs before ``Telemetry``/``AuditLog`` (the cache store, for instance) notes against the
outcome itself.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from ._hooks import CONTEXT_ARG
from ._outcome import Outcome

#: What a handler can report it decided: the vocabulary of notes, metrics and audit records.
DecisionName = Literal[
    "allow",  # a policy handler ran and let the hook proceed unchanged
    "deny",  # a policy answered instead of the model or the tool
    "block",  # a policy stopped an agent or a run, or withheld a whole response or result
    "defer",  # a policy paused a call until a person approves it (human in the loop)
    "rewrite",  # a handler changed the request, arguments, response or result
    "redact",  # a policy removed sensitive values (in place or by replacement)
    "override",  # a custom handler's value replaced what ADK would have done
    "cache_hit",  # a cache served the answer
    "cache_miss",  # a cache looked and found nothing
    "cache_store",  # a cache stored the delivered answer
    "cache_skip",  # a cache chose not to look or not to store (uncacheable)
    "cache_error",  # a cache handler failed (skipped, fail open)
    "error",  # a handler raised, timed out or returned a refused value
]

DECISIONS: Final[frozenset[str]] = frozenset(DecisionName.__args__)  # type: ignore[attr-defined]

#: Where gathered notes live in ``outcome.extra``.
NOTES_KEY: Final = "adk_lattice.notes"
#: Where ``is_quiet`` keeps its answer for an outcome, so observers after the first reuse it;
#: a note made against the outcome drops it.
QUIET_KEY: Final = "adk_lattice.quiet"
#: Where ``decisions_of`` keeps its answer; a later note drops it.
DECISIONS_KEY: Final = "adk_lattice.decisions"
#: The key, in ``LlmResponse.custom_metadata``, handlers may describe a response under.
METADATA_KEY: Final = "adk_lattice"
_MAX_PENDING: Final = 1024
_MODEL_HOOKS: Final = frozenset({"before_model", "after_model", "on_model_error"})


@dataclass(frozen=True, slots=True)
class Note:
    """One decision a handler reported.

    Attributes:
        handler: the reporting handler's name (as in ``Step.handler``).
        decision: one of the decision names (``deny``, ``redact``, ``cache_hit``, ...).
        reason: a short, content-free reason (a rule name, a category), or None.
    """

    handler: str
    decision: str
    reason: str | None = None


#: A reference to a noted context: weak where the object allows it, so a context nobody
#: gathers notes for (a lattice without telemetry observers, a handler called directly) is
#: not kept alive by its notes.
_Ref = Callable[[], object]
_pending: OrderedDict[int, tuple[_Ref, list[Note]]] = OrderedDict()
_lock = threading.Lock()
#: References whose object died. A weakref callback may run inside any allocation, even
#: while ``_lock`` is held by the same thread, so it only appends here (atomic) and the
#: entries are purged under the lock by the next call.
_dead: list[tuple[int, _Ref]] = []


def _ref(target: object) -> _Ref:
    key = id(target)
    try:
        return weakref.ref(target, lambda r: _dead.append((key, r)))
    except TypeError:  # not weakly referenceable: hold it (bounded by _MAX_PENDING)
        return lambda: target


def _purge() -> None:
    """Drop the entries of dead contexts (call with ``_lock`` held)."""
    while _dead:
        key, ref = _dead.pop()
        entry = _pending.get(key)
        if entry is not None and entry[0] is ref:
            del _pending[key]


def note(target: Any, decision: str, *, handler: str, reason: str | None = None) -> None:
    """Report a decision for telemetry and audit.

    Call it from a handler with the hook's context argument (``callback_context``,
    ``tool_context`` or ``invocation_context``), or from an observer with the ``Outcome``::

        def after_model(self, *, callback_context, llm_response):
            if self._redact(llm_response):
                note(callback_context, "redact", handler=self.name, reason="email")

    Keep ``reason`` free of user content: it goes to spans, metrics and the audit log.

    Args:
        target: the hook's context object, or the ``Outcome`` being observed.
        decision: a decision name from ``adk_lattice.telemetry.DECISIONS``.
        handler: the name of the handler that decided.
        reason: why, in a few words, or None.

    Raises:
        ValueError: on an unknown decision name.
    """
    if decision not in DECISIONS:
        raise ValueError(f"unknown decision {decision!r}; expected one of {sorted(DECISIONS)}")
    item = Note(handler, decision, reason)
    if isinstance(target, Outcome):
        target.extra.setdefault(NOTES_KEY, []).append(item)
        _forget_answers(target)  # a note makes the outcome tell something new
        return
    with _lock:
        _purge()
        entry = _pending.get(id(target))
        if entry is None or entry[0]() is not target:
            entry = (_ref(target), [])
            _pending[id(target)] = entry
        entry[1].append(item)
        # Bounded: notes nobody gathers (no telemetry observer registered) must not pile up.
        while len(_pending) > _MAX_PENDING:
            _pending.popitem(last=False)


def has_late_notes(outcome: Outcome) -> bool:
    """Whether notes were made on the outcome's context since its notes were gathered."""
    if not _pending:
        return False
    ctx = outcome.args.get(CONTEXT_ARG[outcome.hook])
    return ctx is not None and id(ctx) in _pending


def _forget_answers(outcome: Outcome) -> None:
    """Drop what observers computed from the notes so far (decisions, quietness)."""
    outcome.extra.pop(QUIET_KEY, None)
    outcome.extra.pop(DECISIONS_KEY, None)


def notes_of(outcome: Outcome) -> list[Note]:
    """Every note for this outcome: noted on its context, on it, or in the response metadata.

    The first call moves notes made against the hook's context into ``outcome.extra``, so
    every observer after it sees the same list; a later call takes the notes made on the
    context since (an observer noting after another read them) and drops the answers
    computed from the earlier list.
    """
    gathered: list[Note] = outcome.extra.setdefault(NOTES_KEY, [])
    first = not outcome.extra.get("adk_lattice.gathered")
    outcome.extra["adk_lattice.gathered"] = True
    own: list[Note] = []
    # Taken on every call, not only the first: an observer may note on the context after
    # another observer read the notes (nothing pending: nothing to take, no lock to take).
    ctx = outcome.args.get(CONTEXT_ARG[outcome.hook]) if _pending else None
    if ctx is not None:
        with _lock:
            _purge()
            entry = _pending.get(id(ctx))
            if entry is not None and entry[0]() is ctx:
                del _pending[id(ctx)]
            else:
                entry = None
        if entry is not None:
            own = entry[1]
            if first:
                gathered[:0] = own
            else:
                gathered.extend(own)
                _forget_answers(outcome)
    if not first:
        return gathered
    if outcome.hook in _MODEL_HOOKS and not outcome.synthesized and not outcome.partial:
        # A synthesized close repeats the marks of the outcome that caused it: skip it.
        response = outcome.final if outcome.hook == "after_model" else outcome.value
        fresh = outcome.hook == "after_model"
        # A decider's own notes say more than the marks on its response: they win.
        noted = {n.handler for n in own}
        marks = _metadata_notes(response, outcome.acted_by, fresh=fresh)
        gathered.extend(m for m in marks if m.handler not in noted)
    return gathered


def _metadata_notes(response: Any, acted_by: str | None, *, fresh: bool) -> list[Note]:
    """Notes a response carries in ``custom_metadata["adk_lattice"]`` (cache hits, denials).

    ``decision`` is read only on a fresh ``after_model`` response: a response served from a
    cache may still carry the decision made when it was first produced.
    """
    meta = getattr(response, "custom_metadata", None)
    block = meta.get(METADATA_KEY) if isinstance(meta, Mapping) else None
    if not isinstance(block, Mapping):
        return []
    # Attribute the marks to the handler whose value won, else to whoever the metadata names.
    handler = acted_by or str(block.get("handler") or block.get("denied_by") or "")
    notes: list[Note] = []
    reason = block.get("reason")
    reason = str(reason) if reason is not None else None
    decision = block.get("decision")
    if fresh and isinstance(decision, str) and decision in DECISIONS:
        notes.append(Note(handler, decision, reason))
    elif block.get("denied_by") is not None:
        notes.append(Note(str(block["denied_by"]), "deny", reason))
    cache = block.get("cache")
    if isinstance(cache, Mapping):
        cache = cache.get("result", cache.get("status"))
    if isinstance(cache, str) and f"cache_{cache}" in DECISIONS:
        notes.append(Note(handler, f"cache_{cache}", None))
    return notes


def take_notes(target: Any) -> list[Note]:
    """Remove and return the notes made against ``target`` (a shadow run's context copy)."""
    if target is None:
        return []
    with _lock:
        _purge()
        entry = _pending.get(id(target))
        if entry is None or entry[0]() is not target:
            return []
        del _pending[id(target)]
        return entry[1]


def pending_count() -> int:
    """How many live contexts hold notes nobody gathered yet (for tests and leak checks)."""
    with _lock:
        _purge()
        return len(_pending)
