"""aidaemon's facts as notes, read and edited the way aidaemon writes them.

aidaemon (``davo20019/aidaemon`` at 39a1955, ``src/state/sqlite/facts.rs``) keeps every version of a fact: its
``upsert_fact`` (lines 209–600) finds the active row of ``(category, key)`` (``superseded_at IS NULL``), and when
the value differs marks it ``UPDATE facts SET superseded_at = ? WHERE id = ?`` (line 480) and inserts the new
version ``INSERT INTO facts (category, key, value, source, created_at, updated_at, recall_count, channel_id,
privacy, embedding) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`` (line 489), with ``now = Utc::now().to_rfc3339()``.
Its ``delete_fact`` (lines 1141–1149) only supersedes: ``UPDATE facts SET superseded_at = ? WHERE id = ?``. A
partial unique index (``idx_facts_active_unique``, ``src/state/sqlite/mod.rs`` line 123) allows one active row
per key. In a file from before that history (``UNIQUE(category, key)`` and no ``superseded_at``), aidaemon's
fallback updates the row in place (facts.rs lines 529–548); deleting there removes the row, the only way that
layout has. A v0.7 file migrated forward (commit 2211dfd9: ``superseded_at`` added to the table that keeps its
``UNIQUE(category, key)``) has one row per key too: an edit there is made in place (aidaemon v0.7's own
supersede-then-insert fails on that key and drops the new value), a deletion supersedes as its ``delete_fact``
does, and a new fact whose key a forgotten row holds is refused (:func:`one_row_per_key`).

oxmem writes the same rows, with these choices, each so that nothing is overwritten unseen:

* An edit is a new version (history kept) whose ``source`` is ``'user'`` — aidaemon treats any source other than
  ``'consolidation'`` as user-stated and never lets consolidation overwrite it (facts.rs lines 459–476) — and
  which keeps the old version's ``channel_id`` and ``privacy``.
* The new version's ``embedding`` is aidaemon's: AllMiniLM-L6-v2 (oxmem's own copy of the model, the same weights)
  of ``build_fact_embedding_text`` (facts.rs lines 52–62), as 384 little-endian float32 (``encode_embedding``). When
  the model is not installed it is NULL — the state aidaemon itself leaves when embedding fails (``.ok()``, line
  448) and that its startup ``backfill_fact_embeddings`` (``src/state/sqlite/mod.rs`` lines 458–495) fills in;
  until then aidaemon's fact recall finds the fact by its words (its lexical fallback).
* A new fact whose key is already active, or an edit that renames onto an active key (exact, or the same after
  aidaemon's ``canonicalize_fact_key``), is refused; aidaemon would silently supersede it.
* Every edit carries the fact as loaded: if its value was superseded, changed or removed since, a
  :class:`ConflictError` carries the active version of the key now (or None) and nothing is written. The agent
  bumping ``recall_count`` is not a change of the fact.
* Undo (:func:`restore_facts`) writes the old value back as one more version, as aidaemon would if told it again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from ..database import write_transaction
from ..errors import ConflictError, InvalidInputError, NotFoundError
from ..store.notes import Note
from .aidaemon_rows import id_key, int_or_zero, shown_or_none, table_columns, table_names, when_key
from .omega_facts import parse_fact
from .times import cursor_place, sql_place

#: the ``source`` of a version written from oxmem (aidaemon's own are ``agent``, ``consolidation``…)
USER_SOURCE = "user"
#: a fact's embedding text → its stored vector (384 little-endian float32), or None where the model is missing
Embed = Callable[[str], bytes | None]


def embedding_text(category: str, key: str, value: str) -> str:
    """aidaemon's ``build_fact_embedding_text`` (facts.rs lines 52–62)."""
    readable = key.replace("_", " ").replace("-", " ")
    return f"{category} - {readable}: {value}. The user's {readable} is {value}."


