"""Realistic test databases in the formats of other agents (see shared/FORMATS.md), built deterministically.

Every ``make_*`` function takes a target path, removes whatever is there (with its ``-wal``/``-shm``/``-journal``
files), writes the fixture and returns the path. Ids and timestamps are fixed; vectors come from
``numpy.random.default_rng(seed)``, so two builds hold the same rows. ``write_all(folder)`` writes all of them;
``python tests/core/formats/fixtures.py FOLDER`` does the same from the command line.

Facts a test can rely on
========================

Omega (``make_omega``; FORMATS.md §B) — WAL, written with foreign keys on
-------------------------------------------------------------------------
* The schema is the agent's own migration scripts, verbatim (``upstream/omega/``, commit ce9f4b2), applied and
  recorded in ``_migrations`` as its ``run_migrations`` does. ``variant="current"``: all 13
  (:data:`OMEGA_MIGRATION_NAMES`, ``001_init`` … ``013_multi_lessons``); ``variant="old"``: the first 6 (up to
  ``006_limitations``), so no ``user_aliases``/``outcomes``/``lessons``/``project_sessions`` tables, no
  ``project`` column on ``conversations`` or ``scheduled_tasks``, and no ``task_type``/``retry_count``/
  ``last_error`` on ``scheduled_tasks``. The rows below are the same in both variants (less the missing columns
  and tables); every id is uuid text and "no project" is ``''``, as the agent writes them.
* Senders: ``'4242'`` on channel ``'telegram'`` (Marta) and ``'77'`` on channel ``'discord'`` (Jonas).
* 5 conversations (:data:`OMEGA_CONVERSATIONS`, name -> id):
  ``dentist`` (telegram/4242, closed, summary), ``lisbon`` (telegram/4242, closed, summary, project ``travel``),
  ``current`` (telegram/4242, **active**, no summary), ``jonas-dentist`` (discord/77, closed, summary),
  ``jonas-current`` (discord/77, **active**).
* 22 messages (11 user, 11 assistant), ids ``OMEGA_MESSAGES[n]`` for n = 1…22 in conversation order;
  ``messages.rowid`` = n. ``messages_fts`` indexes exactly the 11 user rows (rowids 1, 3, 5, … 21).
* Phrase recall from conversation ``current`` of sender 4242 (same sender, other conversations):
  ``"dentist appointment"`` -> only message 1 (conversation ``dentist``); it is also in user message 15 of sender
  77 (must be excluded), in user message 13 of ``current`` itself (excluded: same conversation) and in assistant
  message 8 of ``lisbon`` (not indexed). ``"book a flight to Lisbon"`` -> only message 5 (conversation
  ``lisbon``); also in message 11 (``current``) and message 19 (sender 77, ``jonas-current``).
  ``Sintra`` is only in assistant message 8, so ``messages_fts MATCH 'Sintra'`` finds nothing.
* 12 facts, 6 per sender; ``facts`` of 4242 include ``dentist = 'Dr. Moreau, Rue Oberkampf'`` (source message 3).
* 8 scheduled_tasks (:data:`OMEGA_TASKS`, name -> id): every ``repeat`` (NULL ×2, once ×2, daily, weekly, monthly,
  weekdays); statuses delivered ×2, cancelled ×1, pending ×5; ``due_at`` in three spellings
  (``2026-03-12T07:30:00Z``, ``2026-03-02T07:00:00`` and ``2026-03-01 18:00:00``). Task ``standup`` (current)
  has ``retry_count`` 2 and a ``last_error``.
* Also 4 ``audit_log`` rows, 1 ``limitations`` row; current only: 1 ``user_aliases`` row (``'15550100'`` ->
  ``'4242'``), 2 ``outcomes``, 2 ``lessons`` (same sender and domain, allowed since ``013_multi_lessons``),
  1 ``project_sessions``.

ZEKE (``make_zeke``; FORMATS.md §C) — rollback journal (``journal_mode=delete``), no foreign keys
-------------------------------------------------------------------------------------------------
* 26 memories (:data:`ZEKE_IDS`, name -> uuid4 id) in scopes ``persona:zeke`` (6), ``task:inbox`` (5),
  ``ops:deploy`` (5), ``calendar:work`` (5), ``notes`` (5).
* At :data:`ZEKE_NOW` (2026-03-01 12:00:00, naive UTC) exactly these 6 are expired (:data:`ZEKE_EXPIRED`):
  ``t-invoice-old``, ``t-newsletter`` (TTL 1 h), ``o-rollback``, ``o-certs`` (TTL 10 min), ``c-standup``,
  ``c-moved`` (TTL 1 day). Live with a TTL: ``t-invoice``, ``t-lunch`` (1 day), ``t-passport``, ``o-hotfix``,
  ``o-freeze``, ``o-canary`` (2 h), ``c-review``, ``c-offsite``, ``c-dentist`` (3 days, expires 18:00 that day).
  ``persona:`` and ``notes`` rows have ``ttl_seconds`` NULL; every other TTL is 90 days (7776000) unless named.
* 3 embeddings are NULL (``p-allergy``, ``t-passport``, ``n-bike``); the rest are unit float32 vectors of 1536
  (``variant="1536"``, 6144 bytes) or 384 (``variant="384"``, 1536 bytes) values.
* ``last_accessed_at`` is NULL for ``p-coffee``, ``t-newsletter``, ``o-certs``, ``c-moved``, ``n-bike``.
* Timestamps are naive ISO with microseconds, except ``t-newsletter`` created ``2026-03-01T09:00:00`` (Python's
  ``isoformat()`` drops a zero microsecond). ``tags`` is a JSON list or NULL.
* ``extra_per_scope={scope: n}`` adds n filler memories per scope (ids ``zeke_filler_id(scope, i)``, text
  ``"filler memory {i} for {scope}"``): created one minute apart from 2026-02-01T00:00, never expired at
  ZEKE_NOW, ``last_accessed_at`` in the reverse order (filler n-1 was used least recently), the scope's default
  TTL. A scope other than the five above works too.

aidaemon (``make_aidaemon``; FORMATS.md §D) — WAL, foreign keys, file mode 0600
-------------------------------------------------------------------------------
* ``variant="current"``: ``events`` (24 rows), ``facts`` (7 rows), ``episodes`` (2 rows) and the empty tables
  ``macros``, ``terminal_allowed_prefixes``, ``conversation_summaries``, ``goals``, ``goal_schedules``,
  ``procedures``, ``people``, ``person_facts``. No ``messages`` or ``scheduled_tasks``.
* Events: every type of :data:`AIDAEMON_EVENT_TYPES` occurs. ``data`` shapes (JSON objects):
  ``user_message`` ``{"text"}``; ``assistant_response`` ``{"text", "model", "input_tokens", "output_tokens"}``;
  ``tool_call`` ``{"id", "name", "arguments": {...}}`` (``tool_name`` column = name);
  ``tool_result`` ``{"tool_call_id", "name", "result", "is_error", "duration_ms"}``;
  ``task_start`` ``{"task_id", "description"}``; ``task_end`` ``{"task_id", "status", "duration_secs"}``;
  ``sub_agent_spawn`` / ``sub_agent_complete`` ``{"child_session_id", "mission"}`` / ``{"child_session_id",
  "result"}``; ``approval_requested`` ``{"command", "risk_level", "reason"}``; ``approval_granted``
  ``{"command", "approved_by"}``; ``approval_denied`` ``{"command", "denied_by", "reason"}``;
  ``error`` ``{"message", "kind"}``.
* Sessions: ``telegram:123456789`` (events 1–14, RFC 3339 with nanoseconds ``…+00:00``, consolidated),
  ``sub-task-7f3a-1`` (events 15–18, RFC 3339), ``slack:C05ABCD1234`` (events 19–24, ``YYYY-MM-DD HH:MM:SS``,
  not consolidated). Events 2–18 carry ``task_id`` ``task-7f3a``.
* Facts: ``('user', 'timezone')`` has 3 rows, ids 1 and 2 superseded (Europe/London, America/New_York), id 3
  active (Europe/Berlin); 5 active rows in all. A partial unique index (``idx_facts_active_unique``) allows one
  active row per (category, key). Fact 7 is ``privacy='private'`` with a ``channel_id``.
* ``variant="legacy"`` (before v0.9): ``messages`` (12 rows), ``scheduled_tasks`` (4 rows) and an older ``facts``
  (5 rows, ``UNIQUE(category, key)``, no ``superseded_at``); no ``events``. Message importance >= 0.8 for
  :data:`AIDAEMON_SALIENT` (2 rows). Embeddings: 9 rows of 1536 bytes (384 LE float32); ``msg-07`` holds a JSON
  array as TEXT, ``msg-08`` a JSON array as a BLOB (both start with ``[``); ``msg-10`` has a NULL embedding and
  an ``embedding_error``. Scheduled tasks: one one-shot (``remind-passport``), one paused (``weekly-report``).
* ``make_encrypted_aidaemon``: the current content, SQLCipher 4, ``PRAGMA key = '<AIDAEMON_KEY>'``.

Oxydra (``make_oxydra``; native schema made by the project's core) — WAL
------------------------------------------------------------------------
* Sessions :data:`OXYDRA_SESSIONS` (8, 5 and 4 events) plus the notes sessions ``memory:alice`` (3 notes) and
  ``memory:carol`` (1 note); 21 chunks, all ``deterministic-hash-v1`` (64 values). Notes have fixed ids
  (``note-00000000-0000-4000-8000-00000000000N``, N = 1…4 in :data:`OXYDRA_NOTES` order) and dates (one day
  apart from 2026-02-18T20:00Z).
* ``memory_migrations``: ``0001_initial`` (and any later migration of the project) plus the 22 versions of
  :data:`OXYDRA_UNKNOWN_MIGRATIONS` (``0002_…`` … ``0023_…``) that the project does not know.
* ``gateway_sessions`` (3 rows) and ``channel_session_mappings`` (3 rows).
* 4 schedules of user alice, created at :data:`OXYDRA_NOW` (2026-03-01T12:00Z) unless said otherwise; ids
  ``00000000-0000-4000-8000-00000000000N`` with N = 1, 2, 3, 6 (runs are N = 4, 5):
  1 ``Monday plan`` cron ``0 8 * * 1`` Europe/Berlin (Monday in standard cron, Sunday for the agent; the file's
  ``next_run_at`` is the project's standard-cron answer 2026-03-02T07:00Z, the agent's would be 2026-03-08T07:00Z),
  channel ``telegram``/``123456789``; 2 ``Friday wrap-up`` cron ``0 17 * * FRI`` Europe/Berlin (next
  2026-03-06T16:00Z); 3 ``Inbox watch`` interval 3600 s, created 09:00Z, runs at 10:00Z (success) and 11:00Z
  (failed, ``consecutive_failures`` 1), next 12:00:25Z; 6 ``Passport reminder`` once at 2026-03-10T09:00Z.
* Table timestamps (``created_at``…) are fixed; chunk/event times are the session's start plus ``sequence``
  minutes.

Oxydra made by its own migrations (``make_oxydra_agent``, ``make_oxydra_libsql``) — WAL
----------------------------------------------------------------------------------------
* The same rows as ``make_oxydra``, in a schema made by the agent's own migration scripts, copied verbatim into
  ``upstream/oxydra/`` (commits in its README), recorded in ``memory_migrations`` as the agent records them
  (:data:`OXYDRA_AGENT_MIGRATIONS`: ``0001_create_sessions_table`` …) — no version of this project's.
* ``make_oxydra_agent``: the agent before its libSQL index (0001–0023, ``embedding_blob BLOB``), written with plain
  SQLite; vectors are the project's 64 deterministic values.
* ``make_oxydra_libsql``: 0001–0024, written by the ``libsql`` engine; ``chunks_vec.embedding_blob`` is declared
  ``FLOAT32(512)`` and every blob is 2048 bytes. The 4 chunks of session ``discord:carol:sourdough`` have
  ``minishlab/potion-base-8M`` vectors (256 random unit values + zeros); the other 17 ``deterministic-hash-v1``
  (the project's 64 values for ``chunk_text`` + zeros). ``chunks`` keep their rowids, so ``chunks_fts`` matches.
* Index ``idx_chunks_vec_embedding_ann`` on ``libsql_vector_idx(embedding_blob)``, shadow tables
  ``libsql_vector_meta_shadow`` and ``idx_chunks_vec_embedding_ann_shadow``; migration
  ``0024_create_chunks_vec_vector_index``.
* With plain SQLite (APSW): every table reads, ``chunks_fts MATCH`` included. With ``foreign_keys = ON`` every
  write touching ``chunks_vec`` (insert, update, ``DELETE`` with or without WHERE, a delete cascading from
  ``chunks`` or ``sessions``) and ``PRAGMA integrity_check`` fail with ``unknown function: libsql_vector_idx()``.
  With foreign keys **off**, a bare ``DELETE FROM chunks_vec`` succeeds (SQLite's truncate shortcut never
  evaluates the index expression) and leaves ``idx_chunks_vec_embedding_ann_shadow`` stale.
* Trap: plain SQLite answers ``SELECT count(*) FROM chunks_vec`` (and ``SELECT 1 FROM chunks_vec``, ``EXISTS``)
  from the ANN index's own b-tree, which libSQL leaves empty: **0 rows**. ``count(chunk_id)``, ``NOT INDEXED``,
  ``SELECT *`` and joins by ``chunk_id`` see all 21. The libsql engine itself counts 21.

Others
------
* ``make_unknown_sqlite``: a recipes app — ``recipes`` (250 rows, ``photo`` BLOB on every 10th row, ``notes`` NULL
  on most), ``ingredients`` (12 rows), ``recipe_ingredients`` (WITHOUT ROWID, 750 rows), view ``quick_recipes``.
* ``make_not_sqlite``: a text file. ``make_empty``: zero bytes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import re
import sqlite3
import sys
import tempfile
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from unittest import mock

import apsw
import numpy as np

# -- helpers --------------------------------------------------------------------------------------------------


def _fresh(path: str | os.PathLike[str]) -> Path:
    """The target path, its folder created and any old file (with its journal files) removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return path


