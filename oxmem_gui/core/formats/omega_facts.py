"""Omega's facts as notes, read and edited the way Omega writes them.

Omega (``omgagi/omega`` at ce9f4b2, ``backend/crates/omega-memory/src/store/facts.rs``) writes a fact with
``store_fact`` (lines 9–29): ``INSERT INTO facts (id, sender_id, key, value) VALUES (uuid4, …) ON
CONFLICT(sender_id, key) DO UPDATE SET value = excluded.value, updated_at = datetime('now')``, and removes one with
``delete_fact`` (lines 45–54): ``DELETE FROM facts WHERE sender_id = ? AND key = ?``. Its migration 003 makes
``(sender_id, key)`` unique; files from before it keep one global set of facts with a unique ``key`` (their
group is :data:`SHARED_FACTS`). Facts touch no FTS table and no trigger.

A fact is the note ``"key: value"``. oxmem writes the same rows, with these differences, each so that nothing is
overwritten unseen: a new fact whose key the group already has is refused (Omega would silently replace the
value), an edit that renames a key onto another fact's key is refused, and every edit and deletion carries the
fact as this window loaded it — if the agent (or anyone) changed or removed it since, :class:`ConflictError`
carries the current fact and nothing is written. A renamed key keeps the fact's id, ``created_at`` and
``source_message_id``; ``updated_at`` becomes ``datetime('now')`` as in Omega's upsert. Facts have no tags.
Each call is one ``BEGIN IMMEDIATE`` transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import apsw

from ..database import write_transaction
from ..errors import ConflictError, InvalidInputError, NotFoundError
from ..store.inputs import check_text
from ..store.notes import Note
from .times import cursor_place, parse_when, shown_time, sql_place

#: the notes group of facts from files before migration 003, when facts had no sender
SHARED_FACTS = "(all senders)"
_FIELDS = "rowid, id, key, value, source_message_id, created_at, updated_at"


def _has_sender(conn: apsw.Connection) -> bool:
    return "sender_id" in {r[1] for r in conn.execute("PRAGMA table_info(facts)")}


def has_facts(conn: apsw.Connection) -> bool:
    return bool(conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'facts'").fetchall())


def fact_groups(conn: apsw.Connection) -> list[str]:
    """The senders that have facts (or :data:`SHARED_FACTS` for a file from before migration 003)."""
    if not has_facts(conn):
        return []
    if not _has_sender(conn):
        return [SHARED_FACTS] if conn.execute("SELECT 1 FROM facts LIMIT 1").fetchall() else []
    return [str(r[0]) for r in conn.execute("SELECT DISTINCT sender_id FROM facts ORDER BY sender_id")]


def _scope(conn: apsw.Connection, group: str) -> tuple[str, tuple]:
    """The WHERE clause and arguments that select ``group``'s facts."""
    if _has_sender(conn):
        if group == SHARED_FACTS:
            raise InvalidInputError(f"{SHARED_FACTS!r} is not a sender: this file keeps facts per sender")
        return "sender_id = ?", (group,)
    if group != SHARED_FACTS:
        raise InvalidInputError(f"this Omega file keeps one set of facts for all senders: use {SHARED_FACTS!r}")
    return "1", ()


def fact_note(row: Sequence[Any], group: str) -> Note:
    rowid, fact_id, key, value, source, created, updated = row
    return Note(
        str(fact_id),
        group,
        f"{key}: {value}",
        [],
        shown_time(created) if created is not None else None,
        shown_time(updated) if updated is not None else None,
        rowid,
        {"key": key, "value": value, "source_message_id": source},
    )


#: a fact's place in the list, newest first: its ``updated_at`` (then the newest row; a value that is no time last)
_PLACE = sql_place("updated_at")


def list_facts(conn: apsw.Connection, group: str) -> list[Note]:
    """``group``'s facts, newest first (``updated_at`` descending, then the newest row)."""
    return list(facts_page(conn, group, None, -1))


def facts_page(conn: apsw.Connection, group: str, after: tuple[str, int] | None, limit: int) -> Iterator[Note]:
    """The ``limit`` facts after the cursor ``after`` (the last shown fact's ``note_cursor``; None: from the
    newest; a negative ``limit``: all of them, read as they are taken), in SQL."""
    if not has_facts(conn):
        return iter(())
    try:
        where, args = _scope(conn, group)
    except InvalidInputError:
        return iter(())
    if after is not None:
        place = cursor_place(conn, "facts", "rowid", "updated_at", after)
        where, args = f"{where} AND ({_PLACE}, rowid) < (?, ?)", (*args, place, after[1])
    rows = conn.execute(
        f"SELECT {_FIELDS} FROM facts WHERE {where} ORDER BY {_PLACE} DESC, rowid DESC LIMIT ?", (*args, limit)
    )
    return (fact_note(r, group) for r in rows)


def _find(conn: apsw.Connection, group: str, *, fact_id: str | None = None, key: str | None = None) -> Note | None:
    where, args = _scope(conn, group)
    column, value = ("id", fact_id) if fact_id is not None else ("key", key)
    rows = conn.execute(f"SELECT {_FIELDS} FROM facts WHERE {where} AND {column} = ?", (*args, value)).fetchall()
    return fact_note(rows[0], group) if rows else None


def get_fact(conn: apsw.Connection, group: str, fact_id: str) -> Note:
    found = _find(conn, group, fact_id=fact_id)
    if found is None:
        raise NotFoundError(f"no fact {fact_id!r} of {group!r}")
    return found


#: how a fact is written, said where one is typed
FACT_RULES = "a fact is written “key: value” (e.g. “home city: Berlin”): the key before the first colon"


