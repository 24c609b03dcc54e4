"""The OpenAI Agents SDK's session store (``openai-agents``, ``SQLiteSession``), read-only.

What the SDK writes (openai-agents 0.24.0, ``agents/memory/sqlite_session.py``, ``_create_schema_for_connection``):
a sessions table (``session_id TEXT PRIMARY KEY, created_at, updated_at``, both ``CURRENT_TIMESTAMP``: UTC as
``YYYY-MM-DD HH:MM:SS``) and a messages table (``id INTEGER PRIMARY KEY AUTOINCREMENT, session_id,
message_data TEXT, created_at``, its foreign key naming the sessions table), ``agent_sessions`` and
``agent_messages`` unless the program named them otherwise — so they are found by their columns and that foreign
key, never by name. Each message row is one Responses API input item as JSON: a message (``role`` user, system,
developer or assistant; ``content`` a string or a list of parts), a ``function_call`` (``call_id``, ``name``,
``arguments``) or its ``function_call_output`` (``call_id``, ``output``), or another item (reasoning, …). The SDK
reads a session's items in ``id`` order and **skips a row whose JSON does not parse, without a word**
(``get_items``), and hands on one that is JSON but no object as it is: oxmem shows either, flagged, in its place.

Deleting a session (after *Enable editing*, a backup first) is the SDK's own ``clear_session``: its messages, then
its session row, in one transaction. Deleting a **turn** (:func:`turn_rows`: the user's message and the items
after it up to the next one — what answered it — and every tool call or output whose ``call_id`` pairs with one of
them, wherever it is, so no call is left without its output nor an output without its call, which the Responses
API rejects as input) deletes those rows by ``id`` as the SDK's ``pop_item`` deletes one, in one transaction;
``updated_at`` is left as ``pop_item`` leaves it. A file of ``AdvancedSQLiteSession`` (its ``message_structure``
table: turns, branches, reserved branch ids, clear generations) is not edited: its ``clear_session`` keeps more than
these two tables in step.

In a file of ``AdvancedSQLiteSession`` each branch of a session is a conversation of its own, as its
``get_items(branch_id=…)`` reads it — the items ``message_structure`` places on that branch, in its
``sequence_number`` order (a new branch starts with copies of the turns before it) —: ``main`` under the session's
id, another as ``SESSION ⎇ BRANCH`` (:data:`BRANCH_MARK`); its token usage (``turn_usage``) is the branch's, as
``get_session_usage(branch_id=…)`` sums it.

A session is a conversation; each item an event (its sequence is its row ``id``, which is what the SDK orders by):
a message as the message it is, a function call as an assistant's tool call, its output as the tool's answer (the
item itself is kept in the event, under ``item``). The SDK has no search of its own: oxmem's keyword search
(:mod:`.keywords`), labelled as oxmem's, finds items by their words.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import apsw

from ..database import write_transaction
from ..errors import ConflictError, NotFoundError, ReadOnlyError
from ..store.browse import SessionRow
from ..store.events import Event
from .aidaemon_rows import json_or_reason
from .base import Capabilities
from .detect import column_set, quoted, session_tables
from .keywords import KeywordSearch
from .times import shown_time

#: message roles as oxmem's payloads name them (the Responses API's ``developer`` is the system's voice)
ROLES = {"user": "user", "system": "system", "developer": "system", "assistant": "assistant"}


def _text(content: Any) -> str:
    """A message's text: the string itself, or its parts' texts (``input_text``, ``output_text``, …) one a line;
    a part without text (an image, a file) by its type."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, ensure_ascii=False)
    parts = []
    for part in content:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])
        elif isinstance(part, dict) and isinstance(part.get("refusal"), str):
            parts.append(f"[refusal] {part['refusal']}")
        elif isinstance(part, dict):
            parts.append(f"[{part.get('type', 'part')}]")
    return "\n".join(parts)


