"""Opening a SQLite file with APSW, safely, and running work on the connection's own thread.

A :class:`Database` owns one APSW connection and one worker thread. All SQL for that connection runs on that
thread (``await db.run(fn, ...)`` calls ``fn(conn, ...)`` there), so an event loop — asyncio in the CLI,
qasync in the GUI — only awaits results and never blocks on SQLite. APSW releases the GIL while SQLite works.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import apsw

from .errors import ReadOnlyError, StoreOpenError

T = TypeVar("T")

BUSY_TIMEOUT_MS = 5000


def _uri(path: Path, mode: str) -> str:
    return f"file:{quote(str(path.resolve()))}?mode={mode}"


def connect(path: str | os.PathLike[str], *, read_only: bool = False, create: bool = True) -> apsw.Connection:
    """Open ``path`` and check that it is a readable SQLite database.

    Read-only opens use ``mode=ro`` and never create a file. A read-write open of a file that SQLite can
    only read (permissions, read-only medium) raises :class:`ReadOnlyError` instead of failing later.
    Raises :class:`StoreOpenError` for a missing file (read-only or ``create=False``), a directory,
    a file that is not SQLite, or a corrupt header.
    """
    p = Path(path).expanduser()
    if p.is_dir():
        raise StoreOpenError(f"{p} is a directory, not a SQLite database file")
    if not p.exists() and (read_only or not create):
        raise StoreOpenError(f"{p} does not exist")
    if not read_only and not p.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    flags = apsw.SQLITE_OPEN_URI | (
        apsw.SQLITE_OPEN_READONLY if read_only else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    )
    try:
        conn = apsw.Connection(_uri(p, "ro" if read_only else "rwc"), flags=flags)
    except apsw.CantOpenError as exc:
        if not read_only and p.exists() and not os.access(p, os.W_OK):
            raise ReadOnlyError(f"{p} is read-only; open it read-only or make it writable") from exc
        raise StoreOpenError(f"cannot open {p}: {exc}") from exc
    try:
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
    except apsw.NotADBError as exc:
        conn.close()
        raise StoreOpenError(f"{p} is not a SQLite database") from exc
    except apsw.CorruptError as exc:
        conn.close()
        raise StoreOpenError(f"{p} is corrupt: {exc}") from exc
    if not read_only and conn.readonly("main"):
        conn.close()
        raise ReadOnlyError(f"{p} is read-only; open it read-only or make it writable")
    tune_connection(conn)
    return conn


def tune_connection(conn: apsw.Connection) -> None:
    """Per-connection settings that change nothing in the file: in WAL mode ``synchronous=NORMAL``
    (durable at checkpoints, never corrupting; SQLite's recommendation for WAL)."""
    if conn.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal":
        conn.execute("PRAGMA synchronous = NORMAL")


@contextlib.contextmanager
def write_transaction(conn: apsw.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any exception: every write of the core goes here.

    IMMEDIATE takes the write lock up front, so a concurrent writer waits (``busy_timeout``) instead of
    failing halfway with a lock upgrade error.
    """
    try:
        conn.execute("BEGIN IMMEDIATE")
    except apsw.ReadOnlyError as exc:
        raise ReadOnlyError("the store is open read-only; enable editing to change it") from exc
    try:
        yield
    except apsw.SQLError as exc:
        conn.execute("ROLLBACK")
        if "libsql_vector_idx" in str(exc):
            raise ReadOnlyError(
                "this database has libSQL's vector index (newer Oxydra): it can be read here, but writes that touch "
                "chunk vectors need the libSQL engine — nothing was changed"
            ) from exc
        raise
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


def data_version(conn: apsw.Connection) -> int:
    """SQLite's ``PRAGMA data_version``: changes when *another* connection commits to the file."""
    return int(conn.execute("PRAGMA data_version").fetchall()[0][0])


class Database:
    """One APSW connection plus the single worker thread that is allowed to use it."""

    def __init__(self, conn: apsw.Connection, path: Path, read_only: bool, executor: ThreadPoolExecutor) -> None:
        self.conn = conn
        self.path = path
        self.read_only = read_only
        self._executor = executor

    @classmethod
    async def open(cls, path: str | os.PathLike[str], *, read_only: bool = False, create: bool = True) -> Database:
        """Open ``path`` (see :func:`connect`) on a new worker thread, without blocking the event loop."""
        p = Path(path).expanduser()
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"oxmem-db:{p.name}")
        loop = asyncio.get_running_loop()
        try:
            conn = await loop.run_in_executor(
                executor, functools.partial(connect, p, read_only=read_only, create=create)
            )
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(conn, p, read_only, executor)

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn(conn, *args, **kwargs)`` on the connection's thread and await its result."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, self.conn, *args, **kwargs))

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Synchronous form of :meth:`run` for code that is not on an event loop (scripts, benchmarks)."""
        return self._executor.submit(fn, self.conn, *args, **kwargs).result()

    def close(self) -> None:
        self._executor.submit(self.conn.close).result()
        self._executor.shutdown(wait=True)
