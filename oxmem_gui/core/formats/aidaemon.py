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

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import apsw
import numpy as np

from ..embeddings.indexing import dumps
from ..embeddings.model_files import MODEL_DIMS, MODEL_NAME
from ..errors import NotFoundError
from ..retrieval.hybrid import Hit, LegStats, QueryResult
from ..schedules.store import Schedule
from ..store.browse import SessionRow
from ..store.events import Event
from ..store.notes import Note
from ..store.tags import normalize_tags
from .base import EDIT_KINDS, Capabilities, ForeignReader, Retriever, hit
from .detect import LABELS
from .info import EmbeddingInfo, real_dimensions
from .times import parse_when, rfc3339, shown_time

#: the legacy ``get_context`` (aidaemon before v0.9): how many of each list, and the thresholds
RECENCY_COUNT = 10
SALIENCE_COUNT = 5
SALIENCE_MIN_IMPORTANCE = 0.8
RELEVANCE_COUNT = 5
RELEVANCE_MIN_COSINE = 0.65
#: the relevance leg reads the embeddings of this many newest messages of the session
RELEVANCE_CANDIDATES = 2000
#: AllMiniLM-L6-v2 as flat little-endian float32
BINARY_EMBEDDING_BYTES = MODEL_DIMS * 4
EPISODES_GROUP = "episodes"
LISTS = ("recency", "salience", "relevance")

