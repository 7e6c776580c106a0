"""``ProvenanceGuard``: no consequential argument comes only from untrusted text.

A detector recognises bad text and trails the next attack; this policy needs none. It labels
every tool output at the source (untrusted unless the app declares the tool trusted), keeps
the taint in session state, and when untrusted content is in a session's context, checks
that each sensitive argument of a consequential call appears in trusted text: the user's own
messages, the system instruction, declared state keys and trusted tools' outputs. An
ungrounded call is denied, or sent to a person.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import re
import secrets
import threading
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Final, Literal

from cachetools import LRUCache
from google.adk.tools.agent_tool import AgentTool

from ..._outcome import Outcome
from ..._records import UNTRUSTED_SOURCES, CallRecord, current_call
from ...state import StateKey
from .._common import Counts, Keyed, ask_person, declared_key, report, tool_denial
from ..tools.guard import ToolRule
from .channels import (
    ARTIFACT,
    CALLBACK,
    CLIENT,
    INSTRUCTION,
    MEMORY,
    appended_sources,
    attachment_sources,
    card_sources,
    client_parts,
    client_responses,
    example_sources,
    labelled_authors,
    message_rewriters,
    node_sources,
    pending_answers,
    planner_sources,
    plugin_sources,
    provided_instruction,
    request_fingerprint,
    request_server_tools,
    request_sources,
    response_sources,
    response_text_sources,
    response_writer_sources,
    result_fingerprint,
    result_writers,
    run_context_sources,
    template_sources,
    tool_sources,
    writes_after_lattice,
    written_instruction,
    written_instructions,
)
from .config import Consequential, check_kinds, free_text, trust_table, typed_leaves
from .dictated import copied_runs, dictated
from .opaque import EDGE, fold, identifiers, letters, opaque_tokens
from .regions import calling_codes
from .reveal import revealed
from .spotlight import spotlight_request
from .taint import (
    CONTROL_TOOLS,
    MAX_TOKENS,
    EventTrust,
    Taint,
    batch_of,
    call_arguments,
    capped,
    capped_pairs,
    instruction_text,
    mark,
    node_inputs,
    read_taint,
    scalars,
    session_hash,
    token_hash,
    tool_responses,
    user_texts,
)
from .values import (
    MAX_CONTENT_CHARS,
    MAX_DESTINATIONS,
    UNREAD,
    Grounding,
    Malformed,
    content_texts,
    destinations,
    is_value,
    ungrounded,
    without_blobs,
)

logger = logging.getLogger("adk_lattice.policy")

_MAX_INSTRUCTION: Final = 100_000
#: The kinds whose trusted tokens are hashed for a caller, structured kinds first: an id
#: table can be long, and the list is bounded.
_HASHED_ORDER: Final = (
    "iban", "wallet", "account", "postal", "email", "phone", "url", "number", "id",
)  # fmt: skip


class ProvenanceGuard:
    """Deny (or send to a person) consequential calls directed by untrusted content.

    It observes every ``after_tool`` outcome and marks the session tainted when an
    untrusted tool's output entered the context (whatever handler rewrote that output);
    ``before_tool`` checks a consequential call only while the session is tainted: every
    sensitive argument value (every element of a list) must appear, normalised, in
    trusted text, and so must every destination (address, URL, IBAN, phone number) written
    in its other string arguments (``Consequential(content=...)``). With no untrusted
    content in context nothing is checked. A denial is
    ``{"status": "denied", "reason": ..., "code": "ungrounded_argument", "policy": ...}``
    (``ungrounded_content`` for a destination in content, ``dictated_content`` for a
    passage copied from untrusted output) naming the arguments, never their values;
    decisions are noted with content-free codes (``deny``/``defer``
    ``ungrounded_argument:<args>``, ``ungrounded_content:<args>``,
    ``dictated_content:<args>``, ``always_confirm``,
    ``rejected_by_approver``), and the call's audit entry lists the untrusted sources::

        ProvenanceGuard(
            consequential={"send_money": Consequential(args={"recipient": "iban"})},
            trusted_tools={"list_contacts": True, "read_inbox": ["messages.*.sender"]},
            trusted_state=[USER_EMAIL],
        )

    Args:
        consequential: a :class:`Consequential` per tool name.
        trusted_tools: tools whose output the app controls, each vouching only for whole
            values: ``True`` (every leaf of the output, as a value of any kind), a kind (the
            whole output, as values of that kind; ``"text"`` trusts it as text, the values
            inside included), a list of dotted field paths (``*`` matches every item; the
            other fields are outside text) or a table of such paths to kinds
            (``{"contacts.*.email": "email"}``). A leaf of a trusted output that is free text
            rather than one value of its kind grounds nothing, and an output trusted whole
            that holds one taints the session. A tool returning a non-dict value is seen by
            ADK as ``{"result": value}``.
        trusted_state: declared state keys (or the names of declared keys) whose values are
            trusted text.
        on_ungrounded: ``deny`` or ``confirm`` (ADK tool confirmation; the run pauses).
        spotlight: wrap untrusted tool output in per-invocation random markers in what the
            model sees, and tell the model text between them is data. Helps a cooperating
            model; it is no guarantee.
        dictated_content: while the session is tainted, also flag a free-text argument of
            a consequential call (the arguments ``Consequential(content=...)`` scans) that
            repeats a run of at least :data:`~.dictated.MIN_WORDS` words of an untrusted
            tool output, in order, after normalisation, unless trusted text holds that
            run: code ``dictated_content:<args>``, denied or sent to a person as
            ``on_ungrounded`` says. Off by default: forwarding or quoting what an
            untrusted source said is then a denial too.
        opaque_identifiers: while the session is tainted, a free-text argument of a
            consequential call that carries an opaque token no trusted text holds is
            flagged as a destination of a scheme the guard has no reader for: code
            ``ungrounded_identifier:<args>``. ``True`` (the default) reads every token no
            word, date, time or amount is (:func:`.opaque.opaque_tokens`: five or more
            digits, letters with digits, a mark joining letters or digits inside it, a
            handle's sigil, Morse code); ``"long"`` reads only long identifiers
            (:func:`.opaque.identifiers`: 26 or more letters and digits with both kinds,
            or 18 or more digits); ``False`` turns it off. Passing on a reference that
            only an untrusted mail holds (a tracking number, a booking code) is flagged
            too; ``Consequential(content=[...])`` narrows the arguments scanned.
        trusted_attachments: a file attached to a user's message (an ``inline_data`` or
            ``file_data`` part) is the app's own, not outside text. Off by default: the user
            attached it, someone else wrote it, so it taints as ``<attachment>``. Either
            way an attachment grounds nothing.
        trusted_instruction: an instruction given as a function (an
            ``InstructionProvider``, often read from a prompt store), a
            ``static_instruction`` (a content loaded for context caching) or the planning
            instruction of a planner that is not ADK's own is the app's own. Off by
            default: its text taints as ``<instruction>`` (a planner's as
            ``<planner>``). Either way it grounds nothing (only instruction strings as
            written do).
        trusted_declarations: the names of tools whose declarations (description,
            parameter descriptions, enum values) the app vouches for though its code did
            not write them (a third party's tool class, a toolset's tool). Any other
            declaration ADK did not build from the app's code taints as ``<tool:name>``.
            A name no agent of the app has refuses every run, naming the nearest real one.
        phone_regions: ISO 3166 alpha-2 codes of the regions the app's users dial from
            (``["GB"]``). A national phone number (``020 7946 0958``) names no country: it
            grounds its international form (``+44 20 7946 0958``) only under the calling
            code of a declared region, and a trusted international number grounds its
            national form only when its code is declared. Without regions, a national
            number grounds only itself (the same digits, trunk zero included) and a trusted
            international number its own national form.
        trusted_callbacks: text another plugin or an agent callback writes into a model
            request is the app's own. Off by default: a plugin listed before the lattice
            that overrides ``before_model_callback`` taints as ``<plugin:name>`` (it may
            have written into the request before the lattice read it), and text written
            into a request after the lattice read it (by a plugin listed after it, or by
            an agent's ``before_model_callback``) taints as ``<callback>`` once the model
            has answered, before any call it asks for runs; a plugin listed after the
            lattice that overrides ``after_model_callback`` taints as ``<plugin:name>``
            once a model's text is in the history, and text added beside a tool's result
            in its event as ``<callback>``.
        name: the handler name.

    Raises:
        ValueError: on a bad table (see the message for the fix) or an unknown region.
        TypeError: on a trusted state entry that is not a ``StateKey``,
            ``trusted_declarations`` that is not a list of tool names, or
            ``phone_regions`` given as one string.

    Attributes:
        counts: ``clean``, ``allowed``, ``denied``, ``pending_approval``, ``approved``,
            ``rejected``, ``tainted`` (outputs that tainted a session), ``denied:<tool>``.
    """

    def __init__(
        self,
        consequential: Mapping[str, Consequential],
        *,
        trusted_tools: Mapping[str, bool | str | Sequence[str] | Mapping[str, str]] | None = None,
        trusted_state: Iterable[StateKey[Any] | str] = (),
        on_ungrounded: str = "deny",
        spotlight: bool = False,
        dictated_content: bool = False,
        opaque_identifiers: bool | Literal["long"] = True,
        trusted_attachments: bool = False,
        trusted_instruction: bool = False,
        trusted_declarations: Iterable[str] = (),
        phone_regions: Iterable[str] = (),
        trusted_callbacks: bool = False,
        name: str = "ProvenanceGuard",
    ) -> None:
        if on_ungrounded not in ("deny", "confirm"):
            raise ValueError(f"on_ungrounded must be 'deny' or 'confirm', not {on_ungrounded!r}")
        if not isinstance(consequential, Mapping):
            raise ValueError("consequential must map tool names to Consequential(...)")
        for tool, spec in consequential.items():
            if not isinstance(tool, str) or not tool:
                raise ValueError(f"consequential: tool names must be strings, got {tool!r}")
            if not isinstance(spec, Consequential):
                raise ValueError(
                    f"consequential[{tool!r}] must be a Consequential, e.g. "
                    f"Consequential(args={{'recipient': 'iban'}})"
                )
        self.consequential = dict(consequential)
        self.trusted = trust_table(trusted_tools or {})
        if isinstance(trusted_state, str | StateKey):
            raise TypeError("trusted_state takes a list of state keys (or their names)")
        self.trusted_state = tuple(
            declared_key(k, None, "ProvenanceGuard trusted_state", declare=False)
            for k in trusted_state
        )
        #: The keys this policy trusts; ``Lattice`` protects them from client writes.
        self.state_keys = self.trusted_state
        self._trusted_names = frozenset(key.name for key in self.trusted_state)
        self.on_ungrounded = on_ungrounded
        self.spotlight = spotlight
        if not isinstance(dictated_content, bool):
            raise TypeError(f"dictated_content must be True or False, not {dictated_content!r}")
        self.dictated_content = dictated_content
        if not isinstance(opaque_identifiers, bool) and opaque_identifiers != "long":
            raise TypeError(
                f"opaque_identifiers must be True, False or 'long', not {opaque_identifiers!r}"
            )
        self.opaque_identifiers = opaque_identifiers
        for option, value in (
            ("trusted_attachments", trusted_attachments),
            ("trusted_instruction", trusted_instruction),
            ("trusted_callbacks", trusted_callbacks),
        ):
            if not isinstance(value, bool):
                raise TypeError(f"{option} must be True or False, not {value!r}")
        self.trusted_attachments = trusted_attachments
        self.trusted_instruction = trusted_instruction
        self.trusted_callbacks = trusted_callbacks
        if isinstance(trusted_declarations, str):
            raise TypeError("trusted_declarations takes a list of tool names")
        self.trusted_declarations = frozenset(trusted_declarations)
        for tool in self.trusted_declarations:
            if not isinstance(tool, str) or not tool:
                raise TypeError(f"trusted_declarations: tool names must be strings, got {tool!r}")
        self.phone_codes = calling_codes(phone_regions)
        self.name = name
        self._counts = Counts()
        self._instructions: Keyed[str] = Keyed()
        self._nonces: Keyed[str] = Keyed()
        self._batches: Keyed[Taint] = Keyed()
        self._server_tools: Keyed[tuple[str, ...]] = Keyed()
        #: The request each model call was sent with, and its fingerprint as the lattice
        #: left it, to find what was written into it afterwards.
        self._requests: Keyed[tuple[Any, int]] = Keyed()
        #: The user's message of each invocation as the lattice read it (its text parts),
        #: kept past the run: a plugin may rewrite a message after the lattice read it.
        self._said: Keyed[tuple[str, ...]] = Keyed()
        #: Each tool result as the lattice read it, by call id, while something may still
        #: change it (an agent's ``after_tool_callback``); the calls whose result changed.
        self._results: Keyed[tuple[str, str]] = Keyed()
        #: ``(leaves,)``: the trusted leaves of the result as the lattice read it.
        self._rewritten: Keyed[tuple[tuple[tuple[str, str | None], ...]]] = Keyed()
        self._events: LRUCache[str, EventTrust] = LRUCache(8192)
        self._client: LRUCache[str, str] = LRUCache(8192)
        self._events_lock = threading.Lock()

    @classmethod
    def from_rules(cls, rules: Mapping[str, ToolRule], **options: Any) -> ProvenanceGuard:
        """Build the guard from a :class:`ToolGuard` table's ``ToolRule(sensitive=...)``.

        Args:
            rules: the ``ToolGuard`` table; rules without ``sensitive`` are skipped.
            options: the other constructor arguments (``trusted_tools``, ...).

        Returns:
            A guard with one :class:`Consequential` per rule that declares arguments.

        Raises:
            ValueError: when no rule declares sensitive arguments, or on a bad kind.
        """
        table = {
            tool: Consequential(args=check_kinds(rule.sensitive, f"ToolRule for {tool!r}"))
            for tool, rule in rules.items()
            if isinstance(rule, ToolRule) and rule.sensitive
        }
        if not table:
            raise ValueError("no ToolRule declares sensitive=..., e.g. {'recipient': 'iban'}")
        return cls(table, **options)

    #: Scoped to some tools or agents it would let the others' calls go unchecked.
    _adk_lattice_unscoped: ClassVar[tuple[str, ...]] = ("tools", "agents")

    @property
    def counts(self) -> Mapping[str, int]:
        """Counters by outcome."""
        return self._counts.snapshot()

    def declared_names(self) -> dict[str, frozenset[str]]:
        """The tools this guard names, each with the arguments it checks (sensitive ones,
        and the content arguments a ``Consequential(content=[...])`` lists).

        The lattice checks them against the app at its first run: a consequential or
        trusted tool no agent has, or an argument its tool does not take, refuses every run.
        """
        names: dict[str, frozenset[str]] = dict.fromkeys(self.trusted, frozenset())
        names.update(dict.fromkeys(self.trusted_declarations, frozenset()))
        names.update(
            (tool, frozenset(spec.args) | frozenset(_listed(spec.content)))
            for tool, spec in self.consequential.items()
        )
        return names

    # -- hooks -----------------------------------------------------------------------------

    def before_model(self, *, callback_context: Any, llm_request: Any) -> None:
        """Label the outside text ADK wrote into the request; keep the written instruction.

        Artifacts (names and content), preloaded memory, state values filled into the
        instruction's ``{var}`` (unless their key is in ``trusted_state``), a long-running
        tool's result a client sent (labelled as that tool's output), the relayed events
        of an agent no hook of this app saw (a custom ``BaseAgent``, a remote A2A agent),
        a file attached to the user's message, an instruction given as a function, a
        transfer target's description read at run time (a remote agent's card) and the
        declarations of tools ADK did not build from the app's code (a toolset's tools, a
        third party's tool class) taint the session here, before the model reads them.
        Spotlights if asked.
        """
        inv = callback_context.invocation_id
        self._label_request(callback_context, llm_request)
        text = written_instruction(callback_context)
        if text is None:  # no agent to read it from: the request's instruction
            text = instruction_text(getattr(llm_request.config, "system_instruction", None))
        self._instructions.put((inv, callback_context.agent_name), text[:_MAX_INSTRUCTION])
        self._server_tools.put(
            (inv, callback_context.agent_name), request_server_tools(llm_request)
        )
        if self.spotlight:
            nonce = self._nonces.setdefault(inv, lambda: secrets.token_hex(8))
            spotlight_request(llm_request, nonce, self._untrusted)

    def observe(self, outcome: Outcome) -> None:
        """Label every tool output that entered the context, whatever the deciders did.

        Labelling is an observation: observers see the final outcome of every
        ``after_tool``, so no handler listed before this one (a ``CapToolResult`` or a
        ``RedactPII`` that rewrote the result) and no order of registration can skip it. A
        model response carrying server-side tool output (grounding or URL-context metadata,
        code-execution parts) taints too: that text never passes ``after_tool``. A failure
        to label taints the session (fail closed).
        """
        if outcome.hook == "before_model":
            self._keep_request(outcome)
            return
        if outcome.hook == "after_model":
            self._label_response(outcome)
            return
        if outcome.hook == "on_user_message":
            self._keep_message(outcome)
            return
        if outcome.hook != "after_tool" or outcome.synthesized:
            return
        tool, ctx = outcome.args.get("tool"), outcome.args.get("tool_context")
        if tool is None or ctx is None:
            return
        result = outcome.value if outcome.value is not None else outcome.args.get("result")
        call_id = getattr(ctx, "function_call_id", None)
        if call_id and not self.trusted_callbacks and result_writers(ctx):
            # Kept until the next model call of this invocation: a digest, and for a
            # trusted tool the result itself, which then grounds in place of the changed one.
            key = (ctx.invocation_id, call_id)
            try:
                form = result_fingerprint(result)
                kept = form if self.trusted.get(getattr(tool, "name", "")) is not None else ""
                self._results.put(key, (_digest(form), kept))
            except Exception:
                self._results.put(key, ("", ""))  # unreadable: any stored form differs
        try:
            self.label(tool=tool, tool_context=ctx, call=outcome.call, result=result)
        except Exception as exc:
            logger.error("adk_lattice: %s could not label %s (%s)", self.name, tool, type(exc))
            mark(ctx.state, ctx.session.id, "<unlabelled>")
            self._counts.bump("tainted")

    def _label_request(self, ctx: Any, request: Any) -> None:
        """Taint the session when ADK wrote outside text into this request (fail closed)."""
        try:
            labelled = labelled_authors(ctx)
            sources = request_sources(request, labelled)
            templates = written_instructions(ctx) or ()
            sources += template_sources(templates, ctx.state, self._trusted_names)
            # A channel that is a tool of ADK's the app declared trusted does not taint.
            channel_tools = {ARTIFACT: "load_artifacts", MEMORY: "preload_memory"}
            sources = [s for s in sources if self._untrusted(channel_tools.get(s, s))]
            events = getattr(ctx.session, "events", None) or ()
            sources += self._client_results(events)
            if not self.trusted_attachments:
                sources += attachment_sources(events)
            if not self.trusted_instruction and provided_instruction(ctx):
                sources.append(INSTRUCTION)
            if not self.trusted_instruction:
                sources += planner_sources(ctx)
            sources += card_sources(ctx, request)
            sources += node_sources(events)
            sources += run_context_sources(ctx)
            sources += appended_sources(events, labelled)
            sources += tool_sources(ctx, request, self._trusted_declaration)
            sources += example_sources(ctx, self._trusted_declaration)
            if not self.trusted_callbacks:
                sources += plugin_sources(ctx)
                sources += self._rewritten_message(ctx, events)
                sources += self._changed_results(ctx, events)
                sources += response_text_sources(events)
                sources += response_writer_sources(ctx, events)
        except Exception as exc:
            logger.error("adk_lattice: %s could not read a request (%s)", self.name, type(exc))
            sources = ["<unlabelled>"]
        known = read_taint(ctx.state, ctx.session.id).sources
        sources = [s for s in dict.fromkeys(sources) if s not in known]
        if not sources:
            return
        for source in sources:
            mark(ctx.state, ctx.session.id, source)
        self._counts.bump("tainted")

    def _keep_message(self, outcome: Outcome) -> None:
        """Remember the user's message as the lattice read it, before a plugin listed after
        it may rewrite it, and the message a handler of the lattice put in its place (ADK
        then stores that one and runs no later plugin's callback)."""
        inv = outcome.args.get("invocation_context")
        invocation_id = getattr(inv, "invocation_id", None)
        if invocation_id is None:
            return
        texts = tuple(
            str(p.text)
            for message in (outcome.args.get("user_message"), outcome.value)
            for p in (getattr(message, "parts", None) or ())
            if getattr(p, "text", None) and not p.thought
        )
        self._said.put(invocation_id, texts)

    def _vouched(self, ctx: Any) -> Callable[[Any, tuple[str, ...]], tuple[str, ...]] | None:
        """When a plugin may rewrite the user's message, what of a user event's text is the
        user's: the message as the lattice read it (nothing, when a plugin listed before
        the lattice may have rewritten it unseen, or the lattice did not read it). None when
        no plugin may rewrite it, or the app vouches for its plugins."""
        if self.trusted_callbacks:
            return None
        before, after = message_rewriters(ctx)
        if not before and not after:
            return None

        def vouched(event: Any, said: tuple[str, ...]) -> tuple[str, ...]:
            if not said or before:
                return ()  # a rewriter before the lattice: nothing of the message is vouched
            return self._said.get(getattr(event, "invocation_id", None)) or ()

        return vouched

    def _rewritten_message(self, ctx: Any, events: Sequence[Any]) -> list[str]:
        """``<plugin:name>`` for the plugins that may have rewritten this invocation's user
        message: every one listed before the lattice that may; one listed after it when
        the stored message holds text the lattice did not read."""
        before, after = message_rewriters(ctx)
        if before:
            return before
        if not after:
            return []
        seen = self._said.get(ctx.invocation_id)
        stored = [text for event in _this_run(ctx, events) for text in user_texts([event])]
        if seen is not None and all(text in seen for text in stored):
            return []
        return after

    def _changed_results(self, ctx: Any, events: Sequence[Any]) -> list[str]:
        """``<callback>`` when a tool's result reached the session other than the lattice
        read it (an agent's ``after_tool_callback`` added to it or replaced it); for a
        trusted tool, only the result as the lattice read it grounds."""
        found: list[str] = []
        if not len(self._results):
            return found  # nothing kept: no writer, or nothing ran since the last model call
        for tool, response, call_id in tool_responses(list(_this_run(ctx, events))):
            kept = self._results.pop((ctx.invocation_id, call_id)) if call_id else None
            if kept is None:
                continue
            digest, form = kept
            try:
                changed = _digest(result_fingerprint(response)) != digest
            except Exception:
                changed = True
            if not changed:
                continue
            trust = self.trusted.get(tool)
            leaves: tuple[tuple[str, str | None], ...] = ()
            if trust is not None and form:
                with contextlib.suppress(ValueError):
                    leaves = tuple(typed_leaves(json.loads(form), trust))
            self._rewritten.put(call_id, (leaves,))
            found.append(CALLBACK)
        return found

    def _client_results(self, events: Sequence[Any]) -> list[str]:
        """The tools whose results a client sent (a long-running tool's) that taint.

        A result answering a long-running call the model made and ADK left pending is
        labelled as that tool's output would be in ``after_tool``: untrusted unless the tool
        is trusted whole and no leaf of the result is free text. Any other function response
        a client sent (a made-up call id, a trusted tool's name it was not asked for)
        taints as ``<client:name>``, whatever the tool's declaration. Remembered by event id
        (a stored event does not change).
        """
        found: list[str] = []
        answers: frozenset[str] | None = None
        for key, name, response in client_responses(events):
            with self._events_lock:
                hit = self._client.get(key) if key else None
            if hit is None:
                if answers is None:
                    answers = pending_answers(events)
                if key not in answers:
                    hit = f"{CLIENT}{name}>"
                else:
                    trust = self.trusted.get(name)
                    vouched = trust is not None and not self._untrusted(name)
                    clean = vouched and trust is not None and not free_text(response, trust)
                    hit = "" if clean else name
                if key:
                    with self._events_lock:
                        self._client[key] = hit
            if hit:
                found.append(hit)
        return found

    def _keep_request(self, outcome: Outcome) -> None:
        """Remember the request as every handler of the lattice left it."""
        ctx, request = outcome.args.get("callback_context"), outcome.args.get("llm_request")
        if self.trusted_callbacks or ctx is None or request is None or outcome.value is not None:
            return  # trusted, or a handler answered in place of the model: no request sent
        if not writes_after_lattice(ctx):
            return  # nothing can write into the request after this: nothing to compare
        try:
            kept = (request, request_fingerprint(request))
        except Exception as exc:  # an unreadable request: read it again as sent
            logger.error("adk_lattice: %s could not read a request (%s)", self.name, type(exc))
            kept = (request, 0)
        self._requests.put((ctx.invocation_id, ctx.agent_name), kept)

    def _label_response(self, outcome: Outcome) -> None:
        """Taint the session when a model response carries server-side tool output, or the
        request it answers was written into after the lattice read it."""
        ctx = outcome.args.get("callback_context")
        if ctx is None:
            return
        responses = (outcome.args.get("llm_response"), outcome.value)
        sources = [s for r in responses if r is not None for s in response_sources(r)]
        sources += self._server_tools.get((ctx.invocation_id, ctx.agent_name)) or ()
        kept = self._requests.pop((ctx.invocation_id, ctx.agent_name))
        if kept is not None:
            try:
                changed = request_fingerprint(kept[0]) != kept[1]
            except Exception:
                changed = True  # fail closed
            if changed:
                sources.append(CALLBACK)
        if not sources:
            return
        for source in dict.fromkeys(sources):
            mark(ctx.state, ctx.session.id, source)
        self._counts.bump("tainted")

    def label(
        self, *, tool: Any, tool_context: Any, call: CallRecord | None = None, result: Any = None
    ) -> None:
        """Mark the session tainted when outside text from a tool enters the context.

        Args:
            tool: the tool whose output entered the context.
            tool_context: its context (the taint is written to its session's state).
            call: the lattice's record of the call (a policy's denial stood in for the
                tool: no outside text entered); by default the call being handled.
            result: the output that entered the context: a tool trusted whole taints when
                a leaf of it is free text rather than a value its declaration vouches for.
        """
        name = getattr(tool, "name", str(tool))
        if not self._untrusted(name):
            trust = self.trusted.get(name)
            if trust is None or not free_text(result, trust):
                return
        call = call if call is not None else current_call()
        if call is not None and (call.denied or call.short_circuit_tier == "policy"):
            return  # a policy's answer stood in for the tool: no outside text entered
        batch = batch_of(tool_context)
        if batch is not None and self._batches.get(batch) is None:
            # Siblings of this call were chosen before its output existed: they are checked
            # against the taint as it was when the model answered.
            self._batches.put(batch, read_taint(tool_context.state, tool_context.session.id))
        mark(tool_context.state, tool_context.session.id, name)
        self._counts.bump("tainted")

    def before_tool(self, *, tool: Any, tool_args: Any, tool_context: Any) -> dict[str, Any] | None:
        """Check a consequential call while untrusted content is in context."""
        name = getattr(tool, "name", str(tool))
        ctx = tool_context
        spec = self.consequential.get(name)
        if spec is None and not isinstance(tool, AgentTool):
            return None
        session_id = ctx.session.id
        batch = batch_of(ctx)
        taint = (self._batches.get(batch) if batch else None) or read_taint(ctx.state, session_id)
        if isinstance(tool, AgentTool):
            # The nested run copies this state: claim an entry, so it can tell a clean
            # caller from a tainted one and its forwarded state cannot pose as ours; when
            # tainted, hand it hashes of what this session trusts.
            tokens = self._token_hashes(ctx, taint) if taint.tainted else None
            mark(ctx.state, session_id, None, tokens)
        if spec is None:
            return None
        if not taint.tainted:
            self._counts.bump("clean")
            return None
        call = current_call()
        if call is not None:
            call.data[UNTRUSTED_SOURCES] = list(taint.sources)
        if spec.always_confirm:
            return self._confirm(ctx, name, spec, [], taint, "always_confirm")
        if not isinstance(tool_args, dict):
            return self._deny(ctx, name, list(spec.args), "arguments must be an object")
        grounding = self._grounding(ctx, taint)
        missing = [
            arg
            for arg, kind in spec.args.items()
            if arg in tool_args and ungrounded(grounding, kind, tool_args[arg])
        ]
        if missing:
            if self.on_ungrounded == "confirm":
                return self._confirm(ctx, name, spec, missing, taint, "ungrounded_argument")
            verb = "does" if len(missing) == 1 else "do"
            reason = (
                f"{_names(missing)} of this {name} call {verb} not appear in anything the user "
                f"or a trusted source provided, and untrusted content is in context; ask the "
                f"user to state {'it' if len(missing) == 1 else 'them'}"
            )
            return self._deny(ctx, name, missing, reason)
        content = [
            a for a in spec.scanned(tool_args) if _carries_ungrounded(grounding, tool_args[a])
        ]
        if not content:
            ids = [
                a
                for a in spec.scanned(tool_args)
                if self.opaque_identifiers
                if _carries_unknown_identifier(grounding, tool_args[a], self.opaque_identifiers)
            ]
            if ids:
                if self.on_ungrounded == "confirm":
                    return self._confirm(ctx, name, spec, ids, taint, "ungrounded_identifier")
                reason = (
                    f"{_names(ids)} of this {name} call carry an identifier (an address, "
                    f"account or key of some payment or messaging scheme) that does not "
                    f"appear in anything the user or a trusted source provided, and "
                    f"untrusted content is in context; leave it out, or ask the user to "
                    f"state it"
                )
                return self._deny(ctx, name, ids, reason, "ungrounded_identifier")
            copied = self._dictated(ctx, taint, spec.scanned(tool_args), tool_args)
            if not copied:
                self._counts.bump("allowed")
                return None
            if self.on_ungrounded == "confirm":
                return self._confirm(ctx, name, spec, copied, taint, "dictated_content")
            reason = (
                f"{_names(copied)} of this {name} call repeat a passage of untrusted content "
                f"word for word; write it in your own words, or ask the user to state it"
            )
            return self._deny(ctx, name, copied, reason, "dictated_content")
        if self.on_ungrounded == "confirm":
            return self._confirm(ctx, name, spec, content, taint, "ungrounded_content")
        reason = (
            f"{_names(content)} of this {name} call carry a link, email address, IBAN or phone "
            f"number that does not appear in anything the user or a trusted source provided, "
            f"and untrusted content is in context; leave it out, or ask the user to state it"
        )
        return self._deny(ctx, name, content, reason, "ungrounded_content")

    def after_run(self, *, invocation_context: Any) -> None:
        """Forget this invocation's system instructions, kept requests, kept tool results
        and spotlight marker."""
        inv = invocation_context.invocation_id
        self._instructions.drop_where(inv)
        self._batches.drop_where(inv)
        self._server_tools.drop_where(inv)
        self._requests.drop_where(inv)
        self._results.drop_where(inv)
        self._nonces.pop(inv)

    # -- helpers ---------------------------------------------------------------------------

    def _trusted_declaration(self, tool: str) -> bool:
        """Whether the app vouches for a tool's declaration: listed in
        ``trusted_declarations``, or the tool is trusted whole."""
        return tool in self.trusted_declarations or not self._untrusted(tool)

    def _untrusted(self, tool: str) -> bool:
        """Whether a tool's output is outside text as a whole (not trusted whole)."""
        if tool in CONTROL_TOOLS:
            return False
        trust = self.trusted.get(tool)
        return trust is None or not trust.whole

    def _grounding(self, ctx: Any, taint: Taint) -> Grounding:
        """The trusted text of this session: user, instruction, state, trusted tools."""
        texts: list[str] = [self._instructions.get((ctx.invocation_id, ctx.agent_name)) or ""]
        if not texts[0]:
            agent = getattr(getattr(ctx, "_invocation_context", None), "agent", None)
            texts += [i for i in (getattr(agent, "instruction", None),) if isinstance(i, str)]
        whole = [s for key in self.trusted_state for s in scalars(key.get(ctx.state))]
        events = getattr(ctx.session, "events", None) or ()
        answers = pending_answers(events)
        nodes = node_inputs(events)
        history = [self._event_trust(e, answers, nodes) for e in events]
        vouched = self._vouched(ctx)
        if vouched is not None:
            history = [(vouched(e, h[0]), h[1], h[2]) for e, h in zip(events, history, strict=True)]
        args = {call_id: leaves for _, _, calls in history for call_id, leaves in calls}
        fields: list[tuple[str, str | None, tuple[str, ...]]] = []
        for said, outputs, _ in reversed(history):
            if not taint.inherited:  # a nested run's "user" text was written by a tainted model
                texts += said
            # A result changed after the lattice read it (an agent's after_tool_callback):
            # what the trusted tool returned grounds, not what was added to it.
            outputs = tuple(
                (call_id, kept[0]) if (kept := self._rewritten.get(call_id)) else (call_id, lv)
                for call_id, lv in outputs
            )
            # A trusted tool echoing its own arguments (a search for the injected IBAN) must
            # not launder them: what the call was given does not count from its output.
            fields += [
                (leaf, kind, args.get(call_id, ()))
                for call_id, leaves in outputs
                for leaf, kind in leaves
            ]
        return Grounding(
            capped(texts),
            capped(whole),
            fields=capped_pairs(fields),
            hashed=taint.hashed,
            hasher=token_hash,
            phone_codes=self.phone_codes,
        )

    def _dictated(
        self, ctx: Any, taint: Taint, scanned: Sequence[str], tool_args: Mapping[str, Any]
    ) -> list[str]:
        """The free-text arguments that repeat a run of an untrusted output's words."""
        if not self.dictated_content or not scanned:
            return []
        trusted, untrusted = self._copy_sources(ctx, taint)
        out = []
        for arg in scanned:
            runs = copied_runs(scalars(tool_args[arg]), trusted)
            if dictated(runs, untrusted):
                out.append(arg)
        return out

    def _copy_sources(self, ctx: Any, taint: Taint) -> tuple[list[str], list[str]]:
        """What a copied argument is compared with, each capped: the trusted texts (the
        written instruction, the trusted state, the user's messages unless the taint was
        inherited) and the outside text of the session's tool outputs."""
        events = getattr(ctx.session, "events", None) or ()
        trusted = [self._instructions.get((ctx.invocation_id, ctx.agent_name)) or ""]
        trusted += [s for key in self.trusted_state for s in scalars(key.get(ctx.state))]
        if not taint.inherited:
            vouched = self._vouched(ctx)
            if vouched is None:
                trusted += user_texts(events)
            else:
                trusted += [t for e in events for t in vouched(e, tuple(user_texts([e])))]
        return capped(trusted), capped(self._untrusted_texts(events))

    def _untrusted_texts(self, events: Sequence[Any]) -> Iterator[str]:
        """The string leaves of the outside text in the session's tool outputs, newest
        first: every leaf of an untrusted tool's output, the free-text leaves of a tool's
        output trusted whole (none when it is trusted as ``text``)."""
        for tool, response, _ in tool_responses(events):
            trust = self.trusted.get(tool)
            if self._untrusted(tool) or trust is None:
                if tool not in CONTROL_TOOLS:
                    yield from scalars(response)
                continue
            kind = trust.fields[0][1] if trust.fields else None
            if kind != "text":
                yield from (leaf for leaf in scalars(response) if not is_value(leaf, kind))

    def _event_trust(
        self, event: Any, answers: frozenset[str] = frozenset(), nodes: Container[str] = ()
    ) -> EventTrust:
        """What one history event adds: the user's words, trusted outputs, call arguments.

        A function response a client sent counts only when it answers a pending
        long-running call (its key in ``answers``, from :func:`pending_answers`); a
        ``Workflow`` node's input (its id in ``nodes``) is not the user's words. Remembered
        by event id (a stored event does not change, nor does whether it answered a call).
        """
        key = getattr(event, "id", None) or None
        if key is not None:
            with self._events_lock:
                hit = self._events.get(key)
            if hit is not None:
                return hit
        said = tuple(user_texts([event], nodes))
        if getattr(event, "author", None) == "user":
            responses = [
                (name, response, part_key)
                for part_key, name, response in client_responses([event])
                if part_key in answers
            ]
            calls = {part_key: fr.id or "" for part_key, fr in client_parts([event])}
            responses = [(n, r, calls.get(k, "")) for n, r, k in responses]
        else:
            responses = list(tool_responses([event]))
        outputs = tuple(
            (call_id, tuple(typed_leaves(response, trust)))
            for tool, response, call_id in responses
            if (trust := self.trusted.get(tool)) is not None
        )
        found = (said, outputs, call_arguments(event))
        if key is not None:
            with self._events_lock:
                self._events[key] = found
        return found

    def _token_hashes(self, ctx: Any, taint: Taint) -> list[str]:
        """Salted hashes of this session's trusted tokens, for the kinds the table uses."""
        grounding = self._grounding(ctx, taint)
        salt = session_hash(ctx.session.id)
        kinds = {k for spec in self.consequential.values() for k in spec.args.values()}
        order = [k for k in _HASHED_ORDER if k in kinds]
        return [
            token_hash(salt, kind, token)
            for kind in order
            for token in sorted(grounding.tokens(kind))
        ][:MAX_TOKENS]

    def _deny(
        self,
        ctx: Any,
        tool: str,
        args: list[str],
        reason: str,
        code: str = "ungrounded_argument",
    ) -> dict[str, Any]:
        self._counts.bump("denied", f"denied:{tool}")
        logger.info("adk_lattice: %s denied %s: %s", self.name, tool, ",".join(args))
        report(ctx, "deny", self.name, f"{code}:{','.join(args)}")
        return tool_denial(self.name, reason, code, tool=tool, arguments=args)

    def _confirm(
        self, ctx: Any, tool: str, spec: Consequential, missing: list[str], taint: Taint, code: str
    ) -> dict[str, Any] | None:
        confirmation = getattr(ctx, "tool_confirmation", None)
        if confirmation is not None:
            if confirmation.confirmed:
                self._counts.bump("allowed", "approved")
                return None
            self._counts.bump("rejected", "denied", f"denied:{tool}")
            report(ctx, "deny", self.name, "rejected_by_approver")
            reason = f"the {tool} call was rejected by the approver"
            return tool_denial(self.name, reason, "rejected_by_approver", tool=tool)
        what = f" {_names(missing)} did not come from you or a trusted source." if missing else ""
        hint = spec.hint or (
            f"This {tool} call was made after reading untrusted content "
            f"({', '.join(taint.sources)}).{what} Approve it?"
        )
        self._counts.bump("pending_approval")
        noted = f"{code}:{','.join(missing)}" if missing else code
        return ask_person(ctx, self.name, tool, code, hint, note_code=noted, arguments=missing)


def _this_run(ctx: Any, events: Sequence[Any]) -> Iterator[Any]:
    """The events of this invocation, in order (another run of the session may have
    appended its own between them)."""
    return (e for e in events if getattr(e, "invocation_id", None) == ctx.invocation_id)


def _digest(form: str) -> str:
    return hashlib.blake2b(form.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _carries_unknown_identifier(grounding: Grounding, value: Any, mode: bool | str) -> bool:
    """Whether a free-text argument carries an opaque token (``mode`` ``True``) or a long
    identifier (``"long"``) no trusted text holds (:mod:`.opaque`); every string in it
    read as the destination scan reads it, and a token inside a destination a reader
    found left to that reader."""
    for text in content_texts(value):
        if text is UNREAD:
            continue
        if mode == "long":
            found = set(identifiers(without_blobs(text)))
            if not found:
                continue
            read = [raw for _, raw in destinations(text)]
            held, form = grounding.holds_identifier, letters
        else:
            read = [raw for _, raw in destinations(text)]
            rest = _around(grounding, revealed(text), read)
            found = set(opaque_tokens(without_blobs(rest)))
            held, form = grounding.holds_token, _folded
        folded = [form(raw) for raw in read]
        for token in found:
            inside = (f := form(token)) != "" and any(f in r for r in folded)
            if not inside and not held(token):
                return True
    return False


def _around(grounding: Grounding, text: str, read: Sequence[str]) -> str:
    """A text with the destinations a reader found (and grounded) taken out: each is its
    reader's. The chunk one is written in is dropped when trusted text holds it whole (a
    number the user typed with its exponent); otherwise the rest of it (a scheme's prefix,
    a query) is read piece by piece."""
    spaced = [raw for raw in read if " " in raw]
    text = functools.reduce(lambda t, raw: t.replace(raw, "\0"), spaced, text)
    chunks = []
    for chunk in text.split(" "):
        inside = [raw for raw in read if " " not in raw and raw in chunk]
        if not inside and "\0" not in chunk:
            chunks.append(chunk)
            continue
        if "\0" not in chunk and grounding.holds_token(chunk.strip(EDGE)):
            continue
        chunks.append(
            _PIECES.sub(" ", functools.reduce(lambda t, r: t.replace(r, "\0"), inside, chunk))
        )
    return " ".join(chunks)


#: What parts the rest of a chunk holding a destination: its marker, a query's marks.
_PIECES: Final = re.compile(r"[\0?&=;#:,/]+")


def _folded(text: str) -> str:
    return fold(text)[0]


def _carries_ungrounded(grounding: Grounding, value: Any) -> bool:
    """Whether a free-text argument carries a destination not grounded in trusted text.

    Every string in it (lists and mappings walked, a mapping's keys too, what its base64
    decodes to) is scanned; one over the size cap, base64 left unread, more destinations
    than are checked, or a destination of no valid form is ungrounded.
    """
    found = 0
    for text in content_texts(value):
        if len(text) > MAX_CONTENT_CHARS or text is UNREAD:
            return True
        for kind, raw in destinations(text):
            found += 1
            if found > MAX_DESTINATIONS:
                return True
            try:
                if not grounding.grounded(kind, raw):
                    return True
            except Malformed:
                return True
    return False


def _listed(content: str | Sequence[str]) -> Sequence[str]:
    return () if isinstance(content, str) else content


def _names(args: list[str]) -> str:
    return "the argument " + args[0] if len(args) == 1 else "the arguments " + ", ".join(args)
