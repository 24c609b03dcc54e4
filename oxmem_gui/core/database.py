"""Opening a SQLite file with APSW, safely, and running work on the connection's own thread.

A :class:`Database` owns one APSW connection and one worker thread. All SQL for that connection runs on that
thread (``await db.run(fn, ...)`` calls ``fn(conn, ...)`` there), so an event loop — asyncio in the CLI,
qasync in the GUI — only awaits results and never blocks on SQLite. APSW releases the GIL while SQLite works.

Living beside an agent that writes to the same file:

* :meth:`Database.read` runs a whole read (every statement of a search, say) in one read transaction, so it
  sees one snapshot even while another process commits in the middle of it;
* writes wait for another program's write lock up to the busy timeout (30 s by default, long enough for any
  agent's transaction), then fail with :class:`StoreBusyError` — one line, nothing written;
* SQLite's failures reach callers as the core's errors with one clear line (:func:`translate`): a corrupt page
  is :class:`DamagedError` ("open a backup or run `oxmem check`"), a lock held too long is busy, text that is
  not valid UTF-8 or a number beyond 64 bits is invalid input;
* a read-only open of a WAL database in a folder this user cannot write (so SQLite cannot create its ``-shm``
  index) falls back to an *immutable snapshot* when the file has no pending ``-wal`` content, and says so in
  :attr:`Database.notice`;
* a read-only open that had to create the ``-wal``/``-shm`` files lets SQLite remove them again on close, when
  no other program is using them (:func:`release_wal_files`).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import functools
import hashlib
import os
import stat
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import apsw

from . import folders, text_repair
from .errors import DamagedError, InvalidInputError, OxmemError, ReadOnlyError, StoreBusyError, StoreOpenError

T = TypeVar("T")

#: How long a write waits for another program's write lock before :class:`StoreBusyError`.
BUSY_TIMEOUT_MS = 30_000


def _uri(path: Path, mode: str, immutable: bool = False) -> str:
    # the file name's bytes as the OS has them: a name that is not UTF-8 still opens
    return f"file:{quote(os.fsencode(path.resolve()))}?mode={mode}" + ("&immutable=1" if immutable else "")


def damaged_message(path: object, detail: object) -> str:
    return f"database is damaged ({detail}): open a backup or run `oxmem --db {path} check`"


def translate(exc: BaseException, path: object, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> OxmemError | None:
    """The core's error for a failure of SQLite (or of binding a value to it), or None to let it propagate."""
    if isinstance(exc, OxmemError):
        return exc
    if isinstance(exc, (apsw.BusyError, apsw.LockedError)):
        return StoreBusyError(
            f"{path} is busy: another program held its lock for more than {busy_timeout_ms / 1000:g} s; "
            "nothing was changed — try again (or wait longer with --wait SECONDS)"
        )
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        return DamagedError(damaged_message(path, exc))
    if isinstance(exc, apsw.FullError):
        return OxmemError(f"the disk holding {path} is full; nothing was changed")
    if isinstance(exc, apsw.IOError):
        return OxmemError(f"cannot read or write {path}: disk I/O error ({exc}); nothing was changed")
    if isinstance(exc, apsw.ReadOnlyError):
        return ReadOnlyError(f"{path} cannot be written ({exc}); nothing was changed")
    if isinstance(exc, apsw.CantOpenError):
        return StoreOpenError(f"cannot open {path}: {exc}")
    if isinstance(exc, UnicodeEncodeError):
        bad = exc.object[exc.start : exc.end] if isinstance(exc.object, str) else ""
        return InvalidInputError(
            f"text is not valid UTF-8 (it holds the lone surrogate {bad!r}, an undecodable byte?); nothing was written"
        )
    if isinstance(exc, OverflowError):
        return InvalidInputError("a number is too large: SQLite integers must fit in 64 bits; nothing was written")
    if isinstance(exc, RecursionError):
        return InvalidInputError("data is nested too deeply; nothing was written")
    return None


