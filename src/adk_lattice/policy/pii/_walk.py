"""Scrub every string leaf and key of a structure: tool results, call arguments, state.

Dicts and lists are edited in place (ADK keeps the objects it handed to a callback); tuples,
sets and frozensets are rebuilt, and the parent gets the new one. Parts and blobs (media a
tool returns, files a user uploads) are scrubbed when their bytes are text (``text/*``,
JSON, XML, YAML, CSV); opaque media (images, audio, PDF) cannot be read here and is passed
on or withheld as configured. A structure nested deeper than ``max_depth`` (or one that
refers to itself) is withheld from that depth on, never passed on unscanned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from google.genai import types

ScrubText = Callable[[str], tuple[str, bool, set[str]]]
Media = Literal["pass", "withhold"]

#: What stands for media the lattice cannot read, with ``media="withhold"``.
WITHHELD_MEDIA: Final = "[WITHHELD:MEDIA]"
#: What stands for a structure nested past the depth limit.
WITHHELD_DEPTH: Final = "[WITHHELD:TOO_DEEP]"

_TEXT_MIME: Final = ("text/", "application/json", "application/xml", "application/x-yaml")
_TEXT_MIME_EXTRA: Final = ("application/yaml", "application/csv", "application/javascript")


def is_text_mime(mime: str | None) -> bool:
    """Whether media of this MIME type is text the detectors can read."""
    m = (mime or "").split(";")[0].strip().lower()
    return m.startswith(_TEXT_MIME + _TEXT_MIME_EXTRA) or m.endswith(("+json", "+xml"))


@dataclass(slots=True)
class Found:
    """What a walk found: the kinds, whether a ``block`` kind was among them, any change."""

    kinds: set[str] = field(default_factory=set)
    blocked: bool = False
    changed: bool = False


@dataclass(frozen=True, slots=True)
class Walker:
    """Scrubs structures with one text scrubber.

    Args:
        scrub: text in, ``(text, blocked, kinds)`` out.
        media: ``pass`` or ``withhold`` media the detectors cannot read.
        max_depth: the deepest nesting scanned.
    """

    scrub: ScrubText
    media: Media = "pass"
    max_depth: int = 100

    def text(self, value: str, found: Found) -> str:
        """Scrub one string."""
        out, blocked, kinds = self.scrub(value)
        if out != value:
            found.changed = True
        found.blocked = found.blocked or blocked
        found.kinds |= kinds
        return out

    def node(self, value: Any, found: Found, depth: int = 0) -> Any:
        """Scrub ``value``; return it (edited in place) or its scrubbed replacement."""
        if isinstance(value, str):
            return self.text(value, found)
        if depth >= self.max_depth and isinstance(value, dict | list | tuple | set | frozenset):
            found.changed = True
            found.kinds.add("UNSCANNED")
            return WITHHELD_DEPTH
        if isinstance(value, dict):
            self._dict(value, found, depth)
            return value
        if isinstance(value, list):
            for i, item in enumerate(value):
                value[i] = self.node(item, found, depth + 1)
            return value
        if isinstance(value, tuple):
            items = [self.node(item, found, depth + 1) for item in value]
            if hasattr(value, "_fields"):  # a named tuple keeps its type
                return type(value)(*items)
            return tuple(items)
        if isinstance(value, set | frozenset):
            return type(value)(self.node(item, found, depth + 1) for item in value)
        if isinstance(value, types.Part):
            return self.part(value, found, depth)
        if isinstance(value, types.Blob):
            return self.blob(value, found)
        if isinstance(value, bytes | bytearray):
            try:
                decoded = bytes(value).decode("utf-8")
            except UnicodeDecodeError:
                return value
            out = self.text(decoded, found)
            return value if out == decoded else out.encode("utf-8", "surrogatepass")
        return value

    def _dict(self, node: dict[Any, Any], found: Found, depth: int) -> None:
        rebuilt: dict[Any, Any] = {}
        replace = False
        for key, value in list(node.items()):
            new_key = self.text(key, found) if isinstance(key, str) else key
            if new_key in rebuilt:  # two keys redacted alike: keep both values
                n = 2
                while f"{new_key}#{n}" in rebuilt:
                    n += 1
                new_key = f"{new_key}#{n}"
            new_value = self.node(value, found, depth + 1)
            replace = replace or new_key != key or new_value is not value
            rebuilt[new_key] = new_value
        if replace:
            node.clear()
            node.update(rebuilt)

    def part(self, part: types.Part, found: Found, depth: int = 0) -> types.Part | str:
        """Scrub a Part in place: text, call arguments, function responses and media."""
        if part.text:
            part.text = self.text(part.text, found)
        if part.function_call is not None and part.function_call.args:
            self._dict(part.function_call.args, found, depth + 1)
        if part.function_response is not None and part.function_response.response:
            self._dict(part.function_response.response, found, depth + 1)
        if part.inline_data is not None:
            blob = self.blob(part.inline_data, found)
            if isinstance(blob, str):
                return blob
        return part

    def blob(self, blob: types.Blob, found: Found) -> types.Blob | str:
        """Scrub text media in place; pass or withhold opaque media."""
        if blob.data is None:
            return blob
        if is_text_mime(blob.mime_type):
            try:
                decoded = blob.data.decode("utf-8")
            except UnicodeDecodeError:
                decoded = None
            if decoded is not None:
                out = self.text(decoded, found)
                if out != decoded:
                    blob.data = out.encode("utf-8", "surrogatepass")
                return blob
        if self.media == "withhold":
            found.changed = True
            found.kinds.add("MEDIA")
            return WITHHELD_MEDIA
        return blob
