"""What a search keeps between calls: the vector matrices per session and model, and the BM25 postings.

Both check ``PRAGMA data_version`` themselves, so another program's commit is always seen, and both check what a
query uses against the file in the query's snapshot: the vector leg its candidates (:mod:`.vectors`), the BM25 leg
the postings of the query's words (:mod:`.bm25`: a text another program rewrote in place is found there, and the
postings built again). This process's own writes are told here, so the next search need not rebuild what it can
keep: new vectors are added to the cached matrix (:meth:`SearchCaches.committed`), a session changed in other ways
is dropped (:meth:`touched`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import apsw

from ..embeddings.backends import EmbeddingBackend
from ..store.events import StoreResult
from .bm25 import Bm25Index
from .persisted import DiskCache
from .scope import Scope
from .vectors import VectorIndex


class SearchCaches:
    """The vector index and the BM25 index of one open store."""

    def __init__(self, vector_cache_bytes: int, model: str) -> None:
        """``model``: the embedding model of the vectors this process writes."""
        self.vectors = VectorIndex(vector_cache_bytes)
        self.bm25 = Bm25Index()
        self.model = model

    def committed(self, results: Sequence[StoreResult]) -> None:
        """Events this process just committed: add their vectors to the cached matrices (on the connection's
        thread, like every use of the caches)."""
        for r in results:
            self.vectors.add(r.session_id, self.model, r.added)
        self.bm25.clear()

    def touched(self, session_id: str) -> None:
        """A session this process changed in place (a note edited, a session deleted): drop what is cached of it."""
        self.vectors.invalidate(session_id)
        self.bm25.clear()

    def clear(self) -> None:
        """Every vector may have changed (re-embedding)."""
        self.vectors.clear()

    def prepare(self, conn: apsw.Connection, scope: Scope, backends: Mapping[str, EmbeddingBackend]) -> int:
        """Build ahead of the first query what a search of ``scope`` reads: its vector matrices (of each model
        whose dimensions are known: a backend's, else the stored vectors' size) and the BM25 row list. Returns
        how many vectors the matrices hold."""
        held = 0
        for model in self.vectors.models(conn, scope):
            dims = backends[model].dimensions if model in backends else self.vectors.stored_dims(scope, model)
            if dims:
                held += len(self.vectors.get(conn, scope, model, dims))
        self.bm25.prepare(conn)
        return held

    # -- kept on disk between processes (:mod:`.persisted`) ------------------------------------------

    def _parts(self) -> dict[str, VectorIndex | Bm25Index]:
        return {"vectors": self.vectors, "bm25": self.bm25}

    def fingerprint(self) -> tuple:
        """What the caches hold, in brief: saving is skipped while it is what was restored or saved."""
        entries = tuple((key, len(e)) for key, e in self.vectors._entries.items())
        newest = tuple(sorted(self.vectors._newest.items()))
        rowids = self.bm25._rowids
        rows = None if rowids is None else (len(rowids), len(self.bm25._postings), self.bm25._newest_chunk)
        # a BM25 cache built again because a query proved it was not the file's (a row rewritten in place) may
        # look like the one restored — same rows, as many postings — but the copy on disk must be replaced
        return entries, newest, rows, self.bm25.proofs["differed"]

    def rows(self) -> int:
        rowids = self.bm25._rowids
        return sum(len(e) for e in self.vectors._entries.values()) + (0 if rowids is None else len(rowids))

    def restore(self, conn: apsw.Connection, disk: DiskCache) -> bool:
        """Take the caches an earlier process kept for this file, checked and brought up to date (in the read
        transaction of the caller, on the connection's thread)."""
        return disk.restore(conn, self._parts(), self.fingerprint)

    def save(self, conn: apsw.Connection, disk: DiskCache) -> bool:
        """Keep the caches for the next process on this file (on the connection's thread, as they are used)."""
        return disk.save(self._parts(), self.fingerprint(), self.rows(), conn)
