"""aidaemon's files (FORMATS.md §D) through the one reader interface: current (events), legacy (messages,
scheduled_tasks), mixed, and encrypted with SQLCipher. Expected values are worked out here from the raw rows
with plain apsw + numpy, not by the reader's own code."""

import asyncio
import hashlib
import json
import os
import stat
from datetime import datetime, timezone
from pathlib import Path

import apsw
import numpy as np
import pytest

from oxmem_gui.core.api import SearchOptions
from oxmem_gui.core.embeddings.model_files import MODEL_NAME
from oxmem_gui.core.errors import EmbeddingError, NotFoundError, ReadOnlyError, StoreOpenError
from oxmem_gui.core.formats import base
from oxmem_gui.core.formats.aidaemon import AidaemonReader
from oxmem_gui.core.memory import inspect_database, open_memory
from tests.core.formats import fixtures as fx

TG, SUB, SLACK = "telegram:123456789", "sub-task-7f3a-1", "slack:C05ABCD1234"
DU = "du -sh /var/* 2>/dev/null | sort -h | tail -3"


# -- helpers ------------------------------------------------------------------------------------------------


def read(path, fn, **open_options):
    """Open ``path`` with ``open_memory``, run ``await fn(reader)``, close; the result."""

    async def go():
        memory = await open_memory(path, **open_options)
        try:
            return await fn(memory)
        finally:
            await memory.aclose()

    return asyncio.run(go())


def rows(path, sql, args=()):
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def write(path, *statements):
    """Change a fixture copy as another program would (before the reader opens it)."""
    conn = apsw.Connection(str(path))
    try:
        with conn:
            for sql, args in statements:
                conn.execute(sql, args)
    finally:
        conn.close()


def when(text):
    """A stored time as RFC 3339 UTC with microseconds — written here independently of the reader."""
    text = text.replace(" ", "T")
    if "." in text:
        head, rest = text.split(".", 1)
        digits = "".join(ch for ch in rest if ch.isdigit())
        text = head + "." + digits[:6].ljust(6, "0") + rest[len(digits) :]
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def f32(vector):
    return np.asarray(vector, dtype="<f4").tobytes()


def unit(vector):
    vector = np.asarray(vector, dtype=np.float64)
    return vector / np.linalg.norm(vector)


@pytest.fixture
def current(tmp_path):
    return fx.make_aidaemon(tmp_path / "aidaemon.db")


@pytest.fixture
def legacy(tmp_path):
    return fx.make_aidaemon(tmp_path / "legacy.db", "legacy")


# -- detection and capabilities --------------------------------------------------------------------------------


def test_detects_current_and_legacy(current, legacy):
    assert asyncio.run(inspect_database(current)).format == "aidaemon"
    assert asyncio.run(inspect_database(legacy)).format == "aidaemon-legacy"

    async def caps(m):
        return type(m), m.format, m.capabilities, m.LABEL

    kind, fmt, c, label = read(current, caps)
    assert (kind, fmt, label) == (AidaemonReader, "aidaemon", "aidaemon memory")
    assert (c.has_sessions, c.has_notes, c.has_schedules, c.has_search) == (True, True, True, True)  # goal_schedules
    assert (c.notes_label, c.group_label) == ("Facts", "Category")
    assert set(c.refusals) == {"events", "summary"} and c.editable and not c.note_tags
    assert c.refusal("events").startswith("aidaemon appends its events and derives episodes")
    kind, fmt, c, label = read(legacy, caps)
    assert (kind, fmt, label) == (AidaemonReader, "aidaemon-legacy", "aidaemon memory (before v0.9)")
    assert (c.has_sessions, c.has_notes, c.has_schedules, c.has_search) == (True, True, True, True)


def test_markers_and_embeddings(current, legacy):
    info = read(current, lambda m: m.info())
    assert info.markers[:2] == [
        "events: aidaemon v0.9+ (event-sourced sessions)",
        "facts with superseded_at (versioned facts)",
    ]
    assert "messages: legacy, before v0.9" not in info.markers
    assert "embeddings: float32 blobs of 1536 bytes in facts, episodes" in info.markers
    counts = {
        t: rows(current, f"SELECT count(*) FROM {t} WHERE length(CAST(embedding AS BLOB)) = 1536")[0][0]
        for t in ("facts", "episodes")
    }
    assert counts == {"facts": 5, "episodes": 2}
    assert [(e.table, e.model, e.stored_dimensions, e.dimensions, e.rows, e.encoding) for e in info.embeddings] == [
        ("facts", MODEL_NAME, 384, 384, counts["facts"], "float32"),
        ("episodes", MODEL_NAME, 384, 384, counts["episodes"], "float32"),
    ]

    info = read(legacy, lambda m: m.info())
    assert info.markers[:3] == [
        "messages: legacy, before v0.9",
        "scheduled_tasks: legacy, before v0.9",
        "facts without superseded_at (one row per key, before versioned facts)",
    ]
    assert "embeddings: legacy JSON arrays in messages" in info.markers
    binary = rows(legacy, "SELECT count(*) FROM messages WHERE length(CAST(embedding AS BLOB)) = 1536")[0][0]
    as_json = rows(
        legacy,
        "SELECT count(*) FROM messages WHERE length(CAST(embedding AS BLOB)) != 1536 "
        "AND hex(substr(CAST(embedding AS BLOB), 1, 1)) = '5B'",
    )[0][0]
    assert (binary, as_json) == (9, 2)
    assert [(e.table, e.stored_dimensions, e.dimensions, e.rows, e.encoding) for e in info.embeddings] == [
        ("messages", 384, 384, binary, "float32"),
        ("messages", 384, 384, as_json, "json"),
    ]


