"""Phone numbers: a linear candidate pass, then libphonenumber's validation per candidate.

With the ``pii`` extra (``phonenumbers``, Google's libphonenumber metadata for every
region), a candidate is a run of 7+ digits with the separators people write; each is
handed, with two characters of context either side, to ``PhoneNumberMatcher`` at leniency
``VALID`` for each configured region: the number must be valid for its region (so order
numbers, dates, versions and amounts are not redacted), national numbers need their trunk
prefix where the region requires one, and ``+CC`` numbers of every region are valid under
any region. Without the extra, the hand-written pattern of 0.1.0 is the fallback.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterator, Sequence
from typing import Any, Final

from .._text.engine import PatternSet, finditer_spans, re2_bytes, to_re2
from .detectors import PHONE, Detector

_pn: Any
try:  # the ``pii`` extra
    import phonenumbers as _pn
except ImportError:  # pragma: no cover - exercised only without the extra
    _pn = None

logger = logging.getLogger("adk_lattice.policy")
#: Whether the fallback pattern was announced (once per process).
_warned = False
DEFAULT_REGIONS: Final = ("US",)
#: The parse work allowed per text (one unit: one parse for one region), or one unit per
#: :data:`CHARS_PER_UNIT` characters of a longer text; past it, every further candidate
#: counts as a number (a text made of thousands of digit runs is redacted rather than read
#: slowly; ordinary prose uses a few units per number, a JSON record with a numeric
#: timestamp or id one).
WORK_BUDGET: Final = 1_500
CHARS_PER_UNIT: Final = 64
#: Space-separated pieces one number spans at most (``+33 6 12 34 56 78``).
_MAX_PIECES: Final = 8
_PIECE: Final = re.compile(r"\S+")


#: Digits one number can have (an international prefix, a country code, 15 digits).
_ONE_NUMBER: Final = 17

# Linear: the digit groups are bounded, and a failed attempt reads at most one run.
# Not right after "#" or an id prefix such as "ORD-", nor after a minus sign.
_CANDIDATE: Final = re.compile(
    r"(?<![\w+#])(?<![A-Za-z][\-_/])(?<!(?<!\S)-)"
    r"(?:\+|\(\+?|00)?\d(?:[ .\-/()\u00a0]{0,3}\d){6,40}(?![^\W_])"
)
#: A candidate without the finer look-behinds (the same run, after no word character, ``+``
#: or ``#``, before no letter or digit): one RE2 pass says whether ``_CANDIDATE`` can match.
_SEVEN_DIGITS: Final = PatternSet(
    [r"(?:\A|[^\w+#])(?:\+|\(\+?|00)?\d(?:[ .\-/()\u00a0]{0,3}\d){6,40}(?:[\W_]|\Z)"],
    ignore_case=False,
    multiline=False,
)
#: Where ``_CANDIDATE`` can match: maximal chains of 7+ digits, each next digit at most three
#: separators on. Every candidate lies inside one chain, so the pattern with look-behinds
#: reads only the chains (found by one RE2 pass over the UTF-8 bytes), not the whole text.
_CHAIN: Final = re2_bytes(to_re2(r"(?:\+|\(\+?)?\d(?:[ .\-/()\u00a0]{0,3}\d){6,}"))


_DATE: Final = re.compile(rb"\d{1,4}([./-])\d{1,2}\1\d{2,4}")
#: A date and an hour followed by minutes (``2026-11-30 12:00``): libphonenumber's own rule
#: for a timestamp, which its matcher applies only when it sees the ``:mm`` that follows.
_TIME_STAMP: Final = re.compile(r"[12]\d{3}[-/]?[01]\d[-/]?[0-3]\d +[0-2]\d")
_MINUTES: Final = re.compile(r":[0-5]\d")
_TIME_STAMP_BYTES: Final = re.compile(_TIME_STAMP.pattern.encode())
_MINUTES_BYTES: Final = re.compile(_MINUTES.pattern.encode())


def _windows(text: str) -> Iterator[tuple[int, int]]:
    """``(pos, endpos)`` for ``_CANDIDATE`` around each chain (a character past its end, so
    the look-ahead sees what follows), or the whole text without RE2."""
    if _CHAIN is None:
        if _SEVEN_DIGITS.found(text):
            yield 0, len(text)
        return
    raw = text.encode("utf-8", "surrogatepass")
    ascii_ = len(raw) == len(text)
    done = chars = 0
    for start, end in finditer_spans(_CHAIN, raw):
        if ascii_:
            # A chain that is a date holds one candidate, itself, which is not a number
            # (every part of it has fewer than seven digits); one that is a date and an hour
            # before ``:mm`` holds two, the date and the timestamp, neither a number: the
            # pattern need not read it.
            if _DATE.fullmatch(raw, start, end) is None and (
                _TIME_STAMP_BYTES.fullmatch(raw, start, end) is None
                or _MINUTES_BYTES.match(raw, end) is None
            ):
                yield start, min(len(text), end + 1)
            continue
        chars += len(raw[done:start].decode("utf-8", "surrogatepass"))
        width = len(raw[start:end].decode("utf-8", "surrogatepass"))
        yield chars, min(len(text), chars + width + 1)
        chars, done = chars + width, end


# Look-alikes libphonenumber accepts as numbers: a label right before the digits (an order,
# invoice, account or version number, a postcode), a dotted date, a decimal number.
_LABEL: Final = re.compile(
    r"(?i)\b(?:order|ord|invoice|inv|version|ver|v|ref|reference|account|acct|acc|id|zip|"
    r"postcode|postal code|tracking|isbn|sku|serial|ticket|case|po|transaction|txn|receipt|"
    r"booking|confirmation|pnr|customer|member|policy|claim|item|part)"
    r"[\s#:.\-]{0,3}(?:no\.?|nr\.?|number|num\.?|code)?[\s#:.\-]{0,3}$"
)
_NOT_A_NUMBER: Final = re.compile(
    r"\d{1,4}([./-])\d{1,2}\1\d{2,4}"  # a date: 04.05.1998, 2024-01-02, 02/01/2024
    r"|\d+\.\d+"  # a decimal number or a coordinate
)


#: Digits that continue a chain after a candidate (at most the 16 more a number may have),
#: before no letter or digit: the end of a chain the candidate pattern cut.
_TAIL: Final = re.compile(r"(?:[ .\-/()\u00a0]{0,3}\d){1,16}(?![^\W_])")


def _runs(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each run of candidates to read: consecutive candidates with no
    digit between them, and the digits that end their chain.

    The candidate pattern stops at 41 digits (so it stays linear), which cuts a long chain
    of digit groups wherever the count falls; a number may straddle the cut (``1234 1234
    ... 415 | 555 0132``), so the candidates on both sides, and a tail too short to be a
    candidate itself, are read as one run. A candidate after a label (``order``,
    ``invoice``...) or that is a date or a decimal number is skipped, and ends the run.
    """
    start = end = -1
    for window in _windows(text):
        for m in _CANDIDATE.finditer(text, *window):
            if start >= 0 and any(c.isdigit() for c in text[end : m.start()]):
                yield start, _tail(text, end)
                start = -1
            if _NOT_A_NUMBER.fullmatch(m[0]) or _LABEL.search(
                text, max(0, m.start() - 32), m.start()
            ):
                if start >= 0:
                    yield start, end  # the skipped candidate follows at once: no tail
                    start = -1
                continue
            start, end = (m.start() if start < 0 else start), m.end()
        if start >= 0:
            yield start, _tail(text, end)
            start = -1


