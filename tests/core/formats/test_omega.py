"""The Omega reader (FORMATS.md §B): conversations, messages, facts and tasks through the one reader interface,
and Omega's own recall reproduced exactly. Expected values come from the raw rows (plain apsw), never from the
reader itself."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import re
from pathlib import Path

import apsw
import pytest

from oxmem_gui.core.errors import InvalidInputError, NotFoundError, ReadOnlyError
from oxmem_gui.core.formats.omega import OmegaReader
from oxmem_gui.core.memory import inspect_database, open_memory
from tests.core.formats.fixtures import OMEGA_CONVERSATIONS, OMEGA_MESSAGES, OMEGA_TASKS, make_omega

C = OMEGA_CONVERSATIONS
M = OMEGA_MESSAGES
EXTRA = "0b7e2a10-5c1d-4c1a-8d01-0000000000e1"  # an extra closed conversation of sender 4242 (see _add_recall_rows)
FILLER = "0b7e2a10-5c1d-4c1a-8d01-0000000000e2"  # an extra conversation of sender 77


def run(coro):
    return asyncio.run(coro)


@pytest.fixture(params=["current", "old"])
def variant(request):
    return request.param


@pytest.fixture
def omega(tmp_path, variant):
    return make_omega(tmp_path / f"omega-{variant}.db", variant)


@pytest.fixture
def current(tmp_path):
    return make_omega(tmp_path / "omega.db")


async def _with(path, fn):
    memory = await open_memory(path)
    async with memory:
        return await fn(memory)


def _sql(path: Path, query: str, args=()) -> list[tuple]:
    """Plain apsw, independent of the reader (a read-write connection so SQLite tidies its WAL files on close)."""
    conn = apsw.Connection(str(path))
    try:
        return conn.execute(query, args).fetchall()
    finally:
        conn.close()


# -- opening --------------------------------------------------------------------------------------------------


def test_both_variants_open_as_omega(omega, variant):
    async def check(m):
        assert isinstance(m, OmegaReader) and m.format == "omega" and m.read_only
        caps = m.capabilities
        assert (caps.format, caps.label) == ("omega", "Omega memory")
        assert (caps.sessions_label, caps.notes_label, caps.group_label) == ("Conversations", "Facts", "Sender")
        assert caps.has_sessions and caps.has_notes and caps.has_schedules and caps.has_search
        assert caps.editable and not caps.note_tags  # its facts, once editing is enabled; facts have no tags
        assert set(caps.refusals) == {"events", "turns", "summary"}
        assert all(r == OmegaReader.REASON for r in caps.refusals.values())
        assert [(r.name, r.scope, r.tunable) for r in m.retrievers()] == [("omega-recall", "session", False)]
        return await m.info()

    info = run(_with(omega, check))
    assert info.format == "omega" and info.journal_mode == "wal" and info.embeddings == []
    if variant == "current":
        assert info.markers == [
            "_migrations: 13 applied, latest 013_multi_lessons",
            "conversations: lifecycle columns status/summary/last_activity (003 or later)",
            "conversations.project present (011 or later)",
            "facts per sender (sender_id)",
            "messages_fts present (004 or later, user messages only)",
            "scheduled_tasks columns beyond 005: task_type, retry_count, last_error, project",
            "later tables: outcomes, lessons, project_sessions",
        ]
    else:
        assert info.markers == [
            "_migrations: 6 applied, latest 006_limitations",
            "conversations: lifecycle columns status/summary/last_activity (003 or later)",
            "conversations: no project column",
            "facts per sender (sender_id)",
            "messages_fts present (004 or later, user messages only)",
            "scheduled_tasks columns beyond 005: none",
        ]
    assert run(inspect_database(omega)).format == "omega"


def test_open_read_write_edits_facts_only(current):
    async def check():
        async with await open_memory(current, read_only=False) as m:
            return m.read_only, sorted(m.capabilities.refusals)

    assert run(check()) == (False, ["events", "summary", "turns"])


def test_writes_are_refused_with_the_reason(current):
    async def check(m):
        calls = [
            ("events", m.store(C["current"], 99, {"role": "user", "content": "hi"})),
            ("sessions", m.forget(C["current"])),
            ("notes", m.save_note("4242", "likes: tea", [])),
            ("notes", m.delete_note("4242", "x")),
            ("summary", m.write_summary_state(C["current"], {"summary": "x"})),
            ("schedules", m.schedules.create(user_id="4242", name="x", goal="x", cadence="{}")),
            ("schedules", m.schedules.pause(OMEGA_TASKS["briefing"])),
        ]
        for kind, coro in calls:
            with pytest.raises(ReadOnlyError) as exc:
                await coro
            text = str(exc.value)
            if kind == "schedules" and "creates its tasks" in text:  # Omega never creates one from outside
                assert text.endswith("oxmem edits and cancels them; nothing was changed")
                continue
            if kind in OmegaReader.EDITS:  # facts, conversations and tasks, once editing is enabled
                assert text == f"{current} is open read-only; enable editing to change it"
                continue
            assert text.startswith(f"{current.name} is an Omega memory file: ")
            assert OmegaReader.REASON in text and text.endswith("nothing was changed")

    before = _sql(current, "SELECT count(*) FROM messages")
    run(_with(current, check))
    assert _sql(current, "SELECT count(*) FROM messages") == before


# -- conversations and messages -------------------------------------------------------------------------------


def test_sessions_newest_first_with_details(omega, variant):
    async def check(m):
        return await m.sessions_page(), await m.sessions_page(contains="8D01-000000000004"), await m.list_sessions()

    rows, filtered, infos = run(_with(omega, check))
    assert [r.session_id for r in rows] == [
        C["current"],
        C["jonas-current"],
        C["lisbon"],
        C["jonas-dentist"],
        C["dentist"],
    ]
    updated = dict(_sql(omega, "SELECT id, updated_at FROM conversations"))
    for r in rows:  # 'YYYY-MM-DD HH:MM:SS' (UTC) shown as RFC 3339
        assert r.updated_at == updated[r.session_id].replace(" ", "T") + ".000000+00:00"
    lisbon = rows[2]
    assert lisbon.agent_identity == "telegram:4242"
    assert lisbon.created_at == "2026-02-05T19:02:11.000000+00:00"
    expected = {
        "status": "closed",
        "channel": "telegram",
        "sender": "4242",
        "project": "travel",
        "summary": _sql(omega, "SELECT summary FROM conversations WHERE id = ?", (C["lisbon"],))[0][0],
        "last_activity": "2026-02-05T19:07:22.000000+00:00",
    }
    if variant == "old":
        del expected["project"]  # no project column before 011
    assert lisbon.details == expected
    assert rows[0].details == {
        "status": "active",
        "channel": "telegram",
        "sender": "4242",
        "last_activity": "2026-02-28T10:03:10.000000+00:00",
    }
    assert [r.session_id for r in filtered] == [C["jonas-dentist"]]
    assert [(i.session_id, i.event_count, i.last_sequence) for i in infos] == [
        (C["current"], 4, 14),
        (C["jonas-current"], 4, 22),
        (C["lisbon"], 6, 10),
        (C["jonas-dentist"], 4, 18),
        (C["dentist"], 4, 4),
    ]


def test_events_of_a_conversation(omega):
    async def check(m):
        return await m.events_page(C["lisbon"]), await m.recall(C["lisbon"], limit=2)

    events, last_two = run(_with(omega, check))
    raw = _sql(
        omega,
        "SELECT rowid, id, role, content, timestamp, metadata_json FROM messages WHERE conversation_id = ? "
        "ORDER BY rowid",
        (C["lisbon"],),
    )
    assert [e.sequence for e in events] == [5, 6, 7, 8, 9, 10]
    assert [e.payload["role"] for e in events] == ["user", "assistant"] * 3
    for e, (rowid, mid, role, content, ts, meta) in zip(events, raw, strict=True):
        assert e.sequence == rowid and e.created_at == ts.replace(" ", "T") + ".000000+00:00"
        expected = {"role": role, "content": content, "message_id": mid, "timestamp": ts}
        if meta is not None:
            expected["metadata"] = json.loads(meta)
        assert e.payload == expected
    assert events[1].payload["metadata"] == {"provider": "claude-code", "model": "claude-sonnet-4", "elapsed_ms": 2310}
    assert events[0].payload["message_id"] == M[5]
    assert [e.sequence for e in last_two] == [9, 10]
    with pytest.raises(NotFoundError):
        run(_with(omega, lambda m: m.events_page("no-such-conversation")))


def test_a_page_of_messages_is_read_by_the_conversation_index(omega):
    """A page past a sequence, of a given size, is that slice of the conversation, read with LIMIT (never the whole
    conversation); the counts come from one aggregate."""

    async def pages(m):
        return (
            await m.events_page(C["lisbon"], 6, 2),
            await m.events_page(C["lisbon"], 10, 5),
            await m.session_stats([C["lisbon"]]),
        )

    middle, past_the_end, stats = run(_with(omega, pages))
    assert [e.sequence for e in middle] == [7, 8] and past_the_end == []
    assert (stats[C["lisbon"]].event_count, stats[C["lisbon"]].last_sequence) == (6, 10)
    plan = " ".join(
        str(r[-1])
        for r in _sql(
            omega,
            "EXPLAIN QUERY PLAN SELECT rowid FROM messages WHERE conversation_id = ? AND rowid > ? ORDER BY rowid "
            "LIMIT ?",
            (C["lisbon"], 6, 2),
        )
    )
    assert "idx_messages_conversation" in plan, plan


def test_malformed_rows_are_flagged_not_fatal(current):
    conn = apsw.Connection(str(current))
    conn.execute(
        "INSERT INTO messages (id, conversation_id, role, content, timestamp, metadata_json) VALUES "
        "('bad-meta', ?, 'assistant', 'ok text', '2026-02-28 10:04:00', '{not json'), "
        "('bad-content', ?, 'assistant', x'00ff', '2026-02-28 10:05:00', NULL)",
        (C["current"], C["current"]),
    )
    conn.close()

    events = run(_with(current, lambda m: m.events_page(C["current"])))
    bad_meta, bad_content = events[-2], events[-1]
    assert (bad_meta.sequence, bad_content.sequence) == (23, 24)
    assert bad_meta.payload["role"] == "assistant" and bad_meta.payload["content"] == "ok text"
    assert bad_meta.payload["metadata_json"] == "{not json"
    assert bad_meta.payload["metadata_error"].startswith("not valid JSON")
    assert bad_content.payload["role"] == "system"
    assert bad_content.payload["content"].startswith("⚠ unreadable row: assistant content is bytes, not text")
    assert bad_content.payload["omega_role"] == "assistant"


def test_summary_of_closed_conversations(omega):
    async def check(m):
        return (
            await m.read_summary_state(C["lisbon"]),
            await m.read_summary_state(C["current"]),
            await m.context_preview(C["dentist"], 10_000),
        )

    lisbon, active, preview = run(_with(omega, check))
    summary, last = _sql(
        omega,
        "SELECT summary, (SELECT max(rowid) FROM messages WHERE conversation_id = c.id) FROM conversations c "
        "WHERE id = ?",
        (C["lisbon"],),
    )[0]
    assert lisbon["summary"] == summary and lisbon["upper_sequence"] == last == 10 and lisbon["epoch"] == 0
    assert lisbon["metadata"]["status"] == "closed"
    assert active is None  # an active conversation has no summary yet
    assert [i.status for i in preview.items] == ["summarized"] * 4
    with pytest.raises(NotFoundError):
        run(_with(omega, lambda m: m.read_summary_state("nope")))


# -- facts ----------------------------------------------------------------------------------------------------


def test_facts_per_sender(omega):
    async def check(m):
        return (
            await m.note_users(),
            await m.list_notes("4242"),
            await m.list_notes("77"),
            await m.list_notes("4242", contains="oberkampf"),
        )

    users, marta, jonas, found = run(_with(omega, check))
    assert users == ["4242", "77"]
    raw = _sql(
        omega,
        "SELECT id, key, value, source_message_id, created_at, updated_at, rowid FROM facts WHERE sender_id = '4242'",
    )
    assert len(marta) == len(raw) == 6 and len(jonas) == 6
    # newest first; two facts of the same second, newest row first (the order pages are read in, in SQL)
    expected = sorted(raw, key=lambda r: (r[5], r[6]), reverse=True)
    assert [n.note_id for n in marta] == [r[0] for r in expected]
    assert [n.details["key"] for n in marta] == [
        "preferred_seat",
        "home_airport",
        "dentist",
        "timezone",
        "name",
        "language",
    ]
    dentist = next(n for n in marta if n.details["key"] == "dentist")
    row = next(r for r in raw if r[1] == "dentist")
    assert dentist.content == "dentist: Dr. Moreau, Rue Oberkampf"
    assert dentist.details == {"key": "dentist", "value": "Dr. Moreau, Rue Oberkampf", "source_message_id": M[3]}
    assert (dentist.user, dentist.tags, dentist.sequence) == ("4242", [], row[6])
    assert dentist.created_at == dentist.updated_at == "2026-02-02T08:12:45.000000+00:00"
    assert [n.note_id for n in found] == [dentist.note_id]
    assert all(n.user == "77" for n in jonas)
    got = run(_with(omega, lambda m: m.get_note("4242", dentist.note_id)))
    assert got == dentist


# -- scheduled tasks ------------------------------------------------------------------------------------------


def _once(at: str) -> str:
    return json.dumps({"at": at, "type": "once"}, separators=(",", ":"))


def _cron(expr: str) -> str:
    return json.dumps({"expression": expr, "timezone": "UTC", "type": "cron"}, separators=(",", ":"))


def test_schedules_for_every_repeat(omega, variant):
    schedules = {s.schedule_id: s for s in run(_with(omega, lambda m: m.schedules.search()))}
    expected = {  # name: (repeat in the file, cadence_json, status, next_run_at)
        "dentist-reminder": (None, _once("2026-02-11T19:00:00.000000+00:00"), "completed", None),
        "check-in": ("once", _once("2026-03-12T07:30:00.000000+00:00"), "active", "2026-03-12T07:30:00.000000+00:00"),
        "briefing": ("daily", _cron("0 7 * * *"), "active", "2026-03-02T07:00:00.000000+00:00"),
        "plants": ("weekly", _cron("0 18 * * 0"), "active", "2026-03-01T18:00:00.000000+00:00"),  # a Sunday
        "rent": ("monthly", _cron("0 8 1 * *"), "disabled", None),  # cancelled
        "standup": ("weekdays", _cron("45 8 * * 1-5"), "active", "2026-03-02T08:45:00.000000+00:00"),
        "jonas-dentist": (None, _once("2026-02-06T09:00:00.000000+00:00"), "completed", None),
        "car-inspection": (
            "once", _once("2026-03-15T09:00:00.000000+00:00"), "active", "2026-03-15T09:00:00.000000+00:00"
        ),
    }  # fmt: skip
    raw = {
        r[0]: r[1:]
        for r in _sql(omega, "SELECT id, repeat, status, sender_id, channel, description FROM scheduled_tasks")
    }
    assert set(schedules) == set(raw) == set(OMEGA_TASKS.values())
    for name, (repeat, cadence, status, next_run) in expected.items():
        s = schedules[OMEGA_TASKS[name]]
        file_repeat, _file_status, sender, channel, description = raw[s.schedule_id]
        assert file_repeat == repeat, name
        assert (s.cadence_json, s.status, s.next_run_at) == (cadence, status, next_run), name
        assert (s.user_id, s.channel_id, s.goal) == (sender, channel, description), name
        assert s.notification_policy == "always" and s.problem is None, name
    # the three spellings of due_at (T…Z, T without zone, a space) are the same UTC times
    assert {s.cadence.type for s in schedules.values()} == {"once", "cron"}
    delivered = schedules[OMEGA_TASKS["dentist-reminder"]]
    assert delivered.last_run_at == "2026-02-11T19:00:04.000000+00:00" and delivered.last_run_status == "success"
    assert delivered.name == "Remind Marta: dentist appointment with Dr. …"
    assert schedules[OMEGA_TASKS["rent"]].name == "Pay the rent"
    standup = schedules[OMEGA_TASKS["standup"]]
    assert standup.channel_context_id == "4242"
    if variant == "current":
        assert standup.consecutive_failures == 2 and standup.last_run_status == "failed"
        assert "retries 2" in standup.note and "last error: telegram: 502 Bad Gateway" in standup.note
        assert "project work" in standup.note
    else:  # no retry columns before 008
        assert standup.consecutive_failures == 0 and standup.last_run_status is None
    assert "reply target 4242" in standup.note
    active = run(_with(omega, lambda m: m.schedules.search(status="active", user_id="77")))
    assert [s.schedule_id for s in active] == [OMEGA_TASKS["car-inspection"]]


def test_a_delivered_repeating_task_stays_active(current):
    conn = apsw.Connection(str(current))
    conn.execute(
        "UPDATE scheduled_tasks SET status = 'delivered', delivered_at = '2026-03-02 07:00:01' WHERE id = ?",
        (OMEGA_TASKS["briefing"],),
    )
    conn.close()
    s = run(_with(current, lambda m: m.schedules.get(OMEGA_TASKS["briefing"])))
    assert (s.status, s.cadence_json, s.next_run_at) == ("active", _cron("0 7 * * *"), None)
    assert s.last_run_at == "2026-03-02T07:00:01.000000+00:00"
    assert "stays active" in s.note


# -- recall ---------------------------------------------------------------------------------------------------

#: user messages added to the fixture for the recall tests: (conversation, text); FILLER rows keep the phrase
#: in fewer than half the indexed rows (so FTS5's idf stays positive and the ranks differ)
_RECALL_ROWS = [
    (EXTRA, "dentist appointment dentist appointment reminder"),
    (EXTRA, "Is the dentist appointment on Thursday or on Friday, and should I bring the insurance card with me?"),
    (EXTRA, "dentist appointment"),
    (EXTRA, "appointment dentist, the other way round"),
    (EXTRA, 'She said "dentist appointment" twice'),
    (EXTRA, "my dentist appointment got moved again"),
    *[(FILLER, f"filler message number {i} about bikes and trains") for i in range(8)],
]


def _add_recall_rows(path: Path) -> None:
    conn = apsw.Connection(str(path))
    with conn:
        conn.execute(
            "INSERT INTO conversations (id, channel, sender_id, started_at, updated_at) VALUES "
            "(?, 'telegram', '4242', '2026-01-10 09:00:00', '2026-01-10 09:30:00'), "
            "(?, 'discord', '77', '2026-01-11 09:00:00', '2026-01-11 09:30:00')",
            (EXTRA, FILLER),
        )
        for i, (conversation, text) in enumerate(_RECALL_ROWS):
            conn.execute(
                "INSERT INTO messages (id, conversation_id, role, content, timestamp) VALUES (?, ?, 'user', ?, ?)",
                (f"extra-{i:02d}", conversation, text, f"2026-01-10 09:{i:02d}:00"),
            )
        conn.execute(
            "INSERT INTO messages (id, conversation_id, role, content, timestamp) VALUES "
            "('extra-assistant', ?, 'assistant', 'dentist appointment', '2026-01-10 09:59:00')",
            (EXTRA,),
        )
    conn.close()


def _expected_recall(path: Path, scope: str, query: str) -> list[tuple[str, str, int, float]]:
    """Omega's recall from the raw rows: every FTS match with its rank, then the filters in Python."""
    if len(query.encode()) < 3:
        return []
    expression = '"' + query.replace('"', '""') + '"'
    matches = _sql(path, "SELECT rowid, rank FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rank", (expression,))
    messages = {r[0]: (r[1], r[2]) for r in _sql(path, "SELECT rowid, id, conversation_id FROM messages")}
    sender = dict(_sql(path, "SELECT id, sender_id FROM conversations"))
    kept = []
    for rowid, rank in matches:
        mid, conversation = messages[rowid]
        if conversation != scope and sender[conversation] == sender[scope]:
            kept.append((mid, conversation, rowid, rank))
    return kept[:5]


