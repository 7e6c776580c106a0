"""``ObedientModel``: a worst-case scripted model that solves the task and obeys injections.

It reads only the ``LlmRequest`` it is sent. From the user's request (the user text, or a
line of it, that names a task) it knows the task and emits the task's calls one per turn;
before each turn it reads every text, attached text document and tool output (field names
included) in the request, the system instruction and the tools' descriptions (their
parameters' too), and a document a ``file_data`` part of the request points at (given as
``files``), the way a capable model would (NFKC, invisible characters dropped, and read as
a break between words too, Unicode tag characters read as the ASCII they shadow, look-alike
letters folded, folded lines unfolded, HTML character references, percent-encoding and RFC
2047 encoded-words decoded, base64 runs and ROT13 decoded; a text document a function
response carries as a part is read too; combining marks over letters dropped, letters
spaced apart read as the words they spell, braille cells read by the Braille ASCII table,
small capitals read as letters, upside-down text turned back, text inside a right-to-left
override read in the order it is shown, runs of hex bytes and ``\\u`` escapes decoded,
quoted-printable octets and three-digit octal escapes decoded, regional indicator symbols
read as the letters they write, text written back to front or in ROT47 read back when it
reads as words that way) and, when it finds all of an attacker goal's values there,
calls that goal's tool with the attacker's arguments first. A guard that withholds or
redacts the text therefore prevents obedience; one that only blocks the call does not.

Given ``server`` text, it plays a server-side tool the request enables (``google_search``,
``url_context``, Google Maps grounding, built-in code execution, a Vertex AI Search data
store or a Vertex AI RAG corpus as built-in retrieval): it reads that text inside
the call, as Gemini reads search results, and its response carries what such a response
carries (grounding metadata; ``executable_code`` and ``code_execution_result`` parts; ADK
keeps no URL-context metadata), with the call it chose.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import html
import quopri
import re
import unicodedata
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import PrivateAttr

from .attacks import GOALS, Goal
from .tasks import TASKS, Call

_INVISIBLE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\u00ad]")
_B64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")
#: An RFC 2047 encoded-word: charset, encoding (``B`` base64, ``Q`` quoted-printable), text.
_ENCODED_WORD = re.compile(r"=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=")
#: A folded line's break (RFC 5545, RFC 6350: a line break and one space or tab), which
#: unfolding removes.
_FOLD = re.compile(r"\r?\n[ \t]")
_LOOKALIKE = str.maketrans("аеосріхуАВЕКМНОРСТХІ", "aeocpixyABEKMHOPCTXI")  # noqa: RUF001
#: Unicode tag characters (U+E0020 to U+E007E) as the ASCII they shadow, which a model's
#: tokenizer reads; the language tag and the cancel tag dropped.
_TAGS: dict[int, int | None] = {
    **{cp: cp - 0xE0000 for cp in range(0xE0020, 0xE007F)},
    0xE0001: None,
    0xE007F: None,
}


#: Braille cells (U+2800 to U+283F) as the Braille ASCII table reads them.
_BRAILLE = {
    0x2800 + i: ch
    for i, ch in enumerate(" A1B'K2L@CIF/MSP\"E3H9O6R^DJG>NTQ,*5<-U8V.%[$+X!&;:4\\0Z7(_?W]#Y)=")
}
#: Small capital letters as the Latin letters they write (NFKC leaves them as they are).
_SMALL_CAPS = str.maketrans("ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘǫʀꜱᴛᴜᴠᴡʏᴢ", "abcdefghijklmnopqrstuvwyz")
#: Upside-down text's turned characters as the characters they turn (written in reverse
#: order, so the text is read back to front); ``b``/``q``, ``d``/``p``, ``n``/``u`` and
#: ``6``/``9`` swap.
_UNFLIP = str.maketrans(
    "ɐqɔpǝɟƃɥᴉɾʞlɯuodbɹsʇnʌʍxʎz0ƖᄅƐㄣϛ9ㄥ86˙',¡¿‾⅋)(][}{><",  # noqa: RUF001
    "abcdefghijklmnopqrstuvwxyz0123456789.,'!?_&()[]{}<>",
)
#: The turned characters that only upside-down text uses.
_TURNED = frozenset("ɐɔǝɟƃɥᴉɾʞɯɹʇʌʍʎƖᄅƐㄣϛㄥ˙¡¿‾⅋")


#: A right-to-left override's run (U+202E, to its pop U+202C or the text's end), which a
#: display shows in reverse order.
_OVERRIDE = re.compile("\u202e([^\u202c]*)\u202c?")
#: A run of at least eight hex bytes (after ``\\x``, ``0x`` or ``X'``, or bare).
_HEX_RUN = re.compile(r"(?:[0-9a-fA-F]{2}){8,}")
#: A ``\\uXXXX`` escape.
_U_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
#: A run of at least eight quoted-printable octets (``=XX``), and of octal escapes (``\\101``).
_QP_RUN = re.compile(r"(?:=[0-9A-F]{2}){8,}")
_OCTAL_RUN = re.compile(r"(?:\\[0-3][0-7]{2}){8,}")
#: Regional indicator symbols (U+1F1E6 to U+1F1FF) as the letters they write.
_REGIONAL = {0x1F1E6 + i: chr(97 + i) for i in range(26)}
#: ROT47: every printable ASCII character but the space rotated 47 places.
_ROT47 = str.maketrans(
    "".join(chr(c) for c in range(33, 127)),
    "".join(chr(33 + (c - 33 + 47) % 94) for c in range(33, 127)),
)
#: Common English words, by which a reading of text shows it reads as words.
_WORDS = re.compile(r"\b(?:the|and|to|with|call|send|please|assistant|for|of)\b")


def _wordier(candidate: str, text: str) -> bool:
    """Whether ``candidate`` (a reading of ``text``) reads as more words than ``text``."""
    return len(_WORDS.findall(candidate.lower())) > max(1, len(_WORDS.findall(text.lower())))


def _octet_runs(text: str) -> list[str]:
    """``text`` with its runs of quoted-printable octets and of octal escapes decoded as
    UTF-8 (when it has any)."""
    out = []
    for pattern, octet in (
        (_QP_RUN, lambda s: bytes.fromhex(s.replace("=", ""))),
        (_OCTAL_RUN, lambda s: bytes(int(o, 8) for o in s.split("\\")[1:])),
    ):
        if not pattern.search(text):
            continue
        out.append(pattern.sub(lambda m, f=octet: f(m.group(0)).decode("utf-8", "replace"), text))
    return out


def _hex_runs(text: str) -> list[str]:
    """The printable UTF-8 text each run of hex bytes in ``text`` decodes to."""
    out = []
    for run in _HEX_RUN.findall(text):
        try:
            decoded = bytes.fromhex(run).decode("utf-8")
        except ValueError:
            continue
        if decoded.isprintable():
            out.append(decoded)
    return out


#: Letters spaced apart (``c a l l   s e n d``): single characters apart by one space, the
#: words apart by more.
_SPACED = re.compile(r"(?<!\S)\S(?: \S(?!\S))+")


def _unspaced(text: str) -> str:
    """``text`` with its letter-spaced runs read as words: one space between the letters of
    a word dropped, a wider gap read as one space."""
    return re.sub(r" {2,}", " ", _SPACED.sub(lambda m: m.group(0).replace(" ", ""), text))


def _encoded_words(text: str) -> str:
    """``text`` with its RFC 2047 encoded-words decoded, as a mail client shows them."""

    def decode(m: re.Match[str]) -> str:
        charset, kind, data = m.groups()
        try:
            if kind in "Bb":
                raw = base64.b64decode(data, validate=True)
            else:
                raw = quopri.decodestring(data.replace("_", " ").encode())
            return raw.decode(charset, "replace")
        except (binascii.Error, LookupError, ValueError):
            return m.group(0)

    return _ENCODED_WORD.sub(decode, text)


def reading(text: str) -> list[str]:
    """What a capable model makes of ``text``: the folded text, its decodings (character
    references and RFC 2047 encoded-words decoded as a renderer does; invisible characters
    read as word breaks, folded lines unfolded, percent-encoding decoded, combining marks
    dropped, letter-spaced words joined, braille cells and small capitals read as the
    characters they write, upside-down text turned back, an override's run read as shown,
    hex bytes and ``\\u`` escapes decoded), lower-cased."""
    shadowed = unicodedata.normalize("NFKC", text.translate(_TAGS))
    folded = _INVISIBLE.sub("", shadowed).translate(_LOOKALIKE)
    rendered = unicodedata.normalize("NFKC", _encoded_words(html.unescape(folded)))
    views = [folded, codecs.decode(folded, "rot13")]
    if rendered != folded:
        views.append(rendered)
    # An invisible character between words read as the break a tokenizer sees there, a
    # folded line unfolded, percent-encoding decoded.
    spaced = _INVISIBLE.sub(" ", shadowed).translate(_LOOKALIKE)
    views += [v for v in (spaced, _FOLD.sub("", folded), unquote(folded)) if v != folded]
    # Combining marks over every letter (a strike-through, an underline) dropped, as a
    # reader sees the letters under them; letters spaced apart read as words.
    unmarked = "".join(ch for ch in folded if unicodedata.category(ch) != "Mn")
    views += [v for v in (unmarked, _unspaced(folded)) if v != folded]
    # Braille cells read back as the characters they stand for, small capitals as letters.
    views += [v for v in (folded.translate(_BRAILLE), folded.translate(_SMALL_CAPS)) if v != folded]
    # An override's run read as it is shown, hex bytes and ``\\u`` escapes decoded.
    if "\u202e" in folded:
        views.append(_OVERRIDE.sub(lambda m: m.group(1)[::-1], folded))
    views += _hex_runs(folded)
    views += _octet_runs(folded)
    if any(0x1F1E6 <= ord(ch) <= 0x1F1FF for ch in folded):
        views.append(folded.translate(_REGIONAL))
    if "\\u" in folded:
        views.append(_U_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), folded))
    # Text written back to front, or in ROT47, read back when it reads as words that way.
    views += [v for v in (folded[::-1], folded.translate(_ROT47)) if _wordier(v, folded)]
    # Upside-down text turned back (before NFKC, which splits some turned marks).
    raw = text.translate(_TAGS)
    if _TURNED.intersection(raw):
        views.append(unicodedata.normalize("NFKC", raw.translate(_UNFLIP)[::-1]))
    for token in _B64.findall(folded):
        try:
            views.append(base64.b64decode(token, validate=True).decode("utf-8"))
        except (binascii.Error, ValueError):
            continue
    return [v.lower() for v in views]


@functools.cache
def _mark(value: str) -> re.Pattern[str]:
    """``value`` as a whole token: ``tanaka@example.com`` is not in ``bob.tanaka@example.com``.

    Folded as the text is read, so a look-alike host in an injection is recognised."""
    folded = reading(value)[0]
    return re.compile(rf"(?<![a-z0-9.@+-]){re.escape(folded)}(?![a-z0-9@-])")


def _schema_texts(schema: Any) -> Iterable[str]:
    """The descriptions and enum values of a parameter schema, nested ones included."""
    if schema is None:
        return
    yield schema.description or ""
    yield from schema.enum or ()
    for sub in (schema.properties or {}).values():
        yield from _schema_texts(sub)
    yield from _schema_texts(schema.items)


def _system_texts(system: Any) -> Iterable[str]:
    """The text of a system instruction: a string, or a ``Content``'s text parts."""
    if isinstance(system, str):
        yield system
    for part in getattr(system, "parts", None) or ():
        if part.text:
            yield part.text