def _is_wal(path: Path) -> bool:
    """The file's header says WAL (read and write versions 2), read without SQLite."""
    try:
        header = read_head(path, 20)
    except OSError:
        return False
    return len(header) == 20 and header[:16] == b"SQLite format 3\x00" and header[18:20] == b"\x02\x02"


def _wal_files(path: Path) -> tuple[Path, Path]:
    """The ``-wal`` and ``-shm`` SQLite keeps beside the file ``path`` names — beside the file itself, not beside
    a symbolic link to it (SQLite opens the resolved path, :func:`_uri`)."""
    real = Path(path).resolve()
    return Path(f"{real}-wal"), Path(f"{real}-shm")


def database_path(path: str | os.PathLike[str]) -> Path:
    """``path`` with ``~`` expanded, after refusing what SQLite cannot use as a database file:
    :class:`StoreOpenError` for a symbolic link loop, a directory, and anything else that is not a regular file (a
    FIFO would block the first read forever, a device or socket is no database). A missing path is fine."""
    p = Path(path).expanduser()
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        return p
    except OSError as exc:  # ELOOP, ENAMETOOLONG, EACCES on a parent…
        if exc.errno == errno.ELOOP:
            raise StoreOpenError(f"{p} is a loop of symbolic links, not a database file") from exc
        raise StoreOpenError(f"{p} cannot be reached: {exc.strerror}") from exc
    if stat.S_ISDIR(mode):
        raise StoreOpenError(f"{p} is a directory, not a SQLite database file")
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        raise StoreOpenError(f"{p} is {kind}, not a regular file: nothing to open")
    return p


def _checked(conn: apsw.Connection, path: Path, busy_timeout_ms: int) -> apsw.Connection:
    """Settings and a first read, which is where SQLite finds out what the file is."""
    try:
        conn.set_busy_timeout(busy_timeout_ms)
        conn.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
    except apsw.NotADBError as exc:
        conn.close()
        raise StoreOpenError(f"{path} is not a SQLite database") from exc
    except apsw.Error:
        conn.close()
        raise
    return conn


def open_connection(
    path: str | os.PathLike[str],
    *,
    read_only: bool = False,
    create: bool = True,
    busy_timeout_ms: int = BUSY_TIMEOUT_MS,
) -> tuple[apsw.Connection, str | None]:
    """Open ``path``; returns the connection and a notice for the user (None, or why it is a snapshot).

    Read-only opens use ``mode=ro`` and never create a file. A read-write open of a file that SQLite can
    only read (permissions, read-only medium) raises :class:`ReadOnlyError` instead of failing later.
    Raises :class:`StoreOpenError` for a missing file (read-only or ``create=False``), a directory,
    a file that is not SQLite, and :class:`DamagedError` for a corrupt header.
    """
    p = database_path(path)
    if not p.exists() and (read_only or not create):
        raise StoreOpenError(f"{p} does not exist")
    if not read_only and not p.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    if not read_only and p.is_file() and not os.access(p, os.W_OK):
        # before SQLite opens it: its fallback to a read-only open would leave -wal/-shm files behind
        raise ReadOnlyError(f"{p} is read-only; open it read-only or make it writable")
    flags = apsw.SQLITE_OPEN_URI | (
        apsw.SQLITE_OPEN_READONLY if read_only else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    )
    notice = None
    try:
        if read_only and _unremovable_wal_files(p):
            conn = _checked(apsw.Connection(_uri(p, "ro", immutable=True), flags=flags), p, busy_timeout_ms)
            return conn, (
                f"{p.name} is open as a snapshot: this user cannot write it, so SQLite could not remove the -wal and "
                "-shm files it would make beside it; changes made after opening are not seen (open it again to refresh)"
            )
        try:
            conn = _checked(apsw.Connection(_uri(p, "ro" if read_only else "rwc"), flags=flags), p, busy_timeout_ms)
        except (apsw.CantOpenError, apsw.ReadOnlyError) as exc:
            if not read_only:
                if p.exists() and not os.access(p, os.W_OK):
                    raise ReadOnlyError(f"{p} is read-only; open it read-only or make it writable") from exc
                raise StoreOpenError(f"cannot open {p}: {exc}") from exc
            conn, notice = _snapshot_connection(p, flags, busy_timeout_ms, exc)
    except apsw.Error as exc:
        raise translate(exc, p, busy_timeout_ms) or StoreOpenError(f"cannot open {p}: {exc}") from exc
    if not read_only and conn.readonly("main"):
        conn.close()
        raise ReadOnlyError(f"{p} is read-only; open it read-only or make it writable")
    tune_connection(conn)
    return conn, notice


