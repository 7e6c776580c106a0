"""The one async store interface: bytes in, bytes out, TTL, prefix deletes, counters, fail-soft.

Every store (memory, SQLite, Redis) subclasses :class:`Store` and implements the six
``_``-methods. The public methods wrap them so that a backend failure (connection refused,
timeout, a locked or corrupt database) never reaches the caller: it is logged once per
outage, counted, and reported as a miss (``get`` returns None, ``set`` returns False,
``incr`` returns None). A run that loses its cache gets slower, never broken; a rate limit
that loses its counters decides by its own ``on_store_error``.
"""

from __future__ import annotations

import logging
import time
import weakref
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, TypeVar

logger = logging.getLogger("adk_lattice.stores")

_T = TypeVar("_T")

#: True while a shadow handler runs (and in the tasks it starts): see :func:`shadow_scope`.
_SHADOW: ContextVar[bool] = ContextVar("adk_lattice_shadow", default=False)
#: Each store's private twin for shadow handlers, created on first use.
_TWINS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


@contextmanager
def shadow_scope() -> Iterator[None]:
    """Within it, every store call goes to the store's private twin, never to the store.

    A shadow handler (``mode="shadow"``) runs inside it: its cache entries, counters,
    records and vectors land in an in-memory twin of each store it uses, one per store,
    kept for the process and shared by no enforcing handler. The store itself is neither
    read nor written, so its contents and ``stats`` are as if no shadow handler existed.
    """
    token = _SHADOW.set(True)
    try:
        yield
    finally:
        _SHADOW.reset(token)


#: How a twin is made: the memory store (a subclass of :class:`Store`) registers itself.
_MAKE_TWIN: list[Callable[[str], Store]] = []


def in_shadow() -> bool:
    """True inside :func:`shadow_scope` (a shadow handler is running)."""
    return _SHADOW.get()


def shadow_twin(store: Any, make: Callable[[], _T]) -> _T:
    """The private twin of ``store`` for shadow handlers (``make()`` builds it once)."""
    twin = _TWINS.get(store)
    if twin is None:
        twin = _TWINS[store] = make()
    return twin


#: The counters every store keeps (``stats``); a store may add its own.
STAT_NAMES: Final = (
    "hits",  # get found a live entry
    "misses",  # get found nothing (absent or expired)
    "sets",  # set stored an entry
    "incrs",  # incr counted (fixed-window counters)
    "deletes",  # delete / delete_prefix calls that reached the backend
    "errors",  # a backend call failed (logged once per outage)
    "skipped",  # calls not sent to a backend that failed less than retry_after ago
    "vector_adds",  # vector_add stored a row (the semantic cache)
    "vector_reads",  # vector_rows read a space
    "out_of_range",  # incr refused: the amount or the new count is not a signed 64-bit int
    "vector_corrupt",  # vector_rows skipped a row that does not read (written by another party)
)

#: Counters are signed 64-bit integers in every store (Redis's own range): an ``incr`` whose
#: amount or result falls outside is refused (None), never wrapped, rounded or an outage.
COUNTER_MIN: Final = -(2**63)
COUNTER_MAX: Final = 2**63 - 1

#: The longest ``ttl`` or counter window a store keeps, in seconds (about 100 years): a
#: longer one, infinity included, is kept this long, which every backend can represent.
MAX_TTL: Final = 100 * 365.25 * 86_400.0


class StoreUnavailable(Exception):
    """A store could not answer (:meth:`Store.fetch`): its backend failed or is paused."""


def check_ttl(ttl: float | None) -> float | None:
    """Validate a time-to-live in seconds; one longer than :data:`MAX_TTL` (or infinite)
    is :data:`MAX_TTL`.

    Raises:
        ValueError: when ``ttl`` is not None and not a positive number.
    """
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl > 0:
        raise ValueError(f"ttl must be a positive number of seconds or None, got {ttl!r}")
    return min(float(ttl), MAX_TTL)


@dataclass(frozen=True, slots=True)
class VectorRow:
    """One vector of a space (``Store.vector_rows``).

    Attributes:
        member: the row's name in its space (a cache stores the key of the answer).
        vector: the vector's bytes (a cache writes little-endian float32).
        meta: bytes kept with it (a cache keeps the question's text).
        expires_at: wall-clock time (``time.time()``) it expires at, or None.
    """

    member: str
    vector: bytes
    meta: bytes
    expires_at: float | None


