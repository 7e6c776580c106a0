"""Outside text that reaches the model without passing ``after_tool``.

ADK's built-in server-side tools (``google_search``, ``url_context``, Vertex AI search, the
built-in code executor) run inside the model call: their results come back on the model's
response as grounding metadata, URL-context metadata, or ``executable_code`` and
``code_execution_result`` parts, and no tool hook ever sees them. The model has read that
text, so the session is tainted as soon as such a response arrives. ADK 2.13 drops the
API's ``url_context_metadata`` from its ``LlmResponse``, so a response to a request that
enabled a server-side tool taints whatever metadata survived.
"""

from __future__ import annotations

from typing import Any, Final

#: Source names recorded in the taint record for each server-side channel.
GROUNDING: Final = "<grounding>"
URL_CONTEXT: Final = "<url_context>"
CODE_EXECUTION: Final = "<code_execution>"


#: ``types.Tool`` fields that run a tool inside the model call, and their source names.
SERVER_TOOLS: Final = {
    "google_search": GROUNDING,
    "google_search_retrieval": GROUNDING,
    "retrieval": GROUNDING,
    "enterprise_web_search": GROUNDING,
    "google_maps": GROUNDING,
    "url_context": URL_CONTEXT,
    "code_execution": CODE_EXECUTION,
}


def request_server_tools(request: Any) -> tuple[str, ...]:
    """The source names of the server-side tools a model request enables."""
    tools = getattr(getattr(request, "config", None), "tools", None) or ()
    found = {
        source
        for tool in tools
        for field, source in SERVER_TOOLS.items()
        if getattr(tool, field, None) is not None
    }
    return tuple(sorted(found))


def written_instruction(ctx: Any) -> str | None:
    """The agent's instruction as the app wrote it, before templating and ADK's additions.

    ADK fills ``{var}`` from state and appends text of its own (artifact names from
    ``LoadArtifactsTool``, memory from ``preload_memory``) to the system instruction; none
    of that is the app's, so it grounds nothing. An instruction given as a function is read
    as nothing (its output is only in the assembled request).

    Args:
        ctx: a callback context.

    Returns:
        The written ``instruction`` and ``global_instruction`` strings, or None when the
        context has no agent with an ``instruction`` attribute.
    """
    agent = getattr(getattr(ctx, "_invocation_context", None), "agent", None)
    if agent is None or not hasattr(agent, "instruction"):
        return None
    root = getattr(agent, "root_agent", agent)
    texts = (getattr(agent, "instruction", None), getattr(root, "global_instruction", None))
    return "\n".join(t for t in texts if isinstance(t, str) and t)


def response_sources(response: Any) -> list[str]:
    """The server-side channels whose output a model response carries.

    Args:
        response: an ``LlmResponse`` (or a stored ``Event``, which extends it).

    Returns:
        The source names, in a fixed order; empty when the response read nothing outside.
    """
    found: list[str] = []
    if _filled(getattr(response, "grounding_metadata", None)):
        found.append(GROUNDING)
    if _filled(getattr(response, "url_context_metadata", None)):
        found.append(URL_CONTEXT)
    content = getattr(response, "content", None)
    parts = getattr(content, "parts", None) or ()
    if any(p.executable_code is not None or p.code_execution_result is not None for p in parts):
        found.append(CODE_EXECUTION)
    return found


def _filled(metadata: Any) -> bool:
    """Whether a metadata object holds anything (an empty one read nothing)."""
    if metadata is None:
        return False
    dump = getattr(metadata, "model_dump", None)
    if dump is None:
        return True  # an unknown shape: fail closed
    return any(v not in (None, [], {}, "") for v in dump(exclude_none=True).values())
