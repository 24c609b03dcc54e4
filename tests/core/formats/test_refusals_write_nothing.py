"""A refused write changes nothing: every write command, on a file of every format, in every situation that must
refuse it, leaves the file's bytes, its modification time and the files beside it (``-wal``, ``-shm``,
``-journal``, anything else) exactly as they were.

The situations: bad input (an empty note, a bad cron, an unknown id, a JSON Lines file whose sequences go
backwards, an unknown model); another agent's file oxmem does not write (Omega, ZEKE, aidaemon, an unknown SQLite
file, an encrypted one opened with its key); a write that needs an engine oxmem does not drive (libSQL's vector
index); a file this user cannot write; a damaged file; a file whose write lock another process holds. The GUI's
write paths are the store's methods (the panels call them through ``StoreContext.writable``): they are swept at
that layer, read-only (as the inspector opens a file) and after *Enable Editing*.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import apsw
import pytest

from oxmem_gui.core import ReadOnlyError
from oxmem_gui.core.errors import OxmemError
from oxmem_gui.core.memory import open_memory
from tests.cli._support import assert_one_error_line, build_demo, run
from tests.core.formats import fixtures as fx
from tests.core.formats.test_detect import BERLIN, MONDAY_PLAN, copy, state
from tests.processes import ROOT, start_agent, without_write_override

NOTE = "note-00000000-0000-4000-8000-000000000001"  # alice's first note in the Oxydra fixtures
#: the native formats: the store's own tables, opened read-write when editing
NATIVE = ("oxmem", "oxydra", "oxydra-agent", "oxydra-libsql")
#: other agents' files (and any SQLite file): written only where their reader makes the agent's own edits
FOREIGN = ("omega", "zeke", "aidaemon", "aidaemon-legacy", "unknown", "encrypted-with-key")
#: the foreign formats that open read-write once editing is enabled (Omega: its facts; ZEKE: its memories)
EDITABLE_FOREIGN = ("omega", "zeke", "aidaemon", "aidaemon-legacy")
#: editable too, with its key (the damaged, locked and unwritable cases are those of the plaintext file)
WITH_KEY = "encrypted-with-key"
#: a fact of the Omega fixture (sender 4242's name)
FACT = fx.OMEGA_FACTS[("4242", "name")]


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OXMEM_EMBEDDING", "deterministic")
    monkeypatch.delenv("OXMEM_DB", raising=False)
    monkeypatch.delenv("OXMEM_DB_KEY", raising=False)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    files = fx.write_all(tmp_path_factory.mktemp("formats"))
    assert {"oxydra-libsql", "aidaemon-encrypted"} <= set(files), sorted(files)
    files["oxmem"] = build_demo(tmp_path_factory.mktemp("demo"))
    files["encrypted-with-key"] = files["aidaemon-encrypted"]
    return files


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("inputs")
    good, backwards = folder / "good.jsonl", folder / "backwards.jsonl"
    good.write_text(json.dumps({"session_id": "new:s", "sequence": 1, "payload": {"role": "user", "content": "hi"}}))
    backwards.write_text(
        '{"session_id": "s", "sequence": 2, "payload": {"role": "user", "content": "a"}}\n'
        '{"session_id": "s", "sequence": 1, "payload": {"role": "user", "content": "b"}}\n'
    )
    return {"good": str(good), "backwards": str(backwards)}


def bad_input_commands(inputs: dict[str, str]) -> list[tuple[str, ...]]:
    """Write commands whose input is wrong on any file: each must be refused with one line."""
    return [
        ("notes", "add", "alice", "   "),
        ("notes", "add", "alice", "text", "--tag", "a,b"),
        ("notes", "update", "alice", "note-00000000-0000-4000-8000-0000000000ff", "x"),
        ("notes", "delete", "alice", "note-00000000-0000-4000-8000-0000000000ff"),
        ("schedules", "add", "--user", "alice", "--goal", "g", "--cron", "not a cron", "--tz", "UTC"),
        ("schedules", "add", "--user", "alice", "--goal", "g", "--cron", "0 8 * * *", "--tz", "Mars/Olympus"),
        ("schedules", "add", "--user", "alice", "--goal", "g", "--every", "5"),
        ("schedules", "pause", "no-such-schedule"),
        ("schedules", "resume", "no-such-schedule"),
        ("schedules", "delete", "no-such-schedule"),
        ("forget", "no-such-session"),
        ("import-jsonl", inputs["backwards"]),
        ("reindex", "--model", "no-such-model"),
        ("reindex", "--session", "no-such-session"),
    ]


def valid_commands(inputs: dict[str, str]) -> list[tuple[str, ...]]:
    """Write commands that a writable store of the right kind would carry out."""
    return [
        ("demo",),
        ("import-jsonl", inputs["good"]),
        ("reindex",),
        ("forget", BERLIN),
        ("notes", "add", "alice", "a new note", "--tag", "x"),
        ("notes", "update", "alice", NOTE, "changed"),
        ("notes", "delete", "alice", NOTE),
        ("schedules", "add", "--user", "alice", "--goal", "g", "--cron", "0 8 * * *", "--tz", "UTC"),
        ("schedules", "pause", MONDAY_PLAN),
        ("schedules", "resume", MONDAY_PLAN),
        ("schedules", "delete", MONDAY_PLAN),
    ]


def _key_args(name: str) -> list[str]:
    return ["--key", fx.AIDAEMON_KEY] if name == "encrypted-with-key" else []


def assert_refused_unchanged(
    capsys: pytest.CaptureFixture[str], path: Path, argv: tuple[str, ...], *extra: str, fragment: str = ""
) -> None:
    before = state(path)
    code, out, err = run(capsys, "--db", str(path), *extra, *argv)
    assert_one_error_line(code, out, err, fragment)
    assert state(path) == before, (argv, err)


# -- the command line --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [*NATIVE, *FOREIGN, "empty", "not-sqlite", "missing"])
def test_bad_input_writes_nothing(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], inputs: dict[str, str], tmp_path: Path, name: str
) -> None:
    if name == "missing":
        path = tmp_path / "db" / "absent.db"
        path.parent.mkdir()
    else:
        path = copy(built, name, tmp_path, "memory.db")
    for argv in bad_input_commands(inputs):
        if name == "missing":
            code, out, err = run(capsys, "--db", str(path), *argv)
            assert_one_error_line(code, out, err)
            assert os.listdir(path.parent) == [], (argv, err)  # no store left behind by a refused command
        else:
            assert_refused_unchanged(capsys, path, argv, *_key_args(name))


def test_oxydra_libsql_writes_leave_no_migration_row(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path
) -> None:
    """The reported case: on a file the agent's own migrations made, a note (now written through libSQL) must not
    record oxmem's ``0001_initial`` in the agent's ``memory_migrations``."""
    path = copy(built, "oxydra-libsql", tmp_path, "memory.db")
    code, out, err = run(capsys, "--db", str(path), "notes", "add", "alice", "hello")
    assert (code, err) == (0, "") and out.startswith("note-")
    versions = [r[0] for r in apsw.Connection(str(path)).execute("SELECT version FROM memory_migrations ORDER BY 1")]
    assert versions == fx.OXYDRA_AGENT_MIGRATIONS


@pytest.mark.parametrize("name", FOREIGN)
def test_other_agents_files_refuse_every_write(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], inputs: dict[str, str], tmp_path: Path, name: str
) -> None:
    """What the store's own writes do to another agent's file: refused, nothing changed (Omega's facts take only
    ``key: value`` notes of its senders, so these are refused there too; `init` leaves its schema and says so)."""
    path = copy(built, name, tmp_path, "memory.db")
    # ZEKE takes a memory in any scope: the store's own `notes add` is a valid edit there, made elsewhere
    accepted = {("notes", "add")} if name == "zeke" else set()
    writes = [argv for argv in valid_commands(inputs) if argv[:2] not in accepted]
    writes.append(("check", "--repair"))  # only a libSQL vector index is repaired (it was a traceback here)
    editable = name in (*EDITABLE_FOREIGN, WITH_KEY)
    for argv in [*([] if editable else [("init",)]), *writes]:
        assert_refused_unchanged(capsys, path, argv, *_key_args(name))
    if editable:
        before = state(path)
        code, out, err = run(capsys, "--db", str(path), *_key_args(name), "init")
        assert (code, err) == (0, "") and "the agent's schema, left as it is" in out
        assert state(path) == before
    assert not list(path.parent.glob("*.db-*")), "a decrypted copy or another sidecar was left"


def edit_commands(name: str) -> list[tuple[str, ...]]:
    """Writes that an Omega or aidaemon (facts) or ZEKE (memories) file with editing enabled carries out; none
    elsewhere."""
    if name == "omega":
        return [
            ("notes", "add", "4242", "espresso: double"),
            ("notes", "update", "4242", FACT, "name: Marta R."),
            ("notes", "delete", "4242", FACT),
        ]
    if name == "zeke":
        bike = fx.ZEKE_IDS["n-bike"]
        return [
            ("notes", "add", "notes", "Dana's bike is green"),
            ("notes", "update", "notes", bike, "Bike lock code: ask Dana"),
            ("notes", "delete", "notes", bike),
        ]
    if name in ("aidaemon", WITH_KEY):
        return [
            ("notes", "add", "user", "diet: vegetarian"),
            ("notes", "update", "user", "fact:3", "timezone: Asia/Tokyo"),
            ("notes", "delete", "user", "fact:4"),
            ("forget", "telegram:123456789"),
        ]
    if name == "aidaemon-legacy":
        return [("notes", "update", "user", "fact:1", "name: Sam R."), ("notes", "delete", "user", "fact:2")]
    return []


@pytest.mark.parametrize("name", ["oxydra", "oxydra-agent", "oxydra-libsql"])
def test_init_leaves_an_agents_schema_as_it_is(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path, name: str
) -> None:
    path = copy(built, name, tmp_path, "memory.db")
    before = state(path)
    code, out, err = run(capsys, "--db", str(path), "init")
    assert (code, err) == (0, "")
    assert "the agent's schema, left as it is (oxmem migrates only its own stores)" in out
    assert state(path) == before


def test_writes_that_oxydra_allows_do_not_record_oxmem_versions(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path
) -> None:
    """Editing a file the agent made: the edit is written, and nothing of oxmem's schema with it."""
    path = copy(built, "oxydra-agent", tmp_path, "memory.db")
    schema = apsw.Connection(str(path)).execute("SELECT type, name, sql FROM sqlite_master ORDER BY 2").fetchall()
    code, out, err = run(capsys, "--db", str(path), "notes", "add", "alice", "kept as the agent keeps notes")
    assert code == 0, err
    code, _, err = run(capsys, "--db", str(path), "schedules", "pause", MONDAY_PLAN)
    assert code == 0, err
    conn = apsw.Connection(str(path))
    assert conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY 2").fetchall() == schema
    versions = [r[0] for r in conn.execute("SELECT version FROM memory_migrations ORDER BY 1")]
    assert versions == [v for v in fx.OXYDRA_AGENT_MIGRATIONS if not v.startswith("0024_")]
    assert conn.execute("SELECT status FROM schedules WHERE schedule_id = ?", (MONDAY_PLAN,)).fetchall() == [
        ("paused",)
    ]


