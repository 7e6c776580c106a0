"""``ToolGuard``: who may call a tool, with which arguments, and when a person must approve."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ..._records import tool_label
from ...state import StateKey
from .._common import Counts, ask_person, report, tool_denial
from .approval import Approval
from .arguments import (
    Check,
    InjectState,
    Rewrite,
    field_names,
    hygiene,
    model_check,
    run_check,
    schema_check,
)

logger = logging.getLogger("adk_lattice.policy")

_MISSING = object()


@dataclass(frozen=True, slots=True)
class ToolRule:
    """What :class:`ToolGuard` enforces for one tool.

    Args:
        agents: the agents allowed to call it (None: any agent).
        schema: a JSON schema the arguments must satisfy.
        model: a pydantic model the arguments must validate against (strict types).
        checks: callables on the arguments; None/True allows, a string (the reason) or
            False denies, and so does a ValueError/TypeError they raise.
        rewrites: :class:`Clamp`, :class:`Round`, :class:`InjectState`, applied in place
            before validation, so the model cannot control those values.
        approval: an :class:`Approval` threshold.
        sensitive: ``{argument: kind}`` for :meth:`ProvenanceGuard.from_rules` (ToolGuard
            itself ignores it): the arguments that must be grounded in trusted text.
    """

    agents: Collection[str] | None = None
    schema: Mapping[str, Any] | None = None
    model: type[BaseModel] | None = None
    checks: Sequence[Check] = ()
    rewrites: Sequence[Rewrite] = ()
    approval: Approval | None = None
    sensitive: Mapping[str, str] | None = None
    #: The argument names ``schema`` and ``model`` declare (a denial reason may name them).
    _names: frozenset[str] = field(default=frozenset(), init=False, repr=False)
    #: ``(code, check)`` pairs built once from ``schema`` and ``model``.
    _validators: tuple[tuple[str, Callable[[Mapping[str, Any]], str | None]], ...] = field(
        default=(), init=False, repr=False
    )

    def __post_init__(self) -> None:
        validators = []
        if self.schema is not None:
            validators.append(("schema", schema_check(self.schema)))
        if self.model is not None:
            validators.append(("model", model_check(self.model)))
        object.__setattr__(self, "_validators", tuple(validators))
        names = field_names(self.schema) if self.schema is not None else frozenset()
        if self.model is not None:
            names |= field_names(self.model.model_json_schema())
        object.__setattr__(self, "_names", names)


def _as_rule(tool: str, rule: Any) -> ToolRule:
    """A rule as given, or built from a mapping of its fields (a config file's table)."""
    if isinstance(rule, ToolRule):
        return rule
    if isinstance(rule, Mapping):
        fields = ("agents", "schema", "model", "checks", "rewrites", "approval", "sensitive")
        unknown = sorted(set(rule) - set(fields))
        if unknown:
            raise TypeError(
                f"rule for {tool!r}: unknown field(s) {', '.join(map(str, unknown))}; "
                f"a ToolRule has {', '.join(fields)}"
            )
        return ToolRule(**rule)
    raise TypeError(f"rule for {tool!r} must be a ToolRule, not {type(rule).__name__}")


class ToolGuard:
    """``before_tool``: enforce a :class:`ToolRule` per tool; deny legibly, never raise.

    Order per call: agent allowed, argument hygiene (non-finite numbers, huge strings, deep
    nesting), rewrites (clamp, round, inject from state), schema / model / checks, approval.
    A denial is the tool's result: ``{"status": "denied", "reason": ..., "code": ...,
    "policy": ...}``; a call waiting for a person is ``{"status": "pending_approval", ...}``
    and the run pauses until ADK's confirmation arrives. Each decision is noted for
    telemetry and audit (``adk_lattice.telemetry.note``) with a content-free code: ``deny``
    (``unknown_tool``, ``agent_not_allowed``, ``hygiene``, the failing rewrite's code,
    ``schema``, ``model``, ``check``, ``approval_required``, ``rejected_by_approver``,
    ``approver_not_authorised``),
    ``rewrite`` (``clamp``, ``round``, ``inject_state``: only when a value changed) and
    ``defer`` (``approval_required``)::

        ToolGuard({
            "issue_refund": ToolRule(
                agents={"billing"},
                schema={"type": "object", "required": ["amount"],
                        "properties": {"amount": {"type": "number", "exclusiveMinimum": 0}}},
                rewrites=[Round("amount", 2)],
                approval=Approval(("amount", 100), role=IS_MANAGER, confirm=True),
            )
        })

    Args:
        rules: a :class:`ToolRule` per tool name, or a mapping of its fields (as a config
            file writes it: ``{ agents = ["billing"], schema = { ... } }``).
        unknown: ``allow`` (default) lets tools without a rule through; ``deny`` denies them.
        default: the rule for tools without their own (with ``unknown="allow"``), e.g.
            ``ToolRule()`` to apply the argument hygiene to every tool.
        max_string: longest string argument accepted, in characters.
        max_depth: deepest nesting accepted.
        max_items: most entries in one list or object.
        name: the handler name.

    Attributes:
        counts: ``allowed``, ``denied``, ``pending_approval``, ``approved``, ``rejected``, and
            ``denied:<tool>`` per tool.
    """

    def __init__(
        self,
        rules: Mapping[str, ToolRule | Mapping[str, Any]],
        *,
        unknown: str = "allow",
        default: ToolRule | None = None,
        max_string: int = 10_000,
        max_depth: int = 20,
        max_items: int = 1_000,
        name: str = "ToolGuard",
    ) -> None:
        if unknown not in ("allow", "deny"):
            raise ValueError("unknown must be 'allow' or 'deny'")
        built = {tool: _as_rule(tool, rule) for tool, rule in rules.items()}
        if default is not None and not isinstance(default, ToolRule):
            raise TypeError(f"default must be a ToolRule, not {type(default).__name__}")
        self.rules = built
        #: The keys this policy trusts; ``Lattice`` protects them from client writes.
        self.state_keys: tuple[StateKey[Any], ...] = tuple(_trusted(self.rules, default))
        self.default = default
        self.unknown = unknown
        self.max_string, self.max_depth, self.max_items = max_string, max_depth, max_items
        self.name = name
        self._counts = Counts()
        self._declared: dict[str, frozenset[str]] = {}

    @property
    def counts(self) -> Mapping[str, int]:
        """Counters by outcome, and ``denied:<tool>``."""
        return self._counts.snapshot()

    def declared_names(self) -> dict[str, frozenset[str]]:
        """The tools the rules name, each with the arguments its rule names (checked
        against the app at its first run): see :func:`rule_arguments`."""
        return {tool: rule_arguments(rule) for tool, rule in self.rules.items()}

    def _deny(self, ctx: Any, tool: str, code: str, reason: str) -> dict[str, Any]:
        self._counts.bump("denied", f"denied:{tool}")
        # The code only: a reason may name argument fields a check wrote.
        logger.info("adk_lattice: %s denied %s (%s)", self.name, tool, code)
        report(ctx, "deny", self.name, code)
        return tool_denial(self.name, reason, code, tool=tool)

    def before_tool(self, *, tool: Any, tool_args: Any, tool_context: Any) -> dict[str, Any] | None:
        """Allow (None, with arguments possibly rewritten in place), deny, or ask a person."""
        name = getattr(tool, "name", None)
        rule = self.rules.get(name) if isinstance(name, str) else None
        name = tool_label(tool)
        if rule is None and self.unknown == "allow":
            rule = self.default
        ctx = tool_context
        if rule is None:
            if self.unknown == "deny":
                return self._deny(ctx, name, "unknown_tool", f"the tool {name} is not allowed here")
            self._counts.bump("allowed")
            return None
        agent = ctx.agent_name
        if rule.agents is not None and agent not in rule.agents:
            reason = f"the agent {agent} may not call {name}"
            return self._deny(ctx, name, "agent_not_allowed", reason)
        if not isinstance(tool_args, dict):
            return self._deny(ctx, name, "hygiene", "arguments must be an object")
        problem = hygiene(
            tool_args,
            max_string=self.max_string,
            max_depth=self.max_depth,
            max_items=self.max_items,
            known=self._known(tool, name, rule),
        )
        if problem:
            return self._deny(ctx, name, "hygiene", problem)
        denied = self._rewrite(ctx, name, rule.rewrites, tool_args)
        if denied is not None:
            return denied
        for code, validate in rule._validators:
            problem = validate(tool_args)
            if problem:
                return self._deny(ctx, name, code, problem)
        for check in rule.checks:
            problem = run_check(check, tool_args)
            if problem:
                return self._deny(ctx, name, "check", problem)
        if rule.approval is not None and rule.approval.needed(tool_args):
            return self._approve(name, rule.approval, tool_args, ctx)
        self._counts.bump("allowed")
        return None

    def _known(self, tool: Any, label: str, rule: ToolRule) -> frozenset[str]:
        """The argument names a reason may show: declared by the rule or by the tool."""
        known = self._declared.get(label)
        if known is None:
            known = rule._names | _parameters(tool)
            if len(self._declared) < 4096:  # a name per declared tool: bounded anyway
                self._declared[label] = known
        return known

    def _rewrite(
        self, ctx: Any, name: str, rewrites: Sequence[Rewrite], args: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Apply the rewrites in place; note the ones that changed a value; deny on a problem."""
        changed: list[str] = []
        failed: tuple[str, str] | None = None
        for rewrite in rewrites:
            before = args.get(rewrite.field, _MISSING)
            problem = rewrite.apply(args, ctx.state)
            after = args.get(rewrite.field, _MISSING)
            # 2 == 2.0 and True == 1: a change of type is a change too.
            moved = type(before) is not type(after) or before != after
            if moved and rewrite.code not in changed:
                changed.append(rewrite.code)
            if problem:
                failed = (rewrite.code, problem)
                break
        if changed:
            # Noted before a denial that may follow, so the denial is the last decision.
            report(ctx, "rewrite", self.name, ",".join(changed))
        return None if failed is None else self._deny(ctx, name, *failed)

    def _approve(
        self, name: str, approval: Approval, args: Mapping[str, Any], ctx: Any
    ) -> dict[str, Any] | None:
        verdict, code = approval.decide(ctx)
        if verdict == "allow":
            self._counts.bump("allowed", "approved_by_role" if code == "role" else "approved")
            return None
        if verdict == "defer":
            self._counts.bump("pending_approval")
            return ask_person(ctx, self.name, name, "approval_required", approval.hint)
        if code == "approval_required":
            role = approval.role_key
            who = f" ({role.name})" if role is not None else ""
            reason = f"this {name} call needs approval by an authorised person{who}"
        elif code == "rejected_by_approver":
            self._counts.bump("rejected")
            reason = f"the {name} call was rejected by the approver"
        else:
            self._counts.bump("rejected")
            reason = f"the {name} call was confirmed by someone not allowed to approve it"
        return self._deny(ctx, name, code, reason)


def _parameters(tool: Any) -> frozenset[str]:
    """The argument names a tool declares to the model (none for a made-up tool)."""
    try:
        declaration = tool._get_declaration()
    except Exception:  # a tool that cannot describe itself declares nothing we may echo
        return frozenset()
    if declaration is None:
        return frozenset()
    if declaration.parameters_json_schema is not None:
        return field_names(declaration.parameters_json_schema)
    if declaration.parameters is not None:
        return field_names(declaration.parameters.model_dump(exclude_none=True))
    return frozenset()


def rule_arguments(rule: ToolRule) -> frozenset[str]:
    """The top-level arguments a rule names: rewrites, the approval threshold, sensitive
    arguments, and the properties of its schema and model."""
    names = {r.field for r in rule.rewrites}
    when = rule.approval.when if rule.approval is not None else None
    if isinstance(when, tuple | list) and when and isinstance(when[0], str):
        names.add(when[0])
    names.update(rule.sensitive or ())
    model = rule.model.model_json_schema() if rule.model is not None else None
    for schema in (rule.schema, model):
        props = schema.get("properties") if isinstance(schema, Mapping) else None
        if isinstance(props, Mapping):
            names.update(k for k in props if isinstance(k, str))
    return frozenset(names)


def _trusted(rules: Mapping[str, ToolRule], default: ToolRule | None) -> list[StateKey[Any]]:
    """The state keys the rules read: approval roles and injected keys."""
    keys: list[StateKey[Any]] = []
    for rule in [*rules.values(), *([default] if default is not None else [])]:
        role = rule.approval.role_key if rule.approval is not None else None
        if role is not None:
            keys.append(role)
        keys.extend(r.state_key for r in rule.rewrites if isinstance(r, InjectState))
    return keys


__all__ = ["Approval", "ToolGuard", "ToolRule"]
