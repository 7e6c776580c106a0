"""``SemanticResponseCache``: serve a paraphrase the answer of its question, never a near miss.

It is a :class:`ResponseCache` first: the exact key is looked up as there, and what is
stored is what that cache stores (the delivered, post-policy answer; never a fragment, an
error, a blocked answer or a function-call answer). On an exact miss, the last user text is
embedded and compared with the questions already answered in the same space: the same
scope (tenant and user, as the exact cache) and the same everything else (model, system
instruction, tools, generation config and every earlier turn, hashed as the exact key
hashes them). A stored question at or above the similarity threshold is served only when
no near-miss guard refuses it (:class:`NearMissGuards`).
"""

from __future__ import annotations

import inspect
import json
import logging
from collections import OrderedDict
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ._embedding import (
    Embedder,
    WordLlamaEmbedder,
    check_embedder,
    embedding_text,
    import_numpy,
    to_vector,
)
from ._guards import GUARDS, MAX_GUARDED_CHARS, NearMissGuards
from ._index import ScopeIndex
from ._keys import KEY_VERSION, Scope, request_digest, scope_digest
from ._report import report
from ._response import ResponseCache

if TYPE_CHECKING:
    from google.adk.agents.context import Context
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse

    from ..stores import Store

logger = logging.getLogger("adk_lattice.cache")

#: The similarity threshold measured on the tuning half of ``make bench-cache``.
DEFAULT_THRESHOLD: Final = 0.84
_MAX_PENDING: Final = 4096


@dataclass(frozen=True, slots=True)
class _Query:
    space: str
    vector: bytes
    text: str