# -- sessions and events -----------------------------------------------------------------------------------


def test_sessions_current(current):
    got = read(current, lambda m: m.sessions_page())
    raw = rows(current, "SELECT session_id, created_at FROM events")
    spans = {}
    for sid, created in raw:
        spans.setdefault(sid, []).append(when(created))
    assert [r.session_id for r in got] == [SLACK, TG, SUB]  # newest activity first
    for r in got:
        assert (r.created_at, r.updated_at) == (min(spans[r.session_id]), max(spans[r.session_id]))
    tg = got[1]
    assert (tg.created_at, tg.updated_at) == ("2026-02-10T09:15:02.123456+00:00", "2026-02-10T09:16:59.240457+00:00")
    assert got[0].updated_at == "2026-02-27T16:03:05.000000+00:00"  # 'YYYY-MM-DD HH:MM:SS' text, read as UTC
    # the count from the index; a count by event type would read every event of every session
    assert sorted(tg.details) == ["events", "summary", "topics"]
    assert tg.details["events"] == 14 == rows(current, "SELECT count(*) FROM events WHERE session_id = ?", (TG,))[0][0]
    assert tg.details["summary"].startswith("Sam asked why build-01 was low on disk")
    assert tg.details["topics"] == "docker, disk space, build server"
    assert got[0].details["summary"] == "A staging deploy was requested and denied because of the deploy freeze."
    assert "summary" not in got[2].details  # no episode for the sub-agent's session

    assert [r.session_id for r in read(current, lambda m: m.sessions_page(contains="TELEGRAM"))] == [TG]
    infos = read(current, lambda m: m.list_sessions())
    assert [(i.session_id, i.event_count, i.last_sequence) for i in infos] == [
        (SLACK, 6, 24),
        (TG, 14, 14),
        (SUB, 4, 18),
    ]


def test_events_current(current):
    events = read(current, lambda m: m.recall(TG))
    assert [e.sequence for e in events] == list(range(1, 15))
    assert [e.payload["role"] for e in events] == [
        "user", "system", "assistant", "tool", "system", "system", "assistant",
        "user", "system", "system", "assistant", "tool", "system", "assistant",
    ]  # fmt: skip
    raw = {
        i: (t, json.loads(d), c) for i, t, d, c in rows(current, "SELECT id, event_type, data, created_at FROM events")
    }
    for e in events:
        kind, data, created = raw[e.sequence]
        assert e.created_at == when(created)
        assert (e.payload["event_type"], e.payload["data"], e.payload["consolidated_at"]) == (
            kind,
            data,
            "2026-02-10 21:00:00",
        )
    first, task, call, result = (e.payload for e in events[:4])
    assert (first["content"], first["task_id"]) == ("What's eating disk space on the build server?", None)
    assert task["content"] == '[task_start] {"task_id":"task-7f3a","description":"Investigate disk usage on build-01"}'
    assert task["task_id"] == "task-7f3a"
    assert call["content"] == "" and call["tool_name"] == "terminal"
    assert call["tool_calls"] == [{"id": "call_01", "name": "terminal", "arguments": {"command": DU}}]
    assert (result["tool_call_id"], result["content"]) == ("call_01", "1.2G\t/var/cache\n3.4G\t/var/log\n38G\t/var/lib")
    assert events[5].payload["content"] == (
        "[sub_agent_complete] ghcr.io/acme/ci-runner:latest is 14.1 GB; 23 dangling images use 9.8 GB"
    )
    assert events[6].payload["content"].startswith("/var/lib/docker uses 38 GB")
    assert "tool_calls" not in events[6].payload
    slack = read(current, lambda m: m.recall(SLACK))
    assert slack[4].payload["content"] == "[error] deploy blocked: approval denied"
    assert slack[4].payload["consolidated_at"] is None
    with pytest.raises(NotFoundError):
        read(current, lambda m: m.recall("no-such-session"))


def test_unreadable_event_is_flagged(current):
    write(
        current,
        (
            "INSERT INTO events (id, session_id, event_type, data, created_at) VALUES (30, ?, 'user_message', ?, ?)",
            (TG, "{not json", "2026-02-10 09:20:00"),
        ),
    )
    events = read(current, lambda m: m.recall(TG))
    assert [e.sequence for e in events] == [*range(1, 15), 30]
    bad = events[-1].payload
    assert bad["role"] == "system"
    assert bad["content"].startswith("⚠ unreadable row: event 30 (user_message) has data that is not JSON")
    assert (bad["raw_data"], bad["event_type"]) == ("{not json", "user_message")
    assert events[0].payload["content"] == "What's eating disk space on the build server?"