def read_only_uri(path: Path) -> str:
    """The URI another SQLite engine (libSQL's) opens ``path`` read-only with, as :func:`open_connection` would:
    ``immutable`` where reading would leave files beside it that this user cannot take back."""
    return _uri(path, "ro", immutable=_unremovable_wal_files(path))


def _unremovable_wal_files(p: Path) -> bool:
    """A WAL database that no program has open (no ``-wal`` file), that this user cannot write, in a folder this
    user can: reading it the usual way would leave a ``-wal`` and a ``-shm`` beside it that only a read-write
    connection can take back. (In a folder this user cannot write, SQLite cannot make them: see
    :func:`_snapshot_connection`.)"""
    wal, _ = _wal_files(p)
    real = p.resolve()
    return _is_wal(p) and not wal.exists() and not os.access(real, os.W_OK) and os.access(real.parent, os.W_OK)


def _snapshot_connection(p: Path, flags: int, busy_timeout_ms: int, cause: Exception) -> tuple[apsw.Connection, str]:
    """A read-only WAL database in a folder this user cannot write: SQLite cannot create the ``-shm`` index
    that readers share with writers. Without pending ``-wal`` content the file itself is the whole database, so
    it is opened ``immutable`` — a snapshot, said in the notice. Otherwise there is no correct way to read it."""
    wal, _ = _wal_files(p)
    if not _is_wal(p) or os.access(p.resolve().parent, os.W_OK):
        raise StoreOpenError(f"cannot open {p} read-only: {cause}") from cause
    if wal.exists() and wal.stat().st_size > 0:
        raise StoreOpenError(
            f"cannot open {p} read-only: it has changes in {wal.name} that SQLite can only read through a "
            f"-shm index, and {p.parent} is not writable — open it while its agent runs, or copy the database "
            "with its -wal file to a writable folder"
        ) from cause
    conn = _checked(apsw.Connection(_uri(p, "ro", immutable=True), flags=flags), p, busy_timeout_ms)
    return conn, (
        f"{p.name} is open as a snapshot: its folder is not writable, so SQLite cannot share the agent's lock; "
        "changes made after opening are not seen (open it again to refresh)"
    )


def discard_wal_files(path: Path) -> None:
    """After a read-only open that failed (SQLite could not read the file), remove the empty ``-wal`` and the
    ``-shm`` it created on the way — unless another process holds a lock on the ``-shm`` (it uses them)."""
    wal, shm = _wal_files(path)
    try:
        if wal.exists() and wal.stat().st_size:
            return
        fd = os.open(shm, os.O_RDWR)
    except OSError:
        return
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # SQLite's own locks are POSIX locks on this file
    except OSError:
        os.close(fd)
        return
    try:
        for f in (wal, shm):
            f.unlink(missing_ok=True)
    finally:
        os.close(fd)


#: files this process has open through :class:`Database`: resolved path → [how many, a descriptor of our own].
#: Closing *any* descriptor of a file drops every POSIX lock this process holds on it, SQLite's included, and
#: SQLite (which counts its locks per process) never takes them again: another program could then write under
#: us, or checkpoint and delete the ``-wal`` our connection writes to. So while a file is open here its header is
#: read through the descriptor kept here (:func:`read_head`), closed only after the last connection, and its
#: ``-wal``/``-shm`` are never released.
_OPEN_HERE: dict[Path, list[int]] = {}
_OPEN_LOCK = threading.Lock()


