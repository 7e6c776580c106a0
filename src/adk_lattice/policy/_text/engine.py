"""Linear-time pattern matching for text an attacker writes: RE2 when present, else ``re``.

Every guard pattern runs on attacker-controlled text, so the matching engine must not
backtrack. RE2 (``google-re2``, a dependency with wheels for Linux, macOS and Windows)
guarantees time linear in the text; :class:`PatternSet` runs all of a guard's patterns in
one pass (an RE2 ``Set``) and reports which of them occur. Without RE2 importable it falls
back to Python's ``re``, one pattern at a time (every built-in pattern is written so that
``re`` stays linear on it too, see the tests).

Python's ``re`` and RE2 read a few escapes differently; patterns are translated so both
agree: ``\\s`` and ``\\w`` get their Unicode meaning. ``\\b`` stays an ASCII word
boundary under RE2 (it matches in a few more places around non-ASCII letters).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

try:  # pragma: no cover - which branch runs depends on the install
    import re2 as _re2  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover
    _re2 = None

#: Which engine the guards use: ``re2`` or ``re``.
ENGINE: Final = "re2" if _re2 is not None else "re"

#: Python's Unicode classes as RE2 class members: ``\s`` (``str.isspace``), ``\w``, ``\d``.
_MEMBERS: Final = {
    r"\s": (
        r"\s\x0b\x1c-\x1f\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}"
        r"\x{205f}\x{3000}"
    ),
    r"\w": r"\pL\pN_",
    r"\d": r"\p{Nd}",
}
_NEGATED: Final = {r"\S": r"\s", r"\W": r"\w", r"\D": r"\d"}
#: RE2's DFA budget for one set: enough for every built-in set on any text size.
_MAX_MEM: Final = 64 << 20


def to_re2(pattern: str) -> str:
    """``pattern`` (Python ``re`` syntax) rewritten so RE2 reads it the same way.

    ``\\s``, ``\\w``, ``\\d`` and their negations get their Unicode meaning (inside a
    class too, bar the negations), ``\\uXXXX`` and ``\\UXXXXXXXX`` become ``\\x{...}``,
    ``\\Z`` becomes ``\\z``.

    Args:
        pattern: a Python regular expression.

    Returns:
        The same expression in RE2 syntax.
    """
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            pair = pattern[i : i + 2]
            if pair in _MEMBERS:
                out.append(_MEMBERS[pair] if in_class else f"[{_MEMBERS[pair]}]")
            elif pair in _NEGATED and not in_class:
                out.append(f"[^{_MEMBERS[_NEGATED[pair]]}]")
            elif pair == r"\Z":
                out.append(r"\z")  # the end of the text
            elif pair in (r"\u", r"\U"):
                width = 4 if pair == r"\u" else 8
                out.append(f"\\x{{{pattern[i + 2 : i + 2 + width]}}}")
                i += width
            else:
                out.append(pair)
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
            out.append(c)
            # A ']' right after '[' or '[^' is a literal, not the end of the class.
            j = i + 1
            if pattern[j : j + 1] == "^":
                out.append("^")
                j += 1
            if pattern[j : j + 1] == "]":
                out.append("]")
                j += 1
            i = j
            continue
        if c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)


class PatternSet:
    """Which of several patterns occur in a text, found in one linear-time pass.

    Args:
        patterns: regular expressions in Python ``re`` syntax.
        ignore_case: match without regard to case.
        multiline: ``^`` and ``$`` match at every line.
        engine: ``re2`` or ``re`` (default: :data:`ENGINE`).

    Raises:
        ValueError: when a pattern does not compile for the engine, or ``re2`` is asked for
            and not installed.
    """

    def __init__(
        self,
        patterns: Sequence[str],
        *,
        ignore_case: bool = True,
        multiline: bool = True,
        engine: str = ENGINE,
    ) -> None:
        if engine not in ("re2", "re") or (engine == "re2" and _re2 is None):
            raise ValueError(f"engine must be 're' or an installed 're2', got {engine!r}")
        self.engine = engine
        self.patterns = tuple(patterns)
        self.ignore_case = ignore_case
        self._set: Any = None
        flags = (re.IGNORECASE if ignore_case else 0) | (re.MULTILINE if multiline else 0)
        self._compiled: tuple[re.Pattern[str], ...] = ()
        if engine == "re":
            self._compiled = tuple(re.compile(p, flags) for p in self.patterns)
        if engine == "re2" and self.patterns:
            options = _re2.Options()
            options.case_sensitive = not ignore_case
            options.max_mem = _MAX_MEM
            self._set = _re2.Set.SearchSet(options)
            prefix = "(?m)" if multiline else ""
            for p in self.patterns:
                try:
                    self._set.Add(prefix + to_re2(p))
                except _re2.error as exc:
                    raise ValueError(f"pattern {p!r} does not compile for RE2: {exc}") from exc
            self._set.Compile()

    def matches(self, text: str) -> list[int]:
        """Indices (ascending) of the patterns that occur somewhere in ``text``."""
        if self._set is not None:
            # Lone surrogates (not valid text, but a str may hold them) pass through as bytes.
            return sorted(self._set.Match(text.encode("utf-8", "surrogatepass")) or ())
        return [i for i, p in enumerate(self._compiled) if p.search(text)]

    def found(self, text: str) -> bool:
        """Whether any of the patterns occurs in ``text``."""
        if self._set is not None:
            return bool(self._set.Match(text.encode("utf-8", "surrogatepass")))
        return any(p.search(text) for p in self._compiled)


def re2_bytes(pattern: str, *, latin1: bool = False) -> Any:
    """``pattern`` compiled by RE2 for matching bytes (offsets are byte offsets).

    Args:
        pattern: an RE2 expression (``\\A`` and ``\\z`` allowed, no look-around).
        latin1: match byte by byte instead of as UTF-8 (for patterns of ASCII classes only).

    Returns:
        The compiled expression (``.search(raw, pos)``, ``.finditer(raw)``), or None when
        RE2 is not installed.
    """
    if _re2 is None:
        return None
    options = _re2.Options()
    if latin1:
        options.encoding = _re2.Options.Encoding.LATIN1
    return _re2.compile(pattern.encode("latin-1") if latin1 else pattern, options)


def byte_spans(pattern: str) -> Callable[[bytes], Iterator[tuple[int, int]]]:
    """A finder of ``pattern``'s matches in bytes, on RE2 (byte by byte) or else ``re``.

    Args:
        pattern: an expression of ASCII classes and literals, read the same way by both
            engines (no look-around, no ``\\A``).

    Returns:
        A function ``raw -> iterator of (start, end)`` byte offsets, leftmost first.
    """
    compiled = re2_bytes(pattern, latin1=True) or re.compile(pattern.encode("ascii"))

    def spans(raw: bytes) -> Iterator[tuple[int, int]]:
        return finditer_spans(compiled, raw)

    return spans


def finditer_spans(compiled: Any, raw: bytes, pos: int = 0) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each match of ``compiled`` in ``raw`` from ``pos``, leftmost first.

    The same spans as ``compiled.finditer``, for an expression from :func:`re2_bytes` or a
    compiled ``re`` bytes pattern; on RE2 one call into the engine per match, without the
    match object the wrapper builds (most of a match's cost where places are dense).

    Args:
        compiled: an RE2 expression compiled for bytes, or an ``re`` bytes pattern.
        raw: the bytes to search.
        pos: where to start.

    Returns:
        An iterator of byte offsets.
    """
    match = getattr(getattr(compiled, "_regexp", None), "Match", None)
    if match is None or _re2 is None:
        return (m.span() for m in compiled.finditer(raw, pos))
    return _spans(match, raw, pos)


def _spans(match: Any, raw: bytes, pos: int) -> Iterator[tuple[int, int]]:
    end = len(raw)
    unanchored = _re2._Anchor.UNANCHORED
    while pos <= end:
        start, stop = match(unanchored, raw, pos, end)[0]
        if start < 0:
            return
        yield start, stop
        pos = stop if stop > start else stop + 1
