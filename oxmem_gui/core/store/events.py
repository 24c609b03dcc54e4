"""Writing events and indexing them (contract §4), and reading sessions back.

Work is split in two so that slow embedding never happens inside a write transaction:
:func:`prepare_events` extracts, chunks, hashes and embeds (no database), then :func:`write_events` writes
everything in one ``BEGIN IMMEDIATE`` transaction (one call = one transaction, however many events).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import apsw
import numpy as np

from ..database import write_transaction
from ..embeddings.backends import EmbeddingBackend, to_blob
from ..embeddings.indexing import (
    PayloadNotIndexable,
    chunk_id,
    chunk_text,
    content_hash,
    dumps,
    extract_text,
    normalize,
)
from ..errors import InvalidInputError, NotFoundError, OperationCancelled, SequenceError
from .inputs import check_int, check_json, check_positive, check_text, parse_stored

#: ``progress(stage, done, total)`` with stage ``"embedding"`` (chunks) or ``"storing"`` (events);
#: called from the worker thread.
Progress = Callable[[str, int, int], None]

EMBED_BATCH = 32


@dataclass
class PreparedChunk:
    index: int
    text: str
    digest: str
    vector: np.ndarray | None = None


@dataclass
class PreparedEvent:
    """One event ready to be written: payload serialized, text chunked and embedded."""

    session_id: str
    sequence: int | None  # None: the session's next sequence, decided inside the write transaction
    payload: Any
    payload_json: str
    role: str | None = None
    source: str | None = None
    tool_call_id: str | None = None
    text_digest: str | None = None
    not_indexed: str | None = None
    chunks: list[PreparedChunk] = field(default_factory=list)
    extra_metadata: Mapping[str, Any] | None = None


@dataclass
class StoreResult:
    """What :func:`write_events` did for one event."""

    session_id: str
    sequence: int
    indexed: bool
    not_indexed_reason: str | None = None
    chunk_ids: list[str] = field(default_factory=list)
    new_chunks: int = 0
    deduplicated_chunks: int = 0
    #: ``(chunk_id, sequence_start, sequence_end, vector)`` of each chunk inserted (for the vector cache)
    added: list[tuple[str, int, int, np.ndarray]] = field(default_factory=list, repr=False)


@dataclass
class Event:
    sequence: int
    created_at: str
    payload: Any


def only(page: list[Event], session_id: str, sequence: int) -> list[Event]:
    """``[event]`` of ``page`` whose sequence is ``sequence`` (the turn of a format that deletes no turn), else
    :class:`NotFoundError`."""
    found = [e for e in page if e.sequence == sequence]
    if not found:
        raise NotFoundError(f"no event {sequence} in session {session_id!r}")
    return found


@dataclass
class SessionInfo:
    session_id: str
    agent_identity: str | None
    created_at: str
    updated_at: str
    last_sequence: int | None
    event_count: int | None


def validate_session_id(session_id: Any) -> str:
    if not isinstance(session_id, str) or not session_id.strip():
        raise InvalidInputError("session id must be a non-empty string")
    return check_text(session_id, "session id")


def validate_sequence(sequence: Any) -> int:
    """A sequence is a signed 64-bit integer, as SQLite stores it."""
    return check_int(sequence, "sequence")


def prepare_event(
    session_id: str, sequence: int | None, payload: Any, extra_metadata: Mapping[str, Any] | None = None
) -> PreparedEvent:
    """Extract and chunk one event (no embedding yet; see :func:`embed_prepared`)."""
    validate_session_id(session_id)
    if sequence is not None:
        validate_sequence(sequence)
    event = PreparedEvent(session_id, sequence, payload, check_json(payload, "payload"), extra_metadata=extra_metadata)
    try:
        extracted = extract_text(payload)
    except PayloadNotIndexable as exc:
        event.not_indexed = str(exc)
        return event
    text = normalize(extracted.text)
    event.role, event.source, event.tool_call_id = extracted.role, extracted.source, extracted.tool_call_id
    if not text:
        event.not_indexed = "payload has no text to index"
        return event
    event.text_digest = content_hash(text)
    event.chunks = [PreparedChunk(i, piece, content_hash(piece)) for i, piece in enumerate(chunk_text(text))]
    return event


def _check(stop: threading.Event | None) -> None:
    if stop is not None and stop.is_set():
        raise OperationCancelled("cancelled; nothing was written")


def embed_prepared(
    events: Sequence[PreparedEvent],
    backend: EmbeddingBackend,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> None:
    """Fill every chunk's vector, in batches of :data:`EMBED_BATCH` texts."""
    chunks = [c for e in events for c in e.chunks]
    for start in range(0, len(chunks), EMBED_BATCH):
        _check(stop)
        batch = chunks[start : start + EMBED_BATCH]
        vectors = backend.embed([c.text for c in batch])
        for c, v in zip(batch, vectors, strict=True):
            c.vector = v
        if progress:
            progress("embedding", min(start + EMBED_BATCH, len(chunks)), len(chunks))