def _vector(embed: Embed | None, category: str, key: str, value: str) -> bytes | None:
    return None if embed is None else embed(embedding_text(category, key, value))


def _now() -> str:
    """``Utc::now().to_rfc3339()``: RFC 3339 with the fraction and ``+00:00``."""
    return datetime.now(timezone.utc).isoformat()


def versioned(conn: Any) -> bool:
    """Whether the file marks forgotten facts (``superseded_at``); else the legacy layout, where they are removed."""
    return "superseded_at" in table_columns(conn, "facts")


def one_row_per_key(conn: Any) -> bool:
    """Whether ``facts`` keeps a table-level ``UNIQUE(category, key)``: the legacy layout, and an aidaemon v0.7
    file migrated forward (its ``superseded_at`` added to that table, commit 2211dfd9). A key then has one row,
    active or superseded, so a new version cannot be inserted beside the old: an edit is made in place."""
    for _, index, unique, _origin, partial in conn.execute("PRAGMA index_list(facts)").fetchall():
        if unique and not partial:
            quoted = '"' + index.replace('"', '""') + '"'
            columns = [r[2] for r in conn.execute(f"PRAGMA index_info({quoted})").fetchall()]
            if sorted(columns) == ["category", "key"]:
                return True
    return False


def keeps_history(conn: Any) -> bool:
    """Whether an edit supersedes the old version and inserts a new one (aidaemon's ``upsert_fact``)."""
    return versioned(conn) and not one_row_per_key(conn)


def canonical_key(key: str) -> str:
    """aidaemon's ``canonicalize_fact_key`` (facts.rs lines 82–106): ASCII letters and digits lower-cased, every
    run of anything else one ``_``, trimmed of ``_``; the key itself when nothing is left."""
    out = re.sub(r"[^a-z0-9]+", "_", "".join(c.lower() if c.isascii() else "\x00" for c in key.strip()))
    return out.strip("_") or key.strip()


def _rows(conn: Any, where: str, args: Sequence[Any]) -> list[dict[str, Any]]:
    return list(_iter_rows(conn, where, args))


def _iter_rows(conn: Any, where: str, args: Sequence[Any]) -> Iterator[dict[str, Any]]:
    cols = table_columns(conn, "facts")
    return (dict(zip(cols, r, strict=False)) for r in conn.execute(f"SELECT * FROM facts WHERE {where}", tuple(args)))


def _note(row: Mapping[str, Any], cols: Sequence[str], old: Sequence[Mapping[str, Any]]) -> Note:
    versions = sorted(old, key=lambda v: (when_key(v.get("created_at")), id_key(v)))
    history = [
        {
            "value": v.get("value"),
            "created_at": shown_or_none(v.get("created_at")),
            "superseded_at": shown_or_none(v.get("superseded_at")),
        }
        for v in reversed(versions)
    ]
    details: dict[str, Any] = {"id": row.get("id"), "key": row.get("key")}
    for key in ("source", "privacy", "channel_id", "recall_count"):
        if key in cols:
            details[key] = row.get(key)
    if "last_recalled_at" in cols:
        details["last_recalled_at"] = shown_or_none(row.get("last_recalled_at"))
    if "embedding" in cols:
        details["embedded"] = row.get("embedding") is not None
    details["history"] = history
    created = shown_or_none(row.get("created_at"))
    return Note(
        f"fact:{row.get('id')}",
        str(row.get("category")),
        f"{row.get('key')}: {row.get('value')}",
        [],
        created,
        shown_or_none(row.get("updated_at")) or created,
        int_or_zero(row.get("id")),
        details,
    )


def list_facts(conn: Any, category: str) -> list[Note]:
    """One note per active fact of ``category`` (``key: value``), its superseded versions as ``history``
    (newest first); newest first."""
    return list(facts_page(conn, category, None, -1))


