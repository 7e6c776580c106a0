"""Outside text that reaches the model without passing ``after_tool``.

Taint is decided from what reaches the model. Function responses are labelled in
``after_tool``; everything else a request carries is read here, by the ADK writer that put
it there.

ADK's built-in server-side tools (``google_search``, ``url_context``, Vertex AI search, the
built-in code executor) run inside the model call: their results come back on the model's
response as grounding metadata, URL-context metadata, or ``executable_code`` and
``code_execution_result`` parts, and no tool hook ever sees them. The model has read that
text, so the session is tainted as soon as such a response arrives. ADK 2.13 drops the
API's ``url_context_metadata`` from its ``LlmResponse``, so a response to a request that
enabled a server-side tool taints whatever metadata survived.

ADK also writes outside text into the request itself (:func:`request_sources`):
``LoadArtifactsTool`` lists the session's artifact names in the instruction and inserts a
loaded artifact's content as a user-role part; ``preload_memory`` inserts past
conversations as a user-role part; and the events of other agents are relayed as user-role
"For context: ..." text. A relayed event is outside text when its author is not an
``LlmAgent`` of the app (a custom ``BaseAgent``, a remote A2A agent, an unknown name): no
hook of the guard saw what it read. An ``LlmAgent``'s words need no label of their own:
whatever it read was labelled in the session they share. ADK also fills the written
instruction's ``{var}`` placeholders from session state and ``{artifact.name}`` from the
artifact service (:func:`template_sources`): a value whose key the app did not declare
trusted is outside text.
"""

from __future__ import annotations

import functools
import importlib
import json
import re
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from google.adk.agents import LlmAgent
from google.adk.examples.base_example_provider import BaseExampleProvider
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.example_tool import ExampleTool

from .taint import CONTROL_TOOLS, instruction_text, node_inputs, user_texts

#: Source names recorded in the taint record for each server-side channel.
GROUNDING: Final = "<grounding>"
URL_CONTEXT: Final = "<url_context>"
CODE_EXECUTION: Final = "<code_execution>"
ARTIFACT: Final = "<artifact>"
MEMORY: Final = "<memory>"
#: Prefix of the source name of a relayed event whose author no hook labelled.
AGENT: Final = "<agent:"
#: Prefix of the source name of a function response a client sent for no pending call.
CLIENT: Final = "<client:"
#: A file attached to a user's message (an ``inline_data`` or ``file_data`` part).
ATTACHMENT: Final = "<attachment>"
#: An instruction given as a function (an ``InstructionProvider``).
INSTRUCTION: Final = "<instruction>"
#: Prefix of the source name of a transfer target's description read at run time.
AGENT_CARD: Final = "<agent_card:"
#: Prefix of the source name of a tool's description that a toolset provided.
TOOL: Final = "<tool:"
#: The run's ``RunConfig.model_input_context``: contents put into every request of the run.
RUN_CONTEXT: Final = "<model_input_context>"
#: Prefix of the source name of an event no run wrote (appended through the session service).
APPENDED: Final = "<event:"
#: Prefix of the source name of a ``Workflow`` node's input that the user did not type.
NODE: Final = "<node:"
#: Prefix of the source name of a plugin listed before the lattice that may write into a
#: request (it overrides ``before_model_callback``).
PLUGIN: Final = "<plugin:"
#: Text written into a request after the lattice read it: by a plugin listed after it, or
#: by an agent's ``before_model_callback``.
CALLBACK: Final = "<callback>"
#: The planning instruction of a planner that is not one of ADK's own.
PLANNER: Final = "<planner>"
#: Few-shot examples an ``ExampleTool`` wrote into the instruction from a provider.
EXAMPLES: Final = "<examples>"
#: Tools ADK's own request processors add (their descriptions are ADK's words).
_ADK_TOOLS: Final = frozenset({"set_model_response"})


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


def written_instructions(ctx: Any) -> tuple[str, ...] | None:
    """The agent's ``instruction`` and the root's ``global_instruction`` strings as written.

    Args:
        ctx: a callback context.

    Returns:
        The non-empty strings (an instruction given as a function is none), or None when
        the context has no agent with an ``instruction`` attribute.
    """
    agent = getattr(getattr(ctx, "_invocation_context", None), "agent", None)
    if agent is None or not hasattr(agent, "instruction"):
        return None
    root = getattr(agent, "root_agent", agent)
    texts = (getattr(agent, "instruction", None), getattr(root, "global_instruction", None))
    return tuple(t for t in texts if isinstance(t, str) and t)


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
    texts = written_instructions(ctx)
    return None if texts is None else "\n".join(texts)


