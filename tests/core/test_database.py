import os
import subprocess
import sys

import pytest

from oxmem_gui.core import InvalidInputError, MemoryStore, ReadOnlyError, StoreOpenError
from oxmem_gui.core.store.migrations import available_migrations, migrations_dir
from tests.conftest import open_sync, user
from tests.processes import without_write_override


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


def test_pending_versions_commit_with_the_first_write_and_roll_back_with_a_refused_one(tmp_path, loop):
    """An existing store missing a version: opening read-write writes nothing; a refused write leaves it pending;
    the first write that succeeds records it in its own transaction."""
    s = open_sync(loop, tmp_path / "m.db")
    s.exec_sql("DELETE FROM memory_migrations")
    s.aclose()
    again = open_sync(loop, tmp_path / "m.db")
    assert again.migration_report.pending == ["0001_initial"] and again.migration_report.applied == []
    with pytest.raises(InvalidInputError, match="content"):
        again.save_note("alice", "   ")
    assert again.sql("SELECT count(*) FROM memory_migrations") == [(0,)]
    assert again.migration_report.pending == ["0001_initial"]
    note = again.save_note("alice", "kept")
    assert again.sql("SELECT version FROM memory_migrations") == [("0001_initial",)]
    assert again.migration_report.applied == ["0001_initial"] and again.migration_report.pending == []
    assert [n.note_id for n in again.list_notes("alice")] == [note.note_id]
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


_OPEN_TWICE = """
import asyncio, sys
from oxmem_gui.core import MemoryStore, ReadOnlyError

async def main():
    try:
        await MemoryStore.open(sys.argv[1])
    except ReadOnlyError as exc:
        print(exc)
    ro = await MemoryStore.open(sys.argv[1], read_only=True)
    print([e.sequence for e in await ro.recall("s")])
    await ro.aclose()

asyncio.run(main())
"""


def test_read_only_file_opened_for_writing(tmp_path, loop):
    """Mode 0444, opened read-write by a process that cannot write it (as root: one without CAP_DAC_OVERRIDE)."""
    s = open_sync(loop, tmp_path / "m.db")
    s.store("s", 1, user("hello"))
    s.aclose()
    target = tmp_path / "m.db"
    os.chmod(target, 0o444)
    demote = without_write_override if os.geteuid() == 0 else None
    done = subprocess.run(
        [sys.executable, "-c", _OPEN_TWICE, str(target)], capture_output=True, text=True, timeout=120,
        env={**os.environ, "OXMEM_EMBEDDING": "deterministic"}, preexec_fn=demote,  # noqa: PLW1509
    )  # fmt: skip
    assert done.stdout.splitlines() == [f"{target} is read-only; open it read-only or make it writable", "[1]"], (
        done.stderr
    )


def test_a_libsql_vector_index_gives_a_clear_refusal(store):
    # newer Oxydra files index chunks_vec with libSQL's libsql_vector_idx(), which plain SQLite lacks
    store.exec_sql(
        "CREATE TRIGGER fake_libsql AFTER INSERT ON chunks_vec BEGIN SELECT libsql_vector_idx(new.embedding_blob); END"
    )
    with pytest.raises(ReadOnlyError, match="libSQL's vector index .* nothing was changed"):
        store.store("s", 1, user("hello"))
    assert store.sql("SELECT count(*) FROM conversation_events") == [(0,)]


# -- beside a live agent: files left behind, folders that cannot be written, damage ------------------------


def fingerprint(path):
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def demo_file(loop, path):
    s = open_sync(loop, path)
    s.store("s", 1, user("hello there"))
    s.save_note("u", "a note", ["t"])
    s.aclose()
    return path


def test_a_read_only_open_leaves_nothing_behind_and_changes_no_byte(tmp_path, loop):
    db = demo_file(loop, tmp_path / "m.db")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.db"]
    before = fingerprint(db)
    ro = open_sync(loop, db, read_only=True)
    assert [e.sequence for e in ro.recall("s")] == [1] and ro.hybrid_query("s", "hello").hits
    assert {p.name for p in tmp_path.iterdir()} == {"m.db", "m.db-wal", "m.db-shm"}  # SQLite needs them to read
    ro.aclose()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.db"] and fingerprint(db) == before


