"""What a ResponseCache hit replays: media answers byte for byte, and an age to the millisecond."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from adk_lattice.cache import MemoryStore, ResponseCache
from adk_lattice.testing import FakeModel, ScriptedResponse
from tests.cache.rig import Rig

#: Not valid UTF-8, so it survives only as bytes (base64 in JSON), never as text.
PNG = b"\x89PNG\r\n\x1a\n\x00\xff\xfe-chart"


class ChartModel(FakeModel):
    """A model whose final answer carries an inline PNG after its scripted text."""

    async def generate_content_async(  # type: ignore[override]
        self, llm_request: Any, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        async for response in super().generate_content_async(llm_request, stream):
            if not response.partial and response.content and response.content.parts:
                image = types.Part(inline_data=types.Blob(mime_type="image/png", data=PNG))
                response.content.parts.append(image)
            yield response


def _image_of(events: list[Any]) -> bytes | None:
    for event in reversed(events):
        for part in (event.content.parts if event.content else None) or ():
            if part.inline_data is not None:
                data: bytes | None = part.inline_data.data
                return data
    return None


async def test_an_answer_with_an_inline_image_is_replayed_with_the_same_bytes() -> None:
    """A model answer holding an image is stored, and a hit gives back the same image bytes."""
    model = ChartModel(script=[ScriptedResponse.text("Here is the chart.")])
    cache = ResponseCache(MemoryStore())
    rig = Rig([], cache=[cache], model=model)
    first = await rig.ask("Chart my spending.")
    second = await rig.ask("Chart my spending.")
    await rig.close()
    assert model.calls == 1
    assert cache.stats["hits"] == 1
    assert _image_of(first) == _image_of(second) == PNG


async def test_a_hit_reports_a_fractional_age_unrounded_to_whole_seconds() -> None:
    """An entry stored 2.5 seconds ago is reported as 2.5 (to the millisecond), not 2 or 3."""
    store = MemoryStore()
    rig = Rig([ScriptedResponse.text("Paris.")], cache=[ResponseCache(store)])
    await rig.ask("Capital of France?")
    [key] = list(store._entries)
    entry = json.loads(await store.get(key) or b"")
    entry["stored_at"] = time.time() - 2.5
    await store.set(key, json.dumps(entry).encode())
    events = await rig.ask("Capital of France?")
    await rig.close()
    age = events[-1].custom_metadata["adk_lattice"]["cache"]["age"]  # type: ignore[index]
    assert 2.5 <= age < 2.75