def facts_page(conn: Any, category: str, after: tuple[str, int] | None, limit: int) -> Iterator[Note]:
    """The ``limit`` active facts of ``category`` after the cursor ``after`` (the last shown fact's
    ``note_cursor``; None: from the newest; a negative ``limit``: all of them, read as they are taken), newest
    first — the time each shows (``updated_at``, else ``created_at``; one that is no time last), then the newest
    row — each with the history of its key. In SQL: a page reads only its rows and their keys' history."""
    if "facts" not in table_names(conn):
        return iter(())
    cols = table_columns(conn, "facts")
    shown = "coalesce(nullif({}, ''), {})".format(*(c if c in cols else "NULL" for c in ("updated_at", "created_at")))
    place = sql_place(shown)
    where, args = "category = ?", [category]
    if "superseded_at" in cols:
        where += " AND superseded_at IS NULL"
    if after is not None:
        where += f" AND ({place}, id) < (?, ?)"
        args += [cursor_place(conn, "facts", "id", shown, after), after[1]]
    rows: Iterable[dict[str, Any]] = _iter_rows(conn, f"{where} ORDER BY {place} DESC, id DESC LIMIT ?", (*args, limit))
    superseded, older = "category = ? AND superseded_at IS NOT NULL", [category]
    if limit >= 0:  # a page: the history of its keys only
        rows = list(rows)
        superseded += " AND key IN (SELECT value FROM json_each(?))"
        older.append(json.dumps(sorted({str(r.get("key")) for r in rows})))
    old: dict[Any, list[dict[str, Any]]] = {}
    if "superseded_at" in cols:
        for r in _rows(conn, superseded, older):
            old.setdefault(r.get("key"), []).append(r)
    return (_note(r, cols, old.get(r.get("key"), [])) for r in rows)


def _fact_id(note_id: str) -> int:
    prefix, _, number = note_id.partition(":")
    if prefix != "fact" or not number.isdigit():
        raise NotFoundError(f"no fact {note_id!r}: aidaemon's facts are named fact:<id>")
    return int(number)


def _active_note(conn: Any, category: str, key: str) -> Note | None:
    """The active version of ``(category, key)`` as a note (its superseded versions as history), or None."""
    cols = table_columns(conn, "facts")
    rows = _rows(conn, "category = ? AND key = ?", (category, key))
    active = [r for r in rows if r.get("superseded_at") is None]
    if not active:
        return None
    return _note(active[0], cols, [r for r in rows if r.get("superseded_at") is not None])


def get_fact(conn: Any, category: str, note_id: str) -> Note:
    """The fact ``note_id`` of ``category`` while it is active."""
    rows = _rows(conn, "id = ? AND category = ?", (_fact_id(note_id), category))
    if not rows or rows[0].get("superseded_at") is not None:
        raise NotFoundError(f"no active fact {note_id!r} in category {category!r}")
    found = _active_note(conn, category, str(rows[0]["key"]))
    assert found is not None
    return found


def _same(a: Note | None, b: Note | None) -> bool:
    """The same fact for an edit: the same row, key and value (the agent's recall bookkeeping is no change)."""
    if a is None or b is None:
        return a is b
    return (a.note_id, a.user, a.content) == (b.note_id, b.user, b.content)


def _check(conn: Any, note_id: str, expected: Note | None) -> Note | None:
    """Inside the transaction: the fact ``note_id`` now (None when it is not active), after checking it is still
    ``expected`` (None: it must not be active)."""
    rows = _rows(conn, "id = ?", (_fact_id(note_id),))
    row = rows[0] if rows and rows[0].get("superseded_at") is None else None
    current = _active_note(conn, str(row["category"]), str(row["key"])) if row is not None else None
    if _same(current, expected):
        return current
    theirs = current
    if theirs is None and expected is not None:
        theirs = _active_note(conn, expected.user, str(expected.details.get("key") or ""))
    what = f"fact {note_id} ({expected.content[:60]!r})" if expected is not None else f"fact {note_id}"
    if theirs is None:
        raise ConflictError(f"{what} was deleted by another program since it was loaded; nothing was saved")
    raise ConflictError(
        f"{what} was changed by another program since it was loaded (now {theirs.content[:60]!r}); nothing was saved",
        theirs,
    )


