"""Agno's ``SqliteDb`` (``core/formats/agno.py``, ``agno_memories.py``) on files written by Agno's own code (agno, a
test dependency; no model is called): found by its tables' columns, every session, message and memory shown as
Agno reads them back, its memory search reproduced, each edit read back by Agno, the hazards flagged, and the
file left as it was by reads and refusals."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
from datetime import datetime, timezone

import pytest

from oxmem_gui.core.api import ConflictError, NotFoundError, ReadOnlyError, check_store, open_memory
from oxmem_gui.core.formats.agno import AgnoReader
from tests.core.formats.framework_files import another_program, digest, searched_from_every_door

pytest.importorskip("sqlalchemy", reason="Agno's SqliteDb runs on SQLAlchemy (a test dependency)")
agno_sqlite = pytest.importorskip("agno.db.sqlite", reason="Agno writes these files (a test dependency)")

from agno.db.base import SessionType  # noqa: E402
from agno.db.schemas.memory import UserMemory  # noqa: E402
from agno.metrics import RunMetrics  # noqa: E402
from agno.models.message import Message  # noqa: E402
from agno.run.agent import RunOutput  # noqa: E402
from agno.session.agent import AgentSession  # noqa: E402

#: the times of the file's rows (2037, far from any day the tests run on)
T0 = 2_130_000_000
NOW = datetime(2037, 6, 1, 12, 0, tzinfo=timezone.utc)
WEATHER_CALL = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Berlin"}'}}


def agno_db(path, **tables: str):
    return agno_sqlite.SqliteDb(db_file=str(path), **tables)


def write(path, **tables: str) -> None:
    """Two users' memories, one memory without a user, and two sessions with runs, written by Agno."""
    db = agno_db(path, **tables)
    for i, (user, text, topics) in enumerate(
        [
            ("ana", "Lives in Kreuzberg", ["home", "Berlin"]),
            ("ana", "Likes green tea", ["food"]),
            ("bob", "Plays the cello", None),
            (None, "The office closes at six", ["work"]),
        ]
    ):
        db.upsert_user_memory(UserMemory(memory=text, topics=topics, user_id=user, created_at=T0 + 100 * i))
    for sid, user, runs in (
        (
            "s-ana",
            "ana",
            [
                [Message(role="system", content="Be brief."), Message(role="user", content="hello")]
                + [Message(role="assistant", content="Hi!")],
                [
                    Message(role="user", content="hello", from_history=True),
                    Message(role="user", content="Weather in Berlin?"),
                    Message(role="assistant", content=None, tool_calls=[WEATHER_CALL]),
                    Message(role="tool", content="sunny", tool_call_id="c1", tool_name="get_weather"),
                    Message(role="assistant", content="It is sunny."),
                ],
            ],
        ),
        ("s-bob", "bob", [[Message(role="user", content="tune my cello")]]),
    ):
        created = T0 + (1000 if sid == "s-ana" else 2000)
        db.upsert_session(AgentSession(session_id=sid, agent_id="helper", user_id=user, created_at=created))
        for index, messages in enumerate(runs):
            run = RunOutput(
                run_id=f"{sid}-r{index}", session_id=sid, agent_id="helper", user_id=user, messages=messages
            )
            run.created_at = created + index
            run.metrics = RunMetrics(input_tokens=1200 + index, output_tokens=30)
            db.upsert_run(run, session_id=sid, user_id=user, run_index=index)
    db.close()


def run(path, fn, read_only: bool = True):
    async def go():
        async with await open_memory(path, embedding="deterministic", read_only=read_only) as memory:
            if isinstance(memory, AgnoReader):
                memory._now = lambda: NOW  # type: ignore[method-assign]
            return await fn(memory)

    return asyncio.run(go())


@pytest.fixture
def agno_file(tmp_path):
    path = tmp_path / "agno.db"
    write(path)
    return path


def agno_memories(path, user):
    db = agno_db(path)
    try:
        return {m.memory_id: m for m in db.get_user_memories(user_id=user)}
    finally:
        db.close()


def agno_messages(path, session_id):
    db = agno_db(path)
    try:
        session = db.get_session(session_id, session_type=SessionType.AGENT)
        return None if session is None else session.get_messages()
    finally:
        db.close()


