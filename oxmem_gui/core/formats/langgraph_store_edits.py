"""LangGraph store items added, edited and deleted the way ``SqliteStore`` writes them — without their vectors.

``put`` (``store/sqlite/base.py`` 380–433): ``INSERT OR REPLACE INTO store (prefix, key, value, created_at,
updated_at, expires_at, ttl_minutes)`` with the value as JSON bytes (``orjson.dumps``), both times
``CURRENT_TIMESTAMP``, ``expires_at = now + ttl`` (Python's datetime as sqlite3 binds it), then the item's vector
rows ``INSERT OR REPLACE``-d from the fields the program's index configuration names, embedded by the program's
model. ``delete`` (361–371) is ``DELETE FROM store`` alone.

oxmem writes the item row exactly so (an edit keeps the item's ``ttl_minutes`` and counts ``expires_at`` from now,
as a put with that TTL does; a new item gets a uuid4 key, as LangGraph's memory tools make them). It does **not**
write vectors: which fields are embedded, and with which model, is the program's configuration, not the file's, so
a vector oxmem made could be of another model than the program searches with. The item's vector rows are deleted
instead — said before saving (:func:`vector_notice`) — so the program's vector search stops returning it until the
program puts it again, rather than finding it by text it no longer holds; a deletion removes them too (LangGraph's
leaves them behind, unreachable). Every edit carries the item as this window loaded it: changed or removed since,
:class:`ConflictError` with the current item, nothing written. Each call is one ``BEGIN IMMEDIATE`` transaction.
Undo writes an item's value and times back; its vectors stay gone.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import apsw

from ..database import write_transaction
from ..errors import ConflictError, InvalidInputError, NotFoundError
from ..store.inputs import check_text
from ..store.notes import Note
from .detect import column_set
from .times import parse_when

NoteOf = Callable[[apsw.Connection, str, str], "Note | None"]


def vector_notice(conn: apsw.Connection) -> str | None:
    """What saving leaves LangGraph's vector search without, said first; None for a store without an index."""
    if not column_set(conn, "store_vectors"):
        return None
    return (
        "the item is saved without its vectors: the fields LangGraph embeds and its model are in the program, not "
        "this file, so LangGraph's vector search will not return it until the program puts it again"
    )


def parse_value(content: Any, tags: Sequence[str] = ()) -> dict[str, Any]:
    """An item's value from the editor's text: a JSON object, as ``put`` takes one; no tags."""
    if tags:
        raise InvalidInputError("LangGraph's items have no tags; nothing was changed")
    if not isinstance(content, str):
        raise InvalidInputError("an item's value is JSON text")
    try:
        value = json.loads(check_text(content, "item"))
    except ValueError as exc:
        raise InvalidInputError(f"an item's value is a JSON object, {{…}} ({exc}); nothing was changed") from None
    if not isinstance(value, dict):
        raise InvalidInputError(
            f"an item's value is a JSON object, {{…}}, not {type(value).__name__}; nothing was changed"
        )
    return value


def _same(a: Note | None, b: Note | None) -> bool:
    """The same stored item: its value and times (its details hold the reader's clock)."""
    return (a is None) == (b is None) and (
        a is None or b is None or (a.content, a.created_at, a.updated_at) == (b.content, b.created_at, b.updated_at)
    )


def _check(current: Note | None, expected: Note | None, prefix: str, key: str) -> Note:
    if current is None:
        raise ConflictError(
            f"item {key} of {prefix} was deleted by another program since it was loaded; nothing was saved"
        )
    if expected is not None and not _same(current, expected):
        raise ConflictError(
            f"item {key} of {prefix} was changed by another program since it was loaded; nothing was saved", current
        )
    return current


def _ttl(conn: apsw.Connection, prefix: str, key: str) -> Any:
    if "ttl_minutes" not in column_set(conn, "store"):
        return None
    rows = conn.execute("SELECT ttl_minutes FROM store WHERE prefix = ? AND key = ?", (prefix, key)).fetchall()
    return rows[0][0] if rows else None


def _put(conn: apsw.Connection, prefix: str, key: str, value: dict[str, Any], ttl: Any, now: datetime) -> None:
    """``put``'s row, its vector rows deleted."""
    data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    if {"expires_at", "ttl_minutes"} <= column_set(conn, "store"):
        expires = None if ttl is None else (now + timedelta(minutes=float(ttl))).isoformat(" ")
        conn.execute(
            "INSERT OR REPLACE INTO store (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes) "
            "VALUES (?, ?, ?, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, ?, ?)",
            (prefix, key, data, expires, ttl),
        )
    else:  # (a file from before LangGraph's TTL columns)
        conn.execute(
            "INSERT OR REPLACE INTO store (prefix, key, value, created_at, updated_at) "
            "VALUES (?, ?, ?, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)",
            (prefix, key, data),
        )
    _drop_vectors(conn, prefix, key)


