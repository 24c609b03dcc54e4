"""Paged reads for browsing a store: every query is bounded, keyset-paged, and never counts a whole table.

The inspector's views load a page at a time (``fetchMore``), so a store with 100,000 sessions or a session
with a million events opens as fast as a small one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import apsw
import numpy as np

from ..embeddings.backends import from_blob
from ..embeddings.example import Example
from ..errors import EmbeddingError, InvalidInputError, NotFoundError
from .events import Event, require_session
from .inputs import parse_stored

PAGE = 200


@dataclass
class SessionRow:
    session_id: str
    agent_identity: str | None
    created_at: str
    updated_at: str
    #: what another agent's format keeps per session (a conversation's status, channel, sender, summary)
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class SessionStats:
    event_count: int
    last_sequence: int | None
    chunk_count: int


@dataclass
class ChunkRow:
    rowid: int
    chunk_id: str
    sequence_start: int | None
    sequence_end: int | None
    text: str
    embedding_model: str | None
    dimensions: int | None
    metadata: Any


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def sessions_page(
    conn: apsw.Connection,
    after: tuple[str, str] | None = None,
    limit: int = PAGE,
    contains: str | None = None,
) -> list[SessionRow]:
    """Sessions by ``updated_at`` desc, ``session_id`` asc, starting after the key ``(updated_at, session_id)``
    of the previous page's last row; ``contains`` filters ids (case-insensitive)."""
    where, args = ["1"], []
    if after is not None:
        where.append("(updated_at < ? OR (updated_at = ? AND session_id > ?))")
        args += [after[0], after[0], after[1]]
    if contains:
        where.append("session_id LIKE ? ESCAPE '\\'")
        args.append(_like(contains))
    rows = conn.execute(
        f"SELECT session_id, agent_identity, created_at, updated_at FROM sessions WHERE {' AND '.join(where)} "
        "ORDER BY updated_at DESC, session_id ASC LIMIT ?",
        (*args, limit),
    ).fetchall()
    return [SessionRow(*r) for r in rows]


def session_stats(conn: apsw.Connection, session_ids: list[str]) -> dict[str, SessionStats]:
    """Event count, last sequence and chunk count of each session (index-only counts)."""
    out = {}
    for sid in session_ids:
        count, last = conn.execute(
            "SELECT count(*), max(sequence) FROM conversation_events WHERE session_id = ?", (sid,)
        ).fetchall()[0]
        chunks = conn.execute("SELECT count(*) FROM chunks WHERE session_id = ?", (sid,)).fetchall()[0][0]
        out[sid] = SessionStats(count, last, chunks)
    return out


def events_page(
    conn: apsw.Connection, session_id: str, after_sequence: int | None = None, limit: int = PAGE
) -> list[Event]:
    """Events in ascending sequence, starting after ``after_sequence``."""
    require_session(conn, session_id)
    rows = conn.execute(
        "SELECT sequence, created_at, payload_json FROM conversation_events WHERE session_id = ? AND sequence > ? "
        "ORDER BY sequence LIMIT ?",
        (session_id, -(2**63) if after_sequence is None else after_sequence, limit),
    ).fetchall()
    out = []
    for seq, created, raw in rows:
        out.append(Event(seq, created, parse_stored(raw)))
    return out


def chunks_page(
    conn: apsw.Connection, session_id: str, after_rowid: int | None = None, limit: int = PAGE
) -> list[ChunkRow]:
    """The session's chunks in insertion order, with each vector's model and dimensions."""
    rows = conn.execute(
        "SELECT c.rowid, c.chunk_id, c.sequence_start, c.sequence_end, c.chunk_text, v.embedding_model, "
        "length(v.embedding_blob) / 4, c.metadata_json FROM chunks c LEFT JOIN chunks_vec v ON v.chunk_id = c.chunk_id "
        "WHERE c.session_id = ? AND c.rowid > ? ORDER BY c.rowid LIMIT ?",
        (session_id, -(2**63) if after_rowid is None else after_rowid, limit),
    ).fetchall()
    out = []
    for *head, meta in rows:
        out.append(ChunkRow(*head, parse_stored(meta)))
    return out


def note_users(conn: apsw.Connection) -> list[str]:
    """Users with notes: the ``U`` of every ``memory:U`` session."""
    rows = conn.execute(
        "SELECT session_id FROM sessions WHERE session_id >= 'memory:' AND session_id < 'memory;' ORDER BY 1"
    ).fetchall()
    return [r[0][len("memory:") :] for r in rows]


def note_tags(conn: apsw.Connection, user: str) -> list[tuple[str, int]]:
    """The tags a user's notes use, most used first, with how many notes use each."""
    rows = conn.execute(
        "SELECT t.value, count(DISTINCT json_extract(c.metadata_json, '$.note_id')) AS n FROM chunks c, "
        "json_each(c.metadata_json, '$.tags') t WHERE c.session_id = ? "
        "AND json_extract(c.metadata_json, '$.note_id') IS NOT NULL GROUP BY t.value ORDER BY n DESC, t.value",
        (f"memory:{user}",),
    ).fetchall()
    return [(tag, n) for tag, n in rows]


def example_vector(conn: apsw.Connection, item_id: str) -> Example:
    """The stored vector of the chunk ``item_id``, or of the first chunk of the note ``item_id`` (query by
    example); :class:`NotFoundError` when there is none, :class:`InvalidInputError` when it cannot be read."""
    rows = conn.execute(
        "SELECT c.chunk_id, v.embedding_model, v.embedding_blob, c.chunk_text FROM chunks c "
        "JOIN chunks_vec v ON v.chunk_id = c.chunk_id WHERE c.chunk_id = ?1 "
        "UNION ALL SELECT * FROM (SELECT c.chunk_id, v.embedding_model, v.embedding_blob, c.chunk_text FROM chunks c "
        "JOIN chunks_vec v ON v.chunk_id = c.chunk_id WHERE json_valid(c.metadata_json) "
        "AND json_extract(c.metadata_json, '$.note_id') = ?1 ORDER BY c.sequence_start, c.chunk_id) LIMIT 1",
        (item_id,),
    ).fetchall()
    if not rows:
        raise NotFoundError(f"no stored vector for {item_id!r}: give a chunk id or a note id that has one")
    chunk_id, model, blob, text = rows[0]
    try:
        vector = from_blob(blob)
    except EmbeddingError as exc:
        raise InvalidInputError(f"the stored vector of {chunk_id} cannot be read: {exc}") from exc
    return Example(chunk_id, str(model), np.asarray(vector, dtype=np.float32), str(text or ""))
