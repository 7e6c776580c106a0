"""PII and secret detectors: compiled patterns with validators (Luhn, IBAN mod-97, IP)."""

from __future__ import annotations

import base64
import binascii
import bisect
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from .._text.engine import ENGINE, PatternSet, finditer_spans, re2_bytes
from ._checks import card_ok, iban_ok, ip_ok
from ._fold import SHIFTS, fold

#: The rest of a token a key extends to (matches the empty string: never None).
_TOKEN_RUN: Final = re.compile(r"[A-Za-z0-9_\-+/=]*")

#: A custom detector callable: text in, ``(start, end)`` spans out (or ``(start, end,
#: kind)``, for an engine that finds several kinds).
Finder = Callable[[str], Iterable[tuple[int, int] | tuple[int, int, str]]]


@dataclass(frozen=True, slots=True)
class Detector:
    """One kind of sensitive value.

    Args:
        kind: the label used in redactions (``EMAIL``, ``CARD``...).
        pattern: a regex; when it has a group named ``v``, only that group is the value.
        valid: an extra check on a candidate (e.g. Luhn), else every match counts.
        finder: instead of a pattern, a callable returning spans.
        whole_token: extend each match to the end of its token, so a key longer than the
            pattern's bound is redacted whole (the pattern must start at token boundaries).
    """

    kind: str
    pattern: re.Pattern[str] | None = None
    valid: Callable[[str], bool] | None = None
    finder: Finder | None = None
    whole_token: bool = False
    #: A probe of :data:`PROBES` that must occur for this detector to find anything.
    gate: str | None = None

    def spans(self, text: str) -> Iterator[tuple[int, int, str]]:
        """Every ``(start, end, kind)`` this detector finds in ``text``."""
        if self.finder is not None:
            for span in self.finder(text):
                start, end = span[0], span[1]
                if 0 <= start < end <= len(text):
                    yield start, end, (span[2] if len(span) > 2 else self.kind)
            return
        assert self.pattern is not None
        group = "v" if "v" in self.pattern.groupindex else 0
        pos = 0
        # A pattern that can match the empty string matches again at the end of the text
        # however far past it the search starts: stop there, and skip empty matches.
        while pos <= len(text) and (m := self.pattern.search(text, pos)) is not None:
            pos = m.end() if m.end() > m.start() else m.end() + 1
            start, end = m.span(group)
            if start < 0 or start == end:
                continue
            if self.valid is not None and not self.valid(m.group(group)):
                continue
            if self.whole_token:  # resume after the token: each character is read once
                end = _TOKEN_RUN.match(text, end).end()  # type: ignore[union-attr]
                pos = max(pos, end)
            yield start, end, self.kind


def _c(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


# The local part starts at a run boundary and is bounded (RFC 5321: 64), so a long run of
# word characters without "@" costs linear time, not quadratic.
EMAIL: Final = Detector(
    "EMAIL",
    _c(
        r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9\-]{1,63}"
        r"(?:\.[A-Za-z0-9\-]{1,63}){0,8}\.[A-Za-z]{2,24}\b"
    ),
)
#: What people write between the groups of a card, an IBAN, an SSN or a secret's digits, as
#: the detectors read it: a space, a dash, a dot or a slash. The folded view turns every
#: other separator into one of these or into nothing (a no-break space and a line break into
#: a space, and in the second view a no-break space into nothing; a zero-width character
#: into nothing), so each kind reads every separator through these four and none needs
#: another kind's pattern to be caught. One character: the longest value written with one
#: between its groups (an IBAN of 34 characters, 42) is what a stream's ``hold`` is sized for.
_GAP: Final = r"[ \-./]"
#: Before an SSN: no digit and a dot or slash (the middle of a dotted run).
_NO_DIGIT_BEFORE: Final = r"(?<!\d[./])"
#: After an SSN: no digit, dash, nor a dot or slash before a digit (a sentence's full stop
#: may follow it; the rest of a dotted run may not).
_NO_DIGIT_AFTER: Final = r"(?![\d-])(?![./]\d)"

