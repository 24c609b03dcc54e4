"""Notes: knowledge the agent saved on purpose, with tags (contract §7).

Notes of user ``U`` are events of the session ``memory:U`` whose ``tool_call_id`` is the ``note_id``; their
chunks carry ``note_id``, ``tags`` and the note's dates in their metadata. An update is one transaction
(delete the old rows, store the new ones), so a failure leaves the old note in place.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import apsw

from ..database import write_transaction
from ..embeddings.backends import EmbeddingBackend
from ..errors import ConflictError, InvalidInputError, NotFoundError
from .events import PreparedEvent, embed_prepared, prepare_event, write_event_rows, write_events
from .inputs import check_text, parse_stored
from .tags import normalize_tags, tag_filter_sql, tags_to_save

NOTE_SCHEMA_VERSION = 1


#: a user's notes live in the session ``memory:USER``
NOTES_PREFIX = "memory:"


def notes_session(user: str) -> str:
    if not isinstance(user, str) or not user.strip():
        raise InvalidInputError("user must be a non-empty string")
    return f"{NOTES_PREFIX}{check_text(user, 'user')}"


def utc_now_text() -> str:
    """RFC 3339 UTC with microseconds, as the agent writes note and schedule times."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


@dataclass
class Note:
    note_id: str
    user: str
    content: str
    tags: list[str]
    created_at: str | None
    updated_at: str | None
    sequence: int
    #: what another agent's format adds (a fact's key, a memory's scope and expiry, superseded versions);
    #: empty for the store's own notes
    details: dict[str, Any] = field(default_factory=dict)


def _validate_content(content: Any) -> str:
    if not isinstance(content, str) or not content.strip():
        raise InvalidInputError("note content is empty")
    return check_text(content, "note content")


def _note_event(user: str, note_id: str, content: str) -> PreparedEvent:
    return prepare_event(notes_session(user), None, {"content": content, "role": "user", "tool_call_id": note_id})


def _note_metadata(note_id: str, source: str, tags: list[str], created_at: str, updated_at: str) -> dict:
    return {
        "note_id": note_id,
        "source": source,
        "tags": tags,
        "created_at": created_at,
        "updated_at": updated_at,
        "schema_version": NOTE_SCHEMA_VERSION,
    }


def save_note(
    conn: apsw.Connection, backend: EmbeddingBackend, user: str, content: str, tags: Sequence[str] = ()
) -> Note:
    content = _validate_content(content)
    tag_list = tags_to_save(tags)
    note_id = f"note-{uuid.uuid4()}"
    now = utc_now_text()
    event = _note_event(user, note_id, content)
    event.extra_metadata = _note_metadata(note_id, "memory_save", tag_list, now, now)
    embed_prepared([event], backend)
    (result,) = write_events(conn, [event], backend.model_name)
    return Note(note_id, user, content, tag_list, now, now, result.sequence)


_NOTE_ROWS = (
    "SELECT json_extract(c.metadata_json, '$.note_id'), e.payload_json, c.metadata_json, e.sequence "
    "FROM chunks c JOIN conversation_events e ON e.session_id = c.session_id AND e.sequence = c.sequence_start "
    "WHERE c.session_id = ? AND json_extract(c.metadata_json, '$.note_id') IS NOT NULL "
    "AND json_extract(c.metadata_json, '$.chunk_index') = 0"
)


def _note_from_row(user: str, row: tuple) -> Note:
    note_id, payload_json, metadata_json, sequence = row
    payload = parse_stored(payload_json)
    meta = parse_stored(metadata_json)
    meta = meta if isinstance(meta, dict) else {}
    content = payload.get("content", "") if isinstance(payload, dict) else str(payload)
    tags = meta.get("tags") or []
    return Note(note_id, user, content, list(tags), meta.get("created_at"), meta.get("updated_at"), sequence)


def get_note(conn: apsw.Connection, user: str, note_id: str) -> Note:
    rows = conn.execute(
        _NOTE_ROWS + " AND json_extract(c.metadata_json, '$.note_id') = ?", (notes_session(user), note_id)
    ).fetchall()
    if not rows:
        raise NotFoundError(f"no note {note_id!r} for user {user!r}")
    return _note_from_row(user, rows[0])