def test_files_in_use_by_the_agent_stay(tmp_path, loop):
    import apsw

    db = demo_file(loop, tmp_path / "m.db")
    agent = apsw.Connection(str(db))
    agent.execute("SELECT count(*) FROM sessions").fetchall()
    ro = open_sync(loop, db, read_only=True)
    ro.aclose()
    assert {p.name for p in tmp_path.iterdir()} == {"m.db", "m.db-wal", "m.db-shm"}
    agent.close()  # the last connection: SQLite removes them itself
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.db"]


_KILLED_READ = """
import asyncio, os, signal, sys
from oxmem_gui.core.memory import open_memory

async def main():
    m = await open_memory(sys.argv[1], read_only=True, embedding="deterministic")
    await m.list_sessions()
    os.kill(os.getpid(), signal.SIGKILL)  # mid-read, as `oxmem sql` killed by the user

asyncio.run(main())
"""


def test_the_files_a_killed_read_left_are_released_by_the_next_read(tmp_path, loop, monkeypatch):
    """A read killed before it closes leaves the ``-wal``/``-shm`` SQLite made for it; the next read knows them as
    oxmem's (its note in the cache folder) and releases them. Files the agent left (no note) stay."""
    import subprocess
    import sys

    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    folder = tmp_path / "files"
    folder.mkdir()
    db = demo_file(loop, folder / "m.db")
    before = fingerprint(db)
    killed = subprocess.run([sys.executable, "-c", _KILLED_READ, str(db)], env={**os.environ}, timeout=120)
    assert killed.returncode == -9
    assert {p.name for p in folder.iterdir()} == {"m.db", "m.db-wal", "m.db-shm"}
    assert len(list((cache / "oxmem" / "reads").iterdir())) == 1
    ro = open_sync(loop, db, read_only=True)
    assert [e.sequence for e in ro.recall("s")] == [1]
    ro.aclose()
    assert sorted(p.name for p in folder.iterdir()) == ["m.db"] and fingerprint(db) == before
    assert list((cache / "oxmem" / "reads").iterdir()) == []

    # the agent's own: a process that opened the file in WAL mode and died (no note of oxmem's)
    dies = "import apsw, os, sys; c = apsw.Connection(sys.argv[1]); c.execute('SELECT 1 FROM sessions'); os._exit(0)"
    agent = subprocess.run([sys.executable, "-c", dies, str(db)], timeout=120)
    assert agent.returncode == 0 and {p.name for p in folder.iterdir()} == {"m.db", "m.db-wal", "m.db-shm"}
    ro = open_sync(loop, db, read_only=True)
    ro.aclose()
    assert {p.name for p in folder.iterdir()} == {"m.db", "m.db-wal", "m.db-shm"}


def files_of(*folders):
    """Every file of ``folders``: name → (its bytes' sha256, or where a link points)."""
    import hashlib

    seen = {}
    for folder in folders:
        for p in sorted(folder.rglob("*")):
            if p.is_symlink():
                seen[str(p)] = f"-> {os.readlink(p)}"
            elif p.is_file():
                seen[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return seen


_CLI = "import sys; from oxmem_gui.cli import main; sys.exit(main())"


def cli_read(db, cache, *argv):
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "OXMEM_EMBEDDING": "deterministic"}
    return subprocess.run([sys.executable, "-c", _CLI, "--db", str(db), *argv], env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


@pytest.mark.parametrize("command", [["sessions"], ["check", "--quick"]])
def test_a_read_through_a_symbolic_link_releases_the_files_beside_the_file_itself(tmp_path, loop, command):
    """SQLite opens the file a link names, and makes its ``-wal``/``-shm`` beside that file: a read through
    ``link.db`` used to look for them beside the link, so it left ``real.db-wal``/``-shm`` that no later read
    released."""
    files, elsewhere = tmp_path / "files", tmp_path / "links"
    files.mkdir(), elsewhere.mkdir()
    real = demo_file(loop, files / "real.db")
    (elsewhere / "link.db").symlink_to(real)
    before = fingerprint(real)
    done = cli_read(elsewhere / "link.db", tmp_path / "cache", *command)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in files.iterdir()) == ["real.db"] and fingerprint(real) == before
    assert sorted(p.name for p in elsewhere.iterdir()) == ["link.db"]


