"""A fact renamed onto a key its category already has, in aidaemon's legacy layout (``UNIQUE(category, key)``): one
line, exit 2, the file unchanged — never SQLite's constraint error; renaming onto a free key is done in place."""

from __future__ import annotations

from tests.cli._support import assert_one_error_line, fingerprint, run, run_json
from tests.core.formats.fixtures import make_aidaemon


def test_a_key_taken_in_the_legacy_layout_is_one_line_and_changes_nothing(capsys, tmp_path):
    db = make_aidaemon(tmp_path / "aidaemon.db", "legacy")
    assert run(capsys, "--db", str(db), "notes", "add", "preference", "color: blue")[:2] == (0, "fact:6\n")
    assert run(capsys, "--db", str(db), "notes", "add", "preference", "size: large")[:2] == (0, "fact:7\n")
    before = fingerprint(db)
    assert_one_error_line(
        *run(capsys, "--db", str(db), "notes", "update", "preference", "fact:7", "color: red"),
        "preference already has a fact 'color' ('blue'): edit that one instead; nothing was changed",
    )
    assert fingerprint(db) == before
    assert run(capsys, "--db", str(db), "notes", "update", "preference", "fact:7", "shade: red")[:2] == (0, "fact:7\n")
    code, out, _ = run(capsys, "--db", str(db), "notes", "list", "preference")
    assert code == 0 and [line.split()[-2:] for line in out.splitlines()[1:]] == [["shade:", "red"], ["color:", "blue"]]


def test_notes_add_update_delete(capsys, db):
    added = run_json(
        capsys, "--db", db, "notes", "add", "carol", "Likes green tea", "--tag", " Drinks ", "--tag", "DRINKS"
    )
    nid = added["note_id"]
    (note,) = run_json(capsys, "--db", db, "notes", "list", "carol")
    assert (note["note_id"], note["content"], note["tags"]) == (nid, "Likes green tea", ["drinks"])
    assert run_json(capsys, "--db", db, "notes", "update", "carol", nid, "Likes oolong", "--tag", "tea") == {
        "note_id": nid
    }
    (note,) = run_json(capsys, "--db", db, "notes", "list", "carol")
    assert (note["content"], note["tags"]) == ("Likes oolong", ["tea"])
    hits = run_json(capsys, "--db", db, "notes", "search", "carol", "oolong")
    assert [h["note_id"] for h in hits] == [nid] and hits[0]["hit"]["fts_rank"] == 1
    assert run_json(capsys, "--db", db, "notes", "delete", "carol", nid) == {"deleted": nid}
    assert run_json(capsys, "--db", db, "notes", "list", "carol") == []


def test_an_update_changes_only_what_it_is_given(capsys, db):
    """``notes update ID TEXT`` without ``--tag`` used to clear the note's tags: they stay; ``--no-tags`` clears
    them, and ``--tag`` with ``--no-tags`` is refused."""
    nid = run_json(capsys, "--db", db, "notes", "add", "carol", "Likes green tea", "--tag", "drinks")["note_id"]
    assert run_json(capsys, "--db", db, "notes", "update", "carol", nid, "Likes oolong") == {"note_id": nid}
    (note,) = run_json(capsys, "--db", db, "notes", "list", "carol")
    assert (note["content"], note["tags"]) == ("Likes oolong", ["drinks"])
    assert run_json(capsys, "--db", db, "notes", "update", "carol", nid, "Likes oolong", "--no-tags") == {
        "note_id": nid
    }
    (note,) = run_json(capsys, "--db", db, "notes", "list", "carol")
    assert (note["content"], note["tags"]) == ("Likes oolong", [])
    code, out, err = run(capsys, "--db", db, "notes", "update", "carol", nid, "x", "--tag", "a", "--no-tags")
    assert code == 2 and out == "" and "not allowed with argument" in err


def test_a_v07_file_migrated_forward_is_edited_in_place(capsys, tmp_path):
    """aidaemon v0.7 (commit 2211dfd9) added ``superseded_at`` to a facts table that keeps its table-level
    ``UNIQUE(category, key)`` (schema text: FORMATS.md §D). An edit there raised SQLite's UNIQUE constraint error
    (a new version inserted beside the old): it is made in place; a deletion supersedes, as aidaemon's
    ``delete_fact`` does, and undoing it brings the fact back."""
    import asyncio
    import sqlite3

    from oxmem_gui.core.api import open_memory

    db = make_aidaemon(tmp_path / "aidaemon.db", "legacy")
    conn = sqlite3.connect(db)
    conn.executescript(  # verbatim, aidaemon 2211dfd9 src/state/sqlite.rs lines 182–190
        "ALTER TABLE facts ADD COLUMN superseded_at TEXT;\n"
        "ALTER TABLE facts ADD COLUMN recall_count INTEGER DEFAULT 0;\n"
        "ALTER TABLE facts ADD COLUMN last_recalled_at TEXT;\n"
    )
    conn.close()
    assert run(capsys, "--db", str(db), "notes", "add", "preference", "color: blue")[:2] == (0, "fact:6\n")
    assert run(capsys, "--db", str(db), "notes", "update", "preference", "fact:6", "color: red")[:2] == (0, "fact:6\n")
    rows = sqlite3.connect(db).execute("SELECT id, value, superseded_at FROM facts WHERE key = 'color'").fetchall()
    assert rows == [(6, "red", None)]
    assert run(capsys, "--db", str(db), "notes", "delete", "preference", "fact:6")[:2] == (0, "deleted fact:6\n")
    (row,) = sqlite3.connect(db).execute("SELECT id, value, superseded_at FROM facts WHERE key = 'color'").fetchall()
    assert row[:2] == (6, "red") and row[2] is not None
    assert_one_error_line(
        *run(capsys, "--db", str(db), "notes", "add", "preference", "color: green"),
        "preference has a forgotten fact 'color' that this file's UNIQUE(category, key) still holds",
    )

    async def delete_and_undo():
        async with await open_memory(db, read_only=False, embedding="deterministic") as m:
            note = await m.save_note("preference", "size: large")
            await m.delete_notes("preference", [note.note_id], expected=[note])
            return await m.restore_notes([note], expected={note.note_id: None})

    (back,) = asyncio.run(delete_and_undo())
    assert (back.note_id, back.content) == ("fact:7", "size: large")
    rows = sqlite3.connect(db).execute("SELECT id, superseded_at FROM facts WHERE key = 'size'").fetchall()
    assert rows == [(7, None)]
