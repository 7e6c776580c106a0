"""What a tool puts in front of a model, and the argument names its text refers to."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.genai import types

# Words that fit "the <word> argument" without naming an argument.
_STOPWORDS = (
    "a an the this that these those its their your each every any all some same other "
    "first second third last next previous following above below only single one two "
    "optional required extra additional given named keyword positional tool function "
    "json string text input output which no new such whole entire s both more many several "
    "multiple three of with to for in on as by from and or into per without valid invalid "
    "unknown missing undeclared declared default custom nested level its call"
)
_NOT_NAMES = frozenset(_STOPWORDS.split())
_ARG_WORDS = r"(?:argument|arg|parameter|param|field|property)"
_REFERENCE_PATTERNS = (
    # "the result argument", "`result` parameter", "'detail' field"
    re.compile(rf"[`'\"]?\b([A-Za-z_]\w*)\b[`'\"]?\s+{_ARG_WORDS}s?\b", re.IGNORECASE),
    # "the argument `result`", "parameter 'detail'" (quoted, so prose is not mistaken)
    re.compile(rf"\b{_ARG_WORDS}s?\s+(?:named\s+|called\s+)?[`'\"]([A-Za-z_]\w*)[`'\"]"),
    # "argument named result", "a parameter called detail"
    re.compile(rf"\b{_ARG_WORDS}s?\s+(?:named|called)\s+([A-Za-z_]\w*)", re.IGNORECASE),
)


def _declaration(tool: BaseTool) -> types.FunctionDeclaration | None:
    # Some tools build the declaration from live configuration; one that cannot is, for
    # this check, a tool without a declaration, which callers report rather than pass.
    try:
        declaration: types.FunctionDeclaration | None = tool._get_declaration()
    except Exception:
        return None
    return declaration


def _schema(declaration: types.FunctionDeclaration) -> Any:
    if declaration.parameters_json_schema is not None:
        return declaration.parameters_json_schema
    if declaration.parameters is not None:
        return declaration.parameters.model_dump(mode="json", exclude_none=True)
    return None


def model_facing_text(tool: BaseTool) -> tuple[str, bool]:
    """Everything a tool puts in front of a model: description plus its whole schema.

    The argument schema goes in serialised as JSON, so a description nested deep in an
    array-of-objects argument (or under ``$defs``) is scanned too.

    Args:
        tool: any ADK ``BaseTool`` (FunctionTool, AgentTool, transfer, MCP tools, ...).

    Returns:
        ``(text, declared)``; ``declared`` is False when the tool exposes no declaration,
        so only its description was scanned and the caller should say so.
    """
    declaration = _declaration(tool)
    if declaration is None:
        return tool.description or "", False
    dumped = declaration.model_dump(mode="json", exclude_none=True)
    dumped.pop("parameters", None)
    dumped.pop("parameters_json_schema", None)
    schema = _schema(declaration)
    if schema is not None:
        dumped["parameters"] = schema
    head = tool.description or ""
    return f"{head}\n{json.dumps(dumped, ensure_ascii=False, sort_keys=True)}", True


def _walk(node: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair in a JSON-like tree, depth first."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield key, value
            yield from _walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk(item)


def _declared_names(schema: Any) -> set[str]:
    names: set[str] = set()
    for key, value in _walk(schema):
        if key == "properties" and isinstance(value, dict):
            names.update(value)
    return names


def _referenced_names(text: str) -> set[str]:
    found: set[str] = set()
    for pattern in _REFERENCE_PATTERNS:
        for match in pattern.finditer(text):
            name = match.group(1)
            if name.lower() not in _NOT_NAMES:
                found.add(name)
    return found


def undeclared_arg_refs(tool: BaseTool) -> tuple[list[str], bool]:
    """Argument names the tool's own text tells the model to fill that it does not declare.

    ADK validates function arguments against the declaration, so a model that obeys such
    a description makes a call that fails. References are phrases like "the ``result``
    argument", "parameter 'detail'" or "an argument named detail", in the description
    and in every description inside the schema.

    Args:
        tool: any ADK ``BaseTool``.

    Returns:
        ``(names, checked)``: the undeclared names, sorted; ``checked`` is False when the
        tool exposes no declaration or no argument schema, i.e. nothing was checked.
    """
    declaration = _declaration(tool)
    schema = _schema(declaration) if declaration is not None else None
    if declaration is None or schema is None:
        return [], False
    texts = [tool.description or "", declaration.description or ""]
    texts += [v for k, v in _walk(schema) if k == "description" and isinstance(v, str)]
    referenced = _referenced_names("\n".join(texts))
    return sorted(referenced - _declared_names(schema)), True