@pytest.mark.parametrize("command", [["events", "s"], ["check"], ["search", "s", "changed"], ["sql", "SELECT 1"]])
def test_a_stale_file_beside_a_link_never_checkpoints_a_dead_agents_pending_changes(tmp_path, loop, command):
    """The agent died with changes in ``real.db-wal`` (not yet in the file); an empty ``link.db-wal`` lies beside a
    link to it. A read through the link reads the agent's changes and leaves every byte as it was — it used to take
    the link's stale file for its own and checkpoint the agent's changes into ``real.db``."""
    files, elsewhere = tmp_path / "files", tmp_path / "links"
    files.mkdir(), elsewhere.mkdir()
    real = demo_file(loop, files / "real.db")
    dies = (
        "import apsw, os, sys; c = apsw.Connection(sys.argv[1]); c.execute('PRAGMA wal_autocheckpoint = 0'); "
        "c.execute(\"UPDATE conversation_events SET payload_json = json_set(payload_json, '$.content', 'changed')\"); "
        "os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", dies, str(real)], check=True, timeout=120)
    assert (files / "real.db-wal").stat().st_size > 0
    (elsewhere / "link.db").symlink_to(real)
    (elsewhere / "link.db-wal").write_bytes(b"")
    before = files_of(files, elsewhere)
    done = cli_read(elsewhere / "link.db", tmp_path / "cache", *command)
    assert done.returncode == 0 and ("changed" in done.stdout or command[0] in ("check", "sql")), done.stderr
    after = files_of(files, elsewhere)
    shm = str(files / "real.db-shm")  # SQLite's index of the -wal, which any reader rebuilds after a crash
    assert after.pop(shm) and before.pop(shm) and after == before


def test_a_link_planted_as_a_reads_note_is_replaced_never_written_through(tmp_path, loop, monkeypatch):
    """A read notes in the cache folder that the ``-wal``/``-shm`` it makes are its own; a symbolic link planted
    where the note goes used to make the read overwrite the link's target."""
    from oxmem_gui.core.database import _reading_mark_path

    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    db = demo_file(loop, tmp_path / "m.db")
    victim = tmp_path / "precious.txt"
    victim.write_text("the user's own file\n")
    mark = _reading_mark_path(db)
    mark.parent.mkdir(parents=True)
    mark.symlink_to(victim)
    done = cli_read(db, cache, "sessions")
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "the user's own file\n"
    assert list(mark.parent.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == [
        "cache",
        "m.db",
        "precious.txt",
    ]


def as_another_user(fn):
    """Run ``fn()`` in a forked child that cannot write the test's folder — as uid 65534 when the tests run as
    root (root ignores folder permissions), else under the folder's own 0555 mode — and return what it returns
    (or the text of what it raised). No new interpreter is started, so nothing on disk needs to be readable."""
    import json

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.close(read)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
            result = {"value": fn()}
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            result = {"error": f"{type(exc).__name__}: {exc}"}
        os.write(write, json.dumps(result).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    return json.loads(data)


@pytest.fixture
def unwritable_folder():
    import shutil
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix="oxmem-ro-"))
    folder.chmod(0o755)
    yield folder
    folder.chmod(0o755)
    shutil.rmtree(folder)


def test_a_wal_store_in_a_folder_this_user_cannot_write_opens_as_a_snapshot(unwritable_folder, loop):
    from oxmem_gui.core.database import open_connection

    db = demo_file(loop, unwritable_folder / "m.db")
    db.chmod(0o644)
    unwritable_folder.chmod(0o555)
    before = fingerprint(db)

    def read():
        conn, notice = open_connection(db, read_only=True)
        rows = conn.execute("SELECT session_id FROM sessions ORDER BY 1").fetchall()
        conn.close()
        return [r[0] for r in rows], notice

    got = as_another_user(read)
    assert got == {
        "value": [
            ["memory:u", "s"],
            "m.db is open as a snapshot: its folder is not writable, so SQLite cannot share the agent's lock; "
            "changes made after opening are not seen (open it again to refresh)",
        ]
    }
    assert sorted(p.name for p in unwritable_folder.iterdir()) == ["m.db"] and fingerprint(db) == before


