"""mem0's ``history.db`` (``core/formats/mem0_history.py``) on files written by mem0's own ``SQLiteManager``
(``mem0ai``, ``mem0/memory/storage.py``; no model is called): found by its columns whatever the file is called,
each memory's changes shown as ``Memory.history()`` (``get_history``) returns them, each messages scope as
``get_last_messages`` does, the memories that are not deleted as notes, what mem0 never writes shown flagged, and
the file left as it was."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from oxmem_gui.core.api import ReadOnlyError, check_store, open_memory

T0 = "2025-03-01T10:00:00+00:00"
T1 = "2025-03-02T09:00:00.100000+00:00"
T2 = "2025-03-02T09:00:00.900000+00:00"  # the same second as T1: a tie in mem0's DATETIME(updated_at) order
T3 = "2025-03-03T08:30:00+00:00"
CITY_AT = "2025-03-01T11:00:00+00:00"
CLOCK = datetime(2025, 4, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def storage(tmp_path_factory):
    """``mem0.memory.storage``, imported with telemetry off and mem0's home (it writes a config there) in a
    temporary folder."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEM0_TELEMETRY", "False")
        mp.setenv("MEM0_DIR", str(tmp_path_factory.mktemp("mem0-home")))
        pytest.importorskip("mem0", reason="mem0ai writes these files (a test dependency)")
        import mem0.memory.storage as module
    return module


@pytest.fixture
def clock(storage, monkeypatch):
    """``save_messages`` stamps ``datetime.now(timezone.utc)``: a fixed clock, a minute on per call."""
    ticks = iter(range(1000))

    class Fixed(datetime):
        @classmethod
        def now(cls, tz=None):
            return CLOCK + timedelta(minutes=next(ticks))

    monkeypatch.setattr(storage, "datetime", Fixed)


def manager(storage, path):
    return contextlib.closing(storage.SQLiteManager(str(path)))


def write(storage, path) -> None:
    """What mem0's ``Memory`` writes for: a memory added and updated twice (an actor's), one added and deleted,
    another actor's, one from the batch path (no ``updated_at``), and two scopes' messages."""
    with manager(storage, path) as m:
        tea = {"actor_id": "alice", "role": "user"}
        m.add_history("m-tea", None, "Likes tea", "ADD", created_at=T0, updated_at=T0, **tea)
        m.add_history("m-tea", "Likes tea", "Likes green tea", "UPDATE", created_at=T0, updated_at=T1, **tea)
        m.add_history("m-tea", "Likes green tea", "Likes sencha", "UPDATE", created_at=T0, updated_at=T2, **tea)
        m.add_history("m-city", None, "Lives in Lisbon", "ADD", created_at=CITY_AT, updated_at=CITY_AT)
        m.add_history("m-city", "Lives in Lisbon", None, "DELETE", created_at=CITY_AT, updated_at=T3, is_deleted=1)
        m.add_history("m-bob", None, "Bob plays chess", "ADD", created_at=T1, updated_at=T1, actor_id="bob")
        m.batch_add_history(
            [{"memory_id": "m-batch", "old_memory": None, "new_memory": "Has a cat", "event": "ADD", "created_at": T3}]
        )
        m.save_messages(
            [{"role": "user", "content": "I like tea"}, {"role": "assistant", "content": "Noted."}], "user_id=alice"
        )
        for i in range(6):  # mem0 keeps the newest 10 messages of a scope
            m.save_messages(
                [{"role": "user", "content": f"move {i}", "name": "bob"}, {"role": "assistant", "content": f"ok {i}"}],
                "agent_id=chess&user_id=bob",
            )


def read(path, fn):
    async def go():
        async with await open_memory(path, embedding="deterministic") as memory:
            return await fn(memory)

    return asyncio.run(go())


def another_program(path, *statements: str) -> None:
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        for sql in statements:
            conn.execute(sql)


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def memory_ids(path) -> list[str]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return [r[0] for r in conn.execute("SELECT DISTINCT memory_id FROM history WHERE memory_id IS NOT NULL")]


def scopes(path) -> list[str]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return [r[0] for r in conn.execute("SELECT DISTINCT session_scope FROM messages")]


async def everything(m):
    sessions = await m.sessions_page(limit=1000)
    events = {s.session_id: await m.events_page(s.session_id, None, 1000) for s in sessions}
    notes = {g: await m.notes_page(g, limit=1000) for g in await m.note_users()}
    return m.format, sessions, events, notes


