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
