"""``oxmem diff OLD NEW``: counts first, then a line per change; ``--json`` has it all; bad input is one line."""

from __future__ import annotations

import json
import shutil

from tests.cli.test_search_all import cli


def test_diff_of_the_demo_after_edits_and_its_errors(capsys, tmp_path):
    db, backup = tmp_path / "m.db", tmp_path / "backup.db"
    base = ("--embedding", "deterministic")
    assert cli(capsys, "--db", str(db), *base, "demo")[0] == 0
    shutil.copy(db, backup)
    assert cli(capsys, "diff", str(backup), str(db))[1].splitlines()[1:] == ["no changes"]
    notes = json.loads(cli(capsys, "--db", str(db), *base, "--json", "notes", "list", "alice")[1])
    first = notes[0]
    text = first["content"].replace("every", "each")
    update = ("notes", "update", "alice", first["note_id"], text, "--tag", "new")
    assert cli(capsys, "--db", str(db), *base, *update)[0] == 0
    assert cli(capsys, "--db", str(db), *base, "forget", "telegram:alice:tomatoes")[0] == 0
    code, out, err = cli(capsys, "diff", str(backup), str(db))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1] == "sessions removed 1, notes changed 1"
    assert lines[2] == "session removed   telegram:alice:tomatoes  had 4 events"
    assert lines[3].startswith(f"note changed alice/{first['note_id']}  +#new -#")
    assert "[-every-] {+each+}" in lines[3]
    doc = json.loads(cli(capsys, "--json", "diff", str(backup), str(db))[1])
    assert doc["counts"] == {"sessions removed": 1, "notes changed": 1}
    assert doc["notes"][0]["tags_added"] == ["new"] and {"op": "+", "text": "each"} in doc["notes"][0]["words"]
    code, out, err = cli(capsys, "diff", str(backup), str(tmp_path / "missing.db"))
    assert (code, out) == (2, "") and err.count("\n") == 1 and "missing.db does not exist" in err
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".db") == ["backup.db", "m.db"]