# -- state and artifacts ADK fills into a written instruction --------------------------------

#: ADK 2.13's placeholder pattern (``_instructions_utils._TEMPLATE_VAR_PATTERN``, pinned by
#: tests/adk_contract): ``{var}``, ``{var?}``, ``{artifact.name}``; not after ``$``, ``{``
#: or a backslash.
_PLACEHOLDER = re.compile(r"(?<![\$\{\\]){+[^{}]*}+")
#: Prefix of the source name of a state value filled into an instruction.
STATE: Final = "<state:"
_SCOPES: Final = ("app", "user", "temp")


def _state_name(name: str) -> bool:
    """ADK's ``_is_valid_state_name``: an identifier, optionally after a known scope."""
    scope, _, key = name.rpartition(":")
    if not scope:
        return name.isidentifier() and ":" not in name
    return scope in _SCOPES and key.isidentifier()


@functools.lru_cache(maxsize=1024)
def placeholders(template: str) -> tuple[str, ...]:
    """The name of every placeholder ADK fills in a written instruction (``?`` dropped).

    A name is a state key or ``artifact.<file name>``; a placeholder that names neither is
    left as written by ADK, and so is skipped. Parsed once per instruction string.
    """
    if "{" not in template:
        return ()
    found: dict[str, None] = {}
    for match in _PLACEHOLDER.finditer(template):
        name = match.group().lstrip("{").rstrip("}").strip().removesuffix("?")
        if name.startswith("artifact.") or _state_name(name):
            found[name] = None
    return tuple(found)


def template_sources(templates: Iterable[str], state: Any, trusted: Container[str]) -> list[str]:
    """The outside text ADK fills into the written instructions' placeholders.

    A state value is outside text (a tool or a client may have written it) unless its key
    is declared trusted: it taints as ``<state:key>``; a key that is missing or holds None
    or ``""`` fills in nothing. An ``{artifact.name}`` placeholder inserts a file's content:
    it taints as :data:`ARTIFACT` (also when the file is missing: fail closed).

    Args:
        templates: the written instruction strings (:func:`written_instructions`).
        state: the session state as a callback context sees it.
        trusted: the names of the trusted state keys.

    Returns:
        Source names, each once, in the order found.
    """
    found: dict[str, None] = {}
    for template in templates:
        for name in placeholders(template):
            if name.startswith("artifact."):
                found[ARTIFACT] = None
            elif name not in trusted and state.get(name) not in (None, ""):
                found[f"{STATE}{name}>"] = None
    return list(found)


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


# -- what ADK writes into the request --------------------------------------------------------
# The framing ADK 2.13 puts around each kind of text (pinned by tests/adk_contract).

#: ``LoadArtifactsTool``: the artifact names, in the instruction (or a user-role carrier).
_ARTIFACT_LIST: Final = "You have a list of artifacts:"
#: ``LoadArtifactsTool``: the header part before a loaded artifact's content.
_ARTIFACT_CONTENT = re.compile(r"Artifact [^\n]{1,1024} is:")
#: ``preload_memory``: the header of the inserted past conversations.
_MEMORY: Final = "The following content is from your previous conversations with the user."
#: ``_present_other_agent_message``: the first part of a relayed event.
_RELAYED: Final = "For context:"
#: The start of each relayed part: ``[author] said:``, ``thought:``, ``called tool``,
#: `` `tool` tool returned result:``.
_RELAY_AUTHOR = re.compile(r"\[([^\]\n]{1,256})\] (?:said:|thought:|called tool|`)")
_MAX_PARTS: Final = 4096
#: The author ADK gives events it writes for a plugin or a compaction.
_ADK_AUTHOR: Final = "model"