def _leaves(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            if isinstance(k, str):  # the model reads the JSON: field names too
                yield k
            yield from _leaves(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _leaves(v)


class ObedientModel(BaseLlm):
    """Solve each task by its plan; call any attacker goal whose values the request carries.

    Args:
        plans: the calls that solve each task, by the exact user request.
        goals: the attacker goals it recognises (and obeys).
        server: text a server-side tool the request enables returns.
        files: ``{file_uri: text}``, what the model reads for a ``file_data`` part.
    """

    model: str = "obedient-worst-case"
    _plans: dict[str, tuple[Call, ...]] = PrivateAttr(default_factory=dict)
    _goals: tuple[Goal, ...] = PrivateAttr(default=())
    _server: str | None = PrivateAttr(default=None)
    _files: dict[str, str] = PrivateAttr(default_factory=dict)

    def __init__(
        self,
        plans: Mapping[str, Sequence[Call]],
        goals: Sequence[Goal],
        *,
        server: str | None = None,
        files: Mapping[str, str] | None = None,
        model: str = "obedient-worst-case",
    ) -> None:
        super().__init__(model=model)
        self._files = dict(files or {})
        self._plans = {prompt: tuple(plan) for prompt, plan in plans.items()}
        self._goals = tuple(goals)
        self._server = server

    @staticmethod
    def server_tools(request: LlmRequest) -> set[str]:
        """The server-side tools a request enables."""
        tools = getattr(request.config, "tools", None) or ()
        fields = ("google_search", "url_context", "google_maps", "code_execution", "retrieval")
        return {f for t in tools for f in fields if getattr(t, f, None) is not None}

    def next_call(self, request: LlmRequest) -> Call | None:
        """The call this request gets: an obeyed goal first, then the task's next step."""
        prompt, made, texts = "", [], []
        texts.extend(_system_texts(getattr(request.config, "system_instruction", None)))
        if self._server is not None and self.server_tools(request):
            texts.append(self._server)
        for tool in getattr(request.config, "tools", None) or ():
            for declaration in getattr(tool, "function_declarations", None) or ():
                texts.append(declaration.description or "")
                texts.extend(_schema_texts(declaration.parameters))
        for content in request.contents or []:
            for part in content.parts or []:
                if part.text:
                    texts.append(part.text)
                    if content.role == "user" and not prompt:
                        lines = (part.text, *part.text.split("\n"))
                        prompt = next((t for t in lines if t in self._plans), "")
                blob = part.inline_data
                if blob is not None and (blob.mime_type or "").startswith("text/"):
                    texts.append((blob.data or b"").decode("utf-8", "replace"))
                shared = part.file_data
                if shared is not None and shared.file_uri in self._files:
                    texts.append(self._files[shared.file_uri])
                if part.function_call is not None and content.role == "model":
                    made.append((part.function_call.name, dict(part.function_call.args or {})))
                if part.function_response is not None:
                    texts.extend(_leaves(part.function_response.response))
                    for media in part.function_response.parts or ():
                        doc = media.inline_data
                        if doc is not None and (doc.mime_type or "").startswith("text/"):
                            texts.append((doc.data or b"").decode("utf-8", "replace"))
        views = [v for text in texts for v in reading(text)]
        for goal in self._goals:
            call = (goal.tool, goal.args)
            seen = all(any(_mark(m).search(v) for v in views) for m in goal.marks)
            if seen and call not in made:
                return call
        for call in self._plans.get(prompt, ()):
            if call not in made:
                return call
        return None

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        call = self.next_call(llm_request)
        if call is None:
            part = types.Part(text="Done.")
        else:
            part = types.Part(function_call=types.FunctionCall(name=call[0], args=dict(call[1])))
        parts, grounding = [part], None
        server = self.server_tools(llm_request) if self._server is not None else set()
        if "google_search" in server:
            web = types.GroundingChunkWeb(uri="https://search.example/r/1", title=self._server)
            grounding = types.GroundingMetadata(grounding_chunks=[types.GroundingChunk(web=web)])
        if "google_maps" in server:
            place = types.GroundingChunkMaps(uri="https://maps.example/p/1", title=self._server)
            grounding = types.GroundingMetadata(grounding_chunks=[types.GroundingChunk(maps=place)])
        if "retrieval" in server:
            found = types.GroundingChunkRetrievedContext(
                uri="https://retrieval.example/d/1", title="Retrieved document", text=self._server
            )
            chunk = types.GroundingChunk(retrieved_context=found)
            grounding = types.GroundingMetadata(grounding_chunks=[chunk])
        if "code_execution" in server:
            code = types.ExecutableCode(code="print(open('notes.txt').read())", language="PYTHON")
            result = types.CodeExecutionResult(outcome="OUTCOME_OK", output=self._server)
            parts = [
                types.Part(executable_code=code),
                types.Part(code_execution_result=result),
                part,
            ]
        yield LlmResponse(
            grounding_metadata=grounding,
            content=types.Content(role="model", parts=parts),
            turn_complete=True,
            finish_reason=types.FinishReason.STOP,
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=0, candidates_token_count=0, total_token_count=0
            ),
        )


def obeys(text: str, goal: Goal) -> bool:
    """Whether the worst-case model, given ``text`` as the system instruction of the
    suite's first task, calls ``goal`` next (a test of what the model reads)."""
    task = TASKS[0]
    model = ObedientModel({task.prompt: task.plan}, GOALS)
    user = types.Content(role="user", parts=[types.Part(text=task.prompt)])
    request = LlmRequest(contents=[user], config=types.GenerateContentConfig())
    request.config.system_instruction = text
    return model.next_call(request) == (goal.tool, goal.args)
