"""Scrubbing structures: every string leaf and key, rebuilt containers, media, depth."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from google.genai import types

from adk_lattice.policy.pii._walk import WITHHELD_DEPTH, WITHHELD_MEDIA, Found, Walker, is_text_mime


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
    assert out == WITHHELD_DEPTH and "UNSCANNED" in found.kinds and found.changed


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


def test_text_media_is_scrubbed_in_place() -> None:
    """A text blob keeps its object and type, with the scrubbed text as its bytes."""
    blob = types.Blob(data=b"a secret note", mime_type="text/plain")
    found = Found()
    assert Walker(_upper).blob(blob, found) is blob
    assert blob.data == b"a [X] note" and found.changed


def _emails(text: str) -> tuple[str, bool, set[str]]:
    out = "[R]" if "@" in text else text
    return out, False, {"EMAIL"} if out != text else set()


def test_keys_redacted_alike_are_numbered_in_order() -> None:
    """Keys that redact to one name keep every value, numbered #2, #3... in order."""
    node = {"a@x.io": 1, "b@x.io": 2, "c@x.io": 3}
    Walker(_emails).node(node, Found())
    assert node == {"[R]": 1, "[R]#2": 2, "[R]#3": 3}


def test_dicts_and_tuples_are_scanned_to_exactly_max_depth() -> None:
    """Dicts and tuples nested up to max_depth levels are scrubbed; one level more is withheld."""
    walker = Walker(_upper, max_depth=3)
    assert walker.node({"a": {"b": {"c": "secret"}}}, Found()) == {"a": {"b": {"c": "[X]"}}}
    assert walker.node({"a": {"b": {"c": {"d": 1}}}}, Found()) == {
        "a": {"b": {"c": WITHHELD_DEPTH}}
    }
    assert walker.node(((("secret",),),), Found()) == ((("[X]",),),)
    assert walker.node((((("x",),),),), Found()) == (((WITHHELD_DEPTH,),),)


def test_call_arguments_in_a_part_are_scrubbed_to_the_depth_limit() -> None:
    """A part's call arguments are scrubbed and count one level below the part."""
    walker = Walker(_upper, max_depth=3)
    found = Found()
    part = types.Part(function_call=types.FunctionCall(name="f", args={"a": {"b": "secret"}}))
    walker.part(part, found)
    assert part.function_call.args == {"a": {"b": "[X]"}} and found.kinds == {"X"}
    deep = types.Part(function_call=types.FunctionCall(name="f", args={"a": {"b": {"c": 1}}}))
    walker.part(deep, Found())
    assert deep.function_call.args == {"a": {"b": WITHHELD_DEPTH}}


def test_function_responses_in_a_part_are_scrubbed_to_the_depth_limit() -> None:
    """A part's function response is scrubbed and counts one level below the part."""
    walker = Walker(_upper, max_depth=3)
    found = Found()
    part = types.Part(
        function_response=types.FunctionResponse(name="f", response={"a": {"b": "secret"}})
    )
    walker.part(part, found)
    assert part.function_response.response == {"a": {"b": "[X]"}} and found.kinds == {"X"}
    deep = types.Part(
        function_response=types.FunctionResponse(name="f", response={"a": {"b": {"c": 1}}})
    )
    walker.part(deep, Found())
    assert deep.function_response.response == {"a": {"b": WITHHELD_DEPTH}}


def test_withheld_media_is_reported_as_a_change_of_kind_media() -> None:
    """With media="withhold", an image becomes the withheld marker, noted as MEDIA."""
    found = Found()
    out = Walker(_upper, media="withhold").blob(
        types.Blob(data=b"\x89PNG", mime_type="image/png"), found
    )
    assert out == WITHHELD_MEDIA
    assert found.changed is True and found.kinds == {"MEDIA"}


def test_suffixed_and_parameterised_types_count_as_text() -> None:
    """+xml and +json types count as text, parameters after ";" and case aside."""
    assert all(map(is_text_mime, ["application/atom+xml", "Application/Ld+JSON; charset=utf-8"]))


def test_undecodable_text_media_is_withheld_when_media_is_withheld() -> None:
    """A "text" blob whose bytes are not UTF-8 is treated as opaque media: withheld."""
    blob = types.Blob(data=b"\xff\xfe secret", mime_type="text/plain")
    found = Found()
    out = Walker(_upper, media="withhold").blob(blob, found)
    assert out != blob and found.changed


def test_non_string_keys_are_kept_and_their_values_scrubbed() -> None:
    """A dict with number keys keeps them; its string values are scrubbed."""
    assert Walker(_upper).node({1: "secret", 2.5: "plain"}, Found()) == {1: "[X]", 2.5: "plain"}


def test_nested_frozensets_past_the_limit_are_withheld() -> None:
    """Frozensets inside a set count their depth like lists: too deep is withheld."""
    deep: Any = frozenset({"secret"})
    for _ in range(6):
        deep = frozenset({deep})
    found = Found()
    Walker(_upper, max_depth=4).node({deep}, found)
    assert "UNSCANNED" in found.kinds and found.changed


def test_parts_and_blobs_inside_a_structure_are_scrubbed() -> None:
    """A Part or a text Blob met inside a list is scrubbed like one handed directly."""
    blob = types.Blob(data=b"a secret", mime_type="text/plain")
    out = Walker(_upper).node([types.Part(text="my secret"), blob], Found())
    assert out[0].text == "my [X]"
    assert out[1].data == b"a [X]"


def test_bytes_with_nothing_found_come_back_as_they_were() -> None:
    """Bytes holding nothing to scrub are returned unchanged: a bytearray stays one."""
    raw = bytearray(b"plain text")
    assert Walker(_upper).node([raw], Found())[0] is raw


def test_sets_are_scanned_to_exactly_max_depth() -> None:
    """Frozensets nested up to max_depth levels are scrubbed; one level more is withheld."""
    walker = Walker(_upper, max_depth=3)
    inner = frozenset({frozenset({"secret"})})
    assert walker.node({inner}, Found()) == {frozenset({frozenset({"[X]"})})}
    assert walker.node({frozenset({inner})}, Found()) == {frozenset({frozenset({WITHHELD_DEPTH})})}


def test_a_part_inside_a_structure_counts_the_depth_above_it() -> None:
    """A Part met two levels down spends those levels: its arguments hit the limit sooner."""
    part = types.Part(function_call=types.FunctionCall(name="f", args={"a": {"b": "secret"}}))
    Walker(_upper, max_depth=3).node([[part]], Found())
    assert part.function_call.args == {"a": WITHHELD_DEPTH}