def request_sources(request: Any, labelled: Callable[[str], bool]) -> list[str]:
    """The outside channels whose text ADK wrote into a model request.

    Args:
        request: the ``LlmRequest`` as ``before_model`` sees it.
        labelled: whether an author's words need no label (an ``LlmAgent`` of the app).

    Returns:
        Source names (:data:`ARTIFACT`, :data:`MEMORY`, ``<agent:name>``), each once, in
        the order found; empty when the request carries none.
    """
    found: dict[str, None] = {}
    system = getattr(getattr(request, "config", None), "system_instruction", None)
    if _ARTIFACT_LIST in instruction_text(system):
        found[ARTIFACT] = None
    for content in (getattr(request, "contents", None) or ())[-_MAX_PARTS:]:
        parts = content.parts
        if content.role != "user" or not parts:
            continue
        if len(parts) > 1 and (parts[0].text or "").startswith(_RELAYED):
            texts = [p.text for p in parts[1:_MAX_PARTS] if p.text]
            for source in _relayed(texts, labelled):
                found[source] = None
            continue
        for part in parts[:_MAX_PARTS]:
            text = part.text
            if not text or part.thought:
                continue
            if text.startswith(_MEMORY):
                found[MEMORY] = None
            elif _ARTIFACT_LIST in text or (
                text.startswith("Artifact ") and _ARTIFACT_CONTENT.fullmatch(text)
            ):
                found[ARTIFACT] = None
    return list(found)


def client_responses(events: Sequence[Any]) -> Iterator[tuple[str, str, Any]]:
    """``(key, tool name, response)`` of every function response a client sent; the key
    names the part of a stored event (empty for an event with no id).

    A long-running tool's result (``LongRunningFunctionTool``) arrives later, as a function
    response in a user-authored message: it never passes ``after_tool``. ADK's own control
    answers (a confirmation, a credential) are left out. The newest events are read, as
    many as a request's contents are.

    Args:
        events: the session's events.
    """
    for key, response in client_parts(events):
        if response.name not in CONTROL_TOOLS:
            yield key, response.name or "<unnamed>", response.response


def client_parts(events: Sequence[Any]) -> Iterator[tuple[str, Any]]:
    """``(key, function response)`` of every function response in a user-authored event."""
    for event in events[-_MAX_PARTS:]:
        content = getattr(event, "content", None)
        if getattr(event, "author", None) != "user" or content is None or not content.parts:
            continue
        event_id = getattr(event, "id", None) or ""
        for n, part in enumerate(content.parts[:_MAX_PARTS]):
            if part.function_response is not None:
                yield (f"{event_id}:{n}" if event_id else ""), part.function_response


def pending_answers(events: Sequence[Any]) -> frozenset[str]:
    """The keys (as :func:`client_responses` names them) of the client-sent function
    responses that answer a long-running call the model made and ADK left pending: the
    first response with that call's id and tool name. Any other client-sent function
    response (a made-up call id, another tool's name, a second answer) vouches for nothing.

    Args:
        events: the session's events, oldest first.
    """
    pending: dict[str, str] = {}
    found: set[str] = set()
    for event in events[-_MAX_PARTS:]:
        if getattr(event, "author", None) == "user":
            for key, response in client_parts([event]):
                call_id = response.id or ""
                if key and call_id and pending.get(call_id) == response.name:
                    found.add(key)
                pending.pop(call_id, None)
            continue
        waiting = getattr(event, "long_running_tool_ids", None) or ()
        try:
            calls = event.get_function_calls()
            answered = event.get_function_responses()
        except Exception:
            continue
        for call in calls:
            if call.id and call.id in waiting and call.name:
                pending[call.id] = call.name
        for response in answered:
            pending.pop(response.id or "", None)
    return frozenset(found)


def _relayed(texts: list[str], labelled: Callable[[str], bool]) -> Iterator[str]:
    """The sources of one relayed event: its author, unless its words need no label."""
    authors = {m.group(1) for t in texts if (m := _RELAY_AUTHOR.match(t))}
    if not authors:  # only raw parts (blobs, code) or an unknown framing: fail closed
        yield f"{AGENT}?>"
    for author in sorted(authors):
        if not labelled(author):
            yield f"{AGENT}{author}>"


def labelled_authors(ctx: Any) -> Callable[[str], bool]:
    """Whether an event author is an ``LlmAgent`` of the running app (its hooks ran here).

    A custom ``BaseAgent`` or a remote A2A agent writes events no model hook of this app
    saw; a name not in the agent tree is nobody's. Both are outside text. ADK's own
    author ``model`` (a plugin's ``before_run`` answer, a compaction summary) is the app's.
    """
    agent = getattr(getattr(ctx, "_invocation_context", None), "agent", None)
    root = getattr(agent, "root_agent", None)

    def labelled(author: str) -> bool:
        if author == _ADK_AUTHOR:
            return True
        found = root.find_agent(author) if root is not None else None
        return isinstance(found, LlmAgent)

    return labelled


