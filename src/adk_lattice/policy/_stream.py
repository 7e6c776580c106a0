"""The streaming buffer behind ``RedactPII``: what a partial chunk may release, and when.

A value split across chunks does not match in any one chunk, so each stream keeps the text
it has not released yet. A chunk releases only text that cannot be part of a value still
being written: never the last ``hold`` characters, never part of a run of non-space
characters that reaches the end of the buffer (an API key, a JWT, a long base64 run: the
run is open until a space closes it), never part of a private-key block whose END has not
arrived, never half of a value found. What is held is bounded by ``max_hold``: a token or
block that grows past it is replaced by ``[REDACTED:SECRET]`` and the rest of it is
dropped as it arrives, so no secret of any length is ever released in pieces.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Literal

Span = tuple[int, int, str]
Scan = Callable[[str], list[Span]]
Apply = Callable[[str, list[Span]], tuple[str, bool]]

_PEM_BEGIN: Final = "-----BEGIN"
_PEM_END: Final = re.compile(r"-----END[A-Z0-9 ]{0,40}-----")
#: What stands for a held value that grew past the bound.
OVERFLOW: Final = "[REDACTED:SECRET]"


def long_token(max_hold: int) -> re.Pattern[str]:
    """A run of non-space characters longer than ``max_hold`` (linear: starts at runs)."""
    return re.compile(rf"(?<!\S)\S{{{max_hold + 1},}}")


@dataclass(slots=True)
class Stream:
    """One stream's state (per invocation, agent, and text or thoughts)."""

    pending: str = ""
    blocked: bool = False
    #: Why ``pending`` is held from its start: an open ``run`` or ``pem`` block, or "".
    open: Literal["", "run", "pem"] = ""
    #: Dropping the rest of a value that grew past the bound: ``run``, ``pem`` or "".
    dropping: Literal["", "run", "pem"] = ""
    kinds: set[str] = field(default_factory=set)  # found in chunks already released

    def feed(
        self, text: str, scan: Scan, apply: Apply, hold: int, max_hold: int, lean: bool = False
    ) -> str:
        """Take the next chunk's text; return what may be released now (redacted).

        With ``lean`` (only built-in detectors), the last ``hold`` characters are held only
        from where a value may start (see :func:`_lean_cut`), not always.
        """
        if self.blocked:
            return ""
        text = self._drop(text)
        if not text:
            return ""
        # Fast path: an open token or block that this chunk does not close stays held as a
        # whole, without scanning the buffer again (keeps a long held value linear).
        if self.open == "run" and not any(c.isspace() for c in text):
            return self._held(self.pending + text, max_hold)
        if self.open == "pem" and "-----END" not in self.pending[-16:] + text:
            return self._held(self.pending + text, max_hold)
        buf = self.pending + text
        spans = scan(buf)
        cut, why = _cut(buf, spans, 0 if lean else hold)
        if why == "run" and _run_end(buf, cut) - cut > max_hold:
            return self._overflow(buf, cut, "run", spans, apply)
        if why == "pem" and len(buf) - cut > max_hold:
            return self._overflow(buf, cut, "pem", spans, apply)
        if lean and why != "pem":
            held = _lean_cut(buf, cut, hold)
            if held < cut:  # whole words held too: the buffer is rescanned with each chunk
                cut, why = _outside(held, spans), ""
        done = [s for s in spans if s[1] <= cut]
        self.kinds.update(s[2] for s in done)
        released, blocked = apply(buf[:cut], done)
        self.pending, self.open = buf[cut:], why
        if blocked:
            self.blocked = True
            return ""
        return released

    def _held(self, buf: str, max_hold: int) -> str:
        self.pending = buf
        if len(buf) > max_hold:
            kind = self.open
            self.pending, self.open = "", ""
            self.kinds.add("SECRET")
            if kind == "run":
                self.dropping = "run"
            else:
                self.dropping = "pem"
                self.pending = buf[-16:]  # an END split across chunks is still found
            return OVERFLOW
        return ""

    def _overflow(self, buf: str, cut: int, kind: str, spans: list[Span], apply: Apply) -> str:
        done = [s for s in spans if s[1] <= cut]
        self.kinds.update(s[2] for s in done)
        self.kinds.add("SECRET")
        released, blocked = apply(buf[:cut], done)
        if blocked:
            self.blocked = True
            return ""
        self.pending, self.open = "", ""
        self.dropping = "run" if kind == "run" else "pem"
        rest = self._drop(buf[cut:])
        if rest:  # the over-long value closed inside this buffer: keep what follows it
            self.pending = rest
        return released + OVERFLOW

    def _drop(self, text: str) -> str:
        """Drop the rest of an over-long value; return the text after it."""
        if self.dropping == "run":
            for i, c in enumerate(text):
                if c.isspace():
                    self.dropping = ""
                    return text[i:]
            return ""
        if self.dropping == "pem":
            joined = self.pending + text
            m = _PEM_END.search(joined)
            if m is None:
                self.pending = joined[-16:]
                return ""
            self.dropping, self.pending = "", ""
            return joined[m.end() :]
        return text