#: A run of digits and the separators between them, as long as it goes (linear: each step
#: reads one digit).
_DIGIT_RUN: Final = _c(rf"(?<![\d-])\d(?:{_GAP}?\d)*")
_PIECES: Final = _c(r"\d+")
#: The first digits of the card networks' numbers (Visa, Mastercard, American Express,
#: Discover, JCB, Diners Club, UnionPay).
_ISSUER: Final = _c(
    r"4|5[1-5]|2(?:22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)|3[0-8]|6(?:011|4[4-9]|5|2)"
)


def _printed(sizes: Sequence[int]) -> bool:
    """Whether groups of these sizes are how cards are printed (4-4-4-1..4, 4-6-4, 4-6-5)."""
    if all(size == 4 for size in sizes[:-1]) and 1 <= sizes[-1] <= 4:
        return True
    return len(sizes) == 3 and sizes[0] == 4 and sizes[1] == 6 and sizes[2] in (4, 5)


def _cards(text: str) -> Iterator[tuple[int, int]]:
    """Card numbers in ``text``, also where other digits run into them.

    A run of digits and separators is cut into its digit groups, and each window of 13 to
    19 digits that passes :func:`card_ok` is a card, the longest from each start. A window
    starts the run or follows a space, and ends the run or comes before a space, a dot or a
    slash, never next to a dash (a dashed run is an identifier). One that starts the run may
    be grouped any way (a line break may fall anywhere in a value); one that follows a space
    is unbroken or grouped as cards are printed, so a number written before a card (``call
    +1 415 555 0132 4111 1111 1111 1111``, ``order 77 4111111111111111``) does not hide it,
    and a table of short numbers is not read as one. A dotted run that is no card (a
    version, a date, an address) is refused by its grouping, so a card may end at a dot or
    slash before digits: ``4111111111111111/2025``.
    """
    for run in _DIGIT_RUN.finditer(text):
        groups = [m.span() for m in _PIECES.finditer(text, run.start(), run.end())]
        i = 0
        while i < len(groups):
            best = -1
            start = groups[i][0]
            if i == 0 or text[start - 1] == " ":
                digits = 0
                for j in range(i, len(groups)):
                    digits += groups[j][1] - groups[j][0]
                    if digits > 19:
                        break
                    end = groups[j][1]
                    if digits < 13 or text[end : end + 1] == "-":
                        continue
                    value = text[start:end]
                    sizes = [b - a for a, b in groups[i : j + 1]]
                    # Inside a run, a window must look like a card too: most digit lists
                    # have 13-19 digits in a row somewhere, and one in ten of those passes Luhn.
                    inside = i > 0 and not (
                        (value.isdigit() or _printed(sizes)) and _ISSUER.match(value)
                    )
                    if not inside and card_ok(value):
                        best = j
            if best < 0:
                i += 1
                continue
            yield start, groups[best][1]
            i = best + 1