def test_an_early_oxydra_file_gets_no_schedule_tables(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], tmp_path: Path
) -> None:
    """A file from before the agent's migration 0017 has no schedules: oxmem says so and adds nothing."""
    path = copy(built, "oxydra-agent", tmp_path, "memory.db")
    conn = apsw.Connection(str(path))
    conn.execute("DROP TABLE schedule_runs; DROP TABLE schedules")
    conn.close()
    for argv in [
        ("schedules", "add", "--user", "alice", "--goal", "g", "--every", "3600"),
        ("schedules", "list"),
        ("schedules", "pause", MONDAY_PLAN),
    ]:
        before = state(path)
        code, out, err = run(capsys, "--db", str(path), *argv)
        assert_one_error_line(code, out, err, "memory.db is an Oxydra memory: it has no schedules")
        assert state(path) == before
    code, out, _ = run(capsys, "--db", str(path), "check")
    assert code == 0 and "schedules are not shown" in out
    tables = {r[0] for r in apsw.Connection(str(path)).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert not {"schedules", "schedule_runs"} & tables


def _damage(path: Path) -> None:
    """Garbage over page 1's b-tree (the schema table), so SQLite reports the file malformed when it reads it."""
    with open(path, "r+b") as fh:
        fh.seek(100)
        fh.write(b"\xff" * 400)


@pytest.mark.parametrize("name", [*NATIVE, *EDITABLE_FOREIGN])
def test_damaged_file_refuses_every_write(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], inputs: dict[str, str], tmp_path: Path, name: str
) -> None:
    path = copy(built, name, tmp_path, "memory.db")
    _damage(path)
    for argv in [("init",), *valid_commands(inputs), *edit_commands(name)]:
        assert_refused_unchanged(capsys, path, argv)