def item_payload(message_id: int, message_data: Any) -> dict[str, Any]:
    """One message row as the message payload the views show (the item itself under ``item``); a row the SDK
    would skip (not JSON, not an object) is a system line saying so, with its raw text."""
    item, problem = json_or_reason(message_data)
    if problem is not None:
        said = f"{problem}; the SDK skips it without a word"
    elif not isinstance(item, dict):
        said = f"is JSON but not an object ({type(item).__name__}); the SDK hands it on as an item as it is"
    if problem is not None or not isinstance(item, dict):
        raw = message_data.decode("utf-8", "replace") if isinstance(message_data, bytes) else message_data
        return {"role": "system", "content": f"⚠ unreadable row: message {message_id} {said}", "raw_data": raw}
    kind, role = item.get("type"), item.get("role")
    if kind == "function_call":
        call = {"id": item.get("call_id"), "name": str(item.get("name")), "arguments": item.get("arguments")}
        return {"role": "assistant", "content": "", "tool_calls": [call], "item": item}
    if kind == "function_call_output":
        output = item.get("output")
        text = output if isinstance(output, str) else _text(output)
        payload = {"role": "tool", "content": text, "item": item}
        if isinstance(item.get("call_id"), str):
            payload["tool_call_id"] = item["call_id"]
        return payload
    if role in ROLES and kind in (None, "message"):
        return {"role": ROLES[role], "content": _text(item.get("content")), "item": item}
    what = kind or role or "item"
    return {"role": "system", "content": f"[{what}] {json.dumps(item, ensure_ascii=False)}", "item": item}


def _starts_turn(item: Any) -> bool:
    """A user's message: where a turn begins (as ``AdvancedSQLiteSession`` counts user turns)."""
    return isinstance(item, dict) and item.get("role") == "user" and item.get("type") in (None, "message")


def _call_id(item: Any) -> str | None:
    call = item.get("call_id") if isinstance(item, dict) else None
    return call if isinstance(call, str) else None


def turn_rows(conn: apsw.Connection, session_id: str, message_id: int) -> list[tuple[int, Any]]:
    """``(id, message_data)`` of the turn of item ``message_id``, in ``id`` order (the module's docstring);
    :class:`NotFoundError` when the item is not in the session."""
    _, messages = _session_tables(conn, session_id)
    rows: list[Any] = conn.execute(
        f"SELECT id, message_data FROM {quoted(messages)} WHERE session_id = ? ORDER BY id", (session_id,)
    ).fetchall()
    at = next((i for i, (row_id, _) in enumerate(rows) if row_id == message_id), None)
    if at is None:
        raise NotFoundError(f"no item {message_id} in session {session_id!r}")
    items = [json_or_reason(data)[0] for _, data in rows]
    start, end = at, at + 1
    while start > 0 and not _starts_turn(items[start]):
        start -= 1
    while end < len(items) and not _starts_turn(items[end]):
        end += 1
    calls = {c for c in map(_call_id, items[start:end]) if c is not None}
    chosen = set(range(start, end)) | {i for i, item in enumerate(items) if _call_id(item) in calls}
    return [(int(rows[i][0]), rows[i][1]) for i in sorted(chosen)]


def delete_turn(
    conn: apsw.Connection, session_id: str, message_id: int, expected: list[tuple[int, Any]] | None = None
) -> list[int]:
    """The rows of :func:`turn_rows` deleted by ``id`` (``pop_item``'s ``DELETE``), one write transaction; with
    ``expected`` (the rows as loaded), only if the turn is still exactly those rows."""
    with write_transaction(conn):
        refuse_advanced(conn)
        rows = turn_rows(conn, session_id, message_id)
        if expected is not None and [(i, item_payload(i, d)) for i, d in rows] != expected:
            raise ConflictError(
                f"the turn of item {message_id} in session {session_id} was changed by another program since it "
                "was loaded; nothing was deleted"
            )
        _, messages = _tables_of(conn)
        for row_id, _ in rows:
            conn.execute(f"DELETE FROM {quoted(messages)} WHERE id = ?", (row_id,))
    return [row_id for row_id, _ in rows]


def turn_usage(conn: apsw.Connection) -> dict[tuple[str, str], dict[str, str]]:
    """Per session and branch, the token usage ``AdvancedSQLiteSession`` records per user turn (``turn_usage``),
    summed as its ``get_session_usage(branch_id)`` sums it: ``{"turns": …, "tokens": "N in · M out"}``; none in a
    file of ``SQLiteSession``."""
    if not {"session_id", "branch_id", "input_tokens", "output_tokens"} <= column_set(conn, "turn_usage"):
        return {}
    rows = conn.execute(
        "SELECT session_id, branch_id, count(*), total(input_tokens), total(output_tokens) FROM turn_usage "
        "GROUP BY session_id, branch_id"
    )
    return {
        (str(sid), str(branch)): {"turns": f"{int(turns):,}", "tokens": f"{int(tin):,} in · {int(tout):,} out"}
        for sid, branch, turns, tin, tout in rows
    }