def test_sessions_and_messages_are_what_agno_reads(agno_file):
    before = digest(agno_file)

    async def read(memory):
        return (
            memory.capabilities,
            await memory.info(),
            await memory.sessions_page(),
            await memory.recall("s-ana"),
            await memory.recall("s-bob"),
        )

    caps, info, sessions, ana, bob = run(agno_file, read)
    assert info.format == "agno"
    assert (caps.notes_label, caps.note_noun, caps.has_schedules) == ("Memories", "memory", False)
    assert [(s.session_id, s.agent_identity, s.details) for s in sessions] == [
        ("s-bob", "helper", {"user": "bob", "runs": "1 run", "tokens": "1,200 in · 30 out"}),
        ("s-ana", "helper", {"user": "ana", "runs": "2 runs", "tokens": "2,401 in · 60 out"}),
    ]
    expected = agno_messages(agno_file, "s-ana")
    assert [(e.payload["role"], e.payload["content"]) for e in ana] == [(m.role, m.content or "") for m in expected]
    # the history copy of "hello" (the second run's first message, 4) is shown once, where it was said
    assert [e.sequence for e in ana] == [1, 2, 3, 5, 6, 7, 8]
    call, answer = ana[4].payload, ana[5].payload
    assert call["tool_calls"] == [{"id": "c1", "name": "get_weather", "arguments": '{"city":"Berlin"}'}]
    assert (answer["tool_call_id"], answer["name"], answer["run_id"]) == ("c1", "get_weather", "s-ana-r1")
    assert [e.payload["content"] for e in bob] == ["tune my cello"]
    assert digest(agno_file) == before


def test_memories_are_notes_of_their_user_topics_as_tags(agno_file):
    before = digest(agno_file)

    async def read(memory):
        groups = await memory.note_users()
        ana = await memory.list_notes("ana")
        page = await memory.notes_page("ana", limit=1)
        rest = await memory.notes_page("ana", after=(page[0].updated_at, page[0].sequence), limit=5)
        return groups, ana, page + rest, await memory.list_notes("ana", tags=["Berlin"])

    groups, ana, paged, tagged = run(agno_file, read)
    assert groups == ["ana", "bob", "(no user)"]
    agno = agno_memories(agno_file, "ana")
    assert [(n.note_id, n.content, n.tags) for n in ana] == [
        (m.memory_id, m.memory, m.topics) for m in sorted(agno.values(), key=lambda m: -m.updated_at)
    ]
    assert [n.content for n in ana] == ["Likes green tea", "Lives in Kreuzberg"]
    assert ana[1].created_at == "2037-06-30T18:40:00.000000+00:00"  # T0 in seconds since 1970, as UTC
    assert paged == ana
    assert [n.content for n in tagged] == ["Lives in Kreuzberg"]
    assert digest(agno_file) == before


def test_memory_edits_are_read_back_by_agno(agno_file):
    async def edit(memory):
        added = await memory.save_note("ana", "Allergic to peanuts", ["health"])
        tea = next(n for n in await memory.list_notes("ana") if n.content == "Likes green tea")
        changed = await memory.update_note("ana", tea.note_id, "Likes black tea", ["food", "drinks"], expected=tea)
        cello = (await memory.list_notes("bob"))[0]
        await memory.delete_note("bob", cello.note_id, expected=cello)
        return added, tea, changed

    added, tea, changed = run(agno_file, edit, read_only=False)
    ana = agno_memories(agno_file, "ana")
    assert (ana[added.note_id].memory, ana[added.note_id].topics) == ("Allergic to peanuts", ["health"])
    assert ana[added.note_id].created_at == ana[added.note_id].updated_at == int(NOW.timestamp())
    kept = ana[tea.note_id]
    assert (kept.memory, kept.topics, kept.created_at) == ("Likes black tea", ["food", "drinks"], T0 + 100)
    assert kept.updated_at == int(NOW.timestamp())
    assert changed.content == "Likes black tea"
    assert agno_memories(agno_file, "bob") == {}
    assert agno_memories(agno_file, None).keys() >= ana.keys()  # every user's listing still loads


