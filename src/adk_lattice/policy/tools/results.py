"""``CapToolResult``: keep tool results small enough for the model, and say what was cut."""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Mapping
from typing import Any

from google.genai import types

from ..._records import current_call, tool_label
from .._common import Counts, report

logger = logging.getLogger("adk_lattice.policy")


def _size(value: Any) -> int:
    # surrogatepass: a lone surrogate in a tool's text is measured, not a UnicodeEncodeError.
    return len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))


class CapToolResult:
    """``after_tool``: cap lists, strings and total size, strip fields, offload big payloads.

    Every cut is announced in the result the model reads, so it can say that it saw part of
    the data: ``{"truncated": true, "total_available": N, "returned": M, ...}``; with several
    lists cut, ``truncations`` lists each one by path. Denials from ``before_tool`` (and
    results of tools outside ``tools``) pass untouched::

        CapToolResult(max_items=20, max_chars=2_000, strip={"password_hash"}, offload_over=50_000)

    Args:
        max_items: longest list kept (the first items).
        max_chars: longest string kept, in characters.
        max_bytes: largest result, as UTF-8 JSON; lists are halved until it fits.
        strip: field names removed wherever they appear.
        offload_over: when the original result is larger than this many bytes and the run
            has an artifact service, it is saved as an artifact and the model gets a
            reference (plus the capped preview).
        name: the handler name.

    Attributes:
        counts: ``capped``, ``stripped``, ``offloaded``, ``skipped_denial``.

    A changed result is noted for telemetry and audit as ``rewrite`` with the codes of what
    was done: ``truncated``, ``stripped``, ``offloaded`` (joined by commas).
    """

    def __init__(
        self,
        *,
        max_items: int | None = 50,
        max_chars: int | None = 4_000,
        max_bytes: int | None = 64_000,
        strip: Collection[str] = (),
        offload_over: int | None = None,
        name: str = "CapToolResult",
    ) -> None:
        for label, v in (("max_items", max_items), ("max_chars", max_chars)):
            if v is not None and v < 0:
                raise ValueError(f"{label} must be >= 0")
        if max_bytes is not None and max_bytes < 256:
            raise ValueError("max_bytes must be at least 256")
        self.max_items = max_items
        self.max_chars = max_chars
        self.max_bytes = max_bytes
        self.strip = frozenset(strip)
        self.offload_over = offload_over
        self.name = name
        self._counts = Counts()

    @property
    def counts(self) -> Mapping[str, int]:
        """Counters: ``capped``, ``stripped``, ``offloaded``, ``skipped_denial``."""
        return self._counts.snapshot()

    def shape(self, result: Any, max_items: int | None = None) -> tuple[Any, list[dict[str, Any]]]:
        """A capped copy of ``result`` and the list of cuts made (path, total, returned)."""
        cuts: list[dict[str, Any]] = []
        limit = self.max_items if max_items is None else max_items

        def walk(node: Any, path: str) -> Any:
            if isinstance(node, Mapping):
                out = {}
                for k, v in node.items():
                    if k in self.strip:
                        cuts.append({"path": f"{path}.{k}".lstrip("."), "stripped": True})
                        continue
                    out[k] = walk(v, f"{path}.{k}".lstrip("."))
                return out
            if isinstance(node, list | tuple):
                items = list(node)
                if limit is not None and len(items) > limit:
                    cuts.append({"path": path, "total_available": len(items), "returned": limit})
                    items = items[:limit]
                return [walk(v, f"{path}[{i}]") for i, v in enumerate(items)]
            if isinstance(node, str) and self.max_chars is not None and len(node) > self.max_chars:
                cuts.append(
                    {"path": path, "total_chars": len(node), "returned_chars": self.max_chars}
                )
                return node[: self.max_chars] + "…"
            return node

        return walk(result, ""), cuts

    async def after_tool(
        self, *, tool: Any, tool_args: Any, tool_context: Any, result: Any
    ) -> dict[str, Any] | None:
        """Return a capped, announced copy of the result, or None when nothing was cut."""
        call = current_call()
        if (call is not None and call.denied) or (
            isinstance(result, dict) and result.get("status") in ("denied", "pending_approval")
        ):
            self._counts.bump("skipped_denial")
            return None
        if not isinstance(result, dict | list):
            return None
        # Serialised only to decide on offloading: without ``offload_over`` a large result
        # would be encoded once per call for nothing.
        original = _size(result) if self.offload_over is not None else 0
        shaped, cuts = self.shape(result)
        limit = self.max_items if self.max_items is not None else 1 << 30
        while self.max_bytes is not None and _size(shaped) > self.max_bytes and limit > 0:
            limit //= 2  # halve every list until the whole result fits
            shaped, cuts = self.shape(result, max_items=limit)
        reference = None
        if self.offload_over is not None and original > self.offload_over:
            reference = await self._offload(tool, result, tool_context)
        if not cuts and reference is None:
            return None
        body = shaped if isinstance(shaped, dict) else {"result": shaped}
        stripped = sorted({c["path"] for c in cuts if c.get("stripped")})
        cuts = [c for c in cuts if not c.get("stripped")]
        lists = [c for c in cuts if "total_available" in c]
        if cuts:
            self._counts.bump("capped")
            body["truncated"] = True
        if lists:
            body["total_available"] = lists[0]["total_available"]
            body["returned"] = lists[0]["returned"]
        if len(cuts) > 1 or (cuts and not lists):
            body["truncations"] = cuts[:50]
        if stripped:
            self._counts.bump("stripped")
            body["stripped_fields"] = stripped[:50]
        if reference is not None:
            body["artifact"] = reference
        done = [
            c
            for c, on in (("truncated", cuts), ("stripped", stripped), ("offloaded", reference))
            if on
        ]
        report(tool_context, "rewrite", self.name, ",".join(done))
        return body

    async def _offload(self, tool: Any, result: Any, ctx: Any) -> dict[str, Any] | None:
        name = tool_label(tool)  # a made-up tool name stays out of the file name and logs
        call_id = getattr(ctx, "function_call_id", None) or "call"
        filename = f"{name}-{call_id}.json"
        # backslashreplace: a lone surrogate becomes its JSON escape, the file stays UTF-8.
        data = json.dumps(result, ensure_ascii=False, default=str).encode(
            "utf-8", "backslashreplace"
        )
        part = types.Part.from_bytes(data=data, mime_type="application/json")
        try:
            version = await ctx.save_artifact(filename, part)
        except ValueError:  # no artifact service configured: keep the capped preview only
            logger.warning(
                "adk_lattice: %s cannot offload %s: no artifact service", self.name, name
            )
            return None
        self._counts.bump("offloaded")
        return {"filename": filename, "version": version, "bytes": len(data)}
