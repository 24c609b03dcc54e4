"""Shared pieces of the bad-input and damaged-file tests of the ``oxmem`` command line.

Everything runs ``oxmem_gui.cli.main`` in-process. An exception that escapes ``main`` (what a user would see as
a traceback) fails the test with the exception named, instead of erroring somewhere inside the helper.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import traceback
from pathlib import Path
from urllib.parse import quote

import apsw
import pytest

from oxmem_gui.cli import main

#: what must never reach a terminal raw: ESC, BEL, C1 controls and the right-to-left override
RAW_CONTROL = re.compile("[\x1b\x07\x80-\x9f\u202e]")


def _call(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        return exc.code
    except Exception:  # noqa: BLE001 - a traceback is exactly the bug these tests look for
        pytest.fail(f"oxmem {argv!r} raised instead of printing one error line:\n{traceback.format_exc()}")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = _call(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_quiet(*argv: str) -> tuple[int, str, str]:
    """``run`` for fixtures that cannot use ``capsys`` (module scope)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = _call(list(argv))
    return code, out.getvalue(), err.getvalue()


def run_json(capsys, *argv: str):
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def assert_one_error_line(code: int, out: str, err: str, *fragments: str) -> None:
    """Exit status 2, nothing on stdout, exactly one line ``oxmem: error: …`` on stderr holding ``fragments``."""
    assert "Traceback" not in err, err
    assert (code, out) == (2, ""), (code, out, err)
    assert err.startswith("oxmem: error: ") and err.endswith("\n") and err.count("\n") == 1, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def build_demo(folder: Path) -> Path:
    """A demo store (deterministic embeddings), checkpointed so the whole store is the one file. Its sessions are
    all updated in the same second (SQLite's ``CURRENT_TIMESTAMP``: the demo's events and its notes were stored in
    the same second or the next, as the wall clock fell), so they list in one order on any run."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "demo.db"
    code, _, err = run_quiet("--db", str(path), "--embedding", "deterministic", "demo")
    assert code == 0, err
    conn = apsw.Connection(str(path))
    conn.execute("UPDATE sessions SET updated_at = (SELECT min(updated_at) FROM sessions)")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    conn.close()
    assert not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()
    return path


def _read_only(path: Path) -> apsw.Connection:
    """A connection that cannot change anything, not even create ``-wal``/``-shm`` files next to ``path``."""
    uri = f"file:{quote(str(path.resolve()))}?mode=ro&immutable=1"
    return apsw.Connection(uri, flags=apsw.SQLITE_OPEN_URI | apsw.SQLITE_OPEN_READONLY)


def counts(path: Path) -> dict[str, int]:
    """Rows of what the CLI writes: sessions, events, chunks, notes, schedules and runs."""
    conn = _read_only(path)
    try:
        one = lambda sql: conn.execute(sql).fetchall()[0][0]  # noqa: E731
        return {
            "sessions": one("SELECT count(*) FROM sessions"),
            "events": one("SELECT count(*) FROM conversation_events"),
            "chunks": one("SELECT count(*) FROM chunks"),
            "notes": one(
                "SELECT count(*) FROM chunks WHERE json_extract(metadata_json, '$.note_id') IS NOT NULL "
                "AND json_extract(metadata_json, '$.chunk_index') = 0"
            ),
            "schedules": one("SELECT count(*) FROM schedules"),
            "runs": one("SELECT count(*) FROM schedule_runs"),
        }
    finally:
        conn.close()


def fingerprint(path: Path) -> dict[str, object]:
    """What a command that must not write could change: the file's bytes and mtime, and the files beside it
    (a stray ``-wal``/``-shm`` or a newly created store shows up there)."""
    doc: dict[str, object] = {"beside": sorted(os.listdir(path.parent))}
    if path.is_dir():
        doc["inside"] = sorted(os.listdir(path))
        doc["mtime_ns"] = path.stat().st_mtime_ns
    elif path.exists():
        doc["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        doc["mtime_ns"] = path.stat().st_mtime_ns
        doc["size"] = path.stat().st_size
    return doc


def snapshot(path: Path) -> dict[str, object]:
    """:func:`fingerprint` plus the row counts of a readable store."""
    return {**fingerprint(path), "counts": counts(path)}
