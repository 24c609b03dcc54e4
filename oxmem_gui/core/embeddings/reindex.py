"""Re-embedding stored chunks with another model (``oxmem reindex``).

Work goes in batches: read a batch of chunks whose vector is missing or of another model, embed it with no
transaction open, then write that batch in one short transaction. The write lock is held for milliseconds per
batch, so an agent writing to the same file is never blocked for long. Chunks already re-embedded are skipped
by the query itself, which makes an interrupted run resumable: run it again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import apsw

from ..database import write_transaction
from .backends import EmbeddingBackend, to_blob

REINDEX_BATCH = 128


@dataclass
class ReindexResult:
    model: str
    reembedded: int = 0
    remaining: int = 0
    sessions: set[str] = field(default_factory=set)
    stopped: bool = False


def _pending_filter(session_id: str | None) -> tuple[str, tuple]:
    where = "(v.chunk_id IS NULL OR v.embedding_model != ?)"
    return (where + " AND c.session_id = ?", (session_id,)) if session_id else (where, ())


def count_pending(conn: apsw.Connection, model: str, session_id: str | None = None) -> int:
    where, args = _pending_filter(session_id)
    return conn.execute(
        f"SELECT count(*) FROM chunks c LEFT JOIN chunks_vec v ON v.chunk_id = c.chunk_id WHERE {where}",
        (model, *args),
    ).fetchall()[0][0]


def reindex(
    conn: apsw.Connection,
    backend: EmbeddingBackend,
    session_id: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    stop: threading.Event | None = None,
    batch: int = REINDEX_BATCH,
) -> ReindexResult:
    """Give every chunk (of ``session_id``, or of the whole store) a vector of ``backend``'s model."""
    model = backend.model_name
    total = count_pending(conn, model, session_id)
    result = ReindexResult(model)
    where, args = _pending_filter(session_id)
    after = -1
    while True:
        if stop is not None and stop.is_set():
            result.stopped = True
            break
        rows = conn.execute(
            f"SELECT c.rowid, c.chunk_id, c.session_id, c.chunk_text FROM chunks c "
            f"LEFT JOIN chunks_vec v ON v.chunk_id = c.chunk_id WHERE {where} AND c.rowid > ? "
            "ORDER BY c.rowid LIMIT ?",
            (model, *args, after, batch),
        ).fetchall()
        if not rows:
            break
        vectors = backend.embed([r[3] for r in rows])
        with write_transaction(conn):
            for (_, cid, _, _), vector in zip(rows, vectors, strict=True):
                # deleted and inserted, never updated in place: libSQL's vector index keeps the old vector of a
                # row whose indexed column is updated (an UPDATE or an upsert), so the ANN search would rank the
                # row by a vector it no longer has
                conn.execute("DELETE FROM chunks_vec WHERE chunk_id = ?", (cid,))
                conn.execute(
                    "INSERT INTO chunks_vec (chunk_id, embedding_blob, embedding_model) "
                    "SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM chunks WHERE chunk_id = ?)",
                    (cid, to_blob(vector), model, cid),
                )
        after = rows[-1][0]
        result.reembedded += len(rows)
        result.sessions.update(r[2] for r in rows)
        if progress:
            progress(result.reembedded, total)
    result.remaining = count_pending(conn, model, session_id)
    return result
