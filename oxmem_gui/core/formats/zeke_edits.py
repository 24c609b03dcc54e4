"""ZEKE's memories, edited the way ZEKE writes them (``Johnsonbros/Zeke`` at 210a5a2).

* An edit is ZEKE's own ``remember(text, scope, tags, ttl_seconds, memory_id)`` (``core/memory/middleware.py``
  lines 38–99) through ``MemoryStore.upsert`` (``core/memory/memory_store.py`` lines 148–196): ``INSERT … ON
  CONFLICT(id) DO UPDATE SET text, scope, tags, last_accessed_at, ttl_seconds, embedding``. So ``created_at``
  stays; ``last_accessed_at`` becomes NULL (a new ``MemoryItem`` has none); the memory's own TTL is passed back
  (without it ZEKE would reset it to the scope's default); tags are ``json.dumps(list)``, NULL when there are
  none; and the embedding is made again from the new text — or NULL when ZEKE's provider cannot, which is also
  what oxmem stores when the memory's model is one it cannot run (OpenAI's 1536 dimensions). ZEKE reads NULL as
  "no vector": its vector leg skips the memory, its FTS leg still finds it. A 384-dimension memory
  (all-MiniLM-L6-v2) gets a new vector from oxmem's own copy of that model, when installed.
* A new memory is ``remember`` without an id: a uuid4, ``created_at = datetime.utcnow().isoformat()``, the scope's
  default TTL (``_get_default_ttl``, lines 27–35: ``persona:`` none, ``task:``/``ops:``/``calendar:`` 90 days,
  any other none).
* A memory moved to another scope or given another TTL is the same ``remember`` with that scope or
  ``ttl_seconds``; no TTL is refused for a scope ZEKE gives a default (``remember`` would put the default back).
* A deletion is ``MemoryStore.delete`` (lines 377–384): ``DELETE FROM memories WHERE id = ?``.

``memories_fts`` follows through ZEKE's own triggers. oxmem adds one check: every edit and deletion carries the
memory as this window loaded it — its text, scope, tags, ``created_at`` and TTL, not its last access (ZEKE's own
searches move that) — and one changed meanwhile is :class:`ConflictError`, nothing written. One transaction each.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any

import apsw
import numpy as np

from ..database import write_transaction
from ..errors import ConflictError, InvalidInputError, NotFoundError
from ..store.inputs import check_text
from ..store.notes import Note
from ..store.tags import TAG_SEPARATOR

#: ``(conn, scope, memory_id)`` → the memory as a note, or None
NoteOf = Callable[[apsw.Connection, str, str], Note | None]
#: the text → its vector for the file's model, or None (ZEKE stores NULL when it cannot embed)
Embed = Callable[[str], np.ndarray | None]
_DAY = 86400
_UPSERT = """
            INSERT INTO memories (id, text, scope, tags, created_at, last_accessed_at, ttl_seconds, embedding)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET
                text = excluded.text,
                scope = excluded.scope,
                tags = excluded.tags,
                last_accessed_at = excluded.last_accessed_at,
                ttl_seconds = excluded.ttl_seconds,
                embedding = excluded.embedding
        """


def default_ttl(scope: str) -> int | None:
    """ZEKE's ``_get_default_ttl`` with its default configuration (``ops_ttl_days`` 90)."""
    if scope.startswith(("task:", "ops:", "calendar:")):
        return 90 * _DAY
    return None


def _text(content: Any) -> str:
    if not isinstance(content, str) or not content.strip():
        raise InvalidInputError("a memory needs some text; nothing was changed")
    return check_text(content, "memory")


def _scope(scope: Any) -> str:
    if not isinstance(scope, str) or not scope.strip():
        raise InvalidInputError("a memory needs a scope (notes, persona:…, task:…); nothing was changed")
    return check_text(scope, "scope")


def _tags(tags: Sequence[str]) -> str | None:
    """ZEKE's ``json.dumps(tags)``, NULL for none. A tag holding a comma is refused: oxmem's tag fields split
    at commas, so such a tag could not be shown or typed back."""
    kept = [check_text(t.strip(), "tag") for t in tags if isinstance(t, str) and t.strip()]
    if any(TAG_SEPARATOR in t for t in kept):
        raise InvalidInputError(f"a tag cannot hold a comma ({TAG_SEPARATOR!r} separates tags); nothing was changed")
    return json.dumps(kept) if kept else None


def _blob(vector: np.ndarray | None) -> bytes | None:
    return None if vector is None else np.asarray(vector, dtype="<f4").tobytes()


def _same(a: Note | None, b: Note | None) -> bool:
    """The same memory in what an edit may change (not its last access, which ZEKE's searches move)."""
    if a is None or b is None:
        return a is b
    return _key(a) == _key(b)


def _key(n: Note) -> tuple:
    return n.note_id, n.user, n.content, list(n.tags), n.created_at, n.details.get("ttl_seconds")


def _unchanged(conn: apsw.Connection, note_of: NoteOf, scope: str, memory_id: str, expected: Note) -> Note:
    current = note_of(conn, scope, memory_id)
    if _same(current, expected):
        return current  # type: ignore[return-value]
    if current is None:
        raise ConflictError(f"memory {memory_id} was deleted by another program since it was loaded; nothing was saved")
    raise ConflictError(
        f"memory {memory_id} was changed by another program since it was loaded; nothing was saved", current
    )