def _columns(conn: Any, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})").fetchall()]


def _insert(conn: Any, table: str, rows: list[dict[str, Any]]) -> None:
    """Insert dicts through any DB-API connection, keeping only the keys that are columns of ``table`` (so one
    list of rows serves the old and the new variant of a schema); rows for a missing table are skipped."""
    columns = _columns(conn, table)
    if not columns:
        return
    for row in rows:
        keys = [k for k in row if k in columns]
        marks = ", ".join("?" * len(keys))
        conn.execute(f"INSERT INTO {table} ({', '.join(keys)}) VALUES ({marks})", [row[k] for k in keys])


def _unit_vectors(seed: int, count: int, dims: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((count, dims)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _f32(vector: np.ndarray) -> bytes:
    """Raw little-endian float32."""
    return np.asarray(vector, dtype="<f4").tobytes()


def _uuid(namespace: int, n: int) -> str:
    """A fixed, valid uuid4-shaped id."""
    return str(uuid.UUID(int=(namespace << 64) | n, version=4))


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


# == Omega =====================================================================================================

#: the agent's own migration scripts, verbatim (``upstream/omega/README.md`` gives the commit)
OMEGA_UPSTREAM = Path(__file__).resolve().parent / "upstream" / "omega"
#: (name, SQL) in order; "old" files stop after the sixth.
OMEGA_MIGRATIONS: list[tuple[str, str]] = [
    (f.stem, f.read_text(encoding="utf-8")) for f in sorted(OMEGA_UPSTREAM.glob("[0-9][0-9][0-9]_*.sql"))
]
OMEGA_MIGRATION_NAMES = [name for name, _ in OMEGA_MIGRATIONS]
OMEGA_OLD_MIGRATIONS = 6

OMEGA_CONVERSATIONS = {
    "dentist": "0b7e2a10-5c1d-4c1a-8d01-000000000001",
    "lisbon": "0b7e2a10-5c1d-4c1a-8d01-000000000002",
    "current": "0b7e2a10-5c1d-4c1a-8d01-000000000003",
    "jonas-dentist": "0b7e2a10-5c1d-4c1a-8d01-000000000004",
    "jonas-current": "0b7e2a10-5c1d-4c1a-8d01-000000000005",
}
#: message number (1…22) -> id
OMEGA_MESSAGES = {n: f"9d41f3c2-77a0-4b5e-a1c3-{n:012d}" for n in range(1, 23)}

#: (sender, key, value, source message n, time) of every fact
OMEGA_FACT_DATA = [
    ("4242", "name", "Marta", 1, "2026-02-02 08:10:00"),
    ("4242", "timezone", "Europe/Paris", 1, "2026-02-02 08:10:00"),
    ("4242", "dentist", "Dr. Moreau, Rue Oberkampf", 3, "2026-02-02 08:12:45"),
    ("4242", "home_airport", "ORY", 5, "2026-02-05 19:02:11"),
    ("4242", "preferred_seat", "window", 7, "2026-02-05 19:04:12"),
    ("4242", "language", "English, some French", None, "2026-01-20 12:00:00"),
    ("77", "name", "Jonas", 15, "2026-02-03 21:14:09"),
    ("77", "timezone", "Europe/Berlin", None, "2026-01-28 17:30:00"),
    ("77", "car", "VW Golf, 2017, inspection due before April", 17, "2026-02-03 21:15:11"),
    ("77", "sister", "Lena, lives in Paris", 19, "2026-02-27 18:40:00"),
    ("77", "reminder_time", "09:00", 15, "2026-02-03 21:14:09"),
    ("77", "city", "Berlin", None, "2026-01-28 17:30:00"),
]
#: (sender, key) → the fact's id
OMEGA_FACTS = {(sender, key): _uuid(0x0FAC, i) for i, (sender, key, *_rest) in enumerate(OMEGA_FACT_DATA, 1)}

_ASSISTANT_META = _json({"provider": "claude-code", "model": "claude-sonnet-4", "elapsed_ms": 2310})

# (conversation, channel, sender, started_at, summary, project, [(role, text, seconds after start)])
_OMEGA_CONVERSATION_DATA = [
    (
        "dentist",
        "telegram",
        "4242",
        "2026-02-02 08:10:00",
        "Marta booked a dentist appointment with Dr. Moreau on Thursday 12 Feb at 15:30; reminder the day before.",
        None,
        [
            ("user", "Can you find me a dentist appointment next week? My molar has been aching since Sunday.", 0),
            (
                "assistant",
                "Dr. Moreau on Rue Oberkampf has openings on Tuesday 10 Feb at 09:00 and Thursday 12 Feb at 15:30. "
                "Which one works?",
                7,
            ),
            ("user", "Thursday at 15:30 please. Remind me the day before.", 165),
            (
                "assistant",
                "Done — you're booked with Dr. Moreau on Thursday 12 Feb at 15:30, and I'll remind you on "
                "Wednesday evening.",
                171,
            ),
        ],
    ),
    (
        "lisbon",
        "telegram",
        "4242",
        "2026-02-05 19:02:11",
        "Marta asked to book a flight to Lisbon for 13–16 March: easyJet U2 7361, seat 23A. The dentist "
        "follow-up moved to 18 March.",
        "travel",
        [
            ("user", "I need to book a flight to Lisbon for the long weekend of 13 March, returning Monday.", 0),
            (
                "assistant",
                "TAP flies direct on Friday 13 March at 07:05 for €189; easyJet leaves Orly at 11:30 for €142. Both "
                "return Monday evening.",
                9,
            ),
            ("user", "The easyJet one, window seat please.", 121),
            (
                "assistant",
                "Booked easyJet U2 7361, seat 23A. Your dentist appointment follow-up with Dr. Moreau is on 16 March, "
                "the day you fly back — shall I move it? Also, a day trip to Sintra is easy by train from Rossio.",
                130,
            ),
            ("user", "Yes, move the follow-up to the 18th.", 305),
            ("assistant", "Moved to Wednesday 18 March at 10:00.", 311),
        ],
    ),
    (
        "current",
        "telegram",
        "4242",
        "2026-02-28 10:00:00",
        None,
        None,
        [
            ("user", "Did I book a flight to Lisbon already, or only look at prices?", 0),
            ("assistant", "You booked easyJet U2 7361 on Friday 13 March, seat 23A.", 6),
            ("user", "Great. And when is my next dentist appointment?", 184),
            ("assistant", "Wednesday 18 March at 10:00 with Dr. Moreau.", 190),
        ],
    ),
    (
        "jonas-dentist",
        "discord",
        "77",
        "2026-02-03 21:14:09",
        "Jonas asked for a reminder about his dentist appointment on Friday at 9 and noted the car inspection.",
        None,
        [
            ("user", "remind me about my dentist appointment on friday at 9", 0),
            ("assistant", "Sure — I'll remind you on Friday 6 Feb at 09:00.", 4),
            ("user", "also the car needs its inspection before april", 62),
            ("assistant", "Noted: car inspection due before 1 April. Want a reminder in mid-March?", 67),
        ],
    ),
    (
        "jonas-current",
        "discord",
        "77",
        "2026-02-27 18:40:00",
        None,
        None,
        [
            ("user", "Can you book a flight to Lisbon for my sister in May?", 0),
            ("assistant", "Sure — which dates, and from which airport?", 5),
            ("user", "From Paris, 8 to 12 May.", 240),
            ("assistant", "Found Transavia TO 3408 at €96 on 8 May. Book it?", 250),
        ],
    ),
]


def _stamp(start: str, seconds: int) -> str:
    moment = datetime.strptime(start, "%Y-%m-%d %H:%M:%S") + timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _omega_rows() -> dict[str, list[dict[str, Any]]]:
    """The rows of every table, as the agent writes them: an id (uuid4 text) on every row, ``project`` ``''`` for
    none (its migrations declare ``project TEXT NOT NULL DEFAULT ''``)."""
    rows = _omega_row_values()
    for n, (table, namespace) in enumerate((("audit_log", 0x0A0D), ("outcomes", 0x0C0E), ("lessons", 0x1E55))):
        for i, row in enumerate(rows[table], 1):
            row.setdefault("id", _uuid(namespace + n, i))
    for table_rows in rows.values():
        for row in table_rows:
            if "project" in row and row["project"] is None:
                row["project"] = ""
    return rows


def _omega_row_values() -> dict[str, list[dict[str, Any]]]:
    conversations, messages = [], []
    n = 0
    for name, channel, sender, started, summary, project, turns in _OMEGA_CONVERSATION_DATA:
        last = _stamp(started, turns[-1][2])
        conversations.append(
            {
                "id": OMEGA_CONVERSATIONS[name],
                "channel": channel,
                "sender_id": sender,
                "started_at": started,
                "updated_at": last,
                "summary": summary,
                "last_activity": last,
                "status": "closed" if summary else "active",
                "project": project,
            }
        )
        for role, text, seconds in turns:
            n += 1
            messages.append(
                {
                    "id": OMEGA_MESSAGES[n],
                    "conversation_id": OMEGA_CONVERSATIONS[name],
                    "role": role,
                    "content": text,
                    "timestamp": _stamp(started, seconds),
                    "metadata_json": _ASSISTANT_META if role == "assistant" else None,
                }
            )
    facts = [
        {
            "id": OMEGA_FACTS[(sender, key)],
            "sender_id": sender,
            "key": key,
            "value": value,
            "source_message_id": OMEGA_MESSAGES[msg] if msg else None,
            "created_at": stamp,
            "updated_at": stamp,
        }
        for sender, key, value, msg, stamp in OMEGA_FACT_DATA
    ]
    # (name, sender, description, due_at, repeat, status, delivered_at, task_type, retry_count, last_error, project)
    task_data = [
        ("dentist-reminder", "4242", "Remind Marta: dentist appointment with Dr. Moreau tomorrow at 15:30",
         "2026-02-11 19:00:00", None, "delivered", "2026-02-11 19:00:04", "reminder", 0, None, None),
        ("check-in", "4242", "Check in for easyJet U2 7361 to Lisbon", "2026-03-12T07:30:00Z", "once", "pending",
         None, "action", 0, None, "travel"),
        ("briefing", "4242", "Morning briefing: calendar and weather for Paris", "2026-03-02T07:00:00", "daily",
         "pending", None, "action", 0, None, None),
        ("plants", "4242", "Water the balcony plants", "2026-03-01 18:00:00", "weekly", "pending", None,
         "reminder", 0, None, None),
        ("rent", "4242", "Pay the rent", "2026-03-01T08:00:00Z", "monthly", "cancelled", None, "reminder", 0, None,
         None),
        ("standup", "4242", "Post stand-up notes in the team chat", "2026-03-02 08:45:00", "weekdays", "pending",
         None, "action", 2, "telegram: 502 Bad Gateway", "work"),
        ("jonas-dentist", "77", "Remind Jonas about his dentist appointment", "2026-02-06 09:00:00", None,
         "delivered", "2026-02-06 09:00:02", "reminder", 0, None, None),
        ("car-inspection", "77", "Book the car inspection for the Golf", "2026-03-15T09:00:00Z", "once", "pending",
         None, "reminder", 0, None, None),
    ]  # fmt: skip
    tasks = [
        {
            "id": OMEGA_TASKS[name],
            "channel": "telegram" if sender == "4242" else "discord",
            "sender_id": sender,
            "reply_target": "4242" if sender == "4242" else "1123581321345589",
            "description": description,
            "due_at": due,
            "repeat": repeat,
            "status": status,
            "created_at": "2026-02-01 12:00:00" if sender == "4242" else "2026-02-03 21:14:14",
            "delivered_at": delivered,
            "task_type": task_type,
            "retry_count": retries,
            "last_error": error,
            "project": project,
        }
        for name, sender, description, due, repeat, status, delivered, task_type, retries, error, project in task_data
    ]
    audit = [
        {"timestamp": m["timestamp"], "channel": c["channel"], "sender_id": c["sender_id"],
         "sender_name": "Marta" if c["sender_id"] == "4242" else "Jonas", "input_text": m["content"],
         "output_text": reply, "provider_used": "claude-code", "model": "claude-sonnet-4",
         "processing_ms": 2310, "status": "ok", "denial_reason": None}
        for m, reply, c in [
            (messages[0], messages[1]["content"], conversations[0]),
            (messages[4], messages[5]["content"], conversations[1]),
            (messages[14], messages[15]["content"], conversations[3]),
        ]
    ]  # fmt: skip
    audit.append(
        {"timestamp": "2026-02-20 02:13:40", "channel": "telegram", "sender_id": "99999", "sender_name": None,
         "input_text": "hello?", "output_text": None, "provider_used": None, "model": None, "processing_ms": 1,
         "status": "denied", "denial_reason": "sender not in allowed_users"}
    )  # fmt: skip
    return {
        "conversations": conversations,
        "messages": messages,
        "facts": facts,
        "scheduled_tasks": tasks,
        "audit_log": audit,
        "limitations": [
            {
                "id": _uuid(0x0119, 1),
                "title": "Cannot read voice messages",
                "description": "Telegram voice notes arrive as OGG files and are ignored.",
                "proposed_plan": "Transcribe with a local Whisper model before the provider call.",
                "status": "open",
                "created_at": "2026-02-09 14:20:00",
                "resolved_at": None,
            }
        ],
        "user_aliases": [
            {"alias_sender_id": "15550100", "canonical_sender_id": "4242", "created_at": "2026-01-25 09:00:00"}
        ],
        "outcomes": [
            {
                "sender_id": "4242",
                "domain": "travel",
                "score": 1,
                "lesson": "Marta liked getting two fare options.",
                "source": "conversation",
                "timestamp": "2026-02-05 19:04:20",
                "project": "travel",
            },
            {
                "sender_id": "77",
                "domain": "reminders",
                "score": -1,
                "lesson": "Jonas wanted the reminder earlier.",
                "source": "conversation",
                "timestamp": "2026-02-06 09:05:00",
                "project": None,
            },
        ],
        "lessons": [
            {
                "sender_id": "4242",
                "domain": "travel",
                "rule": "Offer the cheapest and the fastest option.",
                "occurrences": 2,
                "created_at": "2026-02-05 19:05:00",
                "updated_at": "2026-02-28 10:01:00",
                "project": "travel",
            },
            {
                "sender_id": "4242",
                "domain": "travel",
                "rule": "Always ask for the seat preference.",
                "occurrences": 1,
                "created_at": "2026-02-05 19:06:00",
                "updated_at": "2026-02-05 19:06:00",
                "project": "travel",
            },
        ],
        "project_sessions": [
            {
                "id": _uuid(0x0960, 1),
                "channel": "telegram",
                "sender_id": "4242",
                "project": "travel",
                "session_id": "claude-session-5f1e2d",
                "created_at": "2026-02-05 19:02:11",
                "updated_at": "2026-02-05 19:07:22",
            },
        ],
    }


OMEGA_TASKS = {
    name: _uuid(0x7A5C, i)
    for i, name in enumerate(
        ["dentist-reminder", "check-in", "briefing", "plants", "rent", "standup", "jonas-dentist", "car-inspection"],
        1,
    )
}


def make_omega(path: str | os.PathLike[str], variant: str = "current") -> Path:
    """An Omega memory.db; ``variant`` is ``"current"`` (13 migrations) or ``"old"`` (the first 6)."""
    if variant not in ("current", "old"):
        raise ValueError(f"unknown Omega variant {variant!r}")
    path = _fresh(path)
    migrations = OMEGA_MIGRATIONS if variant == "current" else OMEGA_MIGRATIONS[:OMEGA_OLD_MIGRATIONS]
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, "
            "applied_at TEXT NOT NULL DEFAULT (datetime('now')))"
        )
        for i, (name, sql) in enumerate(migrations):
            conn.executescript(f"BEGIN; {sql}")
            applied = _stamp("2025-10-01 09:00:00", i * 7 * 86400)
            conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", (name, applied))
            conn.execute("COMMIT")
        conn.execute("BEGIN")
        for table, rows in _omega_rows().items():
            _insert(conn, table, rows)
        conn.execute("COMMIT")
    finally:
        conn.close()
    return path


# == ZEKE ======================================================================================================

ZEKE_NOW = datetime(2026, 3, 1, 12, 0, 0)
ZEKE_SCOPES = ("persona:zeke", "task:inbox", "ops:deploy", "calendar:work", "notes")
ZEKE_TTL_90_DAYS = 7776000
_HOUR, _DAY = 3600, 86400
_TTL = object()  # "the scope's default TTL"

#: ZEKE's ``MemoryStore.initialize`` statements, verbatim (``upstream/zeke/README.md`` gives the commit)
ZEKE_SCHEMA = (Path(__file__).resolve().parent / "upstream" / "zeke" / "initialize.sql").read_text(encoding="utf-8")

# (name, scope, text, tags, created_at, last_accessed_at, ttl_seconds, has_embedding)
_ZEKE_MEMORIES: list[tuple[str, str, str, list[str] | None, str, str | None, Any, bool]] = [
    ("p-name", "persona:zeke", "My name is Zeke; I am Dana's personal assistant and I keep answers short.",
     ["identity"], "2025-09-01T08:00:00.000001", "2026-02-28T21:14:03.551200", None, True),
    ("p-style", "persona:zeke", "Dana prefers bullet points over long paragraphs and hates emoji.",
     ["preferences", "style"], "2025-09-03T10:12:44.120045", "2026-02-27T08:01:19.004511", None, True),
    ("p-coffee", "persona:zeke", "Dana drinks oat-milk flat whites; order from Kaffeebar on Fridays.",
     ["preferences", "food"], "2025-10-11T16:45:02.998001", None, None, True),
    ("p-family", "persona:zeke", "Dana's daughter Mia has swimming lessons on Wednesdays at 17:00.",
     ["family"], "2025-11-20T19:03:55.310772", "2026-02-25T16:30:00.125000", None, True),
    ("p-allergy", "persona:zeke", "Dana is allergic to penicillin.",
     ["health"], "2025-12-02T09:14:27.660113", "2026-01-15T10:00:01.000002", None, False),
    ("p-timezone", "persona:zeke", "Dana lives in Berlin (Europe/Berlin) and works 9 to 5.",
     None, "2025-09-01T08:00:01.204455", "2026-03-01T07:55:12.830010", None, True),
    ("t-invoice-old", "task:inbox", "Reply to the accountant about the Q3 invoice.",
     ["email", "finance"], "2025-11-02T14:22:10.482913", "2025-11-03T09:00:12.110000", _TTL, True),
    ("t-invoice", "task:inbox", "Forward the January invoices to the accountant by 5 March.",
     ["email", "finance"], "2026-02-20T08:31:44.019283", "2026-02-28T17:12:09.720333", _TTL, True),
    ("t-newsletter", "task:inbox", "Unsubscribe from the Figma newsletter.",
     None, "2026-03-01T09:00:00", None, _HOUR, True),
    ("t-lunch", "task:inbox", "Answer Priya's lunch invitation for Thursday.",
     ["email", "social"], "2026-03-01T08:30:15.551002", "2026-03-01T11:02:00.400000", _DAY, True),
    ("t-passport", "task:inbox", "Renew the passport before the trip in May.",
     ["travel"], "2026-01-05T18:20:00.123456", "2026-02-14T12:00:00.654321", _TTL, False),
    ("o-rollback", "ops:deploy",
     "Deploy of api v2.14 rolled back: migration 0042 locked the orders table for 4 minutes.",
     ["deploy", "incident"], "2025-11-28T16:40:11.734002", "2025-12-01T10:00:00.100000", _TTL, True),
    ("o-hotfix", "ops:deploy", "Hotfix v2.14.1 deployed to production at 14:05; error rate back to 0.2%.",
     ["deploy"], "2026-02-12T14:07:31.009812", "2026-02-26T09:45:10.311000", _TTL, True),
    ("o-freeze", "ops:deploy", "Deploy freeze from 20 December to 6 January; only hotfixes go out.",
     ["deploy", "policy"], "2025-12-15T10:00:00.500000", "2026-01-07T08:00:00.000100", _TTL, True),
    ("o-canary", "ops:deploy", "Canary for v2.15 at 5% traffic; watch p95 latency.",
     ["deploy", "canary"], "2026-03-01T11:00:02.250000", "2026-03-01T11:30:00.000001", 2 * _HOUR, True),
    ("o-certs", "ops:deploy", "TLS certificate for api.example.com renews automatically on the 1st.",
     None, "2026-03-01T11:40:00.000300", None, 600, True),
    ("c-standup", "calendar:work", "Daily stand-up at 09:30 in the Ganymede room.",
     ["meetings"], "2025-10-15T07:58:00.812345", "2026-01-09T09:25:00.000000", _TTL, True),
    ("c-review", "calendar:work", "Quarterly review with Jonas on 12 March at 14:00.",
     ["meetings", "review"], "2026-02-25T13:13:13.131313", "2026-02-27T15:00:00.202020", _TTL, True),
    ("c-offsite", "calendar:work", "Team offsite in Leipzig, 23–24 April; book the train.",
     ["travel", "team"], "2026-02-01T10:30:45.999999", "2026-02-20T11:11:11.111111", _TTL, True),
    ("c-dentist", "calendar:work", "Dentist on 2 March at 08:15, Dr. Albers.",
     ["health"], "2026-02-26T18:00:00.000500", "2026-02-28T07:30:00.000000", 3 * _DAY, True),
    ("c-moved", "calendar:work", "Design sync moved to Tuesday 15:00.",
     None, "2026-02-27T09:00:00.750000", None, _DAY, True),
    ("n-wifi", "notes", "Guest Wi-Fi password is on the fridge, not in the password manager.",
     ["home"], "2025-10-03T20:00:00.010101", "2026-02-14T19:00:00.020202", None, True),
    ("n-book", "notes", "Book recommendation from Priya: 'The Dispossessed' by Ursula K. Le Guin.",
     ["books", "recommendations"], "2026-01-18T22:10:05.500500", "2026-01-18T22:10:05.500500", None, True),
    ("n-recipe", "notes", "Dana's shakshuka: 6 eggs, 2 cans of tomatoes, cumin, feta at the end.",
     ["recipes", "food"], "2025-12-24T11:45:00.000123", "2026-02-22T18:20:00.000456", None, True),
    ("n-bike", "notes", "Bike lock code changed; ask Dana.",
     None, "2026-02-10T07:40:10.404040", None, None, False),
    ("n-tax", "notes", "Tax return 2025 deadline is 31 July 2026.",
     ["finance"], "2026-01-31T12:00:00.303030", "2026-02-02T08:00:00.707070", None, True),
]  # fmt: skip

ZEKE_IDS = {name: _uuid(0x2E4E, i) for i, (name, *_) in enumerate(_ZEKE_MEMORIES, 1)}
ZEKE_EXPIRED = ["t-invoice-old", "t-newsletter", "o-rollback", "o-certs", "c-standup", "c-moved"]


def zeke_default_ttl(scope: str) -> int | None:
    """ZEKE's default TTL: 90 days for ``task:``/``ops:``/``calendar:``, none for ``persona:`` and ``notes``."""
    return ZEKE_TTL_90_DAYS if scope.startswith(("task:", "ops:", "calendar:")) else None


def zeke_filler_id(scope: str, i: int) -> str:
    """The id of filler memory ``i`` of ``scope`` (see ``extra_per_scope``)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"zeke-filler:{scope}:{i}"))


def make_zeke(
    path: str | os.PathLike[str], variant: str = "1536", *, extra_per_scope: dict[str, int] | None = None
) -> Path:
    """A ZEKE memory.db with 1536- (OpenAI) or 384-dimensional (MiniLM) embeddings."""
    if variant not in ("1536", "384"):
        raise ValueError(f"unknown ZEKE variant {variant!r}")
    dims = int(variant)
    path = _fresh(path)
    vectors = _unit_vectors(dims, len(_ZEKE_MEMORIES), dims)
    rows = []
    for (name, scope, text, tags, created, accessed, ttl, has_embedding), vector in zip(
        _ZEKE_MEMORIES, vectors, strict=True
    ):
        rows.append(
            {
                "id": ZEKE_IDS[name],
                "text": text,
                "scope": scope,
                "tags": json.dumps(tags) if tags is not None else None,
                "created_at": created,
                "last_accessed_at": accessed,
                "ttl_seconds": zeke_default_ttl(scope) if ttl is _TTL else ttl,
                "embedding": _f32(vector) if has_embedding else None,
            }
        )
    for scope, count in sorted((extra_per_scope or {}).items()):
        base = datetime(2026, 2, 1)
        fillers = _unit_vectors(sum(map(ord, scope)) * 1000 + dims, count, dims) if count else []
        for i in range(count):
            created = base + timedelta(minutes=i, microseconds=1000 + i)
            accessed = datetime(2026, 2, 25) + timedelta(minutes=count - 1 - i, microseconds=2000 + i)
            rows.append(
                {
                    "id": zeke_filler_id(scope, i),
                    "text": f"filler memory {i} for {scope}",
                    "scope": scope,
                    "tags": json.dumps(["filler"]),
                    "created_at": created.isoformat(timespec="microseconds"),
                    "last_accessed_at": accessed.isoformat(timespec="microseconds"),
                    "ttl_seconds": zeke_default_ttl(scope),
                    "embedding": _f32(fillers[i]),
                }
            )
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.executescript(ZEKE_SCHEMA)
        conn.execute("BEGIN")
        _insert(conn, "memories", rows)
        conn.execute("COMMIT")
    finally:
        conn.close()
    return path


# == aidaemon ==================================================================================================

AIDAEMON_KEY = "3c9f1a7e5b2d4c8e0f6a1b3d5e7f9a0c2e4b6d8f0a1c3e5b7d9f1a2c4e6b8d0f"
AIDAEMON_EVENT_TYPES = (
    "user_message",
    "assistant_response",
    "tool_call",
    "tool_result",
    "task_start",
    "task_end",
    "sub_agent_spawn",
    "sub_agent_complete",
    "approval_requested",
    "approval_granted",
    "approval_denied",
    "error",
)
AIDAEMON_SALIENT = ["msg-03", "msg-11"]  # legacy messages with importance >= 0.8
_MINILM_DIMS = 384

#: the statements of aidaemon's own code that make events, facts, episodes and conversation_summaries, verbatim
#: (``upstream/aidaemon/README.md`` gives the commit); the fixture's other (empty) tables follow
AIDAEMON_UPSTREAM = Path(__file__).resolve().parent / "upstream" / "aidaemon" / "schema.sql"
AIDAEMON_SCHEMA = (
    AIDAEMON_UPSTREAM.read_text(encoding="utf-8")
    + """
CREATE TABLE IF NOT EXISTS macros (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    trigger_pattern TEXT NOT NULL,
    tool_sequence TEXT NOT NULL,
    use_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE IF NOT EXISTS terminal_allowed_prefixes (
    prefix TEXT PRIMARY KEY,
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE IF NOT EXISTS procedures (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    trigger_pattern TEXT NOT NULL,
    steps TEXT NOT NULL,
    success_count INTEGER NOT NULL DEFAULT 0,
    failure_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL DEFAULT (datetime('now')),
    updated_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE IF NOT EXISTS people (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    aliases TEXT,
    relationship TEXT,
    notes TEXT,
    channel_ids TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now')),
    updated_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE IF NOT EXISTS person_facts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    person_id INTEGER NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    category TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    source TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now')),
    updated_at TEXT NOT NULL DEFAULT (datetime('now'))
);
"""
)

AIDAEMON_LEGACY_SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_name TEXT,
    tool_calls_json TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now')),
    importance REAL NOT NULL DEFAULT 0.5,
    embedding BLOB,
    embedding_error TEXT,
    consolidated_at TEXT
);
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages (session_id, created_at);
CREATE TABLE IF NOT EXISTS scheduled_tasks (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    cron_expr TEXT NOT NULL,
    original_schedule TEXT NOT NULL,
    prompt TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT 'tool',
    is_oneshot INTEGER NOT NULL DEFAULT 0,
    is_paused INTEGER NOT NULL DEFAULT 0,
    is_trusted INTEGER NOT NULL DEFAULT 0,
    last_run_at TEXT,
    next_run_at TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (datetime('now')),
    updated_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE IF NOT EXISTS facts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    category TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL DEFAULT (datetime('now')),
    updated_at TEXT NOT NULL DEFAULT (datetime('now')),
    UNIQUE (category, key)
);
"""


def _rfc(start: str, seconds: int) -> str:
    """chrono's RFC 3339 with nanoseconds: ``2026-02-10T09:15:02.123456789+00:00``."""
    moment = datetime.fromisoformat(start) + timedelta(seconds=seconds)
    nanos = (123456789 + seconds * 1000003) % 1_000_000_000
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos:09d}+00:00"


def _aidaemon_current_rows() -> dict[str, list[dict[str, Any]]]:
    tg, sub, slack = "telegram:123456789", "sub-task-7f3a-1", "slack:C05ABCD1234"
    du = "du -sh /var/* 2>/dev/null | sort -h | tail -3"
    prune = "docker image prune -af"
    # (session, event_type, data, seconds after the session's start, task_id, tool_name)
    tg_events = [
        ("user_message", {"text": "What's eating disk space on the build server?"}, None),
        ("task_start", {"task_id": "task-7f3a", "description": "Investigate disk usage on build-01"}, None),
        ("tool_call", {"id": "call_01", "name": "terminal", "arguments": {"command": du}}, "terminal"),
        ("tool_result", {"tool_call_id": "call_01", "name": "terminal",
                         "result": "1.2G\t/var/cache\n3.4G\t/var/log\n38G\t/var/lib", "is_error": False,
                         "duration_ms": 842}, "terminal"),
        ("sub_agent_spawn", {"child_session_id": sub, "mission": "Find the largest docker images on build-01"}, None),
        ("sub_agent_complete", {"child_session_id": sub, "result": "ghcr.io/acme/ci-runner:latest is 14.1 GB; "
                                "23 dangling images use 9.8 GB"}, None),
        ("assistant_response", {"text": "/var/lib/docker uses 38 GB — 23 dangling images account for 9.8 GB. "
                                "Want me to prune them?", "model": "claude-sonnet-4", "input_tokens": 1834,
                                "output_tokens": 41}, None),
        ("user_message", {"text": "yes prune them"}, None),
        ("approval_requested", {"command": prune, "risk_level": "medium", "reason": "deletes docker images"}, None),
        ("approval_granted", {"command": prune, "approved_by": tg}, None),
        ("tool_call", {"id": "call_02", "name": "terminal", "arguments": {"command": prune}}, "terminal"),
        ("tool_result", {"tool_call_id": "call_02", "name": "terminal",
                         "result": "Deleted Images: 23\nTotal reclaimed space: 9.8GB", "is_error": False,
                         "duration_ms": 15211}, "terminal"),
        ("task_end", {"task_id": "task-7f3a", "status": "completed", "duration_secs": 74}, None),
        ("assistant_response", {"text": "Pruned 23 dangling images and freed 9.8 GB on build-01.",
                                "model": "claude-sonnet-4", "input_tokens": 2210, "output_tokens": 17}, None),
    ]  # fmt: skip
    sub_events = [
        ("user_message", {"text": "Find the largest docker images on build-01"}, None),
        ("tool_call", {"id": "call_s1", "name": "terminal",
                       "arguments": {"command": "docker images --format '{{.Size}} {{.Repository}}:{{.Tag}}'"}},
         "terminal"),
        ("tool_result", {"tool_call_id": "call_s1", "name": "terminal",
                         "result": "14.1GB ghcr.io/acme/ci-runner:latest\n2.3GB postgres:16\n<none> x23 9.8GB",
                         "is_error": False, "duration_ms": 390}, "terminal"),
        ("assistant_response", {"text": "ghcr.io/acme/ci-runner:latest is 14.1 GB; 23 dangling images use 9.8 GB",
                                "model": "claude-haiku-4", "input_tokens": 512, "output_tokens": 24}, None),
    ]  # fmt: skip
    slack_events = [
        ("user_message", {"text": "deploy staging please"}, None),
        ("tool_call", {"id": "call_d1", "name": "terminal", "arguments": {"command": "./deploy.sh staging"}},
         "terminal"),
        ("approval_requested", {"command": "./deploy.sh staging", "risk_level": "high",
                                "reason": "deploys to a shared environment"}, None),
        ("approval_denied", {"command": "./deploy.sh staging", "denied_by": "slack:U02XYZ789",
                             "reason": "deploy freeze until Monday"}, None),
        ("error", {"message": "deploy blocked: approval denied", "kind": "approval"}, None),
        ("assistant_response", {"text": "The staging deploy was not approved (deploy freeze until Monday).",
                                "model": "claude-sonnet-4", "input_tokens": 980, "output_tokens": 16}, None),
    ]  # fmt: skip
    events = []
    for session, when, consolidated, items in [
        (tg, lambda i: _rfc("2026-02-10T09:15:02", i * 9), "2026-02-10 21:00:00", tg_events),
        (sub, lambda i: _rfc("2026-02-10T09:15:40", i * 3), "2026-02-10 21:00:00", sub_events),
        (slack, lambda i: _stamp("2026-02-27 16:02:45", i * 4), None, slack_events),
    ]:
        for i, (kind, data, tool) in enumerate(items):
            events.append(
                {
                    "session_id": session,
                    "event_type": kind,
                    "data": _json(data),
                    "created_at": when(i),
                    "consolidated_at": consolidated,
                    "task_id": None if session == slack or (session == tg and i == 0) else "task-7f3a",
                    "tool_name": tool,
                }
            )
    vectors = _unit_vectors(4242, 10, _MINILM_DIMS)
    # (category, key, value, source, created_at, superseded_at, recall_count, channel_id, privacy, has_embedding)
    fact_data = [
        ("user", "timezone", "Europe/London", "conversation", "2025-12-01T10:00:00.000000001+00:00",
         "2026-01-10 08:00:00", 3, None, "global", True),
        ("user", "timezone", "America/New_York", "conversation", "2026-01-10 08:00:00",
         "2026-02-01T07:30:12.500000000+00:00", 5, None, "global", True),
        ("user", "timezone", "Europe/Berlin", "conversation", "2026-02-01T07:30:12.500000000+00:00",
         None, 2, None, "global", True),
        ("user", "name", "Sam", "config", "2025-11-15 12:00:00", None, 14, None, "global", True),
        ("preference", "editor", "neovim with lazy.nvim", "conversation", "2025-12-20T18:05:44.120000000+00:00",
         None, 0, None, "global", False),
        ("project", "build_server", "build-01.internal, Ubuntu 22.04, 500 GB disk", "consolidation",
         "2026-02-10 21:00:00", None, 1, None, "global", True),
        ("preference", "deploy_window", "weekdays 10:00-16:00 Europe/Berlin", "conversation",
         "2026-02-27 16:03:30", None, 0, "slack:C05ABCD1234", "private", False),
    ]  # fmt: skip
    facts = [
        {"id": i, "category": category, "key": key, "value": value, "source": source, "created_at": created,
         "updated_at": superseded or created, "superseded_at": superseded, "recall_count": recalls,
         "last_recalled_at": "2026-02-28T08:00:00.000000000+00:00" if recalls else None, "channel_id": channel,
         "privacy": privacy, "embedding": _f32(vectors[i]) if has_embedding else None}
        for i, (category, key, value, source, created, superseded, recalls, channel, privacy, has_embedding)
        in enumerate(fact_data, 1)
    ]  # fmt: skip
    episodes = [
        {"id": 1, "session_id": tg, "summary": "Sam asked why build-01 was low on disk; docker images used 38 GB and "
         "23 dangling images (9.8 GB) were pruned after approval.", "topics": _json(["docker", "disk space",
         "build server"]), "emotional_tone": "neutral", "outcome": "resolved", "embedding": _f32(vectors[8]),
         "importance": 0.7, "recall_count": 1, "last_recalled_at": "2026-02-27T16:02:50.000000000+00:00",
         "message_count": 14, "start_time": events[0]["created_at"], "end_time": events[13]["created_at"],
         "created_at": "2026-02-10 21:00:00", "channel_id": tg},
        {"id": 2, "session_id": slack, "summary": "A staging deploy was requested and denied because of the deploy "
         "freeze.", "topics": _json(["deploy", "staging"]), "emotional_tone": "frustrated", "outcome": "blocked",
         "embedding": _f32(vectors[9]), "importance": 0.85, "recall_count": 0, "last_recalled_at": None,
         "message_count": 6, "start_time": "2026-02-27 16:02:45", "end_time": "2026-02-27 16:03:05",
         "created_at": "2026-02-27 22:00:00", "channel_id": slack},
    ]  # fmt: skip
    return {"events": events, "facts": facts, "episodes": episodes}


def _aidaemon_legacy_rows() -> dict[str, list[dict[str, Any]]]:
    tg = "telegram:123456789"
    vectors = _unit_vectors(384_001, 12, _MINILM_DIMS)
    calls = _json([{"id": "call_01", "name": "terminal", "arguments": '{"command":"df -h /"}'}])
    # (id, role, content, tool_call_id, tool_name, tool_calls_json, created_at, importance, embedding kind)
    data = [
        ("msg-01", "user", "hey, how much disk is left on the root partition?", None, None, None,
         "2025-12-03T08:01:12.482913001+00:00", 0.5, "f32"),
        ("msg-02", "assistant", None, None, None, calls, "2025-12-03T08:01:14.100000000+00:00", 0.3, "f32"),
        ("msg-03", "user", "Remember: my wife's birthday is 14 June, never let me forget it.", None, None, None,
         "2025-12-03T08:02:40.000000000+00:00", 0.9, "f32"),
        ("msg-04", "tool", "Filesystem Size Used Avail Use% Mounted on\n/dev/sda1 500G 431G 69G 87% /", "call_01",
         "terminal", None, "2025-12-03T08:01:15.733000000+00:00", 0.2, "f32"),
        ("msg-05", "assistant", "69 GB free of 500 GB (87% used). And noted: 14 June.", None, None, None,
         "2025-12-03T08:02:44.250000000+00:00", 0.5, "f32"),
        ("msg-06", "user", "what's the weather tomorrow in Berlin?", None, None, None, "2025-12-04 19:20:00",
         0.4, "f32"),
        ("msg-07", "assistant", "Tomorrow in Berlin: 4 °C, light rain in the morning.", None, None, None,
         "2025-12-04 19:20:03", 0.3, "json-text"),
        ("msg-08", "user", "thanks", None, None, None, "2025-12-04 19:21:10", 0.1, "json-blob"),
        ("msg-09", "user", "set up a reminder every weekday at 9 to check the CI dashboard", None, None, None,
         "2025-12-05T07:55:00.000000001+00:00", 0.6, "f32"),
        ("msg-10", "assistant", "Done: weekdays at 09:00 I'll ask you to check the CI dashboard.", None, None, None,
         "2025-12-05T07:55:03.000000002+00:00", 0.5, None),
        ("msg-11", "user", "Important: the production database password rotates on the 1st of every month.", None,
         None, None, "2025-12-06 10:00:00", 0.85, "f32"),
        ("msg-12", "assistant", "Noted — rotation on the 1st of each month.", None, None, None,
         "2025-12-06 10:00:02", 0.4, "f32"),
    ]  # fmt: skip
    messages = []
    for i, (mid, role, content, call_id, tool, tool_calls, created, importance, kind) in enumerate(data):
        if kind == "f32":
            embedding: Any = _f32(vectors[i])
        elif kind == "json-text":
            embedding = _json([round(float(x), 6) for x in vectors[i]])
        elif kind == "json-blob":
            embedding = _json([round(float(x), 6) for x in vectors[i]]).encode()
        else:
            embedding = None
        messages.append(
            {"id": mid, "session_id": tg, "role": role, "content": content, "tool_call_id": call_id, "tool_name": tool,
             "tool_calls_json": tool_calls, "created_at": created, "importance": importance, "embedding": embedding,
             "embedding_error": "embedding model not loaded: connection refused" if kind is None else None,
             "consolidated_at": "2025-12-06 22:00:00" if i < 8 else None}
        )  # fmt: skip
    tasks = [
        {"id": "task-briefing", "name": "morning-briefing", "cron_expr": "0 8 * * *",
         "original_schedule": "every day at 8am", "prompt": "Give me a short briefing: calendar, weather, CI status.",
         "source": "tool", "is_oneshot": 0, "is_paused": 0, "is_trusted": 0,
         "last_run_at": "2026-02-28T08:00:00.004211000+00:00", "next_run_at": "2026-03-01T08:00:00+00:00",
         "created_at": "2025-12-05 07:55:03", "updated_at": "2026-02-28T08:00:00.004211000+00:00"},
        {"id": "task-ci", "name": "ci-dashboard", "cron_expr": "0 9 * * 1-5",
         "original_schedule": "every weekday at 9", "prompt": "Remind me to check the CI dashboard.",
         "source": "tool", "is_oneshot": 0, "is_paused": 0, "is_trusted": 0, "last_run_at": None,
         "next_run_at": "2026-03-02T09:00:00+00:00", "created_at": "2025-12-05 07:55:03",
         "updated_at": "2025-12-05 07:55:03"},
        {"id": "remind-passport", "name": "passport", "cron_expr": "30 14 12 3 *",
         "original_schedule": "on 12 March at 2:30pm", "prompt": "Remind me to renew the passport.",
         "source": "tool", "is_oneshot": 1, "is_paused": 0, "is_trusted": 0, "last_run_at": None,
         "next_run_at": "2026-03-12T14:30:00+00:00", "created_at": "2026-02-20 18:00:00",
         "updated_at": "2026-02-20 18:00:00"},
        {"id": "weekly-report", "name": "weekly-report", "cron_expr": "0 17 * * FRI",
         "original_schedule": "fridays at 5pm", "prompt": "Summarize what I did this week from the events.",
         "source": "config", "is_oneshot": 0, "is_paused": 1, "is_trusted": 1,
         "last_run_at": "2026-01-30T17:00:01.000000000+00:00", "next_run_at": "2026-03-06T17:00:00+00:00",
         "created_at": "2025-11-15 12:00:00", "updated_at": "2026-02-02 09:00:00"},
    ]  # fmt: skip
    facts = [
        {"id": i, "category": category, "key": key, "value": value, "source": "conversation",
         "created_at": "2025-12-03 08:02:45", "updated_at": "2025-12-06 10:00:05"}
        for i, (category, key, value) in enumerate(
            [("user", "name", "Sam"), ("user", "timezone", "Europe/Berlin"), ("family", "wife_birthday", "14 June"),
             ("project", "build_server", "build-01.internal"), ("security", "db_password_rotation", "1st of month")],
            1,
        )
    ]  # fmt: skip
    return {"messages": messages, "scheduled_tasks": tasks, "facts": facts}


def _fill_aidaemon(conn: Any, variant: str) -> None:
    """Write aidaemon's schema and rows through a DB-API connection in autocommit mode (sqlite3, sqlcipher3)."""
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA foreign_keys = ON")
    if variant == "current":
        conn.executescript(AIDAEMON_SCHEMA)
        rows = _aidaemon_current_rows()
    else:
        conn.executescript(AIDAEMON_LEGACY_SCHEMA)
        rows = _aidaemon_legacy_rows()
    conn.execute("BEGIN")
    for table, table_rows in rows.items():
        _insert(conn, table, table_rows)
    conn.execute("COMMIT")


def make_aidaemon(path: str | os.PathLike[str], variant: str = "current") -> Path:
    """A plaintext aidaemon.db (as with ``AIDAEMON_ALLOW_PLAINTEXT_DB=1``); ``variant`` ``"current"`` (events)
    or ``"legacy"`` (before v0.9: messages and scheduled_tasks). Mode 0600."""
    if variant not in ("current", "legacy"):
        raise ValueError(f"unknown aidaemon variant {variant!r}")
    path = _fresh(path)
    path.touch(mode=0o600)
    path.chmod(0o600)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        _fill_aidaemon(conn, variant)
    finally:
        conn.close()
    path.chmod(0o600)
    return path


def make_encrypted_aidaemon(path: str | os.PathLike[str], key: str = AIDAEMON_KEY) -> Path:
    """The current aidaemon content encrypted with SQLCipher 4 (``PRAGMA key = '<key>'``). Needs ``sqlcipher3``."""
    import sqlcipher3  # optional: only this fixture needs it

    if not re.fullmatch(r"[0-9a-fA-F]{64}", key):
        raise ValueError("aidaemon keys are 64 hex characters")
    path = _fresh(path)
    path.touch(mode=0o600)
    path.chmod(0o600)
    conn = sqlcipher3.connect(str(path), isolation_level=None)
    try:
        conn.execute(f"PRAGMA key = '{key}'")
        _fill_aidaemon(conn, "current")
    finally:
        conn.close()
    path.chmod(0o600)
    return path


# == Oxydra ====================================================================================================

OXYDRA_NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=timezone.utc)

OXYDRA_UNKNOWN_MIGRATIONS = [
    "0002_sessions_agent_identity",
    "0003_files_metadata",
    "0004_chunks_metadata_json",
    "0005_chunks_fts_unicode61",
    "0006_session_state",
    "0007_chunks_vec_model",
    "0008_files_unique_hash",
    "0009_chunks_content_hash_index",
    "0010_schedules",
    "0011_schedule_runs",
    "0012_schedules_notification_policy",
    "0013_schedules_channel",
    "0014_schedule_runs_output",
    "0015_gateway_sessions",
    "0016_channel_session_mappings",
    "0017_gateway_sessions_parent",
    "0018_schedules_consecutive_failures",
    "0019_schedule_runs_cost",
    "0020_gateway_sessions_archived",
    "0021_chunks_session_created_index",
    "0022_schedule_runs_notified",
    "0023_memory_notes_schema_v1",
]
OXYDRA_ANN_MIGRATION = "0024_create_chunks_vec_vector_index"
POTION_MODEL = "minishlab/potion-base-8M"
POTION_SESSION = "discord:carol:sourdough"
OXYDRA_VECTOR_DIMS = 512

OXYDRA_GATEWAY_SQL = """
CREATE TABLE IF NOT EXISTS gateway_sessions (
    session_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    agent_name TEXT NOT NULL DEFAULT 'default',
    display_name TEXT,
    channel_origin TEXT NOT NULL,
    parent_session_id TEXT,
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    last_active_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    archived INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS idx_gateway_sessions_user ON gateway_sessions (user_id, last_active_at DESC);
CREATE TABLE IF NOT EXISTS channel_session_mappings (
    channel_id TEXT NOT NULL,
    channel_context_id TEXT NOT NULL,
    session_id TEXT NOT NULL REFERENCES gateway_sessions (session_id) ON DELETE CASCADE,
    created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (channel_id, channel_context_id)
);
"""


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def _tool(call_id: str, output: str) -> dict[str, Any]:
    return {"role": "tool", "content": output, "tool_call_id": call_id}


#: session -> (start 'YYYY-MM-DD HH:MM:SS', payloads with sequences 1, 2, …)
OXYDRA_SESSIONS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "telegram:alice:berlin-move": (
        "2026-02-18 19:30:00",
        [
            {"role": "system", "content": "You are Ada, Alice's assistant. Be concise."},
            _user("I'm moving to Berlin on 1 April. What do I need to register my address?"),
            _assistant(
                "You need an Anmeldung at a Bürgeramt within 14 days: your passport, the landlord's "
                "Wohnungsgeberbestätigung, and the registration form. Appointments go fast — book early."
            ),
            _user("Find me an appointment in Friedrichshain in the first week of April."),
            _call("call_b1", "search_appointments", {"office": "Bürgeramt Friedrichshain", "from": "2026-04-01"}),
            _tool("call_b1", '{"slots":["2026-04-03T09:40","2026-04-07T14:10"]}'),
            _assistant("Two slots: Friday 3 April 09:40 or Tuesday 7 April 14:10. Shall I book 3 April?"),
            _user("Yes, book the 3 April slot."),
        ],
    ),
    "cli:alice:flaky-tests": (
        "2026-02-24 10:05:00",
        [
            _user("test_export_csv fails about one run in five on CI. Can you look?"),
            _call("call_t1", "run_command", {"cmd": "pytest -q tests/test_export.py -p no:randomly --count 20"}),
            _tool("call_t1", "19 passed, 1 failed: test_export_csv — AssertionError: rows out of order"),
            _assistant(
                "The export sorts by created_at, which ties for rows made in the same second, so the order is "
                "arbitrary. Sorting by (created_at, id) makes it stable."
            ),
            _user("Do that."),
        ],
    ),
    POTION_SESSION: (
        "2026-02-26 07:45:00",
        [
            _user("My sourdough starter smells like nail polish remover. Is it dead?"),
            _assistant(
                "Not dead — hungry. An acetone smell means it ran out of food. Discard all but a spoonful and feed "
                "it 1:5:5 twice a day for two days."
            ),
            _user("What hydration should I use for a first loaf?"),
            _assistant("Start at 70% hydration: 500 g flour, 350 g water, 100 g starter, 10 g salt."),
        ],
    ),
}

OXYDRA_NOTES = [
    ("alice", "Alice moves to Berlin on 1 April 2026; Anmeldung booked for 3 April 09:40.", ["berlin", "admin"]),
    ("alice", "In the reports repo, sort exports by (created_at, id) to keep them stable.", ["code"]),
    ("alice", "Alice prefers morning appointments.", ["preferences"]),
    ("carol", "Carol's sourdough: feed 1:5:5, bake at 70% hydration.", ["baking", "recipes"]),
]
_SESSION_STARTS = {
    **{sid: start for sid, (start, _) in OXYDRA_SESSIONS.items()},
    "memory:alice": "2026-02-18 20:00:00",
    "memory:carol": "2026-02-21 20:00:00",
}


class _CountingUuid:
    """Stands in for the ``uuid`` module in a core module while a fixture is built: fixed, increasing ids."""

    def __init__(self) -> None:
        self.count = 0

    def uuid4(self) -> uuid.UUID:
        self.count += 1
        return uuid.UUID(f"00000000-0000-4000-8000-{self.count:012d}")


def _run(coro: Any) -> Any:
    """Run a coroutine to completion, also when called from inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


async def _fill_oxydra(path: Path) -> None:
    from oxmem_gui.core.memory_store import MemoryStore
    from oxmem_gui.core.schedules import store as core_schedules
    from oxmem_gui.core.store import notes as core_notes

    note_times = iter(datetime(2026, 2, 18, 20, 0, tzinfo=timezone.utc) + timedelta(days=i) for i in range(1000))

    def fixed_now() -> str:
        return next(note_times).isoformat(timespec="microseconds")

    with (
        mock.patch.object(core_notes, "uuid", _CountingUuid()),
        mock.patch.object(core_notes, "utc_now_text", fixed_now),
        mock.patch.object(core_schedules, "uuid", _CountingUuid()),
    ):
        store = await MemoryStore.open(path, embedding="deterministic")
        try:
            await store.store_many(
                [
                    (sid, seq, payload)
                    for sid, (_, payloads) in OXYDRA_SESSIONS.items()
                    for seq, payload in enumerate(payloads, 1)
                ]
            )
            for user, content, tags in OXYDRA_NOTES:
                await store.save_note(user, content, tags)
            berlin = "Europe/Berlin"
            await store.schedules.create(
                "alice",
                "Plan the week: calendar, deadlines, errands",
                {"type": "cron", "expression": "0 8 * * 1", "timezone": berlin},
                name="Monday plan",
                channel_id="telegram",
                channel_context_id="123456789",
                now=OXYDRA_NOW,
            )
            await store.schedules.create(
                "alice",
                "Summarize the week's work and open pull requests",
                {"type": "cron", "expression": "0 17 * * FRI", "timezone": berlin},
                name="Friday wrap-up",
                now=OXYDRA_NOW,
            )
            created = OXYDRA_NOW - timedelta(hours=3)
            inbox = await store.schedules.create(
                "alice",
                "Check the inbox and flag anything urgent",
                {"type": "interval", "every_secs": 3600},
                name="Inbox watch",
                notification_policy="conditional",
                now=created,
            )
            for i, (status, summary) in enumerate(
                [("success", "2 new messages, none urgent"), ("failed", "IMAP login timed out after 30 s")]
            ):
                started = created + timedelta(hours=i + 1)
                finished = started + timedelta(seconds=25)
                await store.schedules.record_run(
                    inbox.schedule_id,
                    started_at=started,
                    finished_at=finished,
                    status=status,
                    output_summary=summary,
                    output=f"{summary}\n\n(transcript)",
                    turn_count=2,
                    cost=0.0031,
                    notified=status == "success",
                    now=finished,
                )
            await store.schedules.create(
                "alice",
                "Remind Alice to renew her passport",
                {"type": "once", "at": "2026-03-10T09:00:00Z"},
                name="Passport reminder",
                notification_policy="always",
                now=OXYDRA_NOW,
            )
        finally:
            await store.aclose()


def _fix_oxydra_times(conn: apsw.Connection) -> None:
    """Replace the CURRENT_TIMESTAMP values the core wrote with fixed ones: a session's start plus ``sequence``
    minutes."""
    at = "strftime('%Y-%m-%d %H:%M:%S', ?, '+' || {} || ' minutes')"
    for session_id, start in _SESSION_STARTS.items():
        args = (start, session_id)
        conn.execute(f"UPDATE conversation_events SET created_at = {at.format('sequence')} WHERE session_id = ?", args)
        conn.execute(
            f"UPDATE chunks SET created_at = {at.format('sequence_start')}, "
            f"updated_at = {at.format('coalesce(sequence_end, sequence_start)')} WHERE session_id = ?",
            (start, start, session_id),
        )
        conn.execute(
            "UPDATE chunks_vec SET created_at = c.created_at, updated_at = c.updated_at FROM chunks c "
            "WHERE c.chunk_id = chunks_vec.chunk_id AND c.session_id = ?",
            (session_id,),
        )
        conn.execute("UPDATE files SET created_at = ?, updated_at = ? WHERE session_id = ?", (start, start, session_id))
        last = f"(SELECT {at.format('max(sequence)')} FROM conversation_events WHERE session_id = ?)"
        conn.execute(
            f"UPDATE sessions SET created_at = ?, updated_at = {last} WHERE session_id = ?",
            (start, start, session_id, session_id),
        )
        conn.execute(
            f"UPDATE session_state SET updated_at = {last} WHERE session_id = ?", (start, session_id, session_id)
        )
    conn.execute("UPDATE memory_migrations SET applied_at = '2026-01-05 10:00:00'")


def make_oxydra(path: str | os.PathLike[str]) -> Path:
    """An Oxydra memory.db in the native schema, written by the project's own core (deterministic embeddings),
    plus ``gateway_sessions``, ``channel_session_mappings`` and migration rows the project does not know.

    For fixed ids and dates it swaps ``uuid`` in ``oxmem_gui.core.store.notes`` and ``core.schedules.store`` and
    ``notes.utc_now_text`` while it builds, and then rewrites the ``CURRENT_TIMESTAMP`` columns."""
    path = _fresh(path)
    _run(_fill_oxydra(path))
    conn = apsw.Connection(str(path))
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        with conn:
            _fix_oxydra_times(conn)
            conn.execute(OXYDRA_GATEWAY_SQL)
            for i, version in enumerate(OXYDRA_UNKNOWN_MIGRATIONS):
                conn.execute(
                    "INSERT INTO memory_migrations (version, applied_at) VALUES (?, ?)",
                    (version, _stamp("2026-01-05 10:00:00", (i + 1) * 3 * 86400)),
                )
            gateway = [
                ("telegram:alice:berlin-move", "alice", "Berlin move", "telegram", None, "2026-02-18 19:30:00",
                 "2026-02-18 19:38:00", 0),
                ("cli:alice:flaky-tests", "alice", "Flaky export test", "cli", None, "2026-02-24 10:05:00",
                 "2026-02-24 10:10:00", 1),
                (POTION_SESSION, "carol", None, "discord", None, "2026-02-26 07:45:00", "2026-02-26 07:49:00", 0),
            ]  # fmt: skip
            conn.executemany(
                "INSERT INTO gateway_sessions (session_id, user_id, display_name, channel_origin, "
                "parent_session_id, created_at, last_active_at, archived) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                gateway,
            )
            conn.executemany(
                "INSERT INTO channel_session_mappings (channel_id, channel_context_id, session_id, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?)",
                [
                    (
                        "telegram",
                        "123456789",
                        "telegram:alice:berlin-move",
                        "2026-02-18 19:30:00",
                        "2026-02-18 19:38:00",
                    ),
                    ("cli", "tty:/dev/pts/3", "cli:alice:flaky-tests", "2026-02-24 10:05:00", "2026-02-24 10:05:00"),
                    ("discord", "guild-42/channel-7", POTION_SESSION, "2026-02-26 07:45:00", "2026-02-26 07:49:00"),
                ],
            )
    finally:
        conn.close()
    return path


#: the tables copied into the libSQL file, parents first
_OXYDRA_TABLES = (
    "sessions",
    "conversation_events",
    "session_state",
    "files",
    "chunks",
    "chunks_vec",
    "schedules",
    "schedule_runs",
    "memory_migrations",
    "gateway_sessions",
    "channel_session_mappings",
)


def _padded(vector: np.ndarray) -> bytes:
    out = np.zeros(OXYDRA_VECTOR_DIMS, dtype="<f4")
    out[: len(vector)] = vector
    return out.tobytes()


#: the agent's own migration scripts, verbatim (see ``upstream/oxydra/README.md`` for the commits)
OXYDRA_UPSTREAM = Path(__file__).resolve().parent / "upstream" / "oxydra"
#: ``memory_migrations`` of the libSQL file: the agent's 24 versions, as it names them
OXYDRA_AGENT_MIGRATIONS = [f.stem for f in sorted(OXYDRA_UPSTREAM.glob("[0-9][0-9][0-9][0-9]_*.sql"))]
#: the agent's ``CREATE TABLE`` of its tracking table (``ensure_migration_bookkeeping`` in ``schema.rs``)
OXYDRA_BOOKKEEPING_SQL = """CREATE TABLE IF NOT EXISTS memory_migrations (
            version TEXT PRIMARY KEY,
            applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
        )"""


def _oxydra_scripts(libsql: bool) -> list[tuple[str, str]]:
    """``(version, sql)`` as the agent applies them: 0001–0024 with libSQL's index, else 0001–0023 with the
    ``BLOB`` vectors of before it."""
    scripts = [(v, (OXYDRA_UPSTREAM / f"{v}.sql").read_text(encoding="utf-8")) for v in OXYDRA_AGENT_MIGRATIONS]
    if libsql:
        return scripts
    older = (OXYDRA_UPSTREAM / "before-0024" / "0008_create_chunks_vec_table.sql").read_text(encoding="utf-8")
    return [(v, older if v.startswith("0008_") else sql) for v, sql in scripts if not v.startswith("0024_")]


def _make_oxydra_from_migrations(path: str | os.PathLike[str], libsql: bool) -> Path:
    """The ``make_oxydra`` rows in a file whose schema the agent's own migrations made (recorded as the agent
    records them: no version of this project's), through the engine the agent uses."""
    path = _fresh(path)
    with tempfile.TemporaryDirectory() as tmp:
        source = apsw.Connection(str(make_oxydra(Path(tmp) / "oxydra.db")), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            tables = {t: (_columns(source, t), source.execute(f"SELECT * FROM {t}").fetchall()) for t in _OXYDRA_TABLES}
            chunk_rowids = dict(source.execute("SELECT chunk_id, rowid FROM chunks").fetchall())
            chunk_sessions = dict(source.execute("SELECT chunk_id, session_id FROM chunks").fetchall())
        finally:
            source.close()
    if libsql:
        import libsql as engine  # optional: only the libSQL fixture needs it
    else:
        engine = sqlite3
    potion = iter(_unit_vectors(8_000_000, 100, 256))
    conn = engine.connect(str(path))
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(OXYDRA_BOOKKEEPING_SQL)
        for i, (version, sql) in enumerate(_oxydra_scripts(libsql)):
            conn.executescript(sql)
            conn.execute(
                "INSERT INTO memory_migrations (version, applied_at) VALUES (?, ?)",
                (version, _stamp("2026-01-05 10:00:00", i * 2 * 86400)),
            )
            conn.commit()
        for table, (columns, rows) in tables.items():
            if table == "memory_migrations":
                continue
            if table == "chunks":  # keep rowids: chunks_fts rows (made by the insert trigger) use them
                columns = ["rowid", *columns]
                rows = [(chunk_rowids[row[0]], *row) for row in rows]
            if table == "chunks_vec" and libsql:
                blob, model = columns.index("embedding_blob"), columns.index("embedding_model")
                fixed = []
                for row in rows:
                    row = list(row)
                    if chunk_sessions[row[0]] == POTION_SESSION:
                        row[blob], row[model] = _padded(next(potion)), POTION_MODEL
                    else:
                        row[blob] = _padded(np.frombuffer(row[blob], dtype="<f4"))
                    fixed.append(tuple(row))
                rows = fixed
            marks = ", ".join("?" * len(columns))
            conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)
        conn.commit()
    finally:
        conn.close()
    return path


def make_oxydra_agent(path: str | os.PathLike[str]) -> Path:
    """The ``make_oxydra`` rows in a file the agent itself made before its libSQL index: its migrations
    ``0001_create_sessions_table`` … ``0023_add_full_output_to_schedule_runs`` (commit 2dfcaa1), ``BLOB`` vectors
    of 64 values, written with plain SQLite."""
    return _make_oxydra_from_migrations(path, libsql=False)


def make_oxydra_libsql(path: str | os.PathLike[str]) -> Path:
    """The ``make_oxydra`` content in a newer Oxydra's libSQL file, its schema made by the agent's own migrations
    0001–0024 (commit 677951e): ``FLOAT32(512)`` vectors with an ANN index (``libsql_vector_idx``) and its shadow
    tables. Needs the ``libsql`` package."""
    return _make_oxydra_from_migrations(path, libsql=True)


# == other files ===============================================================================================

RECIPE_COUNT = 250
_INGREDIENTS = [
    ("flour", "g"), ("sugar", "g"), ("butter", "g"), ("egg", None), ("milk", "ml"), ("salt", "g"),
    ("olive oil", "ml"), ("garlic", "clove"), ("onion", None), ("tomato", None), ("rice", "g"), ("lentils", "g"),
]  # fmt: skip


def make_unknown_sqlite(path: str | os.PathLike[str]) -> Path:
    """An unrelated SQLite app: a recipe box (three tables, one WITHOUT ROWID, a BLOB column, NULLs, a view)."""
    path = _fresh(path)
    rng = np.random.default_rng(250)
    adjectives = ["Quick", "Smoky", "Lemony", "Crispy", "Slow-cooked", "Spicy", "Creamy", "Rustic", "Herby", "Sweet"]
    dishes = ["lentil soup", "tomato tart", "garlic noodles", "rice pudding", "onion bhaji",
              "pancakes", "risotto", "flatbread", "omelette", "dal", "shortbread", "gnocchi", "frittata",
              "focaccia", "pilaf", "crumble", "hash", "galette", "pasta bake", "chowder", "curry", "salad",
              "stew", "biscuits", "fritters"]  # fmt: skip
    cuisines = ["Italian", "Indian", "French", None, "Turkish", "Mexican", None, "Japanese"]
    recipes = []
    for i in range(1, RECIPE_COUNT + 1):
        photo = b"\x89PNG\r\n\x1a\n" + rng.integers(0, 256, 64, dtype=np.uint8).tobytes() if i % 10 == 0 else None
        recipes.append(
            (
                i,
                f"{adjectives[i % len(adjectives)]} {dishes[(i * 7) % len(dishes)]} #{i}",
                cuisines[i % len(cuisines)],
                int(5 + (i * 13) % 115),
                None if i % 9 == 0 else round(2.5 + (i * 37 % 26) / 10, 1),
                photo,
                "Family favourite; double the garlic." if i % 17 == 0 else None,
                _stamp("2024-01-01 12:00:00", i * 86400 // 3),
            )
        )
    links = [(r, (r + k) % len(_INGREDIENTS) + 1, float((r * k) % 400 + 5)) for r in range(1, RECIPE_COUNT + 1)
             for k in (0, 3, 7)]  # fmt: skip
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.executescript(
            """
            CREATE TABLE recipes (
                id INTEGER PRIMARY KEY,
                title TEXT NOT NULL,
                cuisine TEXT,
                minutes INTEGER NOT NULL,
                rating REAL,
                photo BLOB,
                notes TEXT,
                created_at TEXT NOT NULL
            );
            CREATE INDEX recipes_by_cuisine ON recipes (cuisine, rating DESC);
            CREATE TABLE ingredients (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, unit TEXT);
            CREATE TABLE recipe_ingredients (
                recipe_id INTEGER NOT NULL REFERENCES recipes (id) ON DELETE CASCADE,
                ingredient_id INTEGER NOT NULL REFERENCES ingredients (id),
                quantity REAL,
                PRIMARY KEY (recipe_id, ingredient_id)
            ) WITHOUT ROWID;
            CREATE VIEW quick_recipes AS SELECT id, title, minutes FROM recipes WHERE minutes <= 20;
            """
        )
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO recipes VALUES (?, ?, ?, ?, ?, ?, ?, ?)", recipes)
        conn.executemany("INSERT INTO ingredients (name, unit) VALUES (?, ?)", _INGREDIENTS)
        conn.executemany("INSERT INTO recipe_ingredients VALUES (?, ?, ?)", links)
        conn.execute("COMMIT")
    finally:
        conn.close()
    return path


def make_not_sqlite(path: str | os.PathLike[str]) -> Path:
    """A text file where a database was expected."""
    path = _fresh(path)
    path.write_text(
        "# agent memory\n\nThis is a notes file, not a database.\n- likes tea\n- meeting on Friday at 10\n",
        encoding="utf-8",
    )
    return path


def make_empty(path: str | os.PathLike[str]) -> Path:
    """A zero-byte file."""
    path = _fresh(path)
    path.write_bytes(b"")
    return path


def _have(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def write_all(folder: str | os.PathLike[str]) -> dict[str, Path]:
    """Write every fixture into ``folder``; the keys are the file names without ``.db``. The encrypted and the
    libSQL files are left out when ``sqlcipher3`` or ``libsql`` cannot be imported."""
    folder = Path(folder)
    builders: dict[str, Any] = {
        "omega": make_omega,
        "omega-old": lambda p: make_omega(p, "old"),
        "zeke": make_zeke,
        "zeke-384": lambda p: make_zeke(p, "384"),
        "aidaemon": make_aidaemon,
        "aidaemon-legacy": lambda p: make_aidaemon(p, "legacy"),
        "aidaemon-encrypted": make_encrypted_aidaemon if _have("sqlcipher3") else None,
        "oxydra": make_oxydra,
        "oxydra-agent": make_oxydra_agent,
        "oxydra-libsql": make_oxydra_libsql if _have("libsql") else None,
        "unknown": make_unknown_sqlite,
        "not-sqlite": make_not_sqlite,
        "empty": make_empty,
    }
    return {name: build(folder / f"{name}.db") for name, build in builders.items() if build is not None}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} FOLDER")
    for name, written in write_all(sys.argv[1]).items():
        print(f"{name:20} {written}")
