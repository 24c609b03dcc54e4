"""Text that is not valid UTF-8 (any SQLite client can write it) never crashes a command: it is shown with U+FFFD
(events, notes, sessions, tables, sql, diff), ``check`` names the cells, and the file is never changed by it."""

from __future__ import annotations

import shutil

import apsw
import pytest

from tests.cli._support import build_demo, fingerprint, run

SESSION = "telegram:alice:lisbon-trip"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A demo store, and a copy of it where an event, a session's agent and a note hold invalid UTF-8."""
    folder = tmp_path_factory.mktemp("utf8")
    clean = build_demo(folder / "clean")
    bad = folder / "bad.db"
    shutil.copy(clean, bad)
    conn = apsw.Connection(str(bad))
    conn.execute(
        "UPDATE conversation_events SET payload_json = CAST(? AS TEXT) WHERE session_id = ? AND sequence = 2",
        (b'{"role":"user","content":"h\xffi!"}', SESSION),
    )
    conn.execute("UPDATE sessions SET agent_identity = CAST(x'41ff' AS TEXT) WHERE session_id = ?", (SESSION,))
    note = conn.execute(
        "SELECT rowid FROM conversation_events WHERE session_id = 'memory:alice' ORDER BY sequence LIMIT 1"
    ).fetchall()[0][0]
    conn.execute(
        "UPDATE conversation_events SET payload_json = CAST(? AS TEXT) WHERE rowid = ?",
        (b'{"role":"user","content":"caf\xe9 au lait","kind":"note"}', note),
    )
    conn.close()
    return clean, bad, note


@pytest.mark.parametrize(
    "command",
    [
        ["sessions"],
        ["events", SESSION],
        ["notes", "list", "alice"],
        ["tables"],
        ["tables", "sessions"],
        ["sql", "SELECT agent_identity FROM sessions"],
        ["search", SESSION, "flights"],
        ["--json", "events", SESSION],
    ],
)
def test_every_read_shows_it_with_replacement_characters(capsys, files, command):
    _, bad, _ = files
    before = fingerprint(bad)
    code, out, err = run(capsys, "--db", str(bad), *command)
    assert code == 0 and "Traceback" not in err, err
    assert fingerprint(bad) == before


def test_the_text_is_shown_with_u_fffd_and_said(capsys, files):
    _, bad, _ = files
    code, out, err = run(capsys, "--db", str(bad), "events", SESSION)
    assert code == 0 and "h\ufffdi!" in out
    assert err == "oxmem: notice: 3 text values not valid UTF-8: shown with \ufffd (oxmem check names them)\n"
    code, out, _ = run(
        capsys, "--db", str(bad), "sql", "SELECT agent_identity FROM sessions WHERE agent_identity LIKE 'A%'"
    )
    assert out.splitlines()[1] == "A\ufffd"


def test_check_names_the_cells(capsys, files):
    clean, bad, note = files
    code, out, _ = run(capsys, "--db", str(bad), "check")
    line = next(line for line in out.splitlines() if " text " in line)
    assert line.split(None, 2)[:2] == ["warning", "text"]
    assert "3 text values not valid UTF-8" in line and f"conversation_events.payload_json rowid {note}" in line
    assert "sessions.agent_identity rowid" in line
    _, out, _ = run(capsys, "--db", str(clean), "check")
    assert any(
        line.split()[:2] == ["ok", "text"] and "every text value is valid UTF-8" in line for line in out.splitlines()
    )


def test_diff_against_the_clean_copy_does_not_crash(capsys, files):
    clean, bad, _ = files
    code, _, err = run(capsys, "diff", str(clean), str(bad))
    assert code == 0 and "Traceback" not in err