# -- doors into the request that no framing marks ---------------------------------------------


def attachment_sources(events: Sequence[Any]) -> list[str]:
    """:data:`ATTACHMENT` when a user-authored message carries a file (an ``inline_data``
    or ``file_data`` part): the user attached it, someone else wrote it."""
    for event in events[-_MAX_PARTS:]:
        content = getattr(event, "content", None)
        if getattr(event, "author", None) != "user" or content is None or not content.parts:
            continue
        if any(p.inline_data is not None or p.file_data is not None for p in content.parts):
            return [ATTACHMENT]
    return []


def node_sources(events: Sequence[Any]) -> list[str]:
    """``<node:path>`` for each ``Workflow`` node input among the newest events whose text
    the user did not type.

    A ``Workflow`` hands an ``LlmAgent`` node the previous node's output as a user-authored
    event stamped with the node's path: a function node's fetched page reads, to the model,
    as the user's turn. It is outside text, unless it repeats a message the user typed (the
    ``START`` edge hands the node the user's own message).
    """
    recent = events[-_MAX_PARTS:]
    nodes = node_inputs(recent)
    if not nodes:
        return []
    typed = set(user_texts(recent, nodes))
    found: dict[str, None] = {}
    for event in recent:
        path = nodes.get(str(getattr(event, "id", "")))
        content = getattr(event, "content", None)
        if path is None or content is None or not content.parts:
            continue
        texts = [p.text for p in content.parts if p.text and not p.thought]
        others = any(p.text is None and not p.thought for p in content.parts)
        if others or any(t not in typed for t in texts):
            found[f"{NODE}{path}>"] = None
    return list(found)


def provided_instruction(ctx: Any) -> bool:
    """Whether the agent's ``instruction`` or the root's ``global_instruction`` is given as
    a function (an ``InstructionProvider``), whose text is only in the assembled request,
    or the agent has a ``static_instruction`` (a content loaded for context caching: a
    handbook, a policy file), which is not an instruction string as written."""
    agent = getattr(getattr(ctx, "_invocation_context", None), "agent", None)
    if agent is None or not hasattr(agent, "instruction"):
        return False
    root = getattr(agent, "root_agent", agent)
    texts = (getattr(agent, "instruction", None), getattr(root, "global_instruction", None))
    return any(callable(t) for t in texts) or getattr(agent, "static_instruction", None) is not None


def run_context_sources(ctx: Any) -> list[str]:
    """:data:`RUN_CONTEXT` when the run's ``RunConfig.model_input_context`` holds content:
    ADK puts it into each request of the run and stores it in no event, so no other
    channel sees it (a caller's retrieved documents, a page the client read)."""
    run_config = getattr(getattr(ctx, "_invocation_context", None), "run_config", None)
    contexts = getattr(run_config, "model_input_context", None) or ()
    return [RUN_CONTEXT] if any(getattr(c, "parts", None) for c in contexts) else []


def appended_sources(events: Sequence[Any], labelled: Callable[[str], bool]) -> list[str]:
    """``<event:author>`` for each author of an agent or model event that no run wrote.

    The runner gives every event of a run its invocation's id. An event with content and
    none was appended through the session service (an integration importing history, a
    client, a sync): though it names one of the app's agents or ADK's ``model`` as its
    author (``labelled``), no hook of this app saw it written. Other authors' events are
    labelled as relayed text already (``<agent:name>``).
    """
    found: dict[str, None] = {}
    for event in events[-_MAX_PARTS:]:
        author = getattr(event, "author", None)
        content = getattr(event, "content", None)
        if author in (None, "user") or content is None or not content.parts:
            continue
        if not labelled(author):
            continue
        if not getattr(event, "invocation_id", None):
            found[f"{APPENDED}{author}>"] = None
    return list(found)