def _key_taken(conn: Any, category: str, key: str, fact_id: int | None) -> None:
    """Refuse ``key`` when another active fact of ``category`` has it, exactly or after canonicalizing — or, where a
    key has one row (:func:`one_row_per_key`), a forgotten one holds it exactly."""
    active = " AND superseded_at IS NULL" if keeps_history(conn) else ""
    for row in _rows(conn, "category = ?" + active, (category,)):
        other = str(row.get("key"))
        if row.get("id") == fact_id or (other != key and canonical_key(other) != canonical_key(key)):
            continue
        if row.get("superseded_at") is None:
            raise InvalidInputError(
                f"{category} already has a fact {other!r} ({str(row.get('value'))[:60]!r}): edit that one instead; "
                "nothing was changed"
            )
        if other == key:
            raise InvalidInputError(
                f"{category} has a forgotten fact {other!r} that this file's UNIQUE(category, key) still holds: "
                "aidaemon could not store it either; nothing was changed"
            )


def _insert(
    conn: Any, category: str, key: str, value: str, embedding: bytes | None, like: Mapping[str, Any] | None = None
) -> int:
    """A new active version (facts.rs line 489), with the columns this file has."""
    now = _now()
    have = set(table_columns(conn, "facts"))
    values: dict[str, Any] = {
        "category": category,
        "key": key,
        "value": value,
        "source": USER_SOURCE,
        "created_at": now,
        "updated_at": now,
        "recall_count": 0,
        "channel_id": (like or {}).get("channel_id"),
        "privacy": (like or {}).get("privacy") or "global",
        "embedding": embedding,
    }
    names = [c for c in values if c in have]
    conn.execute(
        f"INSERT INTO facts ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
        tuple(values[c] for c in names),
    )
    return int(conn.execute("SELECT last_insert_rowid()").fetchall()[0][0])


def _supersede(conn: Any, fact_id: int) -> None:
    conn.execute("UPDATE facts SET superseded_at = ? WHERE id = ?", (_now(), fact_id))


def _checked_category(conn: Any, category: str) -> None:
    if "facts" not in table_names(conn):
        raise InvalidInputError("this aidaemon file has no facts table; nothing was changed")
    if not category.strip():
        raise InvalidInputError("a fact needs a category; nothing was changed")


def save_fact(conn: Any, category: str, content: str, tags: Sequence[str] = (), embed: Embed | None = None) -> Note:
    """A new fact in ``category`` (``upsert_fact`` with no active row: an insert); a key already active is refused."""
    key, value = parse_fact(content, tags, "aidaemon")
    embedding = _vector(embed, category, key, value)  # before the write lock: a model may take a while
    with write_transaction(conn):
        _checked_category(conn, category)
        _key_taken(conn, category, key, None)
        new_id = _insert(conn, category, key, value, embedding)
        return get_fact(conn, category, f"fact:{new_id}")


def update_fact(
    conn: Any,
    category: str,
    note_id: str,
    content: str,
    tags: Sequence[str] = (),
    expected: Note | None = None,
    embed: Embed | None = None,
) -> Note:
    """A fact's new value (or key): the loaded version superseded and a new one inserted, or in place in the legacy
    layout; with ``expected``, only if the fact is still as loaded. The same text changes nothing."""
    key, value = parse_fact(content, tags, "aidaemon")
    embedding = _vector(embed, category, key, value)
    with write_transaction(conn):
        _checked_category(conn, category)
        current = _check(conn, note_id, expected) if expected is not None else get_fact(conn, category, note_id)
        if current is None:
            raise NotFoundError(f"no active fact {note_id!r} in category {category!r}")
        if current.content == f"{key}: {value}":
            return current
        fact_id = _fact_id(note_id)
        _key_taken(conn, category, key, fact_id)
        if keeps_history(conn):
            old = _rows(conn, "id = ?", (fact_id,))[0]
            _supersede(conn, fact_id)
            fact_id = _insert(conn, category, key, value, embedding, old)
        else:
            embedded = ", embedding = ?" if "embedding" in table_columns(conn, "facts") else ""
            conn.execute(
                f"UPDATE facts SET key = ?, value = ?, source = ?, updated_at = ?{embedded} WHERE id = ?",
                (key, value, USER_SOURCE, _now(), *((embedding,) if embedded else ()), fact_id),
            )
        return get_fact(conn, category, f"fact:{fact_id}")