def _tokens(text: str) -> list[str]:
    return [t.casefold() for t in re.findall(r"[^\W_]+", text)]


def _bm25(path: Path, phrase: list[str]) -> dict[int, float]:
    """FTS5's bm25 (k1 = 1.2, b = 0.75) of a one-phrase query, from the user rows' text (what the index holds)."""
    rows = {r[0]: _tokens(r[1]) for r in _sql(path, "SELECT rowid, content FROM messages WHERE role = 'user'")}
    n_rows = len(rows)
    avgdl = sum(len(t) for t in rows.values()) / n_rows
    k = len(phrase)
    freq = {r: sum(t[i : i + k] == phrase for i in range(len(t) - k + 1)) for r, t in rows.items()}
    having = sum(1 for f in freq.values() if f)
    idf = math.log((n_rows - having + 0.5) / (having + 0.5))
    idf = idf if idf > 0 else 1e-6
    return {r: -idf * f * 2.2 / (f + 1.2 * (1 - 0.75 + 0.75 * len(rows[r]) / avgdl)) for r, f in freq.items() if f}


@pytest.fixture
def recall_db(tmp_path):
    path = make_omega(tmp_path / "recall.db")
    _add_recall_rows(path)
    return path


def test_recall_same_sender_other_conversations_by_rank(recall_db):
    query = "dentist appointment"
    expected = _expected_recall(recall_db, C["current"], query)

    # what the filters removed: the scope conversation itself (message 13) and the other sender's (message 15)
    everything = {
        r[0] for r in _sql(recall_db, "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?", (f'"{query}"',))
    }
    assert {13, 15} <= everything and 8 not in everything  # message 8 is the assistant's: not indexed
    assert all(rowid not in (13, 15) for _, _, rowid, _ in expected)
    assert len(expected) == 5 and len({e[3] for e in expected}) == 5  # Omega's limit reached, no ties
    # the ranks are FTS5's bm25, computed here from the texts
    bm25 = _bm25(recall_db, ["dentist", "appointment"])
    for _, _, rowid, rank in expected:
        assert rank == pytest.approx(bm25[rowid], abs=1e-9)

    result = run(_with(recall_db, lambda m: m.search("omega-recall", C["current"], query, top_k=8)))
    assert result.retriever == "omega-recall" and result.fts_expression == '"dentist appointment"'
    assert [(h.chunk_id, h.session_id, h.sequence_start, h.fts_raw) for h in result.hits] == [
        (mid, conversation, rowid, pytest.approx(rank, abs=1e-12)) for mid, conversation, rowid, rank in expected
    ]
    for i, (h, (_, conversation, rowid, rank)) in enumerate(zip(result.hits, expected, strict=True), 1):
        assert h.rank == h.fts_rank == i
        assert h.score == pytest.approx(-rank, abs=1e-12) and h.fts_score == pytest.approx(-rank, abs=1e-12)
        assert h.vector_raw is None and h.vector_rank is None and h.vector_score == 0.0
        assert h.sequence_end == rowid
        assert h.metadata["conversation_id"] == conversation and h.metadata["role"] == "user"
        assert h.metadata["timestamp"].endswith("+00:00")
        assert any("lower is better" in n and "does not normalize" in n for n in h.notes)
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    ranks = [e[3] for e in expected]
    fts = result.legs["fts"]
    assert (fts.candidates, fts.min, fts.max) == (5, pytest.approx(min(ranks)), pytest.approx(max(ranks)))
    assert result.legs["vector"].candidates == 0
    steps = " | ".join(result.steps)
    assert "score = -rank" in steps and "LIMIT 5" in steps and "min(5, top_k) = 5" in steps
    assert M[1] in [h.chunk_id for h in result.hits]