def check_unchanged(conn: apsw.Connection, user: str, note_id: str, expected: Note | None) -> Note | None:
    """Inside a write transaction: the note as it is now, after checking that it is still ``expected`` (the
    note as the caller loaded it; None: it must not exist). Anything else — another program edited, re-saved or
    deleted it since — is a :class:`ConflictError` carrying the current note, and nothing is written."""
    try:
        current: Note | None = get_note(conn, user, note_id)
    except NotFoundError:
        current = None
    if current == expected:
        return current
    if current is None:
        raise ConflictError(f"note {note_id} was deleted by another program since it was loaded; nothing was saved")
    if expected is None:
        raise ConflictError(f"note {note_id} was saved by another program meanwhile; nothing was saved", current)
    raise ConflictError(
        f"note {note_id} was changed by another program since it was loaded (now updated {current.updated_at}); "
        "nothing was saved",
        current,
    )


def _delete_note_rows(conn: apsw.Connection, session_id: str, note_id: str) -> None:
    conn.execute(
        "DELETE FROM chunks WHERE session_id = ? AND json_extract(metadata_json, '$.note_id') = ?",
        (session_id, note_id),
    )
    conn.execute(
        "DELETE FROM conversation_events WHERE session_id = ? AND json_valid(payload_json) "
        "AND json_extract(payload_json, '$.tool_call_id') = ?",
        (session_id, note_id),
    )


def update_note(
    conn: apsw.Connection,
    backend: EmbeddingBackend,
    user: str,
    note_id: str,
    content: str,
    tags: Sequence[str] = (),
    expected: Note | None = None,
) -> Note:
    """Replace a note's content and tags in one transaction, keeping its id and ``created_at``. With
    ``expected`` (the note as loaded), a note changed since is a :class:`ConflictError` (see
    :func:`check_unchanged`)."""
    content = _validate_content(content)
    tag_list = tags_to_save(tags)
    event = _note_event(user, note_id, content)
    embed_prepared([event], backend)
    now = utc_now_text()
    with write_transaction(conn):
        old = _current(conn, user, note_id, expected)
        created = old.created_at or now
        event.extra_metadata = _note_metadata(note_id, "memory_update", tag_list, created, now)
        _delete_note_rows(conn, event.session_id, note_id)
        result = write_event_rows(conn, event, backend.model_name)
    return Note(note_id, user, content, tag_list, created, now, result.sequence)


def list_notes(
    conn: apsw.Connection,
    user: str,
    tags: Sequence[str] = (),
    tag_mode: str = "any",
    contains: str | None = None,
) -> list[Note]:
    """The user's notes, most recently updated first; filtered by tags (any/all) and by text."""
    return list(_notes_in_order(conn, user, None, tags, tag_mode, contains))


def notes_page(
    conn: apsw.Connection,
    user: str,
    after: tuple[str, int] | None,
    limit: int,
    tags: Sequence[str] = (),
    tag_mode: str = "any",
    contains: str | None = None,
) -> list[Note]:
    """A page of :func:`list_notes`: the ``limit`` notes after the cursor ``after`` (the last shown note's
    :func:`note_cursor`; None: the first page). Only the page's rows are read — with a text filter, the rows in the
    list's order until the page is full — so scrolling costs a page a step."""
    if limit <= 0:
        return []
    return list(itertools.islice(_notes_in_order(conn, user, after, tags, tag_mode, contains), limit))


#: a note's place in the list, newest first (:func:`note_cursor` in SQL)
_UPDATED = "coalesce(json_extract(c.metadata_json, '$.updated_at'), '')"


def _notes_in_order(
    conn: apsw.Connection,
    user: str,
    after: tuple[str, int] | None,
    tags: Sequence[str],
    tag_mode: str,
    contains: str | None,
) -> Iterator[Note]:
    """The user's notes after the cursor ``after`` in the list's one order (newest first, by :func:`note_cursor`,
    in SQL), tags filtered in SQL and text as they stream."""
    tag_sql, tag_args = tag_filter_sql(normalize_tags(tags), tag_mode)
    where, args = "", ()
    if after is not None:
        where, args = f" AND ({_UPDATED}, e.sequence) < (?, ?)", (after[0], after[1])
    needle = contains.casefold() if contains else None
    rows = conn.execute(
        f"{_NOTE_ROWS} AND {tag_sql}{where} ORDER BY {_UPDATED} DESC, e.sequence DESC",
        (notes_session(user), *tag_args, *args),
    )
    for row in rows:
        note = _note_from_row(user, row)
        if needle is None or needle in note.content.casefold():
            yield note


def note_cursor(note: Note) -> tuple[str, int]:
    """Where a note stands in a list of notes (newest first): ``(updated_at or "", sequence)``; a page after it
    starts with the next (:func:`page_after`)."""
    return note.updated_at or "", note.sequence