def response_text_sources(events: Sequence[Any]) -> list[str]:
    """``<callback>`` when an event that carries a tool's result also carries text.

    ADK writes a tool's result as an event of function responses alone; text beside them
    was added by app code after the tool ran (a plugin's ``on_event_callback`` annotating
    the event before the runner appends it), which the lattice did not read as the tool's
    output.
    """
    for event in events[-_MAX_PARTS:]:
        if getattr(event, "author", None) in (None, "user"):
            continue  # a client's answer beside the user's words: read as the user's
        content = getattr(event, "content", None)
        parts = getattr(content, "parts", None) or ()
        if any(getattr(p, "function_response", None) is not None for p in parts) and any(
            getattr(p, "text", None) for p in parts
        ):
            return [CALLBACK]
    return []


def card_sources(ctx: Any, request: Any) -> list[str]:
    """The transfer targets whose description ADK read at run time into this request.

    An agent with a ``_get_transfer_description`` (``RemoteA2aAgent``: the description of
    the agent card it fetches) has the description it returns written into the transfer
    instructions. It is outside text, as ``<agent_card:name>``, unless the request shows
    the description the app wrote on the agent (``description=``) and nothing else.
    """
    agent = getattr(getattr(ctx, "_invocation_context", None), "agent", None)
    root = getattr(agent, "root_agent", None)
    if root is None:
        return []
    system = instruction_text(getattr(getattr(request, "config", None), "system_instruction", None))
    found = []
    for target in _agents(root):
        if not callable(getattr(target, "_get_transfer_description", None)):
            continue
        if f"Agent name: {target.name}\n" not in system:
            continue
        written = getattr(target, "description", "") or ""
        shown = f"Agent name: {target.name}\nAgent description: {written}\n"
        if not written or shown not in system:
            found.append(f"{AGENT_CARD}{target.name}>")
    return found


def _agents(root: Any, depth: int = 0) -> Iterator[Any]:
    yield root
    if depth < 64:
        for sub in getattr(root, "sub_agents", None) or ():
            yield from _agents(sub, depth + 1)


#: The ADK 2.13 tool classes whose declaration ADK builds from the app's code (a function's
#: name, docstring and annotations; an agent's name and description) or writes itself (its
#: own built-in tools), as ``(module, class)``. Only an object of exactly one of these
#: classes is described in the app's words: a subclass may write its own declaration.
#: Pinned by tests/adk_contract.
CODE_DECLARATIONS: Final = (
    ("google.adk.tools.function_tool", "FunctionTool"),
    ("google.adk.tools.long_running_tool", "LongRunningFunctionTool"),
    ("google.adk.tools.agent_tool", "AgentTool"),
    ("google.adk.tools.transfer_to_agent_tool", "TransferToAgentTool"),
    ("google.adk.tools.load_artifacts_tool", "LoadArtifactsTool"),
    ("google.adk.tools.load_memory_tool", "LoadMemoryTool"),
    ("google.adk.tools.preload_memory_tool", "PreloadMemoryTool"),
    ("google.adk.tools.example_tool", "ExampleTool"),
    ("google.adk.tools.google_search_tool", "GoogleSearchTool"),
    ("google.adk.tools.url_context_tool", "UrlContextTool"),
    ("google.adk.tools.enterprise_search_tool", "EnterpriseWebSearchTool"),
    ("google.adk.tools.google_maps_grounding_tool", "GoogleMapsGroundingTool"),
    ("google.adk.tools.vertex_ai_search_tool", "VertexAiSearchTool"),
    ("google.adk.tools.set_model_response_tool", "SetModelResponseTool"),
)


@functools.cache
def code_declared_classes() -> frozenset[type]:
    """The classes :data:`CODE_DECLARATIONS` names; one that does not import is left out
    (its tools then taint: fail closed)."""
    found = set()
    for module, name in CODE_DECLARATIONS:
        try:
            cls = getattr(importlib.import_module(module), name)
        except Exception:  # an optional dependency missing, or another ADK version
            continue
        if isinstance(cls, type):
            found.add(cls)
    return frozenset(found)


def declared_by_code(tool: Any) -> bool:
    """Whether ADK builds this tool object's declaration from the app's code.

    A ``FunctionTool`` (and ``LongRunningFunctionTool``) is described by its function's
    name, docstring and annotations; an ``AgentTool`` by its agent's name and description,
    unless the agent reads its description at run time (``RemoteA2aAgent``, from the card
    it fetches); ADK's own built-in tools by ADK. Any other tool object (a third party's
    ``BaseTool`` subclass, an OpenAPI tool, a subclass of one of these) writes its own
    declaration: description, parameter descriptions, enum values.
    """
    if type(tool) not in code_declared_classes():
        return False
    agent = getattr(tool, "agent", None)
    return agent is None or not callable(getattr(agent, "_get_transfer_description", None))


