"""The SQL console never holds the agent up: it stops at its time limit or when told, refuses values and results
too big in one line, and on a file in a rollback journal mode it reads a copy, so a real second process writing
as the agent (busy timeout 1 s) is never made to wait — while the same read on the file itself makes it fail."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time

import apsw
import pytest

from oxmem_gui.core import InvalidInputError, MemoryStore, OperationCancelled
from oxmem_gui.core.store import sql_console
from oxmem_gui.core.store.sql_console import console, run_sql
from tests.processes import has_open, signals_as_at_a_terminal

FOREVER = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c, sessions"
#: the agent: one write with a busy timeout (1 s unless told), as its own process; prints how it went
AGENT = """
import sys, apsw
conn = apsw.Connection(sys.argv[1])
conn.set_busy_timeout(int(sys.argv[2]))
try:
    conn.execute("UPDATE sessions SET agent_identity = 'agent' WHERE rowid = 1")
    print("ok")
except apsw.BusyError as exc:
    print(f"failed {exc}")
"""


class Running(threading.Event):
    """A statement's stop event that also tells when the statement runs: SQLite's progress handler (and only it)
    asks whether to stop, so the first time it asks the statement is under way — waited for, never slept for."""

    def __init__(self) -> None:
        super().__init__()
        self.running = threading.Event()

    def is_set(self) -> bool:
        if sys._getframe(1).f_code.co_name == "progress":
            self.running.set()
        return super().is_set()

    def wait_running(self) -> None:
        assert self.running.wait(60), "the statement never ran"


def agent_writes(path, busy_timeout_ms: int = 1000) -> str:
    argv = [sys.executable, "-c", AGENT, str(path), str(busy_timeout_ms)]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def rollback_store(tmp_path):
    """A store in a rollback journal mode (as an agent's file may be), with a session to read and write."""
    path = tmp_path / "journal.db"

    async def make() -> None:
        store = await MemoryStore.open(path, embedding="deterministic")
        await store.store("s", 1, {"role": "user", "content": "hello"})
        await store.aclose()

    asyncio.run(make())
    conn = apsw.Connection(str(path))
    assert conn.execute("PRAGMA journal_mode = DELETE").fetchall() == [("delete",)]
    conn.close()
    return path


def test_a_statement_stops_at_its_time_limit_in_one_line():
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE sessions (a)")
    conn.execute("INSERT INTO sessions VALUES (1)")
    started = time.monotonic()
    with pytest.raises(InvalidInputError, match=r"^the statement was stopped after 0.2 s \(its time limit\)$"):
        run_sql(conn, FOREVER, seconds=0.2)
    assert 0.2 <= time.monotonic() - started < 30  # stopped, not left to run (how soon is a timing, for bench/)
    assert run_sql(conn, "SELECT count(*) FROM sessions").rows == [(1,)]  # the connection works on


def test_a_statement_stops_when_told_from_another_thread():
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE sessions (a); INSERT INTO sessions VALUES (1)")
    stop = threading.Event()
    threading.Thread(target=lambda: (time.sleep(0.2), stop.set())).start()
    with pytest.raises(OperationCancelled, match="the statement was stopped; nothing was changed"):
        run_sql(conn, FOREVER, stop=stop)


def test_a_value_or_a_result_too_big_is_refused_in_one_line(monkeypatch):
    conn = apsw.Connection(":memory:")
    with pytest.raises(InvalidInputError, match=r"^a value would be over 64 MiB: refused$"):
        run_sql(conn, "SELECT randomblob(900000000)")
    monkeypatch.setattr(sql_console, "MAX_RESULT_BYTES", 1 << 20)
    many = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 3000000) SELECT x, 'text' FROM c"
    with pytest.raises(InvalidInputError, match=r"^the result passed 1 MiB at row 13,798: ask for fewer rows"):
        run_sql(conn, many, limit=3_000_000)


def test_on_a_rollback_journal_file_the_agent_never_waits_for_the_console(rollback_store):
    conn = apsw.Connection(str(rollback_store), flags=apsw.SQLITE_OPEN_READONLY)
    assert sql_console.blocks_writers(conn)
    stop = Running()
    failure: list[BaseException] = []

    def read() -> None:
        try:
            console(conn, FOREVER, stop=stop)
        except BaseException as exc:  # noqa: BLE001 - kept for the assertion below
            failure.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    stop.wait_running()
    said = agent_writes(rollback_store, busy_timeout_ms=0)  # not made to wait at all: no lock is held
    stop.set()
    reader.join(10)
    assert said == "ok\n", said
    assert isinstance(failure[0], OperationCancelled)
    # the same statement on the file itself, in one read transaction: the agent's write fails after its 1 s
    stop = Running()
    blocked = threading.Thread(target=_on_the_file, args=(conn, stop, failure))
    blocked.start()
    stop.wait_running()
    said = agent_writes(rollback_store)
    stop.set()
    blocked.join(10)
    assert said == "failed database is locked\n" and len(failure) == 2
    conn.close()


def _on_the_file(conn: apsw.Connection, stop: threading.Event, failure: list[BaseException]) -> None:
    conn.execute("BEGIN")
    try:
        run_sql(conn, FOREVER, stop=stop)
    except OperationCancelled as exc:
        failure.append(exc)
    finally:
        conn.execute("ROLLBACK")


def test_the_command_line_stops_at_timeout_and_on_ctrl_c(rollback_store):
    base = [sys.executable, "-m", "oxmem_gui.cli", "--db", str(rollback_store), "sql", FOREVER]
    done = subprocess.run([*base, "--timeout", "0.5"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (
        2,
        "oxmem: error: the statement was stopped after 0.5 s (its time limit)\n",
    )
    running = subprocess.Popen(base, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=signals_as_at_a_terminal)  # fmt: skip
    has_open(running, rollback_store)  # past its imports: Ctrl-C from here on is the command's to handle
    assert agent_writes(rollback_store) == "ok\n"
    running.send_signal(2)  # Ctrl-C
    _, err = running.communicate(timeout=10)
    assert (running.returncode, err) == (130, "oxmem: interrupted; nothing was written by the unfinished command\n")
    assert sorted(p.name for p in rollback_store.parent.iterdir()) == ["journal.db"]  # nothing left beside it