def _upsert_session(conn: apsw.Connection, session_id: str) -> None:
    conn.execute(
        "INSERT INTO sessions (session_id) VALUES (?) "
        "ON CONFLICT (session_id) DO UPDATE SET updated_at = CURRENT_TIMESTAMP",
        (session_id,),
    )


def last_sequence(conn: apsw.Connection, session_id: str) -> int | None:
    return conn.execute("SELECT max(sequence) FROM conversation_events WHERE session_id = ?", (session_id,)).fetchall()[
        0
    ][0]


def read_state(conn: apsw.Connection, session_id: str) -> dict[str, Any]:
    """The session's ``state_json`` object ({} when absent); a non-object is an error, never overwritten."""
    rows = conn.execute("SELECT state_json FROM session_state WHERE session_id = ?", (session_id,)).fetchall()
    if not rows:
        return {}
    state = parse_stored(rows[0][0])
    if isinstance(state, str):
        raise InvalidInputError(f"session_state of {session_id!r} is not JSON that can be read")
    if not isinstance(state, dict):
        raise InvalidInputError(f"session_state of {session_id!r} is not a JSON object")
    return state


def write_state(conn: apsw.Connection, session_id: str, state: Mapping[str, Any]) -> None:
    conn.execute(
        "INSERT INTO session_state (session_id, state_json) VALUES (?, ?) "
        "ON CONFLICT (session_id) DO UPDATE SET state_json = excluded.state_json, "
        "updated_at = CURRENT_TIMESTAMP",
        (session_id, dumps(state)),
    )


def _index_chunks(conn: apsw.Connection, event: PreparedEvent, sequence: int, model: str) -> StoreResult:
    result = StoreResult(event.session_id, sequence, indexed=True)
    file_id = conn.execute(
        "INSERT INTO files (session_id, source_uri, content_hash, metadata_json) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (session_id, source_uri, content_hash) DO UPDATE SET updated_at = CURRENT_TIMESTAMP "
        "RETURNING file_id",
        (
            event.session_id,
            f"conversation://{event.session_id}/{event.source}",
            event.text_digest,
            dumps({"role": event.role, "source": event.source}),
        ),
    ).fetchall()[0][0]
    note_id = (event.extra_metadata or {}).get("note_id")
    for chunk in event.chunks:
        existing = conn.execute(
            "SELECT chunk_id, sequence_end FROM chunks WHERE session_id = ? AND content_hash = ? "
            "AND json_extract(metadata_json, '$.note_id') IS ? LIMIT 1",
            (event.session_id, chunk.digest, note_id),
        ).fetchall()
        if existing:
            cid, old_end = existing[0]
            new_end = max(old_end if old_end is not None else sequence, sequence)
            conn.execute(
                "UPDATE chunks SET sequence_end = ?, metadata_json = json_set(metadata_json, '$.sequence_end', ?), "
                "updated_at = CURRENT_TIMESTAMP WHERE chunk_id = ?",
                (new_end, new_end, cid),
            )
            result.chunk_ids.append(cid)
            result.deduplicated_chunks += 1
            continue
        metadata = {
            "source": event.source,
            "role": event.role,
            "sequence_start": sequence,
            "sequence_end": sequence,
            "chunk_index": chunk.index,
            "chunk_count": len(event.chunks),
            "tool_call_id": event.tool_call_id,
        }
        metadata.update(event.extra_metadata or {})
        cid = chunk_id(event.session_id, sequence, chunk.index, chunk.digest)
        conn.execute(
            "INSERT INTO chunks (chunk_id, session_id, file_id, sequence_start, sequence_end, chunk_text, "
            "metadata_json, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (cid, event.session_id, file_id, sequence, sequence, chunk.text, dumps(metadata), chunk.digest),
        )
        if chunk.vector is None:
            raise RuntimeError("chunk written before it was embedded")
        conn.execute(
            "INSERT INTO chunks_vec (chunk_id, embedding_blob, embedding_model) VALUES (?, ?, ?)",
            (cid, to_blob(chunk.vector), model),
        )
        result.added.append((cid, sequence, sequence, chunk.vector))
        result.chunk_ids.append(cid)
        result.new_chunks += 1
    return result


