"""The store's schema versions (core/store/migrations.py): what opening a file plans and applies on fresh, partly-made
and other programs' files, and how a new store is taken back when the command that created it fails."""

from __future__ import annotations

import asyncio
import os
from datetime import datetime, timezone

import apsw
import pytest

from oxmem_gui.core.api import InvalidInputError, open_memory
from oxmem_gui.core.database import write_transaction
from oxmem_gui.core.errors import DamagedError, StoreOpenError
from oxmem_gui.core.store.migrations import (
    MigrationReport,
    apply_pending,
    available_migrations,
    create_store,
    discard_new_store,
    missing_schema,
    plan_migrations,
    recorded_versions,
    table_names,
)
from tests.core.formats import fixtures as fx

VERSIONS = ["0001_initial"]
FIXED = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def connect(tmp_path):
    """Plain APSW connections to files in ``tmp_path``, closed after the test."""
    opened = []

    def connect(name: str) -> apsw.Connection:
        conn = apsw.Connection(str(tmp_path / name))
        opened.append(conn)
        return conn

    yield connect
    for conn in opened:
        conn.close()


def test_a_fresh_file_becomes_a_wal_store_only_with_create(tmp_path, connect):
    conn = connect("new.db")
    with pytest.raises(StoreOpenError) as refused:
        plan_migrations(conn, "new.db", create=False, own=True)
    assert str(refused.value) == "new.db is empty, not a memory store (`oxmem init` makes it one)"
    report = plan_migrations(conn, "new.db", create=True, own=True)
    assert report == MigrationReport(pending=VERSIONS, created=True)
    assert (tmp_path / "new.db").stat().st_size == 0  # planning writes nothing

    create_store(conn, report, "new.db")
    assert report == MigrationReport(applied=VERSIONS, created=True)
    assert conn.execute("PRAGMA journal_mode").fetchall() == [("wal",)]
    assert recorded_versions(conn) == VERSIONS and missing_schema(conn) is None
    assert plan_migrations(conn, "new.db", create=True, own=True) == MigrationReport()  # reopening: nothing to do


def test_a_partly_made_store_has_its_versions_pending_and_applying_records_them(connect):
    conn = connect("partly.db")
    conn.execute(dict(available_migrations())["0001_initial"])  # the tables, but no memory_migrations
    assert recorded_versions(conn) == []
    assert plan_migrations(conn, "partly.db", create=False, own=False) == MigrationReport()  # another agent's: kept
    report = plan_migrations(conn, "partly.db", create=False, own=True)
    assert report == MigrationReport(pending=VERSIONS)

    with write_transaction(conn):
        apply_pending(conn, report, "partly.db")
    assert report == MigrationReport(applied=VERSIONS)
    assert conn.execute("SELECT version FROM memory_migrations").fetchall() == [("0001_initial",)]


def test_a_script_that_fails_is_rolled_back_with_the_callers_write(connect):
    conn = connect("odd.db")
    for table in ("sessions", "conversation_events", "session_state", "chunks", "chunks_vec", "chunks_fts"):
        conn.execute(f"CREATE TABLE {table} (x)")  # the names of a store, none of its columns
    before = table_names(conn)
    report = plan_migrations(conn, "odd.db", create=False, own=True)
    with pytest.raises(apsw.SQLError, match="no such column: updated_at"), write_transaction(conn):
        apply_pending(conn, report, "odd.db")
    assert table_names(conn) == before  # no memory_migrations, no table of the script
    assert report == MigrationReport(pending=VERSIONS)


def test_files_of_another_program_or_a_newer_version_are_reported_not_migrated(tmp_path, connect):
    agent = fx.make_oxydra_agent(tmp_path / "oxydra.db")  # Oxydra's own versions in a memory_migrations table
    conn = connect(agent.name)
    report = plan_migrations(conn, "oxydra.db", create=False, own=False)
    assert report == MigrationReport(unknown=fx.OXYDRA_AGENT_MIGRATIONS[:23])  # the agent's 0001–0023, untouched
    assert report.unknown[-1] == "0023_add_full_output_to_schedule_runs" and missing_schema(conn) is None

    recipes = connect(fx.make_unknown_sqlite(tmp_path / "recipes.db").name)
    with pytest.raises(StoreOpenError) as refused:
        plan_migrations(recipes, "recipes.db", create=True, own=True)
    assert str(refused.value) == (
        "recipes.db is not a memory store (missing tables: sessions, conversation_events, session_state, chunks, "
        "chunks_vec, chunks_fts)"
    )

    newer = connect("newer.db")
    create_store(newer, plan_migrations(newer, "newer.db", create=True, own=True), "newer.db")
    newer.execute("INSERT INTO memory_migrations (version) VALUES ('0002_from_a_newer_oxmem')")
    assert plan_migrations(newer, "newer.db", create=False, own=True) == MigrationReport(
        unknown=["0002_from_a_newer_oxmem"]
    )


