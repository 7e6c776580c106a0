"""RedactPII's stream hold at its bounds: what each partial chunk releases, and when."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_lattice.policy import RedactPII
from adk_lattice.testing import callback_context

from .conftest import noted

TAIL = " after" + " filler words" * 20
SECRET = "[REDACTED:SECRET]"
PEM = "-----BEGIN PRIVATE KEY-----\n"


def _stream(r: RedactPII, chunks: Sequence[str]) -> tuple[list[str], Any]:
    """Feed ``chunks`` as partial responses then the whole answer; the partials' texts."""
    ctx = callback_context()
    out = []
    for chunk in chunks:
        part = types.Part(text=chunk)
        resp = LlmResponse(content=types.Content(role="model", parts=[part]), partial=True)
        r.after_model(callback_context=ctx, llm_response=resp)
        assert resp.content is not None
        out.append("".join(p.text or "" for p in resp.content.parts or ()))
    whole = types.Part(text="".join(chunks))
    final = LlmResponse(content=types.Content(role="model", parts=[whole]), partial=False)
    r.after_model(callback_context=ctx, llm_response=final)
    return out, ctx


def test_a_token_growing_past_max_hold_streams_as_one_secret_then_the_rest() -> None:
    """A token streamed past max_hold is released as one SECRET, then the text after it."""
    r = RedactPII(hold=48, max_hold=100)
    out, ctx = _stream(r, ["see ", *["A" * 30] * 5, TAIL])
    assert "".join(out).startswith("see " + SECRET + " after filler words")
    assert noted(ctx, "after_model") == [("redact", "secret")]


def test_a_token_of_exactly_max_hold_streams_out_whole() -> None:
    """A token of exactly max_hold characters is held, then released as it is."""
    r = RedactPII(hold=48, max_hold=100)
    out, ctx = _stream(r, ["see ", *["B" * 10] * 10, TAIL])
    assert "".join(out).startswith("see " + "B" * 100 + " after")
    assert noted(ctx, "after_model") == []


def test_a_long_token_in_one_chunk_is_replaced_at_once() -> None:
    """A chunk holding a token longer than max_hold releases it as SECRET right away."""
    r = RedactPII(hold=48, max_hold=100)
    out, _ = _stream(r, ["see " + "C" * 101, TAIL])
    assert out[0] == "see " + SECRET


def test_a_token_of_max_hold_in_one_chunk_is_not_replaced() -> None:
    """A chunk holding a token of exactly max_hold characters keeps it, to release later."""
    r = RedactPII(hold=48, max_hold=100)
    out, _ = _stream(r, ["see " + "C" * 100, TAIL])
    assert out[0] == "see "
    assert out[1].startswith("C" * 100 + " after")


def test_text_before_a_break_is_released_while_the_word_after_it_grows() -> None:
    """A comma ends a value: the word before it is released before the next word ends."""
    out, _ = _stream(RedactPII(), ["note: ", "hello", ",", "world", "xxxxx", " more text" * 12])
    assert out[:3] == ["note: ", "", "hello,"]


def test_text_after_a_closed_private_key_block_is_released() -> None:
    """A private-key block is released as SECRET with the chunk bringing its END, then the rest."""
    chunks = ["key: ", PEM, "MIIB" * 5, "\n-----END PRIVATE KEY-----\n", "after words " * 12]
    out, _ = _stream(RedactPII(), chunks)
    assert "MIIB" not in "".join(out)
    assert out[3] == SECRET + "\n"  # released with the chunk that brought its END
    assert "".join(out).startswith("key: " + SECRET + "\nafter words after")


def test_text_after_an_over_long_key_block_with_a_split_end_is_released() -> None:
    """After a key block past max_hold, an END split mid-name still ends it: later text streams."""
    body = ["MIIB" * 10] * 3
    chunks = ["key: ", PEM, *body, "\n-----END RSA PRIV", "ATE KEY-----\n", "after words " * 12]
    out, _ = _stream(RedactPII(hold=48, max_hold=100), chunks)
    assert "".join(out).startswith("key: " + SECRET + "\nafter words after")


def _counting() -> tuple[list[int], Any]:
    seen: list[int] = []

    def finder(text: str) -> list[tuple[int, int]]:
        seen.append(len(text))
        return []

    return seen, finder


def test_a_growing_token_is_not_rescanned_with_each_chunk() -> None:
    """A long token streamed in small chunks is scanned about once, not once per chunk."""
    seen, finder = _counting()
    r = RedactPII(custom={"ORDER": finder}, hold=48, max_hold=4000)
    _stream(r, ["see ", *["D" * 10] * 300])
    assert sum(seen) < 4 * 3000  # the final scan and a few; per-chunk rescans would be ~450,000


