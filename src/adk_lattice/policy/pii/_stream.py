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

import itertools
import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Literal

Span = tuple[int, int, str]
Scan = Callable[[str], list[Span]]
Apply = Callable[[str, list[Span]], tuple[str, bool]]

_PEM_BEGIN: Final = "-----BEGIN"
_PEM_END: Final = re.compile(r"-----END[A-Z0-9 ]{0,40}-----")
#: What is kept of a dropped block to find an END split across chunks: the longest END less one.
_PEM_TAIL: Final = len("-----END") + 40 + len("-----") - 1
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
        if (
            self.open == "run"
            and not any(c.isspace() for c in text)
            and not (lean and len(self.pending) < hold and _BREAK.search(self.pending + text))
        ):  # a short run a break ends is scanned: what precedes the break may be released
            return self._held(self.pending + text, max_hold)
        if self.open == "pem" and _PEM_END.search(self.pending[-_PEM_TAIL:] + text) is None:
            return self._held(self.pending + text, max_hold)
        buf = self.pending + text
        spans = scan(buf)
        cut, why = _cut(buf, spans, 0 if lean else hold, lean)
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
                self.pending = buf[-_PEM_TAIL:]  # an END split across chunks is still found
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
                self.pending = joined[-_PEM_TAIL:]
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
    r"[0-9@]|%(?=[0-9a-f]|\Z)|\+(?=\d|\Z)|[^\x00-\x7f]"
    r"|(?:key|secret|token|password|passwd)[\"']?\s*[:=]"
    r"|[(\[{<]\s*(?:(?:at|dot)\b|(?:a|d|do)$|$)",
    re.IGNORECASE,
)
#: What no built-in value holds, even obfuscated: a quote (not after a secret's name, where
#: it may stand before the ``:`` or ``=``), ``, ; ! ? \\ | & ^``, or a bracketed
#: group with a letter in it that is not ``(at)`` or ``(dot)`` (``(415)`` may be a phone's).
#: An open run is held only after the last of these (a secret's value after its name, which
#: may hold them, is held from the name: see ``_MAY_START``). An opening bracket before a
#: letter is one too, once what follows cannot be ``at)`` or ``dot)``. Linear time.
_BREAK: Final = re.compile(
    r"(?<!key)(?<!secret)(?<!token)(?<!password)(?<!passwd)[\"']|[,;!?\\|&^]"
    r"|[(\[{<](?!(?:at|dot)[)\]}>])(?=[^()\[\]{}<>\s]{0,64}?[A-Za-z])[^()\[\]{}<>\s]{0,64}[)\]}>]"
    r"|[(\[{<](?=[A-Za-z])(?!(?:at|dot)(?:[)\]}>\s]|\Z)|(?:a|d|do)\Z)",
    re.IGNORECASE,
)
#: Of those, the ones that may follow the plain word a value starts with.
_JOINS: Final = frozenset("@%([{<")
#: Tokens that carry a value on (see :func:`_carries`): separators, marks and brackets alone,
#: and ``at`` / ``dot`` in any bracket.
_SEPARATORS: Final = frozenset("-./()[]{}<>*_~`:=\"'")
#: What the word before ``(at)``, ``@``, ``:`` or ``=`` must end with to be joined to a value:
#: an address's local part, or a secret's name (quoted or not).
_JOINED: Final = frozenset(string.ascii_letters + string.digits + "._%+-\"'")
#: A secret's name at the end of a word: ``\\s*`` joins it to its ``:`` or ``=`` across lines.
_NAME_END: Final = re.compile(r"(?:key|secret|token|password|passwd)[\"']?\Z", re.IGNORECASE)
_AT_DOT: Final = re.compile(r"[(\[{<]?(?:at|dot)[)\]}>]?", re.IGNORECASE)


def _token_start(buf: str, pos: int) -> int:
    while pos > 0 and not buf[pos - 1].isspace():
        pos -= 1
    return pos


def _carries(token: str, previous: str) -> bool:
    """Whether ``token``, after ``previous``, may be part of a value begun before it.

    A value a space can split goes on with a digit group, an IBAN group (up to four upper
    case letters and digits), separators or marks, ``(at)`` / ``(dot)``, the word after one
    of those (an address's next label) and the word after ``:`` or ``=`` (a secret's value);
    ``@ % +`` and non-ASCII characters (a no-break or zero-width space, a full-width digit)
    carry it too. Any other word ends it.
    """
    if any(c.isdigit() or c in "@%+" or not c.isascii() for c in token):
        return True
    if len(token) <= 4 and token.isalnum() and token.isupper():
        return True
    if all(c in _SEPARATORS for c in token) or _AT_DOT.fullmatch(token):
        return True
    return previous[-1:] in ("@", ":", "=") or _AT_DOT.fullmatch(previous) is not None


