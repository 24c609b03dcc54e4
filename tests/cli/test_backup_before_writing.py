"""A command that changes an existing file backs it up first, as the inspector's Enable Editing does: one backup per
run in the backups folder, the newest 10 per file kept; none with --no-backup, for a read, or for a new store."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from oxmem_gui.core.store import backups
from oxmem_gui.core.store.backups import backup_target, list_backups, prune
from tests.cli._support import build_demo, run, run_json


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