def test_an_edit_of_a_memory_agno_changed_since_is_refused(agno_file):
    async def load(memory):
        return (await memory.list_notes("ana"))[0]

    loaded = run(agno_file, load)
    db = agno_db(agno_file)
    db.upsert_user_memory(UserMemory(memory="Likes oolong", memory_id=loaded.note_id, user_id="ana", created_at=T0))
    db.close()
    before = digest(agno_file)

    async def edit(memory):
        return await memory.update_note("ana", loaded.note_id, "Mine", [], expected=loaded)

    with pytest.raises(ConflictError) as caught:
        run(agno_file, edit, read_only=False)
    assert caught.value.current.content == "Likes oolong"
    assert agno_memories(agno_file, "ana")[loaded.note_id].memory == "Likes oolong"
    assert digest(agno_file) == before


def test_deleting_a_session_takes_its_runs_as_agno_does(agno_file):
    async def forget(memory):
        await memory.forget("s-ana")
        return await memory.sessions_page()

    left = run(agno_file, forget, read_only=False)
    assert [s.session_id for s in left] == ["s-bob"]
    assert agno_messages(agno_file, "s-ana") is None
    assert [m.content for m in agno_messages(agno_file, "s-bob")] == ["tune my cello"]
    with contextlib.closing(sqlite3.connect(agno_file)) as conn:
        assert conn.execute("SELECT session_id FROM agno_runs").fetchall() == [("s-bob",)]
    assert asyncio.run(check_store(agno_file)).ok  # no orphan run left


def test_a_session_with_offloaded_tool_results_is_refused_before_any_write(agno_file):
    another_program(
        agno_file,
        "CREATE TABLE agno_tool_results (result_id TEXT PRIMARY KEY, namespace TEXT, path TEXT, session_id TEXT)",
        "INSERT INTO agno_tool_results VALUES ('t1', 'ns', 'p', 's-ana')",
    )
    before = digest(agno_file)

    with pytest.raises(ReadOnlyError, match="offloaded tool results"):
        run(agno_file, lambda m: m.forget("s-ana"), read_only=False)
    assert digest(agno_file) == before


def test_agnos_memory_search_is_reproduced(agno_file):
    async def search(memory):
        names = [r.name for r in memory.retrievers()]
        return names, await memory.search_notes("ana", "TEA"), await memory.search_notes("ana", "e")

    names, tea, every = run(agno_file, search)
    assert names == ["agno-memories", "oxmem-keywords"]
    db = agno_db(agno_file)
    try:
        expected = db.get_user_memories(user_id="ana", search_content="e", sort_by="updated_at", sort_order="desc")
    finally:
        db.close()
    assert [h.text for h in tea] == ["Likes green tea"]
    assert [h.note_id for h in every] == [m.memory_id for m in expected]


def test_a_memory_that_is_not_json_is_flagged_where_agno_fails(agno_file):
    another_program(agno_file, "UPDATE agno_memories SET memory = 'Likes {tea' WHERE memory = '\"Likes green tea\"'")
    with pytest.raises(Exception):  # noqa: B017 - Agno's listing of every user fails on the one row
        agno_memories(agno_file, None)

    async def read(memory):
        return await memory.list_notes("ana"), await memory.search_notes("ana", "tea")

    assert {f.check: f.detail for f in asyncio.run(check_store(agno_file)).findings}["rows"].startswith(
        "1 memory whose memory is not JSON (Agno's listing of every user's memories fails): "
    )
    notes, found = run(agno_file, read)
    broken = next(n for n in notes if "problem" in n.details)
    assert broken.content == "⚠ unreadable row: Likes {tea"
    assert "listing of every user's memories fails" in broken.details["problem"]
    assert [h.text for h in found] == ["⚠ unreadable row: Likes {tea"]

    async def fix(memory):
        return await memory.update_note("ana", broken.note_id, "Likes green tea", ["food"], expected=broken)

    run(agno_file, fix, read_only=False)
    assert "Likes green tea" in {m.memory for m in agno_memories(agno_file, None).values()}


def test_orphan_runs_and_broken_runs_are_named(agno_file):
    another_program(
        agno_file,
        "DELETE FROM agno_sessions WHERE session_id = 's-bob'",  # foreign keys off: its run stays
        "UPDATE agno_runs SET run_data = '{broken' WHERE run_id = 's-ana-r0'",
    )
    report = asyncio.run(check_store(agno_file))
    found = {f.check: f.detail for f in report.findings}
    assert found["foreign keys"] == "1 row points at a missing parent (in agno_runs)"
    assert found["rows"] == "1 run whose run_data is not JSON (Agno cannot load its session): s-ana-r0"

    events = run(agno_file, lambda m: m.recall("s-ana"))
    assert events[0].payload["content"].startswith("⚠ unreadable row: run s-ana-r0: run_data is not JSON")
    assert [e.payload["content"] for e in events[1:]][0] == "Weather in Berlin?"