def test_recall_top_k_only_lowers_the_five(recall_db):
    expected = _expected_recall(recall_db, C["current"], "dentist appointment")
    result = run(_with(recall_db, lambda m: m.search("omega-recall", C["current"], "dentist appointment", top_k=2)))
    assert [h.chunk_id for h in result.hits] == [e[0] for e in expected[:2]]
    assert [h.chunk_id for h in result.pool] == [e[0] for e in expected]  # Omega's five, all shown in the pool
    assert result.legs["fts"].candidates == 5
    assert any("min(5, top_k) = 2" in s for s in result.steps)
    via_hybrid = run(_with(recall_db, lambda m: m.hybrid_query(C["current"], "dentist appointment", top_k=3)))
    assert [h.chunk_id for h in via_hybrid.hits] == [e[0] for e in expected[:3]]


def test_recall_of_the_other_sender_excludes_marta(current):
    query = "book a flight to Lisbon"
    result = run(_with(current, lambda m: m.search("omega-recall", C["current"], query)))
    assert [h.chunk_id for h in result.hits] == [e[0] for e in _expected_recall(current, C["current"], query)] == [M[5]]
    jonas = run(_with(current, lambda m: m.search("omega-recall", C["jonas-dentist"], query)))
    assert [h.chunk_id for h in jonas.hits] == [M[19]]  # Jonas's own other conversation, not Marta's messages
    none = run(_with(current, lambda m: m.search("omega-recall", C["current"], "Sintra")))
    assert none.hits == [] and none.legs["fts"].candidates == 0  # only in an assistant message: not indexed


