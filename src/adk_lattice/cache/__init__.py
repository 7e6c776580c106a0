"""The cache tier: model-response (exact and semantic) and tool-result caches over the shared
stores.

Register caches in ``Lattice(cache=[...])``: they run after policy (a blocked request is
never served from a cache) and store only what was really delivered. The stores are
re-exported here for convenience.
"""

from ..stores import MemoryStore, RedisStore, SQLiteStore, Store
from ._embedding import Embedder, WordLlamaEmbedder
from ._guards import GUARDS, NearMissGuards
from ._keys import KEY_VERSION, Scope, canonical_json, request_digest, request_material
from ._response import ResponseCache
from ._semantic import DEFAULT_THRESHOLD, SemanticResponseCache
from ._tool import ToolResultCache, default_is_error

__all__ = [
    "DEFAULT_THRESHOLD",
    "GUARDS",
    "KEY_VERSION",
    "Embedder",
    "MemoryStore",
    "NearMissGuards",
    "RedisStore",
    "ResponseCache",
    "SQLiteStore",
    "Scope",
    "SemanticResponseCache",
    "Store",
    "ToolResultCache",
    "WordLlamaEmbedder",
    "canonical_json",
    "default_is_error",
    "request_digest",
    "request_material",
]