def test_pending_wal_changes_in_an_unwritable_folder_are_a_clear_refusal(unwritable_folder, tmp_path, loop):
    import shutil

    import apsw

    from oxmem_gui.core.database import open_connection

    live = demo_file(loop, tmp_path / "m.db")
    agent = apsw.Connection(str(live))
    agent.execute("PRAGMA wal_autocheckpoint = 0")
    agent.execute("UPDATE sessions SET agent_identity = 'still running'")
    for suffix in ("", "-wal"):  # the agent's files as a crash would leave them, with no -shm index
        shutil.copy(f"{live}{suffix}", unwritable_folder / f"m.db{suffix}")
        os.chmod(unwritable_folder / f"m.db{suffix}", 0o644)
    agent.close()
    unwritable_folder.chmod(0o555)

    def read():
        open_connection(unwritable_folder / "m.db", read_only=True)

    got = as_another_user(read)
    assert got["error"] == (
        f"StoreOpenError: cannot open {unwritable_folder / 'm.db'} read-only: it has changes in m.db-wal that SQLite "
        f"can only read through a -shm index, and {unwritable_folder} is not writable — open it while its agent "
        "runs, or copy the database with its -wal file to a writable folder"
    )


def corrupt_page_of(db, table):
    """Overwrite the first leaf page of ``table`` with 0xFF bytes (after a checkpoint, so the page is in the
    file). Returns the page number."""
    import apsw

    conn = apsw.Connection(str(db))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = conn.execute("PRAGMA page_size").fetchall()[0][0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchall()[0][0]
    conn.close()
    with open(db, "r+b") as fh:
        fh.seek((root - 1) * page_size)
        fh.write(b"\xff" * page_size)
    return root


def test_a_corrupt_page_is_one_clear_line(tmp_path, loop):
    from oxmem_gui.core import DamagedError

    db = demo_file(loop, tmp_path / "m.db")
    corrupt_page_of(db, "conversation_events")
    ro = open_sync(loop, db, read_only=True)
    with pytest.raises(DamagedError) as caught:
        ro.recall("s")
    assert str(caught.value) == (
        f"database is damaged (database disk image is malformed): open a backup or run `oxmem --db {db} check`"
    )
    ro.aclose()


def test_a_store_missing_a_table_of_a_recorded_migration_is_damaged(tmp_path, loop):
    import apsw

    from oxmem_gui.core import DamagedError

    db = demo_file(loop, tmp_path / "m.db")
    conn = apsw.Connection(str(db))
    conn.execute("DROP TABLE schedule_runs")
    conn.close()
    for read_only in (True, False):
        with pytest.raises(DamagedError) as caught:
            loop.run_until_complete(MemoryStore.open(db, read_only=read_only, embedding="deterministic"))
        assert str(caught.value) == (
            "database is damaged (table schedule_runs and 1 more of migration 0001_initial is missing although it "
            f"is recorded): open a backup or run `oxmem --db {db} check`"
        )


def test_opening_a_file_again_here_keeps_the_first_connections_locks(tmp_path, loop):
    """Enable Editing opens the agent's file a second time while the first store is open: reading its header must
    not close a descriptor of it (that drops every POSIX lock of this process, SQLite's too). Then another
    process that reads and closes would checkpoint and delete the -wal our connection writes to, and our next
    write would go to an unlinked file that nobody else sees."""
    import sys

    from oxmem_gui.core.memory import open_memory
    from tests.core.formats import fixtures as fx

    path = fx.make_omega(tmp_path / "memory.db")
    code = (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); row = c.execute("
        "'SELECT value FROM facts WHERE sender_id = ? AND key = ?', ('4242', sys.argv[2])).fetchone(); "
        "print(row[0] if row else '-'); c.close()"
    )

    def seen_elsewhere(key: str) -> str:
        done = subprocess.run([sys.executable, "-c", code, str(path), key], capture_output=True, text=True)
        return done.stdout.strip()

    async def go():
        first = await open_memory(path)  # read-only, as the inspector opens a file
        second = await open_memory(path, read_only=False)  # Enable Editing
        await first.aclose()
        try:
            await second.save_note("4242", "bike: blue")
            assert seen_elsewhere("bike") == "blue"  # that process closed its connection as the last one there
            await second.save_note("4242", "car: red")
            assert seen_elsewhere("car") == "red"
            held = [os.readlink(f"/proc/self/fd/{f}") for f in os.listdir("/proc/self/fd") if os.path.exists(
                f"/proc/self/fd/{f}")]  # fmt: skip
            assert not [f for f in held if "memory.db" in f and f.endswith("(deleted)")], held
        finally:
            await second.aclose()

    loop.run_until_complete(go())
    assert (seen_elsewhere("bike"), seen_elsewhere("car")) == ("blue", "red")