def test_a_dropped_object_of_a_recorded_version_is_damage_tables_named_first(connect):
    conn = connect("m.db")
    create_store(conn, plan_migrations(conn, "m.db", create=True, own=True), "m.db")
    conn.execute("DROP TRIGGER trg_chunks_fts_ad")
    conn.execute("DROP INDEX idx_schedules_user_id")
    assert missing_schema(conn) == "index idx_schedules_user_id and 1 more of migration 0001_initial is missing " + (
        "although it is recorded"
    )
    conn.execute("DROP TABLE files")  # its index goes with it
    assert missing_schema(conn) == "table files and 3 more of migration 0001_initial is missing although it is recorded"
    with pytest.raises(DamagedError) as damaged:
        plan_migrations(conn, "m.db", create=False, own=True)
    assert str(damaged.value) == (
        "database is damaged (table files and 3 more of migration 0001_initial is missing although it is recorded): "
        "open a backup or run `oxmem --db m.db check`"
    )


def _new_store_whose_command_fails(path):
    """Create a store at ``path`` as a command does, and fail that command's write before anything is kept."""

    async def go():
        async with await open_memory(path, read_only=False, embedding="deterministic") as memory:
            with pytest.raises(InvalidInputError):
                await memory.save_note("alice", "   ")

    asyncio.run(go())


def test_a_new_store_is_discarded_with_the_files_beside_it(tmp_path, connect):
    _new_store_whose_command_fails(tmp_path / "m.db")
    assert discard_new_store(tmp_path / "m.db", None) is True
    assert list(tmp_path.iterdir()) == []

    live = connect("live.db")  # still open: its -wal and -shm are there
    create_store(live, plan_migrations(live, "live.db", create=True, own=True), "live.db")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["live.db", "live.db-shm", "live.db-wal"]
    assert discard_new_store(tmp_path / "live.db", None) is True
    assert list(tmp_path.iterdir()) == []


def test_an_empty_file_made_a_store_is_cut_back_to_zero_bytes_with_its_times(tmp_path):
    path = tmp_path / "m.db"
    path.write_bytes(b"")
    stamp = int(FIXED.timestamp()) * 10**9
    os.utime(path, ns=(stamp, stamp))
    before = path.stat()
    _new_store_whose_command_fails(path)
    assert path.stat().st_size > 0
    assert discard_new_store(path, before) is True
    assert (path.stat().st_size, path.stat().st_mtime_ns, path.stat().st_atime_ns) == (0, stamp, stamp)
    assert [p.name for p in tmp_path.iterdir()] == ["m.db"]


def test_a_store_holding_anything_or_a_file_that_is_no_store_is_kept(tmp_path, store):
    store.store("s", 1, {"role": "user", "content": "hello"})
    assert discard_new_store(store.path, None) is False

    scheduled = tmp_path / "scheduled.db"
    assert asyncio.run(_store_with_a_schedule(scheduled)) == 1
    assert discard_new_store(scheduled, None) is False

    recipes = fx.make_unknown_sqlite(tmp_path / "recipes.db")
    size = recipes.stat().st_size
    assert discard_new_store(recipes, None) is False and recipes.stat().st_size == size
    assert discard_new_store(tmp_path / "absent.db", None) is False and not (tmp_path / "absent.db").exists()
    assert store.sql("SELECT count(*) FROM sessions") == [(1,)]


async def _store_with_a_schedule(path):
    async with await open_memory(path, read_only=False, embedding="deterministic") as memory:
        await memory.schedules.create("alice", "water the plants", {"type": "interval", "every_secs": 3600}, now=FIXED)
        return await memory.schedules.count()
