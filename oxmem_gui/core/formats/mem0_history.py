"""mem0's ``history.db`` (``mem0ai`` 2.2.1, ``mem0/memory/storage.py``, class ``SQLiteManager``), read-only.

mem0 keeps its memories in a vector store (Qdrant, Chroma, …); this SQLite file is only its change log, at
``~/.mem0/history.db`` (``$MEM0_DIR/history.db``) unless ``MemoryConfig.history_db_path`` says otherwise
(``configs/base.py`` 13, 42–45).
What ``SQLiteManager`` writes:

* ``history`` (``_create_history_table``, ``storage.py`` 102–126; the same text in ``_migrate_history_table``
  66–81): ``id TEXT PRIMARY KEY`` (a uuid4), ``memory_id TEXT``, ``old_memory TEXT``, ``new_memory TEXT``,
  ``event TEXT``, ``created_at DATETIME``, ``updated_at DATETIME``, ``is_deleted INTEGER``, ``actor_id TEXT``,
  ``role TEXT``. One row per change, never updated or deleted by mem0 (only ``reset`` drops the table, 326–339):
  ``add_history`` (150–191) and ``batch_add_history`` (193–225) insert them. ``memory/main.py`` writes an
  ``ADD`` (``_create_memory``, ``add_history`` at 1995–2004: old NULL, new the text, ``updated_at = created_at``, both
  ``datetime.now(timezone.utc).isoformat()``; the batch path 1078–1097 leaves ``updated_at``, ``actor_id`` and
  ``role`` NULL), an ``UPDATE`` (``_update_memory``, 2094–2103: old → new, ``created_at`` the memory's own, kept,
  ``updated_at`` now) and a ``DELETE`` (``_delete_memory``, 2126–2136: old the last text, new NULL,
  ``is_deleted = 1``, ``created_at`` the memory's, normalized to UTC). ``actor_id`` and ``role`` come from the
  memory's metadata (a group chat's speaker name and role).
* ``messages`` (``_create_messages_table`` 128–148): ``id TEXT PRIMARY KEY``, ``session_scope TEXT``, ``role``,
  ``content``, ``name``, ``created_at DATETIME`` — the conversation ``add`` was given, per scope
  (``_build_session_scope``, ``main.py`` 412–419: ``agent_id=…&run_id=…&user_id=…``); ``save_messages``
  (257–296) stamps a call's messages with one time and then **keeps only the newest 10 of the scope**, deleting
  the rest; ``get_last_messages`` (298–324) reads them back by ``created_at``.
* Migration (``_migrate_history_table`` 20–100, run by every ``SQLiteManager``): a ``history`` table whose
  columns are not exactly the ten above is renamed ``history_old``, created anew, the columns both have copied
  and the old table dropped — an older file is rewritten the next time mem0 opens it. oxmem reads such a file as
  it is (a column it lacks is read as NULL) and says so (``info``'s markers).

``Memory.history(memory_id)`` (``main.py`` 1960–1973) is ``get_history`` (227–255): the memory's rows
``ORDER BY created_at ASC, DATETIME(updated_at) ASC`` (``is_deleted`` as ``bool``). Every change of a memory
carries the memory's own ``created_at``, so that is the order of ``updated_at`` to the second; oxmem orders the
same way, then by ``rowid`` (the order rows were written) where mem0's order leaves a tie. (A ``DELETE``'s
``created_at`` is the memory's rewritten in UTC: for a memory created with a positive UTC offset — older mem0
wrote local times — its text sorts first, and ``history()`` lists the deletion before the memory's other changes;
oxmem keeps that order and flags what follows it, and counts the memory deleted wherever its ``DELETE`` stands.)

How oxmem shows it: each ``memory_id`` is a session (its id is the memory_id, its agent the ``actor_id``, its
times the first and last change's — none when no change's time is a time, and it is listed last —, its details
the current text shortened and whether it was deleted) whose events are its changes in that order, numbered from
1, each a ``system`` line ``ADD: new``, ``UPDATE: old → new`` or ``DELETE: old`` with the row as ``get_history``
returns it under ``change``; an event's time is the change's (``updated_at``, else ``created_at``). Each
``messages`` scope is a session ``messages:<scope>``, its messages in ``created_at`` order (then ``rowid``) with
their role, content and name. (mem0's memory ids are uuid4s, so the two kinds never meet; should two sessions
still have one id, the later gets `` (2)``.) Notes are the memories that are not deleted, their current text (the
last change's ``new_memory``), grouped by ``actor_id`` (:data:`NO_ACTOR` for none), without tags; a memory whose
history holds a ``DELETE`` (or ``is_deleted``) is left out of the notes — mem0 removed it from its vector store
and never changes it again — and stays visible as its session, marked ``deleted``. There is no search: mem0's
is a vector search over its vector store, which is not in this file.

What mem0 never writes but another program may, shown flagged (a ``⚠`` line and ``problems`` in the event,
``problem`` in a session's or note's details), never fatal: a time that is no time, text that is not UTF-8 (shown
with U+FFFD: each cell is read as bytes, so one bad cell flags its own row instead of the whole read going
through a repaired copy), a BLOB where text belongs, NULLs where the event needs a text, a NULL ``memory_id`` (a
history ``get_history`` can never ask for), an ``UPDATE`` or ``DELETE`` with no ``ADD`` before it, a change after
the ``DELETE``, ``is_deleted`` at odds with the event, an event or a message role mem0 does not write.

How it is read: a page of the lists reads only its own memories' changes. Their order comes from one aggregate
per ``memory_id`` in SQL (:func:`overview`: each memory's last change's time, the rowids of its changes, and for the
notes whether it was deleted and its actor; :func:`first_rowids` the rowid of a memory's first change where the notes
of one time need it), kept until the file changes. SQL tells these exactly only of what is written as mem0 writes
it — times as ``isoformat()`` gives them, with one offset; one actor per memory —: any other memory's changes are
read in Python, as is the whole file where SQL would group or order its rows otherwise than Python does (a collation,
no rowid, two memories whose ids would meet…). The lists as a whole (:meth:`Mem0HistoryReader._sessions`,
``_notes``) read every change.

Nothing is written: the memories themselves live in mem0's vector store, which this file does not hold.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import apsw

from ..errors import NotFoundError
from ..store.browse import SessionRow
from ..store.events import Event
from ..store.notes import Note, page_after
from .base import Capabilities, ForeignReader
from .detect import quoted
from .times import parse_when, rfc3339

#: the ten columns of ``history`` in mem0 2.2.1 (``storage.py`` 40–51), in the order ``get_history`` returns them
CURRENT_COLUMNS = (
    "id",
    "memory_id",
    "old_memory",
    "new_memory",
    "event",
    "created_at",
    "updated_at",
    "is_deleted",
    "actor_id",
    "role",
)
MESSAGE_COLUMNS = ("session_scope", "role", "content", "name", "created_at")
#: the notes group of memories with no ``actor_id``
NO_ACTOR = "(no actor)"
#: a messages scope's session id is this and the scope
MESSAGES_PREFIX = "messages:"
#: the session of history rows with a NULL ``memory_id``
NO_MEMORY_ID = "(no memory_id)"
EVENTS = ("ADD", "UPDATE", "DELETE")
ROLES = ("user", "assistant", "system", "tool")
SHORT = 80


def _columns(conn: apsw.Connection, table: str) -> list[str]:
    return [str(r[1]) for r in conn.execute(f"PRAGMA table_info({quoted(table)})").fetchall()]


def _table_sql(conn: apsw.Connection, table: str) -> str | None:
    rows = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchall()
    return None if not rows else str(rows[0][0] or "")


def _messages_table(conn: apsw.Connection) -> bool:
    """Whether ``messages`` is mem0's (older mem0 had none; another program's may share the name)."""
    return _table_sql(conn, "messages") is not None and {"session_scope", "role", "content"} <= set(
        _columns(conn, "messages")
    )


def _cell(column: str, present: set[str]) -> str:
    """SQL for one column as (value, type): text as its bytes (APSW never decodes a BLOB), NULL where absent."""
    if column not in present:
        return "NULL, 'absent'"
    c = quoted(column)
    return f"CASE WHEN typeof({c}) = 'text' THEN CAST({c} AS BLOB) ELSE {c} END, typeof({c})"


def _decode(value: Any, kind: str, column: str, problems: list[str]) -> Any:
    """A cell read by :func:`_cell` as Python: text decoded (U+FFFD for bytes that are not UTF-8, flagged), a BLOB
    decoded and flagged, any other value as it is."""
    if kind == "text" and isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            problems.append(f"{column} is not valid UTF-8 (shown with \ufffd)")
            return value.decode("utf-8", "replace")
    if isinstance(value, bytes):
        problems.append(f"{column} is a BLOB of {len(value)} bytes, not text")
        return value.decode("utf-8", "replace")
    return value


def _text(value: Any) -> str:
    return "" if value is None else value if isinstance(value, str) else str(value)


def _short(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= SHORT else one[: SHORT - 1] + "…"


@functools.lru_cache(maxsize=1 << 14)
def _shown_time(text: str) -> str | None:
    """A time's text as shown (RFC 3339 UTC), None when it is no time (the same text comes again and again: each
    change of a memory carries its ``created_at``, and a time shown is read again as one)."""
    when = parse_when(text)
    return None if when is None else rfc3339(when)


def _time(value: Any, column: str, problems: list[str]) -> str | None:
    """A time as shown (RFC 3339 UTC); a value that is no time flagged and shown as it is; None for NULL."""
    if value is None:
        return None
    shown = _shown_time(value) if isinstance(value, str) else None
    if shown is None:
        problems.append(f"{column} {value!r} is no time")
        return _text(value)
    return shown


def _is_time(text: str | None) -> bool:
    return bool(text) and _shown_time(text) is not None


def _span(times: Iterable[str | None]) -> tuple[str, str]:
    """The first and last of the shown times that are times (all RFC 3339 UTC: their text sorts as they do);
    ``""`` when none is — such a session sorts last, and its events say what their times hold, flagged."""
    real = sorted(t for t in times if t and _is_time(t))
    return (real[0], real[-1]) if real else ("", "")


@dataclass
class Change:
    """One ``history`` row: as ``get_history`` returns it (``row``), and as oxmem shows it."""

    rowid: int
    row: dict[str, Any]
    when: str | None
    problems: list[str] = field(default_factory=list)

    @property
    def event(self) -> str:
        return _text(self.row["event"])

    @property
    def deletes(self) -> bool:
        return self.event == "DELETE" or bool(self.row["is_deleted"])


@dataclass
class History:
    """One memory's changes, in mem0's order."""

    session_id: str
    memory_id: str | None
    changes: list[Change]
    problem: str | None = None

    @property
    def deleted(self) -> bool:
        return any(c.deletes for c in self.changes)

    @property
    def text(self) -> str:
        """The memory's current text: the last change's ``new_memory`` (a deletion's: the text it deleted)."""
        for c in reversed(self.changes):
            value = c.row["old_memory"] if c.deletes else c.row["new_memory"]
            if value is not None:
                return _text(value)
        return ""

    @property
    def actor(self) -> str | None:
        actors = [c.row["actor_id"] for c in self.changes if c.row["actor_id"] is not None]
        return _text(actors[-1]) if actors else None

    @property
    def role(self) -> str | None:
        roles = [c.row["role"] for c in self.changes if c.row["role"] is not None]
        return _text(roles[-1]) if roles else None

    def span(self) -> tuple[str, str]:
        return _span(c.when for c in self.changes)


def _has_rowid(conn: apsw.Connection, table: str) -> bool:
    return "WITHOUT ROWID" not in (_table_sql(conn, table) or "").upper()


def _unique(wanted: str, taken: set[str]) -> str:
    """``wanted``, or ``wanted (2)``, ``(3)``… when another session has that id already (never two alike)."""
    shown, n = wanted, 1
    while shown in taken:
        n += 1
        shown = f"{wanted} ({n})"
    taken.add(shown)
    return shown


def _where(keys: Sequence[Key] = (), rowids: Sequence[str] = ()) -> tuple[str, dict[str, str]]:
    """SQL choosing the ``history`` rows of the memories ``keys`` (:data:`Key`) and the rows ``rowids`` (each a
    memory's, comma-separated), and its named arguments."""
    texts = [k for k in keys if isinstance(k, str)]
    raws = [k.hex() for k in keys if isinstance(k, bytes)]
    parts, args = [], {}
    if texts:
        parts.append("memory_id IN (SELECT value FROM json_each(:texts))")
        args["texts"] = json.dumps(texts, ensure_ascii=False)
    if raws:
        parts.append("CAST(memory_id AS BLOB) IN (SELECT unhex(value) FROM json_each(:raws))")
        args["raws"] = json.dumps(raws)
    if any(k is None for k in keys):
        parts.append("memory_id IS NULL")
    if rowids:
        parts.append("rowid IN (SELECT value FROM json_each(:rowids))")
        args["rowids"] = f"[{','.join(rowids)}]"
    return " OR ".join(parts) or "0", args


def read_histories(
    conn: apsw.Connection, keys: Sequence[Key] | None = None, rowids: Sequence[str] = ()
) -> dict[str, History]:
    """Every memory's changes (:class:`History`), by session id, in mem0's order (see the module's docstring); or
    only those of the memories ``keys`` (:data:`Key`) and ``rowids`` (all the rowids of each, comma-separated):
    their session ids are then taken to be unique in the file."""
    present = set(_columns(conn, "history"))
    key = "rowid" if _has_rowid(conn, "history") else "NULL"
    order = []
    if "created_at" in present:
        order.append("created_at ASC")
    if "updated_at" in present:
        order.append("DATETIME(updated_at) ASC")
    order.append(f"{key} ASC")
    cells = ", ".join(_cell(c, present) for c in CURRENT_COLUMNS)
    where, args = ("1", {}) if keys is None and not rowids else _where(keys or (), rowids)
    rows = conn.execute(f"SELECT {key}, {cells} FROM history WHERE {where} ORDER BY {', '.join(order)}", args)
    by_memory: dict[Any, list[Change]] = {}
    for position, raw in enumerate(rows):
        problems: list[str] = []
        values = {c: _decode(raw[1 + 2 * i], raw[2 + 2 * i], c, problems) for i, c in enumerate(CURRENT_COLUMNS)}
        values["is_deleted"] = bool(values["is_deleted"])  # as get_history returns it (bool(r[7]))
        created = _time(values["created_at"], "created_at", problems)
        updated = _time(values["updated_at"], "updated_at", problems)
        # the change's time: updated_at, else created_at (the first that is a time; else the first given)
        given = [t for t in (updated, created) if t is not None]
        when = next((t for t in given if _is_time(t)), given[0] if given else None)
        rowid = int(raw[0]) if raw[0] is not None else position
        by_memory.setdefault(values["memory_id"], []).append(Change(rowid, values, when, problems))
    taken: set[str] = set()
    out: dict[str, History] = {}
    for memory_id, changes in by_memory.items():
        _check_sequence(changes)
        if memory_id is None:
            sid = _unique(NO_MEMORY_ID, taken)
            problem = "⚠ changes with a NULL memory_id: mem0's history() can never ask for them"
            out[sid] = History(sid, None, changes, problem)
            continue
        text = _text(memory_id)
        if not text.strip():  # (a session's id is never blank in oxmem)
            sid = _unique(f"(memory_id {text!r})", taken)
            out[sid] = History(sid, text, changes, f"⚠ a blank memory_id {text!r}")
            continue
        sid = _unique(text, taken)
        out[sid] = History(sid, text, changes)
    return out


def _an(event: str) -> str:
    return f"{'an' if event[:1] in 'AEIOU' else 'a'} {event}"


def _check_sequence(changes: list[Change]) -> None:
    """Flag what mem0's own writes never make: an event it has not, NULL texts the event needs, a change with
    no ``ADD`` before it, a change after the ``DELETE``, ``is_deleted`` at odds with the event."""
    added = deleted = False
    for c in changes:
        event, row = c.event, c.row
        if event not in EVENTS:
            c.problems.append(f"event {row['event']!r} is none mem0 writes (ADD, UPDATE, DELETE)")
        if event in ("ADD", "UPDATE") and row["new_memory"] is None:
            c.problems.append(f"new_memory is NULL in {_an(event)}")
        if event in ("UPDATE", "DELETE") and row["old_memory"] is None:
            c.problems.append(f"old_memory is NULL in {_an(event)}")
        if event in ("UPDATE", "DELETE") and not added:
            c.problems.append(f"{_an(event)} with no ADD before it: the history starts part-way")
        if deleted:
            c.problems.append("a change after the memory was deleted")
        if bool(row["is_deleted"]) != (event == "DELETE") and event in EVENTS:
            c.problems.append(f"is_deleted is {row['is_deleted']!r} in {_an(event)}")
        added = added or event == "ADD"
        deleted = deleted or c.deletes


def change_payload(change: Change) -> dict[str, Any]:
    """One change as the event the views show: ``ADD: new``, ``UPDATE: old → new``, ``DELETE: old``; problems
    first, on a ``⚠`` line."""
    row, event = change.row, change.event
    old, new = _text(row["old_memory"]), _text(row["new_memory"])
    if event == "ADD":
        line = f"ADD: {new}"
    elif event == "UPDATE":
        line = f"UPDATE: {old} → {new}"
    elif event == "DELETE":
        line = f"DELETE: {old}"
    else:
        line = f"{event or '(no event)'}: {old} → {new}"
    payload: dict[str, Any] = {"role": "system", "content": line, "change": row}
    if change.problems:
        payload["content"] = f"⚠ {'; '.join(change.problems)}\n{line}"
        payload["problems"] = list(change.problems)
    return payload


@dataclass
class Scope:
    """One ``messages`` scope's messages, in ``created_at`` order (then ``rowid``)."""

    session_id: str
    scope: str | None
    messages: list[tuple[dict[str, Any], str | None, list[str]]]

    def span(self) -> tuple[str, str]:
        return _span(when for _, when, _ in self.messages)


def read_scopes(conn: apsw.Connection, taken: set[str]) -> dict[str, Scope]:
    """Every ``messages`` scope, by session id (``messages:<scope>``, none of ``taken``)."""
    if not _messages_table(conn):
        return {}
    present = set(_columns(conn, "messages"))
    key = "rowid" if _has_rowid(conn, "messages") else "NULL"
    order = ("created_at ASC, " if "created_at" in present else "") + f"{key} ASC"
    cells = ", ".join(_cell(c, present) for c in MESSAGE_COLUMNS)
    by_scope: dict[Any, list[tuple[dict[str, Any], str | None, list[str]]]] = {}
    for raw in conn.execute(f"SELECT {cells} FROM messages ORDER BY {order}"):
        problems: list[str] = []
        values = {c: _decode(raw[2 * i], raw[2 * i + 1], c, problems) for i, c in enumerate(MESSAGE_COLUMNS)}
        scope = values.pop("session_scope")
        when = _time(values["created_at"], "created_at", problems)
        by_scope.setdefault(scope, []).append((values, when, problems))
    out: dict[str, Scope] = {}
    for scope, messages in by_scope.items():
        sid = _unique(MESSAGES_PREFIX + ("(null)" if scope is None else _text(scope)), taken)
        out[sid] = Scope(sid, None if scope is None else _text(scope), messages)
    return out


def message_payload(message: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    """One saved message as the views show it (the row as ``get_last_messages`` returns it under ``message``)."""
    role = _text(message["role"])
    content = _text(message["content"])
    if role not in ROLES:
        problems = [*problems, f"role {message['role']!r} is none of {', '.join(ROLES)}"]
    payload: dict[str, Any] = {"role": role if role in ROLES else "system", "content": content, "message": message}
    if message["name"] is not None:
        payload["name"] = _text(message["name"])
    if problems:
        payload["content"] = f"⚠ {'; '.join(problems)}\n{content}"
        payload["problems"] = problems
    return payload


#: how :func:`read_histories` is told which memories to read: a ``memory_id`` that is text (valid UTF-8), another's
#: bytes (``CAST(memory_id AS BLOB)``: a BLOB, text that is not UTF-8), or None for the NULL ``memory_id``
Key = str | bytes | None

#: the form of a time as mem0 writes it (``datetime.now(timezone.utc).isoformat()``, without or with microseconds),
#: its offset left out: Python reads a text of this form as a time only where it has digits for each ``?``, and all
#: such times with one offset sort as their text does
_FORM = "????-??-??T??:??:??"
_FRACTION = ".??????"
_OFFSET = re.compile(r"[+-][0-9][0-9]:[0-9][0-9]")
UTC = "+00:00"
#: added to a rowid so that its digits sort as it does (a rowid in [0, 8e18) has 19 of them then)
_ROWID_BASE = 10**18
#: with more sessions than this to add to an ordered list, it is sorted anew
_INSERTS = 256
#: how many of the newest changes say which offset :func:`overview` reads times with in SQL
_SAMPLE = 100


@dataclass
class Overview:
    """What the lists need of every memory, read without reading its changes (:func:`overview`).

    ``order``: each memory's last change's time as shown (``""``: none) and session id, in the sessions list's
    order, and ``updated`` the same by id; ``rowids``: the rowids of a memory's changes (comma-separated), where SQL
    read them; ``keys``: how else to read a memory's changes where that is not by its id (:data:`Key`);
    ``histories``: the memories read so far; ``zone``: the offset of the times SQL read (None: the
    whole file was read in Python). For the notes, once asked: ``owners``, whether each was deleted and its actor
    (:func:`read_owners`), and ``firsts``, the rowid of a memory's first change, its note's ``sequence``
    (:func:`first_rowids`)."""

    order: list[tuple[str, str]]
    updated: dict[str, str]
    rowids: dict[str, str]
    keys: dict[str, Key]
    histories: dict[str, History]
    zone: str | None
    owners: dict[str, tuple[bool, str | None]] | None = None
    firsts: dict[str, int] = field(default_factory=dict)

    def key(self, sid: str) -> Key:
        return self.keys.get(sid, sid)

    def first(self, sid: str) -> int:
        history = self.histories.get(sid)
        return self.firsts[sid] if history is None else history.changes[0].rowid


def _affinity(declared: str) -> str:
    """The affinity SQLite gives a column of the declared type (its rules, in their order)."""
    t = declared.upper()
    if "INT" in t:
        return "INTEGER"
    if "CHAR" in t or "CLOB" in t or "TEXT" in t:
        return "TEXT"
    return "BLOB" if "BLOB" in t or not t else "OTHER"


def _plain_zone(conn: apsw.Connection) -> str | None:
    """The offset of the times :func:`overview` reads in SQL (the most common of the newest changes', else
    ``+00:00``); None when SQL would compare the table's values otherwise than Python groups and orders them: no
    rowid, a collation, an encoding but UTF-8, a ``memory_id`` or ``actor_id`` that is not text, an ``is_deleted``
    that is."""
    sql = _table_sql(conn, "history")
    if not sql or "WITHOUT ROWID" in sql.upper() or "COLLATE" in sql.upper():
        return None
    if str(conn.execute("PRAGMA encoding").fetchall()[0][0]).upper() != "UTF-8":
        return None
    types = {str(r[1]): _affinity(str(r[2] or "")) for r in conn.execute("PRAGMA table_info(history)")}
    if types.get("memory_id") != "TEXT" or types.get("actor_id", "TEXT") != "TEXT":
        return None
    if types.get("is_deleted") == "TEXT" or "rowid" in {name.lower() for name in types}:  # (a column hiding it)
        return None
    times = [quoted(c) for c in ("updated_at", "created_at") if c in types] or ["NULL"]
    newest = conn.execute(
        f"SELECT CAST(coalesce({', '.join(times)}, NULL) AS BLOB) FROM history ORDER BY rowid DESC LIMIT {_SAMPLE}"
    )
    zones = Counter(
        text[-6:]
        for (value,) in newest
        if isinstance(value, bytes)
        and len(text := value.decode("utf-8", "replace")) in (25, 32)
        and _OFFSET.fullmatch(text[-6:])
    )
    return zones.most_common(1)[0][0] if zones else UTC


def _column(present: set[str], name: str) -> str:
    return quoted(name) if name in present else "NULL"


def _patterns(zone: str) -> dict[str, str]:
    return {"short": _FORM + zone, "long": _FORM + _FRACTION + zone}


def _deletes(present: set[str]) -> str:
    """SQL for :attr:`Change.deletes`: the event DELETE (as text or as bytes), or ``is_deleted`` true as Python
    takes it."""
    e, d = _column(present, "event"), _column(present, "is_deleted")
    return (
        f"CASE WHEN {e} = 'DELETE' OR {e} = X'44454C455445' THEN 1 "
        f"WHEN {d} IS NULL OR {d} = 0 OR {d} = '' OR {d} = X'' THEN 0 ELSE 1 END"
    )


def _times_sql(present: set[str], zone: str, owners: bool, raw: bool = False) -> str:
    """Per ``memory_id``, latest first: the ``memory_id`` (``raw``: its type and bytes), its rows' rowids
    (comma-separated), and its last change's time as shown — ``""`` for none; NULL where SQL cannot tell it exactly
    (the memory is then read in Python): a time not of mem0's form (:data:`_FORM`, ``zone``), a ``created_at``
    later than its ``updated_at``, a latest that is no time. With ``owners``, what :func:`_owners_sql` says of it
    too (else NULLs).

    Why it is exact: a change's time is its ``updated_at`` where that is a time, else its ``created_at``. All of
    mem0's form, times sort as their text; the latest text (of ``updated_at``, else ``created_at``) is then the
    latest time where it is one (SQLite reads its date and time back as they are written, its fraction is digits),
    whichever of its two each change shows, for no ``created_at`` is later than its ``updated_at``. (Where SQL
    wants a value, ``OR`` computes both sides: ``CASE`` stops at the first that holds.)"""
    u, c, a = _column(present, "updated_at"), _column(present, "created_at"), _column(present, "actor_id")
    shaped = "({0} GLOB :short OR {0} GLOB :long)"
    odd = (
        f"CASE WHEN {u} IS NULL THEN (CASE WHEN {c} IS NULL OR {shaped.format(c)} THEN 0 ELSE 1 END) "
        f"WHEN {shaped.format(u)} THEN (CASE WHEN {c} IS NULL OR {c} = {u} THEN 0 "
        f"WHEN {c} <= {u} AND {shaped.format(c)} THEN 0 ELSE 1 END) ELSE 1 END"
    )
    # a date and time as SQLite reads them again (so they are one), shown as rfc3339 shows them: in UTC (SQLite
    # converts the time without its fraction, which it would round), with microseconds
    valid = (
        "datetime(substr(hi, 1, 19)) = substr(hi, 1, 10) || ' ' || substr(hi, 12, 8) AND substr(hi, 1, 4) <> '0000' "
        "AND (octet_length(hi) = 25 OR substr(hi, 20, 7) GLOB '.[0-9][0-9][0-9][0-9][0-9][0-9]')"
    )
    micros = "CASE WHEN octet_length(hi) = 25 THEN '.000000' ELSE substr(hi, 20, 7) END"
    if zone == UTC:
        shown = f"substr(hi, 1, 19) || {micros} || '+00:00'"
    else:  # (a day from the ends of the years Python counts: converted, it is still one of them)
        valid += " AND substr(hi, 1, 10) BETWEEN '0001-01-02' AND '9999-12-30'"
        shown = f"strftime('%Y-%m-%dT%H:%M:%S', substr(hi, 1, 19) || substr(hi, -6)) || {micros} || '+00:00'"
    own = f", max({_deletes(present)}) AS del, min({a}) IS max({a}) AS alike, max({a}) AS actor" if owners else ""
    return f"""
        SELECT {"typeof(m), CAST(m AS BLOB)" if raw else "m"}, r, CASE WHEN odd = 0 AND (hi IS NULL OR (
            typeof(hi) = 'text' AND octet_length(hi) IN (25, 32) AND {valid})) THEN coalesce({shown}, '') END,
            {"del, alike, CAST(actor AS BLOB)" if owners else "NULL, NULL, NULL"}
        FROM (SELECT memory_id AS m, max(coalesce({u}, {c})) AS hi, max({odd}) AS odd, group_concat(rowid) AS r{own}
              FROM history GROUP BY memory_id)
        ORDER BY {4 if raw else 3} DESC, {2 if raw else 1}"""


def _owners_sql(present: set[str], raw: bool = False) -> str:
    """Per ``memory_id``: the ``memory_id`` (``raw``: its type and bytes), whether it was deleted
    (:attr:`Change.deletes`), whether its changes name one actor (or none), and its actor's bytes."""
    a = _column(present, "actor_id")
    return (
        f"SELECT {'typeof(memory_id), CAST(memory_id AS BLOB)' if raw else 'memory_id'}, max({_deletes(present)}), "
        f"min({a}) IS max({a}), CAST(max({a}) AS BLOB) FROM history GROUP BY memory_id"
    )


class _Later:
    """A time that sorts before the times earlier than it (the sessions list is newest first)."""

    __slots__ = ("time",)

    def __init__(self, time: str) -> None:
        self.time = time

    def __lt__(self, other: _Later) -> bool:
        return self.time > other.time

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Later) and self.time == other.time

    __hash__ = None  # type: ignore[assignment]


def _newest_first(pair: tuple[str, str]) -> tuple[_Later, str]:
    return _Later(pair[0]), pair[1]


def order_sessions(ordered: list[tuple[str, str]], more: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """``ordered`` (``(updated_at, id)`` pairs, newest first, then by id) with ``more`` in their places: a new
    list, or ``ordered`` itself added to."""
    if len(more) > _INSERTS:
        out = ordered + list(more)
        out.sort(key=lambda p: p[1])
        out.sort(key=lambda p: p[0], reverse=True)
        return out
    for pair in more:
        bisect.insort(ordered, pair, key=_newest_first)
    return ordered


def _keyed(conn: apsw.Connection, sql: Callable[[bool], str], args: dict[str, str]) -> list[tuple[Any, ...]]:
    """The rows of ``sql(raw)``, which start with a ``memory_id`` — or, ``raw``, with its type and bytes: then it
    is made the :data:`Key` it is (only where some text is not UTF-8, which APSW cannot hand over)."""
    try:
        return conn.execute(sql(False), args).fetchall()
    except UnicodeDecodeError:
        out = []
        for kind, raw, *rest in conn.execute(sql(True), args):
            key = raw
            if kind == "text":
                with contextlib.suppress(UnicodeDecodeError):
                    key = raw.decode("utf-8")
            out.append((key, *rest))
        return out


def overview(conn: apsw.Connection, owners: bool = False) -> Overview:
    """Every memory's session id and last change's time in the sessions list's order (and with ``owners``, whether
    it was deleted and its actor: :func:`read_owners`): one aggregate per ``memory_id`` in SQL (:func:`_times_sql`:
    most memories' id is their ``memory_id``, their time as SQL read it, in SQL's order), each memory SQL cannot tell
    exactly read in Python; the whole file read in Python (:func:`read_histories`) where SQL would group or order
    it otherwise (:func:`_plain_zone`) or where two memories would have one session id (which gets `` (2)``
    follows mem0's order)."""
    zone = _plain_zone(conn)
    if zone is None:
        return _from_histories(read_histories(conn))
    ordered: list[tuple[str, str]] = []
    more: list[tuple[str, str]] = []
    keys: dict[str, Key] = {}
    rowids: dict[str, str] = {}
    unclear: dict[str, Key] = {}
    owned: dict[str, tuple[bool, str | None]] = {}
    unowned: list[str] = []
    present = set(_columns(conn, "history"))
    times = _keyed(conn, lambda raw: _times_sql(present, zone, owners, raw), _patterns(zone))
    for memory_id, rows, hi, deleted, alike, actor in times:
        if alike:
            owned_as = (bool(deleted), None if actor is None else actor.decode("utf-8", "replace"))
        if isinstance(memory_id, str) and memory_id.strip():
            sid = memory_id
            rowids[sid] = rows
            if alike:
                owned[sid] = owned_as
            elif owners:
                unowned.append(sid)
            if hi is not None:  # the common case: as SQL read and ordered it
                ordered.append((hi, sid))
                continue
        else:
            shown = memory_id.decode("utf-8", "replace") if isinstance(memory_id, bytes) else memory_id
            sid = NO_MEMORY_ID if shown is None else shown if shown.strip() else f"(memory_id {shown!r})"
            keys[sid] = memory_id
            if isinstance(memory_id, bytes):
                hi = None  # read in Python (its owner too)
            elif alike:
                owned[sid] = owned_as
            elif owners:
                unowned.append(sid)
        if hi is None:
            unclear[sid] = keys.get(sid, sid)
        else:
            more.append((hi, sid))
    if keys:  # an id not a memory_id may be one: then read_histories says which of the two gets " (2)"
        ids = [sid for _, sid in ordered] + [sid for _, sid in more] + list(unclear)
        if len(set(ids)) < len(ids):
            return _from_histories(read_histories(conn))
    view = Overview(ordered, {}, rowids, keys, {}, zone)
    load(conn, view, [*unclear, *unowned])
    more += [(view.histories[sid].span()[1], sid) for sid in unclear]
    view.order = order_sessions(ordered, more)
    view.updated = {sid: u for u, sid in view.order}
    if owners:
        for sid, history in view.histories.items():
            owned[sid] = (history.deleted, history.actor)
        view.owners = owned
    return view


def _from_histories(histories: dict[str, History]) -> Overview:
    ordered = order_sessions([], [(h.span()[1], sid) for sid, h in histories.items()])
    owners = {sid: (h.deleted, h.actor) for sid, h in histories.items()}
    return Overview(ordered, {sid: u for u, sid in ordered}, {}, {}, histories, None, owners)


def read_owners(conn: apsw.Connection, view: Overview) -> dict[str, tuple[bool, str | None]]:
    """Whether each memory was deleted and its actor (the last change's that names one): in SQL where all its
    changes name one actor or none, else from its changes, read in Python."""
    if view.owners is not None:
        return view.owners
    ids = {key: sid for sid, key in view.keys.items()}
    owners: dict[str, tuple[bool, str | None]] = {}
    unclear: list[str] = []
    present = set(_columns(conn, "history"))
    for key, deleted, alike, actor in _keyed(conn, lambda raw: _owners_sql(present, raw), {}):
        sid = ids.get(key, key)
        assert isinstance(sid, str)
        history = view.histories.get(sid)
        if history is not None:
            owners[sid] = (history.deleted, history.actor)
        elif alike:
            owners[sid] = (bool(deleted), None if actor is None else actor.decode("utf-8", "replace"))
        else:
            unclear.append(sid)
    load(conn, view, unclear)
    for sid in unclear:
        owners[sid] = (view.histories[sid].deleted, view.histories[sid].actor)
    view.owners = owners
    return owners


def first_rowids(conn: apsw.Connection, view: Overview, sids: Iterable[str]) -> None:
    """Know the rowid of the first change in mem0's order (:meth:`Overview.first`) of the memories ``sids``: the
    least of ``created_at``, ``DATETIME(updated_at)`` and the rowid joined as text, which sorts as mem0's
    ``ORDER BY`` does where each ``created_at`` is written as mem0 writes it (else the memory's changes are read)."""
    wanted = [sid for sid in sids if sid not in view.firsts and sid not in view.histories]
    if not wanted:
        return
    assert view.zone is not None  # (else every memory was read)
    present = set(_columns(conn, "history"))
    u, c = _column(present, "updated_at"), _column(present, "created_at")
    order = f"coalesce({c}, '') || ' ' || coalesce(datetime({u}), '') || ' ' || (rowid + {_ROWID_BASE})"
    unsafe = (
        f"CASE WHEN rowid < 0 OR rowid >= {8 * _ROWID_BASE} THEN 1 "
        f"WHEN {u} IS NOT NULL AND coalesce(octet_length(datetime({u})), 19) <> 19 THEN 1 WHEN {c} IS NULL THEN 0 "
        f"WHEN typeof({c}) = 'text' AND octet_length({c}) IN (25, 32) AND ({c} GLOB :short OR {c} GLOB :long) "
        "THEN 0 ELSE 1 END"
    )
    ids = {view.key(sid): sid for sid in wanted}
    unread = []
    for where, args in _wheres(view, wanted):
        sql = f"SELECT memory_id, min({order}), max({unsafe}) FROM history WHERE {where} GROUP BY memory_id"
        for memory_id, first, unsafe_ in conn.execute(sql, {**args, **_patterns(view.zone)}):
            sid = ids[memory_id]
            if unsafe_:
                unread.append(sid)
            else:
                view.firsts[sid] = int(first[-19:]) - _ROWID_BASE
    load(conn, view, unread)


def _wheres(view: Overview, sids: Sequence[str]) -> list[tuple[str, dict[str, str]]]:
    """SQL choosing the rows of the memories ``sids``: by their rowids, where known, else by their key (each a
    query: an ``OR`` of both would read every row)."""
    rowids = [view.rowids[sid] for sid in sids if sid in view.rowids]
    keys = [view.key(sid) for sid in sids if sid not in view.rowids]
    return [_where(rowids=rowids)] * bool(rowids) + [_where(keys)] * bool(keys)


def load(conn: apsw.Connection, view: Overview, sids: Iterable[str]) -> None:
    """Read the changes of those of the memories ``sids`` not read yet (by their rowids, where known)."""
    unread = [sid for sid in sids if sid not in view.histories]
    rowids = [view.rowids[sid] for sid in unread if sid in view.rowids]
    keys = [view.key(sid) for sid in unread if sid not in view.rowids]
    found = (read_histories(conn, rowids=rowids) if rowids else {}) | (read_histories(conn, keys) if keys else {})
    for sid in unread:
        view.histories[sid] = found[sid]


def session_row(history: History) -> SessionRow:
    """A memory as the sessions list shows it."""
    created, updated = history.span()
    details: dict[str, Any] = {"memory": _short(history.text), "changes": len(history.changes)}
    if history.deleted:
        details["state"] = "deleted"
    if history.role is not None:
        details["role"] = history.role
    flagged = sum(1 for c in history.changes if c.problems)
    problems = [
        p
        for p in (history.problem, f"⚠ {flagged} change{'s' if flagged != 1 else ''} flagged" if flagged else None)
        if p
    ]
    if problems:
        details["problem"] = "; ".join(problems)
    return SessionRow(history.session_id, history.actor, created, updated, details)


def scope_row(scope: Scope) -> SessionRow:
    """A messages scope as the sessions list shows it."""
    created, updated = scope.span()
    details: dict[str, Any] = {"scope": scope.scope, "messages": len(scope.messages)}
    flagged = sum(1 for _, _, problems in scope.messages if problems)
    if flagged:
        details["problem"] = f"⚠ {flagged} message{'s' if flagged != 1 else ''} flagged"
    return SessionRow(scope.session_id, None, created, updated, details)


def note_of(history: History) -> Note:
    """A memory that is not deleted as the notes show it."""
    created, updated = history.span()
    last = history.changes[-1]
    details: dict[str, Any] = {"changes": len(history.changes), "event": last.event}
    if history.role is not None:
        details["role"] = history.role
    flagged = [p for c in history.changes for p in c.problems]
    problems = [p for p in (history.problem, "; ".join(flagged)) if p]
    if problems:
        details["problem"] = "; ".join(problems)
    return Note(
        history.session_id,
        history.actor or NO_ACTOR,
        history.text,
        [],
        created or None,
        updated or None,
        history.changes[0].rowid,
        details,
    )


class Mem0HistoryReader(ForeignReader):
    """mem0's ``history.db`` (see the module's docstring)."""

    FORMAT = "mem0-history"
    LABEL = "mem0 history"
    REASON = (
        "mem0's memories live in its vector store; this file is its change log, written only by mem0: oxmem only "
        "reads it"
    )
    EDITS: frozenset[str] = frozenset()

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            self.format,
            self.LABEL,
            has_schedules=False,
            has_search=False,
            sessions_label="Timelines",
            session_noun="timeline",
            notes_label="Memories",
            note_noun="memory",
            group_label="Actor",
            note_tags=False,
            refusals=self.refusals(),
        )

    def _markers(self, conn: apsw.Connection) -> list[str]:
        columns = _columns(conn, "history")
        if set(columns) == set(CURRENT_COLUMNS):
            out = ["history: mem0 2.2.1's ten columns"]
        else:
            missing = [c for c in CURRENT_COLUMNS if c not in columns]
            extra = [c for c in columns if c not in CURRENT_COLUMNS]
            said = "; ".join(
                part
                for part in (
                    f"without {', '.join(missing)}" if missing else "",
                    f"with {', '.join(extra)}" if extra else "",
                )
                if part
            )
            out = [f"history: an older schema ({said}): mem0 rewrites the table when it next opens the file"]
        out.append("messages: mem0's recent messages per scope" if _messages_table(conn) else "messages: no table")
        return out

    # -- reading, once per state of the file --------------------------------------------------------

    def _histories(self, conn: apsw.Connection) -> dict[str, History]:
        """Every memory's changes, the whole file read in Python: the lists as a whole (:meth:`_sessions`,
        :meth:`_notes`); a page reads only its own memories' (:meth:`_view`)."""
        return self._per_state(conn, "histories", None, lambda: read_histories(conn))

    def _view(self, conn: apsw.Connection) -> Overview:
        """What the lists' order needs of every memory (:func:`overview`); the memories read for pages are kept
        in it (:func:`load`)."""
        return self._per_state(conn, "overview", None, lambda: overview(conn))

    def _owners(self, conn: apsw.Connection) -> tuple[Overview, dict[str, tuple[bool, str | None]]]:
        """:meth:`_view` and whether each memory was deleted and its actor (:func:`read_owners`): read with it
        in one query when it is not read yet."""
        kept = self._kept.get("overview")
        if kept is None or kept[0] != (self._file_state(conn), None):
            self._per_state(conn, "overview", None, lambda: overview(conn, owners=True))
        view = self._view(conn)
        return view, read_owners(conn, view)

    def _scopes(self, conn: apsw.Connection) -> dict[str, Scope]:
        return self._per_state(conn, "scopes", None, lambda: read_scopes(conn, set(self._view(conn).updated)))

    def _history(self, conn: apsw.Connection, session_id: str) -> History | None:
        """One memory's changes: from the whole file's where they were read in this state of it, else read alone."""
        kept = self._kept.get("histories")
        if kept is not None and kept[0] == (self._file_state(conn), None):
            return kept[1].get(session_id)  # type: ignore[no-any-return]
        view = self._view(conn)
        if session_id not in view.updated:
            return None
        load(conn, view, [session_id])
        return view.histories[session_id]

    # -- sessions -----------------------------------------------------------------------------------

    def _sessions(self, conn: apsw.Connection, contains: str | None) -> list[SessionRow]:
        needle = contains.casefold() if contains else None
        rows = [session_row(h) for sid, h in self._histories(conn).items() if not needle or needle in sid.casefold()]
        rows += [scope_row(s) for sid, s in self._scopes(conn).items() if not needle or needle in sid.casefold()]
        rows.sort(key=lambda r: r.session_id)
        rows.sort(key=lambda r: r.updated_at, reverse=True)
        return rows

    def _order(self, conn: apsw.Connection) -> list[tuple[str, str]]:
        """Every session's ``(updated_at, id)`` in the order of :meth:`_sessions`, from :meth:`_view`."""

        def make() -> list[tuple[str, str]]:
            scopes = [(s.span()[1], sid) for sid, s in self._scopes(conn).items()]
            return order_sessions(list(self._view(conn).order), scopes)

        return self._per_state(conn, "order", None, make)

    def _session_page(
        self, conn: apsw.Connection, after: tuple[str, str] | None, limit: int, contains: str | None
    ) -> list[SessionRow]:
        """A page of :meth:`_sessions` from :meth:`_order`, reading only the page's memories' changes."""
        needle = contains.casefold() if contains else None
        past = after is None
        chosen: list[str] = []
        for updated, sid in self._order(conn):
            if not past:
                assert after is not None
                past = updated < after[0] or (updated == after[0] and sid > after[1])
            if past and (not needle or needle in sid.casefold()):
                chosen.append(sid)
                if len(chosen) == limit:
                    break
        chosen = chosen[:limit]
        view = self._view(conn)
        load(conn, view, [sid for sid in chosen if sid in view.updated])
        scopes = self._scopes(conn)
        return [session_row(view.histories[sid]) if sid in view.updated else scope_row(scopes[sid]) for sid in chosen]

    def _events(self, conn: apsw.Connection, session_id: str) -> list[Event]:
        history = self._history(conn, session_id)
        if history is not None:
            return [Event(i, c.when or "", change_payload(c)) for i, c in enumerate(history.changes, 1)]
        scope = self._scopes(conn).get(session_id)
        if scope is not None:
            return [
                Event(i, when or "", message_payload(message, problems))
                for i, (message, when, problems) in enumerate(scope.messages, 1)
            ]
        raise NotFoundError(f"no memory or messages scope {session_id!r}")

    def _event_stats(self, conn: apsw.Connection, session_id: str) -> tuple[int, int | None]:
        count = len(self._events(conn, session_id))
        return count, count or None

    # -- memories as notes --------------------------------------------------------------------------

    def _groups(self, conn: apsw.Connection) -> list[str]:
        actors = {actor for deleted, actor in self._owners(conn)[1].values() if not deleted}
        named = sorted(a for a in actors if a is not None)
        return named + ([NO_ACTOR] if None in actors else [])

    def _notes(self, conn: apsw.Connection, group: str) -> list[Note]:
        notes = [note_of(h) for h in self._histories(conn).values() if not h.deleted and (h.actor or NO_ACTOR) == group]
        notes.sort(key=lambda n: (n.updated_at or "", n.sequence), reverse=True)
        return notes

    def _tag_lists(self, conn: apsw.Connection, group: str) -> list[tuple[list[str], int]]:
        return []  # mem0's memories carry no tags

    def _buckets(self, conn: apsw.Connection, group: str) -> list[tuple[str, list[str]]]:
        """The ids of the group's memories that are not deleted, by their last change's time (``""``: none),
        newest first."""
        kept: dict[str, list[tuple[str, list[str]]]] = self._per_state(conn, "buckets", None, dict)
        if group not in kept:
            view, owners = self._owners(conn)
            buckets: list[tuple[str, list[str]]] = []
            for updated, sid in view.order:
                deleted, actor = owners[sid]
                if not deleted and (actor or NO_ACTOR) == group:
                    if not buckets or buckets[-1][0] != updated:
                        buckets.append((updated, []))
                    buckets[-1][1].append(sid)
            kept[group] = buckets
        return kept[group]

    def _notes_after(
        self, conn: apsw.Connection, group: str, after: tuple[str, int] | None, limit: int
    ) -> Iterable[Note]:
        """A page of :meth:`_notes`: its memories by their last change's time (:meth:`_buckets`), those of one time
        by their first change's rowid (:func:`first_rowids`), only the page's memories' changes read. Every note
        (a negative ``limit``, to be filtered by its text) is :meth:`_notes`."""
        if limit < 0:
            return page_after(self._notes(conn, group), after, limit)
        buckets = self._buckets(conn, group)  # (first: read with the overview, where that is not read yet)
        view = self._view(conn)
        i = 0
        while after is not None and i < len(buckets) and buckets[i][0] > after[0]:
            i += 1
        out: list[str] = []
        while i < len(buckets) and len(out) < limit:
            j, room = i, limit - len(out)
            while j < len(buckets) and room > 0:  # the times whose memories can fill the page
                room -= len(buckets[j][1])
                j += 1
            first_rowids(conn, view, [sid for _, sids in buckets[i:j] for sid in sids])
            for updated, sids in buckets[i:j]:
                for sid in sorted(sids, key=view.first, reverse=True):
                    if after is None or (updated, view.first(sid)) < tuple(after):
                        out.append(sid)
            i = j
        out = out[:limit]
        load(conn, view, out)
        return [note_of(view.histories[sid]) for sid in out]

    def _note_of(self, conn: apsw.Connection, group: str, note_id: str) -> Note | None:
        view, owners = self._owners(conn)
        owner = owners.get(note_id)
        if owner is None or owner[0] or (owner[1] or NO_ACTOR) != group:
            return None
        load(conn, view, [note_id])
        return note_of(view.histories[note_id])