def read_head(path: str | os.PathLike[str], size: int) -> bytes:
    """The first ``size`` bytes of a file, read without closing a descriptor of a file this process has open
    through SQLite (see ``_OPEN_HERE``)."""
    with _OPEN_LOCK:
        held = _OPEN_HERE.get(Path(path).resolve())
        if held is not None and held[1] >= 0:
            return os.pread(held[1], size, 0)
    with open(path, "rb") as fh:
        return fh.read(size)


def _hold(path: Path) -> None:
    with _OPEN_LOCK:
        held = _OPEN_HERE.get(path)
        if held is not None:
            held[0] += 1
            return
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            fd = -1
        _OPEN_HERE[path] = [1, fd]


def _let_go(path: Path) -> None:
    """One connection fewer; after the last, the descriptor kept for it is closed (no SQLite lock left to drop)."""
    with _OPEN_LOCK:
        held = _OPEN_HERE[path]
        held[0] -= 1
        if held[0] > 0:
            return
        del _OPEN_HERE[path]
    if held[1] >= 0:
        os.close(held[1])


def release_wal_files(path: Path) -> bool:
    """Remove the empty ``-wal`` and the ``-shm`` that a read-only connection had to create, if no other
    connection uses them. Returns True when they are gone.

    A read-only connection cannot take the lock that proves it is the last one, so SQLite leaves both files
    behind. A read-write connection that reads one row and closes can: when it is the last, SQLite checkpoints
    (an empty WAL: nothing is written to the database file) and deletes both; when the agent still has the file
    open, they are in use and stay. A file this user cannot write gets :func:`discard_wal_files` instead (no other
    process holding a lock on the ``-shm``). Needs write permission on the folder; otherwise they stay.
    """
    path = Path(path).resolve()  # the file's own folder and sidecars, not a symbolic link's
    wal, shm = _wal_files(path)
    with _OPEN_LOCK:
        if path in _OPEN_HERE:
            return False
    try:
        if not wal.exists() or wal.stat().st_size != 0:
            return not wal.exists() and not shm.exists()
    except OSError:
        return False
    if not os.access(path.parent, os.W_OK):
        return False
    if not os.access(path, os.W_OK):  # no read-write connection possible: the files' own locks say who uses them
        discard_wal_files(path)
        return not wal.exists() and not shm.exists()
    try:
        conn = apsw.Connection(_uri(path, "rw"), flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_URI)
        try:
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        finally:
            conn.close()
    except apsw.Error:
        return False
    return not wal.exists() and not shm.exists()


def _reading_mark_path(path: Path) -> Path:
    """Where a read notes that the ``-wal``/``-shm`` beside ``path`` are its own: in the user's cache folder, named
    by a hash of the file's full path (never beside the file)."""
    key = hashlib.blake2b(os.fsencode(Path(path).resolve()), digest_size=16).hexdigest()
    return folders.cache_dir() / "reads" / key


def _reading_mark(path: Path, wal_existed: bool) -> bool:
    """Before a read-only open: whether the ``-wal``/``-shm`` are oxmem's to release when it closes — none there
    yet (this read may create them: noted, so that a read killed before it closes is known by the next), or left
    by an oxmem read that never closed (its note still there). The agent's own are never touched."""
    mark = _reading_mark_path(path)
    if wal_existed:
        with contextlib.suppress(OSError):
            return stat.S_ISREG(os.lstat(mark).st_mode)  # a link or a folder planted there is no note of oxmem's
        return False
    with contextlib.suppress(OSError):  # (a cache folder that cannot be written: the files are still released)
        mark.parent.mkdir(parents=True, exist_ok=True)
        if stat.S_ISDIR(os.lstat(mark.parent).st_mode):  # never through a link planted as the folder
            fd, written = tempfile.mkstemp(dir=mark.parent, prefix=".mark-")
            try:
                os.write(fd, os.fsencode(Path(path).resolve()))
                os.replace(written, mark)  # replaces a link planted there, never writes through it
            except OSError:
                os.unlink(written)
                raise
            finally:
                os.close(fd)
    return True