def test_summary_from_episode_then_conversation_summaries(current):
    state = read(current, lambda m: m.read_summary_state(TG))
    assert state["summary"].startswith("Sam asked why build-01 was low on disk")
    assert state["upper_sequence"] == 14  # the episode's end_time is event 14's time
    assert state["metadata"]["source"] == "episodes" and state["metadata"]["episode_id"] == 1
    assert state["metadata"]["topics"] == ["docker", "disk space", "build server"]
    assert read(current, lambda m: m.read_summary_state(SUB)) is None

    write(
        current,
        (
            "INSERT INTO conversation_summaries (session_id, summary, message_count, last_message_id, updated_at) "
            "VALUES (?, 'Disk investigation so far.', 7, '7', '2026-02-10T09:16:00+00:00')",
            (TG,),
        ),
    )
    state = read(current, lambda m: m.read_summary_state(TG))
    assert (state["summary"], state["upper_sequence"], state["epoch"]) == ("Disk investigation so far.", 7, 0)
    assert state["metadata"]["source"] == "conversation_summaries"
    assert state["metadata"]["message_count"] == 7
    preview = read(current, lambda m: m.context_preview(TG, 100_000))
    assert [i.status for i in preview.items][:8] == ["summarized"] * 7 + ["included"]


def test_mixed_file_reads_both_tables(current):
    write(
        current,
        (fx.AIDAEMON_LEGACY_SCHEMA.split(";")[0], ()),
        (
            "INSERT INTO messages (id, session_id, role, content, created_at, importance) VALUES "
            "('old-1', ?, 'user', 'from before the upgrade', '2025-06-01 10:00:00', 0.9), "
            "('old-2', 'legacy-only', 'user', 'hello', '2025-05-01 09:00:00', 0.5)",
            (TG,),
        ),
    )
    sessions = read(current, lambda m: m.sessions_page())
    assert [s.session_id for s in sessions] == [SLACK, TG, SUB, "legacy-only"]
    by_id = {s.session_id: s for s in sessions}
    assert by_id[TG].created_at == "2025-06-01T10:00:00.000000+00:00"  # the legacy row is the oldest
    assert by_id[TG].details["legacy messages"] == 1 and by_id[TG].details["events"] == 14
    assert by_id["legacy-only"].details == {"messages": 1, "roles": "user 1"}
    assert [e.sequence for e in read(current, lambda m: m.recall(TG))] == list(range(1, 15))  # from events
    (only,) = read(current, lambda m: m.recall("legacy-only"))
    assert (only.sequence, only.payload["content"], only.payload["message_id"]) == (2, "hello", "old-2")
    result = read(
        current, lambda m: m.search("aidaemon", TG, "disk", options=SearchOptions(query_embedding=np.ones(384)))
    )
    assert result.lists == {"recency": ["old-1"], "salience": ["old-1"], "relevance": []}  # its legacy messages


# -- facts and episodes as notes -----------------------------------------------------------------------------


def test_facts_with_history(current):
    groups = read(current, lambda m: m.note_users())
    active = [r[0] for r in rows(current, "SELECT DISTINCT category FROM facts WHERE superseded_at IS NULL ORDER BY 1")]
    assert groups == [*active, "episodes"] == ["preference", "project", "user", "episodes"]
    notes = read(current, lambda m: m.list_notes("user"))
    assert [n.note_id for n in notes] == ["fact:3", "fact:4"]  # newest first
    tz = notes[0]
    assert (tz.user, tz.content, tz.tags, tz.sequence) == ("user", "timezone: Europe/Berlin", [], 3)
    assert (tz.created_at, tz.updated_at) == ("2026-02-01T07:30:12.500000+00:00", "2026-02-01T07:30:12.500000+00:00")
    old = rows(
        current,
        "SELECT value, created_at, superseded_at FROM facts WHERE category = 'user' AND key = 'timezone' "
        "AND superseded_at IS NOT NULL ORDER BY id DESC",
    )
    assert tz.details["history"] == [{"value": v, "created_at": when(c), "superseded_at": when(s)} for v, c, s in old]
    assert tz.details["history"] == [
        {
            "value": "America/New_York",
            "created_at": "2026-01-10T08:00:00.000000+00:00",
            "superseded_at": "2026-02-01T07:30:12.500000+00:00",
        },
        {
            "value": "Europe/London",
            "created_at": "2025-12-01T10:00:00.000000+00:00",
            "superseded_at": "2026-01-10T08:00:00.000000+00:00",
        },
    ]
    assert {k: v for k, v in tz.details.items() if k != "history"} == {
        "id": 3,
        "key": "timezone",
        "source": "conversation",
        "privacy": "global",
        "channel_id": None,
        "recall_count": 2,
        "last_recalled_at": "2026-02-28T08:00:00.000000+00:00",
        "embedded": True,
    }
    assert notes[1].details["history"] == []
    window = read(current, lambda m: m.get_note("preference", "fact:7"))
    assert (window.content, window.details["privacy"], window.details["channel_id"]) == (
        "deploy_window: weekdays 10:00-16:00 Europe/Berlin",
        "private",
        SLACK,
    )
    assert [n.note_id for n in read(current, lambda m: m.list_notes("user", contains="berlin"))] == ["fact:3"]
    with pytest.raises(NotFoundError):
        read(current, lambda m: m.get_note("user", "fact:1"))  # superseded: only in fact 3's history


