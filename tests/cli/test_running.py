"""A command that changes an existing file backs it up first, as the inspector's Enable Editing does: one backup per
run in the backups folder, the newest 10 per file kept; none with --no-backup, for a read, or for a new store."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from oxmem_gui.core.store import backups
from oxmem_gui.core.store.backups import backup_target, list_backups, prune
from tests.cli._support import assert_one_error_line, build_demo, run, run_json


def notes_of(capsys, path: Path) -> list[str]:
    return sorted(n["content"] for n in run_json(capsys, "--db", str(path), "notes", "list", "alice"))


def test_a_write_backs_the_file_up_first_and_a_read_does_not(capsys, tmp_path, monkeypatch):
    folder = tmp_path / "backups"
    monkeypatch.setenv("OXMEM_BACKUP_DIR", str(folder))
    db = build_demo(tmp_path / "demo")
    before = notes_of(capsys, db)
    assert not folder.exists()  # a read takes none
    code, _, err = run(capsys, "--db", str(db), "notes", "add", "alice", "a new note")
    assert (code, err) == (0, "")  # said in the log (and on a terminal), not in a script's stderr
    (taken,) = list_backups(folder)
    assert taken.source == "demo.db" and notes_of(capsys, taken.path) == before
    assert notes_of(capsys, db) == sorted([*before, "a new note"])
    assert run(capsys, "--db", str(db), "--no-backup", "notes", "add", "alice", "another")[0] == 0
    assert len(list_backups(folder)) == 1
    assert run(capsys, "--db", str(tmp_path / "new.db"), "notes", "add", "bob", "first")[0] == 0
    assert [b.source for b in list_backups(folder)] == ["demo.db"]  # a store the command created: nothing to keep


def test_the_newest_backups_of_a_file_are_kept(tmp_path, monkeypatch):
    folder = tmp_path / "backups"
    folder.mkdir()
    source = tmp_path / "memory.db"
    made = []
    for day in range(1, 14):
        path = backup_target(folder, source, datetime(2026, 3, day, 9, 0, 0))
        path.write_bytes(b"backup")
        made.append(path)
    other = backup_target(folder, tmp_path / "zeke.db", datetime(2026, 3, 1))
    other.write_bytes(b"another file's")
    removed = prune(folder, source)
    assert removed == made[:3][::-1] and sorted(os.listdir(folder)) == sorted(p.name for p in [*made[3:], other])
    monkeypatch.setattr(backups, "KEEP", 2)
    assert prune(folder, source) == made[3:11][::-1]
    assert [b.path for b in list_backups(folder)] == [made[12], made[11], other]


def test_oxmem_backup_writes_a_new_file_and_replaces_a_database_only_with_overwrite(capsys, tmp_path):
    """``oxmem backup FILE``: a complete copy at a new name; an existing SQLite file only with ``--overwrite``; a
    FIFO, a text file or the store itself never, each in one line with the file as it was."""
    db = build_demo(tmp_path / "demo")
    copy = tmp_path / "copy.db"
    code, out, err = run(capsys, "--db", str(db), "backup", str(copy))
    assert (code, out, err) == (0, f"backed up demo.db to {copy}\n", "")
    assert notes_of(capsys, copy) == notes_of(capsys, db)
    before = copy.read_bytes()
    code, out, err = run(capsys, "--db", str(db), "backup", str(copy))
    assert_one_error_line(code, out, err, f"{copy} already exists (a SQLite database, ", "--overwrite replaces it")
    assert copy.read_bytes() == before
    assert run(capsys, "--db", str(db), "backup", str(copy), "--overwrite")[0] == 0
    fifo, text = tmp_path / "pipe", tmp_path / "notes.txt"
    os.mkfifo(fifo)
    text.write_text("mine\n")
    for target, words in [
        (fifo, "is a FIFO (named pipe): a backup is written only to a regular file"),
        (text, "is not a SQLite database: a backup never replaces another kind of file"),
        (db, "is demo.db itself: a backup must go to another file"),
    ]:
        assert_one_error_line(*run(capsys, "--db", str(db), "backup", str(target), "--overwrite"), words)
    assert text.read_text() == "mine\n" and fifo.is_fifo()


def test_a_write_the_format_refuses_takes_no_backup(capsys, tmp_path, monkeypatch):
    """A backup is for a change that will be made: another agent's file refusing the command leaves the backups
    folder as it was (it filled with copies of untouched files before), an edit its agent makes is backed up."""
    from tests.core.formats.fixtures import make_zeke

    folder = tmp_path / "backups"
    monkeypatch.setenv("OXMEM_BACKUP_DIR", str(folder))
    zeke = make_zeke(tmp_path / "zeke.db")
    for argv in (["check", "--repair"], ["demo"], ["import-jsonl", str(tmp_path / "none.jsonl")]):
        if argv[0] == "import-jsonl":
            (tmp_path / "none.jsonl").write_text('{"session_id": "s", "sequence": 1, "payload": {"role": "user"}}\n')
        code, out, err = run(capsys, "--db", str(zeke), *argv)
        assert_one_error_line(code, out, err, "ZEKE")
        assert not folder.exists(), argv
    code, out, err = run(capsys, "--db", str(zeke), "notes", "add", "notes", "a memory of mine")
    assert code == 0 and err.startswith("oxmem: notice: the memory is saved without a vector")
    assert [b.source for b in list_backups(folder)] == ["zeke.db"]