def save_memory(
    conn: apsw.Connection, note_of: NoteOf, embed: Embed, scope: str, content: str, tags: Sequence[str] = ()
) -> Note:
    """A new memory, as ``remember`` stores one."""
    text, scope = _text(content), _scope(scope)
    memory_id = str(uuid.uuid4())
    created = datetime.now(timezone.utc).replace(tzinfo=None).isoformat()
    blob = _blob(embed(text))
    with write_transaction(conn):
        conn.execute(_UPSERT, (memory_id, text, scope, _tags(tags), created, None, default_ttl(scope), blob))
        return note_of(conn, scope, memory_id)  # type: ignore[return-value]


#: ``update_memory``'s ``ttl`` when the memory's own TTL stays as it is
KEEP_TTL: Any = object()


def check_ttl(ttl: Any, scope: str) -> int | None:
    """A TTL in seconds as ``remember`` takes it (a whole number ≥ 1), or None for none — refused for a scope
    ZEKE gives a default, since its ``remember`` turns a missing TTL into that default."""
    if ttl is None:
        if default_ttl(scope) is not None:
            raise InvalidInputError(
                f"ZEKE gives {scope} memories a {default_ttl(scope) // _DAY}-day TTL when none is given: "
                "set a number of seconds instead; nothing was changed"
            )
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 1:
        raise InvalidInputError(f"a TTL is a whole number of seconds ≥ 1 (or none), not {ttl!r}; nothing was changed")
    return ttl


def update_memory(
    conn: apsw.Connection,
    note_of: NoteOf,
    embed: Embed,
    scope: str,
    memory_id: str,
    content: str,
    tags: Sequence[str] = (),
    expected: Note | None = None,
    new_scope: str | None = None,
    ttl: Any = KEEP_TTL,
) -> Note:
    """A memory's text and tags replaced — and its scope (``new_scope``) or TTL (``ttl``: seconds, None for
    none) when given — as ``remember(text, scope, tags, ttl_seconds, memory_id=…)`` does."""
    text = _text(content)
    target = scope if new_scope is None else _scope(new_scope)
    blob = _blob(embed(text))
    with write_transaction(conn):
        current = (
            note_of(conn, scope, memory_id)
            if expected is None
            else _unchanged(conn, note_of, scope, memory_id, expected)
        )
        if current is None:
            raise NotFoundError(f"no memory {memory_id!r} in scope {scope!r}")
        (created, kept) = conn.execute(
            "SELECT created_at, ttl_seconds FROM memories WHERE id = ?", (memory_id,)
        ).fetchall()[0]
        kept = kept if ttl is KEEP_TTL else check_ttl(ttl, target)
        conn.execute(_UPSERT, (memory_id, text, target, _tags(tags), created, None, kept, blob))
        return note_of(conn, target, memory_id)  # type: ignore[return-value]


def delete_memories(
    conn: apsw.Connection,
    note_of: NoteOf,
    scope: str,
    memory_ids: Sequence[str],
    expected: Sequence[Note] | None = None,
) -> int:
    """Memories deleted, all or none, as ``MemoryStore.delete`` does each."""
    loaded = {n.note_id: n for n in expected} if expected is not None else None
    with write_transaction(conn):
        for memory_id in memory_ids:
            if loaded is not None:
                if memory_id not in loaded:
                    raise InvalidInputError(f"no loaded version given for memory {memory_id}")
                _unchanged(conn, note_of, scope, memory_id, loaded[memory_id])
            elif note_of(conn, scope, memory_id) is None:
                raise NotFoundError(f"no memory {memory_id!r} in scope {scope!r}")
            conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
    return len(memory_ids)


def restore_memories(
    conn: apsw.Connection,
    note_of: NoteOf,
    embed: Embed,
    memories: Sequence[Note],
    expected: dict[str, Note | None] | None = None,
) -> list[Note]:
    """Memories written back (undo): text, scope, tags, ``created_at``, last access and TTL as given; the vector
    made again from the text, as ``remember`` would."""
    rows = []
    for note in memories:
        created = _stored_time(note.created_at) or datetime.now(timezone.utc).replace(tzinfo=None).isoformat()
        accessed = note.details.get("last_accessed_at") if note.details else None
        ttl = note.details.get("ttl_seconds") if note.details else None
        rows.append((note, _text(note.content), created, _stored_time(accessed), ttl, _blob(embed(note.content))))
    out = []
    with write_transaction(conn):
        for note, text, created, accessed, ttl, blob in rows:
            if expected is not None and note.note_id in expected:
                left = expected[note.note_id]  # where the edit left it (another scope, when it moved it)
                found = note_of(conn, note.user if left is None else left.user, note.note_id)
                if not _same(found, left):
                    raise ConflictError(
                        f"memory {note.note_id} was changed by another program since; nothing was restored", found
                    )
            conn.execute(_UPSERT, (note.note_id, text, note.user, _tags(note.tags), created, accessed, ttl, blob))
            out.append(note_of(conn, note.user, note.note_id))
    return out  # type: ignore[return-value]


def _stored_time(shown: Any) -> str | None:
    """A shown (RFC 3339) time back in ZEKE's naive UTC ISO form."""
    if not isinstance(shown, str) or not shown:
        return None
    try:
        when = datetime.fromisoformat(shown.replace("Z", "+00:00"))
    except ValueError:
        return shown
    if when.tzinfo is not None:
        when = when.astimezone(timezone.utc).replace(tzinfo=None)
    return when.isoformat()