def test_legacy_facts(legacy):
    assert read(legacy, lambda m: m.note_users()) == ["family", "project", "security", "user"]
    notes = read(legacy, lambda m: m.list_notes("user"))
    assert [(n.note_id, n.content) for n in notes] == [("fact:2", "timezone: Europe/Berlin"), ("fact:1", "name: Sam")]
    assert notes[0].details == {"id": 2, "key": "timezone", "source": "conversation", "history": []}


def test_episodes_group(current):
    write(
        current,
        (
            "INSERT INTO episodes (id, session_id, summary, topics, importance, start_time, end_time, created_at) "
            "VALUES (3, ?, 'Talked about lunch.', 'Lunch, food ,', 0.2, '2026-01-01 12:00:00', "
            "'2026-01-01 12:05:00', '2026-01-01 13:00:00')",
            (SUB,),
        ),
    )
    notes = read(current, lambda m: m.list_notes("episodes"))
    assert [(n.note_id, n.tags) for n in notes] == [
        ("episode:2", ["deploy", "staging"]),
        ("episode:1", ["docker", "disk space", "build server"]),
        ("episode:3", ["lunch", "food"]),  # comma-separated text
    ]
    first = notes[0]
    assert first.content == "A staging deploy was requested and denied because of the deploy freeze."
    assert first.created_at == "2026-02-27T22:00:00.000000+00:00"
    assert {k: first.details[k] for k in ("importance", "emotional_tone", "outcome", "session_id", "start", "end")} == {
        "importance": 0.85,
        "emotional_tone": "frustrated",
        "outcome": "blocked",
        "session_id": SLACK,
        "start": "2026-02-27T16:02:45.000000+00:00",
        "end": "2026-02-27T16:03:05.000000+00:00",
    }
    tags = dict(read(current, lambda m: m.note_tags("episodes")))
    assert tags == {"deploy": 1, "staging": 1, "docker": 1, "disk space": 1, "build server": 1, "lunch": 1, "food": 1}
    assert [n.note_id for n in read(current, lambda m: m.list_notes("episodes", tags=["Docker"]))] == ["episode:1"]


# -- legacy sessions and schedules -------------------------------------------------------------------------------


def test_legacy_sessions_and_events(legacy):
    (session,) = read(legacy, lambda m: m.sessions_page())
    assert session.session_id == TG
    assert (session.created_at, session.updated_at) == (
        "2025-12-03T08:01:12.482913+00:00",
        "2025-12-06T10:00:02.000000+00:00",
    )
    assert session.details == {"messages": 12, "roles": "assistant 5, tool 1, user 6"}
    events = read(legacy, lambda m: m.recall(TG))
    rowids = [r[0] for r in rows(legacy, "SELECT rowid FROM messages WHERE session_id = ? ORDER BY rowid", (TG,))]
    assert [e.sequence for e in events] == rowids == list(range(1, 13))
    calls = events[1].payload
    assert (calls["role"], calls["content"], calls["message_id"], calls["importance"]) == (
        "assistant",
        "",
        "msg-02",
        0.3,
    )
    assert calls["tool_calls"] == [{"id": "call_01", "name": "terminal", "arguments": '{"command":"df -h /"}'}]
    tool = events[3].payload
    assert (tool["role"], tool["tool_call_id"], tool["tool_name"], tool["message_id"]) == (
        "tool",
        "call_01",
        "terminal",
        "msg-04",
    )
    assert events[2].payload["importance"] == 0.9
    assert events[9].payload["embedding_error"] == "embedding model not loaded: connection refused"
    assert events[6].created_at == "2025-12-04T19:20:03.000000+00:00"
    assert read(legacy, lambda m: m.read_summary_state(TG)) is None


