"""A remote memory on a real libSQL server (tursodb): the snapshot equals the rows, search on it equals search on
the local file, and a refresh moves only what changed."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Any

import apsw
import pytest

from oxmem_gui.core import OperationCancelled, ReadOnlyError
from oxmem_gui.core.api import SearchOptions
from oxmem_gui.core.memory import open_memory, open_remote, refresh_remote
from oxmem_gui.core.remote import RemoteError, snapshot
from tests.remote_server import TursoServer, copy_rows

QUERIES = ("sourdough starter smell", "Berlin appointment in April", "export test order", "hydration")


def rows_of(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (rowid first), and chunks_fts's rows as the FTS table returns them."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                "AND name NOT LIKE 'chunks_fts_%' ORDER BY name"
            )
        ]
        out = {}
        for t in tables:
            columns = "rowid, chunk_id, session_id, chunk_text" if t == "chunks_fts" else "rowid, *"
            out[t] = conn.execute(f"SELECT {columns} FROM {t} ORDER BY rowid").fetchall()
        return out
    finally:
        conn.close()


async def pull_rows(server: TursoServer, folder: Path) -> dict[str, list[tuple[Any, ...]]]:
    """The server's rows as a fresh pull finds them."""
    async with await open_remote(server.url, folder=folder, embedding="deterministic") as fresh:
        return rows_of(fresh.remote.path)


def add_events(
    server: TursoServer, session_id: str, start: int, count: int, stamp: str = "2026-06-01 10:00:00"
) -> None:
    """``count`` events appended to a session as the agent appends them (and the session's updated_at set to
    ``stamp``: whatever the agent's clock says, the refresh reads no time)."""
    rows = [
        (session_id, start + i, json.dumps({"role": "user", "content": f"event {start + i}"}), stamp)
        for i in range(count)
    ]
    server.insert("conversation_events", ["session_id", "sequence", "payload_json", "created_at"], rows)
    server.execute("UPDATE sessions SET updated_at = ? WHERE session_id = ?", [stamp, session_id])


def first_session(path: Path) -> str:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute(
            "SELECT session_id FROM chunks GROUP BY session_id ORDER BY count(*) DESC, session_id LIMIT 1"
        ).fetchall()[0][0]
    finally:
        conn.close()


def test_a_snapshot_holds_every_row_of_every_table_and_rebuilds_fts(oxydra_server, oxydra_file, cache):
    async def go() -> None:
        memory = await open_remote(oxydra_server.url, folder=cache, embedding="deterministic")
        async with memory:
            assert memory.format == "oxydra"
            assert memory.remote.report.consistency == "one transaction"
            assert memory.remote.report.requests == 2  # the schema, then every table in one transaction
            assert rows_of(memory.remote.path) == rows_of(oxydra_file)
            assert memory.open_notice.startswith(f"snapshot of {oxydra_server.url} at ")
            assert oxydra_server.execute("SELECT count(*) FROM sqlite_master WHERE name = 'chunks_fts'")[0][0] == {
                "type": "integer",
                "value": "0",
            }  # the server has no FTS5: the copy's full-text table was made here

    asyncio.run(go())


