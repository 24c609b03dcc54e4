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

Nothing is written: the memories themselves live in mem0's vector store, which this file does not hold.
"""

from __future__ import annotations

from collections.abc import Iterable
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


def _time(value: Any, column: str, problems: list[str]) -> str | None:
    """A time as shown (RFC 3339 UTC); a value that is no time flagged and shown as it is; None for NULL."""
    if value is None:
        return None
    when = parse_when(value)
    if when is None:
        problems.append(f"{column} {value!r} is no time")
        return _text(value)
    return rfc3339(when)


def _span(times: Iterable[str | None]) -> tuple[str, str]:
    """The first and last of the shown times that are times (all RFC 3339 UTC: their text sorts as they do);
    ``""`` when none is — such a session sorts last, and its events say what their times hold, flagged."""
    real = sorted(t for t in times if t and parse_when(t) is not None)
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


def read_histories(conn: apsw.Connection) -> dict[str, History]:
    """Every memory's changes (:class:`History`), by session id, in mem0's order (see the module's docstring)."""
    present = set(_columns(conn, "history"))
    key = "rowid" if _has_rowid(conn, "history") else "NULL"
    order = []
    if "created_at" in present:
        order.append("created_at ASC")
    if "updated_at" in present:
        order.append("DATETIME(updated_at) ASC")
    order.append(f"{key} ASC")
    cells = ", ".join(_cell(c, present) for c in CURRENT_COLUMNS)
    rows = conn.execute(f"SELECT {key}, {cells} FROM history ORDER BY {', '.join(order)}")
    by_memory: dict[Any, list[Change]] = {}
    for position, raw in enumerate(rows):
        problems: list[str] = []
        values = {c: _decode(raw[1 + 2 * i], raw[2 + 2 * i], c, problems) for i, c in enumerate(CURRENT_COLUMNS)}
        values["is_deleted"] = bool(values["is_deleted"])  # as get_history returns it (bool(r[7]))
        created = _time(values["created_at"], "created_at", problems)
        updated = _time(values["updated_at"], "updated_at", problems)
        # the change's time: updated_at, else created_at (the first that is a time; else the first given)
        given = [t for t in (updated, created) if t is not None]
        when = next((t for t in given if parse_when(t) is not None), given[0] if given else None)
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
        return self._per_state(conn, "histories", None, lambda: read_histories(conn))

    def _scopes(self, conn: apsw.Connection) -> dict[str, Scope]:
        return self._per_state(conn, "scopes", None, lambda: read_scopes(conn, set(self._histories(conn))))

    # -- sessions -----------------------------------------------------------------------------------

    def _sessions(self, conn: apsw.Connection, contains: str | None) -> list[SessionRow]:
        needle = contains.casefold() if contains else None
        rows = []
        for sid, history in self._histories(conn).items():
            if needle and needle not in sid.casefold():
                continue
            created, updated = history.span()
            details: dict[str, Any] = {"memory": _short(history.text), "changes": len(history.changes)}
            if history.deleted:
                details["state"] = "deleted"
            if history.role is not None:
                details["role"] = history.role
            flagged = sum(1 for c in history.changes if c.problems)
            problems = [
                p
                for p in (
                    history.problem,
                    f"⚠ {flagged} change{'s' if flagged != 1 else ''} flagged" if flagged else None,
                )
                if p
            ]
            if problems:
                details["problem"] = "; ".join(problems)
            rows.append(SessionRow(sid, history.actor, created, updated, details))
        for sid, scope in self._scopes(conn).items():
            if needle and needle not in sid.casefold():
                continue
            created, updated = scope.span()
            details = {"scope": scope.scope, "messages": len(scope.messages)}
            flagged = sum(1 for _, _, problems in scope.messages if problems)
            if flagged:
                details["problem"] = f"⚠ {flagged} message{'s' if flagged != 1 else ''} flagged"
            rows.append(SessionRow(sid, None, created, updated, details))
        rows.sort(key=lambda r: r.session_id)
        rows.sort(key=lambda r: r.updated_at, reverse=True)
        return rows

    def _events(self, conn: apsw.Connection, session_id: str) -> list[Event]:
        history = self._histories(conn).get(session_id)
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
        actors = {h.actor for h in self._histories(conn).values() if not h.deleted}
        named = sorted(a for a in actors if a is not None)
        return named + ([NO_ACTOR] if None in actors else [])

    def _notes(self, conn: apsw.Connection, group: str) -> list[Note]:
        notes = [
            self._note(h) for h in self._histories(conn).values() if not h.deleted and (h.actor or NO_ACTOR) == group
        ]
        notes.sort(key=lambda n: (n.updated_at or "", n.sequence), reverse=True)
        return notes

    def _note(self, history: History) -> Note:
        created, updated = history.span()
        last = history.changes[-1]
        details: dict[str, Any] = {"changes": len(history.changes), "event": last.event}
        if history.role is not None:
            details["role"] = history.role
        flagged = [p for c in history.changes for p in c.problems]
        problems = [p for p in (history.problem, "; ".join(flagged)) if p]
        if problems:
            details["problem"] = "; ".join(problems)
        text = history.text
        return Note(
            history.session_id,
            history.actor or NO_ACTOR,
            text,
            [],
            created or None,
            updated or None,
            history.changes[0].rowid,
            details,
        )

    def _notes_after(
        self, conn: apsw.Connection, group: str, after: tuple[str, int] | None, limit: int
    ) -> Iterable[Note]:
        return page_after(self._notes(conn, group), after, limit)

    def _note_of(self, conn: apsw.Connection, group: str, note_id: str) -> Note | None:
        history = self._histories(conn).get(note_id)
        if history is None or history.deleted or (history.actor or NO_ACTOR) != group:
            return None
        return self._note(history)
