"""Declared session-state keys: a name with an ADK scope, a type, a default and a doc line.

Built-in policies read identity, roles, tenants and flags only through a :class:`StateKey`,
never from arguments a model chose. Every key registers itself in a registry, so the keys an
app relies on are documented in one place (:meth:`StateKeys.describe`)::

    IS_MANAGER = StateKey("user:is_manager", bool, False, "May approve refunds over the limit.")
    TENANT = StateKey("user:tenant_id", str, "", "The tenant whose rows this user may read.")

    if IS_MANAGER.get(tool_context.state):
        ...
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Final, Generic, Literal, TypeVar, cast

logger = logging.getLogger("adk_lattice.state")

T = TypeVar("T")
Scope = Literal["app", "user", "temp", "session"]

#: ADK's state prefixes; a name without one is session-scoped.
PREFIXES: Final[tuple[tuple[str, Scope], ...]] = (
    ("app:", "app"),
    ("user:", "user"),
    ("temp:", "temp"),
)
#: The ``temp:`` state key listing the protected keys whose forged writes were undone in
#: this invocation (never persisted).
REFUSED_WRITES: Final = "temp:adk_lattice.refused_writes"
_NAME = re.compile(r"^(?:(?:app|user|temp):)?[A-Za-z_][A-Za-z0-9_.\-]*$")


def _matches(value: Any, kind: type) -> bool:
    """Whether ``value`` is an honest instance of ``kind`` (no bool for int, no NaN)."""
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return ok and math.isfinite(value)
    return isinstance(value, kind)


class StateKeys:
    """A registry of declared state keys, so they are documented in one place.

    A module-level default registry (:data:`REGISTRY`) receives every :class:`StateKey`
    unless it names another one.
    """

    def __init__(self) -> None:
        self._keys: dict[str, StateKey[Any]] = {}
        self._protected: frozenset[str] = frozenset()
        self._lock = threading.Lock()

    def add(self, key: StateKey[Any]) -> None:
        """Register a key; declaring the same name again with the same type is allowed.

        Raises:
            ValueError: when the name is already declared with a different type.
        """
        with self._lock:
            known = self._keys.get(key.name)
            if known is not None and known.type is not key.type:
                raise ValueError(
                    f"state key {key.name!r} is already declared as {known.type.__name__}, "
                    f"not {key.type.__name__}"
                )
            # Protection is never lost: a name declared protected anywhere stays protected.
            if known is None or (key.protected and not known.protected):
                self._keys[key.name] = key
                if key.protected:
                    self._protected = self._protected | {key.name}

    def __contains__(self, name: object) -> bool:
        return name in self._keys

    def __iter__(self) -> Iterator[StateKey[Any]]:
        return iter(sorted(self._keys.values(), key=lambda k: k.name))

    def __len__(self) -> int:
        return len(self._keys)

    def get(self, name: str) -> StateKey[Any] | None:
        """The key declared under ``name``, or None."""
        return self._keys.get(name)

    def protected(self) -> frozenset[str]:
        """The names of every key declared with ``protected=True``."""
        return self._protected  # replaced, never mutated: reading needs no lock

    def describe(self) -> str:
        """A markdown table of every key: name, scope, type, default, doc."""
        rows = ["| name | scope | type | default | doc |", "|---|---|---|---|---|"]
        for k in self:
            doc = k.doc.replace("|", "\\|").replace("\n", " ")
            rows.append(f"| `{k.name}` | {k.scope} | {k.type.__name__} | `{k.default!r}` | {doc} |")
        return "\n".join(rows) + "\n"


#: The default registry every :class:`StateKey` registers into.
REGISTRY: Final = StateKeys()


@dataclass(frozen=True, slots=True)
class StateKey(Generic[T]):
    """One declared key of ADK session state.

    Args:
        name: the state key, with its ADK scope prefix (``app:``, ``user:``, ``temp:``, or
            none for session scope), e.g. ``"user:is_manager"``.
        type: the Python type its value must have (``bool``, ``int``, ``float``, ``str``, ...).
        default: what :meth:`get` returns when the key is missing or holds a wrong value.
        doc: one line saying what the key means, for :meth:`StateKeys.describe`.
        registry: where to register (default: :data:`REGISTRY`).
        protected: only the application may write it (identity, roles, tenants, flags):
            :class:`~adk_lattice.policy.ProtectState` undoes a write from a client's state
            delta or from a tool the app did not name as a writer.

    Raises:
        ValueError: on a malformed name, a default of the wrong type, or a name already
            declared with another type.
    """

    name: str
    type: type[T]
    default: T
    doc: str = ""
    registry: StateKeys | None = field(default=REGISTRY, repr=False, compare=False)
    protected: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ValueError(
                f"bad state key name {self.name!r}: use an identifier, optionally prefixed "
                f"with 'app:', 'user:' or 'temp:'"
            )
        if not isinstance(self.type, type):
            raise ValueError(f"state key {self.name!r}: type must be a class, got {self.type!r}")
        if self.default is not None and not _matches(self.default, self.type):
            raise ValueError(
                f"state key {self.name!r}: default {self.default!r} is not a {self.type.__name__}"
            )
        if self.registry is not None:
            self.registry.add(self)

    @property
    def scope(self) -> Scope:
        """``app``, ``user``, ``temp`` or ``session``, from the name's prefix."""
        for prefix, scope in PREFIXES:
            if self.name.startswith(prefix):
                return scope
        return "session"

    def get(self, state: Mapping[str, Any] | Any) -> T:
        """The value in ``state``, or the default when missing or of the wrong type.

        A wrong-typed value (say the string ``"true"`` for a bool key) is never trusted: it
        is logged (by type, never by value) and the default is returned.
        """
        try:
            value = state.get(self.name, None)
        except Exception:  # a state object that cannot be read is as good as missing
            logger.warning("adk_lattice: state for key %r could not be read", self.name)
            return self.default
        if value is None:
            return self.default
        if not _matches(value, self.type):
            logger.warning(
                "adk_lattice: state key %r holds a %s, expected %s; using the default",
                self.name,
                type(value).__name__,
                self.type.__name__,
            )
            return self.default
        return cast(T, value)

    def set(self, state: MutableMapping[str, Any] | Any, value: T) -> None:
        """Write ``value`` to ``state`` after checking its type.

        Raises:
            TypeError: when ``value`` is not a ``type`` (or is NaN/infinite for float).
        """
        if not _matches(value, self.type):
            raise TypeError(
                f"state key {self.name!r} takes a {self.type.__name__}, "
                f"not a {type(value).__name__}"
            )
        state[self.name] = value

    def refused(self, state: Mapping[str, Any] | Any) -> bool:
        """Whether a write to this key was refused during the current invocation.

        :class:`~adk_lattice.policy.ProtectState` lists the keys whose forged writes it
        undid in ``temp:`` state; the value :meth:`get` reads is then the application's,
        and a policy may still treat the attempt as a signal.
        """
        try:
            refused = state.get(REFUSED_WRITES, None)
        except Exception:
            return False
        return isinstance(refused, list | tuple | frozenset | set) and self.name in refused

    def present(self, state: Mapping[str, Any] | Any) -> bool:
        """Whether ``state`` holds a value of the right type under this key."""
        try:
            value = state.get(self.name, None)
        except Exception:
            return False
        return value is not None and _matches(value, self.type)


__all__ = ["REFUSED_WRITES", "REGISTRY", "Scope", "StateKey", "StateKeys"]
