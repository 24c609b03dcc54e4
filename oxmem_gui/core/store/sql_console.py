"""Read-only SQL on a memory file, enforced by SQLite itself.

A statement runs on the file's own connection (so it works on every format oxmem opens, an encrypted file's
decrypted snapshot included), with an authorizer installed for that statement only: SQLite asks it about every
action the statement would take while compiling it, and anything but reading is denied before a single step runs —
writes and schema changes (also inside a CTE or a trigger), ``ATTACH`` (which ``VACUUM INTO`` needs too),
``load_extension`` and other functions that reach outside the file, and every ``PRAGMA`` except those that only
read. The connection the CLI and the inspector give it is read-only as well, so there are two locks, not one.

**It never holds the agent up.** A statement stops at its time limit (:data:`DEFAULT_SECONDS`, or the caller's)
and whenever its ``stop`` event is set (Ctrl-C, the inspector's Cancel), through SQLite's progress handler: it
says so in one line. A value may be at most :data:`MAX_VALUE_BYTES` (SQLite's own length limit, so
``randomblob(900000000)`` fails before it is made) and a result at most :data:`MAX_RESULT_BYTES`. In WAL mode a
reader never blocks a writer; on a file in a rollback journal mode, where it would (its shared lock keeps the
agent's write waiting, then failing with "database is locked"), the statement runs on a copy of the file in
memory made by :func:`snapshot_copy` a few pages at a time, each step holding the lock for well under a
millisecond, so the agent never waits on the console.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import apsw

from ..database import Database, read_transaction
from ..errors import InvalidInputError, OperationCancelled
from ..text_repair import repaired_copy

#: what a statement may do: read tables and columns, call functions, select, recurse (a recursive CTE)
_ALLOWED = {apsw.SQLITE_SELECT, apsw.SQLITE_READ, apsw.SQLITE_FUNCTION, apsw.SQLITE_RECURSIVE}
#: functions that reach outside the file or change how it is read
_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "sqlite_dbpage"}
#: pragmas that only read, with or without their argument (a table or index name)
_INFO_PRAGMAS = {
    "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo", "foreign_key_list",
    "foreign_key_check", "integrity_check", "quick_check",
}  # fmt: skip
#: pragmas that read a setting when given no argument (and would change it when given one)
_VALUE_PRAGMAS = {
    "user_version", "application_id", "schema_version", "data_version", "page_count", "page_size",
    "freelist_count", "encoding", "journal_mode", "auto_vacuum", "compile_options", "function_list",
    "pragma_list", "collation_list", "module_list", "database_list",
}  # fmt: skip
#: SQLite's action codes in words, for the refusal
_ACTIONS = {
    apsw.SQLITE_INSERT: "INSERT into {0}",
    apsw.SQLITE_UPDATE: "UPDATE of {0}.{1}",
    apsw.SQLITE_DELETE: "DELETE from {0}",
    apsw.SQLITE_ATTACH: "ATTACH of {0!r} (also what VACUUM INTO does)",
    apsw.SQLITE_DETACH: "DETACH",
    apsw.SQLITE_PRAGMA: "PRAGMA {0}",
    apsw.SQLITE_FUNCTION: "the function {1}()",
    apsw.SQLITE_TRANSACTION: "{0} (a transaction)",
    apsw.SQLITE_SAVEPOINT: "SAVEPOINT",
    apsw.SQLITE_ANALYZE: "ANALYZE",
    apsw.SQLITE_REINDEX: "REINDEX",
    apsw.SQLITE_ALTER_TABLE: "ALTER TABLE {1}",
}
_SCHEMA_TABLES = {"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"}
DEFAULT_LIMIT = 1000
#: seconds a statement may run before it is stopped (the command line's --timeout)
DEFAULT_SECONDS = 30.0
#: the largest value a statement may make or return, and the most bytes a result may hold
MAX_VALUE_BYTES = 64 << 20
MAX_RESULT_BYTES = 256 << 20
#: pages copied per step of :func:`snapshot_copy` (the source's lock is held for one step at a time)
COPY_PAGES = 256


@dataclass
class SqlResult:
    """The columns and the first rows of a statement's result; ``more`` when it had rows past them."""

    columns: list[str]
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    more: bool = False


