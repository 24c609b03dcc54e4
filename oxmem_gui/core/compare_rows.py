"""The notes of oxmem's store (and Oxydra's) as :mod:`.compare` reads them: every user's notes in one query of
one snapshot, each kept as its stored row — ``(user, note_id, payload_json, metadata_json, sequence)`` — and made a
:class:`~.store.notes.Note` only where the other file's row differs (:func:`note_of`). Two rows of the same text
hold the same note, so a backup's untouched notes are never decoded; a changed row is decoded the way
:func:`~.store.notes.list_notes` decodes it, so the changes are exactly those of comparing the listed notes.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any, TypeVar

import apsw

from .store import browse
from .store.notes import NOTES_PREFIX, Note, _note_from_row, list_notes, notes_session

#: a note as read for a diff: its stored row not decoded yet, ``(user, note_id, payload_json, metadata_json,
#: sequence)``, or the note itself (another format's, or a user's whose list had to be read)
Stored = Note | tuple[Any, ...]
K = TypeVar("K")

#: how much of the file the rows are read through a memory map: each note's chunk and event are looked up in
#: their tables, a page each, and through SQLite's page cache that costs about a third more
_MMAP_BYTES = 1 << 32

#: the first chunk of every note of every user, with its event (the rows ``list_notes`` reads, in no order)
_ROWS = (
    "SELECT c.session_id, json_extract(c.metadata_json, '$.note_id'), e.payload_json, c.metadata_json, e.sequence "
    "FROM chunks c JOIN conversation_events e ON e.session_id = c.session_id AND e.sequence = c.sequence_start "
    f"WHERE c.session_id >= '{NOTES_PREFIX}' AND c.session_id < 'memory;' "
    "AND json_extract(c.metadata_json, '$.note_id') IS NOT NULL AND json_extract(c.metadata_json, '$.chunk_index') = 0"
)


def store_rows(conn: apsw.Connection) -> dict[tuple[str, str], Stored]:
    """Every note of the store by ``(user, note_id)``, as its row (in one read transaction: :meth:`.Database.read`).

    The users are :func:`~.store.browse.note_users`' and each is checked as ``list_notes`` checks it (the same
    error for a session ``memory:`` of no user). A user with a note id on two rows (no file oxmem or Oxydra writes
    has that) has its notes listed as before and the last of the list kept, as a dict of the list keeps it."""
    sessions = {notes_session(user): user for user in browse.note_users(conn)}
    # the map's size, to put back (nothing for a database in memory, which has nothing to map)
    mapped: list[tuple[Any, ...]] = conn.execute("PRAGMA mmap_size").fetchall()
    if mapped:
        conn.execute(f"PRAGMA mmap_size = {_MMAP_BYTES}")  # only while this reads: the connection is the store's
    try:
        rows: list[tuple[Any, ...]] = conn.execute(_ROWS).fetchall()
    finally:
        if mapped:
            conn.execute(f"PRAGMA mmap_size = {int(mapped[0][0])}")
    # a chunk of a session the sessions table does not have is no user's note: list_notes never reads it
    rows = [(user, *row[1:]) for row in rows if (user := sessions.get(row[0])) is not None]
    found: dict[tuple[str, str], Stored] = {(row[0], row[1]): row for row in rows}
    if len(found) < len(rows):
        doubled = sorted({user for (user, _), n in Counter((row[0], row[1]) for row in rows).items() if n > 1})
        for user in doubled:
            for key in [k for k in found if k[0] == user]:
                del found[key]
            for note in list_notes(conn, user):
                found[(user, note.note_id)] = note
    return found


def note_of(stored: Stored) -> Note:
    """The note of a row (as ``list_notes`` makes it), or the note itself."""
    if isinstance(stored, Note):
        return stored
    user, *row = stored
    return _note_from_row(user, tuple(row))


def differing(before: dict[K, Stored], after: dict[K, Stored]) -> set[K]:
    """The keys of only one side, and of both where the two may hold different notes: every key but those of two
    equal rows (the same payload and metadata text, and sequence, hold the same note; they are compared in C, a
    pair of dict items at a time). Where a side holds notes, not rows, every key."""
    if not set(map(type, itertools.chain(before.values(), after.values()))) <= {tuple}:
        return before.keys() | after.keys()
    return {key for key, _ in before.items() ^ after.items()}