class SemanticResponseCache(ResponseCache):
    """A response cache that also serves paraphrases, and refuses near misses.

    A hit on the exact key is served as by :class:`ResponseCache`. Otherwise, when the
    request ends with a user turn of text only (at most ``max_chars``), its text is embedded
    and compared, by cosine similarity, with every question answered in the same space (the
    same scope and the same request but for that text). The most similar one at or above
    ``threshold`` that no guard refuses is served; each refusal is counted by guard
    (``refused.<guard>``). A backend that fails is a miss (``backend_errors``), logged.

    A hit's ``custom_metadata["adk_lattice"]["cache"]`` says ``"match": "semantic"`` and
    the ``similarity``; an exact hit says ``"match": "exact"``.

    Args:
        store: a store keeping vectors (``MemoryStore``, ``SQLiteStore``, ``RedisStore``).
        embedder: a callable from a text to a vector, sync or async (default: the offline
            :class:`WordLlamaEmbedder`).
        threshold: the least cosine similarity of a near hit, above 0 and at most 1.
        guards: the near-miss guards (default ``NearMissGuards()``).
        dim: the vectors' dimension (default: the embedder's ``dim``, else read from one
            call of a sync embedder, else from its first vector).
        max_per_scope: most questions kept per space; past it the oldest go.
        max_candidates: most stored questions above the threshold checked per lookup.
        max_chars: longer questions are looked up exactly only.
        name, ttl, scope, coalesce, coalesce_timeout, no_cache_key, no_store_key, agents:
            as for :class:`ResponseCache`.

    Raises:
        TypeError: on a store that keeps no vectors, an embedder that is not callable or
            guards that are not ``NearMissGuards``. ValueError: on a threshold out of range,
            a bound below 1, or an embedder whose vector has another dimension than
            ``dim`` (or holds NaN, or is all zeros). ImportError: without numpy (the
            ``semantic`` extra).

    Example::

        Lattice(cache=[SemanticResponseCache(MemoryStore())])
    """

    _exact_match: Mapping[str, Any] = {"match": "exact"}

    def __init__(
        self,
        store: Store,
        *,
        embedder: Embedder | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        guards: NearMissGuards | None = None,
        dim: int | None = None,
        max_per_scope: int = 10_000,
        max_candidates: int = 32,
        max_chars: int = 1000,
        name: str = "semantic_cache",
        ttl: float | None = 3600.0,
        scope: Scope = "user",
        coalesce: bool = False,
        coalesce_timeout: float = 30.0,
        no_cache_key: str = "temp:adk_lattice.no_cache",
        no_store_key: str = "temp:adk_lattice.no_store",
        agents: Collection[str] | None = None,
    ) -> None:
        super().__init__(
            store,
            name=name,
            ttl=ttl,
            scope=scope,
            coalesce=coalesce,
            coalesce_timeout=coalesce_timeout,
            no_cache_key=no_cache_key,
            no_store_key=no_store_key,
            agents=agents,
        )
        import_numpy()
        if not getattr(store, "supports_vectors", False):
            raise TypeError(
                f"{type(store).__name__} keeps no vectors: use MemoryStore, SQLiteStore or"
                " RedisStore"
            )
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise ValueError(f"threshold must be a number above 0 and at most 1, got {threshold!r}")
        if not 0 < threshold <= 1:
            raise ValueError(f"threshold must be above 0 and at most 1, got {threshold!r}")
        for label, bound in (
            ("max_per_scope", max_per_scope),
            ("max_candidates", max_candidates),
            ("max_chars", max_chars),
        ):
            if isinstance(bound, bool) or not isinstance(bound, int) or bound < 1:
                raise ValueError(f"{label} must be an int of at least 1, got {bound!r}")
        if guards is None:
            guards = NearMissGuards()
        elif not isinstance(guards, NearMissGuards):
            raise TypeError(f"guards must be NearMissGuards, got {type(guards).__name__}")
        self.embedder: Embedder = check_embedder(
            WordLlamaEmbedder() if embedder is None else embedder
        )
        self.threshold = float(threshold)
        self.guards = guards
        self.max_per_scope = max_per_scope
        self.max_candidates = max_candidates
        self.max_chars = min(max_chars, MAX_GUARDED_CHARS)
        self.dim = dim if dim is not None else getattr(self.embedder, "dim", None)
        self._probe()
        self._index = ScopeIndex(store)
        self._pending: OrderedDict[str, _Query | None] = OrderedDict()
        self._failing = False
        for stat in ("semantic_hits", "near_refused", "backend_errors", "vectors_stored"):
            self._stats[stat] = 0
        for guard in GUARDS:
            self._stats[f"refused.{guard}"] = 0

    def _probe(self) -> None:
        """Check a sync embedder's vector once, so a wrong dimension fails here."""
        result = self.embedder("dimension probe")
        if inspect.isawaitable(result):
            close = getattr(result, "close", None)
            if callable(close):
                close()  # an async backend is checked on its first vector instead
            return
        self.dim = to_vector(result, self.dim).size

    # -- the request ------------------------------------------------------------------------

    def _question(self, llm_request: LlmRequest) -> str | None:
        """The last user turn's text, when the request ends with one of text only."""
        contents = llm_request.contents
        last = contents[-1] if contents else None
        if last is None or last.role != "user" or not last.parts:
            return None
        texts = []
        for part in last.parts:
            if part.text is None or part.thought or len(part.model_fields_set - _TEXT_FIELDS):
                return None
            texts.append(part.text)
        text = "\n".join(texts)
        return text if text.strip() and len(text) <= self.max_chars else None

    async def _query(self, ctx: Context, llm_request: LlmRequest) -> _Query | None:
        text = self._question(llm_request)
        if text is None:
            self._stats["semantic_ineligible"] += 1
            return None
        scope = scope_digest(self.scope, ctx)
        if scope is None:
            return None
        context = llm_request.model_copy(update={"contents": llm_request.contents[:-1]})
        try:
            rest = request_digest(context)
        except (TypeError, ValueError):
            return None
        vector = await self._embed(text, ctx)
        if vector is None:
            return None
        return _Query(f"sem:{KEY_VERSION}:{self.name}:{scope}:{rest}", vector, text)

    async def _embed(self, text: str, ctx: Context) -> bytes | None:
        try:
            result = self.embedder(embedding_text(text))
            if inspect.isawaitable(result):
                result = await result
            vector = to_vector(result, self.dim)
        except Exception as exc:  # fail open: a miss, counted and logged
            self._stats["backend_errors"] += 1
            report(ctx, "cache_error", handler=self.name, reason="backend")
            if not self._failing:  # the type only: a message may quote the text
                logger.warning(
                    "adk_lattice: cache %r could not embed a question (%s); looking up exactly",
                    self.name,
                    type(exc).__name__,
                )
            self._failing = True
            return None
        self._failing = False
        if self.dim is None:
            self.dim = vector.size
        return bytes(vector.tobytes())

    # -- lookup and store -------------------------------------------------------------------

    async def _near(self, key: str, ctx: Context, llm_request: LlmRequest) -> LlmResponse | None:
        query = await self._query(ctx, llm_request)
        self._remember(key, query)  # None too: the store step must not embed it again
        if query is None:
            return None
        np = import_numpy()
        found = await self._index.search(
            query.space,
            np.frombuffer(query.vector, dtype="<f4"),
            threshold=self.threshold,
            limit=self.max_candidates,
        )
        if found is None:
            return None
        refused: tuple[str, ...] = ()
        for candidate in found[0]:
            if candidate.member == key:  # its answer is gone: the exact lookup missed it
                await self.store.vector_remove(query.space, key)
                continue
            reasons = self.guards.refusals(candidate.text, query.text)
            if reasons:
                refused = refused or reasons
                for reason in reasons:
                    self._stats[f"refused.{reason}"] += 1
                continue
            raw = await self.store.get(candidate.member)
            if raw is None:
                self._stats["stale"] += 1
                await self.store.vector_remove(query.space, candidate.member)
                continue
            match = {"match": "semantic", "similarity": round(candidate.similarity, 4)}
            hit = await self._hit(candidate.member, raw, ctx, coalesced=False, match=match)
            if hit is not None:
                self._stats["semantic_hits"] += 1
                report(ctx, "cache_hit", handler=self.name, reason="semantic")
                return hit
        if refused:
            self._stats["near_refused"] += 1
            report(ctx, "cache_skip", handler=self.name, reason=f"near_miss_{refused[0]}")
        return None

    def _remember(self, key: str, query: _Query | None) -> None:
        self._pending[key] = query
        self._pending.move_to_end(key)
        while len(self._pending) > _MAX_PENDING:
            self._pending.popitem(last=False)

    async def _before_store(self, key: str, ctx: Context, llm_request: LlmRequest) -> None:
        if key not in self._pending:  # the lookup was bypassed: the answer is still kept
            self._remember(key, await self._query(ctx, llm_request))

    async def _after_store(self, key: str, *, stored: bool) -> None:
        query = self._pending.pop(key, None)
        if query is None or not stored:
            return
        meta = json.dumps({"text": query.text}).encode("ascii")  # a lone surrogate stays escaped
        if await self.store.vector_add(
            query.space, key, query.vector, meta, self.ttl, self.max_per_scope
        ):
            self._stats["vectors_stored"] += 1
        else:
            self._stats["not_stored.vector_failed"] += 1


#: The fields a plain text part may have set.
_TEXT_FIELDS: Final = frozenset({"text"})