def _damage_a_table_no_write_reads(path: Path) -> None:
    """A table of its own (several pages, so its root is an interior page) whose root page is then garbage: SQLite
    finds nothing wrong until a statement reads that table, and no write here does."""
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE unrelated (x BLOB)")
    conn.executemany("INSERT INTO unrelated VALUES (zeroblob(3000))", [()] * 12)
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'unrelated'").fetchone()
    (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    if conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    conn.close()
    with open(path, "r+b") as fh:
        fh.seek((root - 1) * page_size)
        fh.write(b"\xff" * page_size)


@pytest.mark.parametrize("name", [*NATIVE, *EDITABLE_FOREIGN])
def test_a_damaged_page_anywhere_refuses_every_write(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], inputs: dict[str, str], tmp_path: Path, name: str
) -> None:
    """The same refusal as a damaged schema, although no page the write needs is damaged (`schedules add` wrote
    into such a file while `notes add` refused)."""
    path = copy(built, name, tmp_path, "memory.db")
    _damage_a_table_no_write_reads(path)
    # `reindex` is left out: every chunk already has its vector for the model, so it has nothing to write; another
    # agent's file is written only by the edits its reader makes (the rest are refused for that reason)
    writes = [argv for argv in valid_commands(inputs) if argv[0] != "reindex"] if name in NATIVE else []
    for argv in [*writes, *edit_commands(name)]:
        assert_refused_unchanged(capsys, path, argv, fragment="database is damaged (")