def test_legacy_schedules(legacy):
    write(
        legacy,
        (
            "INSERT INTO scheduled_tasks (id, name, cron_expr, original_schedule, prompt, next_run_at, created_at, "
            "updated_at) VALUES ('six', 'six-fields', '0 30 9 * * 1-5', '30 9 weekdays', 'p', "
            "'2026-03-02T09:30:00+00:00', '2026-01-01 00:00:00', '2026-01-01 00:00:00'), "
            "('bad', 'broken', 'every blue moon', 'every blue moon', 'p', '2026-03-02T09:30:00+00:00', "
            "'2025-01-01 00:00:00', '2025-01-01 00:00:00')",
            (),
        ),
    )
    schedules = read(legacy, lambda m: m.schedules.search())
    by_id = {s.schedule_id: s for s in schedules}
    assert [s.schedule_id for s in schedules] == [
        "remind-passport",
        "six",
        "task-ci",
        "task-briefing",
        "weekly-report",
        "bad",
    ]  # newest first (created_at, then id, both descending)
    briefing = by_id["task-briefing"]
    assert briefing.cadence_json == '{"expression":"0 8 * * *","timezone":"UTC","type":"cron"}'
    assert (briefing.name, briefing.goal, briefing.user_id, briefing.status) == (
        "morning-briefing",
        "Give me a short briefing: calendar, weather, CI status.",
        "tool",
        "active",
    )
    assert (briefing.last_run_at, briefing.next_run_at) == (
        "2026-02-28T08:00:00.004211+00:00",
        "2026-03-01T08:00:00.000000+00:00",
    )
    assert briefing.created_at == "2025-12-05T07:55:03.000000+00:00"
    assert briefing.note == "as written: 'every day at 8am'"
    assert briefing.notification_policy == "always" and briefing.problem is None
    once = by_id["remind-passport"]
    assert once.cadence_json == '{"at":"2026-03-12T14:30:00.000000+00:00","type":"once"}'
    assert once.cadence.type == "once" and once.problem is None
    report = by_id["weekly-report"]
    assert (report.status, report.user_id) == ("paused", "config")
    assert report.cadence_json == '{"expression":"0 17 * * FRI","timezone":"UTC","type":"cron"}'
    assert report.note == "as written: 'fridays at 5pm'; trusted (runs in a trusted session)"
    six = by_id["six"]
    assert six.cadence_json == '{"expression":"30 9 * * 1-5","timezone":"UTC","type":"cron"}'
    assert "seconds field '0' dropped" in six.note and six.problem is None
    assert by_id["bad"].problem.startswith("cadence:")
    assert read(legacy, lambda m: m.schedules.count(status="paused")) == 1
    assert read(legacy, lambda m: m.schedules.runs("task-ci")) == []
    assert read(legacy, lambda m: m.schedules.search(cadence_type="once"))[0].schedule_id == "remind-passport"


# -- the recall: recency, salience, relevance ---------------------------------------------------------------------


def _recall_fixture(path):
    """The legacy file plus ten newer messages (so the fixture's own rows leave the recency list), six old
    messages whose vectors lie near msg-07's, and an old salient row with an unreadable embedding. The query is
    near msg-07 and msg-08 (both legacy JSON arrays); msg-10 has a NULL embedding."""
    v7 = np.asarray(json.loads(rows(path, "SELECT embedding FROM messages WHERE id = 'msg-07'")[0][0]))
    v8 = np.asarray(json.loads(bytes(rows(path, "SELECT embedding FROM messages WHERE id = 'msg-08'")[0][0])))
    rng = np.random.default_rng(77)
    statements = []
    insert = (
        "INSERT INTO messages (id, session_id, role, content, created_at, importance, embedding) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)"
    )
    salient = {3: 0.95, 6: 0.8, 9: 0.81}
    for i in range(1, 11):
        vector = unit(v7) if i == 5 else unit(rng.standard_normal(384))
        statements.append(
            (
                insert,
                (f"new-{i:02d}", TG, "user", f"newer message {i}", f"2025-12-07T09:00:{i:02d}.000000001+00:00",
                 salient.get(i, 0.2), f32(vector)),
            )
        )  # fmt: skip
    for i in range(1, 7):
        vector = unit(unit(v7) + 0.35 * unit(rng.standard_normal(384)))
        statements.append(
            (insert, (f"old-{i}", TG, "assistant", f"old message {i}", f"2025-11-0{i} 12:00:00", 0.5, f32(vector)))
        )
    statements.append(
        (insert, ("msg-00", TG, "user", "very important, very old", "2025-11-01 00:00:00", 0.99, b"\x00junk"))
    )
    write(path, *statements)
    return unit(v7 + 0.9 * v8).astype(np.float32)


def _expected(path, session, query):
    """The three lists as aidaemon's SQL and Rust compute them, from the raw rows."""
    found = rows(
        path,
        "SELECT id, importance, embedding FROM messages WHERE session_id = ? ORDER BY created_at DESC, rowid DESC",
        (session,),
    )
    recency = [r[0] for r in found[:10]]
    salience = [r[0] for r in found if r[1] is not None and r[1] >= 0.8][:5]
    seen = set(recency) | set(salience)
    q = np.asarray(query, dtype=np.float64)
    cosines = {}
    for mid, _, blob in [r for r in found if r[2] is not None][:2000]:
        raw = blob if isinstance(blob, bytes) else blob.encode()
        if len(raw) == 1536:
            v = np.frombuffer(raw, dtype="<f4").astype(np.float64)
        elif raw[:1] == b"[":
            v = np.asarray(json.loads(raw), dtype=np.float32).astype(np.float64)
        else:
            continue
        cosines[mid] = float(v @ q / (np.linalg.norm(v) * np.linalg.norm(q)))
    passing = sorted([(m, c) for m, c in cosines.items() if m not in seen and c > 0.65], key=lambda mc: -mc[1])
    return recency, salience, passing[:5], cosines