def test_tables_named_by_the_program_are_found_by_their_columns(tmp_path):
    path = tmp_path / "custom.db"
    write(path, session_table="my_sessions", runs_table="my_runs", memory_table="my_memories")

    async def read(memory):
        return (await memory.info()).format, await memory.note_users(), await memory.recall("s-bob")

    fmt, users, bob = run(path, read)
    assert fmt == "agno"
    assert users == ["ana", "bob", "(no user)"]
    assert [e.payload["content"] for e in bob] == ["tune my cello"]


def test_a_missing_session_is_not_found(agno_file):
    with pytest.raises(NotFoundError):
        run(agno_file, lambda m: m.recall("nope"))


def test_memories_page_round_trips_the_file_unchanged(agno_file):
    before = digest(agno_file)
    notes = run(agno_file, lambda m: m.list_notes("(no user)"))
    assert [(n.content, n.tags) for n in notes] == [("The office closes at six", ["work"])]
    assert json.loads(json.dumps([n.details for n in notes])) == [{}]
    assert digest(agno_file) == before


def test_events_are_paged_a_run_at_a_time_and_pages_join_up(agno_file):
    async def pages(memory):
        whole = await memory.recall("s-ana")
        joined = {}
        for size in (1, 2, 3, 5):
            out, after = [], None
            while page := await memory.events_page("s-ana", after, size):
                out += page
                after = page[-1].sequence
            joined[size] = out
        return whole, joined, (await memory.session_stats(["s-ana"]))["s-ana"]

    whole, joined, stats = run(agno_file, pages)
    assert all(pages == whole for pages in joined.values())
    assert (stats.event_count, stats.last_sequence) == (7, 8)


def test_memories_are_paged_from_one_order_and_a_deleted_cursor_continues_from_its_time(tmp_path):
    path = tmp_path / "many.db"
    db = agno_db(path)
    for i in range(12):  # two memories a second: ties broken by the row, newest first
        db.upsert_user_memory(UserMemory(memory=f"fact {i}", user_id="ana", created_at=T0 + i // 2))
    db.close()

    async def pages(memory):
        whole = await memory.list_notes("ana")
        joined = {}
        for size in (1, 5, 7):
            out, after = [], None
            while page := await memory.notes_page("ana", after, size):
                out += page
                after = (page[-1].updated_at, page[-1].sequence)
            joined[size] = out
        return whole, joined

    whole, joined = run(path, pages)
    assert [n.content for n in whole] == [f"fact {i}" for i in range(11, -1, -1)]
    assert all(pages == whole for pages in joined.values())
    cursor = whole[4]
    another_program(path, f"DELETE FROM agno_memories WHERE memory_id = '{cursor.note_id}'")
    rest = run(path, lambda m: m.notes_page("ana", (cursor.updated_at, cursor.sequence), 3))
    assert [n.content for n in rest] == ["fact 6", "fact 5", "fact 4"]


def test_oxmems_keyword_search_finds_messages_of_agno_sessions(agno_file):
    found = run(agno_file, lambda m: m.search("oxmem-keywords", "s-ana", "sunny berlin", 2))
    assert [(h.chunk_id, h.score) for h in found.hits] == [("s-ana#8", 0.5), ("s-ana#7", 0.5)]


def test_a_backup_compared_names_memories_in_agnos_words(agno_file, tmp_path):
    import shutil

    from oxmem_gui.core.api import diff_files

    old = tmp_path / "old.db"
    shutil.copy(agno_file, old)

    async def edit(memory):
        tea = next(n for n in await memory.list_notes("ana") if n.content == "Likes green tea")
        await memory.update_note("ana", tea.note_id, "Likes black tea", ["food"], expected=tea)

    run(agno_file, edit, read_only=False)
    diff = asyncio.run(diff_files(old, agno_file))
    assert diff.counts() == {"memories changed": 1}
    assert [c.kind for c in diff.notes] == ["changed"]


def test_a_search_with_a_hit_works_from_every_door(agno_file):
    searched_from_every_door(agno_file, "s-ana", "sunny")
