"""``oxmem search --all``: one ranking over every session; each hit names its session."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import apsw
import pytest

from oxmem_gui.cli import main
from tests.core.formats.fixtures import write_all


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def formats(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_all(tmp_path_factory.mktemp("formats"))


def test_all_sessions_of_the_store_in_one_ranking(capsys, tmp_path):
    db = str(tmp_path / "m.db")
    assert cli(capsys, "--db", db, "--embedding", "deterministic", "demo")[0] == 0
    base = ("--db", db, "--embedding", "deterministic")
    code, out, err = cli(capsys, *base, "--json", "search", "--all", "invoice rounding", "--top-k", "6")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["session_id"] is None and len(doc["hits"]) == 6
    sessions = {h["session_id"] for h in doc["hits"]}
    assert "cli:alice:invoice-rounding" in sessions and len(sessions) >= 2
    best = doc["hits"][0]
    one = json.loads(cli(capsys, *base, "--json", "search", best["session_id"], "invoice rounding", "--top-k", "6")[1])
    assert best["chunk_id"] in [h["chunk_id"] for h in one["hits"]]
    code, out, _ = cli(capsys, *base, "search", "--all", "invoice rounding", "--top-k", "3")
    header = out.splitlines()[out.splitlines().index(next(x for x in out.splitlines() if x.startswith("rank")))]
    assert header.split()[:7] == ["rank", "score", "vector", "raw→norm", "fts", "raw→norm", "neighbour"]
    assert "session" in header.split() and "cli:alice:invoice-rounding" in out


def test_omega_every_conversation_and_aidaemon_refuses_in_one_line(capsys, formats):
    omega = formats["omega"]
    before = hashlib.sha256(omega.read_bytes()).hexdigest()
    code, out, err = cli(capsys, "--db", str(omega), "--json", "search", "--all", "Lisbon", "--top-k", "10")
    assert code == 0, err
    doc = json.loads(out)
    conn = apsw.Connection(f"file:{omega}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    want = conn.execute(
        "SELECT m.id, m.conversation_id FROM messages_fts f JOIN messages m ON m.rowid = f.rowid "
        "JOIN conversations c ON c.id = m.conversation_id WHERE messages_fts MATCH '\"Lisbon\"' ORDER BY rank LIMIT 10"
    ).fetchall()
    conn.close()
    assert len(want) >= 2 and len({c for _, c in want}) >= 2  # more than one conversation holds it
    assert [(h["chunk_id"], h["session_id"]) for h in doc["hits"]] == [(str(i), c) for i, c in want]
    assert "every conversation of every sender" in doc["steps"][0]
    assert hashlib.sha256(omega.read_bytes()).hexdigest() == before
    code, out, err = cli(capsys, "--db", str(formats["aidaemon"]), "search", "--all", "Lisbon")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "ranks within one session" in err and "pick a session to search" in err
