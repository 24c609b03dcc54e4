"""Agno's ``SqliteDb`` (``agno`` 3.1.10, ``agno/db/sqlite/``): sessions and their runs, and user memories.

What Agno writes (``schemas.py``): a sessions table (``session_id``, ``session_type`` agent/team/workflow, the
agent, team or workflow and user it belongs to, JSON columns ``session_data``, ``summary``, …, ``created_at`` and
``updated_at`` in seconds since 1970), a runs table (``run_id``, ``session_id`` with a foreign key ``ON DELETE
CASCADE`` — which does nothing where foreign keys are off, as in every program but Agno itself —,
``run_index``, ``status``, ``parent_run_id``, ``run_data`` JSON holding the run's ``messages`` and ``metrics``)
and a memories table (:mod:`.agno_memories`). The tables are named ``agno_*`` unless the program chose other
names: found by their columns (:func:`~.detect.agno_tables`), never by name.

A session is a conversation; its events are its runs' messages in Agno's order (``run_index``, then
``created_at``, then ``run_id``), numbered by their place among all the messages the runs store, from 1. Messages a
run copied from earlier runs as history (``from_history``) are left out, as Agno's ``get_messages`` leaves them out
(each is shown once, in the run that said it; the copies keep their numbers, so the numbers have gaps). A page is
found from each run's message count, counted in SQL, and only its runs are parsed. A message keeps Agno's shape
(``role``, ``content``, ``tool_calls``, ``tool_call_id``) with its run under
``run_id``; a run whose ``run_data`` is not JSON is one flagged line. Token usage (``metrics``) is summed per
session (``details``), the session's summary is its summary. Users' memories are notes, a user a group, topics
tags; Agno's own memory search (``search_content``: a case-insensitive substring, newest first) is the ranking
over them, and oxmem's keyword search (:mod:`.keywords`, labelled as oxmem's) the one over sessions.

Edits (after *Enable editing*, a backup first): memories added, edited and deleted as Agno does
(:mod:`.agno_memories`); a session deleted as ``delete_session`` does — its row, its runs, its transcripts and
compaction records, in one transaction (a session with offloaded tool results is refused: their payloads may live
outside this file).
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, TypeVar, cast

import apsw

from ..database import write_transaction
from ..errors import InvalidInputError, NotFoundError, ReadOnlyError
from ..retrieval.hybrid import QueryResult
from ..retrieval.scope import AllSessions, Scope
from ..store.browse import SessionRow
from ..store.events import Event
from ..store.notes import Note
from . import agno_memories
from .aidaemon_rows import json_or_reason
from .base import Capabilities, Retriever, hit, ranking
from .detect import AgnoTables, agno_tables, quoted
from .keywords import KeywordSearch
from .times import epoch_time

#: the tables of ``delete_session`` besides sessions and runs: their names are fixed in Agno (``db/base.py``)
TRANSCRIPTS, COMPACTIONS, TOOL_RESULTS = "agno_transcripts", "agno_compactions", "agno_tool_results"
T = TypeVar("T")
SEARCH_DESCRIPTION = (
    "Agno's memory search (SqliteDb.get_user_memories with search_content, sorted by updated_at): the user's "
    "memories whose stored memory contains the words as typed, ignoring case (SQL lower(memory) LIKE "
    "lower('%words%'): '%' and '_' in the words are wildcards, as in Agno), newest first. It has no score: the "
    "order is the memories' times."
)


def _tables(conn: apsw.Connection) -> AgnoTables:
    found = agno_tables(conn)
    if found is None:  # (another program replaced the file meanwhile)
        raise NotFoundError("the file no longer has Agno's tables")
    return found


def _memories_table(conn: apsw.Connection) -> str:
    table = _tables(conn).memories
    if table is None:
        raise NotFoundError("this Agno file has no memories table yet (Agno creates it with the first memory)")
    return table


def _text(content: Any) -> str:
    """A message's content as text: the string, or its parts' texts one a line (a part without text by its
    type)."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        return "\n".join(
            p["text"] if isinstance(p, dict) and isinstance(p.get("text"), str) else f"[{_kind(p)}]" for p in content
        )
    return json.dumps(content, ensure_ascii=False)