#: how a branch of an ``AdvancedSQLiteSession`` session is listed among the sessions: ``SESSION ⎇ BRANCH`` (its
#: main branch is the session's own id)
BRANCH_MARK = " ⎇ "
STRUCTURE_COLUMNS = {"session_id", "message_id", "branch_id", "sequence_number"}


def branches(conn: apsw.Connection) -> dict[str, list[str]] | None:
    """Per session, the branches ``AdvancedSQLiteSession`` keeps in ``message_structure`` (``main`` first, then
    as they were made); None for a file of ``SQLiteSession``."""
    if not column_set(conn, "message_structure") >= STRUCTURE_COLUMNS:
        return None
    out: dict[str, list[str]] = {}
    for sid, branch in conn.execute(
        "SELECT session_id, branch_id FROM message_structure GROUP BY session_id, branch_id "
        "ORDER BY session_id, branch_id != 'main', min(id)"
    ):
        out.setdefault(str(sid), []).append(str(branch))
    return out


def listed_id(session_id: str, branch: str) -> str:
    return session_id if branch == "main" else f"{session_id}{BRANCH_MARK}{branch}"


def split_branch(conn: apsw.Connection, listed: str) -> tuple[str, str | None]:
    """The session and branch a listed id names (:data:`BRANCH_MARK`; a session's own id: its ``main`` branch);
    the branch None in a file of ``SQLiteSession``."""
    known = branches(conn)
    if known is None:
        return listed, None
    session_id, mark, branch = listed.rpartition(BRANCH_MARK)
    if mark and branch in known.get(session_id, []):
        return session_id, branch
    return listed, "main"


def clear_session(conn: apsw.Connection, session_id: str) -> None:
    """``SQLiteSession.clear_session`` (openai-agents 0.24.0, ``sqlite_session.py`` 521–535): ``DELETE`` the
    session's messages, then its session row, in one write transaction; :class:`NotFoundError` when it has
    neither; a file of ``AdvancedSQLiteSession`` is refused (see the module's docstring)."""
    with write_transaction(conn):
        refuse_advanced(conn)
        sessions, messages = _session_tables(conn, session_id)
        conn.execute(f"DELETE FROM {quoted(messages)} WHERE session_id = ?", (session_id,))
        conn.execute(f"DELETE FROM {quoted(sessions)} WHERE session_id = ?", (session_id,))


def refuse_advanced(conn: apsw.Connection) -> None:
    """:class:`ReadOnlyError` for a file of ``AdvancedSQLiteSession`` (see the module's docstring)."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'message_structure'").fetchall():
        raise ReadOnlyError(
            "this is an AdvancedSQLiteSession file (turns, branches): its clear_session keeps more tables in step "
            "than oxmem writes; nothing was changed"
        )


def _tables_of(conn: apsw.Connection) -> tuple[str, str]:
    found = session_tables(conn)
    if found is None:  # (another program replaced the file meanwhile)
        raise NotFoundError("the file no longer has the OpenAI Agents SDK's session tables")
    return found


def _session_tables(conn: apsw.Connection, session_id: str) -> tuple[str, str]:
    """The SDK's two tables, once ``session_id`` is found in either: else :class:`NotFoundError`."""
    sessions, messages = _tables_of(conn)
    if not (
        conn.execute(f"SELECT 1 FROM {quoted(sessions)} WHERE session_id = ?", (session_id,)).fetchall()
        or conn.execute(f"SELECT 1 FROM {quoted(messages)} WHERE session_id = ? LIMIT 1", (session_id,)).fetchall()
    ):
        raise NotFoundError(f"no session {session_id!r}")
    return sessions, messages


