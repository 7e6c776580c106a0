"""The semantic cache's in-process copy of each scope's vectors, searched exhaustively.

The store keeps the rows (shared by replicas); each process keeps a matrix per space read
at one version. A lookup asks the store for the space's version (one small read) and reads
the rows again only when it changed, then scores every row of the space with one
matrix-vector product. The copies are bounded by rows; the least recently used spaces go.
"""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._embedding import import_numpy

if TYPE_CHECKING:
    import numpy as np

    from ..stores import Store, VectorRows

logger = logging.getLogger("adk_lattice.cache")


@dataclass(frozen=True, slots=True)
class Candidate:
    """A stored question near the asked one."""

    member: str  # the key of its answer
    text: str  # the stored question
    similarity: float


@dataclass(slots=True)
class _Copy:
    version: int
    matrix: np.ndarray  # (rows, dim), unit rows
    members: list[str]
    texts: list[str]
    expires: np.ndarray  # wall-clock expiry, inf for none


class ScopeIndex:
    """The vectors of the spaces a process has searched, per store version.

    Args:
        store: the store keeping the rows.
        max_rows: most rows copied in this process, across spaces.
    """

    def __init__(self, store: Store, *, max_rows: int = 200_000) -> None:
        self.store = store
        self.max_rows = max_rows
        self._copies: OrderedDict[str, _Copy] = OrderedDict()
        self._rows = 0
        self.loads = 0
        self.skipped = 0  # rows of another dimension or with unreadable metadata

    async def search(
        self, space: str, query: np.ndarray, *, threshold: float, limit: int
    ) -> tuple[list[Candidate], float] | None:
        """The rows at or above ``threshold``, most similar first, and the best score.

        Returns:
            ``(candidates, best)`` (``best`` is -1 for an empty space), or None when the
            store failed.
        """
        np = import_numpy()
        version = await self.store.vector_version(space)
        if version is None:
            return None
        copy = self._copies.get(space)
        if copy is None or copy.version != version:
            rows = await self.store.vector_rows(space)
            if rows is None:
                return None
            copy = self._load(space, rows, query.size)
        else:
            self._copies.move_to_end(space)
        if not copy.members:
            return [], -1.0
        scores = _scores(np, copy.matrix, query)
        scores[copy.expires <= time.time()] = -2.0
        best = float(scores.max())
        found = np.flatnonzero(scores >= threshold)
        found = found[np.argsort(-scores[found], kind="stable")][:limit]
        return [Candidate(copy.members[i], copy.texts[i], float(scores[i])) for i in found], best

    def _load(self, space: str, rows: VectorRows, dim: int) -> _Copy:
        np = import_numpy()
        self.loads += 1
        vectors: list[Any] = []
        members: list[str] = []
        texts: list[str] = []
        expires: list[float] = []
        for row in rows.rows:
            text = _text(row.meta) if len(row.vector) == 4 * dim else None
            if text is None:  # another dimension, or metadata that does not read
                self.skipped += 1
                continue
            vectors.append(row.vector)
            members.append(row.member)
            texts.append(text)
            expires.append(row.expires_at if row.expires_at is not None else float("inf"))
        matrix = np.frombuffer(b"".join(vectors), dtype="<f4").reshape(len(members), dim)
        # Rows are unit vectors as this package writes them; one another writer left longer
        # would outscore every question, one holding NaN would score as nothing.
        with np.errstate(over="ignore", invalid="ignore"):
            norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
        if not (np.abs(norms - 1) < 1e-3).all():  # cheap check; rows written here pass it
            usable = np.isfinite(norms) & (norms > 0)
            self.skipped += int((~usable).sum())
            keep = np.flatnonzero(usable).tolist()
            members = [members[i] for i in keep]
            texts = [texts[i] for i in keep]
            expires = [expires[i] for i in keep]
            matrix = (matrix[usable] / norms[usable, None]).astype("<f4")
        copy = _Copy(rows.version, matrix, members, texts, np.asarray(expires, dtype="f8"))
        old = self._copies.pop(space, None)
        if old is not None:
            self._rows -= len(old.members)
        self._copies[space] = copy
        self._rows += len(members)
        while self._rows > self.max_rows and len(self._copies) > 1:
            _, gone = self._copies.popitem(last=False)
            self._rows -= len(gone.members)
        return copy


#: Rows per matrix-vector product: OpenBLAS runs a larger product on several threads,
#: which on a busy machine costs several times what one thread takes (1 ms for 10,000
#: rows of 256 dimensions, against 8 ms threaded on two loaded cores).
_CHUNK = 1024


def _scores(np: Any, matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    out = np.empty(matrix.shape[0], dtype="<f4")
    for start in range(0, matrix.shape[0], _CHUNK):
        np.dot(matrix[start : start + _CHUNK], query, out=out[start : start + _CHUNK])
    return out  # type: ignore[no-any-return]


def _text(meta: bytes) -> str | None:
    try:
        text = json.loads(meta)["text"]
    except (ValueError, KeyError, TypeError):
        return None
    return text if isinstance(text, str) else None
