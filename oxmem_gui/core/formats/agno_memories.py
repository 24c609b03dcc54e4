"""Agno's user memories as notes, read and edited the way Agno's ``SqliteDb`` writes them.

Agno (``agno`` 3.1.10, ``agno/db/sqlite/sqlite.py``, ``upsert_user_memory`` 2624–2693, ``delete_user_memory``
2323–2355) keeps one row per memory: ``memory_id`` (a uuid4), ``memory`` (a JSON column: the text as a JSON
string, written by ``json.dumps``), ``topics`` (a JSON list, ``null`` for none), ``user_id``, ``input``,
``agent_id``, ``team_id``, ``feedback``, and ``created_at`` / ``updated_at`` in whole seconds since 1970. A new
memory has ``updated_at = created_at``; an update sets ``memory``, ``topics`` and ``updated_at = now`` and keeps
``created_at``; a deletion removes the row. No other table is touched.

A user is a notes group (:data:`NO_USER` for memories with no ``user_id``), a topic a tag (kept as written:
Agno's topic filter is a case-sensitive ``LIKE '%"topic"%'``), the list newest first by
``coalesce(updated_at, created_at)`` as Agno's listing sorted by ``updated_at``. **A memory whose ``memory`` is
not JSON** makes Agno's ``get_user_memories`` raise — its listing of every user's memories fails, not only this
one's: such a row is shown flagged (its raw text, ``details["problem"]``), and saving an edit of it writes valid
JSON. Every edit carries the memory as this window loaded it: changed or removed since, :class:`ConflictError`
with the current one, nothing written. Each call is one ``BEGIN IMMEDIATE`` transaction.
"""

from __future__ import annotations

import bisect
import json
import math
import uuid
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, cast

import apsw

from ..database import write_transaction
from ..errors import ConflictError, InvalidInputError, NotFoundError
from ..store.inputs import check_text
from ..store.notes import Note
from .aidaemon_rows import json_or_reason
from .detect import quoted
from .times import epoch_time, parse_when

#: the notes group of memories saved without a user
NO_USER = "(no user)"
FIELDS = "rowid, memory_id, memory, topics, user_id, input, agent_id, team_id, feedback, created_at, updated_at"
#: a memory's place in the list, newest first (Agno's ``sort_by="updated_at"``)
_PLACE = "coalesce(updated_at, created_at)"


def memory_groups(conn: apsw.Connection, table: str) -> list[str]:
    """The users that have memories (:data:`NO_USER` last, for memories without one)."""
    rows = conn.execute(f"SELECT DISTINCT user_id FROM {quoted(table)} ORDER BY user_id IS NULL, user_id").fetchall()
    return [NO_USER if r[0] is None else str(r[0]) for r in rows]


def _scope(group: str) -> tuple[str, tuple[Any, ...]]:
    return ("user_id IS NULL", ()) if group == NO_USER else ("user_id = ?", (group,))


def _topics(value: Any) -> tuple[list[str], str | None]:
    parsed, problem = json_or_reason(value)
    if value is None or (problem is None and parsed is None):
        return [], None
    if problem is None and isinstance(parsed, list) and all(isinstance(t, str) for t in parsed):
        return list(parsed), None
    return [], f"topics {problem or 'are not a list of strings'}"


def memory_note(row: Sequence[Any], group: str) -> Note:
    """One row as a note; a ``memory`` that is not JSON (or no string) shown flagged with its raw text."""
    rowid, memory_id, memory, topics, _user, given, agent, team, feedback, created, updated = row
    parsed, problem = json_or_reason(memory)
    details: dict[str, Any] = {"input": given, "agent_id": agent, "team_id": team, "feedback": feedback}
    if problem is not None:
        raw = memory.decode("utf-8", "replace") if isinstance(memory, bytes) else str(memory)
        details["problem"] = (
            f"memory {problem}: Agno's get_user_memories fails on this row, so its listing of every user's memories "
            "fails"
        )
        content = f"⚠ unreadable row: {raw}"
    else:
        content = parsed if isinstance(parsed, str) else json.dumps(parsed, ensure_ascii=False)
    tags, topics_problem = _topics(topics)
    if topics_problem is not None:
        details["topics_problem"] = topics_problem
    return Note(
        str(memory_id),
        group,
        content,
        tags,
        epoch_time(created) if created is not None else None,
        epoch_time(created if updated is None else updated) if (created, updated) != (None, None) else None,
        int(rowid),
        {k: v for k, v in details.items() if v is not None},
    )