def _reading_done(path: Path) -> None:
    with contextlib.suppress(OSError):
        _reading_mark_path(path).unlink(missing_ok=True)


def tune_connection(conn: apsw.Connection) -> None:
    """Per-connection settings that change nothing in the file: in WAL mode ``synchronous=NORMAL``
    (durable at checkpoints, never corrupting; SQLite's recommendation for WAL)."""
    if conn.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal":
        conn.execute("PRAGMA synchronous = NORMAL")


#: connection → schema work its first write transaction does before the write itself (:func:`defer_to_first_write`)
_FIRST_WRITE: weakref.WeakKeyDictionary[apsw.Connection, Callable[[apsw.Connection], None]] = (
    weakref.WeakKeyDictionary()
)


def defer_to_first_write(conn: apsw.Connection, work: Callable[[apsw.Connection], None]) -> None:
    """Run ``work(conn)`` at the start of the connection's next write transaction, inside it: it commits with
    that write or is rolled back with it (and then tried again by the next). How an existing store's pending
    migrations are applied without ever writing before a write is known to be allowed and valid."""
    _FIRST_WRITE[conn] = work


def table_damage(conn: apsw.Connection, pragma: str = "quick_check") -> tuple[list[str], list[str]]:
    """SQLite's ``quick_check`` (or ``integrity_check``) of each ordinary table and its indexes: the errors found
    (``[]`` when healthy), and the tables left out because only libSQL's engine can check them.

    Table by table, so that what another program's file holds and SQLite cannot check without that program's
    engine is left out: virtual tables (an agent's FTS5 index may be partial by design, which SQLite's own FTS5
    check calls corrupt) and tables indexed by libSQL's vector index. About 0.2 s per 100 MB with a warm cache.
    """
    libsql = {
        r[0]
        for r in conn.execute(
            "SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND sql LIKE ?", ("%libsql_vector_idx%",)
        )
    }
    tables = [
        r[0]
        for r in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
        if r[0] not in libsql and not (r[1] or "").upper().startswith("CREATE VIRTUAL")
    ]
    errors: list[str] = []
    for name in tables:
        quoted = '"' + name.replace('"', '""') + '"'
        errors += [r[0] for r in conn.execute(f"PRAGMA {pragma}({quoted})") if r[0] != "ok"]
    return errors, sorted(libsql)


#: connections whose file passed :func:`table_damage` before their first write
_VERIFIED: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()


def refuse_damaged(conn: apsw.Connection) -> None:
    """Before a connection's first write: a file with a damaged page anywhere is refused, whichever table the write
    touches (SQLite itself only notices damage on the pages a statement reads). Checked in a read transaction, so
    another program's writes are not held up; later damage is found by SQLite as pages are read."""
    if conn in _VERIFIED:
        return
    try:
        with read_transaction(conn):
            errors, _ = table_damage(conn)
    except (apsw.CorruptError, apsw.NotADBError) as exc:
        errors = [str(exc)]
    if errors:
        more = f"; … {len(errors) - 1} more" if len(errors) > 1 else ""
        raise DamagedError(damaged_message(conn.filename, f"{errors[0]}{more}; nothing was written"))
    _VERIFIED.add(conn)


