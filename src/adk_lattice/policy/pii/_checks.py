"""The checks a PII candidate must pass to count: Luhn (cards), IBAN mod-97, IP addresses."""

from __future__ import annotations

import ipaddress
from typing import Final

__all__ = ["iban_ok", "ip_ok", "luhn"]


def luhn(candidate: str) -> bool:
    """Whether the digits of ``candidate`` pass the Luhn checksum (payment cards)."""
    digits = candidate.translate(_NOT_DIGITS)
    if not (13 <= len(digits) <= 19 and digits.isascii() and digits.isdigit()):
        return _luhn([int(c) for c in candidate if c.isdigit()])
    # Every other digit from the right doubled (its digit sum), by table: a few C calls.
    total = sum(map(int, digits[::-1][::2])) + sum(map(int, digits[::-1][1::2].translate(_DOUBLED)))
    return total % 10 == 0


_NOT_DIGITS: Final = {ord(c): None for c in " -"}
_DOUBLED: Final = str.maketrans("0123456789", "0246813579")


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