def _drop_vectors(conn: apsw.Connection, prefix: str, key: str) -> None:
    if column_set(conn, "store_vectors"):
        conn.execute("DELETE FROM store_vectors WHERE prefix = ? AND key = ?", (prefix, key))


def save_item(
    conn: apsw.Connection, note_of: NoteOf, prefix: str, content: str, tags: Sequence[str], now: datetime
) -> Note:
    """A new item of namespace ``prefix`` (a uuid4 key, no TTL)."""
    value, key = parse_value(content, tags), str(uuid.uuid4())
    with write_transaction(conn):
        _put(conn, prefix, key, value, None, now)
        found = note_of(conn, prefix, key)
        assert found is not None
        return found


def update_item(
    conn: apsw.Connection,
    note_of: NoteOf,
    prefix: str,
    key: str,
    content: str,
    tags: Sequence[str],
    expected: Note | None,
    now: datetime,
) -> Note:
    """An item's value replaced as ``put`` replaces it (its TTL kept), its vector rows deleted; with
    ``expected``, only if it is still as loaded."""
    value = parse_value(content, tags)
    with write_transaction(conn):
        _check(note_of(conn, prefix, key), expected, prefix, key)
        _put(conn, prefix, key, value, _ttl(conn, prefix, key), now)
        found = note_of(conn, prefix, key)
        assert found is not None
        return found


def delete_items(
    conn: apsw.Connection, note_of: NoteOf, prefix: str, keys: Sequence[str], expected: Sequence[Note] | None
) -> int:
    """Items removed as ``delete`` removes them, with their vector rows; all or none."""
    loaded = {n.note_id: n for n in expected} if expected is not None else None
    with write_transaction(conn):
        for key in keys:
            current = note_of(conn, prefix, key)
            if loaded is None and current is None:
                raise NotFoundError(f"no item {key!r} in namespace {prefix!r}")
            _check(current, None if loaded is None else loaded.get(key), prefix, key)
            conn.execute("DELETE FROM store WHERE prefix = ? AND key = ?", (prefix, key))
            _drop_vectors(conn, prefix, key)
    return len(keys)


def _stored_time(shown: str | None) -> str | None:
    when = parse_when(shown)
    return when.strftime("%Y-%m-%d %H:%M:%S") if when else None


def restore_items(
    conn: apsw.Connection, note_of: NoteOf, items: Sequence[Note], expected: Mapping[str, Note | None] | None
) -> list[Note]:
    """Items written back — key, value and both times, their TTL as it was (undo; a deleted item saved again);
    ``expected`` maps keys to what they must hold now (None: absent). Their vectors are not brought back."""
    out = []
    with write_transaction(conn):
        for note in items:
            if expected is not None and note.note_id in expected:
                want = expected[note.note_id]
                if not _same(note_of(conn, note.user, note.note_id), want):
                    raise ConflictError(
                        f"item {note.note_id} of {note.user} was changed by another program since it was loaded; "
                        "nothing was saved",
                        note_of(conn, note.user, note.note_id),
                    )
            value = parse_value(note.content)
            details = note.details or {}
            data = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
            conn.execute("DELETE FROM store WHERE prefix = ? AND key = ?", (note.user, note.note_id))
            columns = ["prefix", "key", "value"]
            values: list[Any] = [note.user, note.note_id, data]
            for column, stamp in (("created_at", note.created_at), ("updated_at", note.updated_at)):
                if _stored_time(stamp) is not None:
                    columns.append(column)
                    values.append(_stored_time(stamp))
            if {"expires_at", "ttl_minutes"} <= column_set(conn, "store"):
                expires = parse_when(details.get("expires_at"))
                columns += ["expires_at", "ttl_minutes"]
                values += [None if expires is None else expires.isoformat(" "), details.get("ttl_minutes")]
            conn.execute(
                f"INSERT INTO store ({', '.join(columns)}) VALUES ({', '.join('?' * len(values))})", tuple(values)
            )
            _drop_vectors(conn, note.user, note.note_id)
            found = note_of(conn, note.user, note.note_id)
            assert found is not None
            out.append(found)
    return out
