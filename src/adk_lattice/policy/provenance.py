"""``ProvenanceGuard``: no consequential argument comes only from untrusted text.

A detector recognises bad text and trails the next attack; this policy needs none. It labels
every tool output at the source (untrusted unless the app declares the tool trusted), keeps
the taint in session state, and when untrusted content is in a session's context, checks
that each sensitive argument of a consequential call appears in trusted text: the user's own
messages, the system instruction, declared state keys and trusted tools' outputs. An
ungrounded call is denied, or sent to a person.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from google.adk.tools.agent_tool import AgentTool

from .._records import current_call
from ..state import StateKey
from ..telemetry._audit import UNTRUSTED_SOURCES
from ._common import Counts, Keyed, report, tool_denial
from .provenance_spotlight import spotlight_request
from .provenance_taint import (
    CONTROL_TOOLS,
    MAX_TOKENS,
    Taint,
    capped,
    mark,
    parse_paths,
    read_taint,
    scalars,
    session_hash,
    token_hash,
    tool_responses,
    trusted_leaves,
    user_texts,
)
from .provenance_values import KINDS, Grounding, ungrounded
from .tool_guard import ToolRule

logger = logging.getLogger("adk_lattice.policy")

_MAX_INSTRUCTION: Final = 100_000


def check_kinds(args: Mapping[str, str], where: str) -> dict[str, str]:
    """Validate a ``{argument: kind}`` table.

    Raises:
        ValueError: on a non-string argument name or an unknown kind.
    """
    if not isinstance(args, Mapping):
        raise ValueError(f"{where}: args must map argument names to kinds, e.g. {{'to': 'email'}}")
    for arg, kind in args.items():
        if not isinstance(arg, str) or not arg:
            raise ValueError(f"{where}: argument names must be non-empty strings, got {arg!r}")
        if kind not in KINDS:
            raise ValueError(
                f"{where}: unknown kind {kind!r} for argument {arg!r}; "
                f"valid kinds: {', '.join(sorted(KINDS))}"
            )
    return dict(args)


@dataclass(frozen=True, slots=True)
class Consequential:
    """A tool whose call has an effect, and the arguments that steer it.

    Args:
        args: ``{argument name: kind}``; kinds are ``email``, ``iban``, ``url``, ``number``,
            ``id``, ``phone`` and ``text``. Each must be grounded in trusted text when
            untrusted content is in context.
        always_confirm: with untrusted content in context, every call needs a person, even
            with grounded arguments (``args`` may then be empty).
        hint: what the person is asked (default: names the tool and the arguments).

    Raises:
        ValueError: on an unknown kind, or no argument without ``always_confirm``.
    """

    args: Mapping[str, str] = field(default_factory=dict)
    always_confirm: bool = False
    hint: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", check_kinds(self.args, "Consequential"))
        if not self.args and not self.always_confirm:
            raise ValueError(
                "Consequential needs at least one sensitive argument, e.g. "
                "Consequential(args={'recipient': 'iban'}), or always_confirm=True"
            )


class ProvenanceGuard:
    """Deny (or send to a person) consequential calls steered by untrusted content.

    ``after_tool`` marks the session tainted when an untrusted tool's output enters the
    context; ``before_tool`` checks a consequential call only while the session is tainted:
    every sensitive argument value (every element of a list) must appear, normalised, in
    trusted text. With no untrusted content in context nothing is checked. A denial is
    ``{"status": "denied", "reason": ..., "code": "ungrounded_argument", "policy": ...}``
    naming the arguments, never their values; decisions are noted with content-free codes
    (``deny``/``defer`` ``ungrounded_argument:<args>``, ``always_confirm``,
    ``rejected_by_approver``), and the call's audit entry lists the untrusted sources::

        ProvenanceGuard(
            consequential={"send_money": Consequential(args={"recipient": "iban"})},
            trusted_tools={"list_contacts": True, "read_inbox": ["messages.*.sender"]},
            trusted_state=[USER_EMAIL],
        )

    Args:
        consequential: a :class:`Consequential` per tool name.
        trusted_tools: tools whose output the app controls: ``True`` (all of it) or a list of
            dotted field paths (``*`` matches every item). A tool returning a non-dict value
            is seen by ADK as ``{"result": value}``.
        trusted_state: declared state keys whose values are trusted text.
        on_ungrounded: ``deny`` or ``confirm`` (ADK tool confirmation; the run pauses).
        spotlight: wrap untrusted tool output in per-invocation random markers in what the
            model sees, and tell the model text between them is data. Helps a cooperating
            model; it is no guarantee.
        name: the handler name.

    Raises:
        ValueError: on a bad table (see the message for the fix).
        TypeError: on a trusted state entry that is not a ``StateKey``.

    Attributes:
        counts: ``clean``, ``allowed``, ``denied``, ``pending_approval``, ``approved``,
            ``rejected``, ``tainted`` (outputs that tainted a session), ``denied:<tool>``.
    """

    def __init__(
        self,
        consequential: Mapping[str, Consequential],
        *,
        trusted_tools: Mapping[str, bool | Sequence[str]] | None = None,
        trusted_state: Iterable[StateKey[Any]] = (),
        on_ungrounded: str = "deny",
        spotlight: bool = False,
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
        self.trusted = _trust_table(trusted_tools or {})
        self.trusted_state = tuple(trusted_state)
        for key in self.trusted_state:
            if not isinstance(key, StateKey):
                raise TypeError(f"trusted_state takes StateKey objects, not {type(key).__name__}")
        #: The keys this policy trusts; ``Lattice`` protects them from client writes.
        self.state_keys = self.trusted_state
        self.on_ungrounded = on_ungrounded
        self.spotlight = spotlight
        self.name = name
        self._counts = Counts()
        self._instructions: Keyed[str] = Keyed()
        self._nonces: Keyed[str] = Keyed()
        self._batches: Keyed[Taint] = Keyed()

    @classmethod
    def from_rules(cls, rules: Mapping[str, ToolRule], **options: Any) -> ProvenanceGuard:
        """Build the guard from a :class:`ToolGuard` table's ``ToolRule(sensitive=...)``.

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

    @property
    def counts(self) -> Mapping[str, int]:
        """Counters by outcome."""
        return self._counts.snapshot()

    # -- hooks -----------------------------------------------------------------------------

    def before_model(self, *, callback_context: Any, llm_request: Any) -> None:
        """Keep the system instruction for this invocation's checks; spotlight if asked."""
        inv = callback_context.invocation_id
        text = _instruction_text(getattr(llm_request.config, "system_instruction", None))
        self._instructions.put((inv, callback_context.agent_name), text[:_MAX_INSTRUCTION])
        if self.spotlight:
            nonce = self._nonces.setdefault(inv, lambda: secrets.token_hex(8))
            spotlight_request(llm_request, nonce, self._untrusted)

    def after_tool(self, *, tool: Any, tool_args: Any, tool_context: Any, result: Any) -> None:
        """Mark the session tainted when an untrusted tool's output enters the context."""
        name = getattr(tool, "name", str(tool))
        if not self._untrusted(name):
            return
        call = current_call()
        if call is not None and (call.denied or call.short_circuit_tier == "policy"):
            return  # a policy's answer stood in for the tool: no outside text entered
        batch = _batch(tool_context)
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
        session_id = ctx.session.id
        spec = self.consequential.get(name)
        if spec is None and not isinstance(tool, AgentTool):
            return None
        batch = _batch(ctx)
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
        if not missing:
            self._counts.bump("allowed")
            return None
        if self.on_ungrounded == "confirm":
            return self._confirm(ctx, name, spec, missing, taint, "ungrounded_argument")
        verb = "does" if len(missing) == 1 else "do"
        reason = (
            f"{_names(missing)} of this {name} call {verb} not appear in anything the user or "
            f"a trusted source provided, and untrusted content is in context; ask the user "
            f"to state {'it' if len(missing) == 1 else 'them'}"
        )
        return self._deny(ctx, name, missing, reason)

    def after_run(self, *, invocation_context: Any) -> None:
        """Forget this invocation's system instructions and spotlight marker."""
        inv = invocation_context.invocation_id
        self._instructions.drop_where(inv)
        self._batches.drop_where(inv)
        self._nonces.pop(inv)

    # -- helpers ---------------------------------------------------------------------------

    def _untrusted(self, tool: str) -> bool:
        return tool not in CONTROL_TOOLS and self.trusted.get(tool) is not True

    def _grounding(self, ctx: Any, taint: Taint) -> Grounding:
        """The trusted text of this session: user, instruction, state, trusted tools."""
        texts: list[str] = [self._instructions.get((ctx.invocation_id, ctx.agent_name)) or ""]
        if not texts[0]:
            agent = getattr(getattr(ctx, "_invocation_context", None), "agent", None)
            texts += [i for i in (getattr(agent, "instruction", None),) if isinstance(i, str)]
        whole = [s for key in self.trusted_state for s in scalars(key.get(ctx.state))]
        events = list(getattr(ctx.session, "events", None) or ())
        if not taint.inherited:  # a nested run's "user" text was written by a tainted model
            texts += user_texts(events)
        for tool, response in tool_responses(events):
            trust = self.trusted.get(tool)
            if trust:
                whole += trusted_leaves(response, trust)
        return Grounding(capped(texts), capped(whole), hashed=taint.hashed, hasher=token_hash)

    def _token_hashes(self, ctx: Any, taint: Taint) -> list[str]:
        """Salted hashes of this session's trusted tokens, for the kinds the table uses."""
        grounding = self._grounding(ctx, taint)
        salt = session_hash(ctx.session.id)
        kinds = {k for spec in self.consequential.values() for k in spec.args.values()}
        # The structured kinds first: an id table can be long, and the list is bounded.
        order = [k for k in ("iban", "email", "phone", "url", "number", "id") if k in kinds]
        return [
            token_hash(salt, kind, token)
            for kind in order
            for token in sorted(grounding.tokens(kind))
        ][:MAX_TOKENS]

    def _deny(self, ctx: Any, tool: str, args: list[str], reason: str) -> dict[str, Any]:
        self._counts.bump("denied", f"denied:{tool}")
        code = "ungrounded_argument"
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
        what = f"{_names(missing)} did not come from you or a trusted source" if missing else ""
        hint = spec.hint or (
            f"This {tool} call was made after reading untrusted content "
            f"({', '.join(taint.sources)}). {what}. Approve it?".replace(". .", ".")
        )
        ctx.request_confirmation(hint=hint, payload={"tool": tool, "arguments": missing})
        self._counts.bump("pending_approval")
        report(ctx, "defer", self.name, f"{code}:{','.join(missing)}" if missing else code)
        return {
            "status": "pending_approval",
            "reason": f"this {tool} call waits for a person to approve it",
            "code": code,
            "policy": self.name,
            "tool": tool,
        }


