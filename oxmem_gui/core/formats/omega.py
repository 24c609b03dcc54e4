"""Omega memory files (FORMATS.md §B), read-only.

Omega is a Rust personal agent (``~/.omega/data/memory.db``). How its tables are shown through the one reader
interface:

* **Conversations → sessions.** One session per ``conversations`` row (id = the conversation's uuid),
  ``created_at`` = ``started_at``, ``updated_at`` = ``updated_at`` (both shown as RFC 3339 UTC), agent identity
  ``channel:sender_id``; ``details`` holds ``status``, ``channel``, ``sender``, ``project``, ``summary`` and
  ``last_activity`` (those the file has and that are not NULL).
* **Messages → events.** ``sequence`` = ``messages.rowid`` (Omega's insertion order, and the rowid its FTS index
  uses); payload ``{"role", "content"}`` plus ``message_id``, ``timestamp`` (as stored) and ``metadata`` (the
  parsed ``metadata_json``; when it is not valid JSON the text is kept as ``metadata_json`` with
  ``metadata_error``). A row whose role or content cannot be shown is flagged as a ``system`` event, never fatal.
* **A closed conversation's summary → the session summary**, covering every message of the conversation
  (``upper_sequence`` = its last message rowid).
* **Facts → notes**, editable once editing is enabled (:mod:`.omega_facts`), one group per ``sender_id`` (files
  from before migration 003 kept one global set of facts: their group is :data:`SHARED_FACTS`). A note's content
  is ``"key: value"`` so lists and text filters show and find both; ``details`` keep ``key``, ``value`` and
  ``source_message_id``. Newest first: ``updated_at`` descending, then key.
* **Scheduled tasks → schedules.** ``due_at`` and ``repeat`` give the cadence (``NULL``/``once`` → one-shot at
  ``due_at``; ``daily`` → ``M H * * *``; ``weekly`` → ``M H * * <due_at's weekday, Sunday = 0>``; ``monthly`` →
  ``M H <day> * *``; ``weekdays`` → ``M H * * 1-5``; cron in UTC, Omega's times being UTC). Status: ``pending`` →
  active (``next_run_at`` = ``due_at``), ``delivered`` → completed for a one-shot (a repeating task advances its
  ``due_at`` instead and stays active), ``cancelled`` and ``failed`` → disabled. ``description`` is the goal,
  its first words the name; the sender is the user, the channel the channel, ``reply_target`` the channel
  context; ``retry_count`` is ``consecutive_failures``; task type, retries, last error, reply target and
  project are repeated in the schedule's ``note``. Omega keeps no run history: ``delivered_at`` is the last run.
* **Recall** (retriever ``omega-recall``): Omega's ``search_messages`` reproduced exactly — see
  :meth:`OmegaReader._rank_omega_recall`.

Never run on these files: FTS5 ``integrity-check`` (it reports corruption on a healthy file, because
``messages_fts`` indexes only user rows) or ``rebuild`` (it would index assistant rows too). Omega has no
embeddings.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import apsw

from ..embeddings.indexing import dumps
from ..errors import InvalidInputError, NotFoundError
from ..retrieval.hybrid import MAX_TOP_K, Hit, LegStats, QueryResult
from ..retrieval.scope import AllSessions, Scope, shown_scope
from ..retrieval.why_not import CHOICES
from ..schedules.store import Schedule
from ..store.browse import SessionRow
from ..store.events import Event
from ..store.notes import Note
from . import omega_conversations, omega_facts, omega_tasks
from .base import Capabilities, ForeignReader, Retriever, hit, ranking
from .detect import article
from .times import parse_when, rfc3339, shown_time

#: hits Omega's recall asks for (``search_messages(…, limit = 5)``)
RECALL_LIMIT = 5
#: queries shorter than this many UTF-8 bytes are skipped by Omega ("they produce noisy results")
MIN_QUERY_BYTES = 3
#: words of a task's description used as the schedule's name
NAME_WORDS = 6

RECALL_DESCRIPTION = (
    "Omega's cross-conversation recall: the query as one FTS5 phrase over the user messages of the same sender's "
    "other conversations, ordered by FTS5 rank (bm25, lower is better), 5 hits; queries under 3 bytes are skipped"
)

#: the messages Omega's recall admits (its joins and filters), and its rows read by rowid
_RECALL_ADMITTED = (
    "SELECT m.rowid FROM messages m JOIN conversations c ON c.id = m.conversation_id "
    "WHERE m.conversation_id != ? AND c.sender_id = ?"
)
_RECALL_COLUMNS = "m.rowid, m.id, m.conversation_id, m.role, m.content, m.timestamp"
_RECALL_ROWS = f"SELECT {_RECALL_COLUMNS} FROM messages m WHERE m.rowid IN (SELECT value FROM json_each(:rowids))"
_RECALL_SQL = (
    f"SELECT {_RECALL_COLUMNS}, fts.rank "
    "FROM messages_fts fts "
    "JOIN messages m ON m.rowid = fts.rowid "
    "JOIN conversations c ON c.id = m.conversation_id "
    "WHERE messages_fts MATCH ? "
    "AND m.conversation_id != ? "
    "AND c.sender_id = ? "
    "ORDER BY rank "
    "LIMIT ?"
)
#: the same MATCH and order over every conversation (a search of all of them: not a call Omega makes)
_EVERY_ADMITTED = "SELECT m.rowid FROM messages m JOIN conversations c ON c.id = m.conversation_id"
_EVERY_SQL = (
    f"SELECT {_RECALL_COLUMNS}, fts.rank FROM messages_fts fts JOIN messages m ON m.rowid = fts.rowid "
    "JOIN conversations c ON c.id = m.conversation_id WHERE messages_fts MATCH ? ORDER BY rank LIMIT ?"
)


def _columns(conn: apsw.Connection, table: str) -> list[str]:
    quoted = '"' + table.replace('"', '""') + '"'
    return [r[1] for r in conn.execute(f"PRAGMA table_info({quoted})").fetchall()]


def _select(conn: apsw.Connection, table: str, wanted: list[str], tail: str = "", args: tuple = ()) -> list[dict]:
    """Rows of ``table`` as dicts of the ``wanted`` columns (a column the file lacks reads as None), plus ``rowid``."""
    have = set(_columns(conn, table))
    if not have:
        return []
    parts = ", ".join(f'"{c}"' if c in have else f'NULL AS "{c}"' for c in wanted)
    cursor = conn.execute(f'SELECT rowid, {parts} FROM "{table}" {tail}', args)
    return [dict(zip(["rowid", *wanted], row, strict=True)) for row in cursor]


def _has_table(conn: apsw.Connection, name: str) -> bool:
    return bool(conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchall())


def phrase(query: str) -> str:
    """The whole query as one FTS5 phrase, inner ``"`` doubled (what Omega matches)."""
    return '"' + query.replace('"', '""') + '"'