def test_a_paged_pull_is_the_same_copy(oxydra_server, oxydra_file, cache, monkeypatch):
    monkeypatch.setattr(snapshot, "PAGE_ROWS", 4)

    sizes = {t: len(rows) for t, rows in rows_of(oxydra_file).items() if t != "chunks_fts"}
    pages = sum(-(-(n - 4) // 4) for n in sizes.values() if n > 4)  # after each table's first page of 4

    async def go() -> None:
        async with await open_remote(oxydra_server.url, folder=cache, embedding="deterministic") as memory:
            report = memory.remote.report
            assert report.consistency == "paged"
            assert report.rows == sizes
            assert pages == 27 and report.requests == 2 + pages + 1  # schema, first pages; the rest; the count
            assert rows_of(memory.remote.path) == rows_of(oxydra_file)

    asyncio.run(go())


def test_search_on_the_snapshot_equals_search_on_the_local_file(oxydra_server, oxydra_file, cache):
    conn = apsw.Connection(str(oxydra_file), flags=apsw.SQLITE_OPEN_READONLY)
    sessions = [r[0] for r in conn.execute("SELECT DISTINCT session_id FROM chunks ORDER BY 1")]
    conn.close()

    async def go() -> None:
        local = await open_memory(oxydra_file, read_only=True, create=False, embedding="deterministic")
        remote = await open_remote(oxydra_server.url, folder=cache, embedding="deterministic")
        async with local, remote:
            assert [r.name for r in remote.retrievers()] == [r.name for r in local.retrievers()]
            compared = 0
            for session in sessions:
                for ranking in ("oxmem", "tuned", "oxydra"):
                    for query in QUERIES:
                        mine = await local.search(ranking, session, query, 8)
                        theirs = await remote.search(ranking, session, query, 8)
                        assert [(h.chunk_id, h.score, h.fts_raw, h.vector_raw) for h in theirs.hits] == [
                            (h.chunk_id, h.score, h.fts_raw, h.vector_raw) for h in mine.hits
                        ], (session, ranking, query)
                        compared += len(mine.hits)
            assert len(sessions) == 5 and compared > 100
            fts = await remote.search(
                "oxmem", "discord:carol:sourdough", "starter", 8, options=SearchOptions(fts_weight=1.0, vector_weight=0)
            )
            assert [h.text[:20] for h in fts.hits if h.fts_raw is not None] == [
                "My sourdough starter",
                "Start at 70% hydrati",
            ]  # the FTS leg answers on the copy, whose full-text table was built here

    asyncio.run(go())


def test_a_refresh_of_an_unchanged_memory_changes_nothing_in_one_request(oxydra_server, oxydra_file, cache):
    async def go() -> None:
        async with await open_remote(oxydra_server.url, folder=cache, embedding="deterministic") as memory:
            before = rows_of(memory.remote.path)
            report = await refresh_remote(memory)
            assert report.requests == 1 and report.consistency == "one transaction"
            assert set(report.changed.values()) == {0} and len(report.changed) == 11
            assert report.rows == {t: len(rows) for t, rows in before.items() if t != "chunks_fts"}  # all small
            assert rows_of(memory.remote.path) == before

    asyncio.run(go())


def test_a_refresh_moves_the_new_events_and_the_changed_session(oxydra_server, oxydra_file, cache, tmp_path):
    session = first_session(oxydra_file)

    async def go() -> None:
        async with await open_remote(oxydra_server.url, folder=cache, embedding="deterministic") as memory:
            copy = memory.remote.path
            add_events(oxydra_server, session, 1000, 1_000, stamp="1999-01-01 00:00:00")  # a clock far behind
            report = await refresh_remote(memory)
            assert {t: n for t, n in report.changed.items() if n} == {"conversation_events": 1_000, "sessions": 1}
            assert report.requests == 1 and report.consistency == "one transaction"
            assert report.rows["conversation_events"] == 1_021  # the 21 the copy had, compared, and the new ones
            assert report.unchecked == {}  # every table small: read whole
            assert rows_of(copy) == await pull_rows(oxydra_server, tmp_path / "fresh")
            events = await memory.events_page(session, 999, 5)
            assert [e.sequence for e in events] == [1000, 1001, 1002, 1003, 1004]
            again = await refresh_remote(memory)  # 1,021 events now: summaries, a check window, no new rows
            assert again.requests == 1 and set(again.changed.values()) == {0}
            assert again.rows["conversation_events"] == 1_021 and again.unchecked["conversation_events"] == 0
            assert again.cursor["conversation_events"] == 0  # 1,021 events of ~100 bytes fit in one 1 MiB window

    asyncio.run(go())


def test_a_refresh_follows_changes_and_deletions_and_keeps_fts_in_step(oxydra_server, oxydra_file, cache, tmp_path):
    session = first_session(oxydra_file)

    async def go() -> None:
        async with await open_remote(oxydra_server.url, folder=cache, embedding="deterministic") as memory:
            server = oxydra_server
            chunk = server.execute("SELECT chunk_id FROM chunks WHERE session_id = ? ORDER BY rowid", [session])
            gone, changed = chunk[0][0]["value"], chunk[1][0]["value"]
            server.execute("DELETE FROM chunks_vec WHERE chunk_id = ?", [gone])
            server.execute("DELETE FROM chunks WHERE chunk_id = ?", [gone])
            server.execute("UPDATE chunks SET chunk_text = 'a marmalade recipe' WHERE chunk_id = ?", [changed])
            server.execute(  # written with another clock's format
                "UPDATE session_state SET state_json = '{\"summary\":\"new\"}', updated_at = '2026-06-01T11:00:00Z' "
                "WHERE session_id = ?",
                [session],
            )
            server.execute("DELETE FROM conversation_events WHERE rowid = (SELECT max(rowid) FROM conversation_events)")
            report = await refresh_remote(memory)
            assert {t: n for t, n in report.changed.items() if n} == {
                "chunks": 2,
                "chunks_vec": 1,
                "session_state": 1,
                "conversation_events": 1,
            }
            assert rows_of(memory.remote.path) == await pull_rows(server, tmp_path / "fresh")
            hits = await memory.search(
                "oxmem", session, "marmalade", 5, options=SearchOptions(vector_weight=0.0, fts_weight=1.0)
            )
            assert [h.chunk_id for h in hits.hits if h.fts_raw is not None] == [changed]
            ids = [h.chunk_id for h in (await memory.search("oxmem", session, "starter", 30)).hits]
            assert gone not in ids

    asyncio.run(go())


def test_a_refresh_after_the_tables_changed_asks_to_open_again_and_keeps_the_copy(oxydra_server, cache):
    async def go() -> None:
        async with await open_remote(oxydra_server.url, folder=cache, embedding="deterministic") as memory:
            before = rows_of(memory.remote.path)
            oxydra_server.execute("CREATE TABLE agent_extra (id INTEGER PRIMARY KEY, note TEXT)")
            with pytest.raises(RemoteError, match="changed since the snapshot was taken: open it again"):
                await refresh_remote(memory)
            assert rows_of(memory.remote.path) == before

    asyncio.run(go())


def test_the_copy_is_read_only_with_the_reason_and_removed_on_close(oxydra_server, oxydra_file, cache):
    session = first_session(oxydra_file)

    async def go() -> None:
        memory = await open_remote(oxydra_server.url, folder=cache, embedding="deterministic")
        copy = memory.remote.path
        assert copy.parent == cache and copy.is_file()
        assert oct(cache.stat().st_mode & 0o777) == "0o700"
        assert set(memory.capabilities.refusals) == {"events", "sessions", "turns", "notes", "schedules", "summary"}
        assert not memory.capabilities.editable
        with pytest.raises(ReadOnlyError, match="snapshot of a remote database is read-only"):
            await memory.store(session, 99, {"role": "user", "content": "x"})
        events = oxydra_server.count("conversation_events")
        await memory.aclose()
        assert sorted(p.name for p in cache.iterdir()) == []  # the copy and its WAL files are gone
        assert oxydra_server.count("conversation_events") == events

    asyncio.run(go())


def test_copies_of_processes_that_ended_are_swept(oxydra_server, cache):
    cache.mkdir(mode=0o700)
    dead = cache / "999999999-1-127.0.0.1_1.db"
    dead.write_bytes(b"left by a crash")
    mine = cache / f"{os.getpid()}-9999-127.0.0.1_1.db"
    mine.write_bytes(b"open in this process")

    async def go() -> None:
        async with await open_remote(oxydra_server.url, folder=cache, embedding="deterministic"):
            assert not dead.exists() and mine.exists()

    asyncio.run(go())


def test_a_cancelled_pull_leaves_nothing(oxydra_server, cache, monkeypatch):
    monkeypatch.setattr(snapshot, "PAGE_ROWS", 4)
    stop = threading.Event()
    seen = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        stop.set()

    async def go() -> None:
        with pytest.raises(OperationCancelled):
            await open_remote(oxydra_server.url, folder=cache, embedding="deterministic", progress=progress, stop=stop)

    asyncio.run(go())
    assert seen[0][1] > seen[0][0] > 0
    assert list(cache.iterdir()) == []


def test_a_memory_that_is_not_an_agent_opens_as_tables(server, cache):
    server.execute("CREATE TABLE recipes (id INTEGER PRIMARY KEY, name TEXT, grams REAL, photo BLOB)")
    server.insert(
        "recipes", ["id", "name", "grams", "photo"], [(1, "bread", 500.5, b"\x00\xff"), (2, "jam", None, None)]
    )

    async def go() -> None:
        async with await open_remote(server.url, folder=cache, embedding="deterministic") as memory:
            assert memory.format == "sqlite-unknown"
            assert memory.open_notice.endswith("(not an agent's memory: its tables are shown)")
            page = await memory.table_page("recipes")
            assert [tuple(r) for r in page.rows] == [(1, "bread", 500.5, b"\x00\xff"), (2, "jam", None, None)]

    asyncio.run(go())


def test_rows_copied_to_the_server_keep_their_rowids(server, tmp_path):
    """The helper that fills the server: what the other tests compare against is what the server holds."""
    path = tmp_path / "src.db"
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE t (a TEXT); INSERT INTO t (rowid, a) VALUES (5, 'x'), (9, 'y')")
    server.execute("CREATE TABLE t (a TEXT)")
    copy_rows(server, conn)
    conn.close()
    assert server.execute("SELECT rowid, a FROM t ORDER BY rowid") == [
        [{"type": "integer", "value": "5"}, {"type": "text", "value": "x"}],
        [{"type": "integer", "value": "9"}, {"type": "text", "value": "y"}],
    ]