@contextlib.contextmanager
def write_transaction(conn: apsw.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any exception: every write of the core goes here.

    A connection's first write refuses a damaged file (:func:`refuse_damaged`), whatever it writes. IMMEDIATE
    takes the write lock up front, so a concurrent writer waits (``busy_timeout``) instead of failing halfway with
    a lock upgrade error. Work deferred with :func:`defer_to_first_write` runs first, inside the same transaction.
    """
    if isinstance(conn, apsw.Connection) and not conn.readonly("main"):
        refuse_damaged(conn)
    try:
        conn.execute("BEGIN IMMEDIATE")
    except apsw.ReadOnlyError as exc:
        raise ReadOnlyError("the store is open read-only; enable editing to change it") from exc
    first = _FIRST_WRITE.get(conn) if isinstance(conn, apsw.Connection) else None  # (a SQLCipher one has none)
    try:
        if first is not None:
            first(conn)
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
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")
        if first is not None:
            _FIRST_WRITE.pop(conn, None)


@contextlib.contextmanager
def read_transaction(conn: apsw.Connection) -> Iterator[None]:
    """One snapshot for every statement inside (a deferred ``BEGIN`` … ``COMMIT``); nested uses are free.

    Without it each statement sees the database as of its own start, and a search that reads a table's row
    list, then postings, then chunk rows can see three different databases while an agent commits.
    """
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    except BaseException:
        _end(conn, "ROLLBACK")
        raise
    # COMMIT keeps what a read may create in the temp schema (the BM25 index's fts5vocab table); a read has
    # nothing else to commit, so a failure to end it (a connection left in SQLite's error state) is not the
    # caller's problem: the reads themselves succeeded
    if not _end(conn, "COMMIT"):
        _end(conn, "ROLLBACK")


def _end(conn: apsw.Connection, statement: str) -> bool:
    if not conn.in_transaction:
        return True
    try:
        conn.execute(statement)
    except apsw.Error:
        return False
    return True


def data_version(conn: apsw.Connection) -> int:
    """SQLite's ``PRAGMA data_version``: changes when *another* connection commits to the file."""
    return int(conn.execute("PRAGMA data_version").fetchall()[0][0])


class Database:
    """One APSW connection plus the single worker thread that is allowed to use it."""

    def __init__(
        self,
        conn: apsw.Connection,
        path: Path,
        read_only: bool,
        executor: ThreadPoolExecutor,
        *,
        notice: str | None = None,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
        release_on_close: bool = False,
    ) -> None:
        self.conn = conn
        self.path = path
        self.read_only = read_only
        #: a line for the user about how the file is open (a snapshot), or None
        self.notice = notice
        #: why no edit may be made here whatever the format allows (a copy of a remote database), or None
        self.locked: str | None = None
        #: run after the connection is closed (a copy's files removed)
        self.cleanups: list[Callable[[], None]] = []
        self.busy_timeout_ms = busy_timeout_ms
        self._executor = executor
        self._release_on_close = release_on_close
        #: the file this in-memory copy was made from (a decrypted snapshot), or None for a file opened as is
        self.adopted: Path | None = None
        self._closed = False
        #: the file this connection holds open, counted in ``_OPEN_HERE`` (None: an in-memory copy)
        self._held: Path | None = None
        #: (data_version, copy, cells repaired): reads that met text that is not UTF-8 run on this copy
        self._repaired: tuple[int, apsw.Connection, int] | None = None

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        create: bool = True,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> Database:
        """Open ``path`` (see :func:`open_connection`) on a new worker thread, without blocking the event loop."""
        p = Path(path).expanduser()
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"oxmem-db:{p.name}")
        loop = asyncio.get_running_loop()

        def opening() -> tuple[apsw.Connection, str | None, bool]:
            wal_existed = any(f.exists() for f in _wal_files(p))
            ours = read_only and _reading_mark(p, wal_existed)
            try:
                conn, notice = open_connection(p, read_only=read_only, create=create, busy_timeout_ms=busy_timeout_ms)
            except OxmemError:
                if read_only and not wal_existed:
                    discard_wal_files(p)
                    _reading_done(p)
                raise
            if ours and notice is not None:  # opened another way (immutable, a copy): nothing of ours beside it
                _reading_done(p)
            return conn, notice, ours

        try:
            conn, notice, ours = await loop.run_in_executor(executor, opening)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        db = cls(
            conn,
            p,
            read_only,
            executor,
            notice=notice,
            busy_timeout_ms=busy_timeout_ms,
            release_on_close=ours and notice is None,
        )
        db._held = p.resolve()
        _hold(db._held)
        return db

    @classmethod
    async def adopt(cls, make: Callable[[], apsw.Connection], path: Path, *, notice: str | None = None) -> Database:
        """A read-only database around a connection ``make()`` builds on the new worker thread (an in-memory
        copy of ``path``, such as a decrypted snapshot)."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"oxmem-db:{path.name}")
        try:
            conn = await asyncio.get_running_loop().run_in_executor(executor, make)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        db = cls(conn, path, True, executor, notice=notice)
        db.adopted = path
        return db

    def _guarded(self, fn: Callable[..., T], snapshot: bool, *args: Any, **kwargs: Any) -> T:
        try:
            if snapshot:
                with read_transaction(self.conn):
                    return fn(self.conn, *args, **kwargs)
            return fn(self.conn, *args, **kwargs)
        except UnicodeDecodeError:
            if not snapshot:  # not a read in one snapshot (a write, perhaps): never run on a copy
                raise InvalidInputError(
                    f"{self.path.name} holds text that is not valid UTF-8 where this needs it; nothing was changed "
                    "(oxmem check names the cells)"
                ) from None
            return self._guarded_on(self._repaired_copy(), fn, *args, **kwargs)
        except (apsw.Error, UnicodeEncodeError, OverflowError, RecursionError) as exc:
            mapped = translate(exc, self.path, self.busy_timeout_ms)
            if mapped is None:
                raise
            raise mapped from exc

    def _repaired_copy(self) -> apsw.Connection:
        """The file as a read may see it when some of its text is not UTF-8 (:mod:`.text_repair`): made again when
        another program has committed since; says so in :attr:`notice`."""
        version = data_version(self.conn)
        if self._repaired is None or self._repaired[0] != version:
            if self._repaired is not None:
                self._repaired[1].close()
            copy, fixed = text_repair.repaired_copy(self.conn)
            self._repaired = (version, copy, fixed)
            plural = "s" if fixed != 1 else ""
            said = f"{fixed:,} text value{plural} not valid UTF-8: shown with \ufffd (oxmem check names them)"
            self.notice = f"{self.notice}; {said}" if self.notice and "not valid UTF-8" not in self.notice else said
        return self._repaired[1]

    def _guarded_on(self, conn: apsw.Connection, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        try:
            with read_transaction(conn):
                return fn(conn, *args, **kwargs)
        except (apsw.Error, OverflowError, RecursionError) as exc:
            mapped = translate(exc, self.path, self.busy_timeout_ms)
            if mapped is None:
                raise
            raise mapped from exc

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn(conn, *args, **kwargs)`` on the connection's thread and await its result; SQLite's
        errors arrive as the core's (:func:`translate`)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(self._guarded, fn, False, *args, **kwargs))

    async def read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """:meth:`run` inside one read transaction: everything ``fn`` reads comes from one snapshot."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(self._guarded, fn, True, *args, **kwargs))

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Synchronous form of :meth:`run` for code that is not on an event loop (scripts, benchmarks)."""
        return self._executor.submit(self._guarded, fn, False, *args, **kwargs).result()

    @property
    def is_closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Close the connection and its thread (again: nothing)."""
        if self._closed:
            return
        self._closed = True
        if self._repaired is not None:
            self._executor.submit(self._repaired[1].close).result()
        self._executor.submit(self.conn.close).result()
        self._executor.shutdown(wait=True)
        if self._held is not None:
            _let_go(self._held)
        if self._release_on_close:
            release_wal_files(self.path)
            _reading_done(self.path)
        for cleanup in self.cleanups:
            cleanup()