def _tail(text: str, end: int) -> int:
    """Where the chain a candidate ending at ``end`` belongs to ends."""
    tail = _TAIL.match(text, end)
    return end if tail is None else tail.end()


def _not_a_number(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` is a date, a decimal number, or a timestamp's date and hour."""
    return bool(
        _NOT_A_NUMBER.fullmatch(text, start, end)
        or (_TIME_STAMP.fullmatch(text, start, end) and _MINUTES.match(text, end))
    )


def check_regions(regions: Sequence[str]) -> tuple[str, ...]:
    """Validate region codes (``US``, ``DE``...) against libphonenumber's metadata.

    Raises:
        ValueError: an unknown region, or regions given without the ``pii`` extra.
    """
    out = tuple(r.upper() for r in regions)
    if _pn is None:
        raise ValueError(
            "phone_regions needs libphonenumber: pip install 'adk-lattice[pii]' "
            "(or leave phone_regions unset to use the built-in phone pattern)"
        )
    unknown = [r for r in out if r not in _pn.SUPPORTED_REGIONS]
    if unknown:
        raise ValueError(f"unknown phone regions {unknown}; use ISO 3166 codes such as 'DE'")
    return out


@functools.cache
def _general(country_code: int) -> re.Pattern[str] | None:
    """What every valid number of ``country_code`` matches: the union of its regions' general
    patterns (libphonenumber tests a number against its region's general pattern before any
    other); None when a region has none (no shortcut then)."""
    assert _pn is not None
    patterns = []
    for region in _pn.COUNTRY_CODE_TO_REGION_CODE.get(country_code, ()):
        if region == _pn.REGION_CODE_FOR_NON_GEO_ENTITY:
            metadata = _pn.PhoneMetadata.metadata_for_nongeo_region(country_code)
        else:
            metadata = _pn.PhoneMetadata.metadata_for_region(region)
        desc = None if metadata is None else metadata.general_desc
        if desc is None or desc.national_number_pattern is None:
            return None
        patterns.append(f"(?:{desc.national_number_pattern})")
    return re.compile("|".join(patterns)) if patterns else None


def _finder(regions: tuple[str, ...]) -> Any:
    assert _pn is not None
    pn = _pn
    leniency = pn.Leniency.VALID
    tried = regions or ("ZZ",)

    def plausible(candidate: str) -> bool:
        """A cheap parse: is this one valid number for some region?"""
        for region in tried:
            try:
                number = pn.parse(candidate, region)
            except pn.NumberParseException:
                continue
            # The general pattern first (a regex), the full validation (every region of
            # the country code, every number type) only for what may pass it.
            general = _general(number.country_code)
            if general is not None and not general.fullmatch(
                pn.national_significant_number(number)
            ):
                continue
            if pn.is_valid_number(number):
                return True
        return False

    def confirmed(text: str, start: int, end: int) -> list[tuple[int, int]]:
        # The matcher sees up to two characters either side for its context checks (dates,
        # times), but no digit of a neighbouring number, which would merge the two.
        lo, hi = max(0, start - 2), min(len(text), end + 2)
        if any(c.isdigit() for c in text[lo:start]):
            lo = start
        if any(c.isdigit() for c in text[end:hi]):
            hi = end
        for region in tried:
            spans = [
                (lo + x.start, lo + x.end)
                for x in pn.PhoneNumberMatcher(text[lo:hi], region, leniency=leniency)
            ]
            if spans:
                return spans
        return []

    def find(text: str) -> Iterator[tuple[int, int]]:
        budget = max(WORK_BUDGET, len(text) // CHARS_PER_UNIT)
        for run_start, run_end in _runs(text):
            if budget <= 0:  # past the budget a run of candidates counts as a number
                yield run_start, run_end
                continue
            pieces = [p.span() for p in _PIECE.finditer(text, run_start, run_end)]
            i = 0
            while i < len(pieces) and budget > 0:
                hit: tuple[int, list[tuple[int, int]]] | None = None
                for j in range(min(len(pieces), i + _MAX_PIECES) - 1, i - 1, -1):
                    start, end = pieces[i][0], pieces[j][1]
                    digits = sum(c.isdigit() for c in text[start:end])
                    if not 7 <= digits <= _ONE_NUMBER or _not_a_number(text, start, end):
                        continue
                    budget -= len(tried)
                    if plausible(text[start:end]):
                        budget -= 2 * len(tried)
                        spans = confirmed(text, start, end)
                        if spans:
                            hit = (j, spans)
                            break
                if hit is not None:
                    yield from hit[1]
                    i = hit[0] + 1
                else:
                    i += 1
            if i < len(pieces):  # the budget ran out inside this run: the rest is a number
                yield pieces[i][0], pieces[-1][1]

    return find


def phone_detector(regions: Sequence[str] | None) -> Detector:
    """The PHONE detector: libphonenumber for ``regions`` when installed, else the pattern.

    Args:
        regions: region codes to read national numbers in (the first is the default
            region); None for the default (``US``) or, without the extra, the pattern.
    """
    if regions is None and _pn is None:
        global _warned
        if not _warned:
            _warned = True
            # Silent, the fallback reads US formats only: international numbers leak.
            logger.warning(
                "adk_lattice: RedactPII finds phone numbers with a US-only pattern: install "
                "the pii extra (pip install 'adk-lattice[pii]') to read every region's numbers"
            )
        return PHONE
    chosen = check_regions(DEFAULT_REGIONS if regions is None else regions)
    return Detector("PHONE", finder=_finder(chosen), gate="digits")