def _run_end(buf: str, start: int) -> int:
    end = start
    while end < len(buf) and not buf[end].isspace():
        end += 1
    return end


def _open_key_block(buf: str) -> int:
    """Where a private-key block with no END yet starts in ``buf``, or -1."""
    begin = buf.rfind(_PEM_BEGIN)
    if begin == -1 or _PEM_END.search(buf, begin) is not None:
        return -1
    header = buf[begin + len(_PEM_BEGIN) : begin + 64]
    close = header.find("-----")
    if close != -1 and "PRIVATE KEY" not in header[:close]:
        return -1  # a certificate or public key: nothing to hold
    return begin


#: What may begin a built-in value that a space can split (a phone number, a card, an IBAN,
#: an SSN, ``jane (at) example``, ``password = ...``): a digit, ``@ % +``, a non-ASCII
#: character (a no-break or zero-width space, a full-width digit), a secret's name before
#: ``:`` or ``=``, an opening bracket before ``at`` or ``dot`` (or at the end of the text).
_MAY_START: Final = re.compile(
    r"[0-9@%+]|[^\x00-\x7f]|(?:key|secret|token|password|passwd)[\"']?\s*[:=]"
    r"|[(\[{<]\s*(?:(?:at|dot)\b|(?:a|d|do)$|$)",
    re.IGNORECASE,
)
#: Of those, the ones that may follow the plain word a value starts with.
_JOINS: Final = frozenset("@%([{<")


def _token_start(buf: str, pos: int) -> int:
    while pos > 0 and not buf[pos - 1].isspace():
        pos -= 1
    return pos


def _lean_cut(buf: str, cut: int, hold: int) -> int:
    """Where to cut when only built-in values are looked for.

    Before the token holding the first character of the last ``hold`` that may start a
    value, and the word ahead of it too when that character joins a value to a plain word
    (``jane (at) example (dot) com``, ``password = ...``); when there is none, before the
    last whole word (the next chunk may bring the ``(at)``).
    """
    m = _MAY_START.search(buf, max(0, len(buf) - hold), cut)
    pos = _token_start(buf, m.start() if m is not None else cut)
    if m is not None and m.group(0)[0] not in _JOINS:
        return pos
    while pos > 0 and buf[pos - 1].isspace():
        pos -= 1
    return _token_start(buf, pos)


def _outside(cut: int, spans: list[Span]) -> int:
    for start, end, _ in spans:
        if start < cut < end:  # never release half a value
            cut = start
    return cut


def _cut(buf: str, spans: list[Span], hold: int) -> tuple[int, Literal["", "run", "pem"]]:
    """Where the releasable prefix of ``buf`` ends, and why the rest is held open."""
    cut = max(0, len(buf) - hold)
    why: Literal["", "run", "pem"] = ""
    # Never inside a run of non-spaces that may still grow: an unfinished value matches
    # nothing yet.
    while cut > 0 and not buf[cut - 1].isspace() and (cut == len(buf) or not buf[cut].isspace()):
        cut -= 1
    if _run_end(buf, cut) == len(buf) and cut < len(buf):
        why = "run"
    begin = _open_key_block(buf)
    if begin != -1 and begin <= cut:
        cut, why = begin, "pem"
    for start, end, _ in spans:
        if start < cut < end:  # never release half a value
            cut, why = start, ""
    return cut, why
