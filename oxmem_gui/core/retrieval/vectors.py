"""Per-(session, model) vector matrices kept in memory, so a query never re-reads every blob from SQLite.

A :class:`SessionMatrix` is built lazily on a session's first query, then kept up to date by the store's own
writes (:meth:`VectorIndex.add` appends new chunks, :meth:`VectorIndex.extend` moves a deduplicated chunk's
``sequence_end``); a deletion drops the session's entries. A commit by any other connection — the agent
writing while the inspector is open — changes ``PRAGMA data_version`` and drops every entry. Memory is bounded:
entries are evicted least recently used first once their total size passes ``max_bytes``.

Cosine is exact (float32 matrix–vector product); candidates are the best ``limit`` scores, with every score
equal to the cut-off kept, then ordered in Python by contract §6's tie-breaks.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

import apsw
import numpy as np

from ..database import data_version
from ..embeddings.backends import from_blob
from ..errors import EmbeddingError

DEFAULT_MAX_BYTES = 2 << 30  # 2 GiB: a million 384-dimension vectors, and some


@dataclass
class Candidate:
    chunk_id: str
    raw: float
    sequence_start: int | None
    sequence_end: int | None
    model: str | None = None


def candidate_key(c: Candidate) -> tuple:
    """A leg's order: raw desc, sequence_end desc, sequence_start desc (NULLs last, as SQLite), chunk_id asc."""
    return (
        -c.raw,
        c.sequence_end is None,
        -(c.sequence_end or 0),
        c.sequence_start is None,
        -(c.sequence_start or 0),
        c.chunk_id,
    )


@dataclass
class SessionMatrix:
    """One session's vectors of one model; rows are appended, never reordered."""

    model: str
    dims: int
    chunk_ids: list[str] = field(default_factory=list)
    sequence_start: list[int | None] = field(default_factory=list)
    sequence_end: list[int | None] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    _rows: dict[str, int] = field(default_factory=dict)
    _matrix: np.ndarray | None = None
    _inv: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.chunk_ids)

    @property
    def nbytes(self) -> int:
        return 0 if self._matrix is None else self._matrix.nbytes + self._inv.nbytes

    def append(self, chunk_ids: list[str], starts: list, ends: list, vectors: np.ndarray) -> None:
        n, extra = len(self.chunk_ids), len(chunk_ids)
        if not extra:
            return
        if self._matrix is None or n + extra > len(self._matrix):
            capacity = max(n + extra, 2 * n, 64)
            grown = np.empty((capacity, self.dims), dtype=np.float32)
            inv = np.empty(capacity, dtype=np.float32)
            if self._matrix is not None:
                grown[:n], inv[:n] = self._matrix[:n], self._inv[:n]
            self._matrix, self._inv = grown, inv
        block = np.asarray(vectors, dtype=np.float32).reshape(extra, self.dims)
        self._matrix[n : n + extra] = block
        norms = np.linalg.norm(block, axis=1)
        self._inv[n : n + extra] = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        for i, cid in enumerate(chunk_ids):
            self._rows[cid] = n + i
        self.chunk_ids.extend(chunk_ids)
        self.sequence_start.extend(starts)
        self.sequence_end.extend(ends)

    def set_sequence_end(self, chunk_id: str, sequence_end: int) -> None:
        row = self._rows.get(chunk_id)
        if row is not None:
            self.sequence_end[row] = sequence_end

    def cosines(self, query: np.ndarray) -> np.ndarray:
        n = len(self.chunk_ids)
        q = np.asarray(query, dtype=np.float32)
        qn = np.float32(np.linalg.norm(q))
        if qn == 0 or n == 0:
            return np.zeros(n, dtype=np.float32)
        return (self._matrix[:n] @ q) * self._inv[:n] / qn

    def top(self, query: np.ndarray, limit: int, mask: np.ndarray | None = None) -> list[Candidate]:
        """The ``limit`` best candidates by cosine, in leg order (see :func:`candidate_key`)."""
        scores = self.cosines(query)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        allowed = len(scores) if mask is None else int(mask.sum())
        if allowed > limit:
            cut = np.partition(scores, len(scores) - limit)[len(scores) - limit]
            idx = np.flatnonzero(scores >= cut)  # every score tied with the cut-off; tie-breaks decide below
        else:
            idx = np.arange(len(scores)) if mask is None else np.flatnonzero(mask)
        found = [
            Candidate(self.chunk_ids[i], float(scores[i]), self.sequence_start[i], self.sequence_end[i], self.model)
            for i in idx.tolist()
        ]
        found.sort(key=candidate_key)
        return found[:limit]


