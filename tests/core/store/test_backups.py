"""Backups taken before editing: naming, listing, and restoring one into a live file."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import datetime
from pathlib import Path

import apsw
import pytest

from oxmem_gui.core import InvalidInputError, StoreBusyError
from oxmem_gui.core.store.backups import backup_target, list_backups, restore


def make_db(path: Path, rows: list[str]) -> None:
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE IF NOT EXISTS t(x TEXT)")
    conn.execute("DELETE FROM t")
    for row in rows:
        conn.execute("INSERT INTO t VALUES (?)", (row,))
    conn.close()


def rows(path: Path) -> list[str]:
    conn = apsw.Connection(str(path))
    try:
        return [r[0] for r in conn.execute("SELECT x FROM t ORDER BY rowid")]
    finally:
        conn.close()


def test_names_are_unique_and_listing_is_newest_first(tmp_path):
    when = datetime(2037, 11, 23, 9, 30, 5)
    first = backup_target(tmp_path, Path("/data/memory.db"), when)
    assert first.name == "memory-20371123-093005.db"
    first.write_bytes(b"x")
    second = backup_target(tmp_path, Path("/data/memory.db"), when)
    assert second.name == "memory-20371123-093005-2.db"
    second.write_bytes(b"xy")
    later = backup_target(tmp_path, Path("/data/agent"), datetime(2037, 11, 24, 8, 0, 0))
    assert later.name == "agent-20371124-080000.db"
    later.write_bytes(b"xyz")
    for stray in ("memory-20371123-093005.db-wal", "memory-20371123-093005.db-shm", "notes.txt"):
        (tmp_path / stray).write_bytes(b"")
    listed = list_backups(tmp_path)
    assert [(b.path.name, b.source, b.size) for b in listed] == [
        ("agent-20371124-080000.db", "agent.db", 3),
        ("memory-20371123-093005.db", "memory.db", 1),
        ("memory-20371123-093005-2.db", "memory.db", 2),
    ]
    assert listed[0].taken_at == datetime(2037, 11, 24, 8, 0, 0)
    assert list_backups(tmp_path / "missing") == []


def test_restore_replaces_the_content_and_leaves_the_backup_alone(tmp_path):
    live, backup = tmp_path / "memory.db", tmp_path / "backup.db"
    make_db(backup, ["old one", "old two"])
    make_db(live, ["new"])
    restore(backup, live)
    assert rows(live) == ["old one", "old two"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["backup.db", "memory.db"]


def test_restoring_something_that_is_not_a_database_writes_nothing(tmp_path):
    live, bad = tmp_path / "memory.db", tmp_path / "notes.txt"
    make_db(live, ["kept"])
    bad.write_text("hello, not a database" * 50)
    with pytest.raises(InvalidInputError, match="notes.txt is not a SQLite database"):
        restore(bad, live)
    assert rows(live) == ["kept"]


def test_restore_waits_for_a_writer_in_another_process_then_says_busy(tmp_path):
    live, backup = tmp_path / "memory.db", tmp_path / "backup.db"
    make_db(backup, ["old"])
    make_db(live, ["agent's"])
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import apsw, sys, time
                conn = apsw.Connection({str(live)!r})
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("INSERT INTO t VALUES ('mid-write')")
                print("locked", flush=True)
                sys.stdin.readline()
                conn.execute("COMMIT")
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(StoreBusyError, match="memory.db is busy"):
            restore(backup, live, busy_timeout_ms=200)
    finally:
        holder.communicate("go\n", timeout=10)
    assert rows(live) == ["agent's", "mid-write"]  # the agent's commit went through, nothing was mixed in
    restore(backup, live)
    assert rows(live) == ["old"]