def test_recall_three_lists(legacy):
    query = _recall_fixture(legacy)
    recency, salience, relevance, cosines = _expected(legacy, TG, query)
    assert recency == [f"new-{i:02d}" for i in range(10, 0, -1)]
    assert salience == ["new-09", "new-06", "new-03", "msg-11", "msg-03"]  # by time: msg-00 (0.99) is too old
    over = sorted(m for m, c in cosines.items() if c > 0.65)
    assert over == ["msg-07", "msg-08", "new-05", "old-1", "old-2", "old-3", "old-4", "old-5", "old-6"]
    assert [m for m, _ in relevance] == ["msg-07", "old-5", "old-6", "old-2", "old-4"]  # 8 unseen pass: 5 kept

    result = read(
        legacy,
        lambda m: m.search("aidaemon", TG, "rain in Berlin?", options=SearchOptions(query_embedding=query), top_k=3),
    )
    assert result.retriever == "aidaemon"
    assert result.lists == {"recency": recency, "salience": salience, "relevance": [m for m, _ in relevance]}
    merged = recency + ["msg-11", "msg-03"] + [m for m, _ in relevance]
    assert [h.chunk_id for h in result.hits] == merged  # top_k is not applied: the agent takes no limit
    assert [h.rank for h in result.hits] == list(range(1, 18))
    for k, (mid, cos) in enumerate(relevance, 1):
        h = result.hits[11 + k]
        assert h.chunk_id == mid
        assert (h.vector_raw, h.vector_rank, h.embedding_model) == (pytest.approx(cos, abs=1e-6), k, MODEL_NAME)
        assert h.vector_score == pytest.approx(cos, abs=1e-6)
        assert f"relevance: cosine {cos:.6f} > 0.65, " in " ".join(h.notes)
    assert all(h.vector_raw is None for h in result.hits[:12])
    assert all(h.score == 1.0 for h in result.hits)
    by_id = {h.chunk_id: h for h in result.hits}
    assert by_id["new-05"].metadata["cosine"] == pytest.approx(cosines["new-05"], abs=1e-6)
    assert cosines["new-05"] > 0.65  # highly similar, but already taken by recency
    assert "already taken by recency, so the relevance leg skipped it" in by_id["new-05"].notes[2]
    assert by_id["new-10"].notes[0].startswith("recency: 1st newest of 29 messages")
    assert by_id["msg-11"].notes[1] == "salience: importance 0.85 ≥ 0.8, the 4th newest of 6 important messages"
    assert by_id["msg-11"].notes[-1] == "merged: from salience"
    assert by_id["new-09"].notes[-1] == "merged: from recency (also in salience)"
    assert by_id["new-09"].sequence_start == rows(legacy, "SELECT rowid FROM messages WHERE id = 'new-09'")[0][0]
    assert dict(result.vector_errors).keys() == {"msg-00", "msg-10"}
    assert dict(result.vector_errors)["msg-10"] == "no embedding (NULL): embedding model not loaded: connection refused"
    assert dict(result.vector_errors)["msg-00"].startswith("unknown embedding encoding: 5 bytes")
    unseen = {m: c for m, c in cosines.items() if m not in set(recency) | set(salience)}
    leg = result.legs["vector"]
    assert (leg.candidates, leg.min, leg.max) == (
        len(unseen),
        pytest.approx(min(unseen.values()), abs=1e-6),
        pytest.approx(max(unseen.values()), abs=1e-6),
    )
    assert result.legs["salience"].candidates == 6 and result.legs["fts"].candidates == 0
    assert result.models == [MODEL_NAME] and result.skipped_models == {}
    assert result.steps[1].startswith("Salience: messages with importance ≥ 0.8, the 5 newest")
    pool = {h.chunk_id: h for h in result.pool}
    assert len(pool) == 29 and pool["msg-00"].notes[1].endswith("but not among the 5 newest important messages")

    same = read(legacy, lambda m: m.hybrid_query(TG, "rain in Berlin?", query_embedding=query))
    assert same.lists == result.lists and [h.chunk_id for h in same.hits] == merged


def test_recall_without_the_model(legacy, monkeypatch):
    _recall_fixture(legacy)

    def missing(*args, **kwargs):
        raise EmbeddingError("the semantic model is not installed")

    monkeypatch.setattr(base, "choose_backend", missing)
    result = read(legacy, lambda m: m.search("aidaemon", TG, "rain in Berlin?"))
    assert result.lists["relevance"] == [] and result.lists["salience"][0] == "new-09"
    assert len(result.lists["recency"]) == 10
    assert "the semantic model is not installed" in result.skipped_models[MODEL_NAME]
    assert result.models == [] and all(h.vector_raw is None for h in result.hits)
    assert result.steps[-1].startswith("Relevance left out:")


def test_recall_over_episodes(current):
    query = np.random.default_rng(3).standard_normal(384).astype(np.float32)
    result = read(
        current, lambda m: m.search("aidaemon", SLACK, "deploy freeze", options=SearchOptions(query_embedding=query))
    )
    assert result.steps[0].startswith("This session has no legacy messages")
    assert result.lists == {"recency": ["episode:2"], "salience": ["episode:2"], "relevance": []}
    (h,) = result.hits
    blob = rows(current, "SELECT embedding FROM episodes WHERE id = 2")[0][0]
    v = np.frombuffer(blob, dtype="<f4").astype(np.float64)
    q = query.astype(np.float64)
    assert h.metadata["cosine"] == pytest.approx(float(v @ q / np.linalg.norm(v) / np.linalg.norm(q)), abs=1e-6)
    assert h.metadata["topics"] == ["deploy", "staging"] and h.sequence_start is None
    assert h.notes[1] == "salience: importance 0.85 ≥ 0.8, the 1st newest of 1 important episodes (already in recency)"
    with pytest.raises(NotFoundError):
        read(current, lambda m: m.search("aidaemon", "nobody", "x", options=SearchOptions(query_embedding=query)))