def _short(value: Any, width: int = 80) -> str:
    text = str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


class OmegaReader(ForeignReader):
    FORMAT = "omega"
    LABEL = "Omega memory"
    REASON = (
        "oxmem edits Omega's facts, conversations and pending tasks as Omega does, nothing else: Omega owns its "
        "messages and summaries (its triggers keep messages_fts to user messages only), so such an edit from here "
        "could contradict the running agent"
    )
    EDITS = frozenset({"notes", "sessions", "schedules"})

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            self.format,
            self.LABEL,
            has_sessions=True,
            has_notes=True,
            has_schedules=True,
            has_search=True,
            sessions_label="Conversations",
            session_noun="conversation",
            notes_label="Facts",
            note_noun="fact",
            group_label="Sender",
            refusals=self.refusals(),
            note_tags=False,
            session_lifecycle=True,
            note_rules=omega_facts.FACT_RULES,
            schedule_refusals={
                "new": omega_tasks.NOT_CREATED,
                "delete": omega_tasks.NEVER_DELETED,
                "resume": omega_tasks.NEVER_REACTIVATED,
            },
            pause_label="Cancel task",
        )

    # -- markers ------------------------------------------------------------------------------------

    def _markers(self, conn: apsw.Connection) -> list[str]:
        out = []
        if _has_table(conn, "_migrations"):
            names = [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY name").fetchall()]
            latest = names[-1] if names else "none"
            out.append(f"_migrations: {len(names)} applied, latest {latest}")
        else:
            out.append("no _migrations table")
        conv = set(_columns(conn, "conversations"))
        if {"status", "summary", "last_activity"} <= conv:
            out.append("conversations: lifecycle columns status/summary/last_activity (003 or later)")
        else:
            out.append("conversations: no lifecycle columns (before 003: no status, summary or last activity)")
        out.append(
            "conversations.project present (011 or later)" if "project" in conv else "conversations: no project column"
        )
        facts = set(_columns(conn, "facts"))
        out.append(
            "facts per sender (sender_id)" if "sender_id" in facts else "facts global (no sender_id, before 003)"
        )
        out.append(
            "messages_fts present (004 or later, user messages only)"
            if _has_table(conn, "messages_fts")
            else "no messages_fts (before 004): no recall"
        )
        tasks = _columns(conn, "scheduled_tasks")
        if tasks:
            extra = [c for c in ("task_type", "retry_count", "last_error", "project") if c in tasks]
            out.append("scheduled_tasks columns beyond 005: " + (", ".join(extra) if extra else "none"))
        else:
            out.append("no scheduled_tasks (before 005)")
        present = [t for t in ("outcomes", "lessons", "project_sessions") if _has_table(conn, t)]
        if present:
            out.append("later tables: " + ", ".join(present))
        return out

    # -- sessions -----------------------------------------------------------------------------------

    def _conversations(self, conn: apsw.Connection) -> list[dict]:
        return _select(
            conn,
            "conversations",
            ["id", "channel", "sender_id", "started_at", "updated_at", "summary", "last_activity", "status", "project"],
        )

    def _sessions(self, conn: apsw.Connection, contains: str | None) -> list[SessionRow]:
        needle = contains.casefold() if contains else None
        rows = []
        for c in self._conversations(conn):
            sid = str(c["id"])
            if needle and needle not in sid.casefold():
                continue
            details: dict[str, Any] = {}
            for key, column in (
                ("status", "status"),
                ("channel", "channel"),
                ("sender", "sender_id"),
                ("project", "project"),
                ("summary", "summary"),
            ):
                if c[column] is not None and not (column == "project" and c[column] == ""):  # '' = no project
                    details[key] = c[column]
            if c["last_activity"] is not None:
                details["last_activity"] = shown_time(c["last_activity"])
            identity = f"{c['channel']}:{c['sender_id']}" if c["channel"] or c["sender_id"] else None
            rows.append(SessionRow(sid, identity, shown_time(c["started_at"]), shown_time(c["updated_at"]), details))
        rows.sort(key=lambda r: r.session_id)
        rows.sort(key=lambda r: r.updated_at, reverse=True)
        return rows

    def _conversation(self, conn: apsw.Connection, session_id: str) -> dict:
        rows = _select(
            conn,
            "conversations",
            ["id", "sender_id", "status", "summary", "last_activity"],
            "WHERE id = ?",
            (session_id,),
        )
        if not rows:
            raise NotFoundError(f"no conversation {session_id!r}")
        return rows[0]

    def _events(self, conn: apsw.Connection, session_id: str) -> list[Event]:
        return self._events_after(conn, session_id, None, -1)

    def _events_after(
        self, conn: apsw.Connection, session_id: str, after_sequence: int | None, limit: int
    ) -> list[Event]:
        """The conversation's messages past rowid ``after_sequence`` (its index on ``conversation_id`` holds the
        rowid, so a page reads only its own rows); ``limit`` -1: all."""
        self._conversation(conn, session_id)
        rows = _select(
            conn,
            "messages",
            ["id", "role", "content", "timestamp", "metadata_json"],
            "WHERE conversation_id = ? AND rowid > ? ORDER BY rowid LIMIT ?",
            (session_id, after_sequence or 0, limit),
        )
        return [Event(r["rowid"], shown_time(r["timestamp"]), _payload(r)) for r in rows]

    def _event_stats(self, conn: apsw.Connection, session_id: str) -> tuple[int, int | None]:
        self._conversation(conn, session_id)
        count, last = conn.execute(
            "SELECT count(*), max(rowid) FROM messages WHERE conversation_id = ?", (session_id,)
        ).fetchone()
        return int(count), last

    def _summary(self, conn: apsw.Connection, session_id: str) -> dict[str, Any] | None:
        c = self._conversation(conn, session_id)
        text = c["summary"]
        if not isinstance(text, str) or not text.strip():
            return None
        if c["status"] not in ("closed", None):  # Omega writes the summary when it closes a conversation
            return None
        upper = conn.execute("SELECT max(rowid) FROM messages WHERE conversation_id = ?", (session_id,)).fetchall()
        metadata = {"source": "conversations.summary", "status": c["status"] or "closed"}
        if c["last_activity"] is not None:
            metadata["last_activity"] = shown_time(c["last_activity"])
        return {"summary": text, "upper_sequence": upper[0][0] or 0, "epoch": 0, "metadata": metadata}

    # -- notes --------------------------------------------------------------------------------------

    def _groups(self, conn: apsw.Connection) -> list[str]:
        return omega_facts.fact_groups(conn)

    def _notes(self, conn: apsw.Connection, group: str) -> list[Note]:
        return omega_facts.list_facts(conn, group)

    def _notes_after(
        self, conn: apsw.Connection, group: str, after: tuple[str, int] | None, limit: int
    ) -> Iterable[Note]:
        return omega_facts.facts_page(conn, group, after, limit)

    # -- deleting a conversation (:mod:`.omega_conversations`) ---------------------------------------

    async def forget(self, session_id: str) -> None:
        self._writable("sessions")
        await self._db.run(omega_conversations.delete_conversation, session_id)

    async def session_state(self, session_id: str) -> str | None:
        """The conversation's ``status`` (None: no such conversation, or a file from before migration 003)."""
        return await self._db.read(omega_conversations.conversation_status, session_id)

    async def set_session_open(self, session_id: str, open_: bool) -> str:
        """Close (as Omega's ``/forget``) or reopen a conversation: :mod:`.omega_conversations`."""
        self._writable("sessions")
        return await self._db.run(omega_conversations.set_conversation_open, session_id, open_)

    # -- editing facts (:mod:`.omega_facts`) ----------------------------------------------------------

    async def save_note(self, user: str, content: str, tags: Sequence[str] = ()) -> Note:
        self._writable("notes")
        return await self._db.run(omega_facts.save_fact, user, content, list(tags))

    async def update_note(
        self, user: str, note_id: str, content: str, tags: Sequence[str] = (), *, expected: Note | None = None
    ) -> Note:
        self._writable("notes")
        return await self._db.run(omega_facts.update_fact, user, note_id, content, list(tags), expected)

    async def delete_note(self, user: str, note_id: str, *, expected: Note | None = None) -> None:
        await self.delete_notes(user, [note_id], expected=None if expected is None else [expected])

    async def delete_notes(self, user: str, note_ids: Sequence[str], *, expected: Sequence[Note] | None = None) -> int:
        self._writable("notes")
        return await self._db.run(omega_facts.delete_facts, user, list(note_ids), expected)

    async def set_note_tags(self, *args: Any, **kwargs: Any) -> list[Note]:
        self._writable("notes")
        raise InvalidInputError("Omega's facts have no tags; nothing was changed")

    async def restore_notes(
        self, items: Sequence[Note], *, expected: Mapping[str, Note | None] | None = None
    ) -> list[Note]:
        self._writable("notes")
        return await self._db.run(omega_facts.restore_facts, list(items), expected)

    # -- recall -------------------------------------------------------------------------------------

    def _recall_rows(
        self, conn: apsw.Connection, query: str, expression: str, scope: Scope, sender: Any, limit: int
    ) -> list:
        """Omega's ``_RECALL_SQL`` rows — from cached postings when the phrase is one token (the same rows, ranks
        and order, ties included: :meth:`.TableBm25.best`), else by running it. FTS5 computing bm25 for each of
        the hundreds of thousands of messages that hold a common word is most of that query's time. Over every
        conversation (``scope`` :class:`~..retrieval.scope.AllSessions`), the same without the conversation and
        sender filters."""
        every = isinstance(scope, AllSessions)
        best = self._bm25_best(
            conn,
            "messages_fts",
            [query.rstrip("*")],  # inside the phrase a '*' is no prefix mark: the tokenizer drops it
            limit,
            (_EVERY_ADMITTED, ()) if every else (_RECALL_ADMITTED, (scope, sender)),
            _RECALL_ROWS,
        )
        if best is not None:
            return best
        if every:
            return conn.execute(_EVERY_SQL, (expression, limit)).fetchall()
        return conn.execute(_RECALL_SQL, (expression, scope, sender, limit)).fetchall()

    def retrievers(self) -> list[Retriever]:
        return [Retriever("omega-recall", "Omega recall", "session", False, RECALL_DESCRIPTION, every=True)]

    async def why_not_choices(self, scope: str, limit: int = CHOICES) -> list[tuple[str, str]]:
        """Omega recalls from the sender's other conversations: their messages first (the user's, which its index
        holds, and the others), then this conversation's."""

        def read(conn: apsw.Connection) -> list[tuple[str, str]]:
            sender = self._conversation(conn, scope)["sender_id"]
            rows = conn.execute(
                "SELECT m.rowid, m.conversation_id, m.role, m.content FROM messages m JOIN conversations c "
                "ON c.id = m.conversation_id WHERE c.sender_id = ? ORDER BY m.conversation_id = ?, m.rowid LIMIT ?",
                (sender, scope, limit),
            ).fetchall()
            return [
                (f"#{rowid} {role} in {'this conversation' if conv == scope else conv}: {' '.join(str(text).split())}",
                 str(rowid))
                for rowid, conv, role, text in rows
                if isinstance(text, str) and text.strip()
            ]  # fmt: skip

        return await self._db.read(read)

    def _event_target(self, conn: apsw.Connection, scope: str, sequence: int, every: QueryResult) -> str:
        """A message's events are numbered by its rowid (:meth:`_events`): its id."""
        found = conn.execute("SELECT id FROM messages WHERE rowid = ?", (sequence,)).fetchall()
        if not found:
            raise NotFoundError(f"no message numbered {sequence} in this file")
        return str(found[0][0])

    def _why_unranked(
        self, conn: apsw.Connection, scope: str, query: str, target: str, label: str, every: QueryResult
    ) -> str:
        """Why Omega's recall does not return message ``target``: which of its filters, or its limit, cut it."""
        found = conn.execute(
            "SELECT m.rowid, m.conversation_id, m.role, m.content, c.sender_id FROM messages m "
            "LEFT JOIN conversations c ON c.id = m.conversation_id WHERE m.id = ?",
            (target,),
        ).fetchall()
        if not found:
            raise NotFoundError(f"no message {target!r} in this file")
        rowid, conversation, role, content, sender = found[0]
        mine = self._conversation(conn, scope)["sender_id"]
        if role != "user":
            return f"Omega indexes only user messages (messages_fts holds no other): this is {article(role)} {role} one"
        if conversation == scope:
            return "Omega leaves out the conversation it recalls for: this message is in it"
        if sender != mine:
            return f"it is sender {sender}'s; Omega recalls only the same sender's ({mine}) other conversations"
        if len(query.encode("utf-8")) < MIN_QUERY_BYTES:
            return f"Omega ignores queries under {MIN_QUERY_BYTES} bytes"
        rows = self._recall_rows(conn, query, phrase(query), scope, mine, MAX_TOP_K)
        place = next((i for i, r in enumerate(rows, 1) if r[0] == rowid), None)
        if place is None:
            return f"Omega's phrase {phrase(query)} does not match it: the words are not in its text in that order"
        return f"it matches at #{place} by Omega's rank, but Omega returns only its {RECALL_LIMIT} best"

    @ranking("omega-recall")
    def _rank_omega_recall(
        self, conn: apsw.Connection, scope: Scope, query: str, top_k: int, **options: Any
    ) -> QueryResult:
        """Omega's ``search_messages(query, exclude_conversation_id = scope, sender_id = its sender, 5)``.

        Exactly: a query under 3 UTF-8 bytes gives nothing; else ``messages_fts MATCH "<query>"`` (the whole
        query as one phrase, inner ``"`` doubled), joined to ``messages`` by rowid (only ``role='user'`` rows are
        in that index), kept when the message's conversation belongs to the scope's sender and is not the scope
        conversation itself, ``ORDER BY rank`` (FTS5 bm25: lower is better), ``LIMIT 5``. Omega never
        normalizes the rank; a hit's ``fts_raw`` is that rank and its score ``-rank`` (so a higher score is
        better and the order is Omega's). Omega always asks for 5: ``top_k`` only lowers that
        (``min(5, top_k)`` hits); the pool keeps all of Omega's 5.

        Over every conversation (``scope`` :class:`~..retrieval.scope.AllSessions`: where is this said at all?),
        the same MATCH and order without the sender and conversation filters, ``top_k`` hits — Omega itself never
        searches that way, and the steps say so.
        """
        every = isinstance(scope, AllSessions)
        sender = None if every else self._conversation(conn, scope)["sender_id"]
        limit = top_k if every else RECALL_LIMIT
        shown = min(limit, top_k)
        size = len(query.encode("utf-8"))
        steps = [
            "Omega's recall scoring over every conversation of every sender (Omega itself searches only the same "
            f"sender's other conversations, {RECALL_LIMIT} hits)"
            if every
            else f"Omega recall for conversation {scope} of sender {sender}: Omega's search_messages, run as the "
            "agent runs it"
        ]
        result = QueryResult(
            query,
            shown_scope(scope),
            top_k,
            0.0,
            1.0,
            "phrase",
            [],
            "any",
            None,
            {"fts": LegStats(), "vector": LegStats()},
            [],
            retriever="omega-recall",
            steps=steps,
        )
        if size < MIN_QUERY_BYTES:
            steps.append(f"skipped: Omega ignores queries under {MIN_QUERY_BYTES} bytes (this one is {size})")
            return result
        steps.append(f"the query is {size} bytes (Omega skips queries under {MIN_QUERY_BYTES})")
        if not _has_table(conn, "messages_fts"):
            steps.append("skipped: this file has no messages_fts (before migration 004), so Omega has no recall")
            return result
        expression = phrase(query)
        result.fts_expression = expression
        steps += [
            f'MATCH the whole query as one FTS5 phrase: {expression} on messages_fts (inner " doubled); the index '
            "holds only user messages",
            "keep messages of every conversation"
            if every
            else f"keep messages of sender {sender}'s other conversations (the same sender_id, not {scope} itself)",
            f"order by FTS5 rank (bm25: lower is better), LIMIT {top_k} (top_k)"
            if every
            else f"order by FTS5 rank (bm25: lower is better), LIMIT {RECALL_LIMIT} (Omega's fixed limit)",
            "score = -rank, so a higher score is better and the order is Omega's; Omega does not normalize or "
            "combine scores (no vector leg: Omega has no embeddings)",
        ]
        if not every:
            steps.append(
                f"top_k {top_k}: Omega always returns at most {RECALL_LIMIT}; "
                f"shown min({RECALL_LIMIT}, top_k) = {shown}"
            )
        try:
            rows = self._recall_rows(conn, query, expression, scope, sender, limit)
        except apsw.Error as exc:  # Omega logs "fts search failed" and recalls nothing
            steps.append(f"the FTS query failed ({exc}); Omega recalls nothing then")
            return result
        pool: list[Hit] = []
        for i, (rowid, mid, conversation, role, content, timestamp, raw) in enumerate(rows, 1):
            raw = float(raw)
            pool.append(
                hit(
                    i,
                    str(mid),
                    str(conversation),
                    content if isinstance(content, str) else str(content),
                    -raw,
                    fts=(-raw, raw, i),
                    sequence=rowid,
                    metadata={"conversation_id": conversation, "timestamp": shown_time(timestamp), "role": role},
                    notes=[
                        f"FTS5 rank {raw:.6g} (bm25; lower is better: Omega orders by it ascending and does "
                        "not normalize it)",
                        f"score = -rank = {-raw:.6g}",
                        f"from conversation {conversation}"
                        + ("" if every else f" of sender {sender}")
                        + f", message rowid {rowid}",
                    ],
                )
            )
        raws = [h.fts_raw for h in pool if h.fts_raw is not None]
        result.legs["fts"] = LegStats(len(pool), min(raws) if raws else None, max(raws) if raws else None)
        result.pool = pool
        result.hits = pool[:shown]
        if not pool:
            steps.append("no message matched")
        return result

    # -- schedules ----------------------------------------------------------------------------------

    async def update_schedule(
        self, schedule_id: str, patch: Mapping[str, Any], now: datetime, expected: Schedule | None
    ) -> Schedule:
        """Omega's ``update_task`` / ``cancel_task``: :mod:`.omega_tasks`."""
        self._writable("schedules")
        return await self._db.run(omega_tasks.update_task, self._schedule_of, schedule_id, patch, now, expected)

    def _schedule_rows(self, conn: apsw.Connection) -> list[Schedule]:
        rows = _select(
            conn,
            "scheduled_tasks",
            [
                "id",
                "channel",
                "sender_id",
                "reply_target",
                "description",
                "due_at",
                "repeat",
                "status",
                "created_at",
                "delivered_at",
                "task_type",
                "retry_count",
                "last_error",
                "project",
            ],
            "ORDER BY rowid",
        )
        return [_schedule(r) for r in rows]


def _payload(r: dict) -> dict[str, Any]:
    role, content = r["role"], r["content"]
    extra: dict[str, Any] = {"message_id": r["id"], "timestamp": r["timestamp"]}
    meta = r["metadata_json"]
    if meta is not None:
        try:
            extra["metadata"] = json.loads(meta)
        except (TypeError, ValueError) as exc:
            extra["metadata_json"] = meta if isinstance(meta, str) else repr(meta)
            extra["metadata_error"] = f"not valid JSON: {exc}"
    problem = None
    if role not in ("user", "assistant"):
        problem = f"role {_short(role)!r} is not user or assistant"
    elif not isinstance(content, str):
        problem = f"{role} content is {type(content).__name__}, not text"
    if problem is not None:
        shown = f"⚠ unreadable row: {problem}; content: {_short(content, 400)}"
        return {"role": "system", "content": shown, "omega_role": role, **extra}
    return {"role": role, "content": content, **extra}


def _cadence(due: datetime | None, due_text: Any, repeat: Any) -> tuple[str, list[str]]:
    """The cadence JSON of a task (contract §9 form) and remarks on it."""
    remarks: list[str] = []
    if due is None:
        remarks.append(f"due_at {_short(due_text, 40)!r} is not a time")
        return dumps({"at": due_text, "type": "once"}), remarks
    minute, hour = due.minute, due.hour
    if due.second or due.microsecond:
        remarks.append("cron has whole minutes: the seconds of due_at are left out")
    if repeat in (None, "once"):
        return dumps({"at": rfc3339(due), "type": "once"}), remarks
    fields = {
        "daily": f"{minute} {hour} * * *",
        "weekly": f"{minute} {hour} * * {(due.weekday() + 1) % 7}",
        "monthly": f"{minute} {hour} {due.day} * *",
        "weekdays": f"{minute} {hour} * * 1-5",
    }
    if repeat not in fields:
        remarks.append(f"unknown repeat {_short(repeat, 40)!r}")
        return dumps({"repeat": repeat, "type": "omega-repeat"}), remarks
    if repeat == "monthly" and due.day > 28:
        remarks.append(
            "Omega adds a month with SQLite's date arithmetic, which rolls a day 29–31 over into the next month; "
            "its later due dates may drift from this cron"
        )
    return dumps({"expression": fields[repeat], "timezone": "UTC", "type": "cron"}), remarks


def _schedule(r: dict) -> Schedule:
    due = parse_when(r["due_at"])
    repeat = r["repeat"]
    cadence, remarks = _cadence(due, r["due_at"], repeat)
    raw_status = r["status"]
    one_shot = repeat in (None, "once")
    if raw_status == "pending":
        status = "active"
    elif raw_status == "delivered":
        status = "completed" if one_shot else "active"
    elif raw_status in ("cancelled", "failed"):
        status = "disabled"
    else:
        status = str(raw_status)
    description = r["description"] if isinstance(r["description"], str) else ""
    words = description.split()
    if words:
        name = " ".join(words[:NAME_WORDS]) + (" …" if len(words) > NAME_WORDS else "")
    else:
        name = r["task_type"] or "task"
    created = shown_time(r["created_at"])
    delivered = shown_time(r["delivered_at"]) if r["delivered_at"] is not None else None
    retries = r["retry_count"] if isinstance(r["retry_count"], int) else 0
    parts = [f"Omega {r['task_type'] or 'reminder'} task", f"status {raw_status}", f"repeat {repeat or 'none'}"]
    if raw_status == "delivered" and not one_shot:
        parts.append("a repeating task advances its due_at when delivered, so it stays active")
    if r["reply_target"] is not None:
        parts.append(f"reply target {r['reply_target']}")
    if r["retry_count"] is not None:
        parts.append(f"retries {r['retry_count']}")
    if r["last_error"]:
        parts.append(f"last error: {r['last_error']}")
    if r["project"]:
        parts.append(f"project {r['project']}")
    parts += remarks
    return Schedule(
        schedule_id=str(r["id"]),
        user_id=str(r["sender_id"]),
        name=name,
        goal=description,
        cadence_json=cadence,
        notification_policy="always",
        status=status,
        created_at=created,
        updated_at=delivered or created,
        next_run_at=rfc3339(due) if raw_status == "pending" and due is not None else None,
        last_run_at=delivered,
        last_run_status="success" if delivered else ("failed" if r["last_error"] else None),
        consecutive_failures=retries,
        channel_id=r["channel"],
        channel_context_id=None if r["reply_target"] is None else str(r["reply_target"]),
        note="; ".join(parts),
    )