def _kind(part: Any) -> str:
    return str(part.get("type", "part")) if isinstance(part, dict) else type(part).__name__


def _tool_calls(calls: Any) -> list[dict[str, Any]]:
    """Agno keeps the provider's tool calls (``{"id", "type", "function": {"name", "arguments"}}``)."""
    out = []
    for call in calls if isinstance(calls, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            out.append(
                {"id": call.get("id"), "name": str(function.get("name")), "arguments": function.get("arguments")}
            )
        elif isinstance(call, dict):
            out.append({"id": call.get("id"), "name": str(call.get("name", call.get("type", "tool"))), "arguments": ""})
    return out


def message_payload(message: Any, run_id: str) -> dict[str, Any]:
    """One of a run's messages as the payload the views show."""
    if not isinstance(message, dict):
        return {"role": "system", "content": f"⚠ run {run_id} holds a message that is no object: {message!r}"[:400]}
    role = message.get("role")
    payload: dict[str, Any] = {
        "role": role if role in ("user", "assistant", "system", "tool") else "system",
        "content": _text(message.get("content")),
        "run_id": run_id,
    }
    if role == "developer":
        payload["role"] = "system"
    calls = _tool_calls(message.get("tool_calls"))
    if calls:
        payload["tool_calls"] = calls
    if isinstance(message.get("tool_call_id"), str):
        payload["tool_call_id"] = message["tool_call_id"]
    if isinstance(message.get("tool_name"), str):
        payload["name"] = message["tool_name"]
    return payload


#: Agno's order of a session's runs (``_get_session_runs_data``; SQLite puts a NULL ``run_index`` first)
RUN_ORDER = "ORDER BY run_index, created_at, run_id"


def run_starts(conn: apsw.Connection, runs: str, session_id: str) -> tuple[list[int], list[int]]:
    """The session's runs in Agno's order — their rowids — and the sequence each one's first message takes: 1 plus
    every message the runs before it store, history copies included (a run that is not JSON: one line). Counted in
    SQL (``json_array_length``), no run is parsed here."""
    rows = conn.execute(
        "SELECT rowid, CASE WHEN json_valid(run_data) THEN coalesce(json_array_length(run_data, '$.messages'), 0) "
        f"ELSE 1 END FROM {quoted(runs)} WHERE session_id = ? {RUN_ORDER}",
        (session_id,),
    ).fetchall()
    ids, starts, at = [], [], 1
    for rowid, stored in rows:
        ids.append(int(cast(int, rowid)))
        starts.append(at)
        at += max(int(cast(int, stored)), 1)
    return ids, starts


def run_events(conn: apsw.Connection, runs: str, rowid: int, first: int) -> list[Event]:
    """One run's messages as events, numbered from ``first`` by their place among the messages it stores (history
    copies, left out, keep their numbers), or the run as one flagged line when it is not JSON."""
    ((run_id, run_data, created),) = conn.execute(
        f"SELECT run_id, run_data, created_at FROM {quoted(runs)} WHERE rowid = ?", (rowid,)
    ).fetchall()
    data, problem = json_or_reason(run_data)
    if problem is not None or not isinstance(data, dict):
        why = problem or f"is JSON but no object ({type(data).__name__})"
        content = f"⚠ unreadable row: run {run_id}: run_data {why}; Agno cannot load this session"
        return [Event(first, epoch_time(created), {"role": "system", "content": content})]
    messages = data.get("messages")
    events = []
    for i, message in enumerate(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("from_history"):
            continue
        when = message.get("created_at") if isinstance(message, dict) else None
        shown = epoch_time(when if when is not None else created)
        events.append(Event(first + i, shown, message_payload(message, str(run_id))))
    return events


def _usage(conn: apsw.Connection, runs: str | None) -> dict[str, tuple[int, int, int]]:
    """Per session: runs, and the input and output tokens their ``metrics`` count (rows that are not JSON add 0)."""
    if runs is None:
        return {}
    metric = "CASE WHEN json_valid(run_data) THEN json_extract(run_data, '$.metrics.{0}') END"
    rows = conn.execute(
        f"SELECT session_id, count(*), total({metric.format('input_tokens')}), total({metric.format('output_tokens')}) "
        f"FROM {quoted(runs)} GROUP BY session_id"
    )
    return {str(sid): (int(n), int(tin), int(tout)) for sid, n, tin, tout in rows}


def delete_session(conn: apsw.Connection, session_id: str) -> None:
    """``SqliteDb.delete_session`` (``sqlite.py`` 1387–1437): the session row, its runs, transcripts and compaction
    records, one write transaction; :class:`NotFoundError` when there is no such session, :class:`ReadOnlyError`
    (before any write) when it has offloaded tool results."""
    with write_transaction(conn):
        tables = _tables(conn)
        if (
            tables.sessions is None
            or not conn.execute(
                f"SELECT 1 FROM {quoted(tables.sessions)} WHERE session_id = ?", (session_id,)
            ).fetchall()
        ):
            raise NotFoundError(f"no session {session_id!r}")
        present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if (
            TOOL_RESULTS in present
            and conn.execute(f"SELECT 1 FROM {TOOL_RESULTS} WHERE session_id = ? LIMIT 1", (session_id,)).fetchall()
        ):
            raise ReadOnlyError(
                f"session {session_id} has offloaded tool results, whose payloads may live outside this file: delete "
                "it with Agno (SqliteDb.delete_session); nothing was changed"
            )
        conn.execute(f"DELETE FROM {quoted(tables.sessions)} WHERE session_id = ?", (session_id,))
        if tables.runs is not None:
            conn.execute(f"DELETE FROM {quoted(tables.runs)} WHERE session_id = ?", (session_id,))
        if TRANSCRIPTS in present:
            conn.execute(f"DELETE FROM {TRANSCRIPTS} WHERE agno_session_id = ?", (session_id,))
        if COMPACTIONS in present:
            conn.execute(f"DELETE FROM {COMPACTIONS} WHERE session_id = ?", (session_id,))


class AgnoReader(KeywordSearch):
    """An Agno ``SqliteDb`` file (see the module's docstring)."""

    FORMAT = "agno"
    LABEL = "Agno memory"
    REASON = "oxmem edits Agno's user memories and deletes its sessions, as Agno does, and changes nothing else"
    EDITS = frozenset({"sessions", "notes"})

    def _now(self) -> datetime:
        """The current UTC time (a memory's ``created_at`` / ``updated_at``; replaceable in tests)."""
        return datetime.now(timezone.utc)

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            self.format,
            self.LABEL,
            has_schedules=False,
            notes_label="Memories",
            note_noun="memory",
            group_label="User",
            tags_keep_case=True,
            refusals=self.refusals(),
        )

    def _markers(self, conn: apsw.Connection) -> list[str]:
        tables = _tables(conn)
        return [f"{kind}: {name}" for kind, name in vars(tables).items() if name is not None]

    # -- sessions -----------------------------------------------------------------------------------

    def _sessions(self, conn: apsw.Connection, contains: str | None) -> list[SessionRow]:
        tables = _tables(conn)
        if tables.sessions is None:
            return []
        usage = _usage(conn, tables.runs)
        needle = contains.casefold() if contains else None
        rows = []
        for sid, kind, agent, team, workflow, user, created, updated in conn.execute(
            "SELECT session_id, session_type, agent_id, team_id, workflow_id, user_id, created_at, updated_at "
            f"FROM {quoted(tables.sessions)}"
        ):
            shown_id = str(sid)
            if needle and needle not in shown_id.casefold():
                continue
            runs, tokens_in, tokens_out = usage.get(shown_id, (0, 0, 0))
            details: dict[str, Any] = {"user": user, "runs": f"{runs:,} run" + ("" if runs == 1 else "s")}
            if kind != "agent":
                details["type"] = kind
            if tokens_in or tokens_out:
                details["tokens"] = f"{tokens_in:,} in · {tokens_out:,} out"
            shown_created = epoch_time(created)
            rows.append(
                SessionRow(
                    shown_id,
                    agent or team or workflow,
                    shown_created,
                    epoch_time(updated) if updated is not None else shown_created,
                    details,
                )
            )
        rows.sort(key=lambda r: r.session_id)
        rows.sort(key=lambda r: r.updated_at, reverse=True)
        return rows

    def _runs_of(self, conn: apsw.Connection, session_id: str) -> tuple[str | None, list[int], list[int]]:
        """The runs table and :func:`run_starts` of the session (kept until the file changes);
        :class:`NotFoundError` when the file has no such session."""
        tables = _tables(conn)
        exists = (
            tables.sessions is not None
            and conn.execute(f"SELECT 1 FROM {quoted(tables.sessions)} WHERE session_id = ?", (session_id,)).fetchall()
        )
        if not exists and (
            tables.runs is None
            or not conn.execute(f"SELECT 1 FROM {quoted(tables.runs)} WHERE session_id = ?", (session_id,)).fetchall()
        ):
            raise NotFoundError(f"no session {session_id!r}")
        runs = tables.runs
        if runs is None:
            return None, [], []
        ids, starts = self._per_state(conn, "runs", session_id, lambda: run_starts(conn, runs, session_id))
        return runs, ids, starts

    def _events_after(
        self, conn: apsw.Connection, session_id: str, after_sequence: int | None, limit: int
    ) -> list[Event]:
        """A page of the session's messages: the runs that hold it found from :func:`run_starts`, only they
        parsed."""
        runs, ids, starts = self._runs_of(conn, session_id)
        after = 0 if after_sequence is None else after_sequence
        out: list[Event] = []
        i = max(bisect.bisect_right(starts, after) - 1, 0)
        while runs is not None and i < len(ids) and (limit < 0 or len(out) < limit):
            out.extend(e for e in run_events(conn, runs, ids[i], starts[i]) if e.sequence > after)
            i += 1
        return out if limit < 0 else out[:limit]

    def _events(self, conn: apsw.Connection, session_id: str) -> list[Event]:
        return self._events_after(conn, session_id, None, -1)

    def _event_stats(self, conn: apsw.Connection, session_id: str) -> tuple[int, int | None]:
        """How many messages are shown (a run's history copies not) and the last one's sequence, counted in SQL."""
        runs, ids, starts = self._runs_of(conn, session_id)
        if runs is None or not ids:
            return 0, None
        shown = (
            "CASE WHEN json_valid(run_data) AND json_type(run_data) = 'object' THEN (SELECT count(*) FROM "
            "json_each(run_data, '$.messages') WHERE json_type(value) != 'object' OR NOT "
            "coalesce(json_extract(value, '$.from_history'), 0)) ELSE 1 END"
        )
        ((count,),) = conn.execute(
            f"SELECT total({shown}) FROM {quoted(runs)} WHERE session_id = ?", (session_id,)
        ).fetchall()
        shown_count = int(cast(float, count))
        for rowid, first in zip(reversed(ids), reversed(starts), strict=True):  # the last run that shows a message
            found = run_events(conn, runs, rowid, first)
            if found:
                return shown_count, found[-1].sequence
        return shown_count, None

    def _summary(self, conn: apsw.Connection, session_id: str) -> dict[str, Any] | None:
        tables = _tables(conn)
        if tables.sessions is None:
            return None
        rows = conn.execute(
            f"SELECT summary FROM {quoted(tables.sessions)} WHERE session_id = ?", (session_id,)
        ).fetchall()
        summary, problem = json_or_reason(rows[0][0]) if rows else (None, None)
        if problem is not None or not isinstance(summary, dict):
            return None
        text = summary.get("summary")
        if not isinstance(text, str) or not text.strip():
            return None
        metadata = {"source": "sessions.summary"}
        if isinstance(summary.get("topics"), list):
            metadata["topics"] = ", ".join(map(str, summary["topics"]))
        upper = self._event_stats(conn, session_id)[1] or 0
        return {"summary": text, "upper_sequence": upper, "epoch": 0, "metadata": metadata}

    async def forget(self, session_id: str) -> None:
        """Agno's ``delete_session``: :func:`delete_session`."""
        self._writable("sessions")
        await self._write(delete_session, session_id)

    # -- memories (:mod:`.agno_memories`) -----------------------------------------------------------

    def _groups(self, conn: apsw.Connection) -> list[str]:
        table = _tables(conn).memories
        return [] if table is None else agno_memories.memory_groups(conn, table)

    def _notes(self, conn: apsw.Connection, group: str) -> list[Note]:
        return list(self._notes_after(conn, group, None, -1))

    def _notes_after(
        self, conn: apsw.Connection, group: str, after: tuple[str, int] | None, limit: int
    ) -> Iterable[Note]:
        table = _tables(conn).memories
        if table is None:
            return iter(())
        order = self._per_state(conn, "memory order", group, lambda: agno_memories.memory_order(conn, table, group))
        return agno_memories.memories_page(conn, table, group, after, limit, order)

    def _note_of(self, conn: apsw.Connection, group: str, note_id: str) -> Note | None:
        table = _tables(conn).memories
        return None if table is None else agno_memories.find_memory(conn, table, group, note_id)

    async def _memory_edit(self, fn: Callable[..., T], *args: Any) -> T:
        self._writable("notes")

        def edit(conn: apsw.Connection) -> T:
            return fn(conn, _memories_table(conn), *args)

        return await self._write(edit)

    async def save_note(self, user: str, content: str, tags: Sequence[str] = ()) -> Note:
        return await self._memory_edit(agno_memories.save_memory, user, content, list(tags), self._now())

    async def update_note(
        self, user: str, note_id: str, content: str, tags: Sequence[str] = (), *, expected: Note | None = None
    ) -> Note:
        return await self._memory_edit(
            agno_memories.update_memory, user, note_id, content, list(tags), expected, self._now()
        )

    async def delete_note(self, user: str, note_id: str, *, expected: Note | None = None) -> None:
        await self.delete_notes(user, [note_id], expected=None if expected is None else [expected])

    async def delete_notes(self, user: str, note_ids: Sequence[str], *, expected: Sequence[Note] | None = None) -> int:
        return await self._memory_edit(agno_memories.delete_memories, user, list(note_ids), expected)

    async def restore_notes(
        self, items: Sequence[Note], *, expected: Mapping[str, Note | None] | None = None
    ) -> list[Note]:
        return await self._memory_edit(agno_memories.restore_memories, list(items), expected)

    # -- Agno's memory search -----------------------------------------------------------------------

    def retrievers(self) -> list[Retriever]:
        """Agno's memory search over a user's memories, and oxmem's keyword search over sessions (Agno has none)."""
        return [
            Retriever("agno-memories", "Agno memory search", "notes", False, SEARCH_DESCRIPTION),
            *super().retrievers(),
        ]

    @ranking("agno-memories")
    def _rank_memories(
        self, conn: apsw.Connection, scope: Scope, query: str, top_k: int, **options: Any
    ) -> QueryResult:
        """``get_user_memories(user_id=scope, search_content=query, sort_by="updated_at", sort_order="desc",
        limit=top_k)``, its SQL run as SQLAlchemy writes it for SQLite."""
        if isinstance(scope, AllSessions):
            raise InvalidInputError("Agno's memory search runs over one user's memories: pick a user")
        table = _memories_table(conn)
        where = "user_id IS NULL" if scope == agno_memories.NO_USER else "user_id = :user"
        result = QueryResult(
            query, scope, top_k, 0.0, 1.0, "substring", [], "any", None, {}, [], retriever="agno-memories"
        )
        pattern = f"%{query}%"
        result.steps.append(
            f"memories of {scope!r} WHERE lower(memory) LIKE lower({pattern!r}) — memory is the stored JSON text, so "
            "a word with non-ASCII letters is matched against its \\u escapes, as in Agno"
        )
        result.steps.append("ORDER BY coalesce(updated_at, created_at) DESC; no score: each hit's is 1")
        rows = conn.execute(
            f"SELECT {agno_memories.FIELDS} FROM {quoted(table)} WHERE {where} AND lower(memory) LIKE lower(:pattern) "
            "ORDER BY coalesce(updated_at, created_at) DESC LIMIT :limit",
            {"user": scope, "pattern": pattern, "limit": top_k},
        ).fetchall()
        result.steps.append(f"the first {top_k} that match are the hits (Agno's limit)")
        for rank, row in enumerate(rows, 1):
            note = agno_memories.memory_note(row, scope)
            metadata = {"tags": note.tags, "created_at": note.created_at, "updated_at": note.updated_at}
            notes = [f"contains {query!r} (ignoring case); place {rank} by time, newest first"]
            result.pool.append(
                hit(rank, note.note_id, scope, note.content, 1.0, fts=(1.0, None, rank), metadata=metadata, notes=notes)
            )
        result.hits = result.pool[:top_k]
        return result