@pytest.fixture
def locked(built: dict[str, Path], tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """A copy of a fixture whose write lock another process (the stand-in agent) holds."""
    agents: list[subprocess.Popen] = []

    def lock(name: str) -> Path:
        path = copy(built, name, tmp_path, "memory.db")
        agents.append(start_agent(path, "hold", "300", ready=tmp_path / "ready"))
        return path

    yield lock
    for proc in agents:
        proc.kill()
        proc.communicate()


@pytest.mark.parametrize("name", [*NATIVE, *EDITABLE_FOREIGN])
def test_locked_file_refuses_every_write(
    capsys: pytest.CaptureFixture[str],
    locked: Callable[[str], Path],
    inputs: dict[str, str],
    name: str,
) -> None:
    path = locked(name)
    # `reindex` is left out: every chunk already has its vector for the model, so it has nothing to write
    writes = [argv for argv in valid_commands(inputs) if argv[0] != "reindex"]
    if name in EDITABLE_FOREIGN:
        writes = edit_commands(name)
    for argv in writes:
        assert_refused_unchanged(capsys, path, argv, "--wait", "0.2")


#: the commands run one after another in one process, each followed by the file's state (``test_detect.state``)
_COMMANDS = """
import contextlib, io, json, sys
from pathlib import Path
from oxmem_gui.cli import main
from tests.core.formats.test_detect import state
path = sys.argv[1]
for argv in json.loads(sys.argv[2]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["--db", path, *argv])
        except SystemExit as exc:
            code = exc.code
    said = {"argv": argv, "code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}
    print(json.dumps({**said, "state": repr(state(Path(path)))}), flush=True)
"""


def _unprivileged(path: Path, commands: list[tuple[str, ...]], home: Path) -> list[dict]:
    """The command line, each of ``commands`` in turn, in one process of its own unable to write a file of mode
    0444 (see above when root): what each printed and the file's state after it."""
    env = {**os.environ, "OXMEM_EMBEDDING": "deterministic", "HOME": str(home)}
    env["XDG_DATA_HOME"] = env["XDG_CONFIG_HOME"] = env["XDG_STATE_HOME"] = str(home)
    demote = without_write_override if os.geteuid() == 0 else None
    done = subprocess.run(
        [sys.executable, "-c", _COMMANDS, str(path), json.dumps(commands)], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=600, preexec_fn=demote,  # noqa: PLW1509 - the child only drops a capability before exec
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("name", [*NATIVE, *EDITABLE_FOREIGN])
def test_file_this_user_cannot_write_refuses_every_write(
    built: dict[str, Path], inputs: dict[str, str], tmp_path: Path, name: str
) -> None:
    # the folder stays writable, so SQLite *could* leave -wal/-shm files beside the file
    folder = tmp_path / "db"
    folder.mkdir()
    path = folder / "memory.db"
    shutil.copy2(built[name], path)
    path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    home = tmp_path / "home"
    home.mkdir()
    before = repr(state(path))
    writes = [("init",), *valid_commands(inputs), *edit_commands(name)]
    lists = {"zeke": [("notes", "list", "notes")], "aidaemon": [("sessions",), ("notes", "list", "user")]}.get(
        name, [("sessions",), ("schedules", "list")]
    )
    reads = [*lists, ("check",), ("info",)]  # reads work (a WAL file: as a snapshot)
    done = _unprivileged(path, [*writes, *reads], home)
    assert [d["argv"] for d in done] == [list(argv) for argv in [*writes, *reads]]
    for said in done[: len(writes)]:
        assert_one_error_line(said["code"], said["stdout"], said["stderr"])
        assert said["state"] == before, (said["argv"], said["stderr"])
    for said in done[len(writes) :]:
        assert said["code"] == 0 and said["state"] == before, (said["argv"], said["stderr"])
    if name != "zeke":  # ZEKE keeps a rollback journal: nothing to leave beside it, no snapshot needed
        assert "is open as a snapshot: this user cannot write it" in done[len(writes)]["stderr"]


# -- the inspector's write paths (the store's methods its panels call) ----------------------------------------


def _write_paths(memory) -> list[Callable[[], object]]:
    """Every write the inspector's panels make, as the calls they make it with."""
    from oxmem_gui.core.store.notes import Note

    stamp = "2026-02-18T20:00:00.000000+00:00"
    note = Note(NOTE, "alice", "x", ["t"], stamp, stamp, 1)
    return [
        lambda: memory.store("gui:s", 1, {"role": "user", "content": "hi"}),
        lambda: memory.forget(BERLIN),
        lambda: memory.save_note("alice", "a note", ["t"]),
        lambda: memory.update_note("alice", NOTE, "changed", ["t"]),
        lambda: memory.delete_notes("alice", [NOTE]),
        lambda: memory.set_note_tags("alice", [NOTE], add=["new"]),
        lambda: memory.restore_notes([note]),
        lambda: memory.write_summary_state(BERLIN, "summary", 1, 0),
        lambda: memory.summarize(BERLIN, 10),
        lambda: memory.reindex(),
        lambda: memory.schedules.create("alice", "goal", {"type": "interval", "every_secs": 3600}),
        lambda: memory.schedules.pause(MONDAY_PLAN),
        lambda: memory.schedules.delete(MONDAY_PLAN),
    ]


async def _sweep_gui_paths(path: Path, key: str | None, read_only: bool) -> list[str]:
    """Open ``path`` as the inspector does (read-only, or read-write as *Enable Editing* re-opens it) and try every
    write path; returns the errors (each must be a refusal). Another agent's file refuses read-write opening."""
    try:
        memory = await open_memory(path, read_only=read_only, key=key, embedding="deterministic")
    except ReadOnlyError as exc:
        return [str(exc)]
    errors = []
    async with memory:
        for call in _write_paths(memory):
            try:
                await call()
            except OxmemError as exc:
                errors.append(str(exc))
            else:
                errors.append("")
    return errors


@pytest.mark.parametrize("name", [*NATIVE, *FOREIGN])
def test_inspector_read_only_refuses_every_write_path(built: dict[str, Path], tmp_path: Path, name: str) -> None:
    path = copy(built, name, tmp_path, "memory.db")
    before = state(path)
    errors = asyncio.run(_sweep_gui_paths(path, fx.AIDAEMON_KEY if name == "encrypted-with-key" else None, True))
    assert len(errors) == 13 and all(errors), errors
    assert state(path) == before


@pytest.mark.parametrize("name", [f for f in FOREIGN if f != "zeke"])
def test_inspector_editing_refuses_what_the_file_cannot_take(built: dict[str, Path], tmp_path: Path, name: str) -> None:
    """After *Enable Editing*: other agents' files do not open read-write at all — but those whose agent's edits
    oxmem makes (Omega, aidaemon), where each of the store's own writes is refused."""
    path = copy(built, name, tmp_path, "memory.db")
    before = state(path)
    key = fx.AIDAEMON_KEY if name == "encrypted-with-key" else None
    errors = asyncio.run(_sweep_gui_paths(path, key, False))
    if name in (*EDITABLE_FOREIGN, WITH_KEY):  # it opens read-write; the store's own writes are each refused there
        assert len(errors) == 13 and all(errors), errors
    else:
        assert len(errors) == 1 and "nothing was changed" in errors[0], errors
    assert state(path) == before


@pytest.mark.parametrize("name", ["oxmem", "oxydra-libsql", *EDITABLE_FOREIGN, WITH_KEY])
def test_the_read_only_flag_refuses_every_edit_before_opening_the_file(
    capsys: pytest.CaptureFixture[str], built: dict[str, Path], inputs: dict[str, str], tmp_path: Path, name: str
) -> None:
    """``--read-only``: every command that would write is one line (exit 2), the file untouched; reads still work."""
    path = copy(built, name, tmp_path, "memory.db")
    before = state(path)
    writes = [("init",), *valid_commands(inputs), *edit_commands(name), ("schedules", "update", "x", "--goal", "g")]
    for argv in writes:
        code, out, err = run(capsys, "--db", str(path), *_key_args(name), "--read-only", *argv)
        assert_one_error_line(code, out, err, "--read-only", "nothing was changed")
    reads = {"zeke": ("notes", "list", "notes"), "aidaemon-legacy": ("schedules", "list")}.get(name, ("sessions",))
    code, out, err = run(capsys, "--db", str(path), *_key_args(name), "--read-only", *reads)
    assert code == 0 and out, err
    assert state(path) == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["memory.db"]
