"""Telling telemetry what a cache decided (store, skip, error), when telemetry is present.

The cache tier does not need the telemetry package: ``adk_lattice.telemetry.note`` is looked
up once, on first use, and when it is missing every report is a no-op. Reporting never
fails a cache operation.
"""

from __future__ import annotations

import functools
import importlib
import logging
from collections.abc import Callable
from typing import Any

logger = logging.getLogger("adk_lattice.cache")


@functools.cache
def _note() -> Callable[..., None] | None:
    try:
        module = importlib.import_module("adk_lattice.telemetry")
    except ImportError:
        return None
    fn = getattr(module, "note", None)
    return fn if callable(fn) else None


def report(target: Any, decision: str, *, handler: str, reason: str | None = None) -> None:
    """Note a cache decision on a hook's context or an outcome for telemetry and audit.

    Args:
        target: the hook's context object (from a decider) or the ``Outcome`` (from
            ``observe``).
        decision: ``cache_store``, ``cache_skip`` or ``cache_error`` (hits and misses are
            inferred by telemetry from the handler's step).
        handler: the cache's name.
        reason: a short, content-free reason (``no_store``, ``function_call``, ...).
    """
    fn = _note()
    if fn is None:
        return
    try:
        fn(target, decision, handler=handler, reason=reason)
    except Exception:  # telemetry must never break caching
        logger.debug("adk_lattice: could not note %s for %s", decision, handler, exc_info=True)