def parse_fact(content: Any, tags: Sequence[str] = (), agent: str = "Omega") -> tuple[str, str]:
    """``"key: value"`` → ``(key, value)``; anything else (and any tag) is :class:`InvalidInputError`."""
    if tags:
        raise InvalidInputError(f"{agent}'s facts have no tags; nothing was changed")
    if not isinstance(content, str):
        raise InvalidInputError("a fact is text: 'key: value'")
    key, colon, value = check_text(content, "fact").partition(":")
    key, value = key.strip(), value.strip()
    if not colon or not key or not value:
        raise InvalidInputError(f"a fact is written 'key: value' (got {content.strip()[:60]!r}); nothing was changed")
    if "\n" in key:
        raise InvalidInputError("a fact's key is one line; nothing was changed")
    return key, value


def _key_taken(conn: apsw.Connection, group: str, key: str, fact_id: str | None) -> None:
    other = _find(conn, group, key=key)
    if other is not None and other.note_id != fact_id:
        raise InvalidInputError(
            f"{group} already has a fact {key!r} ({other.content[:60]!r}): edit that one instead; nothing was changed"
        )


def _unchanged(conn: apsw.Connection, group: str, fact_id: str, expected: Note | None) -> Note | None:
    """Inside the transaction: the fact as it is now, after checking it is still ``expected``."""
    current = _find(conn, group, fact_id=fact_id)
    if current == expected:
        return current
    if current is None:
        raise ConflictError(f"fact {fact_id} was deleted by another program since it was loaded; nothing was saved")
    raise ConflictError(
        f"fact {fact_id} ({current.content[:60]!r}) was changed by another program since it was loaded; nothing "
        "was saved",
        current,
    )


def save_fact(conn: apsw.Connection, group: str, content: str, tags: Sequence[str] = ()) -> Note:
    """A new fact (Omega's ``store_fact`` insert); a key the group already has is refused."""
    key, value = parse_fact(content, tags)
    fact_id = str(uuid.uuid4())
    with write_transaction(conn):
        where, args = _scope(conn, group)
        _key_taken(conn, group, key, None)
        if where == "1":
            conn.execute("INSERT INTO facts (id, key, value) VALUES (?, ?, ?)", (fact_id, key, value))
        else:
            conn.execute(
                "INSERT INTO facts (id, sender_id, key, value) VALUES (?, ?, ?, ?)", (fact_id, group, key, value)
            )
        return get_fact(conn, group, fact_id)


def update_fact(
    conn: apsw.Connection,
    group: str,
    fact_id: str,
    content: str,
    tags: Sequence[str] = (),
    expected: Note | None = None,
) -> Note:
    """A fact's key and value replaced (Omega's upsert: ``updated_at = datetime('now')``); with ``expected``, only
    if it is still as loaded."""
    key, value = parse_fact(content, tags)
    with write_transaction(conn):
        current = _unchanged(conn, group, fact_id, expected) if expected is not None else get_fact(conn, group, fact_id)
        if current is None:
            raise NotFoundError(f"no fact {fact_id!r} of {group!r}")
        _key_taken(conn, group, key, fact_id)
        conn.execute(
            "UPDATE facts SET key = ?, value = ?, updated_at = datetime('now') WHERE id = ?", (key, value, fact_id)
        )
        return get_fact(conn, group, fact_id)


def delete_facts(
    conn: apsw.Connection, group: str, fact_ids: Sequence[str], expected: Sequence[Note] | None = None
) -> int:
    """Facts removed (Omega's ``delete_fact``), all or none; with ``expected``, only those still as loaded."""
    loaded = {n.note_id: n for n in expected} if expected is not None else None
    with write_transaction(conn):
        for fact_id in fact_ids:
            if loaded is not None:
                if fact_id not in loaded:
                    raise InvalidInputError(f"no loaded version given for fact {fact_id}")
                _unchanged(conn, group, fact_id, loaded[fact_id])
            else:
                get_fact(conn, group, fact_id)
            conn.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
    return len(fact_ids)


def _stored_time(shown: str | None) -> str | None:
    """A shown time back in Omega's ``datetime('now')`` form."""
    when = parse_when(shown)
    return when.strftime("%Y-%m-%d %H:%M:%S") if when else None


def restore_facts(
    conn: apsw.Connection, facts: Sequence[Note], expected: Mapping[str, Note | None] | None = None
) -> list[Note]:
    """Facts written back exactly — id, key, value, both dates (undo, and a fact deleted meanwhile saved
    again); ``expected`` maps ids to what they must hold now (None: absent)."""
    parsed = [(note, *parse_fact(note.content, note.tags)) for note in facts]
    out = []
    with write_transaction(conn):
        for note, key, value in parsed:
            if expected is not None and note.note_id in expected:
                _unchanged(conn, note.user, note.note_id, expected[note.note_id])
            where, _ = _scope(conn, note.user)
            _key_taken(conn, note.user, key, note.note_id)
            source = note.details.get("source_message_id") if note.details else None
            if source is not None and not conn.execute("SELECT 1 FROM messages WHERE id = ?", (source,)).fetchall():
                source = None  # its message is gone: the fact is kept without the reference
            created = _stored_time(note.created_at)
            updated = _stored_time(note.updated_at)
            conn.execute("DELETE FROM facts WHERE id = ?", (note.note_id,))
            columns = ["id", "key", "value", "source_message_id"]
            values: list[Any] = [note.note_id, key, value, source]
            if where != "1":
                columns.append("sender_id")
                values.append(note.user)
            for column, stamp in (("created_at", created), ("updated_at", updated)):
                if stamp is not None:
                    columns.append(column)
                    values.append(stamp)
            conn.execute(f"INSERT INTO facts ({', '.join(columns)}) VALUES ({', '.join('?' * len(values))})", values)
            out.append(get_fact(conn, note.user, note.note_id))
    return out
