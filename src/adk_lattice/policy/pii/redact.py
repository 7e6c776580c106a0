"""``RedactPII``: scrub personal data and secrets wherever the lattice sees them.

Model output (partial chunks, thoughts and function-call arguments too), tool results of any
shape, state deltas, and with ``inputs=True`` the user's message as persisted and as the
model reads it. Streaming-safe: see ``_stream.py`` for what a partial chunk may release.
"""

from __future__ import annotations

import copy
import re
import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from google.adk.models.llm_response import LlmResponse
from google.genai import types

from .._common import Keyed, kinds_code, refusal, report
from ._scrubber import Scrubber, Strategy
from ._stream import Stream
from ._walk import Found, Media, Walker
from .detectors import Finder
from .ner import Engine

#: The smallest ``hold``: an IBAN written in groups (the longest value with spaces) is 42.
MIN_HOLD = 48


def _call_id() -> str:
    """A client call id in ADK's own form, which ADK strips before the model sees it."""
    try:
        from google.adk.flows.llm_flows.functions import generate_client_function_call_id
    except ImportError:  # pragma: no cover - an ADK without the helper
        return f"adk-{uuid.uuid4()}"
    return str(generate_client_function_call_id())


class RedactPII(Scrubber):
    """``after_model`` (partial chunks too), ``after_tool``, ``on_event`` and with
    ``inputs=True`` ``on_user_message`` / ``before_model``; the lattice gives the tools
    named in ``restore_args`` their arguments as the model wrote them
    (:meth:`restore_tool_args`) before any ``before_tool`` handler runs.

    Finds emails, phone numbers, Luhn-valid payment cards, US SSNs, IBANs (mod-97), IP
    addresses, API keys, JWTs and private-key blocks, plus custom patterns, also when
    obfuscated (zero-width characters, line breaks or markdown inside a value,
    ``(at)`` / ``(dot)``, percent-escapes, base64), and replaces each value by its
    strategy: ``redact`` (``[REDACTED:EMAIL]``), ``mask`` (``************1111``), ``hash``
    (``[EMAIL:3f2a9c0d1b7e]``, a keyed SHA-256 so equal values stay joinable) or ``block``
    (the whole answer or result is withheld)::

        RedactPII(strategies={"CARD": "mask"}, custom={"ORDER": r"ORD-\\d{8}"}, inputs=True)

    Args:
        kinds: which built-in families to use (``email``, ``phone``, ``card``, ``ssn``,
            ``iban``, ``ip``, ``secret``; default all).
        custom: extra detectors by kind: a regex string or compiled pattern (it must be
            linear-time: it runs on model- and user-made text), or a callable returning
            ``(start, end)`` spans.
        strategy: the default strategy.
        strategies: a strategy per kind (``EMAIL``, ``PHONE``, ``CARD``, ``SSN``, ``IBAN``,
            ``IP``, ``SECRET`` or a custom kind).
        salt: the key for the ``hash`` strategy.
        block_message: what the user reads when ``block`` withholds an answer.
        hold: how far back a streamed chunk's tail is held (at least 48, the longest
            built-in value written with spaces; raise it for longer custom values). With
            only the built-in detectors, only from where a value may start (a digit,
            ``@``, ``%``, ``+``, a non-ASCII character, a secret's name before ``:`` or
            ``=``, a bracketed ``at`` or ``dot`` and the word before it) and otherwise the
            last word; with custom detectors or an engine, always.
        max_hold: the most a stream holds for one open token or key block; one growing
            past it is replaced by ``[REDACTED:SECRET]`` (so are tokens that long in the
            final response of a stream).
        max_chars: the longest text scanned; what lies past it (from the start of the
            token it cuts) is withheld, never passed on unscanned.
        inputs: also redact the user's message: the persisted event and what the model
            reads (``block`` kinds refuse the turn).
        restore_args: which tools get the arguments as the model wrote them: True (the
            default) for every tool, a list of tool names, or False for none (those tools
            get the redacted form). The lattice puts the values back before any
            ``before_tool`` handler runs, so every policy checks what the tool receives,
            whatever the order. The stored event and the model always see them redacted;
            a placeholder the model copied (``[REDACTED:EMAIL]``) has no original and
            stays as it is.
        state: scrub the state deltas of every event (and the live session state).
        keep_state: state keys left as written (values the app needs, such as a contact
            address it stored on purpose).
        media: ``pass`` or ``withhold`` media the detectors cannot read (images, audio,
            PDF); text media (``text/*``, JSON, XML, YAML, CSV) is always scrubbed.
        phone_regions: regions whose national phone formats are read (``["DE", "FR"]``;
            default ``["US"]``); ``+CC`` numbers of every region are found whatever the
            regions. Needs the ``pii`` extra (libphonenumber); without it the built-in
            phone pattern is used and setting this raises.
        engine: a named-entity engine (``analyze(text) -> [(start, end, kind)]``, such as
            :class:`~adk_lattice.policy.pii.ner.PresidioEngine`) whose spans are redacted as
            their kinds (``PERSON``, ``LOCATION``, ``ORGANIZATION``) with the rest.
        name: the handler name.

    Raises:
        ValueError: unknown kinds or strategies, or negative or inconsistent bounds.
        TypeError: a custom detector that is neither a regex nor a callable.

    Attributes:
        counts: ``redacted:<KIND>`` per value, ``withheld:<what>``, ``blocked``.
    """

    partial = True

    def __init__(
        self,
        *,
        kinds: Iterable[str] | None = None,
        custom: Mapping[str, str | re.Pattern[str] | Finder] | None = None,
        strategy: Strategy = "redact",
        strategies: Mapping[str, Strategy] | None = None,
        salt: str = "",
        block_message: str = "I can't share that: the answer contained sensitive data.",
        hold: int = 96,
        max_hold: int = 8192,
        max_chars: int = 256_000,
        inputs: bool = False,
        restore_args: bool | Collection[str] = True,
        state: bool = True,
        keep_state: Collection[str] = (),
        media: Media = "pass",
        phone_regions: Sequence[str] | None = None,
        engine: Engine | None = None,
        name: str = "RedactPII",
    ) -> None:
        super().__init__(
            phone_regions=phone_regions,
            engine=engine,
            kinds=kinds,
            custom=custom,
            strategy=strategy,
            strategies=strategies,
            salt=salt,
            max_chars=max_chars,
            max_hold=max_hold,
            name=name,
        )
        if hold < MIN_HOLD:
            raise ValueError(
                f"hold must be at least {MIN_HOLD}: a value written with spaces (an IBAN "
                "in groups is 42 characters) would stream out in part; raise it for longer "
                "custom values"
            )
        if max_hold <= hold:
            raise ValueError(f"max_hold ({max_hold}) must be larger than hold ({hold})")
        if media not in ("pass", "withhold"):
            raise ValueError(f"unknown media mode {media!r}; expected 'pass' or 'withhold'")
        self.block_message = block_message
        self.hold, self.max_hold = hold, max_hold
        self.inputs = inputs
        if not isinstance(restore_args, bool) and (
            isinstance(restore_args, str)
            or not isinstance(restore_args, Collection)
            or not all(isinstance(t, str) for t in restore_args)
        ):
            raise TypeError(
                "RedactPII restore_args takes True, False or a list of tool names, "
                f"not {restore_args!r}"
            )
        self.restore_args: bool | frozenset[str] = (
            restore_args if isinstance(restore_args, bool) else frozenset(restore_args)
        )
        self.state, self.keep_state = state, frozenset(keep_state)
        self._walker = Walker(self._scrub, media)
        self._streams: Keyed[tuple[Stream, Stream]] = Keyed()  # (text, thoughts)
        #: (session id, call id) -> the call's arguments as the model wrote them.
        self._originals: Keyed[dict[str, Any]] = Keyed()
        self._refused: Keyed[str] = Keyed()

    def _adk_lattice_scope_problem(self, *, tools: Any, agents: Any) -> str | None:
        """Scoped to tools it would skip every model answer: PII the model writes goes out."""
        if tools is None:
            return None
        return (
            "RedactPII scoped with tools= runs only on those tools' calls, so it skips every "
            "model answer, user message and event, and PII the model writes goes out "
            "unredacted: remove tools= (it then redacts every tool's arguments and results "
            "and all model text); to let a tool get the original values of the arguments "
            "the model wrote, name it in restore_args=[...]"
        )

    def declared_names(self) -> dict[str, frozenset[str]]:
        """The ``restore_args`` tools (checked against the app at its first run)."""
        tools = () if isinstance(self.restore_args, bool) else self.restore_args
        return dict.fromkeys(tools, frozenset())

    @property
    def open_streams(self) -> int:
        """Streams with a held-back tail right now (0 once every stream finished)."""
        return len(self._streams)

    # -- model output ----------------------------------------------------------------------------

    def after_model(self, *, callback_context: Any, llm_response: LlmResponse) -> None:
        """Redact a partial chunk (holding back a tail) or the final response, in place."""
        key = (callback_context.invocation_id, callback_context.agent_name)
        content = llm_response.content
        found = Found()
        if llm_response.partial is True:
            if content is not None and content.parts:
                said, thought = self._streams.setdefault(key, _pair)
                new_text = self._feed(said, _text(content, thought=False))
                new_thought = self._feed(thought, _text(content, thought=True))
                if said.blocked or thought.blocked:  # one blocked part stops the stream
                    said.blocked = thought.blocked = True
                    new_text = new_thought = ""
                markers = self._others(content, found, callback_context)
                said.kinds |= found.kinds
                _set_texts(content, new_text, new_thought, markers)
            return None
        ended = self._streams.pop(key) or ()  # the stream ends here: free its state
        streamed = bool(ended)
        kinds = {k for s in ended for k in s.kinds}
        blocked = any(s.blocked for s in ended)
        if content is None or not content.parts:
            self._report(callback_context, kinds, blocked)
            return None
        text, hid, found_kinds = self._scrub(_text(content, thought=False), streamed=streamed)
        blocked, kinds = blocked or hid, kinds | found_kinds
        for part in content.parts:
            if part.thought and part.text:  # thoughts may be shown too: scrub them in full
                part.text, hid, found_kinds = self._scrub(part.text, streamed=streamed)
                blocked, kinds = blocked or hid, kinds | found_kinds
        markers = self._others(content, found, callback_context)
        blocked, kinds = blocked or found.blocked, kinds | found.kinds
        if blocked:
            self._counts.bump("blocked")
            text = self.block_message
            content.parts = [p for p in content.parts if not p.thought and not p.function_call]
        _set_texts(content, text, None, markers)
        self._report(callback_context, kinds, blocked)
        return None

    def _feed(self, stream: Stream, text: str) -> str:
        return stream.feed(
            text,
            lambda buf: self._scan(buf, streamed=True),
            self._apply,
            self.hold,
            self.max_hold,
            lean=self.builtin_only,
        )

    def _others(self, content: types.Content, found: Found, ctx: Any) -> list[types.Part]:
        """Scrub function-call arguments and media in a model response, in place.

        Returns:
            The text parts that now stand for withheld media (``[WITHHELD:MEDIA]``), which
            the answer's own text must not replace.
        """
        parts: list[types.Part] = []
        markers: list[types.Part] = []
        for part in content.parts or ():
            call = part.function_call
            if call is not None and call.args:
                original = copy.deepcopy(call.args)
                before = found.changed
                found.changed = False
                self._walker.node(call.args, found)
                if found.changed and self._restores(call.name):
                    call.id = call.id or _call_id()
                    self._originals.put((_session_id(ctx), call.id), original)
                found.changed = found.changed or before
            if part.inline_data is not None:
                new = self._walker.blob(part.inline_data, found)
                if isinstance(new, str):
                    part = types.Part(text=new)
                    markers.append(part)
            parts.append(part)
        content.parts = parts
        return markers

    def _restores(self, tool: str | None) -> bool:
        if isinstance(self.restore_args, bool):
            return self.restore_args
        return tool in self.restore_args

    def on_model_error(self, *, callback_context: Any, llm_request: Any, error: Any) -> None:
        """Free the stream's held-back tails when the model call fails."""
        self._streams.pop((callback_context.invocation_id, callback_context.agent_name))

    # -- tools, state and input ------------------------------------------------------------------

    def restore_tool_args(self, *, tool: Any, tool_args: Any, tool_context: Any) -> None:
        """Give a tool named in ``restore_args`` the argument values the model wrote.

        ``Lattice`` calls it before the ``before_tool`` chain (not as a hook of the chain),
        so every policy, in any order, checks the values the tool will receive. The
        original is kept until the call ends, and over a person's confirmation: ADK runs a
        confirmed call again, in a later invocation, from the stored (redacted) event.
        """
        original = self._originals.get((_session_id(tool_context), tool_context.function_call_id))
        if original is not None and isinstance(tool_args, dict):
            tool_args.clear()
            tool_args.update(copy.deepcopy(original))

    def _release(self, ctx: Any) -> None:
        """Forget a call's original arguments, unless the call waits for a person."""
        call_id = getattr(ctx, "function_call_id", None)
        if call_id is None:
            return
        actions = getattr(ctx, "actions", None)
        if call_id in (getattr(actions, "requested_tool_confirmations", None) or {}):
            return
        self._originals.pop((_session_id(ctx), call_id))

    def on_tool_error(self, *, tool: Any, tool_args: Any, tool_context: Any, error: Any) -> None:
        """Forget the failed call's original arguments."""
        self._release(tool_context)

    def after_tool(
        self, *, tool: Any, tool_args: Any, tool_context: Any, result: Any
    ) -> dict[str, Any] | None:
        """Redact every string leaf and key of the result (any shape) and the state delta.

        A dict or list result is edited in place; any other result that held a value is
        replaced by ``{"result": <redacted>}``, the shape ADK would give it; with ``block``
        the result is replaced by a legible withheld notice.
        """
        self._release(tool_context)
        found = Found()
        new = self._walker.node(result, found)
        self._scrub_state(getattr(tool_context, "actions", None), tool_context, found)
        self._report(tool_context, found.kinds, found.blocked)
        if found.blocked:
            self._counts.bump("blocked")
            return {
                "status": "withheld",
                "reason": "the result contained sensitive data and was withheld",
                "code": "sensitive_data",
                "policy": self.name,
            }
        if found.changed and not isinstance(result, dict | list):  # not editable in place
            return new if isinstance(new, dict) else {"result": new}
        return None

    def _scrub_state(self, actions: Any, ctx: Any, found: Found) -> None:
        delta = getattr(actions, "state_delta", None)
        if not self.state or not isinstance(delta, dict):
            return
        for key in [k for k in delta if k not in self.keep_state]:
            before = delta[key]
            mine = Found()
            delta[key] = self._walker.node(before, mine)
            if mine.changed:
                found.kinds |= mine.kinds
                live = getattr(getattr(ctx, "session", None), "state", None)
                if isinstance(live, dict) and key in live:  # what later steps read
                    live[key] = delta[key]

    def on_event(self, *, invocation_context: Any, event: Any) -> None:
        """Scrub the state delta an event carries before ADK persists it."""
        found = Found()
        self._scrub_state(getattr(event, "actions", None), invocation_context, found)

    def on_user_message(self, *, invocation_context: Any, user_message: Any) -> Any:
        """With ``inputs=True``: persist the user's message with its values redacted."""
        if not self.inputs or not isinstance(user_message, types.Content):
            return None
        message = user_message.model_copy(deep=True)
        found = Found()
        message.parts = [
            p if isinstance(p, types.Part) else types.Part(text=p)
            for p in (self._walker.part(p, found) for p in message.parts or ())
        ]
        if found.blocked:
            self._refused.put(invocation_context.invocation_id, kinds_code(found.kinds))
        self._report(invocation_context, found.kinds, False)
        return message if found.changed else None

    def before_model(self, *, callback_context: Any, llm_request: Any) -> LlmResponse | None:
        """With ``inputs=True``: redact user text the model reads; refuse ``block`` kinds."""
        if not self.inputs:
            return None
        refused = self._refused.pop(callback_context.invocation_id)
        found = Found()
        for content in llm_request.contents or ():
            if content.role == "user" and content.parts:
                content.parts = [
                    p if isinstance(p, types.Part) else types.Part(text=p)
                    for p in (self._walker.part(p, found) for p in content.parts)
                ]
        if refused is not None or found.blocked:
            self._counts.bump("blocked")
            code = kinds_code(found.kinds) or refused or ""
            report(callback_context, "deny", self.name, code)
            return refusal(self.name, "sensitive_input", self.block_message)
        self._report(callback_context, found.kinds, False)
        return None


