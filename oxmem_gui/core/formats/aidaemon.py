"""aidaemon's memory files (FORMATS.md §D), read-only: the current event-sourced layout (v0.9+), the legacy one
(``messages`` and ``scheduled_tasks``), and both mixed in one file. An encrypted file arrives here already
decrypted (:mod:`.encrypted`), so it is read the same way.

What each part of the agent becomes in oxmem's views — decided per table, since a file may hold both layouts:

* **Sessions** are the distinct ``session_id`` values of ``events`` and of legacy ``messages``; a session's times
  are the first and last of its rows (both RFC 3339 with nanoseconds and ``datetime('now')`` text are read).
  Its events come from ``events`` when it has any there (sequence = ``events.id``), else from ``messages``
  (sequence = ``rowid``); a session in both tables is shown from ``events`` (the legacy rows are what v0.9
  migrated from) and says how many legacy messages it also has.
* An **event** becomes a message object: ``user_message`` → user, ``assistant_response`` → assistant,
  ``tool_call`` → an assistant tool call, ``tool_result`` → tool, any other type → a system line
  ``[event_type] …``. The text comes from the ``data`` JSON (``text``, ``content``, ``message`` or ``result``,
  else the compact JSON); ``event_type``, ``task_id``, ``tool_name``, ``consolidated_at`` and the parsed ``data``
  stay under extra keys. A row whose ``data`` is not JSON is shown flagged, never fatal.
* **Facts** are the notes (group = category): one note per *active* fact (``superseded_at IS NULL``), content
  ``key: value``, with the superseded versions of the same (category, key) as ``history``, newest first. A key
  whose every version is superseded (forgotten) has no note. The session **episodes** (aidaemon's
  consolidation summaries) are offered as one more notes group, ``episodes``: they are what the agent recalls
  across sessions, and they have no other place in the views.
* Legacy ``scheduled_tasks`` are the **schedules**: aidaemon's cron (croner, standard weekdays, UTC; an optional
  leading seconds field is dropped and said so), one-shots as ``once`` at their ``next_run_at``.
* The **summary** of a session is its ``conversation_summaries`` row, else its latest episode.
* The **ranking** ``aidaemon`` reproduces the three lists of the legacy ``get_context`` (recency, salience,
  relevance) over the session's messages — or over its episodes when it has no legacy messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

import apsw
import numpy as np

from ..embeddings.model_files import MODEL_DIMS, MODEL_NAME
from ..errors import InvalidInputError, NotFoundError
from ..retrieval.hybrid import QueryResult
from ..schedules.store import Schedule
from ..store.browse import SessionRow
from ..store.events import Event
from ..store.notes import Note, page_after
from . import aidaemon_facts, aidaemon_sessions, aidaemon_tasks
from .aidaemon_recall import rank
from .aidaemon_rows import (
    BINARY_EMBEDDING_BYTES,
    Span,
    decode_embedding,
    episode_notes,
    episode_topics,
    event_payload,
    goal_schedule,
    json_or_reason,
    latest_episodes,
    legacy_schedule,
    local_zone,
    message_payload,
    raw_bytes,
    select_list,
    shown_or_none,
    table_columns,
    table_names,
    when_key,
)
from .aidaemon_times import session_spans, session_table, upper_at, upper_from_ids
from .base import Capabilities, ForeignReader, Retriever, ranking
from .detect import LABELS
from .info import EmbeddingInfo, real_dimensions
from .omega_facts import FACT_RULES
from .times import shown_time

T = TypeVar("T")

EPISODES_GROUP = "episodes"
EPISODES_REFUSAL = (
    "aidaemon writes its episodes only from its own consolidation and deletes them only by its retention "
    "policy: they are shown here, not edited; nothing was changed"
)
#: the tables of each layout, for version markers
_OTHER_TABLES = (
    "episodes",
    "conversation_summaries",
    "goals",
    "goal_schedules",
    "procedures",
    "people",
    "person_facts",
    "macros",
    "terminal_allowed_prefixes",
    "token_usage",
)


class AidaemonReader(ForeignReader):
    """The reader of aidaemon's ``aidaemon.db`` — formats ``aidaemon`` (has ``events``) and ``aidaemon-legacy``
    (``messages`` and ``scheduled_tasks``, no ``events``). What exists is decided per table, not per format."""

    FORMAT = "aidaemon"
    LABEL = "aidaemon memory"
    REASON = (
        "aidaemon appends its events and derives episodes and summaries from them itself (an edit from outside "
        "would contradict them); oxmem edits its facts, clears sessions and pauses, resumes or deletes scheduled "
        "tasks, as aidaemon does"
    )
    EDITS = frozenset({"notes", "sessions", "schedules"})

    def __init__(self, db: Any, fmt: str | None = None, **options: Any) -> None:
        super().__init__(db, fmt, **options)
        self.LABEL = LABELS.get(self.format, type(self).LABEL)
        self._episodes: str | None = None
        try:  # what the file holds, for the capabilities (a property, asked off the database thread)
            tables, self._episodes = db.call(lambda conn: (t := table_names(conn), self._episodes_group(conn, t)))
            self._layout = frozenset(tables)
        except Exception:  # noqa: BLE001 - a damaged file still opens; each read reports its own error
            self._layout = frozenset(
                {"messages", "scheduled_tasks", "facts"}
                if self.format == "aidaemon-legacy"
                else {"events", "facts", "episodes"}
            )

    @property
    def capabilities(self) -> Capabilities:
        t = self._layout
        return Capabilities(
            self.format,
            self.LABEL,
            has_sessions=bool({"events", "messages"} & t),
            has_notes=bool({"facts", "episodes"} & t),
            has_schedules=bool({"scheduled_tasks", "goal_schedules"} & t),
            has_search=bool({"messages", "episodes"} & t),
            sessions_label="Sessions",
            notes_label="Facts",
            note_noun="fact",
            group_label="Category",
            refusals=self.refusals(),
            note_tags=False,
            note_rules=FACT_RULES,
            fixed_groups={self._episodes: EPISODES_REFUSAL.removesuffix("; nothing was changed") + "."}
            if self._episodes
            else {},
            schedule_refusals={"new": aidaemon_tasks.NOT_CREATED, "edit": aidaemon_tasks.NOT_EDITED},
        )

    # -- version markers and embeddings ---------------------------------------------------------------

    def _markers(self, conn: apsw.Connection) -> list[str]:
        tables = table_names(conn)
        out = []
        if "events" in tables:
            out.append("events: aidaemon v0.9+ (event-sourced sessions)")
        if "messages" in tables:
            out.append("messages: legacy, before v0.9")
        if "scheduled_tasks" in tables:
            out.append("scheduled_tasks: legacy, before v0.9")
        if "facts" in tables:
            out.append(
                "facts with superseded_at (versioned facts)"
                if "superseded_at" in table_columns(conn, "facts")
                else "facts without superseded_at (one row per key, before versioned facts)"
            )
        out += [f"{t} table" for t in _OTHER_TABLES if t in tables]
        by_encoding: dict[str, list[str]] = {}
        for info in self._embeddings(conn):
            by_encoding.setdefault(info.encoding, []).append(info.table)
        names = {"float32": "float32 blobs of 1536 bytes", "json": "legacy JSON arrays", "unreadable": "unreadable"}
        for encoding, found in by_encoding.items():
            out.append(f"embeddings: {names.get(encoding, encoding)} in {', '.join(found)}")
        return out

    def _embeddings(self, conn: apsw.Connection) -> list[EmbeddingInfo]:
        """Per table (facts, episodes, messages): rows with a 1536-byte float32 blob, rows with a legacy JSON
        array, and rows whose embedding is neither (as aidaemon's ``decode_embedding`` tells them apart)."""
        tables = table_names(conn)
        out = []
        for table in ("facts", "episodes", "messages"):
            if table not in tables or "embedding" not in table_columns(conn, table):
                continue
            binary = json_rows = bad = 0
            binary_dims = json_dims = None
            for (value,) in conn.execute(f"SELECT embedding FROM {table} WHERE embedding IS NOT NULL"):
                raw = raw_bytes(value)
                if len(raw) == BINARY_EMBEDDING_BYTES:
                    binary += 1
                    if binary_dims is None:
                        binary_dims = real_dimensions(raw)
                elif raw[:1] == b"[":
                    json_rows += 1
                    if json_dims is None:
                        vec = decode_embedding(value)
                        json_dims = len(vec) if isinstance(vec, np.ndarray) else 0
                else:
                    bad += 1
            if binary:
                out.append(EmbeddingInfo(table, MODEL_NAME, MODEL_DIMS, binary_dims or 0, binary, "float32"))
            if json_rows:
                out.append(EmbeddingInfo(table, MODEL_NAME, json_dims or 0, json_dims or 0, json_rows, "json"))
            if bad:
                out.append(EmbeddingInfo(table, MODEL_NAME, 0, 0, bad, "unreadable"))
        return out

    # -- sessions -------------------------------------------------------------------------------------

    def _sessions(self, conn: apsw.Connection, contains: str | None) -> list[SessionRow]:
        tables = table_names(conn)
        needle = contains.casefold() if contains else None

        def wanted(sid: Any) -> bool:
            return sid is not None and (needle is None or needle in str(sid).casefold())

        spans: dict[str, Span] = {}
        details: dict[str, dict[str, Any]] = {}
        if "events" in tables:
            # each session's count from the index; counting by event type would read every event (0.7 s at 500k)
            for sid, (count, span) in session_spans(conn, "events").items():
                if wanted(sid):
                    spans[sid] = span
                    details.setdefault(sid, {})["events"] = count
            for sid, data in conn.execute("SELECT session_id, data FROM events WHERE event_type = 'session_start'"):
                parsed, _ = json_or_reason(data)
                if wanted(sid) and isinstance(parsed, dict) and isinstance(parsed.get("channel"), str):
                    details.setdefault(str(sid), {})["channel"] = parsed["channel"]
        if "messages" in tables:
            for sid, (_count, span) in session_spans(conn, "messages").items():
                if wanted(sid):
                    spans.setdefault(sid, Span()).include(span)
            roles: dict[str, list[str]] = {}
            for sid, role, n in conn.execute(
                "SELECT session_id, role, count(*) FROM messages GROUP BY session_id, role ORDER BY session_id, role"
            ):
                if wanted(sid):
                    d = details.setdefault(str(sid), {})
                    key = "legacy messages" if "events" in d else "messages"
                    d[key] = d.get(key, 0) + n
                    roles.setdefault(str(sid), []).append(f"{role} {n}")
            for sid, parts in roles.items():
                if "events" not in details[sid]:
                    details[sid]["roles"] = ", ".join(parts)
        if "episodes" in tables:
            for sid, episode in latest_episodes(conn).items():
                if sid in spans:
                    d = details.setdefault(sid, {})
                    d["summary"] = str(episode.get("summary") or "")
                    topics = episode_topics(episode.get("topics"))
                    if topics:
                        d["topics"] = ", ".join(topics)
        rows = [
            SessionRow(sid, None, span.first_shown(), span.last_shown(), details.get(sid, {}))
            for sid, span in spans.items()
        ]
        rows.sort(key=lambda r: r.session_id)
        rows.sort(key=lambda r: r.updated_at, reverse=True)
        return rows

    def _events(self, conn: apsw.Connection, session_id: str) -> list[Event]:
        return self._events_after(conn, session_id, None, -1)

    def _event_stats(self, conn: apsw.Connection, session_id: str) -> tuple[int, int | None]:
        table, key = session_table(conn, session_id)
        sql = f"SELECT count(*), max({key}) FROM {table} WHERE session_id = ?"
        count, last = conn.execute(sql, (session_id,)).fetchone()
        return int(count), int(last)

    def _events_after(
        self, conn: apsw.Connection, session_id: str, after_sequence: int | None, limit: int
    ) -> list[Event]:
        """A page of the session's events (v0.9's ``events``, else the legacy ``messages``) past
        ``after_sequence``, read with LIMIT; ``limit`` -1: all. A session with neither is not found."""
        tables = table_names(conn)
        after = after_sequence if after_sequence is not None else -(2**63)
        if "events" in tables:
            cols = select_list(
                conn, "events", ["id", "event_type", "data", "created_at", "consolidated_at", "task_id", "tool_name"]
            )
            if conn.execute("SELECT 1 FROM events WHERE session_id = ? LIMIT 1", (session_id,)).fetchone():
                rows = conn.execute(
                    f"SELECT {cols} FROM events WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?",
                    (session_id, after, limit),
                ).fetchall()
                return [Event(int(r[0]), shown_time(r[3]), event_payload(*r)) for r in rows]
        if "messages" in tables:
            cols = select_list(
                conn,
                "messages",
                [
                    "rowid",
                    "id",
                    "role",
                    "content",
                    "tool_call_id",
                    "tool_name",
                    "tool_calls_json",
                    "created_at",
                    "importance",
                    "consolidated_at",
                    "embedding_error",
                ],
            )
            if conn.execute("SELECT 1 FROM messages WHERE session_id = ? LIMIT 1", (session_id,)).fetchone():
                rows = conn.execute(
                    f"SELECT {cols} FROM messages WHERE session_id = ? AND rowid > ? ORDER BY rowid LIMIT ?",
                    (session_id, after, limit),
                ).fetchall()
                return [Event(int(r[0]), shown_time(r[7]), message_payload(*r)) for r in rows]
        raise NotFoundError(f"no session {session_id!r}")

    def _summary(self, conn: apsw.Connection, session_id: str) -> dict[str, Any] | None:
        """The session's ``conversation_summaries`` row, else its latest episode. ``upper_sequence`` is the event
        the summary reaches: the row's last event/message id when it names one, else the last event at or
        before the summary's time (an episode's ``end_time``)."""
        tables = table_names(conn)
        table, key = session_table(conn, session_id)
        if "conversation_summaries" in tables:
            cols = table_columns(conn, "conversation_summaries")
            if "session_id" in cols and "summary" in cols:
                rows = conn.execute("SELECT * FROM conversation_summaries WHERE session_id = ?", (session_id,))
                found = [dict(zip(cols, r, strict=False)) for r in rows.fetchall()]
                if found:
                    row = max(found, key=lambda r: when_key(r.get("updated_at")))
                    meta = {k: v for k, v in row.items() if k not in ("session_id", "summary")}
                    meta["source"] = "conversation_summaries"
                    upper = upper_from_ids(conn, table, key, session_id, row)
                    if upper is None:
                        upper = upper_at(conn, table, key, session_id, row.get("updated_at"))
                    return {"summary": str(row["summary"] or ""), "upper_sequence": upper, "epoch": 0, "metadata": meta}
        if "episodes" in tables:
            episode = latest_episodes(conn, session_id).get(session_id)
            if episode is not None:
                meta = {
                    "source": "episodes",
                    "episode_id": episode.get("id"),
                    "topics": episode_topics(episode.get("topics")),
                    "start_time": shown_or_none(episode.get("start_time")),
                    "end_time": shown_or_none(episode.get("end_time")),
                }
                for name in ("importance", "emotional_tone", "outcome", "message_count"):
                    if name in episode:
                        meta[name] = episode[name]
                upper = upper_at(conn, table, key, session_id, episode.get("end_time") or episode.get("created_at"))
                return {
                    "summary": str(episode.get("summary") or ""),
                    "upper_sequence": upper,
                    "epoch": 0,
                    "metadata": meta,
                }
        return None

    # -- notes: facts by category, and the episodes ---------------------------------------------------

    def _episodes_group(self, conn: apsw.Connection, tables: set[str]) -> str | None:
        if "episodes" not in tables or not conn.execute("SELECT 1 FROM episodes LIMIT 1").fetchall():
            return None
        if "facts" in tables and conn.execute("SELECT 1 FROM facts WHERE category = ?", (EPISODES_GROUP,)).fetchall():
            return f"[{EPISODES_GROUP}]"  # a fact category of that name keeps it
        return EPISODES_GROUP

    def _groups(self, conn: apsw.Connection) -> list[str]:
        tables = table_names(conn)
        groups = []
        if "facts" in tables:
            active = "superseded_at IS NULL" if "superseded_at" in table_columns(conn, "facts") else "1"
            groups = [
                str(r[0])
                for r in conn.execute(f"SELECT DISTINCT category FROM facts WHERE {active} ORDER BY category")
                if r[0] is not None
            ]
        episodes = self._episodes_group(conn, tables)
        return groups + ([episodes] if episodes else [])

    def _notes(self, conn: apsw.Connection, group: str) -> list[Note]:
        if group == self._episodes_group(conn, table_names(conn)):
            return episode_notes(conn, group)
        return aidaemon_facts.list_facts(conn, group)

    def _notes_after(
        self, conn: apsw.Connection, group: str, after: tuple[str, int] | None, limit: int
    ) -> Iterable[Note]:
        if group == self._episodes_group(conn, table_names(conn)):
            return page_after(episode_notes(conn, group), after, limit)
        return aidaemon_facts.facts_page(conn, group, after, limit)

    # -- edits: facts (:mod:`.aidaemon_facts`) and sessions (:mod:`.aidaemon_sessions`) ---------------------

    def _fact_group(self, conn: apsw.Connection, group: str) -> None:
        if group == self._episodes_group(conn, table_names(conn)):
            raise InvalidInputError(EPISODES_REFUSAL)

    def _facts_call(self, fn: Callable[..., T], group: str, *args: Any, **kwargs: Any) -> Callable[[Any], T]:
        def call(conn: Any) -> T:
            self._fact_group(conn, group)
            return fn(conn, group, *args, **kwargs)

        return call

    def _embed_fact(self, text: str) -> bytes | None:
        """A fact's vector as aidaemon stores it: all-MiniLM-L6-v2 (oxmem's copy), 384 little-endian float32; None
        when the model is not installed (aidaemon's startup backfill then embeds it)."""
        vector, _ = self.query_vector(MODEL_NAME, text, {})
        return None if vector is None else np.asarray(vector, dtype="<f4").tobytes()

    async def save_note(self, user: str, content: str, tags: Sequence[str] = ()) -> Note:
        self._writable("notes")
        return await self._write(
            self._facts_call(aidaemon_facts.save_fact, user, content, list(tags), embed=self._embed_fact)
        )

    async def update_note(
        self, user: str, note_id: str, content: str, tags: Sequence[str] = (), *, expected: Note | None = None
    ) -> Note:
        self._writable("notes")
        return await self._write(
            self._facts_call(
                aidaemon_facts.update_fact, user, note_id, content, list(tags), expected, embed=self._embed_fact
            )
        )

    async def delete_note(self, user: str, note_id: str, *, expected: Note | None = None) -> None:
        await self.delete_notes(user, [note_id], expected=None if expected is None else [expected])

    async def delete_notes(self, user: str, note_ids: Sequence[str], *, expected: Sequence[Note] | None = None) -> int:
        self._writable("notes")
        return await self._write(self._facts_call(aidaemon_facts.delete_facts, user, list(note_ids), expected))

    async def set_note_tags(self, *args: Any, **kwargs: Any) -> list[Note]:
        self._writable("notes")
        raise InvalidInputError("aidaemon's facts have no tags; nothing was changed")

    async def restore_notes(
        self, items: Sequence[Note], *, expected: Mapping[str, Note | None] | None = None
    ) -> list[Note]:
        self._writable("notes")
        items = list(items)

        def call(conn: Any) -> list[Note]:
            for group in {n.user for n in items}:
                self._fact_group(conn, group)
            return aidaemon_facts.restore_facts(conn, items, expected, embed=self._embed_fact)

        return await self._write(call)

    async def forget(self, session_id: str) -> None:
        """aidaemon's ``clear_session``: :func:`.aidaemon_sessions.clear_session`."""
        self._writable("sessions")
        await self._write(aidaemon_sessions.clear_session, session_id)

    # -- schedules (legacy) ---------------------------------------------------------------------------

    def _schedule_rows(self, conn: apsw.Connection) -> list[Schedule]:
        tables = table_names(conn)
        out = []
        if "scheduled_tasks" in tables:
            cols = table_columns(conn, "scheduled_tasks")
            out += [
                legacy_schedule(dict(zip(cols, r, strict=False)))
                for r in conn.execute("SELECT * FROM scheduled_tasks ORDER BY rowid")
            ]
        if {"goal_schedules", "goals"} <= tables:
            zone = local_zone()
            cur = conn.execute(
                "SELECT s.*, g.description, g.status AS goal_status, g.session_id FROM goal_schedules s "
                "LEFT JOIN goals g ON g.id = s.goal_id ORDER BY s.rowid"
            )
            rows = cur.fetchall()
            cols = [*table_columns(conn, "goal_schedules"), "description", "goal_status", "session_id"]
            out += [goal_schedule(dict(zip(cols, r, strict=False)), zone) for r in rows]
        return out

    async def update_schedule(
        self, schedule_id: str, patch: Mapping[str, Any], now: datetime, expected: Schedule | None
    ) -> Schedule:
        """Pause or resume a legacy task, as aidaemon's scheduler tool does: :mod:`.aidaemon_tasks`."""
        self._writable("schedules")
        return await self._write(aidaemon_tasks.set_paused, self._schedule_of, schedule_id, patch, now, expected)

    async def delete_schedule(self, schedule_id: str, expected: Schedule | None) -> int:
        """Delete a legacy task, as aidaemon's scheduler tool does: :mod:`.aidaemon_tasks`."""
        self._writable("schedules")
        return await self._write(aidaemon_tasks.delete_task, self._schedule_of, schedule_id, expected)

    # -- the agent's recall ---------------------------------------------------------------------------

    def retrievers(self) -> list[Retriever]:
        return [
            Retriever(
                "aidaemon",
                "aidaemon recall (recency, salience, relevance)",
                "session",
                False,
                "aidaemon's legacy get_context: the 10 newest messages, the 5 newest with importance ≥ 0.8, and the "
                "5 most similar (cosine > 0.65, all-MiniLM-L6-v2), merged without repeats; over the session's "
                "episodes when it has no legacy messages",
            )
        ]

    def _why_unranked(
        self, conn: apsw.Connection, scope: str, query: str, target: str, label: str, every: QueryResult
    ) -> str:
        """Every message (or episode) of the session is among the recall's candidates: one that is not is not there."""
        raise NotFoundError(f"no message or episode {target!r} in session {scope!r}")

    @ranking("aidaemon")
    def _rank_aidaemon(self, conn: apsw.Connection, scope: str, query: str, top_k: int, **options: Any) -> QueryResult:
        """The three lists of aidaemon's legacy ``get_context``: :func:`.aidaemon_recall.rank`."""
        return rank(conn, scope, query, top_k, self.query_vector, options)