@pytest.fixture
def mem0_file(storage, clock, tmp_path):
    path = tmp_path / "history.db"
    write(storage, path)
    return path


def test_found_by_its_columns_whatever_the_file_is_called(storage, clock, tmp_path):
    path = tmp_path / "notes.sqlite"
    write(storage, path)
    assert read(path, lambda m: m.info()).format == "mem0-history"
    other = tmp_path / "history.db"
    another_program(other, "CREATE TABLE history (id TEXT, memory_id TEXT, event TEXT)")
    assert read(other, lambda m: m.info()).format == "sqlite-unknown"


def test_each_memory_is_a_session_of_its_changes_as_mem0_returns_them(storage, mem0_file):
    fmt, sessions, events, _ = read(mem0_file, everything)
    assert fmt == "mem0-history"
    by_id = {s.session_id: s for s in sessions}
    with manager(storage, mem0_file) as m:
        for memory_id in memory_ids(mem0_file):
            assert [e.payload["change"] for e in events[memory_id]] == m.get_history(memory_id)
            assert [e.sequence for e in events[memory_id]] == list(range(1, len(events[memory_id]) + 1))
    assert [(e.payload["role"], e.payload["content"]) for e in events["m-tea"]] == [
        ("system", "ADD: Likes tea"),
        ("system", "UPDATE: Likes tea → Likes green tea"),
        ("system", "UPDATE: Likes green tea → Likes sencha"),
    ]
    assert [e.created_at for e in events["m-tea"]] == [
        "2025-03-01T10:00:00.000000+00:00",
        "2025-03-02T09:00:00.100000+00:00",
        "2025-03-02T09:00:00.900000+00:00",
    ]
    assert [e.payload["content"] for e in events["m-city"]] == ["ADD: Lives in Lisbon", "DELETE: Lives in Lisbon"]
    assert not any("problems" in e.payload for evs in events.values() for e in evs)
    tea, city, batch = by_id["m-tea"], by_id["m-city"], by_id["m-batch"]
    assert (tea.agent_identity, tea.created_at, tea.updated_at) == (
        "alice",
        "2025-03-01T10:00:00.000000+00:00",
        "2025-03-02T09:00:00.900000+00:00",
    )
    assert tea.details == {"memory": "Likes sencha", "changes": 3, "role": "user"}
    assert (city.agent_identity, city.updated_at) == (None, "2025-03-03T08:30:00.000000+00:00")
    assert city.details == {"memory": "Lives in Lisbon", "changes": 2, "state": "deleted"}
    assert (batch.created_at, batch.updated_at) == ("2025-03-03T08:30:00.000000+00:00",) * 2  # no updated_at: created
    assert [s.session_id for s in sessions[:2]] == ["messages:agent_id=chess&user_id=bob", "messages:user_id=alice"]


def test_each_messages_scope_is_a_session_as_mem0_reads_it_back(storage, mem0_file):
    _, sessions, events, _ = read(mem0_file, everything)
    with manager(storage, mem0_file) as m:
        for scope in scopes(mem0_file):
            shown = events[f"messages:{scope}"]
            assert [e.payload["message"] for e in shown] == m.get_last_messages(scope, limit=100)
    chess = events["messages:agent_id=chess&user_id=bob"]
    assert len(chess) == 10  # mem0 deleted the oldest two itself
    assert [(e.payload["role"], e.payload["content"], e.payload.get("name")) for e in chess[:2]] == [
        ("user", "move 1", "bob"),
        ("assistant", "ok 1", None),
    ]
    assert chess[0].created_at == "2025-04-01T12:02:00.000000+00:00"  # (the call after alice's, then one more)
    alice = next(s for s in sessions if s.session_id == "messages:user_id=alice")
    assert (alice.agent_identity, alice.created_at, alice.details) == (
        None,
        "2025-04-01T12:00:00.000000+00:00",
        {"scope": "user_id=alice", "messages": 2},
    )


