"""mem0's ``history.db`` (``core/formats/mem0_history.py``) on files written by mem0's own ``SQLiteManager``
(``mem0ai``, ``mem0/memory/storage.py``; no model is called): found by its columns whatever the file is called,
each memory's changes shown as ``Memory.history()`` (``get_history``) returns them, each messages scope as
``get_last_messages`` does, the memories that are not deleted as notes, what mem0 never writes shown flagged, and
the file left as it was."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import random
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from oxmem_gui.core.api import ReadOnlyError, check_store, note_cursor, open_memory
from oxmem_gui.core.formats import mem0_history

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


async def paged(fetch, cursor, size: int) -> list:
    """Every item ``fetch(after, limit)`` pages through, ``size`` at a time, each page after the last one's
    ``cursor``."""
    out: list = []
    while True:
        page = await fetch(cursor(out[-1]) if out else None, size)
        assert len(page) <= size
        assert not {cursor(x) for x in page} & {cursor(x) for x in out}  # (a page again would never end)
        out += page
        if len(page) < size:
            return out


def session_cursor(row):
    return row.updated_at, row.session_id


async def pages_and_wholes(m, sizes=(1, 2, 3, 7, 50)):
    """The sessions and each actor's memories as pages of each of ``sizes`` join them up, and as the whole lists
    (read from every change of the file at once)."""
    paged_sessions = {
        size: await paged(lambda after, limit: m.sessions_page(after, limit), session_cursor, size) for size in sizes
    }
    groups = await m.note_users()
    paged_notes = {
        (group, size): await paged(lambda after, limit, g=group: m.notes_page(g, after, limit), note_cursor, size)
        for group in groups
        for size in sizes
    }
    whole_sessions = await m.read(m._sessions, None)
    whole_notes = {group: await m.list_notes(group) for group in groups}
    return paged_sessions, whole_sessions, paged_notes, whole_notes, groups


def test_pages_join_up_to_the_whole_lists(mem0_file):
    """Sessions and notes paged (pages of several sizes, each after the last one's cursor) are the whole lists."""
    another_program(  # more memories at one time, so that pages end within a time's memories
        mem0_file,
        *(
            f"INSERT INTO history VALUES ('t{i}', 'm-tie-{i}', NULL, 'Tie', 'ADD', '{T3}', '{T3}', 0, 'alice', NULL)"
            for i in range(6)
        ),
    )
    paged_sessions, whole_sessions, paged_notes, whole_notes, groups = read(mem0_file, pages_and_wholes)
    assert len(whole_sessions) == 12 and groups == ["alice", "bob", "(no actor)"]
    for size, sessions in paged_sessions.items():
        assert sessions == whole_sessions, size
    assert [n.note_id for n in whole_notes["alice"]][:2] == ["m-tie-5", "m-tie-4"]  # one time: the later row first
    for (group, size), notes in paged_notes.items():
        assert notes == whole_notes[group], (group, size)


MEM0_HISTORY = (
    "CREATE TABLE history (id TEXT PRIMARY KEY, memory_id TEXT, old_memory TEXT, new_memory TEXT, event TEXT, "
    "created_at DATETIME, updated_at DATETIME, is_deleted INTEGER, actor_id TEXT, role TEXT)"
)
MEM0_MESSAGES = (
    "CREATE TABLE messages (id TEXT PRIMARY KEY, session_scope TEXT, role TEXT, content TEXT, name TEXT, "
    "created_at DATETIME)"
)
BAD_UTF8 = b"caf\xe9"


def odd_time(rng: random.Random, when: datetime):
    """``when`` as mem0 writes it — or, now and then, as it never does."""
    roll = rng.random()
    if roll < 0.75:
        return when.isoformat()
    return rng.choice(
        [
            when.replace(microsecond=999999).isoformat(),
            when.replace(tzinfo=None).isoformat(),
            when.astimezone(timezone.utc).isoformat().replace("+00:00", "Z"),
            when.strftime("%Y-%m-%d %H:%M:%S"),
            when.astimezone(timezone(timedelta(hours=5, minutes=30))).isoformat(),
            when.astimezone(timezone.utc).isoformat().replace("+00:00", "-00:00"),
            when.isoformat()[:19] + ".1234567" + when.isoformat()[-6:],
            "2025-02-30T10:00:00+00:00",
            "2025-03-01T24:00:00+00:00",
            "0000-01-01T00:00:00+00:00",
            "2025-13-01T10:00:00+00:00",
            "2025-03-01T10:00:00+00:00\x00x",
            "2025-03-01T1a:00:00+00:00",
            "2025-03-01t10:00:00+00:00",
            when.isoformat()[:19] + ".12a456+00:00",
            "soon",
            "",
            None,
            1741000000,
            when.isoformat().encode(),
        ]
    )


def odd_file(path, seed: int, *, ids=(), schema: str = MEM0_HISTORY, zone: timezone = timezone.utc) -> None:
    """A history of a few hundred memories, mostly as mem0 writes it, with what it never writes here and there:
    times of every form, events, flags, actors and memory ids mem0 does not write, changes out of order."""
    rng = random.Random(seed)
    times = [datetime(2025, 3, 1, 10, tzinfo=zone) + timedelta(minutes=rng.randrange(40)) for _ in range(30)]
    rows = []
    memory_ids = [f"m-{seed}-{i}" for i in range(120)] + list(ids)
    for n, memory_id in enumerate(memory_ids):
        created = rng.choice(times) + timedelta(microseconds=rng.choice([0, 0, 123456, rng.randrange(10**6)]))
        actor = rng.choice(["alice", "bob", None, "carol"])
        text = f"fact {n}"
        steps = rng.randrange(1, 5)
        for step in range(steps):
            when = created + timedelta(seconds=step * rng.choice([0, 1, 30]))
            event = "ADD" if step == 0 else "DELETE" if step == steps - 1 and rng.random() < 0.2 else "UPDATE"
            old, new = (None, text) if event == "ADD" else (text, None) if event == "DELETE" else (text, text + "+")
            text = new or text
            row = [f"h{n}-{step}", memory_id, old, new, event, created.isoformat(), when.isoformat(),
                   int(event == "DELETE"), actor, "user"]  # fmt: skip
            if rng.random() < 0.25:  # something mem0 never writes
                column = rng.choice(["created_at", "updated_at", "updated_at", "event", "is_deleted", "actor_id",
                                     "rowid", "old_memory", "new_memory"])  # fmt: skip
                if column in ("created_at", "updated_at"):
                    row[5 if column == "created_at" else 6] = odd_time(rng, when)
                elif column == "event":
                    row[4] = rng.choice(["FORGET", None, b"DELETE", "delete"])
                elif column == "is_deleted":
                    row[7] = rng.choice([None, "", "yes", 2, 0.0, 0.5, b"", b"\x00", "0"])
                elif column == "actor_id":
                    row[8] = rng.choice([None, "", "dave", b"bob", BAD_UTF8])
                elif column == "rowid":
                    row.append(-rng.randrange(1, 1000) - 1000 * n)
                else:
                    row[2 if column == "old_memory" else 3] = rng.choice([None, BAD_UTF8, b"\x00\xff"])
            if rng.random() < 0.03:
                row[6] = None  # the batch path's
            if rng.random() < 0.03:
                row[5], row[6] = row[6], row[5]  # created after updated
            rows.append(row)
    early, between, late = ((times[0] + timedelta(minutes=m)).isoformat() for m in (0, 30, 60))
    for n in range(5):  # what SQL would read otherwise, in memories that end at one time (ordered by rowid)
        rows += [  # an updated_at written as mem0 does but no date: its change's time is its created_at, the latest
            [f"k{n}-0", f"k-{seed}-{n}", None, "k", "ADD", early, early, 0, "alice", None],
            [f"k{n}-1", f"k-{seed}-{n}", "k", "k+", "UPDATE", late, "2025-02-30T10:00:00+00:00", 0, "alice", None],
            [f"k{n}-2", f"k-{seed}-{n}", "k", "k+", "UPDATE", early, between, 0, "alice", None],
        ]
        if n == 3:  # a year SQLite reads, Python does not: no time
            for row in rows[-3:]:
                row[5] = row[6] = "0000-01-01T00:00:00+00:00"
        elif n == 4:  # the latest of mem0's form, but no time: microseconds that are not digits
            rows[-2][5], rows[-2][6], rows[-1][6] = early, between, late[:19] + ".12a456+00:00"
        elif n % 2:  # the first change by the order of DATETIME(updated_at), not of its text
            updates = ("2025-03-01T00:00:00+00:00", "2025-02-29T10:00:00+00:00", late)  # (SQLite: 29th is March 1st)
            for row, updated in zip(rows[-3:], updates, strict=True):
                row[5], row[6] = "2025-02-28T00:00:00+00:00", updated
    rng.shuffle(rows)
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(schema)
        conn.execute(MEM0_MESSAGES)
        for row in rows:
            columns = "id, memory_id, old_memory, new_memory, event, created_at, updated_at, is_deleted, actor_id, role"
            values = ", ".join("CAST(? AS TEXT)" if v is BAD_UTF8 else "?" for v in row[:10])
            if len(row) > 10:
                columns, values = "rowid, " + columns, "?, " + values
                row = [row[10], *row[:10]]
            conn.execute(f"INSERT INTO history ({columns}) VALUES ({values})", row)
        conn.execute(
            "INSERT INTO messages VALUES ('x1', 'user_id=alice', 'user', 'hi', NULL, ?)", (times[0].isoformat(),)
        )


async def each_way(m, ids):
    """Each session's events (each memory's changes read alone), then the lists paged and whole."""
    events = {sid: await m.events_page(sid, None, 1000) for sid in ids}
    return await pages_and_wholes(m, sizes=(1, 4, 25)), events


def what_sql_read(conn) -> list:
    """Where what the lists need, read in SQL (:func:`overview`, :func:`first_rowids`), is not what reading every
    change shows (none)."""
    view = mem0_history.overview(conn)
    mem0_history.first_rowids(conn, view, list(view.updated))
    owners = mem0_history.read_owners(conn, view)
    wrong = []
    for sid, history in mem0_history.read_histories(conn).items():
        shown = (view.updated[sid], owners[sid], view.first(sid))
        if shown != (history.span()[1], (history.deleted, history.actor), history.changes[0].rowid):
            wrong.append((sid, shown))
    return wrong


async def the_whole_file(m):
    assert await m.read(what_sql_read) == []
    histories = await m.read(m._histories)  # every change read at once: the lists as a whole
    groups = {h.actor for h in histories.values() if not h.deleted}
    named = sorted(g for g in groups if g is not None) + (["(no actor)"] if None in groups else [])
    events = {
        row.session_id: await m.events_page(row.session_id, None, 1000) for row in await m.read(m._sessions, None)
    }
    return named, events


PACIFIC = timezone(timedelta(hours=-8))
ODD_IDS = (None, "", " \u3000", "(no memory_id) ", "nul\x00id", "\U0001f375", b"blob-id", BAD_UTF8)


@pytest.mark.parametrize(
    ("seed", "ids", "schema", "zone"),
    [
        (1, (), MEM0_HISTORY, timezone.utc),
        (2, ODD_IDS, MEM0_HISTORY, timezone.utc),  # ids none alike, some not a memory_id's
        (3, (None, "(no memory_id)"), MEM0_HISTORY, timezone.utc),  # two memories, one id: read in Python
        (4, ("x", b"x"), MEM0_HISTORY, timezone.utc),  # the same
        (5, (), MEM0_HISTORY.replace("memory_id TEXT", "memory_id TEXT COLLATE NOCASE"), timezone.utc),  # the same
        (6, (), MEM0_HISTORY, PACIFIC),  # an older mem0's local times
        (7, (), MEM0_HISTORY, timezone.utc),
        (8, (), MEM0_HISTORY, timezone.utc),
    ],
)
def test_pages_of_an_odd_file_are_what_reading_all_of_it_shows(tmp_path, seed, ids, schema, zone):
    """Whatever the file holds, the lists read a page at a time (in SQL where it can tell them exactly, else in
    Python) are what reading every change at once shows: the sessions, each group's notes, the groups, each
    session's events; and notes first is as sessions first."""
    path = tmp_path / "history.db"
    odd_file(path, seed, ids=ids, schema=schema, zone=zone)
    ids = [row.session_id for row in read(path, lambda m: m.sessions_page(limit=999))]
    (paged_sessions, whole_sessions, paged_notes, whole_notes, groups), events = read(path, lambda m: each_way(m, ids))
    expected_groups, expected_events = read(path, the_whole_file)
    assert groups == expected_groups
    assert events == expected_events
    assert any("problem" in row.details for row in whole_sessions)
    for sessions in paged_sessions.values():
        assert sessions == whole_sessions
    for (group, _), notes in paged_notes.items():
        assert notes == whole_notes[group]

    async def notes_first(m):
        notes = {g: await paged(lambda a, n, g=g: m.notes_page(g, a, n), note_cursor, 3) for g in await m.note_users()}
        return notes, await m.sessions_page(limit=1000)

    notes, sessions = read(path, notes_first)
    assert notes == whole_notes and sessions == whole_sessions
