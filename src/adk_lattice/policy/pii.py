"""PII and secret detectors: compiled patterns with validators (Luhn, IBAN mod-97, IP)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Final

#: A custom detector callable: text in, ``(start, end)`` spans out.
Finder = Callable[[str], Iterable[tuple[int, int]]]


@dataclass(frozen=True, slots=True)
class Detector:
    """One kind of sensitive value.

    Args:
        kind: the label used in redactions (``EMAIL``, ``CARD``...).
        pattern: a regex; when it has a group named ``v``, only that group is the value.
        valid: an extra check on a candidate (e.g. Luhn), else every match counts.
        finder: instead of a pattern, a callable returning spans.
    """

    kind: str
    pattern: re.Pattern[str] | None = None
    valid: Callable[[str], bool] | None = None
    finder: Finder | None = None

    def spans(self, text: str) -> Iterator[tuple[int, int, str]]:
        """Every ``(start, end, kind)`` this detector finds in ``text``."""
        if self.finder is not None:
            for start, end in self.finder(text):
                if 0 <= start < end <= len(text):
                    yield start, end, self.kind
            return
        assert self.pattern is not None
        for m in self.pattern.finditer(text):
            group = "v" if "v" in self.pattern.groupindex else 0
            start, end = m.span(group)
            if start < 0 or (self.valid is not None and not self.valid(m.group(group))):
                continue
            yield start, end, self.kind


def luhn(candidate: str) -> bool:
    """Whether the digits of ``candidate`` pass the Luhn checksum (payment cards)."""
    digits = [int(c) for c in candidate if c.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def iban_ok(candidate: str) -> bool:
    """Whether ``candidate`` passes the IBAN mod-97 check."""
    s = candidate.replace(" ", "").upper()
    if not 15 <= len(s) <= 34:
        return False
    moved = s[4:] + s[:4]
    try:
        return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1
    except ValueError:
        return False


def ip_ok(candidate: str) -> bool:
    """Whether ``candidate`` is a real IPv4 or IPv6 address."""
    try:
        ipaddress.ip_address(candidate)
    except ValueError:
        return False
    return True


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
CARD: Final = Detector("CARD", _c(r"(?<![\d-])\d(?:[ \-]?\d){12,18}(?![\d-])"), luhn)
SSN: Final = Detector("SSN", _c(r"(?<!\d)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?!\d)"))
IBAN: Final = Detector(
    "IBAN", _c(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b"), iban_ok
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
IPV6: Final = Detector(
    "IP",
    _c(
        r"(?<![\w:.])(?=[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:)(?=[0-9A-Fa-f:]*[0-9A-Fa-f])[0-9A-Fa-f:]{3,39}(?![\w:])"
    ),
    ip_ok,
)
SECRET: Final = Detector(
    "SECRET",
    _c(
        r"AKIA[0-9A-Z]{16}"  # AWS access key id
        r"|gh[pousr]_[A-Za-z0-9]{36,76}"  # GitHub tokens
        r"|github_pat_[A-Za-z0-9_]{22,255}"
        r"|AIza[0-9A-Za-z_\-]{35}"  # Google API key
        r"|xox[abposr]-[A-Za-z0-9\-]{10,72}"  # Slack
        r"|(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,99}"  # Stripe
        r"|sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,164}"  # OpenAI / Anthropic style
        r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"  # JWT
        r"|-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"
    ),
)
ASSIGNED_SECRET: Final = Detector(
    "SECRET",
    _c(
        r"(?i)\b(?:api[_\-]?key|secret|access[_\-]?token|auth[_\-]?token|password|passwd)"
        r"[\"']?\s*[:=]\s*[\"']?(?P<v>[^\s\"',;]{8,128})"
    ),
)

#: The built-in detectors, by name, in the order they are tried.
BUILTIN: Final[dict[str, tuple[Detector, ...]]] = {
    "secret": (SECRET, ASSIGNED_SECRET),
    "email": (EMAIL,),
    "iban": (IBAN,),
    "card": (CARD,),
    "ssn": (SSN,),
    "ip": (IPV4, IPV6),
    "phone": (PHONE,),
}


def find(text: str, detectors: Iterable[Detector]) -> list[tuple[int, int, str]]:
    """Non-overlapping ``(start, end, kind)`` spans, earliest first, longest on ties."""
    found = sorted(
        (s for d in detectors for s in d.spans(text)), key=lambda s: (s[0], -(s[1] - s[0]))
    )
    out: list[tuple[int, int, str]] = []
    for span in found:
        if out and span[0] < out[-1][1]:
            if span[1] > out[-1][1]:  # overlapping: widen, so no part of either leaks
                out[-1] = (out[-1][0], span[1], out[-1][2])
            continue
        out.append(span)
    return out