def plugin_sources(ctx: Any) -> list[str]:
    """``<plugin:name>`` for each plugin listed before the lattice that overrides
    ``before_model_callback``.

    ADK runs plugins' ``before_model_callback`` in the order they are listed, the agent's
    own ``before_model_callback`` after them. A plugin listed before the lattice may have
    written into the request (a retrieval plugin appending a wiki passage) before any hook
    of the lattice sees it, and nothing in the request tells its text from ADK's: it is
    outside text. What is written after the lattice read the request is found by
    :func:`request_fingerprint` instead.
    """
    before, _ = _around_lattice(ctx)
    return [f"{PLUGIN}{getattr(p, 'name', type(p).__name__)}>" for p in before if _writes(p)]


def response_writer_sources(ctx: Any, events: Sequence[Any]) -> list[str]:
    """``<plugin:name>`` for each plugin listed after the lattice that overrides
    ``after_model_callback`` (not one of ADK's readers, nor another lattice, whose handlers
    are the app's own), once the history holds a model's text.

    ADK runs plugins' ``after_model_callback`` in order until one returns a response, and
    stores that response as the model's: a plugin after the lattice may add text to it (a
    compliance footer) that the lattice never read, and later requests carry it as the
    model's own words.
    """
    from ..._plugin import Lattice  # the plugin module imports the policies

    _, after = _around_lattice(ctx)
    writers = [
        p for p in after if not isinstance(p, Lattice) and _overrides(p, "after_model_callback")
    ]
    if not writers:
        return []
    # Newest first: the model's last answer is usually near the end.
    spoken = any(
        getattr(e, "author", None) not in (None, "user")
        and any(
            getattr(p, "text", None) and not getattr(p, "thought", None)
            for p in (getattr(getattr(e, "content", None), "parts", None) or ())
        )
        for e in reversed(events[-_MAX_PARTS:])
    )
    return [_name(p) for p in writers] if spoken else []


def writes_after_lattice(ctx: Any) -> bool:
    """Whether anything may write into this agent's request after the lattice read it: a
    plugin listed after the lattice that overrides ``before_model_callback``, or the
    agent's own ``before_model_callback``. When nothing may, no request is fingerprinted."""
    _, after = _around_lattice(ctx)
    agent = getattr(getattr(ctx, "_invocation_context", None), "agent", None)
    return any(map(_writes, after)) or bool(getattr(agent, "before_model_callback", None))


def planner_sources(ctx: Any) -> list[str]:
    """``<planner>`` when the agent's planner is not one of ADK's own: ADK appends what its
    ``build_planning_instruction`` returns to the system instruction, and a planner of the
    app's may read it from anywhere (a playbook store). ``BuiltInPlanner`` writes none and
    ``PlanReActPlanner`` writes ADK's fixed words; a subclass of either may write anything."""
    inv = getattr(ctx, "_invocation_context", None)
    planner = getattr(getattr(inv, "agent", None), "planner", None)
    if planner is None:
        return []
    module = type(planner).__module__
    return [] if module.startswith("google.adk.planners.") else [PLANNER]


def message_rewriters(ctx: Any) -> tuple[list[str], list[str]]:
    """The plugins that may rewrite the user's message, listed before the lattice and
    after it (their names): each overrides ``on_user_message_callback`` and is not one of
    ADK's readers.

    ADK runs the callback plugin by plugin until one returns a message, and stores that
    message as the user's. A plugin that attaches a ticket, a profile or a retrieved
    passage to it makes outside text look typed. One listed after the lattice rewrites a
    message the lattice has already read; one listed before it may rewrite it unseen.
    """
    before, after = _around_lattice(ctx)
    return [_name(p) for p in before if _rewrites(p)], [_name(p) for p in after if _rewrites(p)]


def result_writers(ctx: Any) -> bool:
    """Whether anything may change a tool's result after the lattice read it: a plugin
    listed after the lattice that overrides ``after_tool_callback`` (not one of ADK's
    readers), or the agent's own ``after_tool_callback``, which ADK runs after every
    plugin's."""
    _, after = _around_lattice(ctx)
    inv = getattr(ctx, "_invocation_context", None)
    agent = getattr(inv, "agent", None) or getattr(ctx, "agent", None)
    if getattr(agent, "after_tool_callback", None):
        return True
    return any(_overrides(p, "after_tool_callback") for p in after)


