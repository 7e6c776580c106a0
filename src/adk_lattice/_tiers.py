"""Building a lattice's tiers once, at construction, and closing their members."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._handlers import Bound, bind, handler_name
from ._hooks import DECIDER_TIERS, HOOKS, HookName, Tier

logger = logging.getLogger("adk_lattice")


def default_telemetry() -> tuple[Any, ...]:
    """The observers ``Lattice(name=...)`` gets when ``telemetry`` is not given.

    Spans and metrics through the global OpenTelemetry providers (no-ops until an SDK
    provider is set), and one audit record per invocation to the ``adk_lattice.audit``
    logger. Imported here so that importing the core does not import the telemetry tier.
    """
    from .telemetry import AuditLog, Telemetry

    return (Telemetry(), AuditLog())


def build_tiers(
    tiers: Mapping[Tier, Sequence[Any]], timeout: float | None
) -> tuple[dict[HookName, tuple[Bound, ...]], tuple[Bound, ...], tuple[Any, ...]]:
    """Bind every registered entry, in tier order.

    Returns:
        The deciders per hook (tiers in order), the observers, and every entry (to close).

    Raises:
        TypeError: on a registration mistake (see :func:`~adk_lattice._handlers.bind`), a
            single handler where a list is expected, or two handlers with the same name.
        ValueError: on a bad handler option.
    """
    chains: dict[HookName, list[Bound]] = {hook: [] for hook in HOOKS}
    observers: list[Bound] = []
    members: list[Any] = []
    names: dict[str, Tier] = {}
    for tier in (*DECIDER_TIERS, "telemetry"):
        entries = tiers[tier]
        if isinstance(entries, str | bytes) or not isinstance(entries, Iterable):
            raise TypeError(f"{tier}= takes a list of handlers, got {type(entries).__name__}")
        for obj in entries:
            hooks, observer = bind(obj, tier, timeout)
            claim_name(names, handler_name(obj), tier)
            for hook, bound in hooks.items():
                chains[hook].append(bound)
            if observer is not None:
                observers.append(observer)
            members.append(obj)
    return {h: tuple(c) for h, c in chains.items()}, tuple(observers), tuple(members)


def claim_name(names: dict[str, Tier], name: str, tier: Tier) -> None:
    """Refuse a second handler under a name already taken in this lattice.

    Telemetry, stats, audit records and keys derived from a handler's name (rate-limit
    counters) tell handlers apart by name alone.

    Raises:
        TypeError: saying how to give each its own name.
    """
    first = names.get(name)
    if first is not None:
        raise TypeError(
            f"two handlers are named {name!r} (in {first}= and {tier}=): give each its own "
            f"name, e.g. name=... where the class takes it, or configure(handler, name=...)"
        )
    names[name] = tier


async def close_members(
    members: Iterable[Any], *, held: bool = True, stores: Iterable[Any] = ()
) -> None:
    """Close each entry, then every store the entries hold, each store once.

    An entry's ``close`` (sync or async) runs first, so an audit log writes what it still
    holds and a cache finishes with its store before the store goes. The stores are the
    ``store`` attribute of each entry (a store or a counter store: anything with a
    ``close``) and ``stores``; one shared by several entries is closed once. Failures are
    logged and the rest still close.

    Args:
        members: the registered entries, in tier order.
        held: also close the stores the entries hold.
        stores: further stores to close (those a config file declared).
    """
    members = tuple(members)
    for obj in members:
        await _close_one(obj, "handler")
    seen: dict[int, Any] = {}
    held_stores = (getattr(obj, "store", None) for obj in members) if held else ()
    for store in (*held_stores, *stores):
        if store is not None and callable(getattr(store, "close", None)):
            seen.setdefault(id(store), store)
    for store in seen.values():
        await _close_one(store, "store")


async def _close_one(obj: Any, kind: str) -> None:
    """Call ``obj.close()`` when it has one, awaiting it when async; log a failure."""
    closer = getattr(obj, "close", None)
    if callable(closer):
        try:
            result = closer()
            if inspect.isawaitable(result):
                await result
        except Exception:
            logger.exception("adk_lattice: closing %s %r failed", kind, obj)