def _session_id(ctx: Any) -> str | None:
    """The id of the context's session (a call id is only unique within its session)."""
    session = getattr(ctx, "session", None)
    return getattr(session, "id", None)


def _pair() -> tuple[Stream, Stream]:
    return Stream(), Stream()


def _text(content: types.Content, *, thought: bool) -> str:
    """The concatenated text (or thought) parts of a Content."""
    return "".join(p.text for p in content.parts or () if p.text and bool(p.thought) == thought)


def _set_texts(
    content: types.Content, text: str, thought: str | None, keep: Sequence[types.Part] = ()
) -> None:
    """Replace the text parts by one holding ``text`` (and thoughts by ``thought``); the
    parts in ``keep`` (media withheld as text) stay as they are."""
    out: list[types.Part] = []
    placed = {False: False, True: thought is None}
    kept = {id(p) for p in keep}
    for part in content.parts or []:
        is_thought = bool(part.thought)
        if part.text is None or id(part) in kept or (is_thought and thought is None):
            out.append(part)
        elif not placed[is_thought]:
            out.append(types.Part(text=thought if is_thought else text, thought=is_thought or None))
            placed[is_thought] = True
    if not placed[False] and text:  # e.g. the block message for an answer of calls only
        out.append(types.Part(text=text))
    content.parts = out