def test_the_memories_not_deleted_are_notes_by_actor_with_their_current_text(mem0_file):
    _, _, _, notes = read(mem0_file, everything)
    assert list(notes) == ["alice", "bob", "(no actor)"]
    shown = {g: [(n.note_id, n.content, n.tags) for n in ns] for g, ns in notes.items()}
    assert shown == {
        "alice": [("m-tea", "Likes sencha", [])],
        "bob": [("m-bob", "Bob plays chess", [])],
        "(no actor)": [("m-batch", "Has a cat", [])],  # m-city was deleted: not a memory any more
    }
    tea = notes["alice"][0]
    assert (tea.created_at, tea.updated_at) == ("2025-03-01T10:00:00.000000+00:00", "2025-03-02T09:00:00.900000+00:00")
    assert tea.details == {"changes": 3, "event": "UPDATE", "role": "user"}
    assert read(mem0_file, lambda m: m.get_note("alice", "m-tea")) == tea

    async def capabilities(m):
        return m.capabilities

    caps = read(mem0_file, capabilities)
    assert (caps.has_schedules, caps.has_search, caps.note_tags, caps.editable) == (False, False, False, False)


def test_reads_change_no_byte_and_every_edit_is_refused(mem0_file):
    before = digest(mem0_file)
    read(mem0_file, everything)
    read(mem0_file, lambda m: m.info())
    asyncio.run(check_store(mem0_file))
    for edit in (lambda m: m.save_note("alice", "new"), lambda m: m.forget("m-tea")):
        with pytest.raises(ReadOnlyError, match="mem0's memories live in its vector store"):
            read(mem0_file, edit)
    assert digest(mem0_file) == before


def test_what_mem0_never_writes_is_shown_flagged(storage, mem0_file):
    another_program(
        mem0_file,
        "INSERT INTO history VALUES ('h1', 'm-odd', NULL, 'Odd', 'ADD', 'not a time', 'soon', 0, NULL, NULL)",
        "INSERT INTO history VALUES ('h2', 'm-bytes', NULL, CAST(X'436166e9' AS TEXT), 'ADD', "
        f"'{T0}', '{T0}', 0, 'carol', NULL)",
        "INSERT INTO history VALUES ('h3', 'm-orphan', 'Was here', 'Is here', 'UPDATE', "
        f"'{T0}', '{T1}', 0, NULL, NULL)",
        f"INSERT INTO history VALUES ('h4', 'm-city', 'Lives in Lisbon', 'Lives in Porto', 'UPDATE', '{CITY_AT}', "
        f"'2025-03-04T00:00:00+00:00', 0, NULL, NULL)",
        f"INSERT INTO history VALUES ('h5', NULL, NULL, 'Nobody', 'ADD', '{T0}', '{T0}', 0, NULL, NULL)",
        f"INSERT INTO history VALUES ('h6', 'm-null', NULL, NULL, NULL, '{T0}', '{T0}', NULL, NULL, NULL)",
        f"INSERT INTO history VALUES ('h8', '', NULL, 'Blank', 'ADD', '{T0}', '{T0}', 0, NULL, NULL)",
        f"INSERT INTO history VALUES ('h7', 'm-blob', NULL, X'00ff', 'ADD', '{T0}', '{T0}', 0, NULL, NULL)",
        "INSERT INTO messages VALUES ('x1', 'user_id=alice', 'robot', CAST(X'6869ff' AS TEXT), NULL, 'whenever')",
    )
    with manager(storage, mem0_file) as m, pytest.raises(sqlite3.OperationalError):
        m.get_history("m-bytes")  # mem0's own history() fails on that memory

    async def all_of_it(m):
        return m.open_notice, await everything(m)

    notice, (_, sessions, events, notes) = read(mem0_file, all_of_it)
    assert notice is None  # each cell read as bytes: no repaired copy of the whole file was needed

    def flagged(session_id: str, index: int = 0) -> list[str]:
        payload = events[session_id][index].payload
        assert payload["content"].startswith("⚠ ")
        return payload["problems"]

    assert flagged("m-odd") == ["created_at 'not a time' is no time", "updated_at 'soon' is no time"]
    assert events["m-odd"][0].created_at == "soon"
    assert flagged("m-bytes") == ["new_memory is not valid UTF-8 (shown with \ufffd)"]
    assert events["m-bytes"][0].payload["content"].endswith("\nADD: Caf\ufffd")
    assert flagged("m-orphan") == ["an UPDATE with no ADD before it: the history starts part-way"]
    assert flagged("m-city", 2) == ["a change after the memory was deleted"]
    by_id = {s.session_id: s for s in sessions}
    assert by_id["(no memory_id)"].details["problem"].startswith("⚠ changes with a NULL memory_id")
    assert flagged("m-null") == ["event None is none mem0 writes (ADD, UPDATE, DELETE)"]
    assert events["m-null"][0].payload["content"].endswith("\n(no event):  → ")
    assert by_id["(memory_id '')"].details["problem"] == "⚠ a blank memory_id ''"
    assert flagged("m-blob") == ["new_memory is a BLOB of 2 bytes, not text"]
    assert by_id["m-orphan"].details["problem"] == "⚠ 1 change flagged"
    assert (by_id["m-odd"].created_at, by_id["m-odd"].updated_at) == ("", "")  # no time: listed last
    assert sessions[-1].session_id == "m-odd"
    robot = events["messages:user_id=alice"][-1].payload
    assert robot["role"] == "system" and robot["content"].startswith("⚠ ")
    assert robot["problems"] == [
        "content is not valid UTF-8 (shown with \ufffd)",
        "created_at 'whenever' is no time",
        "role 'robot' is none of user, assistant, system, tool",
    ]
    assert (
        "carol" in notes and notes["carol"][0].details["problem"] == "new_memory is not valid UTF-8 (shown with \ufffd)"
    )
    assert "m-city" not in {n.note_id for ns in notes.values() for n in ns}
    assert "m-orphan" in {n.note_id for n in notes["(no actor)"]}


