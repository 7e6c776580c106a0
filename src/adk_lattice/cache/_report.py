"""Telling telemetry and audit what a cache decided (store, skip, error).

Decision notes are a core concept (``adk_lattice._notes``) below the cache and telemetry
tiers, so the cache reports with ``note`` directly. Reporting never fails a cache operation.
"""

from __future__ import annotations

import logging
from typing import Any

from .._notes import note

logger = logging.getLogger("adk_lattice.cache")


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
    try:
        note(target, decision, handler=handler, reason=reason)
    except Exception:  # telemetry must never break caching
        logger.debug("adk_lattice: could not note %s for %s", decision, handler, exc_info=True)