def _batch(ctx: Any) -> tuple[str, str] | None:
    """``(invocation id, id of the model event)`` that asked for this call, if found."""
    call_id = ctx.function_call_id
    events = getattr(ctx.session, "events", None) or ()
    if not call_id:
        return None
    for event in reversed(events[-64:]):
        if any(fc.id == call_id for fc in event.get_function_calls()):
            return (ctx.invocation_id, event.id)
    return None


def _names(args: list[str]) -> str:
    return "the argument " + args[0] if len(args) == 1 else "the arguments " + ", ".join(args)


def _trust_table(table: Mapping[str, Any]) -> dict[str, bool | tuple[tuple[str, ...], ...]]:
    """Validate ``trusted_tools`` and parse the field paths."""
    if not isinstance(table, Mapping):
        raise ValueError("trusted_tools must map tool names to True or a list of field paths")
    out: dict[str, bool | tuple[tuple[str, ...], ...]] = {}
    for tool, trust in table.items():
        if not isinstance(tool, str) or not tool:
            raise ValueError(f"trusted_tools: tool names must be strings, got {tool!r}")
        if isinstance(trust, bool):
            out[tool] = trust
        elif (
            isinstance(trust, Sequence)
            and not isinstance(trust, str)
            and trust
            and all(isinstance(p, str) and p and "" not in p.split(".") for p in trust)
        ):
            out[tool] = parse_paths(trust)
        else:
            raise ValueError(
                f"trusted_tools[{tool!r}] must be True (the whole output) or a non-empty list "
                f"of dotted field paths such as ['messages.*.sender'], not {trust!r}"
            )
    return out


def _instruction_text(value: Any) -> str:
    """The text of a request's system instruction (str, Content, parts or a list)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    parts = getattr(value, "parts", None)
    if parts is not None:
        return "\n".join(p.text for p in parts if getattr(p, "text", None))
    if isinstance(value, list | tuple):
        return "\n".join(_instruction_text(v) for v in value)
    text = getattr(value, "text", None)
    return text if isinstance(text, str) else ""