def _open(buf: str, start: int) -> bool:
    """Whether a value that may begin at ``start`` may still grow with the next chunk: no
    word that ends every value (:func:`_carries`) has arrived after its first token."""
    words = buf[start:].split()
    if words and not buf[-1].isspace():
        words.pop()  # still being written: it may grow into anything
    return all(_carries(token, previous) for previous, token in itertools.pairwise(words))


def _lead(buf: str, pos: int) -> int:
    """``pos``, or where brackets and ``+`` just before it start (``( +1 415 ...``: a phone
    number's match may begin there)."""
    end = pos
    while end > 0 and buf[end - 1].isspace():
        end -= 1
    start = end
    while start > 0 and buf[start - 1] in "([{<+":
        start -= 1
    return start if start < end else pos


def _lean_cut(buf: str, cut: int, hold: int) -> int:
    """Where to cut when only built-in values are looked for (see :func:`_lean_start`),
    moved back over the brackets and ``+`` a phone number's match may begin with."""
    return _lead(buf, _lean_start(buf, cut, hold))


def _lean_start(buf: str, cut: int, hold: int) -> int:
    """Where the held tail starts.

    Before the token of the first place in the last ``hold`` characters where a value may
    start (see ``_MAY_START``) and may still be growing (:func:`_open`): one a later word
    has closed was read whole by the detectors already. The word ahead of it is held too
    when that place joins a value to a plain word (``jane (at) example (dot) com``). With
    no such place, the last whole word is held only when the next chunk may join it to a
    value: when the buffer ends with a space, or with a token that starts with ``@ % (
    [ { < : =``; and only a word that ends as an address's local part or a secret's name
    may (a letter, a digit, ``. _ % + -`` or a quote).
    """
    found: re.Match[str] | None = None
    for m in _MAY_START.finditer(buf, max(0, len(buf) - hold)):
        if m.start() >= cut:  # in the open run: held already (read to the buffer's end)
            break
        if _open(buf, _token_start(buf, m.start())):
            found = m
            break
    if found is not None:
        pos = _token_start(buf, found.start())
        if found.group(0)[0] not in _JOINS:
            return pos
    else:
        if cut < len(buf) and buf[cut] not in _JOINS and buf[cut] not in ":=":
            return cut  # the open token cannot join the word before it to a value
        if cut == len(buf) and not buf[-1:].isspace():
            return cut  # the buffer ends at a break: a value can only start after it
        pos = cut
    end = pos
    while end > 0 and buf[end - 1].isspace():
        end -= 1
    if end == 0 or buf[end - 1] not in _JOINED:
        return pos  # the word before cannot be an address's local part or a secret's name
    gap = buf[end:pos]
    if not _NAME_END.search(buf, 0, end) and (
        any(c in "\n\r\f\v" for c in gap) or (len(gap) > 3 and not gap.strip(" \t"))
    ):
        return pos  # a line break or a fourth space: no ``(at)`` joins across it
    return _token_start(buf, end)


def _outside(cut: int, spans: list[Span]) -> int:
    for start, end, _ in spans:
        if start < cut < end:  # never release half a value
            cut = start
    return cut


def _cut(
    buf: str, spans: list[Span], hold: int, lean: bool = False
) -> tuple[int, Literal["", "run", "pem"]]:
    """Where the releasable prefix of ``buf`` ends, and why the rest is held open. With
    ``lean`` (built-in detectors only), an open run is held only after its last break."""
    cut = max(0, len(buf) - hold)
    why: Literal["", "run", "pem"] = ""
    # Never inside a run of non-spaces that may still grow: an unfinished value matches
    # nothing yet.
    while cut > 0 and not buf[cut - 1].isspace() and (cut == len(buf) or not buf[cut].isspace()):
        cut -= 1
    if _run_end(buf, cut) == len(buf) and cut < len(buf):
        why = "run"
        if lean:
            for m in _BREAK.finditer(buf, cut):
                cut = m.end()
            why = "run" if cut < len(buf) else ""
    begin = _open_key_block(buf)
    if begin != -1 and begin <= cut:
        cut, why = begin, "pem"
    for start, end, _ in spans:
        if start < cut < end:  # never release half a value
            cut, why = start, ""
    return cut, why
