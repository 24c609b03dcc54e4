"""Damaged and foreign files given to every ``oxmem`` command.

Each kind of file is handed to each command. What must hold: a failure is exit status 2 with exactly one line
``oxmem: error: …`` (never a traceback); SQLite's corruption reads "database is damaged … oxmem --db PATH check";
``check`` runs and reports what it can read (exit 1 with ``problem`` lines for damage) and refuses with one line
what it cannot open at all; and a command that reads, or that fails, leaves the file exactly as it was — its
bytes, its mtime and the files beside it (no stray ``-wal``/``-shm``, no store created by a failed command).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from urllib.parse import quote

import apsw
import pytest

from tests.cli._support import assert_one_error_line, build_demo, fingerprint, run, run_quiet

LISBON = "telegram:alice:lisbon-trip"

COMMANDS = {
    "init": ["init"],
    "demo": ["demo"],
    "check": ["check"],
    "sessions": ["sessions"],
    "events": ["events", LISBON],
    "search": ["search", LISBON, "hotel"],
    "summary": ["summary", LISBON],
    "context": ["context", LISBON],
    "forget": ["forget", LISBON],
    "reindex": ["reindex"],
    "notes list": ["notes", "list", "alice"],
    "notes add": ["notes", "add", "alice", "x"],
    "notes search": ["notes", "search", "alice", "q"],
    "notes update": ["notes", "update", "alice", "{note}", "x"],
    "notes delete": ["notes", "delete", "alice", "{note}"],
    "schedules list": ["schedules", "list"],
    "schedules add": ["schedules", "add", "--user", "u", "--goal", "g", "--every", "3600"],
    "schedules next": ["schedules", "next", "{schedule}"],
    "schedules runs": ["schedules", "runs", "{schedule}"],
    "schedules pause": ["schedules", "pause", "{schedule}"],
    "schedules resume": ["schedules", "resume", "{schedule}"],
    "schedules delete": ["schedules", "delete", "{schedule}"],
    "import-jsonl": ["import-jsonl", "{jsonl}"],
}
#: commands that open the store read-only
READS = {
    "sessions",
    "events",
    "search",
    "summary",
    "context",
    "notes list",
    "notes search",
    "schedules list",
    "schedules next",
    "schedules runs",
}
#: commands that create the store when the path is new or the file empty (they add data)
CREATES = {"init", "demo", "notes add", "schedules add", "import-jsonl"}
#: commands that change what the store already holds: on a new path or an empty file they create nothing
NEEDS_DATA = {
    "forget",
    "reindex",
    "notes update",
    "notes delete",
    "schedules pause",
    "schedules resume",
    "schedules delete",
}
#: commands that read or write the chunks table (the one whose root page the "corrupt page" kind destroys)
CHUNK_USERS = {
    "demo",
    "search",
    "forget",
    "reindex",
    "notes list",
    "notes add",
    "notes search",
    "notes update",
    "notes delete",
    "import-jsonl",
}
assert READS | CREATES | NEEDS_DATA | {"check"} == set(COMMANDS)

KINDS = [
    "not sqlite",
    "zero bytes",
    "truncated",
    "schema page",
    "corrupt page",
    "missing table",
    "foreign sqlite",
    "directory",
    "absent",
]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("damaged-template")
    path = build_demo(folder)
    code, out, err = run_quiet("--db", str(path), "--json", "schedules", "list")
    assert code == 0, err
    schedule = next(s["schedule_id"] for s in json.loads(out) if s["name"] == "Morning briefing")
    code, out, err = run_quiet("--db", str(path), "--json", "notes", "list", "alice")
    assert code == 0, err
    note = json.loads(out)[0]["note_id"]
    jsonl = folder / "events.jsonl"
    jsonl.write_text('{"session_id": "imported", "sequence": 1, "payload": {"role": "user", "content": "hi"}}\n')
    return {"path": path, "schedule": schedule, "note": note, "jsonl": str(jsonl)}


def _overwrite_page(path: Path, page: int, page_size: int) -> None:
    with open(path, "r+b") as fh:
        fh.seek((page - 1) * page_size)
        fh.write(b"\xff" * page_size)


def make_file(kind: str, template: Path, path: Path) -> None:
    """Put a file of ``kind`` at ``path`` (nothing, for "absent")."""
    if kind == "not sqlite":
        path.write_text("not a database at all, just words " * 10)
    elif kind == "zero bytes":
        path.write_bytes(b"")
    elif kind == "truncated":
        data = template.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif kind == "schema page":  # the header survives; the rest of page 1 (sqlite_master) is garbage
        shutil.copy(template, path)
        page_size = int.from_bytes(path.read_bytes()[16:18], "big")
        with open(path, "r+b") as fh:
            fh.seek(100)
            fh.write(b"\xff" * (page_size - 100))
    elif kind == "corrupt page":  # the root page of the chunks table, somewhere in the middle of the file
        shutil.copy(template, path)
        uri = f"file:{quote(str(path))}?mode=ro&immutable=1"
        conn = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_URI | apsw.SQLITE_OPEN_READONLY)
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'chunks'").fetchone()
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
        (page_size,) = conn.execute("PRAGMA page_size").fetchone()
        conn.close()
        assert 1 < root < pages
        _overwrite_page(path, root, page_size)
    elif kind == "missing table":  # memory_migrations still records 0001_initial
        shutil.copy(template, path)
        conn = apsw.Connection(str(path))
        conn.execute("DROP TABLE schedule_runs")
        assert conn.execute("SELECT version FROM memory_migrations").fetchall() == [("0001_initial",)]
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        conn.close()
    elif kind == "foreign sqlite":  # another program's database
        conn = apsw.Connection(str(path))
        conn.execute("CREATE TABLE recipes (name TEXT); INSERT INTO recipes VALUES ('soup')")
        conn.close()
    elif kind == "directory":
        path.mkdir()
    else:
        assert kind == "absent"
    for extra in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        assert not extra.exists()


@pytest.fixture
def target(tmp_path) -> Path:
    folder = tmp_path / "store"
    folder.mkdir()
    return folder / "memory.db"


def _fill(text: str, template: dict) -> str:
    return (
        text.replace("{note}", template["note"])
        .replace("{schedule}", template["schedule"])
        .replace("{jsonl}", template["jsonl"])
    )


def damaged(path: Path) -> list[str]:
    return ["database is damaged", f"oxmem --db {path} check"]


def expected(kind: str, name: str, path: Path, template: dict):
    """``("error", fragments)`` — one error line, nothing changed; ``("ok", False)`` — exit 0, nothing changed;
    ``("report", None)`` — check's exit 1 with problems;
    ``("created", None)`` — exit 0 and a store now exists at the path."""
    if kind == "not sqlite":
        return "error", [f"oxmem: error: {path} is not a SQLite database\n"]
    if kind == "directory":
        return "error", [f"oxmem: error: {path} is a directory, not a SQLite database file\n"]
    if kind == "foreign sqlite":
        if name == "check":
            return "foreign", None
        # nothing is added to another program's database, not even the migrations table: it opens read-only as
        # a table browser, so a read says what it lacks and a write why it is refused
        if name in READS:
            what = name.split()[0] if name.startswith(("notes", "schedules", "search")) else "sessions"
            return "error", [f"{path.name} is a SQLite database: it has no {what} (", "oxmem tables"]
        return "error", [f"{path.name} is a SQLite database file: oxmem opens other programs' databases read-only"]
    if kind in ("absent", "zero bytes"):
        if name == "check":
            return ("error", [f"oxmem: error: {path} does not exist\n"]) if kind == "absent" else ("empty", None)
        if name in CREATES:
            # a new path, and a zero-byte file (SQLite's empty database), become a new store for commands that add
            # to it, as with `init`
            return "created", None
        if kind == "absent":
            return "error", [f"oxmem: error: {path} does not exist\n"]
        if name in READS:
            return "error", [f"{path} is not a memory store (missing tables: sessions, conversation_events"]
        # a command that cannot succeed on a new store must not turn the empty file into one
        return "error", [f"oxmem: error: {path} is empty, not a memory store (`oxmem init` makes it one)\n"]
    if kind in ("truncated", "schema page"):
        if name == "check":
            return "unreadable", None
        return "error", damaged(path)
    if kind == "missing table":
        if name == "check":
            return "report", "schema"
        return "error", [
            *damaged(path),
            "table schedule_runs and 1 more of migration 0001_initial is missing although it is recorded",
        ]
    assert kind == "corrupt page"
    if name == "check":
        return "report", "integrity"
    if name in CHUNK_USERS:
        return "error", damaged(path)
    if name in ("schedules add", "schedules pause", "schedules resume", "schedules delete"):
        # the schedules tables are intact, but no write goes into a file with a damaged page anywhere
        return "error", [*damaged(path), "nothing was written"]
    # reads of intact tables work; `init` reads only the schema, which is intact ("up to date")
    return "ok", False


@pytest.mark.parametrize("name", COMMANDS)
@pytest.mark.parametrize("kind", KINDS)
def test_damaged_file(capsys, template, target, kind, name):
    make_file(kind, template["path"], target)
    before = fingerprint(target)
    argv = [_fill(a, template) for a in COMMANDS[name]]
    code, out, err = run(capsys, "--db", str(target), *argv)
    assert "Traceback" not in err
    outcome, detail = expected(kind, name, target, template)
    if outcome == "error":
        assert_one_error_line(code, out, err, *detail)
        if name == "init":
            assert "up to date" not in out
        assert fingerprint(target) == before
    elif outcome == "ok":  # a read of intact tables
        assert (code, err) == (0, ""), err
        assert fingerprint(target) == before
    elif outcome == "created":  # said on stderr by the commands a mistyped --db would otherwise hide
        what = "was an empty file" if kind == "zero bytes" else "did not exist"
        said = (
            ""
            if name in ("init", "demo", "import-jsonl")
            else f"oxmem: notice: {target} {what}: a new store was created there\n"
        )
        assert (code, err) == (0, said), err
        assert target.is_file() and target.stat().st_size > 0
    elif outcome == "report":  # check found damage and says where
        assert (code, err) == (1, ""), (code, out, err)
        lines = out.splitlines()
        problems = [line for line in lines if line.startswith("problem")]
        assert any(line.split()[1] == detail for line in problems), out
        assert lines[-1].startswith("problems found")
        assert fingerprint(target) == before
    elif outcome in ("foreign", "empty"):  # a readable SQLite file without the memory tables: nothing to damage
        assert (code, err) == (0, ""), err
        lines = out.splitlines()
        what = "not a memory store" if outcome == "foreign" else "empty database"
        assert lines[0].startswith(f"{target}: {what}")
        assert any(line.split()[:2] == ["warning", "schema"] and "no memory tables" in line for line in lines), out
        assert lines[-1] == f"readable SQLite, but {'not a memory store' if outcome == 'foreign' else 'empty'}"
        assert fingerprint(target) == before
    else:
        assert outcome == "unreadable"
        # SQLite cannot read even the schema: check reports that as a problem (exit 1), not "run oxmem check"
        assert (code, err) == (1, ""), (code, out, err)
        lines = out.splitlines()
        assert lines[0] == f"{target}: unreadable"
        assert lines[2].startswith("problem  open   SQLite cannot read the file: ") and "check`" not in out
        assert fingerprint(target) == before


@pytest.mark.parametrize(("kind", "check_name"), [("corrupt page", "integrity"), ("missing table", "schema")])
def test_check_json_reports_the_damage(capsys, template, target, kind, check_name):
    make_file(kind, template["path"], target)
    before = fingerprint(target)
    code, out, err = run(capsys, "--db", str(target), "--json", "check")
    assert (code, err) == (1, ""), (code, out, err)
    doc = json.loads(out)
    assert doc["ok"] is False
    assert any(f["check"] == check_name and f["level"] == "problem" for f in doc["findings"]), doc["findings"]
    assert fingerprint(target) == before


def test_quick_check_reports_the_corrupt_page(capsys, template, target):
    make_file("corrupt page", template["path"], target)
    code, out, err = run(capsys, "--db", str(target), "check", "--quick")
    assert (code, err) == (1, ""), (code, out, err)
    assert any(line.startswith("problem") for line in out.splitlines())


def test_missing_table_store_is_not_up_to_date(capsys, template, target):
    make_file("missing table", template["path"], target)
    before = fingerprint(target)
    for argv in (["init"], ["--json", "init"]):
        code, out, err = run(capsys, "--db", str(target), *argv)
        assert_one_error_line(code, out, err, "schedule_runs", "missing although it is recorded")
        assert "up to date" not in out + err
    assert fingerprint(target) == before


def test_healthy_copy_is_untouched_by_every_read(capsys, template, target):
    """The control: the same commands on the undamaged store succeed, and reads change nothing."""
    make_file("absent", template["path"], target)
    shutil.copy(template["path"], target)
    before = fingerprint(target)
    for name in sorted(READS | {"check"}):
        code, _, err = run(capsys, "--db", str(target), *[_fill(a, template) for a in COMMANDS[name]])
        assert (code, err) == (0, ""), (name, err)
    assert fingerprint(target) == before
    assert sorted(os.listdir(target.parent)) == ["memory.db"]


def test_an_error_line_never_repeats_a_secret_from_the_environment(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("OXMEM_DB_KEY", "my-own-passphrase-7")
    folder = tmp_path / "my-own-passphrase-7"  # (a path that happens to hold it: the error names the path)
    code, out, err = run(capsys, "--db", str(folder / "memory.db"), "sessions")
    assert (code, out) == (2, "")
    assert err.startswith("oxmem: error: ") and "[hidden]" in err and "passphrase" not in err