_EARLIEST = datetime.min.replace(tzinfo=timezone.utc)
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
        "oxmem opens aidaemon's files read-only: aidaemon keeps its memory event-sourced and rebuilds facts, "
        "episodes and summaries from its events (an edit from outside would be undone or contradict them), "
        "allows one active fact per key by superseding rows, and holds the file open in WAL mode"
    )

    def __init__(self, db: Any, fmt: str | None = None) -> None:
        super().__init__(db, fmt)
        self.LABEL = LABELS.get(self.format, type(self).LABEL)
        try:  # what the file holds, for the capabilities (a property, asked off the database thread)
            self._layout = frozenset(db.call(_tables))
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
            has_schedules="scheduled_tasks" in t,
            has_search=bool({"messages", "episodes"} & t),
            sessions_label="Sessions",
            notes_label="Facts",
            group_label="Category",
            refusals={k: self.REASON for k in EDIT_KINDS},
        )

    # -- version markers and embeddings ---------------------------------------------------------------

    def _markers(self, conn: apsw.Connection) -> list[str]:
        tables = _tables(conn)
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
                if "superseded_at" in _columns(conn, "facts")
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
        tables = _tables(conn)
        out = []
        for table in ("facts", "episodes", "messages"):
            if table not in tables or "embedding" not in _columns(conn, table):
                continue
            binary = json_rows = bad = 0
            binary_dims = json_dims = None
            for (value,) in conn.execute(f"SELECT embedding FROM {table} WHERE embedding IS NOT NULL"):
                raw = _raw_bytes(value)
                if len(raw) == BINARY_EMBEDDING_BYTES:
                    binary += 1
                    if binary_dims is None:
                        binary_dims = real_dimensions(raw)
                elif raw[:1] == b"[":
                    json_rows += 1
                    if json_dims is None:
                        vec = _decode(value)
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
        tables = _tables(conn)
        needle = contains.casefold() if contains else None

        def wanted(sid: Any) -> bool:
            return sid is not None and (needle is None or needle in str(sid).casefold())

        spans: dict[str, _Span] = {}
        details: dict[str, dict[str, Any]] = {}
        if "events" in tables:
            for sid, created in conn.execute("SELECT session_id, created_at FROM events"):
                if wanted(sid):
                    spans.setdefault(str(sid), _Span()).widen(created)
            counts = conn.execute(
                "SELECT session_id, event_type, count(*) FROM events GROUP BY session_id, event_type "
                "ORDER BY session_id, event_type"
            ).fetchall()
            for sid, kind, n in counts:
                if wanted(sid):
                    d = details.setdefault(str(sid), {})
                    d["events"] = d.get("events", 0) + n
                    d[str(kind)] = n
            for sid, data in conn.execute("SELECT session_id, data FROM events WHERE event_type = 'session_start'"):
                parsed, _ = _loads(data)
                if wanted(sid) and isinstance(parsed, dict) and isinstance(parsed.get("channel"), str):
                    details.setdefault(str(sid), {})["channel"] = parsed["channel"]
        if "messages" in tables:
            for sid, created in conn.execute("SELECT session_id, created_at FROM messages"):
                if wanted(sid):
                    spans.setdefault(str(sid), _Span()).widen(created)
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
            for sid, episode in _latest_episodes(conn).items():
                if sid in spans:
                    d = details.setdefault(sid, {})
                    d["summary"] = str(episode.get("summary") or "")
                    topics = _topics(episode.get("topics"))
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
        tables = _tables(conn)
        if "events" in tables:
            cols = _select_list(
                conn, "events", ["id", "event_type", "data", "created_at", "consolidated_at", "task_id", "tool_name"]
            )
            rows = conn.execute(f"SELECT {cols} FROM events WHERE session_id = ? ORDER BY id", (session_id,)).fetchall()
            if rows:
                return [Event(int(r[0]), shown_time(r[3]), _event_payload(*r)) for r in rows]
        if "messages" in tables:
            cols = _select_list(
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
            rows = conn.execute(
                f"SELECT {cols} FROM messages WHERE session_id = ? ORDER BY rowid", (session_id,)
            ).fetchall()
            if rows:
                return [Event(int(r[0]), shown_time(r[7]), _message_payload(*r)) for r in rows]
        raise NotFoundError(f"no session {session_id!r}")

    def _summary(self, conn: apsw.Connection, session_id: str) -> dict[str, Any] | None:
        """The session's ``conversation_summaries`` row, else its latest episode. ``upper_sequence`` is the event
        the summary reaches: the row's last event/message id when it names one, else the last event at or
        before the summary's time (an episode's ``end_time``)."""
        tables = _tables(conn)
        events = self._events(conn, session_id)
        if "conversation_summaries" in tables:
            cols = _columns(conn, "conversation_summaries")
            if "session_id" in cols and "summary" in cols:
                rows = conn.execute("SELECT * FROM conversation_summaries WHERE session_id = ?", (session_id,))
                found = [dict(zip(cols, r, strict=False)) for r in rows.fetchall()]
                if found:
                    row = max(found, key=lambda r: _when_key(r.get("updated_at")))
                    meta = {k: v for k, v in row.items() if k not in ("session_id", "summary")}
                    meta["source"] = "conversation_summaries"
                    upper = _upper_from_ids(conn, events, row)
                    if upper is None:
                        upper = _upper_at(events, row.get("updated_at"))
                    return {"summary": str(row["summary"] or ""), "upper_sequence": upper, "epoch": 0, "metadata": meta}
        if "episodes" in tables:
            episode = _latest_episodes(conn, session_id).get(session_id)
            if episode is not None:
                meta = {
                    "source": "episodes",
                    "episode_id": episode.get("id"),
                    "topics": _topics(episode.get("topics")),
                    "start_time": _shown_or_none(episode.get("start_time")),
                    "end_time": _shown_or_none(episode.get("end_time")),
                }
                for key in ("importance", "emotional_tone", "outcome", "message_count"):
                    if key in episode:
                        meta[key] = episode[key]
                upper = _upper_at(events, episode.get("end_time") or episode.get("created_at"))
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
        tables = _tables(conn)
        groups = []
        if "facts" in tables:
            active = "superseded_at IS NULL" if "superseded_at" in _columns(conn, "facts") else "1"
            groups = [
                str(r[0])
                for r in conn.execute(f"SELECT DISTINCT category FROM facts WHERE {active} ORDER BY category")
                if r[0] is not None
            ]
        episodes = self._episodes_group(conn, tables)
        return groups + ([episodes] if episodes else [])

    def _notes(self, conn: apsw.Connection, group: str) -> list[Note]:
        tables = _tables(conn)
        if group == self._episodes_group(conn, tables):
            return _episode_notes(conn, group)
        if "facts" not in tables:
            return []
        cols = _columns(conn, "facts")
        rows = [
            dict(zip(cols, r, strict=False)) for r in conn.execute("SELECT * FROM facts WHERE category = ?", (group,))
        ]
        active = [r for r in rows if r.get("superseded_at") is None]
        old: dict[Any, list[dict[str, Any]]] = {}
        for r in rows:
            if r.get("superseded_at") is not None:
                old.setdefault(r.get("key"), []).append(r)
        notes = []
        for r in active:
            versions = sorted(old.get(r.get("key"), []), key=lambda v: (_when_key(v.get("created_at")), _id_key(v)))
            history = [
                {
                    "value": v.get("value"),
                    "created_at": _shown_or_none(v.get("created_at")),
                    "superseded_at": _shown_or_none(v.get("superseded_at")),
                }
                for v in reversed(versions)
            ]
            details = {"id": r.get("id"), "key": r.get("key")}
            for key in ("source", "privacy", "channel_id", "recall_count"):
                if key in cols:
                    details[key] = r.get(key)
            if "last_recalled_at" in cols:
                details["last_recalled_at"] = _shown_or_none(r.get("last_recalled_at"))
            details["history"] = history
            created = _shown_or_none(r.get("created_at"))
            notes.append(
                Note(
                    f"fact:{r.get('id')}",
                    group,
                    f"{r.get('key')}: {r.get('value')}",
                    [],
                    created,
                    _shown_or_none(r.get("updated_at")) or created,
                    _int_or_zero(r.get("id")),
                    details,
                )
            )
        notes.sort(key=lambda n: (_when_key(n.updated_at), n.sequence), reverse=True)
        return notes

    # -- schedules (legacy) ---------------------------------------------------------------------------

    def _schedule_rows(self, conn: apsw.Connection) -> list[Schedule]:
        if "scheduled_tasks" not in _tables(conn):
            return []
        cols = _columns(conn, "scheduled_tasks")
        return [
            _schedule(dict(zip(cols, r, strict=False)))
            for r in conn.execute("SELECT * FROM scheduled_tasks ORDER BY rowid")
        ]

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

    def _rank_aidaemon(self, conn: apsw.Connection, scope: str, query: str, top_k: int, **options: Any) -> QueryResult:
        """The three lists of aidaemon's legacy ``get_context`` (``src/state/sqlite.rs``), exactly:

        1. recency — ``ORDER BY created_at DESC`` (as text, the agent's SQL; ties: the later row first), 10;
        2. salience — ``importance >= 0.8 ORDER BY created_at DESC LIMIT 5`` (the agent orders these by time,
           not by importance); rows already in recency are not added twice;
        3. relevance — the 2000 newest rows with an embedding, less those already taken, cosine with the query
           (float32 blob of 1536 bytes, or a legacy JSON array when the first byte is ``[``) above 0.65, the 5
           highest (a stable sort: equal cosines keep the newest first).

        The merged list keeps that order (the agent then sorts it by time for the prompt) and takes no limit,
        so ``top_k`` is not applied. Over episodes (no legacy messages) the same lists run on
        ``episodes.importance``, ``embedding`` and ``created_at`` — oxmem's choice for v0.9+ files.
        """
        tables = _tables(conn)
        items, source = _recall_items(conn, scope, tables)
        if source is None and not _session_exists(conn, scope, tables):
            raise NotFoundError(f"no session {scope!r}")
        noun = "episodes" if source == "episodes" else "messages"
        newest = sorted(items, key=lambda it: (it.created_text, it.order), reverse=True)
        position = {it.hit_id: i for i, it in enumerate(newest, 1)}

        recency = [it.hit_id for it in newest[:RECENCY_COUNT]]
        important = [it for it in newest if it.importance is not None and it.importance >= SALIENCE_MIN_IMPORTANCE]
        salience = [it.hit_id for it in important[:SALIENCE_COUNT]]
        seen = set(recency) | set(salience)

        with_vectors = [it for it in newest if it.embedding is not None][:RELEVANCE_CANDIDATES]
        skipped: dict[str, str] = {}
        errors: list[tuple[str, str]] = []
        qvec = None
        if with_vectors:
            qvec, why = self.query_vector(MODEL_NAME, query, options)
            if qvec is None:
                skipped[MODEL_NAME] = why or "the query could not be embedded"
        cosines: dict[str, float] = {}
        for it in newest:
            if it.embedding is None:
                if it.hit_id not in seen:
                    errors.append(
                        (it.hit_id, "no embedding (NULL)" + (f": {it.embedding_error}" if it.embedding_error else ""))
                    )
                continue
            vec = _decode(it.embedding)
            if isinstance(vec, str):
                if it.hit_id not in seen:
                    errors.append((it.hit_id, vec))
                continue
            if qvec is None:
                continue
            if len(vec) != len(qvec):
                if it.hit_id not in seen:
                    errors.append((it.hit_id, f"{len(vec)} dimensions; the query has {len(qvec)}"))
                continue
            cos = _cosine(qvec, vec)
            if not math.isfinite(cos):
                if it.hit_id not in seen:
                    errors.append((it.hit_id, "the embedding holds values that are not finite"))
                continue
            cosines[it.hit_id] = cos
        in_window = {it.hit_id for it in with_vectors}
        leg = [(it.hit_id, cosines[it.hit_id]) for it in with_vectors if it.hit_id not in seen and it.hit_id in cosines]
        passing = sorted(((h, c) for h, c in leg if c > RELEVANCE_MIN_COSINE), key=lambda hc: -hc[1])
        relevance = [h for h, _ in passing[:RELEVANCE_COUNT]]

        lists = {"recency": recency, "salience": salience, "relevance": relevance}
        merged: list[str] = []
        for name in LISTS:
            merged += [h for h in lists[name] if h not in merged]
        by_id = {it.hit_id: it for it in items}
        newest_time = parse_when(newest[0].created_text) if newest else None
        context = _Context(lists, position, len(newest), len(important), cosines, in_window, newest_time, noun)

        def make(rank: int, it: _Item) -> Hit:
            cos = cosines.get(it.hit_id)
            in_rel = it.hit_id in relevance
            return hit(
                rank,
                it.hit_id,
                scope,
                it.text,
                1.0,
                vector=(cos, cos, relevance.index(it.hit_id) + 1) if in_rel and cos is not None else (0.0, None, None),
                sequence=it.sequence,
                metadata={**it.metadata, "lists": [n for n in LISTS if it.hit_id in lists[n]], "cosine": cos},
                model=MODEL_NAME if cos is not None else None,
                notes=_hit_notes(it, context),
            )

        hits = [make(i, by_id[h]) for i, h in enumerate(merged, 1)]
        pool = [make(position[it.hit_id], it) for it in newest]
        leg_values = [c for _, c in leg]
        legs = {
            "vector": LegStats(len(leg_values), min(leg_values, default=None), max(leg_values, default=None)),
            "fts": LegStats(),
            "recency": LegStats(len(newest)),
            "salience": LegStats(
                len(important),
                min((it.importance for it in important), default=None),
                max((it.importance for it in important), default=None),
            ),
        }
        steps = []
        if source == "episodes":
            steps.append(
                "This session has no legacy messages (aidaemon v0.9+ keeps events): the three lists of the legacy "
                "recall are run over the session's episodes (importance, embedding, created_at) — oxmem's choice."
            )
        elif source is None:
            steps.append("This session has no legacy messages and no episodes: every list is empty.")
        steps += [
            f"Recency: the session's {RECENCY_COUNT} newest {noun} (created_at descending, compared as text as the "
            "agent's SQL does; ties: the later row first).",
            f"Salience: {noun} with importance ≥ {SALIENCE_MIN_IMPORTANCE}, the {SALIENCE_COUNT} newest (the agent "
            "orders them by created_at, not by importance); those already in recency are not added twice.",
            f"Relevance: the query embedded with {MODEL_NAME}; cosine with each embedding (1536-byte float32, or a "
            f"legacy JSON array) of the {RELEVANCE_CANDIDATES} newest {noun} that have one, less those already "
            f"taken; cosine > {RELEVANCE_MIN_COSINE}, the {RELEVANCE_COUNT} highest.",
            "Merged in the order recency, salience, relevance, each once (the agent then sorts them by time for the "
            "prompt). It takes no limit, so top_k is not applied; every hit scores 1.0 (there is no combined "
            "score: the lists decide).",
        ]
        if skipped:
            steps.append(f"Relevance left out: {skipped[MODEL_NAME]}.")
        return QueryResult(
            query,
            scope,
            top_k,
            0.0,
            0.0,
            "none",
            [],
            "any",
            None,
            legs,
            hits,
            [MODEL_NAME] if cosines else [],
            skipped,
            errors,
            pool,
            "aidaemon",
            steps,
            lists,
        )


# -- tables ---------------------------------------------------------------------------------------------


def _tables(conn: apsw.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _columns(conn: apsw.Connection, table: str) -> list[str]:
    quoted = '"' + table.replace('"', '""') + '"'
    return [r[1] for r in conn.execute(f"PRAGMA table_info({quoted})")]


def _select_list(conn: apsw.Connection, table: str, wanted: list[str]) -> str:
    """The columns ``wanted`` in order, ``NULL`` for those an older version of the table lacks."""
    have = set(_columns(conn, table)) | {"rowid"}
    return ", ".join(c if c in have else f"NULL AS {c}" for c in wanted)


def _session_exists(conn: apsw.Connection, session_id: str, tables: set[str]) -> bool:
    return any(
        t in tables and conn.execute(f"SELECT 1 FROM {t} WHERE session_id = ? LIMIT 1", (session_id,)).fetchall()
        for t in ("events", "messages", "episodes")
    )


# -- values ---------------------------------------------------------------------------------------------


def _loads(value: Any) -> tuple[Any, str | None]:
    """Parsed JSON, or None and why not."""
    if value is None:
        return None, "is empty (NULL)"
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    try:
        return json.loads(text), None
    except (ValueError, RecursionError) as exc:
        return None, f"is not JSON ({exc})"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _text_of(data: Any) -> str:
    """The readable text of an event's data: its ``text``, ``content``, ``message`` or ``result``, else the
    compact JSON."""
    if isinstance(data, str):
        return data
    if isinstance(data, dict):
        for key in ("text", "content", "message", "result"):
            value = data.get(key)
            if isinstance(value, str):
                return value
            if value is not None:
                return _compact(value)
    return _compact(data)


def _said(data: Mapping[str, Any]) -> str:
    """The text of a message's data (``text``, ``content`` or ``message``), or empty."""
    for key in ("text", "content", "message"):
        if isinstance(data.get(key), str):
            return data[key]
    return ""


def _shown_or_none(value: Any) -> str | None:
    return None if value is None else shown_time(value)


def _when_key(value: Any) -> datetime:
    return parse_when(value) or _EARLIEST


def _id_key(row: Mapping[str, Any]) -> int:
    return _int_or_zero(row.get("id"))


def _int_or_zero(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _float_or_none(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _raw_bytes(value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    return str(value).encode("utf-8", "replace")


def _decode(value: Any) -> np.ndarray | str:
    """An embedding as aidaemon's ``decode_embedding`` reads it: 1536 bytes are 384 little-endian float32, a
    value starting with ``[`` is a legacy JSON array; anything else is an error (returned as its reason)."""
    raw = _raw_bytes(value)
    if len(raw) == BINARY_EMBEDDING_BYTES:
        return np.frombuffer(raw, dtype="<f4").astype(np.float64)
    if raw[:1] == b"[":
        parsed, problem = _loads(raw)
        if problem:
            return f"legacy JSON embedding {problem}"
        if not isinstance(parsed, list) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in parsed
        ):
            return "legacy JSON embedding is not an array of numbers"
        return np.asarray(parsed, dtype=np.float32).astype(np.float64)
    first = f"0x{raw[0]:02x}" if raw else "none"
    return f"unknown embedding encoding: {len(raw)} bytes (first byte {first}); neither 1536 bytes nor JSON"


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    """aidaemon's ``cosine_similarity``: 0.0 when either vector has no length."""
    a = np.asarray(a, dtype=np.float64)
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(a, b) / (na * nb))


def _topics(value: Any) -> list[str]:
    """Episode topics: a JSON array, or comma-separated text."""
    if value is None:
        return []
    parsed, problem = _loads(value)
    if problem is None and isinstance(parsed, list):
        items = [str(x).strip() for x in parsed if x is not None]
    else:
        text = parsed if problem is None and isinstance(parsed, str) else str(value)
        items = [part.strip() for part in text.split(",")]
    return [t for t in items if t]


def _tags(topics: Iterable[str]) -> list[str]:
    try:
        return normalize_tags(list(topics))
    except Exception:  # noqa: BLE001 - a topic oxmem's tags refuse is left out, never fatal
        return []


# -- sessions ------------------------------------------------------------------------------------------


@dataclass
class _Span:
    """The first and last time among a session's rows (text that is no time is kept only if nothing parses)."""

    first: datetime | None = None
    last: datetime | None = None
    first_text: str = ""
    last_text: str = ""

    def widen(self, value: Any) -> None:
        when = parse_when(value)
        if when is None:
            text = "" if value is None else str(value)
            self.first_text = min(self.first_text, text) if self.first_text else text
            self.last_text = max(self.last_text, text)
            return
        self.first = when if self.first is None else min(self.first, when)
        self.last = when if self.last is None else max(self.last, when)

    def first_shown(self) -> str:
        return rfc3339(self.first) if self.first else self.first_text

    def last_shown(self) -> str:
        return rfc3339(self.last) if self.last else self.last_text


def _latest_episodes(conn: apsw.Connection, session_id: str | None = None) -> dict[str, dict[str, Any]]:
    """Each session's newest episode (by created_at, then id)."""
    cols = _columns(conn, "episodes")
    if "session_id" not in cols:
        return {}
    sql, args = "SELECT * FROM episodes", ()
    if session_id is not None:
        sql, args = sql + " WHERE session_id = ?", (session_id,)
    latest: dict[str, dict[str, Any]] = {}
    for r in conn.execute(sql, args):
        row = dict(zip(cols, r, strict=False))
        sid = row.get("session_id")
        if sid is None:
            continue
        key = (_when_key(row.get("created_at")), _id_key(row))
        if str(sid) not in latest or key > latest[str(sid)]["__key"]:
            latest[str(sid)] = {**row, "__key": key}
    for row in latest.values():
        del row["__key"]
    return latest


def _upper_at(events: list[Event], when: Any) -> int:
    """The last event at or before ``when`` (0 when none, or when ``when`` is no time)."""
    limit = parse_when(when)
    if limit is None:
        return 0
    upper = 0
    for event in events:
        at = parse_when(event.created_at)
        if at is not None and at <= limit:
            upper = max(upper, event.sequence)
    return upper


def _upper_from_ids(conn: apsw.Connection, events: list[Event], row: Mapping[str, Any]) -> int | None:
    """The sequence a summary row names: ``last_event_id`` (an events id), or ``last_message_id`` (an events
    id, a message id inside an event's data, or a legacy message's id)."""
    sequences = {e.sequence for e in events}
    for key in ("last_event_id", "last_message_id"):
        value = row.get(key)
        if value is None:
            continue
        try:
            number = int(value)
        except (TypeError, ValueError):
            number = None
        if number is not None and number in sequences:
            return number
        for event in events:
            payload = event.payload if isinstance(event.payload, dict) else {}
            data = payload.get("data")
            if payload.get("message_id") == value or (isinstance(data, dict) and data.get("message_id") == value):
                return event.sequence
    return None


# -- events ---------------------------------------------------------------------------------------------


def _tool_calls(value: Any) -> list[dict[str, Any]]:
    """Tool calls as the views take them (``{id, name, arguments}``), from aidaemon's or OpenAI's shape."""
    if not isinstance(value, list):
        return []
    out = []
    for item in value:
        if not isinstance(item, dict):
            continue
        function = item.get("function") if isinstance(item.get("function"), dict) else {}
        out.append(
            {
                "id": item.get("id"),
                "name": item.get("name") or function.get("name"),
                "arguments": item["arguments"] if "arguments" in item else function.get("arguments"),
            }
        )
    return out


def _event_payload(
    event_id: Any,
    event_type: Any,
    data_text: Any,
    created_at: Any,
    consolidated_at: Any,
    task_id: Any,
    tool_name: Any,
) -> dict[str, Any]:
    kind = str(event_type)
    extra: dict[str, Any] = {
        "event_type": event_type,
        "task_id": task_id,
        "tool_name": tool_name,
        "consolidated_at": consolidated_at,
    }
    data, problem = _loads(data_text)
    if problem:
        raw = data_text.decode("utf-8", "replace") if isinstance(data_text, bytes) else data_text
        shown = "" if raw is None else f": {str(raw)[:200]!r}"
        return {
            "role": "system",
            "content": f"⚠ unreadable row: event {event_id} ({kind}) has data that {problem}{shown}",
            **extra,
            "raw_data": raw,
        }
    extra["data"] = data
    fields = data if isinstance(data, dict) else {}
    if kind == "user_message":
        return {"role": "user", "content": _text_of(data), **extra}
    if kind == "assistant_response":
        # a response with only tool calls has no text (its data is not shown as JSON)
        text = _text_of(data) if not isinstance(data, dict) else _said(data)
        payload = {"role": "assistant", "content": text, **extra}
        calls = _tool_calls(fields.get("tool_calls"))
        if calls:
            payload["tool_calls"] = calls
        return payload
    if kind == "tool_call":
        call = {
            "id": fields.get("tool_call_id") or fields.get("id") or f"event-{event_id}",
            "name": tool_name or fields.get("name"),
            "arguments": fields.get("arguments"),
        }
        summary = fields.get("summary") or fields.get("text") or fields.get("content")
        return {
            "role": "assistant",
            "content": summary if isinstance(summary, str) else "",
            "tool_calls": [call],
            **extra,
        }
    if kind == "tool_result":
        payload = {"role": "tool", "content": _text_of(data), **extra}
        if fields.get("tool_call_id") is not None:
            payload["tool_call_id"] = str(fields["tool_call_id"])
        return payload
    return {"role": "system", "content": f"[{kind}] {_text_of(data)}", **extra}


def _message_payload(
    rowid: Any,
    message_id: Any,
    role: Any,
    content: Any,
    tool_call_id: Any,
    tool_name: Any,
    tool_calls_json: Any,
    created_at: Any,
    importance: Any,
    consolidated_at: Any,
    embedding_error: Any,
) -> dict[str, Any]:
    """A legacy ``messages`` row as a message object; its own fields under extra keys."""
    text = "" if content is None else str(content)
    payload: dict[str, Any] = {}
    if role in ("user", "assistant", "system", "tool"):
        payload["role"] = role
    else:
        payload["role"] = "system"
        payload["original_role"] = role
        text = f"[{role}] {text}"
    payload["content"] = text
    if tool_call_id is not None:
        payload["tool_call_id"] = str(tool_call_id)
    if tool_calls_json is not None:
        parsed, problem = _loads(tool_calls_json)
        calls = _tool_calls(parsed) if problem is None else []
        if calls:
            payload["tool_calls"] = calls
        elif problem is not None or parsed not in ([], None):
            shown = str(tool_calls_json)[:200]
            payload["content"] = (text + "\n" if text else "") + f"⚠ unreadable tool_calls_json: {shown!r}"
        payload["tool_calls_json"] = tool_calls_json
    payload.update(
        {
            "message_id": message_id,
            "tool_name": tool_name,
            "importance": importance,
            "consolidated_at": consolidated_at,
        }
    )
    if embedding_error is not None:
        payload["embedding_error"] = embedding_error
    return payload


# -- notes: episodes ---------------------------------------------------------------------------------------


def _episode_notes(conn: apsw.Connection, group: str) -> list[Note]:
    cols = _columns(conn, "episodes")
    notes = []
    for r in conn.execute("SELECT * FROM episodes"):
        row = dict(zip(cols, r, strict=False))
        created = _shown_or_none(row.get("created_at"))
        details: dict[str, Any] = {"id": row.get("id")}
        for key in ("importance", "emotional_tone", "outcome", "session_id", "message_count", "recall_count"):
            if key in cols:
                details[key] = row.get(key)
        details["start"] = _shown_or_none(row.get("start_time"))
        details["end"] = _shown_or_none(row.get("end_time"))
        if "last_recalled_at" in cols:
            details["last_recalled_at"] = _shown_or_none(row.get("last_recalled_at"))
        if "channel_id" in cols:
            details["channel_id"] = row.get("channel_id")
        notes.append(
            Note(
                f"episode:{row.get('id')}",
                group,
                str(row.get("summary") or ""),
                _tags(_topics(row.get("topics"))),
                created,
                created,
                _int_or_zero(row.get("id")),
                details,
            )
        )
    notes.sort(key=lambda n: (_when_key(n.created_at), n.sequence), reverse=True)
    return notes


# -- schedules ------------------------------------------------------------------------------------------


def _schedule(row: Mapping[str, Any]) -> Schedule:
    """A legacy ``scheduled_tasks`` row. aidaemon evaluates cron with croner in UTC (standard weekdays,
    Sunday = 0); one-shots are deleted once they fire, so a one-shot row is always still to come."""
    notes = []
    if row.get("original_schedule"):
        notes.append(f"as written: {row['original_schedule']!r}")
    cron = " ".join(str(row.get("cron_expr") or "").split())
    fields = cron.split()
    if len(fields) == 6:
        notes.append(f"seconds field {fields[0]!r} dropped (oxmem's cron has five fields)")
        cron = " ".join(fields[1:])
    next_run = row.get("next_run_at")
    if row.get("is_oneshot") and parse_when(next_run) is not None:
        cadence = {"type": "once", "at": shown_time(next_run)}
        notes.append(f"one-shot (cron {row.get('cron_expr')!r}); aidaemon deletes it after it fires")
    else:
        cadence = {"type": "cron", "expression": cron, "timezone": "UTC"}
        if row.get("is_oneshot"):
            notes.append("one-shot without a next run time: shown by its cron")
    if row.get("is_trusted"):
        notes.append("trusted (runs in a trusted session)")
    created = shown_time(row.get("created_at"))
    return Schedule(
        str(row.get("id")),
        str(row.get("source") or "aidaemon"),
        row.get("name"),
        str(row.get("prompt") or ""),
        dumps(cadence),
        "always",
        "paused" if row.get("is_paused") else "active",
        created,
        shown_time(row.get("updated_at")) if row.get("updated_at") is not None else created,
        _shown_or_none(next_run),
        _shown_or_none(row.get("last_run_at")),
        None,
        0,
        None,
        None,
        "; ".join(notes) or None,
    )


# -- the recall -----------------------------------------------------------------------------------------


@dataclass
class _Item:
    """One row the recall ranks: a legacy message or an episode."""

    hit_id: str
    text: str
    created_text: str
    order: int
    importance: float | None
    embedding: Any
    embedding_error: Any
    sequence: int | None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Context:
    lists: dict[str, list[str]]
    position: dict[str, int]
    total: int
    important: int
    cosines: dict[str, float]
    window: set[str]
    newest: datetime | None
    noun: str


def _recall_items(conn: apsw.Connection, session_id: str, tables: set[str]) -> tuple[list[_Item], str | None]:
    """The session's legacy messages, else its episodes; and which (None: neither has a row)."""
    if "messages" in tables:
        cols = _select_list(
            conn,
            "messages",
            ["rowid", "id", "role", "content", "tool_calls_json", "created_at", "importance", "embedding",
             "embedding_error", "tool_call_id"],
        )  # fmt: skip
        rows = conn.execute(f"SELECT {cols} FROM messages WHERE session_id = ?", (session_id,)).fetchall()
        if rows:
            items = []
            for rowid, mid, role, content, calls, created, importance, embedding, error, call_id in rows:
                text = content if content is not None else (calls if calls is not None else "")
                items.append(
                    _Item(
                        str(mid) if mid is not None else f"rowid:{rowid}",
                        str(text),
                        "" if created is None else str(created),
                        int(rowid),
                        _float_or_none(importance),
                        embedding,
                        error,
                        int(rowid),
                        {
                            "role": role,
                            "created_at": _shown_or_none(created),
                            "importance": _float_or_none(importance),
                            "tool_call_id": call_id,
                        },
                    )
                )
            return items, "messages"
    if "episodes" in tables:
        cols = _select_list(
            conn,
            "episodes",
            ["id", "summary", "topics", "created_at", "importance", "embedding", "emotional_tone", "outcome"],
        )
        rows = conn.execute(f"SELECT {cols} FROM episodes WHERE session_id = ?", (session_id,)).fetchall()
        if rows:
            items = [
                _Item(
                    f"episode:{eid}",
                    str(summary or ""),
                    "" if created is None else str(created),
                    _int_or_zero(eid),
                    _float_or_none(importance),
                    embedding,
                    None,
                    None,
                    {
                        "episode_id": eid,
                        "topics": _topics(topics),
                        "created_at": _shown_or_none(created),
                        "importance": _float_or_none(importance),
                        "emotional_tone": tone,
                        "outcome": outcome,
                    },
                )
                for eid, summary, topics, created, importance, embedding, tone, outcome in rows
            ]
            return items, "episodes"
    return [], None


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _age(seconds: float) -> str:
    seconds = int(round(seconds))
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            parts.append(f"{seconds // size} {unit}")
            seconds %= size
    if seconds or not parts:
        parts.append(f"{seconds} s")
    return " ".join(parts[:2])


def _hit_notes(it: _Item, ctx: _Context) -> list[str]:
    """Why a row is (or is not) in each list, with its numbers."""
    lists, hid = ctx.lists, it.hit_id
    pos = ctx.position[hid]
    when = parse_when(it.created_text)
    age = ""
    if when is not None and ctx.newest is not None:
        age = "the newest" if when == ctx.newest else f"{_age((ctx.newest - when).total_seconds())} before the newest"
    created = f"created {shown_time(it.created_text)}" + (f", {age}" if age else "")
    noun = ctx.noun[:-1]
    notes = []
    if hid in lists["recency"]:
        notes.append(f"recency: {_ordinal(pos)} newest of {ctx.total} {ctx.noun} ({created})")
    else:
        notes.append(f"recency: {_ordinal(pos)} newest, not among the {RECENCY_COUNT} newest ({created})")
    imp = it.importance
    if imp is None:
        notes.append("salience: no importance")
    elif hid in lists["salience"]:
        k = lists["salience"].index(hid) + 1
        also = " (already in recency)" if hid in lists["recency"] else ""
        notes.append(
            f"salience: importance {imp:.6g} ≥ {SALIENCE_MIN_IMPORTANCE}, the {_ordinal(k)} newest of "
            f"{ctx.important} important {ctx.noun}{also}"
        )
    elif imp >= SALIENCE_MIN_IMPORTANCE:
        notes.append(
            f"salience: importance {imp:.6g} ≥ {SALIENCE_MIN_IMPORTANCE}, but not among the {SALIENCE_COUNT} newest "
            f"important {ctx.noun}"
        )
    else:
        notes.append(f"salience: importance {imp:.6g} < {SALIENCE_MIN_IMPORTANCE}")
    cos = ctx.cosines.get(hid)
    taken = [n for n in ("recency", "salience") if hid in lists[n]]
    if hid in lists["relevance"]:
        r = lists["relevance"].index(hid) + 1
        notes.append(f"relevance: cosine {cos:.6f} > {RELEVANCE_MIN_COSINE}, {_ordinal(r)} by cosine")
    elif cos is not None:
        cmp = ">" if cos > RELEVANCE_MIN_COSINE else "≤"
        if taken:
            notes.append(
                f"relevance: cosine {cos:.6f} {cmp} {RELEVANCE_MIN_COSINE}; already taken by {' and '.join(taken)}, "
                "so the relevance leg skipped it"
            )
        elif hid not in ctx.window:
            notes.append(
                f"relevance: cosine {cos:.6f}, but not among the {RELEVANCE_CANDIDATES} newest {ctx.noun} with an "
                "embedding"
            )
        elif cos > RELEVANCE_MIN_COSINE:
            notes.append(
                f"relevance: cosine {cos:.6f} > {RELEVANCE_MIN_COSINE}, but not among the {RELEVANCE_COUNT} highest"
            )
        else:
            notes.append(f"relevance: cosine {cos:.6f} ≤ {RELEVANCE_MIN_COSINE}")
    elif it.embedding is None:
        notes.append(f"relevance: this {noun} has no embedding")
    else:
        notes.append("relevance: no cosine (the embedding or the query vector could not be used)")
    found = [n for n in LISTS if hid in lists[n]]
    if found:
        notes.append(f"merged: from {found[0]}" + (f" (also in {', '.join(found[1:])})" if len(found) > 1 else ""))
    return notes
