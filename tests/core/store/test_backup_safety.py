"""A backup never harms a file: not the source, not another database, not one in use, and never half-written."""

from __future__ import annotations

import os
from pathlib import Path

import apsw
import pytest

from oxmem_gui.core import InvalidInputError
from oxmem_gui.core.errors import OxmemError
from tests.conftest import user


def _rows(path: Path) -> list[tuple]:
    conn = apsw.Connection(str(path))  # read-write, so that SQLite removes the -wal/-shm of a WAL copy on close
    try:
        return conn.execute("SELECT chunk_text FROM chunks ORDER BY 1").fetchall()
    finally:
        conn.close()


def _other_database(path: Path) -> bytes:
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE precious (x); INSERT INTO precious VALUES ('keep me')")
    conn.close()
    return path.read_bytes()


def test_an_existing_database_is_not_overwritten_unless_asked(store, tmp_path):
    store.store("s", 1, user("in the store"))
    other = tmp_path / "other.db"
    before = _other_database(other)
    with pytest.raises(InvalidInputError, match=r"other\.db already exists: choose a new name; nothing was"):
        store.backup_to(other)
    assert other.read_bytes() == before
    assert store.backup_to(other, overwrite=True) == other
    assert _rows(other) == [("in the store",)]
    assert sorted(os.listdir(tmp_path)) == ["memory.db", "memory.db-shm", "memory.db-wal", "other.db"]


def test_through_a_symbolic_link_the_file_it_names_is_protected(store, tmp_path):
    other = tmp_path / "other.db"
    before = _other_database(other)
    link = tmp_path / "link.db"
    link.symlink_to(other)
    with pytest.raises(InvalidInputError, match=r"link\.db already exists"):
        store.backup_to(link)
    assert other.read_bytes() == before
    store.store("s", 1, user("through the link"))
    assert store.backup_to(link, overwrite=True) == other  # the file the link names is replaced, the link stays
    assert link.is_symlink() and _rows(other) == [("through the link",)]


def test_the_source_itself_is_refused_also_through_a_link(store, tmp_path):
    store.store("s", 1, user("x"))
    source = tmp_path / "memory.db"
    link = tmp_path / "same.db"
    link.symlink_to(source)
    for target in (source, link, tmp_path / "." / "memory.db"):
        with pytest.raises(InvalidInputError, match=r"is memory\.db itself: a backup must go to another file"):
            store.backup_to(target, overwrite=True)
    assert _rows(source) == [("x",)]


def test_bad_target_paths_are_one_clear_error_naming_the_target(store, tmp_path):
    with pytest.raises(InvalidInputError, match="the backup's file name holds a NUL character; nothing was written"):
        store.backup_to(str(tmp_path / "a\0b.db"))
    with pytest.raises(InvalidInputError, match=rf"{tmp_path} is a folder: name a file for the backup"):
        store.backup_to(tmp_path)
    loop = tmp_path / "loop.db"
    loop.symlink_to(loop)
    with pytest.raises(InvalidInputError, match=r"loop\.db cannot be a backup"):
        store.backup_to(loop, overwrite=True)
    blocked = tmp_path / "file"
    blocked.write_text("a file where a folder is needed")
    with pytest.raises(InvalidInputError, match=rf"{blocked}/copy\.db cannot be a backup: Not a directory") as caught:
        store.backup_to(blocked / "copy.db")
    assert "memory.db" not in str(caught.value)


def test_a_database_in_use_beside_its_wal_is_refused(store, tmp_path):
    other = tmp_path / "busy.db"
    before = _other_database(other)
    Path(f"{other}-wal").write_bytes(b"")
    with pytest.raises(InvalidInputError, match=r"busy\.db has a -wal or -journal file beside it"):
        store.backup_to(other, overwrite=True)
    assert other.read_bytes() == before


def test_a_failed_copy_leaves_the_old_target_and_no_partial_file(store, tmp_path, monkeypatch):
    store.store("s", 1, user("new"))
    other = tmp_path / "old-backup.db"
    before = _other_database(other)

    def full_disk(*_args: object) -> None:  # the copy is complete; putting it in place fails
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OxmemError, match=rf"cannot write {other}: No space left on device; nothing was written"):
        store.backup_to(other, overwrite=True)
    assert other.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["memory.db", "memory.db-shm", "memory.db-wal", "old-backup.db"]


def test_an_empty_file_is_a_free_name(store, tmp_path):
    store.store("s", 1, user("kept"))
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    assert store.backup_to(empty) == empty
    assert _rows(empty) == [("kept",)]
