"""The checks a card or IBAN candidate must pass, through RedactPII: digits in any script."""

from __future__ import annotations

import pytest

from adk_lattice.policy import RedactPII

#: Each script's zero: its decimal digits follow it in order.
_ZEROS = {"arabic-indic": 0x660, "devanagari": 0x966}


def _in_script(number: str, zero: int) -> str:
    """``number`` with each ASCII digit written in the script starting at ``zero``."""
    return "".join(chr(zero + int(c)) if c.isdigit() else c for c in number)


@pytest.mark.parametrize("script", sorted(_ZEROS))
@pytest.mark.parametrize(
    "number",
    [
        "4111 1111 1111 1111",  # 16 digits
        "5555-5555-5555-4444",  # doubled digits over 4
        "6011111111111117",
        "378282246310005",  # 15 digits
        "4222222222222",  # 13 digits, the shortest card
        "4111111111111111110",  # 19 digits, the longest card
    ],
)
def test_a_card_number_in_another_script_is_redacted(number: str, script: str) -> None:
    """A card number written in Arabic-Indic or Devanagari digits is redacted like one in ASCII."""
    text = f"pay {_in_script(number, _ZEROS[script])} now"
    assert RedactPII().scrub(text)[0] == "pay [REDACTED:CARD] now"


@pytest.mark.parametrize("script", sorted(_ZEROS))
@pytest.mark.parametrize(
    "number",
    [
        "4111 1111 1111 1112",
        "5555-5555-5555-4445",
        "6011111111111118",
        "4222222222223",
        "4111111111111111111",
    ],
)
def test_a_number_in_another_script_failing_luhn_is_left_alone(number: str, script: str) -> None:
    """A card-shaped number in another script that fails the Luhn check is not a card."""
    text = f"ref {_in_script(number, _ZEROS[script])} ok"
    assert RedactPII(kinds=["card"]).scrub(text)[0] == text


@pytest.mark.parametrize(
    "code",
    [
        "GB82WEST1234",  # 12 characters: IBAN-shaped, shorter than any IBAN
        "GB82 WEST 1234",
        "GB82" + "WEST" * 7 + "123",  # 35 characters: longer than any IBAN
    ],
)
def test_an_iban_shaped_code_of_no_iban_length_is_left_alone(code: str) -> None:
    """A code shaped like an IBAN but shorter than 15 or longer than 34 characters is kept."""
    text = f"ref {code} ok"
    assert RedactPII(kinds=["iban"]).scrub(text)[0] == text


def test_an_iban_of_the_longest_length_is_redacted() -> None:
    """A 34-character code passing mod-97, the longest an IBAN may be, is redacted."""
    text = "ref GB93WESTWESTWESTWESTWESTWESTWEST12 ok"
    assert RedactPII(kinds=["iban"]).scrub(text)[0] == "ref [REDACTED:IBAN] ok"


def test_a_code_one_past_the_longest_iban_is_left_alone_even_passing_mod_97() -> None:
    """A 35-character code is no IBAN, even when its mod-97 check holds."""
    text = "ref GB08WESTWESTWESTWESTWESTWESTWEST123 ok"
    assert RedactPII(kinds=["iban"]).scrub(text)[0] == text