CARD: Final = Detector("CARD", finder=_cards)
# The same separator twice: 123-45-6789, 123 45 6789, 123.45.6789, 123/45/6789.
SSN: Final = Detector(
    "SSN",
    _c(
        rf"(?<!\d){_NO_DIGIT_BEFORE}(?!000|666|9\d\d)\d{{3}}({_GAP})(?!00)\d{{2}}\1(?!0000)\d{{4}}"
        + _NO_DIGIT_AFTER
    ),
)
IBAN: Final = Detector(
    "IBAN",
    _c(rf"\b[A-Z]{{2}}\d{{2}}(?:{_GAP}?[A-Z0-9]{{4}}){{2,7}}(?:{_GAP}?[A-Z0-9]{{1,3}})?\b"),
    iban_ok,
)
PHONE: Final = Detector(
    "PHONE",
    _c(
        r"(?<![\w+])(?<!\d )(?:\+\d{1,3}[ .\-]?)?(?:\(\d{2,4}\)[ .\-]?|\d{2,4}[ .\-])"
        r"\d{3,4}[ .\-]\d{3,4}(?![\w-]| \d)"
        r"|(?<![\w+])\+\d{7,14}(?!\w)"
    ),
)
IPV4: Final = Detector("IP", _c(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?!\.?\d)"), ip_ok)
#: An address of hex groups has eight groups (seven colons) or ``::``: a run of hex and
#: colons with neither (a time of day, ``12:00:00``) is not a candidate.
IPV6: Final = Detector(
    "IP",
    _c(
        r"(?<![\w:.])(?=[0-9A-Fa-f:]*::|(?:[0-9A-Fa-f]*:){7})(?=[0-9A-Fa-f:]*[0-9A-Fa-f])"
        r"[0-9A-Fa-f:]{3,39}(?![\w:])"
    ),
    ip_ok,
)
# Every key starts at a token boundary and is extended to the end of its token, so a long
# key is redacted whole and a run of repeated prefixes is scanned once (linear time).
SECRET: Final = Detector(
    "SECRET",
    _c(
        r"(?<![A-Za-z0-9_\-+/=])(?:"
        r"AKIA[0-9A-Z]{16}"  # AWS access key id
        r"|gh[pousr]_[A-Za-z0-9]{36,76}"  # GitHub tokens
        r"|github_pat_[A-Za-z0-9_]{22,255}"
        r"|AIza[0-9A-Za-z_\-]{35}"  # Google API key
        r"|xox[abposr]-[A-Za-z0-9\-]{10,72}"  # Slack
        r"|(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,99}"  # Stripe
        r"|sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,164}"  # OpenAI / Anthropic style
        # A JWT: without the look-behind, a long run of "eyJ" restarted the unbounded
        # segment at every offset (quadratic time).
        r"|eyJ[A-Za-z0-9_\-]{8,8192}\.eyJ[A-Za-z0-9_\-]{8,16384}\.[A-Za-z0-9_\-]{8,8192}"
        r")"
    ),
    whole_token=True,
)
# A private key from BEGIN to END, body and encryption headers included; a block cut off
# before its END runs to the end of its base64 run. Greedy with nothing after it that can
# fail, so it never backtracks.
PEM: Final = Detector(
    "SECRET",
    _c(
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:\r?\n[A-Za-z][A-Za-z\-]{0,39}:[^\r\n]{0,256})*"
        r"(?:\s{0,8}[A-Za-z0-9+/=]+)*"
        r"(?:\s{0,8}-----END[A-Z0-9 ]{0,40}-----)?"
    ),
)
ASSIGNED_SECRET: Final = Detector(
    "SECRET",
    _c(
        r"(?i)\b(?:api[_\-]?key|secret|access[_\-]?token|auth[_\-]?token|password|passwd)"
        r"[\"']?\s*[:=]\s*[\"']?"
        # A value of digits may be written in groups (``1234 5678 9012``); any other is a token.
        rf"(?P<v>\d(?:{_GAP}?\d){{7,127}}|[^\s\"',;]{{8,128}})"
    ),
    whole_token=True,
)

#: The built-in detectors, by name, in the order they are tried.
BUILTIN: Final[dict[str, tuple[Detector, ...]]] = {
    "secret": (PEM, SECRET, ASSIGNED_SECRET),
    "email": (EMAIL,),
    "iban": (IBAN,),
    "card": (CARD,),
    "ssn": (SSN,),
    "ip": (IPV4, IPV6),
    "phone": (PHONE,),
}


