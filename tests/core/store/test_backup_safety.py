"""A backup never harms a file: not the source, not another database, not one in use, and never half-written."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import apsw
import pytest

from oxmem_gui.core import InvalidInputError
from oxmem_gui.core.errors import OxmemError
from oxmem_gui.core.store.backups import TargetExistsError
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
    with pytest.raises(TargetExistsError, match=r"other\.db already exists \(a SQLite database, 8,192 bytes, ") as info:
        store.backup_to(other)
    assert info.value.what.startswith("a SQLite database, 8,192 bytes, changed ")
    assert other.read_bytes() == before
    assert store.backup_to(other, overwrite=True) == other
    assert _rows(other) == [("in the store",)]
    assert sorted(os.listdir(tmp_path)) == ["memory.db", "memory.db-shm", "memory.db-wal", "other.db"]


def test_a_symbolic_link_is_never_written_through(store, tmp_path):
    other = tmp_path / "other.db"
    before = _other_database(other)
    link = tmp_path / "link.db"
    link.symlink_to(other)
    for overwrite in (False, True):
        with pytest.raises(InvalidInputError, match=r"link\.db is a symbolic link \(to .*other\.db\): a backup is "):
            store.backup_to(link, overwrite=overwrite)
    assert other.read_bytes() == before and link.is_symlink()


def test_the_source_itself_is_refused_also_through_a_hard_link(store, tmp_path):
    store.store("s", 1, user("x"))
    source = tmp_path / "memory.db"
    hard = tmp_path / "same.db"
    os.link(source, hard)
    for target in (source, hard, tmp_path / "." / "memory.db"):
        with pytest.raises(InvalidInputError, match=r"is memory\.db itself: a backup must go to another file"):
            store.backup_to(target, overwrite=True)
    assert _rows(source) == [("x",)]


def test_bad_target_paths_are_one_clear_error_naming_the_target(store, tmp_path):
    with pytest.raises(InvalidInputError, match="the backup's file name holds a NUL character; nothing was written"):
        store.backup_to(str(tmp_path / "a\0b.db"))
    with pytest.raises(InvalidInputError, match=rf"{tmp_path} is a folder: a backup is written only to a regular file"):
        store.backup_to(tmp_path)
    loop = tmp_path / "loop.db"
    loop.symlink_to(loop)
    with pytest.raises(InvalidInputError, match=r"loop\.db is a symbolic link \(to .*loop\.db\)"):
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


def test_an_empty_file_is_replaced_only_when_confirmed(store, tmp_path):
    store.store("s", 1, user("kept"))
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    with pytest.raises(TargetExistsError, match=r"empty\.db already exists \(an empty file\)"):
        store.backup_to(empty)
    assert empty.read_bytes() == b""
    assert store.backup_to(empty, overwrite=True) == empty
    assert _rows(empty) == [("kept",)]


def _kind(path: Path) -> tuple:
    """What a refusal must leave as it was: the file's type and mode, and its bytes if it is a regular file."""
    st = path.lstat()
    regular = stat.S_ISREG(st.st_mode)
    return stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), path.read_bytes() if regular else os.readlink(path) \
        if stat.S_ISLNK(st.st_mode) else None  # fmt: skip


def _make(kind: str, path: Path, source: Path) -> Path | str:
    """A target of ``kind`` at ``path``; a string: why this run cannot make one."""
    if kind == "backup":
        from oxmem_gui.core.store.backups import backup_target

        target = backup_target(path.parent, source)
        _other_database(target)
        return target
    if kind == "other database":
        _other_database(path)
    elif kind == "not sqlite":
        path.write_text("someone's notes\n")
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "character device":
        if os.geteuid() != 0:
            return "making a character device needs root (os.mknod); this run is not root"
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the numbers of /dev/null, in a scratch folder
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    elif kind == "folder":
        path.mkdir()
    elif kind == "symlink":
        _other_database(path.with_name("named.db"))
        path.symlink_to(path.with_name("named.db"))
    elif kind == "dangling symlink":
        path.symlink_to(path.with_name("nowhere.db"))
    elif kind == "the store":
        return source
    return path


#: kind of target → (written without overwrite, written with overwrite, the refusal's words)
TARGETS = {
    "new path": (True, True, None),
    "backup": (False, True, "already exists (an oxmem backup, "),
    "other database": (False, True, "already exists (a SQLite database, "),
    "empty": (False, True, "already exists (an empty file)"),
    "not sqlite": (False, False, "is not a SQLite database: a backup never replaces another kind of file"),
    "character device": (False, False, "is a character device: a backup is written only to a regular file"),
    "fifo": (False, False, "is a FIFO (named pipe): a backup is written only to a regular file"),
    "socket": (False, False, "is a socket: a backup is written only to a regular file"),
    "folder": (False, False, "is a folder: a backup is written only to a regular file"),
    "symlink": (False, False, "is a symbolic link (to "),
    "dangling symlink": (False, False, "is a symbolic link (to "),
    "the store": (False, False, "is memory.db itself: a backup must go to another file"),
}


@pytest.mark.parametrize("overwrite", [False, True])
@pytest.mark.parametrize("kind", sorted(TARGETS))
def test_what_a_backup_may_replace(store, tmp_path, kind, overwrite):
    """Each kind of target, with and without ``overwrite``: written (a complete copy, a regular file, nothing
    else left) or refused in one line, with the target's type, mode and bytes as they were."""
    store.store("s", 1, user("copied"))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    target = _make(kind, scratch / "copy.db", store.path)
    if isinstance(target, str) and not target.startswith("/"):
        pytest.skip(target)
    target = Path(target)
    written = TARGETS[kind][1 if overwrite else 0]
    around = sorted(p.name for p in scratch.iterdir())
    before = _kind(target) if os.path.lexists(target) else None
    if written:
        assert store.backup_to(target, overwrite=overwrite) == target
        assert stat.S_ISREG(target.lstat().st_mode) and _rows(target) == [("copied",)]
    else:
        words = TARGETS[kind][2]
        with pytest.raises(InvalidInputError) as info:
            store.backup_to(target, overwrite=overwrite)
        assert words in str(info.value) and "\n" not in str(info.value), str(info.value)
        assert str(info.value).endswith(("nothing was written", "nothing was overwritten"))
        assert _kind(target) == before
    assert sorted(p.name for p in scratch.iterdir()) == sorted({*around, target.name} - {"memory.db"})
