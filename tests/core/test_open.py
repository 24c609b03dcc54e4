import os
import subprocess

import pytest

from oxmem_gui.core import MemoryStore, ReadOnlyError, StoreOpenError
from oxmem_gui.core.migrations import available_migrations, migrations_dir
from tests.conftest import open_sync, user


def test_new_store_is_wal_with_pragmas_and_migrations(store):
    assert store.migration_report.applied == ["0001_initial"] and store.migration_report.created
    assert store.sql("PRAGMA journal_mode") == [("wal",)]
    assert store.sql("PRAGMA foreign_keys") == [(1,)]
    assert store.sql("PRAGMA busy_timeout") == [(30000,)]
    assert store.sql("SELECT version FROM memory_migrations") == [("0001_initial",)]


def test_migrations_are_found():
    assert (migrations_dir() / "0001_initial.sql").is_file()
    assert [v for v, _ in available_migrations()] == ["0001_initial"]


def test_reopen_applies_nothing_and_unknown_versions_are_reported(tmp_path, loop):
    s = open_sync(loop, tmp_path / "m.db")
    s.exec_sql("INSERT INTO memory_migrations (version) VALUES ('0099_from_a_newer_agent')")
    s.aclose()
    again = open_sync(loop, tmp_path / "m.db")
    assert again.migration_report.applied == [] and again.migration_report.unknown == ["0099_from_a_newer_agent"]
    assert again.sql("SELECT count(*) FROM memory_migrations") == [(2,)]
    again.aclose()


def test_not_a_sqlite_file(tmp_path, loop):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello, I am plain text and definitely not a database " * 20)
    before = bad.read_bytes()
    for read_only in (True, False):
        with pytest.raises(StoreOpenError, match="notes.txt is not a SQLite database"):
            loop.run_until_complete(MemoryStore.open(bad, read_only=read_only))
    assert bad.read_bytes() == before


def test_missing_file_read_only_and_directory(tmp_path, loop):
    with pytest.raises(StoreOpenError, match="does not exist"):
        loop.run_until_complete(MemoryStore.open(tmp_path / "absent.db", read_only=True))
    assert not (tmp_path / "absent.db").exists()
    with pytest.raises(StoreOpenError, match="is a directory"):
        loop.run_until_complete(MemoryStore.open(tmp_path))


def test_foreign_database_is_not_touched(tmp_path, loop):
    import apsw

    path = tmp_path / "other.db"
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, text TEXT)")
    conn.close()
    with pytest.raises(StoreOpenError, match="is not a memory store \\(missing tables: sessions"):
        loop.run_until_complete(MemoryStore.open(path))
    conn = apsw.Connection(str(path))
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["memories", "sqlite_autoindex_memories_1"]
    conn.close()


def test_read_only_store_refuses_writes(tmp_path, loop):
    s = open_sync(loop, tmp_path / "m.db")
    s.store("s", 1, user("hello"))
    s.aclose()
    ro = open_sync(loop, tmp_path / "m.db", read_only=True)
    assert ro.read_only
    for call in (lambda: ro.store("s", 2, user("x")), lambda: ro.save_note("u", "x"), lambda: ro.forget("s")):
        with pytest.raises(ReadOnlyError, match="open read-only"):
            call()
    assert [e.sequence for e in ro.recall("s")] == [1]
    ro.aclose()


def _make_unwritable(path) -> bool:
    """chmod 0444, plus the immutable attribute when we are root (root ignores permissions)."""
    os.chmod(path, 0o444)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(path)], capture_output=True)
    try:
        with open(path, "r+b"):
            return False
    except OSError:
        return True


def test_read_only_file_opened_for_writing(tmp_path, loop):
    s = open_sync(loop, tmp_path / "m.db")
    s.store("s", 1, user("hello"))
    s.aclose()
    target = tmp_path / "m.db"
    try:
        if not _make_unwritable(target):
            pytest.skip("this file system lets us write to any file (root without chattr)")
        with pytest.raises(ReadOnlyError, match="m.db is read-only; open it read-only or make it writable"):
            loop.run_until_complete(MemoryStore.open(target))
        ro = open_sync(loop, target, read_only=True)
        assert [e.sequence for e in ro.recall("s")] == [1]
        ro.aclose()
    finally:
        subprocess.run(["chattr", "-i", str(target)], capture_output=True)


def test_a_libsql_vector_index_gives_a_clear_refusal(store):
    # newer Oxydra files index chunks_vec with libSQL's libsql_vector_idx(), which plain SQLite lacks
    store.exec_sql(
        "CREATE TRIGGER fake_libsql AFTER INSERT ON chunks_vec BEGIN SELECT libsql_vector_idx(new.embedding_blob); END"
    )
    with pytest.raises(ReadOnlyError, match="libSQL's vector index .* nothing was changed"):
        store.store("s", 1, user("hello"))
    assert store.sql("SELECT count(*) FROM conversation_events") == [(0,)]
