"""The cache tier: model-response and tool-result caches over the shared stores.

Register caches in ``Lattice(cache=[...])``: they run after policy (a blocked request is
never served from a cache) and store only what was really delivered. The stores are
re-exported here for convenience.
"""

from ..stores import MemoryStore, RedisStore, SQLiteStore, Store
from ._keys import KEY_VERSION, Scope, canonical_json, request_digest, request_material
from ._response import ResponseCache
from ._tool import ToolResultCache, default_is_error

__all__ = [
    "KEY_VERSION",
    "MemoryStore",
    "RedisStore",
    "ResponseCache",
    "SQLiteStore",
    "Scope",
    "Store",
    "ToolResultCache",
    "canonical_json",
    "default_is_error",
    "request_digest",
    "request_material",
]