def delete_facts(conn: Any, category: str, note_ids: Sequence[str], expected: Sequence[Note] | None = None) -> int:
    """Facts forgotten (``delete_fact``: superseded, history kept; removed in the legacy layout), all or none; with
    ``expected``, only those still as loaded."""
    loaded = {n.note_id: n for n in expected} if expected is not None else None
    with write_transaction(conn):
        _checked_category(conn, category)
        keep_history = versioned(conn)
        for note_id in note_ids:
            if loaded is not None:
                if note_id not in loaded:
                    raise InvalidInputError(f"no loaded version given for fact {note_id}")
                _check(conn, note_id, loaded[note_id])
            else:
                get_fact(conn, category, note_id)
            _retire(conn, _fact_id(note_id), keep_history)
    return len(note_ids)


def restore_facts(
    conn: Any, facts: Sequence[Note], expected: Mapping[str, Note | None] | None = None, embed: Embed | None = None
) -> list[Note]:
    """Facts' values written back (undo, and a fact deleted meanwhile saved again), each as a new active version
    (re-inserted under its id in the legacy layout). ``expected`` maps ids to what they must hold now (None: not
    active); an expected fact whose key none of ``facts`` has (an edit's renamed version) is retired first."""
    parsed = [(note, *parse_fact(note.content, note.tags, "aidaemon")) for note in facts]
    vectors = [_vector(embed, note.user, key, value) for note, key, value in parsed]
    keep_history = keeps_history(conn)
    out = []
    with write_transaction(conn):
        for note_id, want in (expected or {}).items():
            _check(conn, note_id, want)
        restored = {(note.user, key) for note, key, _ in parsed}
        for want in (expected or {}).values():
            if want is not None and (want.user, want.details.get("key")) not in restored:
                _retire(conn, _fact_id(want.note_id), keep_history)
        for (note, key, value), embedding in zip(parsed, vectors, strict=True):
            _checked_category(conn, note.user)
            active = _active_note(conn, note.user, key)
            if active is not None and active.content == note.content:
                out.append(active)
                continue
            if active is not None and active.note_id not in (expected or {}):
                raise ConflictError(
                    f"{note.user} has an active fact {key!r} again ({active.content[:60]!r}) that this undo did not "
                    "expect; nothing was saved",
                    active,
                )
            like = _rows(conn, "id = ?", (_fact_id(note.note_id),))
            if active is not None:
                _retire(conn, _fact_id(active.note_id), keep_history)
            _key_taken(conn, note.user, key, None if keep_history else _fact_id(note.note_id))
            if keep_history:
                new_id = _insert(conn, note.user, key, value, embedding, like[0] if like else note.details)
            else:
                new_id = _fact_id(note.note_id)
                conn.execute("DELETE FROM facts WHERE id = ?", (new_id,))
                conn.execute(
                    "INSERT INTO facts (id, category, key, value, source, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (new_id, note.user, key, value, USER_SOURCE, _now(), _now()),
                )
            out.append(get_fact(conn, note.user, f"fact:{new_id}"))
    return out


def _retire(conn: Any, fact_id: int, keep_history: bool) -> None:
    """A version taken out of use: superseded, or removed in the legacy layout."""
    if keep_history:
        _supersede(conn, fact_id)
    else:
        conn.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