def read_row(member: Any, vector: Any, meta: Any, expires_at: Any) -> VectorRow | None:
    """A row as a backend returned it, or None when a field has the wrong type.

    A backend shared with other writers (another process, another version) may hold a row
    this package never wrote; such a row is skipped, not a failure of the whole space.
    """
    if isinstance(member, bytes):
        try:
            member = member.decode()
        except UnicodeDecodeError:
            return None
    if not isinstance(member, str) or not member:
        return None
    if not isinstance(vector, bytes | bytearray | memoryview):
        return None
    if not isinstance(meta, bytes | bytearray | memoryview):
        return None
    if expires_at is not None:
        if isinstance(expires_at, bool) or not isinstance(expires_at, int | float):
            return None
        if expires_at != expires_at:  # NaN: no expiry it could mean
            return None
        expires_at = float(expires_at)
    return VectorRow(member, bytes(vector), bytes(meta), expires_at)


@dataclass(frozen=True, slots=True)
class VectorRows:
    """Every live row of one space and the space's version when they were read.

    Attributes:
        version: changes whenever a row of the space is added, replaced or removed, so a
            reader holding the rows of one version need not read them again.
        rows: the rows, oldest first.
    """

    version: int
    rows: tuple[VectorRow, ...]


class Store(ABC):
    """An async key-value store of bytes with per-entry TTL and prefix invalidation.

    Args:
        name: the name used in logs and counters.
        retry_after: seconds to stop sending calls to a backend after it failed, so an
            outage costs one timeout, not one per call; 0 retries on every call.

    Subclasses implement ``_get``, ``_set``, ``_incr``, ``_delete``, ``_delete_prefix`` and
    ``_close`` and may raise anything from them; the public methods turn failures into misses.

    Counters (``incr``) live in a key space of their own: ``get``, ``set``, ``delete`` and
    ``delete_prefix`` never see or remove them, so invalidating a cache never resets a rate
    limit, and one store can serve caches and rate limits at once.
    """

    def __init__(self, *, name: str, retry_after: float = 0.0) -> None:
        if retry_after < 0:
            raise ValueError("retry_after must be >= 0")
        self.name = name
        self._retry_after = float(retry_after)
        self._down_until = 0.0
        self._down = False
        self._stats: Counter[str] = Counter(dict.fromkeys(STAT_NAMES, 0))
        #: True for a shadow twin itself, which answers shadow handlers directly.
        self._is_twin = False

    @property
    def stats(self) -> Mapping[str, int]:
        """Live counters: ``hits``, ``misses``, ``sets``, ``deletes``, ``errors``, ``skipped``..."""
        return MappingProxyType(self._stats)

    @property
    def healthy(self) -> bool:
        """False while the backend is considered down (its last call failed)."""
        return not self._down

    async def get(self, key: str) -> bytes | None:
        """The value stored under ``key``, or None when absent, expired or unreachable."""
        try:
            return await self.fetch(key)
        except StoreUnavailable:
            return None

    async def fetch(self, key: str) -> bytes | None:
        """Like :meth:`get`, but a store that cannot answer raises instead of missing.

        For a policy that must tell "nothing stored" from "cannot know" (``ProtectState``
        reads the application's record of a protected key with it). The failure is logged
        and counted as for ``get``.

        Returns:
            The value, or None when absent or expired.

        Raises:
            StoreUnavailable: when the backend failed, or is paused after a failure.
        """
        if _SHADOW.get() and not self._is_twin:
            return await self._twin().fetch(key)
        _check_key(key)
        if self._skip():
            raise StoreUnavailable(f"store {self.name!r} is paused after a failure")
        try:
            value = await self._get(key)
        except Exception as exc:
            self._failed("get", exc)
            raise StoreUnavailable(f"store {self.name!r} failed ({type(exc).__name__})") from None
        self._ok()
        self._stats["hits" if value is not None else "misses"] += 1
        return value

    async def set(self, key: str, value: bytes, ttl: float | None = None) -> bool:
        """Store ``value`` under ``key`` for ``ttl`` seconds (None: until evicted).

        Returns:
            True when stored; False when the backend failed or refused it (too large).

        Raises:
            TypeError: when ``value`` is not bytes. ValueError: on a bad ``ttl``.
        """
        if _SHADOW.get() and not self._is_twin:
            return await self._twin().set(key, value, ttl)
        _check_key(key)
        if not isinstance(value, bytes):
            raise TypeError(f"store values are bytes, got {type(value).__name__}")
        ttl = check_ttl(ttl)
        if self._skip():
            return False
        try:
            stored = await self._set(key, value, ttl)
        except Exception as exc:
            self._failed("set", exc)
            return False
        self._ok()
        if stored:
            self._stats["sets"] += 1
        return stored

    async def incr(self, key: str, window: float, amount: int = 1) -> int | None:
        """Add ``amount`` to the fixed-window counter ``key``, atomically.

        The first increment of a key starts its window: the counter expires ``window``
        seconds later, and the next increment after that starts again from zero. A
        negative ``amount`` (giving back a reservation) never starts a window: on an
        absent or expired counter it changes nothing and returns 0. Counters are signed
        64-bit integers: an ``amount`` or a new count outside that range is refused (None,
        counted as ``out_of_range``, the counter unchanged), not a backend failure. A
        window longer than :data:`MAX_TTL` is :data:`MAX_TTL`.

        Args:
            key: the counter's name (a key space apart from the entries of ``get``/``set``).
            window: the window's length in seconds.
            amount: what to add (default one: a count; a sum adds e.g. cents).

        Returns:
            The counter after this increment, or None when the backend failed (logged once
            per outage and counted, like ``get`` and ``set``) or refused it.

        Raises:
            ValueError: on an empty key or a non-positive ``window``. TypeError: when
                ``amount`` is not an int.
        """
        if _SHADOW.get() and not self._is_twin:
            return await self._twin().incr(key, window, amount)
        _check_key(key)
        if isinstance(window, bool) or not isinstance(window, int | float) or not window > 0:
            raise ValueError(f"window must be a positive number of seconds, got {window!r}")
        if isinstance(amount, bool) or not isinstance(amount, int):
            raise TypeError(f"amount must be an int, got {type(amount).__name__}")
        if not COUNTER_MIN <= amount <= COUNTER_MAX:
            self._stats["out_of_range"] += 1
            return None
        window = min(float(window), MAX_TTL)
        if self._skip():
            return None
        try:
            # A subclass written before amounts existed still counts by one.
            args = (key, window) if amount == 1 else (key, window, amount)
            count = await self._incr(*args)
        except Exception as exc:
            self._failed("incr", exc)
            return None
        self._ok()
        if count is not None:
            self._stats["incrs"] += 1
        return count

    async def delete(self, key: str) -> None:
        """Remove ``key`` if present (a failure is logged and counted)."""
        if _SHADOW.get() and not self._is_twin:
            return await self._twin().delete(key)
        _check_key(key)
        if self._skip():
            return
        try:
            await self._delete(key)
        except Exception as exc:
            self._failed("delete", exc)
            return
        self._ok()
        self._stats["deletes"] += 1

    async def delete_prefix(self, prefix: str) -> int:
        """Remove every key starting with ``prefix``.

        Returns:
            How many live entries were removed (expired ones go uncounted; 0 when the
            backend failed).
        """
        if _SHADOW.get() and not self._is_twin:
            return await self._twin().delete_prefix(prefix)
        if not isinstance(prefix, str) or not prefix:
            raise ValueError("delete_prefix needs a non-empty string prefix")
        if self._skip():
            return 0
        try:
            removed = await self._delete_prefix(prefix)
        except Exception as exc:
            self._failed("delete_prefix", exc)
            return 0
        self._ok()
        self._stats["deletes"] += 1
        return removed

    async def close(self) -> None:
        """Release connections and files; safe to call more than once."""
        try:
            await self._close()
        except Exception:
            logger.exception("adk_lattice: closing store %r failed", self.name)

    # -- vectors (the semantic cache) -------------------------------------------------------

    @property
    def supports_vectors(self) -> bool:
        """Whether this store keeps vector spaces (memory, SQLite and Redis do)."""
        return type(self)._vector_add is not Store._vector_add

    async def vector_add(
        self, space: str, member: str, vector: bytes, meta: bytes, ttl: float | None, limit: int
    ) -> bool:
        """Add (or replace) one row of a vector space, keeping at most ``limit`` rows in it.

        A space is a key space of its own: ``get``, ``set``, ``delete`` and ``delete_prefix``
        never see it. Past ``limit`` rows, the oldest go first (with one TTL for every row,
        the rows that expire soonest).

        Args:
            space: the space's name (a cache names one per scope and context).
            member: the row's name in the space; adding it again replaces it.
            vector: the vector's bytes. meta: bytes kept with it.
            ttl: seconds the row lives (None: until pushed out).
            limit: most rows the space keeps (at least 1).

        Returns:
            True when stored; False when the backend failed.

        Raises:
            TypeError: when ``vector`` or ``meta`` is not bytes. ValueError: on an empty
                name, a bad ``ttl`` or a ``limit`` below 1.
        """
        if _SHADOW.get() and not self._is_twin:
            return await self._twin().vector_add(space, member, vector, meta, ttl, limit)
        _check_key(space)
        _check_key(member)
        if not isinstance(vector, bytes) or not isinstance(meta, bytes):
            raise TypeError("vector and meta are bytes")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be an int of at least 1, got {limit!r}")
        ttl = check_ttl(ttl)
        if self._skip():
            return False
        try:
            await self._vector_add(space, member, vector, meta, ttl, limit)
        except Exception as exc:
            self._failed("vector_add", exc)
            return False
        self._ok()
        self._stats["vector_adds"] += 1
        return True

    async def vector_version(self, space: str) -> int | None:
        """The space's version (0 for a space never written), or None when the backend failed."""
        if _SHADOW.get() and not self._is_twin:
            return await self._twin().vector_version(space)
        _check_key(space)
        if self._skip():
            return None
        try:
            version = await self._vector_version(space)
        except Exception as exc:
            self._failed("vector_version", exc)
            return None
        self._ok()
        return version

    async def vector_rows(self, space: str) -> VectorRows | None:
        """Every live row of the space with its version, or None when the backend failed."""
        if _SHADOW.get() and not self._is_twin:
            return await self._twin().vector_rows(space)
        _check_key(space)
        if self._skip():
            return None
        try:
            rows = await self._vector_rows(space)
        except Exception as exc:
            self._failed("vector_rows", exc)
            return None
        self._ok()
        self._stats["vector_reads"] += 1
        return rows

    async def vector_remove(self, space: str, member: str) -> None:
        """Remove one row of a space, if present (a failure is logged and counted)."""
        if _SHADOW.get() and not self._is_twin:
            return await self._twin().vector_remove(space, member)
        _check_key(space)
        _check_key(member)
        if self._skip():
            return
        try:
            await self._vector_remove(space, member)
        except Exception as exc:
            self._failed("vector_remove", exc)
            return
        self._ok()

    # Not abstract: a store written for the key-value interface alone still works (for
    # every cache but the semantic one, which checks ``supports_vectors``).
    async def _vector_add(
        self, space: str, member: str, vector: bytes, meta: bytes, ttl: float | None, limit: int
    ) -> None:
        raise NotImplementedError(f"{type(self).__name__} keeps no vectors")

    async def _vector_version(self, space: str) -> int:
        raise NotImplementedError(f"{type(self).__name__} keeps no vectors")

    async def _vector_rows(self, space: str) -> VectorRows:
        raise NotImplementedError(f"{type(self).__name__} keeps no vectors")

    async def _vector_remove(self, space: str, member: str) -> None:
        raise NotImplementedError(f"{type(self).__name__} keeps no vectors")

    # -- for subclasses --------------------------------------------------------------------

    @abstractmethod
    async def _get(self, key: str) -> bytes | None: ...

    @abstractmethod
    async def _set(self, key: str, value: bytes, ttl: float | None) -> bool: ...

    @abstractmethod
    async def _incr(self, key: str, window: float, amount: int = 1) -> int | None:
        """Add ``amount`` atomically; None when the store refuses (e.g. its counters are full).

        A negative ``amount`` on an absent or expired counter changes nothing and returns 0.
        A count that would leave [``COUNTER_MIN``, ``COUNTER_MAX``] is refused: the counter
        stays as it was, ``out_of_range`` is counted and None returned.
        """

    @abstractmethod
    async def _delete(self, key: str) -> None: ...

    @abstractmethod
    async def _delete_prefix(self, prefix: str) -> int: ...

    @abstractmethod
    async def _close(self) -> None: ...

    def _twin(self) -> Store:
        """This store's in-memory twin for shadow handlers (see :func:`shadow_scope`)."""

        def make() -> Store:
            assert _MAKE_TWIN, "the memory store registers the twin maker at import"
            twin = _MAKE_TWIN[0](f"{self.name}.shadow")
            twin._is_twin = True
            return twin

        return shadow_twin(self, make)

    # -- failure bookkeeping -------------------------------------------------------------------

    def _skip(self) -> bool:
        if self._down and time.monotonic() < self._down_until:
            self._stats["skipped"] += 1
            return True
        return False

    def _failed(self, op: str, exc: BaseException) -> None:
        self._stats["errors"] += 1
        self._down_until = time.monotonic() + self._retry_after
        if not self._down:  # one warning per outage, not one per call
            logger.warning(
                "adk_lattice: store %r failed on %s (%s); treating it as a miss%s",
                self.name,
                op,
                type(exc).__name__,  # not the message: it may quote a key naming a user
                f" and pausing it for {self._retry_after:g}s" if self._retry_after else "",
            )
        self._down = True

    def _ok(self) -> None:
        if self._down:
            logger.warning("adk_lattice: store %r answers again", self.name)
            self._down = False


def _check_key(key: str) -> None:
    if not isinstance(key, str) or not key:
        raise ValueError(f"store keys are non-empty strings, got {key!r}")