def _authorizer(refusals: list[str]) -> Callable[..., int]:
    def authorize(action: int, first: str | None, second: str | None, _db: str | None, _trigger: str | None) -> int:
        if action in _ALLOWED and not (action == apsw.SQLITE_FUNCTION and (second or "").lower() in _DENIED_FUNCTIONS):
            return apsw.SQLITE_OK
        if action == apsw.SQLITE_PRAGMA:
            name = (first or "").lower()
            if name in _INFO_PRAGMAS or (name in _VALUE_PRAGMAS and second is None):
                return apsw.SQLITE_OK
            if second is not None:
                first = f"{first} = {second}"
        what = _ACTIONS.get(action)
        if action in (apsw.SQLITE_INSERT, apsw.SQLITE_UPDATE, apsw.SQLITE_DELETE) and first in _SCHEMA_TABLES:
            what = "a change of the schema (CREATE, DROP, ALTER or ANALYZE)"
        elif action == apsw.SQLITE_ATTACH and not first:
            what = "VACUUM"
        if what is None:
            name = apsw.mapping_authorizer_function.get(action, str(action)).removeprefix("SQLITE_")
            what = name.replace("_", " ") + (f" {first}" if first else "")
        refusals.append(what.format(first, second))
        return apsw.SQLITE_DENY

    return authorize


