"""Scrubbing structures: every string leaf and key, rebuilt containers, media, depth."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from google.genai import types

from adk_lattice.policy._walk import WITHHELD_DEPTH, Found, Walker, is_text_mime


def _upper(text: str) -> tuple[str, bool, set[str]]:
    out = text.replace("secret", "[X]")
    return out, False, {"X"} if out != text else set()


def test_sets_frozensets_and_named_tuples_are_rebuilt_scrubbed() -> None:
    """Containers that cannot be edited in place come back scrubbed, of the same type."""
    Pair = namedtuple("Pair", "a b")
    found = Found()
    out = Walker(_upper).node(
        {"s": {"secret"}, "f": frozenset({"secret"}), "p": Pair("secret", 1)}, found
    )
    assert out == {"s": {"[X]"}, "f": frozenset({"[X]"}), "p": Pair("[X]", 1)}
    assert isinstance(out["p"], Pair) and found.changed


def test_utf8_bytes_are_scrubbed() -> None:
    """Bytes that decode as UTF-8 are scrubbed as text."""
    assert Walker(_upper).node([b"a secret"], Found()) == [b"a [X]"]


def test_nesting_past_the_limit_is_withheld() -> None:
    """A structure nested deeper than max_depth is withheld from that depth on."""
    deep: Any = "secret"
    for _ in range(10):
        deep = [deep]
    found = Found()
    out = Walker(_upper, max_depth=5).node(deep, found)
    for _ in range(5):
        out = out[0]
    assert out == WITHHELD_DEPTH and "UNSCANNED" in found.kinds


def test_a_self_referring_structure_ends() -> None:
    """A list that contains itself is withheld at the depth limit instead of looping."""
    loop: list[Any] = ["secret"]
    loop.append(loop)
    Walker(_upper, max_depth=8).node(loop, Found())
    assert loop[0] == "[X]"


def test_opaque_media_passes_by_default() -> None:
    """An image blob is passed on unchanged unless media="withhold"."""
    blob = types.Blob(data=b"\x89PNG", mime_type="image/png")
    assert Walker(_upper).blob(blob, Found()) is blob


def test_text_mime_types() -> None:
    """Text, JSON, XML, YAML and CSV media count as text; images and PDF do not."""
    assert all(map(is_text_mime, ["text/plain; charset=utf-8", "application/json",
                                  "application/ld+json", "application/csv"]))  # fmt: skip
    assert not any(map(is_text_mime, ["image/png", "application/pdf", None]))
