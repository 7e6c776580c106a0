"""The checks a PII candidate must pass to count: Luhn and grouping (cards), IBAN mod-97, IP
addresses."""

from __future__ import annotations

import ipaddress
import re
from typing import Final

__all__ = ["card_ok", "iban_ok", "ip_ok", "luhn"]


def luhn(candidate: str) -> bool:
    """Whether the digits of ``candidate`` pass the Luhn checksum (payment cards)."""
    digits = candidate.translate(_NOT_DIGITS)
    if not (13 <= len(digits) <= 19 and digits.isascii() and digits.isdigit()):
        return _luhn([int(c) for c in candidate if c.isdigit()])
    # Every other digit from the right doubled (its digit sum), by table: a few C calls.
    total = sum(map(int, digits[::-1][::2])) + sum(map(int, digits[::-1][1::2].translate(_DOUBLED)))
    return total % 10 == 0


#: The separators the detectors accept between digit groups (``detectors._GAP``).
_NOT_DIGITS: Final = {ord(c): None for c in " -./"}
_DOUBLED: Final = str.maketrans("0123456789", "0246813579")


#: Where a candidate's digit groups meet (the separators of ``detectors._GAP``).
_GROUPS: Final = re.compile(r"[ \-./]")


def card_ok(candidate: str) -> bool:
    """Whether ``candidate`` is a payment card number: it passes Luhn and, when a dot or a
    slash separates its digits, it is grouped as cards are printed (groups of four, the
    last of one to four digits, or 4-6-4 and 4-6-5).

    Dots and slashes are also what separates the parts of decimal numbers, versions, dates,
    IP addresses and object identifiers, which Luhn passes one time in ten; spaces and
    dashes are read in any grouping (a line break may fall anywhere in a value).
    """
    if not luhn(candidate):
        return False
    if "." not in candidate and "/" not in candidate:
        return True
    sizes = [len(g) for g in _GROUPS.split(candidate)]
    if all(size == 4 for size in sizes[:-1]) and 1 <= sizes[-1] <= 4:
        return True
    return len(sizes) == 3 and sizes[:2] == [4, 6] and sizes[2] in (4, 5)


def _luhn(digits: list[int]) -> bool:
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
    s = candidate.translate(_NOT_DIGITS).upper()
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