class OpenAIAgentsReader(KeywordSearch):
    """A ``SQLiteSession`` file of the OpenAI Agents SDK (see the module's docstring)."""

    FORMAT = "openai-agents"
    LABEL = "OpenAI Agents session store"
    REASON = "oxmem deletes the OpenAI Agents SDK's sessions and turns and changes nothing else in its file"
    EDITS = frozenset({"sessions", "turns"})

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            self.format,
            self.LABEL,
            has_notes=False,
            has_schedules=False,
            refusals=self.refusals(),
        )

    def _markers(self, conn: apsw.Connection) -> list[str]:
        sessions, messages = _tables_of(conn)
        return [f"sessions: {sessions}", f"messages: {messages}"]

    def _sessions(self, conn: apsw.Connection, contains: str | None) -> list[SessionRow]:
        sessions, _ = _tables_of(conn)
        needle = contains.casefold() if contains else None
        usage = turn_usage(conn)
        known = branches(conn)
        rows = []
        for sid, created, updated in conn.execute(f"SELECT session_id, created_at, updated_at FROM {quoted(sessions)}"):
            for branch in ["main"] if known is None else known.get(str(sid), ["main"]):
                shown_id = listed_id(str(sid), branch)
                if needle and needle not in shown_id.casefold():
                    continue
                details = ({} if branch == "main" else {"branch": branch}) | usage.get((str(sid), branch), {})
                rows.append(SessionRow(shown_id, None, shown_time(created), shown_time(updated), details))
        rows.sort(key=lambda r: r.session_id)
        rows.sort(key=lambda r: r.updated_at, reverse=True)
        return rows

    async def forget(self, session_id: str) -> None:
        """The SDK's ``clear_session``: the session's messages, then its row (:func:`clear_session`)."""
        self._writable("sessions")
        await self._db.read(refuse_advanced)  # (refused before any write begins)
        await self._write(clear_session, session_id)

    async def turn(self, session_id: str, sequence: int) -> list[Event]:
        """The items :func:`turn_rows` deletes with item ``sequence``, as events."""

        def read(conn: apsw.Connection) -> list[Event]:
            refuse_advanced(conn)  # (its turns live in branches that share rows: not deleted here)
            ids = {i for i, _ in turn_rows(conn, session_id, sequence)}
            return [e for e in self._events(conn, session_id) if e.sequence in ids]

        return await self._db.read(read)

    async def delete_turn(
        self, session_id: str, sequence: int, *, expected: Sequence[Event] | None = None
    ) -> list[int]:
        """:func:`delete_turn` (refused before any write for an ``AdvancedSQLiteSession`` file)."""
        self._writable("turns")
        await self._db.read(refuse_advanced)
        loaded = None if expected is None else [(e.sequence, e.payload) for e in expected]
        return await self._write(delete_turn, session_id, sequence, loaded)

    def _events_after(
        self, conn: apsw.Connection, session_id: str, after_sequence: int | None, limit: int
    ) -> list[Event]:
        """A page of items in the SDK's order: ``id`` — or, for a branch of an ``AdvancedSQLiteSession``, its
        ``message_structure.sequence_number``, as its ``get_items(branch_id=…)`` reads them (each item keeps its
        row ``id`` as its sequence)."""
        sid, branch = split_branch(conn, session_id)
        _, messages = _session_tables(conn, sid)
        after = -1 if after_sequence is None else after_sequence
        if branch is None:
            rows: list[Any] = conn.execute(
                f"SELECT id, message_data, created_at FROM {quoted(messages)} WHERE session_id = ? AND id > ? "
                "ORDER BY id LIMIT ?",
                (sid, after, limit),
            ).fetchall()
        else:
            rows = conn.execute(
                f"SELECT m.id, m.message_data, m.created_at FROM {quoted(messages)} m JOIN message_structure s "
                "ON m.id = s.message_id WHERE m.session_id = ? AND s.branch_id = ? AND s.sequence_number > "
                "coalesce((SELECT sequence_number FROM message_structure WHERE message_id = ? AND branch_id = ?), -1) "
                "ORDER BY s.sequence_number LIMIT ?",
                (sid, branch, after, branch, limit),
            ).fetchall()
        return [Event(int(i), shown_time(created), item_payload(int(i), data)) for i, data, created in rows]

    def _events(self, conn: apsw.Connection, session_id: str) -> list[Event]:
        return self._events_after(conn, session_id, None, -1)

    def _event_stats(self, conn: apsw.Connection, session_id: str) -> tuple[int, int | None]:
        sid, branch = split_branch(conn, session_id)
        if branch is not None:
            events = self._events(conn, session_id)
            return len(events), events[-1].sequence if events else None
        _, messages = _session_tables(conn, session_id)
        found: list[Any] = conn.execute(
            f"SELECT count(*), max(id) FROM {quoted(messages)} WHERE session_id = ?", (session_id,)
        ).fetchall()
        count, last = found[0]
        return int(count), None if last is None else int(last)