def load_session_matrix(conn: apsw.Connection, session_id: str, model: str, dims: int) -> SessionMatrix:
    """Read one session's vectors of ``model``; a vector that cannot be read is listed in ``errors``."""
    entry = SessionMatrix(model, dims)
    ids: list[str] = []
    starts: list[int | None] = []
    ends: list[int | None] = []
    rows: list[np.ndarray] = []
    for cid, start, end, blob in conn.execute(
        "SELECT c.chunk_id, c.sequence_start, c.sequence_end, v.embedding_blob FROM chunks c "
        "JOIN chunks_vec v ON v.chunk_id = c.chunk_id WHERE c.session_id = ? AND v.embedding_model = ?",
        (session_id, model),
    ):
        try:
            rows.append(from_blob(blob, dims))
        except EmbeddingError as exc:
            entry.errors.append((cid, str(exc)))
            continue
        ids.append(cid)
        starts.append(start)
        ends.append(end)
    if rows:
        entry.append(ids, starts, ends, np.vstack(rows))
    return entry


class VectorIndex:
    """LRU cache of :class:`SessionMatrix` by ``(session, model, dims)`` with a byte budget."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[str, str, int], SessionMatrix] = OrderedDict()
        self._models: dict[str, list[str]] = {}
        self._data_version: int | None = None
        self._lock = threading.RLock()

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
            if entry is not None:
                self._entries.move_to_end(key)
                return entry
        entry = load_session_matrix(conn, session_id, model, dims)
        with self._lock:
            self._entries[key] = entry
            self._evict(keep=key)
        return entry

    def add(
        self, session_id: str, model: str, chunks: Iterable[tuple[str, int | None, int | None, np.ndarray]]
    ) -> None:
        """Append chunks this process just committed to the session's cached matrices of ``model``."""
        chunks = list(chunks)
        if not chunks:
            return
        with self._lock:
            models = self._models.get(session_id)
            if models is not None and model not in models:
                self._models[session_id] = sorted([*models, model])
            for (sid, m, dims), entry in self._entries.items():
                if sid == session_id and m == model:
                    vectors = np.vstack([np.asarray(v, dtype=np.float32)[:dims] for *_, v in chunks])
                    entry.append([c[0] for c in chunks], [c[1] for c in chunks], [c[2] for c in chunks], vectors)
            self._evict()

    def extend(self, session_id: str, updates: Iterable[tuple[str, int]]) -> None:
        """Record new ``sequence_end`` values of deduplicated chunks."""
        with self._lock:
            entries = [e for (sid, _, _), e in self._entries.items() if sid == session_id]
            for chunk_id, sequence_end in updates:
                for entry in entries:
                    entry.set_sequence_end(chunk_id, sequence_end)

    def invalidate(self, session_id: str) -> None:
        with self._lock:
            for key in [k for k in self._entries if k[0] == session_id]:
                del self._entries[key]
            self._models.pop(session_id, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._models.clear()

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(e.nbytes for e in self._entries.values())

    def cached_sessions(self) -> list[str]:
        with self._lock:
            return [k[0] for k in self._entries]

    def _evict(self, keep: tuple[str, str, int] | None = None) -> None:
        total = sum(e.nbytes for e in self._entries.values())
        for key in list(self._entries):
            if total <= self.max_bytes:
                break
            if key == keep:
                continue
            total -= self._entries.pop(key).nbytes

    def _sync(self, conn: apsw.Connection) -> None:
        version = data_version(conn)
        with self._lock:
            if version != self._data_version:
                self._entries.clear()
                self._models.clear()
                self._data_version = version
