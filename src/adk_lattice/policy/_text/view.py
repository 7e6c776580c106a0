"""One view per text, shared by the text guards: each fold of a text computed once.

``InjectionGuard`` and ``RedactPII`` fold the texts they read (NFKC, invisible characters,
look-alike letters) and run their pattern sets on the folds. A text both read, or one read
again on the next model call, would be folded again; :func:`shared` remembers what a fold
function returned for a text and its arguments, so it is computed once per content.

Only the package's own fold functions go through it: each is a pure function of the text
and its arguments, and the memo is keyed by the function, the text and every argument, so
a result is never served for another text or another setting. A detector of one's own (a
callable) is never remembered: it may not be pure.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Final, TypeVar

from cachetools import LRUCache

#: Texts up to this long have their folds remembered; longer ones are folded each time.
MEMO_CHARS: Final = 8_192
#: How many folds are kept, least recently used out.
MEMO_ENTRIES: Final = 8_192

T = TypeVar("T")

_MEMO: Final[LRUCache[tuple[Any, ...], Any]] = LRUCache(MEMO_ENTRIES)


def shared(fn: Callable[..., T], text: str, *args: Hashable) -> T:
    """``fn(text, *args)``, remembered for short texts.

    Args:
        fn: one of the package's pure fold functions (never a callable of one's own).
        text: the text.
        args: the fold's other arguments, all of which its result may depend on.

    Returns:
        What ``fn(text, *args)`` returns.
    """
    if len(text) > MEMO_CHARS:
        return fn(text, *args)
    key = (fn, text, *args)
    try:
        return _MEMO[key]  # type: ignore[no-any-return]
    except KeyError:
        pass
    value = _MEMO[key] = fn(text, *args)
    return value


def clear() -> None:
    """Forget every remembered fold."""
    _MEMO.clear()


def size() -> int:
    """How many folds are remembered."""
    return len(_MEMO)