def test_a_growing_key_block_is_not_rescanned_with_each_chunk() -> None:
    """A private-key block streamed in small chunks is scanned about once, not once per chunk."""
    seen, finder = _counting()
    r = RedactPII(custom={"ORDER": finder}, hold=48, max_hold=4000)
    _stream(r, ["key: ", PEM, *["MIIB\n" * 2] * 300])
    assert sum(seen) < 4 * 3000


def test_a_word_shorter_than_hold_is_released_at_a_comma() -> None:
    """A word shorter than hold is released once a comma after it arrives."""
    out, _ = _stream(RedactPII(), ["see ", "a" * 95, ",b", "c" * 10, " tail" * 30])
    assert out[2] == "a" * 95 + ","


def test_a_token_of_hold_characters_stays_held_past_a_comma() -> None:
    """A token as long as hold is held whole past a comma: a long value may hold one."""
    out, _ = _stream(RedactPII(), ["see ", "a" * 96, ",b", "c" * 10, " tail" * 30])
    assert out[1:4] == ["see ", "", ""]


KEY_BODY = "\n".join(["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"] * 6)
KEY_END = "\n-----END PRIVATE KEY-----"


def test_a_key_block_past_max_hold_in_one_chunk_is_replaced_in_that_chunk() -> None:
    """A key block that arrives longer than max_hold in one chunk is a SECRET in that chunk."""
    out, _ = _stream(RedactPII(hold=48, max_hold=200), ["see " + PEM + KEY_BODY, KEY_END + " done"])
    assert out == ["see " + SECRET, " "]


def test_a_key_block_exactly_max_hold_long_is_held_whole() -> None:
    """A key block of exactly max_hold characters is still held, and released when it ends."""
    block = (PEM + KEY_BODY)[:200]
    out, _ = _stream(RedactPII(hold=48, max_hold=200), ["see " + block, KEY_END + " done"])
    assert out == ["see ", SECRET + " "]


def test_only_the_key_block_counts_toward_max_hold() -> None:
    """The text released before a short open key block does not count toward its bound."""
    words = "word " * 30
    out, _ = _stream(
        RedactPII(hold=48, max_hold=200), [words + PEM, KEY_BODY[:40], KEY_END + " done"]
    )
    assert out == [words, "", SECRET + " "]


def test_the_words_before_an_open_key_block_are_released() -> None:
    """While a key block is held open, the words before it are released, even a number."""
    out, _ = _stream(
        RedactPII(), ["call 555 -----BEGIN", " PRIVATE KEY-----\n" + KEY_BODY + KEY_END]
    )
    assert out[0] == "call 555 "


def test_a_custom_detector_stream_holds_only_its_last_hold_characters() -> None:
    """With custom detectors, a stream holds the token the last hold characters start in and
    releases the words before it, even one a bracket follows."""
    r = RedactPII(hold=48, custom={"TICKET": r"TKT-\d{6}"})
    out, _ = _stream(r, ["greetings jane (" + "x" * 60 + " ok", " more words"])
    assert out[0] == "greetings jane "


def test_a_value_closed_just_before_a_held_phone_is_released_redacted() -> None:
    """A value that ends where a phone number's bracket starts is released, redacted, at once."""
    email = "jane@" + "a" * 60 + ".com"
    out, _ = _stream(RedactPII(hold=48), ["mail " + email + "( +1 415", " 555 0100) today "])
    assert out[0] == "mail [REDACTED:EMAIL]"


def test_a_custom_detector_stream_redacts_a_value_ending_where_the_hold_starts() -> None:
    """With custom detectors, a value ending exactly where the last hold characters start is
    released redacted, never as written."""
    r = RedactPII(hold=48, custom={"TICKET": r"TKT-\d{6}"})
    out, _ = _stream(r, ["mail jane@example.com " + "x" * 47, " end"])
    assert out[0] == "mail [REDACTED:EMAIL]"


def test_an_end_split_right_after_a_bare_begin_line_closes_the_block() -> None:
    """An END whose dashes start in the chunk of a short BEGIN line closes the block at once."""
    out, _ = _stream(RedactPII(), ["x -----BEGIN ----", "-END PRIVATE KEY----- after words", " x "])
    assert out[1] == "-----BEGIN -----END PRIVATE KEY----- after "


CUSTOM = {"TICKET": r"TKT-\d{6}"}


