"""Per-session vector matrices kept in memory, so a query does not re-read every blob from SQLite.

A matrix holds one session's vectors of one model, rows in the candidate tie order of SPEC §6
(``sequence_end`` desc, ``sequence_start`` desc, ``chunk_id`` asc), so a stable sort by score alone yields
the exact candidate order. Entries are dropped when this process writes to the session
(:meth:`VectorIndex.invalidate`) and all of them when another connection commits (``PRAGMA data_version``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import apsw
import numpy as np

from .database import data_version
from .embeddings import from_blob
from .errors import EmbeddingError


@dataclass
class SessionMatrix:
    model: str
    chunk_ids: list[str]
    sequence_start: list[int | None]
    sequence_end: list[int | None]
    matrix: np.ndarray  # (n, dims) float32
    inv_norms: np.ndarray  # (n,) float32; 0 for a zero vector, whose cosine is then 0
    errors: list[tuple[str, str]] = field(default_factory=list)

    def cosines(self, query: np.ndarray) -> np.ndarray:
        q = np.asarray(query, dtype=np.float32)
        qn = np.float32(np.linalg.norm(q))
        if qn == 0 or not len(self.chunk_ids):
            return np.zeros(len(self.chunk_ids), dtype=np.float32)
        return (self.matrix @ q) * self.inv_norms / qn


def top_indices(scores: np.ndarray, limit: int, mask: np.ndarray | None = None) -> np.ndarray:
    """Indices of the ``limit`` best scores, best first; equal scores keep index (tie) order."""
    idx = np.arange(len(scores)) if mask is None else np.flatnonzero(mask)
    if len(idx) > limit:
        sub = scores[idx]
        kth = np.partition(sub, len(sub) - limit)[len(sub) - limit]
        idx = idx[sub >= kth]
    return idx[np.argsort(-scores[idx], kind="stable")][:limit]


def load_session_matrix(conn: apsw.Connection, session_id: str, model: str, dims: int) -> SessionMatrix:
    """Read one session's vectors of ``model``; a vector that cannot be read is listed in ``errors``."""
    ids: list[str] = []
    starts: list[int | None] = []
    ends: list[int | None] = []
    rows: list[np.ndarray] = []
    errors: list[tuple[str, str]] = []
    for cid, start, end, blob in conn.execute(
        "SELECT c.chunk_id, c.sequence_start, c.sequence_end, v.embedding_blob FROM chunks c "
        "JOIN chunks_vec v ON v.chunk_id = c.chunk_id WHERE c.session_id = ? AND v.embedding_model = ? "
        "ORDER BY c.sequence_end DESC, c.sequence_start DESC, c.chunk_id ASC",
        (session_id, model),
    ):
        try:
            rows.append(from_blob(blob, dims))
        except EmbeddingError as exc:
            errors.append((cid, str(exc)))
            continue
        ids.append(cid)
        starts.append(start)
        ends.append(end)
    matrix = np.vstack(rows).astype(np.float32, copy=False) if rows else np.zeros((0, dims), np.float32)
    norms = np.linalg.norm(matrix, axis=1)
    inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0).astype(np.float32)
    return SessionMatrix(model, ids, starts, ends, matrix, inv, errors)


class VectorIndex:
    """Cache of :class:`SessionMatrix` by ``(session, model, dims)``; used from the connection's thread."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str, int], SessionMatrix] = {}
        self._models: dict[str, list[str]] = {}
        self._data_version: int | None = None
        self._lock = threading.Lock()

    def models(self, conn: apsw.Connection, session_id: str) -> list[str]:
        """The embedding models of the session's vectors, sorted by name."""
        self._sync(conn)
        with self._lock:
            models = self._models.get(session_id)
        if models is None:
            models = [
                r[0]
                for r in conn.execute(
                    "SELECT DISTINCT v.embedding_model FROM chunks c JOIN chunks_vec v ON v.chunk_id = c.chunk_id "
                    "WHERE c.session_id = ? ORDER BY 1",
                    (session_id,),
                )
            ]
            with self._lock:
                self._models[session_id] = models
        return models

    def get(self, conn: apsw.Connection, session_id: str, model: str, dims: int) -> SessionMatrix:
        self._sync(conn)
        key = (session_id, model, dims)
        with self._lock:
            entry = self._entries.get(key)
        if entry is None:
            entry = load_session_matrix(conn, session_id, model, dims)
            with self._lock:
                self._entries[key] = entry
        return entry

    def invalidate(self, session_id: str) -> None:
        with self._lock:
            for key in [k for k in self._entries if k[0] == session_id]:
                del self._entries[key]
            self._models.pop(session_id, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._models.clear()

    def _sync(self, conn: apsw.Connection) -> None:
        version = data_version(conn)
        if version != self._data_version:
            self.clear()
            self._data_version = version