def _key(place: Any, rowid: int) -> tuple[float, int]:
    """A memory's place in :func:`memory_order`, ascending: its time and row negated (no time: last, as SQLite
    sorts NULL under every number)."""
    return (-place if isinstance(place, (int, float)) else math.inf, -rowid)


def memory_order(conn: apsw.Connection, table: str, group: str) -> list[tuple[tuple[float, int], int]]:
    """The group's memories newest first (``coalesce(updated_at, created_at)`` descending, then the row): each
    one's :func:`_key` and rowid. Only the times and rowids are sorted — 60 ms at 100k memories, where sorting whole
    rows for a page takes 200 ms —, so a reader keeps it until the file changes and every page is a slice of it."""
    where, args = _scope(group)
    rows = conn.execute(
        f"SELECT {_PLACE}, rowid FROM {quoted(table)} WHERE {where} ORDER BY {_PLACE} DESC, rowid DESC", args
    )
    return [(_key(place, int(cast(int, rowid))), int(cast(int, rowid))) for place, rowid in rows]


def memories_page(
    conn: apsw.Connection,
    table: str,
    group: str,
    after: tuple[str, int] | None,
    limit: int,
    order: list[tuple[tuple[float, int], int]] | None = None,
) -> Iterator[Note]:
    """The ``limit`` memories after the cursor ``after`` (the last shown memory's shown time and rowid; None: from
    the newest; a negative ``limit``: all), a slice of ``order`` (:func:`memory_order`, read here when not given)."""
    order = memory_order(conn, table, group) if order is None else order
    start = (
        0
        if after is None
        else bisect.bisect_right(order, (_key(_cursor_place(conn, table, after), after[1]), math.inf))
    )
    chosen = order[start:] if limit < 0 else order[start : start + limit]
    rows = {
        r[0]: r
        for r in conn.execute(
            f"SELECT {FIELDS} FROM {quoted(table)} WHERE rowid IN (SELECT value FROM json_each(?))",
            (json.dumps([rowid for _, rowid in chosen]),),
        )
    }
    return (memory_note(rows[rowid], group) for _, rowid in chosen if rowid in rows)


def _cursor_place(conn: apsw.Connection, table: str, after: tuple[str, int]) -> Any:
    """The list's place at the cursor: the row's own where it still is, else the shown time's seconds."""
    found = conn.execute(f"SELECT {_PLACE} FROM {quoted(table)} WHERE rowid = ?", (after[1],)).fetchone()
    if found is not None:
        return found[0]
    when = parse_when(after[0])
    return int(when.timestamp()) if when is not None else -(2**62)


def find_memory(conn: apsw.Connection, table: str, group: str, memory_id: str) -> Note | None:
    where, args = _scope(group)
    rows = conn.execute(
        f"SELECT {FIELDS} FROM {quoted(table)} WHERE {where} AND memory_id = ?", (*args, memory_id)
    ).fetchall()
    return memory_note(rows[0], group) if rows else None


def _get(conn: apsw.Connection, table: str, group: str, memory_id: str) -> Note:
    found = find_memory(conn, table, group, memory_id)
    if found is None:
        raise NotFoundError(f"no memory {memory_id!r} of {group!r}")
    return found


def _text(content: Any) -> str:
    if not isinstance(content, str) or not content.strip():
        raise InvalidInputError("a memory is text and cannot be empty; nothing was changed")
    return check_text(content, "memory").strip()


def _topics_json(tags: Sequence[str]) -> str | None:
    """Topics as Agno writes them: a JSON list (``null`` when there are none), each kept as written."""
    topics: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise InvalidInputError(f"a topic is text, not {type(tag).__name__}; nothing was changed")
        t = check_text(tag, "topic").strip()
        if t and t not in topics:
            topics.append(t)
    return json.dumps(topics) if topics else "null"


def _unchanged(conn: apsw.Connection, table: str, group: str, memory_id: str, expected: Note | None) -> Note:
    """Inside the transaction: the memory as it is now, after checking it is still ``expected``."""
    current = find_memory(conn, table, group, memory_id)
    if current is None:
        raise ConflictError(f"memory {memory_id} was deleted by another program since it was loaded; nothing was saved")
    if expected is not None and current != expected:
        raise ConflictError(
            f"memory {memory_id} ({current.content[:60]!r}) was changed by another program since it was loaded; "
            "nothing was saved",
            current,
        )
    return current