#: For each built-in detector, what any match of it must contain: one linear pass (an RE2
#: set) over a text tells which detectors can match at all, and only those run. Prose with
#: no digits, ``@``, key prefixes or secret words runs none of them.
_GATES: Final[dict[int, str]] = {
    id(EMAIL): r"[A-Za-z0-9._%+\-]@[A-Za-z0-9\-]",
    id(CARD): rf"\d(?:{_GAP}?\d){{12}}",
    id(SSN): rf"\d{{3}}{_GAP}\d{{2}}{_GAP}\d{{4}}",
    id(IBAN): r"[A-Z]{2}\d{2}",
    id(PHONE): r"\d{3,4}[ .\-]\d{3,4}|\+\d{7}",
    id(IPV4): r"\d\.\d{1,3}\.\d{1,3}\.\d",
    id(IPV6): r"(?:\A|[^\w:.])(?:[0-9A-Fa-f:]*::|(?:[0-9A-Fa-f]*:){7})",
    id(SECRET): r"AKIA|gh[pousr]_|github_pat_|AIza|xox[abposr]-|[spr]k_(?:live|test)_|sk-|eyJ",
    id(PEM): r"-----BEGIN",
    id(ASSIGNED_SECRET): (
        r"(?i:api[_\-]?key|secret|access[_\-]?token|auth[_\-]?token|password|passwd)"
    ),
}
#: Probes in the same pass (RE2 only: on ``re`` each would be a pass of its own): a chain of
#: seven digits (the phone finder's candidates), a base64 run, a place that moves offsets in
#: the folded view, a line break or tab.
PROBES: Final = {
    "digits": r"\d(?:[ .\-/()\u00a0]{0,3}\d){6}",
    "base64": r"[A-Za-z0-9+/_\-]{16}",
    "shifts": SHIFTS,
    "breaks": r"[\t\n\r\f\v]",
}
_PROBED: Final = ENGINE == "re2"
_GATE_KEYS: Final[tuple[int | str, ...]] = (*_GATES, *(PROBES if _PROBED else ()))
_GATE_SET: Final = PatternSet(
    [*_GATES.values(), *(PROBES.values() if _PROBED else ())],
    ignore_case=False,
    multiline=False,
)


def opened(text: str) -> frozenset[int | str]:
    """The gates and probes that occur in ``text`` (one pass); without RE2, every probe."""
    found = frozenset(_GATE_KEYS[i] for i in _GATE_SET.matches(text))
    return found if _PROBED else found | frozenset(PROBES)


def runnable(
    detectors: Sequence[Detector], text: str, open_: frozenset[int | str] | None = None
) -> list[Detector]:
    """The detectors that can match in ``text``: built-in ones whose gate occurs, those with
    a probe that occurs, and every other detector (custom patterns, callables) always.
    ``open_``: :func:`opened` of the text, when the caller has it."""
    if not any(id(d) in _GATES or d.gate is not None for d in detectors):
        return list(detectors)
    if open_ is None:
        open_ = opened(text)
    return [
        d
        for d in detectors
        if (id(d) not in _GATES or id(d) in open_) and (d.gate is None or d.gate in open_)
    ]