def run_sql(
    conn: apsw.Connection,
    sql: str,
    limit: int = DEFAULT_LIMIT,
    skip: int = 0,
    *,
    seconds: float = DEFAULT_SECONDS,
    stop: threading.Event | None = None,
) -> SqlResult:
    """The result of ``sql`` (one statement, or several: the last one's result) — at most ``limit`` rows, after
    the first ``skip`` (the next page of a result shown a page at a time: the statement runs again, in the snapshot
    of the call).

    Raises :class:`InvalidInputError` with one line for SQL that SQLite rejects, for anything but reading
    ("refused: INSERT into messages — the SQL console only reads; nothing was changed"), for a statement that ran
    past ``seconds`` and for a value or a result too big (see the module's docstring);
    :class:`OperationCancelled` when ``stop`` is set while it runs."""
    if not isinstance(sql, str) or not sql.strip():
        raise InvalidInputError("no SQL given")
    refusals: list[str] = []
    deadline = time.monotonic() + seconds
    stopped: list[str] = []

    def progress() -> bool:  # True stops the statement (SQLite's interrupt)
        if stop is not None and stop.is_set():
            stopped.append("cancelled")
        elif time.monotonic() > deadline:
            stopped.append("timeout")
        return bool(stopped)

    previous = conn.authorizer
    conn.authorizer = _authorizer(refusals)
    length = conn.limit(apsw.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    conn.set_progress_handler(progress, 1000)
    try:
        cursor = conn.cursor()
        try:
            cursor.execute(sql)
            try:
                columns = [d[0] for d in cursor.get_description()]
            except apsw.ExecutionCompleteError:
                columns = []
            rows: list[tuple[Any, ...]] = []
            size = 0
            for row in itertools.islice(cursor, skip, None):
                if len(rows) == limit:
                    return SqlResult(columns, rows, True)
                size += 64 + sum(len(v) if isinstance(v, str | bytes) else 8 for v in row)  # a row's own cost too
                if size > MAX_RESULT_BYTES:
                    raise InvalidInputError(
                        f"the result passed {MAX_RESULT_BYTES >> 20} MiB at row {skip + len(rows) + 1:,}: "
                        "ask for fewer rows (--limit, --offset) or smaller columns"
                    )
                rows.append(row)
            return SqlResult(columns, rows)
        finally:
            cursor.close(force=True)
    except apsw.Error as exc:
        if stopped == ["cancelled"] or (stop is not None and stop.is_set()):  # or SQLite's interrupt came first
            raise OperationCancelled("the statement was stopped; nothing was changed") from exc
        if stopped:
            raise InvalidInputError(f"the statement was stopped after {seconds:g} s (its time limit)") from exc
        if refusals:  # a denied function is an SQLError, a denied action an AuthError
            raise InvalidInputError(
                f"refused: {refusals[0]} — the SQL console only reads; nothing was changed"
            ) from exc
        if isinstance(exc, apsw.ReadOnlyError):
            raise InvalidInputError("refused: the statement would write — the SQL console only reads") from exc
        if isinstance(exc, apsw.TooBigError):
            raise InvalidInputError(f"a value would be over {MAX_VALUE_BYTES >> 20} MiB: refused") from exc
        raise InvalidInputError(f"SQL error: {str(exc).removeprefix('SQLError: ')}") from exc
    finally:
        conn.set_progress_handler(None)
        conn.limit(apsw.SQLITE_LIMIT_LENGTH, length)
        conn.authorizer = previous


def blocks_writers(conn: apsw.Connection) -> bool:
    """Whether a long read on ``conn`` would keep another program from writing: a file in a rollback journal
    mode (not WAL, not in memory)."""
    mode = conn.execute("PRAGMA journal_mode").fetchall()[0][0]
    return mode not in ("wal", "memory") and bool(conn.filename)


def snapshot_copy(conn: apsw.Connection, stop: threading.Event | None = None) -> apsw.Connection:
    """A copy of ``conn``'s database in memory, made with SQLite's backup API :data:`COPY_PAGES` pages a step:
    the source is locked for one step at a time, and a write between steps makes the copy start over (so it is
    one consistent state). A source that stays busy is waited for, a step at a time."""
    copy = apsw.Connection(":memory:")
    try:
        with copy.backup("main", conn, "main") as backup:
            while not backup.done:
                if stop is not None and stop.is_set():
                    raise OperationCancelled("the statement was stopped; nothing was changed")
                try:
                    backup.step(COPY_PAGES)
                except apsw.BusyError:
                    time.sleep(0.005)  # the agent is writing: let it
        return copy
    except BaseException:
        copy.close()
        raise


def console(
    conn: apsw.Connection,
    sql: str,
    limit: int = DEFAULT_LIMIT,
    skip: int = 0,
    seconds: float = DEFAULT_SECONDS,
    stop: threading.Event | None = None,
) -> SqlResult:
    """:func:`run_sql` as the command line and the inspector run it on a file beside a live agent: on a copy in
    memory when a read would block the agent's writes (:func:`blocks_writers`), else in one read transaction.
    Runs outside any transaction of ``conn``'s (the copy's steps must let go of the lock between them)."""

    def on(copy: apsw.Connection) -> SqlResult:
        try:
            return run_sql(copy, sql, limit, skip, seconds=seconds, stop=stop)
        finally:
            copy.close()

    try:
        if blocks_writers(conn):
            return on(snapshot_copy(conn, stop))
        with read_transaction(conn):
            return run_sql(conn, sql, limit, skip, seconds=seconds, stop=stop)
    except UnicodeDecodeError:  # text that is not UTF-8: shown with U+FFFD, from a repaired copy
        return on(repaired_copy(conn)[0])


class SqlConsole:
    """The SQL console of a memory whose file is ``self._db`` (the store and every reader): :meth:`sql` runs a
    statement as :func:`console` does, :meth:`interrupt` stops it from any thread."""

    _db: Database
    _sql_stop: threading.Event | None = None

    async def sql(
        self, text: str, limit: int = DEFAULT_LIMIT, skip: int = 0, seconds: float = DEFAULT_SECONDS
    ) -> SqlResult:
        """Read-only SQL on the file: stopped at ``seconds`` or by :meth:`interrupt`, never holding a lock the
        agent's writes wait for."""
        self._sql_stop = threading.Event()
        return await self._db.run(console, text, limit, skip, seconds, self._sql_stop)

    def interrupt(self) -> None:
        """Stop the SQL statement running on the file now (safe from any thread): it fails with "the statement was
        stopped"; nothing is written either way."""
        if self._sql_stop is not None:
            self._sql_stop.set()
        self._db.conn.interrupt()