def write_event_rows(conn: apsw.Connection, event: PreparedEvent, model: str) -> StoreResult:
    """Write one prepared event inside the caller's transaction (contract §4 steps, in order)."""
    _upsert_session(conn, event.session_id)
    current = last_sequence(conn, event.session_id)
    state = read_state(conn, event.session_id)
    if event.sequence is None:  # next after both the events and the state's record (a deleted note's slot)
        recorded = state.get("last_sequence")
        recorded = recorded if isinstance(recorded, int) and not isinstance(recorded, bool) else 0
        sequence = max(current or 0, recorded) + 1
    else:
        sequence = event.sequence
    if current is not None and sequence <= current:
        raise SequenceError(
            f"sequence {sequence} of session {event.session_id!r} is not greater than its last sequence {current}"
        )
    conn.execute(
        "INSERT INTO conversation_events (session_id, sequence, payload_json) VALUES (?, ?, ?)",
        (event.session_id, sequence, event.payload_json),
    )
    state["last_sequence"] = sequence
    write_state(conn, event.session_id, state)
    if event.not_indexed:
        return StoreResult(event.session_id, sequence, indexed=False, not_indexed_reason=event.not_indexed)
    return _index_chunks(conn, event, sequence, model)


def write_events(
    conn: apsw.Connection,
    events: Sequence[PreparedEvent],
    model: str,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> list[StoreResult]:
    """Write all ``events`` in one transaction: all of them are stored, or none (``stop`` cancels)."""
    results = []
    step = max(1, len(events) // 100)
    with write_transaction(conn):
        for i, event in enumerate(events, 1):
            if i % step == 0:
                _check(stop)
            results.append(write_event_rows(conn, event, model))
            if progress and (i % step == 0 or i == len(events)):
                progress("storing", i, len(events))
    return results


def store_records(
    conn: apsw.Connection,
    records: Sequence[tuple[str, int, Any]],
    backend: EmbeddingBackend,
    progress: Progress | None = None,
    *,
    stop: threading.Event | None = None,
    committed: Callable[[list[StoreResult]], None] | None = None,
) -> list[StoreResult]:
    """Validate, embed and store ``(session_id, sequence, payload)`` records in one transaction; then
    ``committed(results)`` (to bring caches up to date)."""
    prepared = [prepare_event(r[0], r[1], r[2]) for r in records]
    embed_prepared(prepared, backend, progress, stop)
    results = write_events(conn, prepared, backend.model_name, progress, stop)
    if committed is not None:
        committed(results)
    return results


def session_exists(conn: apsw.Connection, session_id: str) -> bool:
    return bool(conn.execute("SELECT 1 FROM sessions WHERE session_id = ?", (session_id,)).fetchall())


def require_session(conn: apsw.Connection, session_id: str) -> None:
    if not session_exists(conn, session_id):
        raise NotFoundError(f"no session {session_id!r} in this store")


def recall(conn: apsw.Connection, session_id: str, limit: int | None = None) -> list[Event]:
    """The session's events in ascending sequence; with ``limit``, the newest ``limit`` of them."""
    require_session(conn, session_id)
    if limit is not None:
        check_positive(limit, "limit")
    rows = conn.execute(
        "SELECT sequence, created_at, payload_json FROM conversation_events WHERE session_id = ? "
        "ORDER BY sequence DESC LIMIT ?",
        (session_id, -1 if limit is None else limit),
    ).fetchall()
    return [Event(seq, created, parse_stored(raw)) for seq, created, raw in reversed(rows)]


def forget(conn: apsw.Connection, session_id: str) -> None:
    """Delete the session; foreign-key cascades remove its events, state, files, chunks and vectors."""
    with write_transaction(conn):
        require_session(conn, session_id)
        conn.execute("DELETE FROM sessions WHERE session_id = ?", (session_id,))


def list_sessions(conn: apsw.Connection, with_counts: bool = True) -> list[SessionInfo]:
    """All sessions, most recently updated first (ties by id)."""
    counts = (
        "(SELECT max(sequence) FROM conversation_events e WHERE e.session_id = s.session_id), "
        "(SELECT count(*) FROM conversation_events e WHERE e.session_id = s.session_id)"
        if with_counts
        else "NULL, NULL"
    )
    rows = conn.execute(
        f"SELECT session_id, agent_identity, created_at, updated_at, {counts} FROM sessions s "
        "ORDER BY updated_at DESC, session_id ASC"
    ).fetchall()
    return [SessionInfo(*row) for row in rows]