# -- encrypted ----------------------------------------------------------------------------------------------------


def _state(path):
    """sha256, mtime and mode of a file and of its -wal when there is one."""
    out = {}
    for p in (Path(path), Path(f"{path}-wal")):
        if p.exists():
            st = p.stat()
            out[p.name] = (hashlib.sha256(p.read_bytes()).hexdigest(), st.st_mtime_ns, stat.S_IMODE(st.st_mode))
    return out


async def _every_read(m):
    sessions = await m.sessions_page()
    out = [await m.info(), await m.tables(), await m.list_sessions()]
    for s in sessions:
        out += [
            await m.recall(s.session_id),
            await m.read_summary_state(s.session_id),
            await m.context_preview(s.session_id, 2000),
            await m.search("aidaemon", s.session_id, "disk", options=SearchOptions(query_embedding=np.ones(384))),
        ]
    for group in await m.note_users():
        out += [await m.list_notes(group), await m.note_tags(group)]
    out += [await m.schedules.search(), await m.data_version()]
    return [s.session_id for s in sessions]


def test_encrypted_needs_the_key(tmp_path):
    sqlcipher3 = pytest.importorskip("sqlcipher3")
    assert sqlcipher3
    path = fx.make_encrypted_aidaemon(tmp_path / "aidaemon.db")
    plain = fx.make_aidaemon(tmp_path / "plain.db")
    before = _state(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert asyncio.run(inspect_database(path)).format == "encrypted"
    with pytest.raises(StoreOpenError, match="encrypted — provide the key"):
        read(path, lambda m: m.sessions_page())
    with pytest.raises(StoreOpenError, match="wrong key"):
        read(path, lambda m: m.sessions_page(), key="0" * 64)

    async def listing(m):
        return m.format, [(s.session_id, s.created_at, s.updated_at, s.details) for s in await m.sessions_page()]

    fmt, sessions = read(path, listing, key=fx.AIDAEMON_KEY)
    assert fmt == "aidaemon"
    assert sessions == read(plain, listing)[1]
    assert [s[0] for s in sessions] == [SLACK, TG, SUB]
    assert read(path, _every_read, key=fx.AIDAEMON_KEY) == [SLACK, TG, SUB]
    assert asyncio.run(inspect_database(path, key=fx.AIDAEMON_KEY)).format == "aidaemon"
    after = _state(path)
    assert after["aidaemon.db"] == before["aidaemon.db"]  # the encrypted file: same bytes, same mtime, mode 0600
    # SQLCipher's read-only open of a WAL file leaves an empty -wal (and a -shm) beside it: nothing is written to it
    assert after.get("aidaemon.db-wal", ("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",))[0] == (
        hashlib.sha256(b"").hexdigest()
    )


# -- no writes ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["current", "legacy"])
def test_reads_never_write(tmp_path, variant):
    path = fx.make_aidaemon(tmp_path / "aidaemon.db", variant)
    before, files = _state(path), sorted(os.listdir(tmp_path))
    assert before["aidaemon.db"][2] == 0o600
    assert read(path, _every_read)
    assert _state(path) == before
    assert sorted(os.listdir(tmp_path)) == files


@pytest.mark.parametrize("read_only", [True, False])
def test_writes_aidaemon_does_not_make_are_refused(current, read_only):
    """Appending events and summaries, and creating scheduled tasks, are aidaemon's own (refused even with editing
    enabled); read-only, facts and sessions are refused too. Nothing is written either way."""
    before = _state(current)

    async def attempts(m):
        refused = []
        calls = [
            lambda: m.store(TG, 99, {"role": "user", "content": "x"}),
            lambda: m.write_summary_state(TG, {"summary": "s"}, 0),
            lambda: m.schedules.create("tool", "goal", {"type": "interval", "every_secs": 3600}),
        ]
        if read_only:
            calls += [
                lambda: m.save_note("user", "x: y"),
                lambda: m.delete_note("user", "fact:3"),
                lambda: m.forget(TG),
            ]
        for call in calls:
            with pytest.raises(ReadOnlyError) as info:
                await call()
            refused.append(str(info.value))
        return refused

    messages = read(current, attempts, read_only=read_only)
    assert len(messages) == (6 if read_only else 3)
    assert all(msg.endswith("nothing was changed") or "enable editing" in msg for msg in messages)
    assert sum("aidaemon appends its events" in msg for msg in messages) == 2
    assert sum("aidaemon creates its scheduled tasks" in msg for msg in messages) == 1
    assert _state(current) == before


def _listing(path):
    return read(path, lambda m: m.sessions_page(limit=1000))


@pytest.mark.parametrize(
    ("times", "in_sql"),
    [
        # chrono's RFC 3339 beside SQLite's datetime('now') in one session: ordered in SQL (a second without a fraction
        # sorts before the same second with one)
        (["2026-03-01T10:00:00.500000000+00:00", "2026-03-01 10:00:00", "2026-03-01T09:59:59+00:00"], True),
        # a shape SQL cannot order ('Z', another offset): every row parsed, as before
        (["2026-03-01T10:00:00Z", "2026-03-01T12:00:00+02:00", "2026-03-01 10:30:00"], False),
        # the right shape but no time, and the largest text: every row parsed
        (["2026-03-01T10:00:00+00:00", "2026-13-45T99:00:00+00:00", "2026-03-01T09:00:00+00:00"], None),
    ],
)
def test_session_times_from_sql_equal_those_parsed_row_by_row(tmp_path, monkeypatch, times, in_sql):
    """A session's count, first and last time come from one pass over the (session_id, created_at) index when its
    times have shapes whose text orders as their time does, instead of parsing every event (the list at 500,000
    events: 953 → 92 ms, see bench_formats): the listing is the same as parsing them all."""
    from oxmem_gui.core.formats.aidaemon_times import _KIND

    path = fx.make_aidaemon(tmp_path / "a.db")
    conn = apsw.Connection(str(path))
    conn.execute("DELETE FROM events WHERE created_at NOT GLOB '*+00:00'")  # the fixture mixes in other shapes too
    conn.executemany(
        "INSERT INTO events (session_id, event_type, data, created_at) VALUES ('mixed', 'user_message', ?, ?)",
        [(json.dumps({"content": f"turn {i}"}), t) for i, t in enumerate(times)],
    )
    kinds = conn.execute(f"SELECT sum(DISTINCT {_KIND}) FROM events WHERE session_id = 'mixed'").fetchone()[0]
    conn.close()
    assert kinds == {True: 3, False: 6, None: 1}[in_sql]  # both shapes; others beside one; one shape
    fast = _listing(path)
    monkeypatch.setattr("oxmem_gui.core.formats.aidaemon_times._KIND", "4")  # every session parsed row by row
    assert _listing(path) == fast
    mixed = next(r for r in fast if r.session_id == "mixed")
    assert mixed.details["events"] == 3
    first, last = {True: (2, 0), False: (0, 2), None: (2, 0)}[in_sql]  # 12:00+02:00 is 10:00 UTC, before 10:30
    assert (mixed.created_at, mixed.updated_at) == (when(times[first]), when(times[last]))


def test_summary_upper_in_sql_equals_every_event_parsed(tmp_path, monkeypatch):
    """The event a summary reaches (the last at or before its time) is found in SQL, with only the events of the
    summary's own second parsed, so opening a session of 125,000 events no longer reads them all (3.4 s → 16 ms):
    for limits before, between, inside and after the events' seconds it equals comparing every event parsed."""
    from oxmem_gui.core.formats.aidaemon_times import upper_at

    path = fx.make_aidaemon(tmp_path / "a.db")
    conn = apsw.Connection(str(path))
    times = ["2026-03-01 10:00:00", "2026-03-01T10:00:00.250+00:00", "2026-03-01T10:00:00.750000001+00:00",
             "2026-03-01T10:00:01+00:00", "2026-03-01 10:00:02", "2026-03-02T00:00:00+00:00"]  # fmt: skip
    conn.executemany(
        "INSERT INTO events (session_id, event_type, data, created_at) VALUES ('s', 'user_message', '{}', ?)",
        [(t,) for t in times],
    )
    ids = [i for (i,) in conn.execute("SELECT id FROM events WHERE session_id = 's' ORDER BY id")]
    limits = ["2026-02-28T00:00:00Z", "2026-03-01T10:00:00+00:00", "2026-03-01T10:00:00.5+00:00",
              "2026-03-01 10:00:00.75", "2026-03-01T10:00:01.000001+00:00", "2026-03-01T12:00:02+02:00",
              "2026-03-03T00:00:00+00:00", "not a time", None]  # fmt: skip
    fast = [upper_at(conn, "events", "id", "s", limit) for limit in limits]
    monkeypatch.setattr("oxmem_gui.core.formats.aidaemon_times.UTC_TIMES", ("no such shape", "no such shape"))
    parsed = [upper_at(conn, "events", "id", "s", limit) for limit in limits]
    conn.close()
    assert fast == parsed == [0, ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], 0, 0]


def test_the_session_list_is_read_again_only_when_the_file_changed(current):
    """Paging on reuses the list (its order is known only once every session is read: 90 → 0.3 ms for the next
    page at 500,000 events); another program's commit, and this reader's own edit, are seen by the next page."""

    async def go(m):
        first = await m.sessions_page(limit=2)
        calls = []
        original = m._sessions
        m._sessions = lambda conn, contains: calls.append(contains) or original(conn, contains)
        rest = await m.sessions_page(after=(first[-1].updated_at, first[-1].session_id))
        assert calls == []
        write(current, ("INSERT INTO events (session_id, event_type, data, created_at) VALUES "
                        "('new', 'user_message', '{}', '2027-01-01T00:00:00+00:00')", ()))  # fmt: skip
        newest = await m.sessions_page(limit=2)
        await m.forget("new")
        after_forget = await m.sessions_page(limit=2)
        return first, rest, newest, after_forget, calls

    first, rest, newest, after_forget, calls = read(current, go, read_only=False)
    assert [r.session_id for r in first + rest] == [SLACK, TG, SUB]
    assert [r.session_id for r in newest] == ["new", SLACK] and [r.session_id for r in after_forget] == [SLACK, TG]
    assert calls == [None, None]