@pytest.mark.parametrize(
    ("chunk", "released"),
    [
        ("Room 12 HELLO wor", "Room 12 HELLO "),  # no IBAN group is five letters long
        ("Call 415 abc wor", "Call 415 abc "),  # nor lower case
        ("Call 415 Xavier wor", "Call 415 Xavier "),
        ("Call 415 HELLOTHERE wor", "Call 415 HELLOTHERE "),
    ],
)
def test_a_plain_word_after_a_number_releases_the_number(chunk: str, released: str) -> None:
    """A plain word after a number ends it: the number is released before the next word ends."""
    out, _ = _stream(RedactPII(), [chunk, "ld and more text "])
    assert out[0] == released


@pytest.mark.parametrize(
    "chunk",
    [
        "Use secret = abcdefghij wor",
        "Use secret : abcdefghij wor",
        "Use secret= abcdefghij wor",
        "mail jane @ example wor",
        "Call 415 café wor",  # a non-ASCII word may be a digit group written oddly
    ],
)
def test_a_word_that_carries_a_value_on_keeps_it_held(chunk: str) -> None:
    """The word after ``=``, ``:`` or ``@`` (or a non-ASCII one) keeps the value held whole
    until the word after it is written."""
    out, _ = _stream(RedactPII(), [chunk, "ld and more text "])
    assert out[0] == chunk.split()[0] + " "


def test_a_mark_before_a_growing_percent_value_releases_the_words_before_it() -> None:
    """A comma before a growing ``%`` value ends the words before it: they are released."""
    out, _ = _stream(RedactPII(), ["Ask Xavier,%", "40 later please and more"])
    assert out == ["Ask Xavier,", "%40 later please and "]


def test_a_word_being_written_that_cannot_join_a_value_releases_the_word_before() -> None:
    """A word being written that no value joins to the word before does not hold that word."""
    out, _ = _stream(RedactPII(), ["see jane Xyz", "zy and more"])
    assert out == ["see jane ", "Xyzzy and "]


def test_a_word_before_a_phone_number_is_released_whole() -> None:
    """The word before a phone number being written is released whole, never cut in two."""
    out, _ = _stream(RedactPII(), ["Call BOX 415 555 01", "32 and more"])
    assert out == ["Call BOX ", "[REDACTED:PHONE] and "]


def test_a_local_part_at_the_start_of_a_stream_is_held_before_an_at_sign() -> None:
    """The first word of a stream is held while an ``@`` after it may join it to an address."""
    out, _ = _stream(RedactPII(), ["x @exa", "mple.com and more"])
    assert out == ["", "x @example.com and "]


def test_the_name_before_an_open_key_block_is_released() -> None:
    """A secret's name just before an open key block is released: the block is held alone."""
    end = " PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n and more"
    out, _ = _stream(RedactPII(), ["private key: -----BEGIN", end])
    assert out == ["private key: ", SECRET + "\n and "]


def test_a_number_run_longer_than_hold_releases_all_but_its_tail() -> None:
    """A run of number groups longer than hold is held only from its last hold characters."""
    groups = "1234 " * 40
    out, _ = _stream(RedactPII(), ["Values: " + groups + "ab", "c and more"])
    assert out[0].startswith("Values: 1234 1234 ")
    assert len(out[0]) >= len("Values: " + groups) - 96


def test_a_custom_detector_stream_shorter_than_hold_releases_nothing() -> None:
    """With custom detectors, a stream shorter than hold releases nothing, not even a space."""
    out, _ = _stream(RedactPII(hold=48, custom=CUSTOM), [" hi there", " and more"])
    assert out == ["", ""]


def test_a_custom_detector_stream_does_not_take_held_prose_for_a_secret() -> None:
    """With custom detectors, a short word after held prose is not replaced as a secret."""
    prose = "The quarterly review covered the billing migration, which moved every customer. "
    r = RedactPII(hold=48, max_hold=60, custom=CUSTOM)
    out, _ = _stream(r, [prose, "abcdefghijklmno", " more text"])
    assert SECRET not in "".join(out)
    assert "".join(out) == (prose + "abcdefghijklmno more text")[: len("".join(out))]


def test_a_certificate_being_streamed_is_not_held_as_a_private_key() -> None:
    """A certificate's BEGIN line is released at once: only a private key's block is held."""
    chunks = ["cert: -----BEGIN CERTIFICATE-----\nMIIB", "C\n-----END CERTIFICATE-----\n and more"]
    out, _ = _stream(RedactPII(), chunks)
    assert out == ["cert: -----BEGIN CERTIFICATE-----\n", "MIIBC\n-----END CERTIFICATE-----\n and "]


def test_a_word_up_to_three_spaces_before_an_at_is_redacted_in_the_stream() -> None:
    """A word three spaces before ``(at)`` is held, so the address streams out redacted whole."""
    out, _ = _stream(RedactPII(), ["mail jane   ", "(at) example (dot) com and more"])
    assert out == ["mail ", "[REDACTED:EMAIL] and "]


