"""Sensitive values at the edges: size, depth and width limits, long and extreme numbers."""

from __future__ import annotations

from typing import Any

import pytest

from adk_lattice.policy.provenance import values as provenance_values
from adk_lattice.policy.provenance.values import (
    MAX_VALUE_CHARS,
    Grounding,
    Malformed,
    normalise,
    ungrounded,
)


@pytest.fixture(autouse=True)
def _fresh_memo() -> None:
    """Each test extracts its own tokens: the module's memo would hand it earlier results."""
    provenance_values._MEMO.clear()


def _nested(value: Any, levels: int) -> Any:
    for _ in range(levels):
        value = [value]
    return value


def test_a_string_of_exactly_the_size_cap_is_checked() -> None:
    """A value of MAX_VALUE_CHARS characters is grounded as usual; one more never is."""
    text = "ab" * MAX_VALUE_CHARS
    grounding = Grounding([text])
    assert not ungrounded(grounding, "text", text[:MAX_VALUE_CHARS])
    assert ungrounded(grounding, "text", text[: MAX_VALUE_CHARS + 1])


def test_lists_nested_to_the_depth_limit_are_walked() -> None:
    """A value inside eight nested lists is checked; inside nine it is malformed."""
    depth = provenance_values._MAX_DEPTH
    grounding = Grounding(["mail bob@example.com"])
    assert not ungrounded(grounding, "email", _nested("bob@example.com", depth))
    assert ungrounded(grounding, "email", _nested("bob@example.com", depth + 1))


def test_an_integer_of_200_bits_or_more_is_never_grounded() -> None:
    """A 199-bit integer is grounded by its digits in trusted text; a 200-bit one never is."""
    small, large = 2**199 - 1, 2**199
    grounding = Grounding([f"totals {small} and {large}"])
    assert not ungrounded(grounding, "number", small)
    assert ungrounded(grounding, "number", large)


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_a_non_finite_float_is_never_grounded(value: float) -> None:
    """An infinite or NaN float is malformed, even where trusted text spells it out."""
    assert ungrounded(Grounding(["inf, -inf and nan"]), "text", value)


def test_long_numbers_are_compared_digit_for_digit() -> None:
    """A 31-digit number is not grounded by a trusted one that differs in its last digit."""
    grounding = Grounding(["reference total 1234567890123456789012345678901"])
    assert not ungrounded(grounding, "number", "1234567890123456789012345678901")
    assert ungrounded(grounding, "number", "1234567890123456789012345678902")


@pytest.mark.parametrize("value", ["1e999999", "1e9999999", "1e-9999999"])
def test_a_number_with_a_huge_exponent_is_malformed(value: str) -> None:
    """A number whose plain form would pass the size cap raises Malformed, never expands."""
    with pytest.raises(Malformed):
        normalise("number", value)


def test_a_number_with_a_huge_exponent_is_never_grounded() -> None:
    """1e-9999999 is not rounded to a 0 that trusted text holds."""
    assert ungrounded(Grounding(["balance 0"]), "number", "1e-9999999")


def test_a_number_whose_plain_form_fills_the_size_cap_is_a_number() -> None:
    """1e9999, ten thousand digits written out, is still compared as a number."""
    assert normalise("number", "1e9999") == "1" + "0" * (MAX_VALUE_CHARS - 1)
