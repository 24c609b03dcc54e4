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
from oxmem_gui.core.errors import NotFoundError, ReadOnlyError, StoreOpenError
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
    assert set(c.refusals) == {"events", "turns", "summary"} and c.editable and not c.note_tags
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
                        "('new', 'user_message', '{}', '2037-01-01T00:00:00+00:00')", ()))  # fmt: skip
        newest = await m.sessions_page(limit=2)
        await m.forget("new")
        after_forget = await m.sessions_page(limit=2)
        return first, rest, newest, after_forget, calls

    first, rest, newest, after_forget, calls = read(current, go, read_only=False)
    assert [r.session_id for r in first + rest] == [SLACK, TG, SUB]
    assert [r.session_id for r in newest] == ["new", SLACK] and [r.session_id for r in after_forget] == [SLACK, TG]
    assert calls == [None, None]