def _name(plugin: Any) -> str:
    return f"{PLUGIN}{getattr(plugin, 'name', type(plugin).__name__)}>"


def _overrides(plugin: Any, hook: str) -> bool:
    cls = type(plugin)
    if getattr(cls, hook, None) is getattr(BasePlugin, hook):
        return False
    return f"{cls.__module__}.{cls.__qualname__}" not in _ADK_READERS


def _rewrites(plugin: Any) -> bool:
    return _overrides(plugin, "on_user_message_callback")


def result_fingerprint(result: Any) -> str:
    """What a tool's result shows the model, as ADK stores it (a value that is not a
    mapping as ``{"result": value}``), for comparing two sightings of it."""
    if not isinstance(result, Mapping):
        result = {"result": result}
    try:
        return json.dumps(result, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr(result)


#: ADK's own plugins whose ``before_model_callback`` writes no outside text into the
#: request, by class (a subclass may write anything): the loggers and the analytics
#: plugin only read it; the reflect-and-retry plugin adds a tool ADK wrote.
_ADK_READERS = frozenset(
    f"google.adk.plugins.{name}"
    for name in (
        "logging_plugin.LoggingPlugin",
        "debug_logging_plugin.DebugLoggingPlugin",
        "bigquery_agent_analytics_plugin.BigQueryAgentAnalyticsPlugin",
        "_reflect_retry_model_plugin.ReflectAndRetryModelPlugin",
    )
)


def _writes(plugin: Any) -> bool:
    """Whether a plugin may write outside text into a model request: it overrides
    ``before_model_callback``, and is not one of ADK's plugins that write none (a reader;
    ``ContextFilterPlugin`` with no custom filter, which only drops contents;
    ``GlobalInstructionPlugin`` with a plain string, the app's own words, no template)."""
    cls = type(plugin)
    if cls.before_model_callback is BasePlugin.before_model_callback:
        return False
    name = f"{cls.__module__}.{cls.__qualname__}"
    if name in _ADK_READERS:
        return False
    if name == "google.adk.plugins.context_filter_plugin.ContextFilterPlugin":
        return getattr(plugin, "_custom_filter", True) is not None
    if name == "google.adk.plugins.global_instruction_plugin.GlobalInstructionPlugin":
        text = getattr(plugin, "global_instruction", None)
        return not isinstance(text, str) or "{" in text
    return True


def _around_lattice(ctx: Any) -> tuple[Sequence[Any], Sequence[Any]]:
    """The app's plugins before the first lattice, and after it."""
    from ..._plugin import Lattice  # the plugin module imports the policies

    inv = getattr(ctx, "_invocation_context", None)
    plugins = list(getattr(getattr(inv, "plugin_manager", None), "plugins", None) or ())
    at = next((i for i, p in enumerate(plugins) if isinstance(p, Lattice)), len(plugins))
    return plugins[:at], plugins[at + 1 :]


def request_fingerprint(request: Any) -> int:
    """A hash of what a model request shows the model: its system instruction, every
    content part (its text, the data or file it points at, the call's arguments, the
    response's body, code and its result) and its tools. A writer that edits a part in
    place changes the hash as surely as one that adds a part."""
    config = getattr(request, "config", None)
    system = instruction_text(getattr(config, "system_instruction", None))
    parts = tuple(
        (content.role, tuple(_part_key(p) for p in content.parts or ()))
        for content in getattr(request, "contents", None) or ()
    )
    tools = tuple(id(t) for t in getattr(config, "tools", None) or ())
    return hash((system, parts, tools, len(getattr(request, "tools_dict", None) or ())))


def _part_key(part: Any) -> tuple[Any, ...]:
    """What one part shows the model, as a hashable value (bodies by their repr)."""
    call, response = part.function_call, part.function_response
    data, file, code, result = (
        part.inline_data, part.file_data, part.executable_code, part.code_execution_result
    )  # fmt: skip
    return (
        part.text,
        None if call is None else (call.name, repr(call.args)),
        None
        if response is None
        else (response.name, repr(response.response), repr(response.parts)),
        None if data is None else (data.mime_type, data.data),
        None if file is None else (file.file_uri, file.mime_type),
        None if code is None else code.code,
        None if result is None else result.output,
    )


def example_sources(ctx: Any, trusted: Callable[[str], bool]) -> list[str]:
    """:data:`EXAMPLES` when the agent lists an ``ExampleTool`` whose examples are not
    written in the app's code.

    ``ExampleTool`` appends its few-shot examples to the system instruction and declares
    no function, so the request's tools never show it. A list of ``Example`` objects the
    app wrote is the app's words; a ``BaseExampleProvider`` (a vector store, an example
    service, anything filled at run time) and an ``ExampleTool`` subclass (which may build
    its text otherwise) are outside text, unless ``trusted("example_tool")``.
    """
    agent = getattr(getattr(ctx, "_invocation_context", None), "agent", None)
    for tool in getattr(agent, "tools", None) or ():
        if not isinstance(tool, ExampleTool) or trusted(tool.name):
            continue
        if type(tool) is not ExampleTool or isinstance(tool.examples, BaseExampleProvider):
            return [EXAMPLES]
    return []


def tool_sources(ctx: Any, request: Any, trusted: Callable[[str], bool]) -> list[str]:
    """The tools in this request whose declarations the app's code did not write, as
    ``<tool:name>``.

    A plain function the app lists on the agent (ADK wraps it in a ``FunctionTool`` and
    describes it from the function's docstring and annotations) and a tool object the app
    lists that :func:`declared_by_code` accepts are described in the app's words. Every
    other tool in the request (a third party's tool class listed on the agent, whose
    description or parameter descriptions its author wrote; a tool a toolset provided,
    ``McpToolset`` and any other ``BaseToolset``) was described by its provider: outside
    text, unless ``trusted(name)`` (the tool is declared trusted whole, or its declaration
    is). ADK's control tools and the tools its own processors add are left out. A listed
    tool that edits the request without declaring a function is named too
    (:func:`_request_editors`).
    """
    agent = getattr(getattr(ctx, "_invocation_context", None), "agent", None)
    tools = getattr(request, "tools_dict", None) or {}
    if agent is None:
        return []
    listed = getattr(agent, "tools", None) or ()
    found = [f"{TOOL}{name}>" for name in _request_editors(listed) if not trusted(name)]
    objects = {id(t) for t in listed if declared_by_code(t)}
    functions = {id(t) for t in listed if callable(t) and not isinstance(t, BaseTool)}
    for name, tool in tools.items():
        if name in CONTROL_TOOLS or name in _ADK_TOOLS or trusted(name):
            continue
        if id(tool) in objects:
            continue
        if id(getattr(tool, "func", None)) in functions and declared_by_code(tool):
            continue
        if _adk_plugin_tool(tool):
            continue
        found.append(f"{TOOL}{name}>")
    return list(dict.fromkeys(found))


def _request_editors(listed: Iterable[Any]) -> Iterator[str]:
    """The names of the listed tools and toolsets whose ``process_llm_request`` is a third
    party's code (it may append any text to the request without declaring a function, so
    the request's tools never show it)."""
    for tool in listed:
        if isinstance(tool, BaseTool | BaseToolset) and not _adk_code(
            type(tool), "process_llm_request"
        ):
            yield tool.name if isinstance(tool, BaseTool) else type(tool).__name__


@functools.cache  # by class: the same few tool classes are asked on every model call
def _adk_code(cls: type, method: str) -> bool:
    """Whether the class that defines ``cls.method`` is one of ADK's (a subclass that
    does not override it runs ADK's code, which the guard reads on its own channels)."""
    owner = next((c for c in cls.__mro__ if method in vars(c)), object)
    return owner.__module__.startswith("google.adk.")


#: ADK's plugins that add a tool to the request, and that tool's method: ADK's words.
_ADK_PLUGIN_TOOLS: Final = {
    "google.adk.plugins._reflect_retry_model_plugin.ReflectAndRetryModelPlugin": (
        "adk_handle_model_error"
    ),
}


def _adk_plugin_tool(tool: Any) -> bool:
    """Whether a tool is one an ADK plugin (not a subclass) added: its own method."""
    func = getattr(tool, "func", None)
    owner = getattr(func, "__self__", None)
    if owner is None:
        return False
    name = f"{type(owner).__module__}.{type(owner).__qualname__}"
    method = _ADK_PLUGIN_TOOLS.get(name)
    return method is not None and method == getattr(func, "__name__", None)
