"""The OpenAI Agents SDK's session store (``core/formats/openai_agents.py``) on files written by the SDK's own
``SQLiteSession`` (openai-agents, a test dependency; no model is called): found by its tables' columns whatever
their names, every session and item shown as the SDK reads them back, a row the SDK would skip or hand on as it is
shown flagged and named by ``check``, and the file left as it was."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3

import pytest

from oxmem_gui.core.api import ConflictError, NotFoundError, ReadOnlyError, check_store, open_memory
from tests.core.formats.framework_files import another_program, digest, read, searched_from_every_door

agents = pytest.importorskip("agents", reason="the OpenAI Agents SDK writes these files (a test dependency)")

WEATHER = [
    {"role": "user", "content": "What is the weather in Lisbon?"},
    {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "Lisbon"}'},
    {"type": "function_call_output", "call_id": "call_1", "output": "Sunny, 21°C"},
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "It is sunny in Lisbon.", "annotations": []}],
    },
]
HELLO = [
    {"role": "developer", "content": "Be brief."},
    {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
]


def write(path, sessions: dict[str, list[dict]], **tables: str) -> None:
    """Each session's items added by the SDK's own ``SQLiteSession`` (``tables``: its table names)."""

    async def go():
        for session_id, items in sessions.items():
            session = agents.SQLiteSession(session_id, str(path), **tables)
            await session.add_items(items)
            session.close()

    asyncio.run(go())


def sdk_items(path, session_id: str, **tables: str) -> list:
    async def go():
        session = agents.SQLiteSession(session_id, str(path), **tables)
        try:
            return await session.get_items()
        finally:
            session.close()

    return asyncio.run(go())


@pytest.fixture
def sdk_file(tmp_path):
    path = tmp_path / "conversations.db"
    write(path, {"weather": WEATHER, "hello": HELLO})
    return path


def test_every_session_and_item_is_shown_as_the_sdk_reads_it_back(sdk_file):
    async def everything(m):
        sessions = await m.sessions_page(limit=100)
        return m.format, sessions, {s.session_id: await m.events_page(s.session_id, None, 100) for s in sessions}

    fmt, sessions, events = read(sdk_file, everything)
    assert fmt == "openai-agents" and sorted(s.session_id for s in sessions) == ["hello", "weather"]
    assert {s: len(e) for s, e in events.items()} == {"hello": 2, "weather": 4}
    for session_id in ("weather", "hello"):
        assert [e.payload["item"] for e in events[session_id]] == sdk_items(sdk_file, session_id)
    weather = [e.payload for e in events["weather"]]
    assert [(p["role"], p["content"]) for p in weather] == [
        ("user", "What is the weather in Lisbon?"),
        ("assistant", ""),
        ("tool", "Sunny, 21°C"),
        ("assistant", "It is sunny in Lisbon."),
    ]
    assert weather[1]["tool_calls"] == [{"id": "call_1", "name": "get_weather", "arguments": '{"city": "Lisbon"}'}]
    assert weather[2]["tool_call_id"] == "call_1"
    assert [(e.payload["role"], e.payload["content"]) for e in events["hello"]] == [
        ("system", "Be brief."),
        ("user", "hi"),
    ]
    assert [e.sequence for e in events["weather"]] == sorted(e.sequence for e in events["weather"])


def test_tables_the_program_named_otherwise_are_found_by_their_columns(tmp_path):
    path = tmp_path / "app.sqlite"
    names = {"sessions_table": "chat_threads", "messages_table": "chat_items"}
    write(path, {"t1": WEATHER[:1]}, **names)
    sessions = read(path, lambda m: m.sessions_page(limit=10))
    assert [s.session_id for s in sessions] == ["t1"]
    events = read(path, lambda m: m.events_page("t1", None, 10))
    assert [e.payload["item"] for e in events] == sdk_items(path, "t1", **names)


def test_a_row_the_sdk_would_skip_or_hand_on_is_shown_flagged_and_named_by_check(sdk_file):
    another_program(  # (the SDK itself writes only JSON objects)
        sdk_file,
        "INSERT INTO agent_messages (session_id, message_data) VALUES ('weather', '{broken')",
        "INSERT INTO agent_messages (session_id, message_data) VALUES ('weather', '[1, 2]')",
    )
    assert sdk_items(sdk_file, "weather") == [*WEATHER, [1, 2]]  # the broken row left out without a word
    events = read(sdk_file, lambda m: m.events_page("weather", None, 100))
    flagged = [e.payload["content"] for e in events if e.payload["role"] == "system"]
    assert len(events) == 6 and len(flagged) == 2
    assert flagged[0].startswith("⚠ unreadable row: message 7 is not JSON (")
    assert flagged[0].endswith("; the SDK skips it without a word")
    assert flagged[1] == (
        "⚠ unreadable row: message 8 is JSON but not an object (list); the SDK hands it on as an item as it is"
    )
    report = asyncio.run(check_store(sdk_file))
    (items,) = [f for f in report.findings if f.check == "items"]
    assert (items.level, items.detail) == (
        "warning",
        "message rows 1 not JSON, which the SDK skips without a word: weather #7; "
        "1 JSON but not an object, which it hands on as they are: weather #8",
    )


def test_reads_change_no_byte_and_a_session_is_deleted_only_with_editing_on_as_the_sdk_clears_it(sdk_file):
    before = digest(sdk_file)
    read(sdk_file, lambda m: m.events_page("weather", None, 100))
    asyncio.run(check_store(sdk_file))
    assert digest(sdk_file) == before

    def forget(session_id, read_only):
        async def go():
            async with await open_memory(sdk_file, read_only=read_only, embedding="deterministic") as m:
                await m.forget(session_id)

        asyncio.run(go())

    with pytest.raises(ReadOnlyError, match="open read-only; enable editing to change it"):
        forget("weather", read_only=True)
    with pytest.raises(NotFoundError, match="no session 'nobody'"):
        forget("nobody", read_only=False)
    assert digest(sdk_file) == before
    forget("weather", read_only=False)
    assert sdk_items(sdk_file, "weather") == [] and sdk_items(sdk_file, "hello") == HELLO  # read back by the SDK
    with contextlib.closing(sqlite3.connect(sdk_file)) as conn:
        assert conn.execute("SELECT session_id FROM agent_sessions").fetchall() == [("hello",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_an_advanced_sessions_message_deleted_by_another_program_is_read_and_its_orphans_flagged(tmp_path):
    """``AdvancedSQLiteSession`` keeps each item's place in ``message_structure`` (turns, branches): a message row
    deleted without the foreign keys on (as SQLite connects by default) leaves its structure row behind, and the
    SDK's ``list_branches`` then counts a message that is gone. The items read as the SDK reads them; check names
    the orphan."""
    from agents.extensions.memory import AdvancedSQLiteSession

    path = tmp_path / "advanced.db"

    async def sdk(then):
        session = AdvancedSQLiteSession(session_id="s1", db_path=str(path), create_tables=True)
        try:
            return await then(session)
        finally:
            session.close()

    asyncio.run(
        sdk(lambda s: s.add_items([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]))
    )
    another_program(path, "DELETE FROM agent_messages WHERE id = 2")
    branches = asyncio.run(sdk(lambda s: s.list_branches()))
    assert [(b["branch_id"], b["message_count"]) for b in branches] == [("main", 2)]  # the SDK still counts it
    events = read(path, lambda m: m.events_page("s1", None, 10))
    assert (
        [e.payload["item"] for e in events]
        == asyncio.run(sdk(lambda s: s.get_items()))
        == [{"role": "user", "content": "hi"}]
    )
    report = asyncio.run(check_store(path))
    (fk,) = [f for f in report.findings if f.check == "foreign keys"]
    assert (fk.level, fk.detail) == ("problem", "1 row points at a missing parent (in message_structure)")

    async def forget():
        async with await open_memory(path, read_only=False, embedding="deterministic") as m:
            await m.forget("s1")

    before = digest(path)
    with pytest.raises(ReadOnlyError, match="AdvancedSQLiteSession file .* nothing was changed"):
        asyncio.run(forget())
    assert digest(path) == before

    async def delete_turn():
        async with await open_memory(path, read_only=False, embedding="deterministic") as m:
            await m.delete_turn("s1", 1)

    with pytest.raises(ReadOnlyError, match="AdvancedSQLiteSession file .* nothing was changed"):
        asyncio.run(delete_turn())
    assert digest(path) == before


TWO_TURNS = [
    *WEATHER,
    {"role": "user", "content": "And tomorrow?"},
    {"type": "function_call", "call_id": "call_2", "name": "get_forecast", "arguments": '{"city": "Lisbon"}'},
    {"type": "function_call_output", "call_id": "call_2", "output": "Rain"},
    {"role": "assistant", "content": "Rain tomorrow."},
]


def edit(path, fn):
    async def go():
        async with await open_memory(path, read_only=False, embedding="deterministic") as m:
            return await fn(m)

    return asyncio.run(go())


def test_a_turn_is_deleted_with_its_tool_calls_and_outputs_and_the_sdk_reads_the_rest(tmp_path):
    path = tmp_path / "turns.db"
    write(path, {"weather": TWO_TURNS, "hello": HELLO})
    # item 3 is the first turn's tool output (items 1-4 the first turn, 5-8 the second)
    turn = read(path, lambda m: m.turn("weather", 3))
    assert [e.sequence for e in turn] == [1, 2, 3, 4]
    deleted = edit(path, lambda m: m.delete_turn("weather", 3, expected=turn))
    assert deleted == [1, 2, 3, 4]
    assert sdk_items(path, "weather") == TWO_TURNS[4:] and sdk_items(path, "hello") == HELLO


def test_a_call_whose_output_landed_in_another_turn_takes_it_along(tmp_path):
    """Items another program appended out of order: the first turn's call answered after the next user message.
    Deleting either turn leaves no call without its output nor an output without its call."""
    path = tmp_path / "paired.db"
    items = [WEATHER[0], WEATHER[1], {"role": "user", "content": "hurry"}, WEATHER[2], WEATHER[3]]
    write(path, {"weather": items})
    assert [e.sequence for e in read(path, lambda m: m.turn("weather", 1))] == [1, 2, 4]
    assert [e.sequence for e in read(path, lambda m: m.turn("weather", 3))] == [2, 3, 4, 5]
    assert edit(path, lambda m: m.delete_turn("weather", 1)) == [1, 2, 4]
    assert sdk_items(path, "weather") == [{"role": "user", "content": "hurry"}, WEATHER[3]]


def test_a_turn_changed_since_it_was_loaded_is_not_deleted(tmp_path):
    path = tmp_path / "turns.db"
    write(path, {"weather": TWO_TURNS})
    turn = read(path, lambda m: m.turn("weather", 5))
    another_program(path, "INSERT INTO agent_messages (session_id, message_data) VALUES ('weather', "
                    "'{\"role\": \"assistant\", \"content\": \"Bring an umbrella.\"}')")  # fmt: skip
    before = digest(path)
    with pytest.raises(ConflictError, match="changed by another program since it was loaded; nothing was deleted"):
        edit(path, lambda m: m.delete_turn("weather", 5, expected=turn))
    assert digest(path) == before
    with pytest.raises(ReadOnlyError, match="open read-only"):
        asyncio.run(open_and_delete_read_only(path))
    with pytest.raises(NotFoundError, match="no item 99 in session 'weather'"):
        edit(path, lambda m: m.delete_turn("weather", 99))
    assert digest(path) == before


async def open_and_delete_read_only(path):
    async with await open_memory(path, embedding="deterministic") as m:
        await m.delete_turn("weather", 5)


def test_an_advanced_sessions_branches_are_listed_with_their_items_and_token_usage_as_the_sdk_reads_them(tmp_path):
    from agents.extensions.memory import AdvancedSQLiteSession

    path = tmp_path / "advanced.db"

    async def sdk(then):
        session = AdvancedSQLiteSession(session_id="s1", db_path=str(path), create_tables=True)
        try:
            return await then(session)
        finally:
            session.close()

    async def branch(s):
        await s.add_items([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hey"}])
        await s.add_items([{"role": "user", "content": "plan a trip"}, {"role": "assistant", "content": "Lisbon?"}])
        await s.create_branch_from_turn(2, "alt")  # turn 1 copied into the branch, which then goes its own way
        await s.add_items([{"role": "user", "content": "plan a hike"}, {"role": "assistant", "content": "Sintra?"}])

    asyncio.run(sdk(branch))
    another_program(  # the rows store_run_usage writes after each user turn (a model would be called to get them)
        path,
        "INSERT INTO turn_usage (session_id, branch_id, user_turn_number, requests, input_tokens, output_tokens, "
        "total_tokens) VALUES ('s1', 'main', 1, 1, 1200, 30, 1230), ('s1', 'alt', 2, 2, 800, 45, 845)",
    )

    async def everything(m):
        sessions = await m.sessions_page()
        return sessions, {s.session_id: await m.events_page(s.session_id, None, 100) for s in sessions}

    sessions, events = read(path, everything)
    assert [s.session_id for s in sessions] == ["s1", "s1 ⎇ alt"]
    for branch_id, listed in (("main", "s1"), ("alt", "s1 ⎇ alt")):
        items = asyncio.run(sdk(lambda s, b=branch_id: s.get_items(branch_id=b)))
        assert [e.payload["item"] for e in events[listed]] == items
        usage = asyncio.run(sdk(lambda s, b=branch_id: s.get_session_usage(branch_id=b)))
        shown = next(s for s in sessions if s.session_id == listed).details
        assert shown["tokens"] == f"{usage['input_tokens']:,} in · {usage['output_tokens']:,} out"
    assert [e.payload["content"] for e in events["s1 ⎇ alt"]] == ["hi", "hey", "plan a hike", "Sintra?"]


def test_oxmems_own_keyword_search_finds_items_and_says_it_is_not_the_sdks(tmp_path):
    from oxmem_gui.core.retrieval.scope import ALL_SESSIONS

    path = tmp_path / "turns.db"
    write(path, {"weather": TWO_TURNS, "hello": HELLO})

    async def search(m):
        return (
            [r.name for r in m.retrievers()],
            await m.search("oxmem-keywords", "weather", "lisbon SUNNY", 3),
            await m.search("oxmem-keywords", ALL_SESSIONS, "hi brief", 5),
        )

    names, one, every = read(path, search)
    assert names == ["oxmem-keywords"]
    assert one.steps[0].startswith("oxmem's own keyword search — the agent keeps no search of its own")
    # the forecast call's arguments name Lisbon: the newest of the half matches
    assert [(h.chunk_id, h.score) for h in one.hits] == [("weather#4", 1.0), ("weather#6", 0.5), ("weather#3", 0.5)]
    assert (one.hits[1].notes, one.hits[2].notes) == (["holds lisbon; not sunny"], ["holds sunny; not lisbon"])
    assert [(h.chunk_id, h.score) for h in every.hits] == [("hello#10", 0.5), ("hello#9", 0.5)]


def test_why_the_keyword_search_left_an_item_out(tmp_path):
    path = tmp_path / "turns.db"
    write(path, {"weather": TWO_TURNS})
    story = read(path, lambda m: m.why_not("oxmem-keywords", "weather", "tomorrow", "1"))
    assert story.cut == "oxmem keyword search does not return it: it holds none of the words (tomorrow)"
    with pytest.raises(NotFoundError):
        read(path, lambda m: m.why_not("oxmem-keywords", "weather", "tomorrow", "99"))


def test_a_search_with_a_hit_works_from_every_door(sdk_file):
    searched_from_every_door(sdk_file, "weather", "lisbon")