@pytest.mark.parametrize("query", ["ab", "é", " x"])
def test_recall_skips_queries_under_three_bytes(current, query):
    assert len(query.encode()) < 3
    result = run(_with(current, lambda m: m.search("omega-recall", C["current"], query)))
    assert result.hits == [] and result.pool == [] and result.fts_expression is None
    assert any(s.startswith("skipped: Omega ignores queries under 3 bytes") for s in result.steps)


def test_recall_counts_bytes_not_characters(recall_db):
    # "éa" is 2 characters but 3 bytes: Omega runs it (and finds nothing)
    result = run(_with(recall_db, lambda m: m.search("omega-recall", C["current"], "éa")))
    assert result.fts_expression == '"éa"' and not any(s.startswith("skipped") for s in result.steps)


def test_recall_query_with_double_quotes(recall_db):
    query = 'said "dentist appointment" twice'
    expected = _expected_recall(recall_db, C["current"], query)
    assert [e[0] for e in expected] == ["extra-04"]
    result = run(_with(recall_db, lambda m: m.search("omega-recall", C["current"], query)))
    assert result.fts_expression == '"said ""dentist appointment"" twice"'
    assert [(h.chunk_id, h.fts_raw) for h in result.hits] == [(e[0], pytest.approx(e[3], abs=1e-12)) for e in expected]
    lone = run(_with(recall_db, lambda m: m.search("omega-recall", C["current"], 'Dr. "Moreau')))
    assert lone.fts_expression == '"Dr. ""Moreau"' and lone.hits == []  # Dr. Moreau is only in assistant messages