def page_after(notes: Sequence[Note], after: tuple[str, int] | None, limit: int) -> list[Note]:
    """The ``limit`` notes after the cursor ``after`` (the last shown note's :func:`note_cursor`) in a list ordered
    as :func:`list_notes` orders it (a negative ``limit``: every one after it)."""
    found = [n for n in notes if after is None or note_cursor(n) < tuple(after)]
    return found if limit < 0 else found[:limit]


def _expected_by_id(note_ids: Sequence[str], expected: Sequence[Note] | None) -> dict[str, Note] | None:
    if expected is None:
        return None
    by_id = {n.note_id: n for n in expected}
    missing = [n for n in note_ids if n not in by_id]
    if missing:
        raise InvalidInputError(f"no loaded version given for note {missing[0]}")
    return by_id


def _current(conn: apsw.Connection, user: str, note_id: str, loaded: Note | None) -> Note:
    """The note as it is now: checked against ``loaded`` when given (:func:`check_unchanged`), else just read."""
    if loaded is None:
        return get_note(conn, user, note_id)
    note = check_unchanged(conn, user, note_id, loaded)
    assert note is not None  # equal to ``loaded``, which is a note
    return note


def set_note_tags(
    conn: apsw.Connection,
    user: str,
    note_ids: Sequence[str],
    add: Sequence[str] = (),
    remove: Sequence[str] = (),
    expected: Sequence[Note] | None = None,
) -> list[Note]:
    """Add and remove tags on many notes in one transaction (content and vectors are untouched: tags live in
    the chunks' metadata). Each changed note gets a new ``updated_at``. With ``expected`` (the notes as loaded),
    any of them changed since is a :class:`ConflictError` and no note changes."""
    add_tags, remove_tags = tags_to_save(add), set(normalize_tags(remove))
    now = utc_now_text()
    session = notes_session(user)
    loaded = _expected_by_id(note_ids, expected)
    with write_transaction(conn):
        for note_id in note_ids:
            old = _current(conn, user, note_id, loaded and loaded[note_id])
            tags = normalize_tags([t for t in old.tags if t not in remove_tags] + add_tags)
            if tags == old.tags:
                continue
            conn.execute(
                "UPDATE chunks SET metadata_json = json_set(metadata_json, '$.tags', json(?), '$.updated_at', ?), "
                "updated_at = CURRENT_TIMESTAMP WHERE session_id = ? AND json_extract(metadata_json, '$.note_id') = ?",
                (json.dumps(tags), now, session, note_id),
            )
    return [get_note(conn, user, n) for n in note_ids]


def delete_notes(
    conn: apsw.Connection, user: str, note_ids: Sequence[str], expected: Sequence[Note] | None = None
) -> int:
    """Delete many notes in one transaction; an unknown id (or, with ``expected``, a note changed since it was
    loaded) stops it with nothing deleted."""
    session = notes_session(user)
    loaded = _expected_by_id(note_ids, expected)
    with write_transaction(conn):
        for note_id in note_ids:
            _current(conn, user, note_id, loaded and loaded[note_id])
            _delete_note_rows(conn, session, note_id)
    return len(note_ids)


def restore_notes(
    conn: apsw.Connection,
    backend: EmbeddingBackend,
    notes: Sequence[Note],
    expected: dict[str, Note | None] | None = None,
) -> list[Note]:
    """Write notes back exactly — id, content, tags and both dates — replacing whatever those ids hold now, all
    in one transaction. This is how an edit or a deletion is undone, and how exported notes are imported.
    ``expected`` maps note ids to what they must hold now (the note an edit left, None for a deleted one): a
    note another program changed since is a :class:`ConflictError` and nothing is restored."""
    events = []
    for note in notes:
        _validate_content(note.content)
        event = _note_event(note.user, note.note_id, note.content)
        created = note.created_at or utc_now_text()
        event.extra_metadata = _note_metadata(
            note.note_id, "memory_update", normalize_tags(note.tags), created, note.updated_at or created
        )
        events.append(event)
    embed_prepared(events, backend)
    out = []
    with write_transaction(conn):
        for note, event in zip(notes, events, strict=True):
            if expected is not None and note.note_id in expected:
                check_unchanged(conn, note.user, note.note_id, expected[note.note_id])
            _delete_note_rows(conn, event.session_id, note.note_id)
            result = write_event_rows(conn, event, backend.model_name)
            meta = event.extra_metadata
            out.append(
                Note(
                    note.note_id,
                    note.user,
                    note.content,
                    meta["tags"],
                    meta["created_at"],
                    meta["updated_at"],
                    result.sequence,
                )
            )
    return out
