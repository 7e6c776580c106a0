"""``InjectionGuard``: refuse a model call whose newest user turn or tool output is an attack."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from .._common import Counts, record_denial, refusal, report
from . import memory
from .detectors import (
    Detector,
    Finding,
    RulesDetector,
    UserDetector,
    as_detector,
)

logger = logging.getLogger("adk_lattice.policy")

#: Around each tool output, this much of its head and tail joins the others in the combined
#: scan (each output is also scanned alone, in full): enough for any phrase to straddle.
_SEAM: Final = 2_048
_TOOL_NAME: Final = re.compile(r"^[A-Za-z0-9_.:+-]{1,200}$")


class InjectionGuard:
    """``before_model``: inspect the newest user turn and the tool output since, refuse attacks.

    What the model is about to read is checked: the newest user turn, each function response
    added since (every string in it, keys included, never its JSON text), and all of those
    responses joined, so an override split across parallel or successive tool results is
    seen whole. Whatever was refused or withheld is remembered for the session (digests in
    session state) and replaced by ``[withheld by policy]`` in every later request.

    Detectors run in order, the first finding decides; by default the built-in
    :class:`~adk_lattice.policy.RulesDetector`. Add a classifier or a judge model::

        InjectionGuard(detectors=[ClassifierDetector("path/to/model")])

    A refusal is a model-role answer; the reason is in its ``custom_metadata["adk_lattice"]``
    and in ``temp:adk_lattice.denial`` state. Telemetry and audit see ``deny`` (refused) or
    ``rewrite`` (withheld) with the finding's family code as the reason, never text.

    Args:
        detectors: detectors (objects with ``name`` and ``detect(text, source)``) or plain
            functions ``(text, source) -> verdict | None``, sync or async.
        builtin: run the built-in :class:`RulesDetector` first, unless ``detectors`` already
            holds one (default True).
        scan_tools: also inspect function responses added since the newest user turn.
        on_tool: ``refuse`` the model call, or ``withhold`` the poisoned tool output
            (replaced by a notice) and let the model go on.
        message: what the user reads on a refusal.
        max_chars: longest text scanned whole (user turn, one tool output, or the joined
            tool outputs).
        oversize: beyond ``max_chars``: ``refuse`` (fail closed, family ``oversize``), or
            ``scan_ends`` (scan the first and last ``max_chars / 2`` characters only).
        remember: keep refused and withheld content out of later requests (default True).
        max_remembered: how many digests a session keeps (oldest forgotten first).
        name: the handler name.

    Raises:
        ValueError: on an unknown ``on_tool`` or ``oversize``, or a non-positive size.
        TypeError: on a detector that is neither a detector nor callable.

    Attributes:
        counts: ``checked``, ``refused``, ``withheld``, ``stripped``, ``family:<name>``.
    """

    def __init__(
        self,
        *,
        detectors: Sequence[Detector | UserDetector] = (),
        builtin: bool = True,
        scan_tools: bool = True,
        on_tool: Literal["refuse", "withhold"] = "refuse",
        message: str = (
            "I can't act on that request: it looks like an attempt to change my instructions."
        ),
        max_chars: int = 100_000,
        oversize: Literal["refuse", "scan_ends"] = "refuse",
        remember: bool = True,
        max_remembered: int = 256,
        name: str = "InjectionGuard",
    ) -> None:
        if on_tool not in ("refuse", "withhold"):
            raise ValueError("on_tool must be 'refuse' or 'withhold'")
        if oversize not in ("refuse", "scan_ends"):
            raise ValueError("oversize must be 'refuse' or 'scan_ends'")
        if max_chars < 2 or max_remembered < 1:
            raise ValueError("max_chars must be >= 2 and max_remembered >= 1")
        chain = [as_detector(d) for d in detectors]
        rules = next((d for d in chain if isinstance(d, RulesDetector)), None)
        if builtin and rules is None:
            rules = RulesDetector()
            chain.insert(0, rules)
        self.detectors: tuple[Detector, ...] = tuple(chain)
        self._rules = rules
        self.scan_tools = scan_tools
        self.on_tool = on_tool
        self.message = message
        self.max_chars = max_chars
        self.oversize = oversize
        self.remember = remember
        self.max_remembered = max_remembered
        self.name = name
        self._counts = Counts()

    @property
    def counts(self) -> Mapping[str, int]:
        """Counters: ``checked``, ``refused``, ``withheld``, ``stripped``, ``family:<name>``."""
        return self._counts.snapshot()

    def detect(self, text: str, source: str = "user") -> Finding | None:
        """The built-in rules' verdict on one text (None without them), for offline use."""
        return self._rules.scan(text, source) if self._rules is not None else None

    async def check(self, text: str, source: str = "user") -> Finding | None:
        """Every detector's verdict on one text, with the size cap applied; the first wins.

        Args:
            text: the text as the model would read it.
            source: ``user`` or ``tool:<name>``.

        Returns:
            The first :class:`Finding`, or None when every detector passes the text.
        """
        return await self._check(text, source, too_big=False)

    async def _check(
        self, text: str, source: str, *, too_big: bool, size: int | None = None
    ) -> Finding | None:
        """``size``: how long the content is, when ``text`` reads some of it twice."""
        if not too_big and not text.strip():
            return None  # nothing to read: spare the classifier and the judge a call
        if too_big or (len(text) if size is None else size) > self.max_chars:
            if self.oversize == "refuse":
                return Finding("oversize", ("max_chars",), source)
            half = self.max_chars // 2
            text = text[:half] + "\n" + text[-half:]
        for d in self.detectors:
            found = await d.detect(text, source)
            if found is not None:
                return found
        return None

    async def before_model(self, *, callback_context: Any, llm_request: Any) -> LlmResponse | None:
        """Refuse (or withhold a poisoned tool output) when the request carries an attack."""
        contents: list[types.Content] = list(llm_request.contents or [])
        self._counts.bump("checked")
        newest = _newest_user_turn(contents)
        state = getattr(callback_context, "state", None)
        if newest is not None:
            parts = contents[newest].parts or []
            text = "\n".join(memory.texts_of(parts))
            found = await self.check(text, "user") if text else None
            if found is not None:
                self._remember(state, [memory.text_digest(t) for t in memory.texts_of(parts)])
                return self._refuse(callback_context, found)
        if self.scan_tools:
            start = 0 if newest is None else newest + 1
            refused = await self._scan_tools(callback_context, contents, start)
            if refused is not None:
                return refused
        if self.remember and state is not None:
            stripped = memory.strip(contents, memory.known(state), self.name)
            if stripped:
                self._counts.bump(*["stripped"] * stripped)
                report(callback_context, "rewrite", self.name, "withheld_earlier")
        if llm_request.contents is not None:
            llm_request.contents[:] = contents
        return None

    async def _scan_tools(
        self, ctx: Any, contents: list[types.Content], start: int
    ) -> LlmResponse | None:
        """Check each function response since ``start`` alone, then all of them joined."""
        window: list[tuple[int, int, types.FunctionResponse, str, str, bool]] = []
        for i in range(start, len(contents)):
            for j, part in enumerate(contents[i].parts or []):
                fr = part.function_response
                if fr is not None:
                    window.append((i, j, fr, *memory.scan_text(fr.response)))
        codes: list[str] = []
        live = []
        state = getattr(ctx, "state", None)
        for i, j, fr, text, values, too_big in window:
            # More nodes than can be walked counts as longer than max_chars.
            found = await self._check(
                text, _tool_source(fr.name), too_big=too_big, size=_content_size(text, values)
            )
            if found is None:
                live.append((i, j, fr, values))
                continue
            if self.on_tool == "refuse":
                self._remember(state, _digests(fr))
                return self._refuse(ctx, found)
            self._withhold(ctx, contents, [(i, j, fr)], found)
            codes.append(found.code)
        if len(live) > 1:
            joined = "\n".join(_ends(text) for *_, text in live)
            names = "+".join(sorted({fr.name or "" for _, _, fr, _ in live}))
            found = await self.check(joined, _tool_source(names))
            if found is not None:
                if self.on_tool == "refuse":
                    self._remember(state, [d for w in live for d in _digests(w[2])])
                    return self._refuse(ctx, found)
                self._withhold(ctx, contents, [w[:3] for w in live], found)
                codes.append(found.code)
        if codes:
            report(ctx, "rewrite", self.name, ",".join(dict.fromkeys(codes)))
        return None

    def _remember(self, state: Any, digests: list[str]) -> None:
        if self.remember and state is not None and digests:
            memory.remember(state, digests, self.max_remembered)

    def _refuse(self, ctx: Any, found: Finding) -> LlmResponse:
        self._counts.bump("refused", f"family:{found.code}")
        detail = {"family": found.code, "rules": list(found.rules), "source": found.source}
        logger.info("adk_lattice: %s refused a model call: %s", self.name, detail)
        record_denial(ctx, self.name, "prompt_injection", **detail)
        report(ctx, "deny", self.name, found.code)
        return refusal(self.name, "prompt_injection", self.message, **detail)

    def _withhold(
        self,
        ctx: Any,
        contents: list[types.Content],
        where: Sequence[tuple[int, int, types.FunctionResponse]],
        found: Finding,
    ) -> None:
        self._counts.bump(*["withheld"] * len(where), f"family:{found.code}")
        detail = {"family": found.code, "rules": list(found.rules), "source": found.source}
        record_denial(ctx, self.name, "prompt_injection_withheld", **detail)
        self._remember(getattr(ctx, "state", None), [d for w in where for d in _digests(w[2])])
        for i, j, fr in where:
            parts = list(contents[i].parts or [])
            parts[j] = types.Part(function_response=memory.withheld(fr, self.name, found.code))
            contents[i] = types.Content(role=contents[i].role, parts=parts)


def _digests(fr: types.FunctionResponse) -> list[str]:
    """What is remembered of a function response: itself, and as ADK relays it."""
    return [memory.response_digest(fr), memory.relay_digest(fr)]


def _content_size(text: str, values: str) -> int:
    """How many characters a function response's strings hold: its scan text lists every
    string and then the values again (see ``memory.scan_text``), so a result is measured
    once against ``max_chars``, not twice."""
    return len(text) if text == values else len(text) - len(values) - 2


def _tool_source(name: str | None) -> str:
    """``tool:<name>`` when the name is a plain identifier (it goes into logs and audit)."""
    return f"tool:{name}" if name and _TOOL_NAME.match(name) else "tool:unnamed"


def _ends(text: str) -> str:
    """``text``, or its head and tail when long: enough for a phrase to straddle a seam."""
    if len(text) <= 2 * _SEAM:
        return text
    return text[:_SEAM] + "\n" + text[-_SEAM:]


def _newest_user_turn(contents: Sequence[types.Content]) -> int | None:
    """Index of the newest user content with text (function responses are not user turns)."""
    for i in range(len(contents) - 1, -1, -1):
        c = contents[i]
        if c.role == "user" and any(p.text and not p.thought for p in c.parts or []):
            return i
    return None