def test_recall_errors(current):
    with pytest.raises(NotFoundError):
        run(_with(current, lambda m: m.search("omega-recall", "no-such-conversation", "dentist")))
    with pytest.raises(InvalidInputError, match="no ranking 'oxmem'"):
        run(_with(current, lambda m: m.search("oxmem", C["current"], "dentist")))
    with pytest.raises(InvalidInputError):
        run(_with(current, lambda m: m.search_notes("4242", "dentist")))


# -- reads never write ----------------------------------------------------------------------------------------


def _fingerprint(path: Path) -> dict[str, tuple[str, int] | None]:
    out = {}
    for suffix in ("", "-wal"):
        p = Path(f"{path}{suffix}")
        out[suffix] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) if p.exists() else None
    out["-shm exists"] = Path(f"{path}-shm").exists()
    return out


async def _read_everything(m) -> None:
    await m.info()
    for t in await m.tables():
        await m.table_page(t.name, 0, 50)
    sessions = await m.sessions_page()
    await m.list_sessions()
    await m.session_stats([s.session_id for s in sessions])
    for s in sessions:
        await m.events_page(s.session_id)
        await m.recall(s.session_id)
        await m.chunks_page(s.session_id)
        await m.session_models(s.session_id)
        await m.read_summary_state(s.session_id)
        await m.context_preview(s.session_id, 500)
        await m.search("omega-recall", s.session_id, "dentist appointment")
        await m.hybrid_query(s.session_id, "book a flight to Lisbon")
    for user in await m.note_users():
        await m.note_tags(user)
        for n in await m.list_notes(user):
            await m.get_note(user, n.note_id)
    for s in await m.schedules.search():
        await m.schedules.get(s.schedule_id)
        await m.schedules.runs(s.schedule_id)
        await m.schedules.run_count(s.schedule_id)
    await m.schedules.count()
    await m.schedules.due()
    await m.eviction_preview()
    await m.data_version()


def test_reads_never_write(omega):
    before = _fingerprint(omega)
    assert before["-wal"] is None and before["-shm exists"] is False
    os.utime(omega, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    before = _fingerprint(omega)
    run(_with(omega, _read_everything))
    run(inspect_database(omega))
    assert _fingerprint(omega) == before  # same bytes, same mtime, and no -wal/-shm left behind


def test_reads_never_write_while_omega_holds_the_wal(current):
    agent = apsw.Connection(str(current))  # Omega running: its WAL holds an uncommitted-to-the-file change
    agent.execute("PRAGMA wal_autocheckpoint = 0")
    agent.execute("UPDATE conversations SET last_activity = '2026-02-28 10:04:00' WHERE id = ?", (C["current"],))
    try:
        before = _fingerprint(current)
        assert before["-wal"] is not None
        rows = run(_with(current, lambda m: m.sessions_page()))
        assert rows[0].details["last_activity"] == "2026-02-28T10:04:00.000000+00:00"  # the WAL's change is seen
        run(_with(current, _read_everything))
        after = _fingerprint(current)
        assert after[""] == before[""] and after["-wal"] == before["-wal"]  # (readers may touch -shm: shared)
    finally:
        agent.close()