def test_mem0s_order_is_kept_where_a_deletion_sorts_before_the_memory_it_deletes(storage, clock, tmp_path):
    path = tmp_path / "history.db"
    created = "2025-03-01T10:00:00+05:30"  # a local time, as an older mem0 wrote them
    utc = datetime.fromisoformat(created).astimezone(timezone.utc).isoformat()  # what _delete_memory writes
    with manager(storage, path) as m:
        m.add_history("m-tz", None, "Works in Pune", "ADD", created_at=created, updated_at=created)
        m.add_history("m-tz", "Works in Pune", None, "DELETE", created_at=utc, updated_at=T3, is_deleted=1)
        expected = m.get_history("m-tz")
    assert [c["event"] for c in expected] == ["DELETE", "ADD"]  # mem0's own history() lists it so
    _, sessions, events, notes = read(path, everything)
    assert [e.payload["change"] for e in events["m-tz"]] == expected
    assert [e.payload["problems"] for e in events["m-tz"]] == [
        ["a DELETE with no ADD before it: the history starts part-way"],
        ["a change after the memory was deleted"],
    ]
    (session,) = sessions
    assert session.details["state"] == "deleted" and notes == {}
    assert (session.created_at, session.updated_at) == (
        "2025-03-01T04:30:00.000000+00:00",
        "2025-03-03T08:30:00.000000+00:00",
    )


def test_an_older_history_table_is_read_as_it_is_and_as_mem0_reads_it_once_migrated(storage, clock, tmp_path):
    path = tmp_path / "history.db"
    another_program(  # a history table without actor_id and role, and no messages table
        path,
        "CREATE TABLE history (id TEXT PRIMARY KEY, memory_id TEXT, old_memory TEXT, new_memory TEXT, event TEXT, "
        "created_at DATETIME, updated_at DATETIME, is_deleted INTEGER)",
        f"INSERT INTO history VALUES ('a', 'm-old', NULL, 'Old fact', 'ADD', '{T0}', '{T0}', 0)",
        f"INSERT INTO history VALUES ('b', 'm-old', 'Old fact', 'Newer fact', 'UPDATE', '{T0}', '{T1}', 0)",
    )
    info = read(path, lambda m: m.info())
    assert (info.format, info.markers) == (
        "mem0-history",
        [
            "history: an older schema (without actor_id, role): mem0 rewrites the table when it next opens the file",
            "messages: no table",
        ],
    )
    _, _, before, notes = read(path, everything)
    assert [e.payload["content"] for e in before["m-old"]] == ["ADD: Old fact", "UPDATE: Old fact → Newer fact"]
    assert [n.content for n in notes["(no actor)"]] == ["Newer fact"]
    with manager(storage, path) as m:  # mem0 migrates the table as it opens the file
        expected = m.get_history("m-old")
    _, _, after, _ = read(path, everything)
    assert [e.payload["change"] for e in before["m-old"]] == [e.payload["change"] for e in after["m-old"]] == expected
    assert read(path, lambda m: m.info()).markers[0] == "history: mem0 2.2.1's ten columns"