def _merge(found: Iterable[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Non-overlapping spans, earliest first, longest on ties; overlaps widen."""
    out: list[tuple[int, int, str]] = []
    for span in sorted(found, key=lambda s: (s[0], -(s[1] - s[0]))):
        if out and span[0] < out[-1][1]:
            if span[1] > out[-1][1]:  # overlapping: widen, so no part of either leaks
                out[-1] = (out[-1][0], span[1], out[-1][2])
            continue
        out.append(span)
    return out


def _phones_yield(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``found`` with each phone number cut to its parts outside every other value (the
    caller drops the parts without a digit).

    A card's or an IBAN's first digits may dial somewhere (``(3056 930902 5904)``: ``(305)
    693-0902``); which phone reader runs depends on the ``pii`` extra, so a phone span must
    never decide how a value of another kind is redacted. Its digits outside the value are
    still a phone number.
    """
    others = _merge(s for s in found if s[2] != "PHONE")
    if len(others) == len(found) or not others:
        return found
    starts = [s[0] for s in others]
    out = [s for s in found if s[2] != "PHONE"]
    for start, end, kind in (s for s in found if s[2] == "PHONE"):
        i = max(0, bisect.bisect_right(starts, start) - 1)
        pos = start
        while i < len(others) and others[i][0] < end:
            lo, hi = others[i][0], others[i][1]
            if hi > pos:
                if lo > pos:
                    out.append((pos, lo, kind))
                pos = max(pos, hi)
            i += 1
        if pos < end:
            out.append((pos, end, kind))
    return out


def find(text: str, detectors: Iterable[Detector]) -> list[tuple[int, int, str]]:
    """Non-overlapping ``(start, end, kind)`` spans in ``text`` as written, earliest first."""
    return _merge(s for d in runnable(tuple(detectors), text) for s in d.spans(text))


# A base64 (or base64url) run, from the start of a run of its alphabet: linear time.
_B64: Final = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{16,}={0,2}")
#: The same runs found by RE2 on the UTF-8 bytes: leftmost first, a greedy run always starts
#: where a run starts, so the look-behind is not needed.
_B64_RUN: Final = re2_bytes(r"[A-Za-z0-9+/_\-]{16,}={0,2}", latin1=True)
_B64_MAX: Final = 65_536
_WIDE_SPACE: Final = re.compile(r"[^\S\x00-\x7f]")
#: Digits with only zero-width or format characters between them: the reader sees no
#: separator, but one may have been meant (``123\u200b45\u200b6789``), and the SSN pattern
#: needs one. Bounded, so linear.
_JOINED_DIGITS: Final = re.compile(
    r"\d[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]{1,8}\d"
)


def _decoded(run: str) -> str | None:
    """The text a base64 run encodes, when it is printable UTF-8; else None."""
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    try:
        raw = (
            base64.urlsafe_b64decode(padded)
            if "-" in body or "_" in body
            else base64.b64decode(padded, validate=True)
        )
        text = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    printable = sum(c.isprintable() or c.isspace() for c in text)
    return text if text and printable >= 0.9 * len(text) else None


def scan(text: str, detectors: Sequence[Detector]) -> list[tuple[int, int, str]]:
    """Every sensitive span of ``text``, obfuscated forms included.

    The detectors run on the text as written and on its folded view (zero-width and format
    characters dropped, no-break spaces and line breaks as spaces, markdown emphasis
    dropped, ``(at)`` / ``(dot)`` and percent-escapes decoded, NFKC), whose spans map back
    to the original (and, where they occur, on a view with no-break spaces dropped and one
    with zero-width characters between digits read as spaces); a base64 run whose decoded
    text holds a value is a span as a whole.

    Args:
        text: the text to scan (the caller caps its size).
        detectors: the detectors to run.

    Returns:
        Non-overlapping ``(start, end, kind)`` spans in ``text``, earliest first.
    """
    open_ = opened(text)
    found = [s for d in runnable(detectors, text, open_) for s in d.spans(text)]
    shifts = "shifts" in open_  # a non-ASCII space is one of them
    views = [fold(text, shifts=shifts)]
    if shifts and not text.isascii() and _WIDE_SPACE.search(text):
        views.append(fold(text, spaces=""))  # a no-break space may sit inside a value
    if shifts and not text.isascii() and _JOINED_DIGITS.search(text):
        views.append(fold(text, joiners=" "))  # a zero-width separator between digits
    for view in views:
        if view is not None:
            active = runnable(detectors, view.text)
            for start, end, kind in (s for d in active for s in d.spans(view.text)):
                found.append((*view.original(start, end), kind))
    for start, end in _b64_runs(text) if "base64" in open_ else ():
        if end - start > _B64_MAX:
            continue
        decoded = _decoded(text[start:end])
        if decoded is None:
            continue
        inner = find(decoded, detectors)
        folded = fold(decoded)
        if not inner and folded is not None:
            inner = find(folded.text, detectors)
        if inner:
            found.append((start, end, inner[0][2]))
    return _merge(
        s
        for s in _phones_yield(found)
        if s[2] != "PHONE" or any(c.isdigit() for c in text[s[0] : s[1]])
    )


def _b64_runs(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each base64 run of ``text`` (character offsets)."""
    if _B64_RUN is None:
        yield from (m.span() for m in _B64.finditer(text))
        return
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) == len(text):  # ASCII: byte offsets are character offsets
        yield from finditer_spans(_B64_RUN, raw)
        return
    done = chars = 0  # a run is ASCII: count the characters before it, once each
    for start, end in finditer_spans(_B64_RUN, raw):
        chars += len(raw[done:start].decode("utf-8", "surrogatepass"))
        yield chars, chars + end - start
        chars, done = chars + end - start, end
