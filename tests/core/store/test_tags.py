"""A tag holding a comma is refused wherever tags are written (commas separate tags everywhere they are typed):
one ``InvalidInputError`` line naming the tag, raised before anything is written — through the core, an import
file and the ``oxmem notes`` commands (exit status 2, one error line)."""

from __future__ import annotations

import json

import pytest

from oxmem_gui.core import InvalidInputError, OxmemError
from oxmem_gui.core.store.note_files import parse_notes_json
from oxmem_gui.core.store.tags import normalize_tags, tags_to_save
from tests.cli._support import assert_one_error_line, build_demo, counts, run

MESSAGE = "tag 'a,b' contains a comma; commas separate tags, so give each tag on its own"


def test_tags_to_save_refuses_a_comma_and_otherwise_normalizes():
    assert tags_to_save([" Travel ", "TRAVEL", "seats"]) == ["travel", "seats"]
    assert tags_to_save(None) == [] and tags_to_save(iter(["x"])) == ["x"]
    with pytest.raises(InvalidInputError) as caught:
        tags_to_save(["ok", "A,B"])
    assert str(caught.value) == "tag 'A,B' contains a comma; commas separate tags, so give each tag on its own"
    assert isinstance(caught.value, OxmemError) and "\n" not in str(caught.value)
    with pytest.raises(InvalidInputError, match="not one string"):
        tags_to_save("a,b")
    # a filter only reads: a comma there matches nothing, it is not an error
    assert normalize_tags(["a,b"]) == ["a,b"]


def test_store_writes_nothing_with_a_comma_tag(store):
    kept = store.save_note("alice", "Prefers aisle seats", ["travel"])
    for write in (
        lambda: store.save_note("alice", "Prefers window seats", ["travel", "a,b"]),
        lambda: store.update_note("alice", kept.note_id, "Prefers window seats", ["a,b"], expected=kept),
        lambda: store.set_note_tags("alice", [kept.note_id], add=["a,b"], expected=[kept]),
    ):
        with pytest.raises(InvalidInputError) as caught:
            write()
        assert str(caught.value) == MESSAGE
    assert store.list_notes("alice") == [kept]
    # removing such a tag (one another program wrote) stays possible
    assert store.set_note_tags("alice", [kept.note_id], remove=["a,b"]) == [kept]


def test_an_import_file_with_a_comma_tag_is_refused():
    text = json.dumps([{"note_id": "note-1", "user": "alice", "content": "x", "tags": ["ok", "a,b"]}])
    with pytest.raises(InvalidInputError) as caught:
        parse_notes_json(text)
    assert str(caught.value) == MESSAGE


def test_cli_refuses_a_comma_tag_in_one_line(capsys, tmp_path):
    db = build_demo(tmp_path / "store")
    before = counts(db)
    code, out, err = run(
        capsys, "--db", str(db), "--embedding", "deterministic", "notes", "add", "alice", "x", "--tag", "a,b"
    )
    assert_one_error_line(code, out, err, MESSAGE)
    assert err == f"oxmem: error: {MESSAGE}\n"
    code, out, err = run(capsys, "--db", str(db), "--json", "notes", "list", "alice")
    note = json.loads(out)[0]
    code, out, err = run(
        capsys,
        "--db",
        str(db),
        "--embedding",
        "deterministic",
        "notes",
        "update",
        "alice",
        note["note_id"],
        "changed",
        "--tag",
        "ok",
        "--tag",
        "x,y",
    )
    assert_one_error_line(code, out, err, "tag 'x,y' contains a comma")
    assert counts(db) == before
    code, out, _ = run(capsys, "--db", str(db), "--json", "notes", "list", "alice")
    assert json.loads(out)[0] == note