def test_a_word_four_spaces_back_is_released() -> None:
    """Four spaces end a word: no ``(at)`` joins across them, so the word is released."""
    out, _ = _stream(RedactPII(), ["mail jane    ", "(at) example (dot) com and more"])
    assert out == ["mail jane    ", "(at) example (dot) com and "]


def test_a_secret_name_at_a_line_end_keeps_the_next_line_value_redacted() -> None:
    """A secret's name ending a chunk's line is held, so its value on the next line streams
    out redacted."""
    out, _ = _stream(RedactPII(), ["password\n", "= hunter2hunter2 and more text"])
    assert out == ["", "password\n= [REDACTED:SECRET] and more "]


def test_a_closed_word_after_a_number_releases_the_number() -> None:
    """A number a whole plain word has closed is released; only that last word is held."""
    out, _ = _stream(RedactPII(), ["Room 12 HELLO ", "more text and more"])
    assert out == ["Room 12 ", "HELLO more text and "]


def test_a_custom_detector_stream_releases_a_long_plain_word_in_its_tail() -> None:
    """With custom detectors, a long closed word reaching into the held tail is released as
    written, not replaced as a secret."""
    word = "w" * 60
    r = RedactPII(hold=48, max_hold=80, custom=CUSTOM)
    out, _ = _stream(r, ["intro " + word + " and a few more words here", " and the end of it all"])
    assert out[0] == "intro "
    assert "".join(out).startswith("intro " + word)


def test_a_bracket_before_an_open_key_block_is_released() -> None:
    """A bracket before an open private-key block is released with the words before it."""
    chunks = ["Mail jane [ " + PEM + "MIIB", "C\n-----END PRIVATE KEY-----\n and more"]
    out, _ = _stream(RedactPII(), chunks)
    assert out == ["Mail jane [ ", SECRET + "\n and "]


def test_a_token_one_past_max_hold_closed_in_its_last_chunk_is_a_secret() -> None:
    """A token one character longer than max_hold, closed in the chunk that completes it, is
    released as SECRET, never as written."""
    r = RedactPII(hold=48, max_hold=100)
    out, _ = _stream(r, ["see " + "C" * 50, "C" * 51 + " after that the rest"])
    assert out == ["see ", SECRET + " after that the "]


BODY = "MIIEvQIBADANBgkqhkiGwBAQEFAASCBKcwggSjAgEAAoIBAQCabcdefghijklm"
RSA_REST = "VATE KEY-----\n" + BODY + "\n-----END RSA PRIVATE KEY-----\n and more"


def test_a_begin_line_still_arriving_is_held() -> None:
    """A BEGIN line whose label has not fully arrived is held: it may name a private key."""
    out, _ = _stream(RedactPII(), ["\n-----BEGIN RSA PRI", RSA_REST])
    assert out == ["\n", SECRET + "\n and "]


def test_a_second_key_block_is_held_after_a_closed_one() -> None:
    """After a closed key block, the BEGIN line of the next one is held until it can be read."""
    closed = PEM + BODY + "\n-----END PRIVATE KEY-----\n"
    out, _ = _stream(RedactPII(), ["old: " + closed + "new: -----BEGIN RSA PRI", RSA_REST])
    assert out == ["old: " + SECRET + "\nnew: ", SECRET + "\n and "]


def test_a_begin_line_with_a_label_too_long_to_read_is_held() -> None:
    """A block whose label is too long to read is held like a private key until its END."""
    block = "-----BEGIN " + "A" * 49 + "-----\n" + BODY + "\n" + BODY
    out, _ = _stream(RedactPII(), ["see " + block, "\n-----END X-----\n and more"])
    assert out[0] == "see "


def test_text_after_a_dropped_key_block_streams_on_with_a_small_max_hold() -> None:
    """With a max_hold just above hold, the text after a dropped key block whose END is split
    across chunks still streams out."""
    chunks = ["see " + PEM, "MIIB" * 4 + "\n-----EN", "D PRIVATE KEY-----\n after words", " more"]
    out, _ = _stream(RedactPII(hold=48, max_hold=50), chunks)
    assert out[:3] == ["see ", SECRET, "\n after "]


def test_text_after_a_key_block_whose_end_label_is_split_streams_on() -> None:
    """A key block whose END line is split inside its label closes with the chunk ending it:
    the text after it streams out."""
    block = "see " + PEM + "MIIBMIIB\n-----END PRIVATE KEY---"
    out, _ = _stream(RedactPII(), [block, "--\n", "after words " * 5, "the end"])
    assert "".join(out).startswith("see " + SECRET + "\nafter words after words")