def _epoch(now: datetime | None) -> int:
    return int((now or datetime.now(timezone.utc)).timestamp())


def save_memory(
    conn: apsw.Connection, table: str, group: str, content: str, tags: Sequence[str], now: datetime | None = None
) -> Note:
    """A new memory, as ``upsert_user_memory`` inserts one (a uuid4 id, ``updated_at = created_at``)."""
    text, topics = _text(content), _topics_json(tags)
    memory_id = str(uuid.uuid4())
    stamp = _epoch(now)
    with write_transaction(conn):
        conn.execute(
            f"INSERT INTO {quoted(table)} (memory_id, memory, topics, user_id, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (memory_id, json.dumps(text), topics, None if group == NO_USER else group, stamp, stamp),
        )
        return _get(conn, table, group, memory_id)


def update_memory(
    conn: apsw.Connection,
    table: str,
    group: str,
    memory_id: str,
    content: str,
    tags: Sequence[str],
    expected: Note | None = None,
    now: datetime | None = None,
) -> Note:
    """A memory's text and topics replaced, as ``upsert_user_memory`` updates one (``updated_at = now``,
    ``created_at`` kept); with ``expected``, only if it is still as loaded."""
    text, topics = _text(content), _topics_json(tags)
    with write_transaction(conn):
        if expected is not None:
            _unchanged(conn, table, group, memory_id, expected)
        else:
            _get(conn, table, group, memory_id)
        conn.execute(
            f"UPDATE {quoted(table)} SET memory = ?, topics = ?, updated_at = ? WHERE memory_id = ?",
            (json.dumps(text), topics, _epoch(now), memory_id),
        )
        return _get(conn, table, group, memory_id)


def delete_memories(
    conn: apsw.Connection, table: str, group: str, memory_ids: Sequence[str], expected: Sequence[Note] | None = None
) -> int:
    """Memories removed (``delete_user_memory``), all or none; with ``expected``, only those still as loaded."""
    loaded = {n.note_id: n for n in expected} if expected is not None else None
    with write_transaction(conn):
        for memory_id in memory_ids:
            if loaded is not None:
                if memory_id not in loaded:
                    raise InvalidInputError(f"no loaded version given for memory {memory_id}")
                _unchanged(conn, table, group, memory_id, loaded[memory_id])
            else:
                _get(conn, table, group, memory_id)
            conn.execute(f"DELETE FROM {quoted(table)} WHERE memory_id = ?", (memory_id,))
    return len(memory_ids)


def _stored(shown: str | None) -> int | None:
    when = parse_when(shown)
    return int(when.timestamp()) if when is not None else None


def restore_memories(
    conn: apsw.Connection, table: str, notes: Sequence[Note], expected: Mapping[str, Note | None] | None = None
) -> list[Note]:
    """Memories written back exactly — id, text, topics, user, the other columns and both times (undo, and a
    memory deleted meanwhile saved again); ``expected`` maps ids to what they must hold now (None: absent)."""
    out = []
    with write_transaction(conn):
        for note in notes:
            if expected is not None and note.note_id in expected:
                want = expected[note.note_id]
                current = find_memory(conn, table, note.user, note.note_id)
                if current != want:
                    raise ConflictError(
                        f"memory {note.note_id} was changed by another program since it was loaded; nothing was saved",
                        current,
                    )
            details = note.details or {}
            created = _stored(note.created_at)
            conn.execute(f"DELETE FROM {quoted(table)} WHERE memory_id = ?", (note.note_id,))
            conn.execute(
                f"INSERT INTO {quoted(table)} (memory_id, memory, topics, user_id, input, agent_id, team_id, "
                "feedback, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    note.note_id,
                    json.dumps(_text(note.content)),
                    _topics_json(note.tags),
                    None if note.user == NO_USER else note.user,
                    details.get("input"),
                    details.get("agent_id"),
                    details.get("team_id"),
                    details.get("feedback"),
                    created if created is not None else _epoch(None),
                    _stored(note.updated_at),
                ),
            )
            out.append(_get(conn, table, note.user, note.note_id))
    return out
