"""Writes to a file with libSQL's vector index (newer Oxydra), made by the libSQL engine in a child process.

SQLite — APSW's engine — cannot write a table indexed by ``libsql_vector_idx``: the index lives in libSQL's own
shadow tables, which only the libSQL engine maintains. So the writes that reach ``chunks_vec`` (storing events and
notes, deleting them, forgetting a session, reindexing) run the core's own write functions (:mod:`.store.events`,
:mod:`.store.notes`) on a connection of the ``libsql`` package, in one transaction each, exactly as they run on
APSW elsewhere; libSQL then keeps its vector index, the file's FTS triggers keep ``chunks_fts``, and its foreign
keys cascade.

Why a child process: POSIX file locks belong to a process, and closing *any* descriptor of a file drops all of
them. Two SQLite libraries with the same file open in one process (APSW reading, libSQL writing) would drop each
other's locks whenever one closed a handle, and the agent could then write under either. The child is one more
process beside the agent, with its own locks; the inspector's APSW connection keeps reading the file as before.
The child (``python -m oxmem_gui.core.libsql_writer``, talking pickles over its own pipes) starts at the first
such write, inheriting no descriptor of the file, and stays until the store is closed. Embedding happens before
the write lock is taken, in the parent for events and in the child for notes (the backend travels by value: the
deterministic model, or the semantic model's folder). The child's stderr goes nowhere: the warnings it logs
during a call come back with the call's result, and are logged by the parent.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.util
import logging
import os
import pickle
import re
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from . import vector_deletions, vector_index
from .database import read_only_uri
from .errors import ConflictError, InvalidInputError, OxmemError, ReadOnlyError, StoreBusyError

T = TypeVar("T")
log = logging.getLogger(__name__)


class LibsqlConnection:
    """The part of an APSW connection the core's write functions use — ``execute`` returning rows to iterate or
    ``fetchall``, and ``in_transaction`` — over a ``libsql`` connection (autocommit: the core issues ``BEGIN
    IMMEDIATE`` and ``COMMIT`` itself).

    A vector written to ``chunks_vec`` is zero-padded to the column's ``FLOAT32(N)``, as Oxydra stores every
    vector (libSQL refuses another length; the reader's vector leg reads the model's leading dimensions back).

    A writable connection keeps libSQL's vector index whole: before each ``COMMIT``, the rows a deletion in the
    transaction may have left unreachable are re-inserted (:mod:`.vector_index`). Given the file's ``path``, it
    also keeps what it deleted between processes: read back when it opens (and before a write transaction, when
    another writer of the file kept more meanwhile), written after each ``COMMIT`` that changed it — never failing
    the edit."""

    def __init__(self, raw: Any, writable: bool = True, path: str | os.PathLike[str] | None = None) -> None:
        self.raw = raw
        self.index = vector_index.index_name(raw)
        #: the file whose deletions from the vector index are kept between processes (none: kept in memory only)
        self.path = path if self.index and writable else None
        #: what the kept deletions were when last read or written here, and the file's stat then
        self._kept: list[tuple[int, str]] = []
        self._seen: tuple[int, ...] | None = None
        if self.index and writable:
            vector_index.watch_deletions(raw, self.index)
            self._learn_deletions()
        declared = raw.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'chunks_vec'").fetchall()
        found = re.search(r"embedding_blob\s+F(?:LOAT)?32\((\d+)\)", declared[0][0] if declared else "", re.IGNORECASE)
        self.vector_bytes = int(found.group(1)) * 4 if found else None

    def execute(self, sql: str, args: Sequence[Any] | dict[str, Any] = ()) -> _Rows:
        if self.vector_bytes and "INTO chunks_vec" in sql and not isinstance(args, dict):
            args = [*args]
            blob = bytes(args[1])  # (chunk_id, embedding_blob, …) in every insert of the core
            if len(blob) > self.vector_bytes:
                raise InvalidInputError(
                    f"a vector of {len(blob) // 4} values does not fit this file's FLOAT32({self.vector_bytes // 4})"
                    " column; nothing was changed"
                )
            args[1] = blob + bytes(self.vector_bytes - len(blob))
        if self.index and "INTO chunks_vec" in sql and not isinstance(args, dict):
            sql, args = vector_index.into_deleted_twin(self.raw, sql, args)
        statement = sql.strip().upper()
        committing = statement == "COMMIT"
        if committing and self.index:
            vector_index.keep_reachable(self.raw, self.index)
        elif statement.startswith("BEGIN"):
            self._learn_deletions()
        cursor = self.raw.execute(sql, args if isinstance(args, dict) else tuple(args))
        rows = _Rows(cursor.fetchall() if cursor.description else [])
        if committing:
            self._keep_deletions()
        return rows

    @contextlib.contextmanager
    def _temp_only(self) -> Iterator[None]:
        """A transaction of its own for writes to the TEMP tables between the core's (the ``libsql`` binding opens
        one before any write, which would otherwise stay open): it takes no lock on the file."""
        self.raw.execute("BEGIN")
        try:
            yield
        except BaseException:
            self.raw.execute("ROLLBACK")
            raise
        self.raw.execute("COMMIT")

    def _learn_deletions(self) -> None:
        """When the writer starts, and before each write transaction if the kept deletions' file changed since (a
        writer of the same file in another process — the inspector open beside a command — kept some meanwhile):
        the deletions kept there noted as this writer's own. Never raises."""
        path = self.path
        if path is None or (seen := vector_deletions.deletions_stat(path)) == self._seen:
            return
        try:
            had = set(self._kept)
            self._kept = vector_deletions.read_deletions(path)
            self._seen = seen
            if new := [e for e in self._kept if e not in had]:
                with self._temp_only():
                    vector_index.note_deleted(self.raw, new)
        except Exception as exc:  # noqa: BLE001 - they only help: the edit goes on without them
            log.info("the deletions kept for %s's vector index were not read: %s", path, exc)

    def _keep_deletions(self) -> None:
        """After a commit: the deletions this writer knows of written for the next process, if they changed since
        read or written — merged with what another writer of the file kept meanwhile. Never raises."""
        path = self.path
        if path is None:
            return
        try:
            with self._temp_only():
                now = vector_index.deleted(self.raw)
            if set(now) == set(self._kept):
                return
            had = set(self._kept)
            if others := [e for e in vector_deletions.read_deletions(path) if e not in had]:
                with self._temp_only():
                    vector_index.note_deleted(self.raw, others)
                    now = vector_index.deleted(self.raw)
            if vector_deletions.write_deletions(path, now):
                self._kept, self._seen = now, vector_deletions.deletions_stat(path)
        except Exception as exc:  # noqa: BLE001 - keeping them only helps: the edit itself is committed
            log.info("the deletions from %s's vector index were not kept: %s", path, exc)

    @property
    def in_transaction(self) -> bool:
        return bool(self.raw.in_transaction)


class _Rows(list):
    """Rows read at once (libsql's cursor cannot be iterated), answering as an APSW cursor does."""

    def fetchall(self) -> list[Any]:
        return list(self)

    def fetchone(self) -> Any:
        return self[0] if self else None


def _open(path: str, busy_timeout_ms: int, read_only: bool = False) -> LibsqlConnection:
    """In the child: one libSQL connection to ``path`` (``mode=ro`` when ``read_only``), foreign keys on, waiting
    for the agent's write lock."""
    import libsql

    raw = libsql.connect(read_only_uri(Path(path)) if read_only else path)
    raw.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    raw.execute("PRAGMA foreign_keys = ON")
    return LibsqlConnection(raw, writable=not read_only, path=None if read_only else path)


def _call(conn: LibsqlConnection, fn: Callable[..., Any], args: tuple, kwargs: dict) -> tuple[str, Any, Any, Any]:
    """In the child: ``fn(conn, *args, **kwargs)``; an error comes back as its parts (a :class:`ConflictError`
    carries the row as it is now, which pickling an exception would drop)."""
    try:
        return ("ok", fn(conn, *args, **kwargs), None, None)
    except OxmemError as exc:
        return ("error", type(exc), str(exc), getattr(exc, "current", None))
    except ValueError as exc:  # the libsql binding's SQLite errors
        text = str(exc)
        kind = StoreBusyError if "locked" in text or "busy" in text else OxmemError
        return ("error", kind, f"libSQL could not write it: {text}; nothing was changed", None)
    except Exception as exc:  # noqa: BLE001 - anything else is reported, and the child goes on serving
        return ("error", OxmemError, f"the libSQL writer failed: {type(exc).__name__}: {exc}", None)


def _send(stream: Any, value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream: Any) -> Any:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("the other side closed the pipe")
    (size,) = struct.unpack("<Q", head)
    return pickle.loads(stream.read(size))  # noqa: S301 - our own child process, over its private pipe


class _Kept(logging.Handler):
    """In the child: the warnings oxmem's code logs during a call, sent back with its result (the child has no log
    of its own: its stderr goes nowhere), to be logged by the parent."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[tuple[int, str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            self.records.append((record.levelno, record.name, record.getMessage()))

    def take(self) -> list[tuple[int, str, str]]:
        records, self.records = self.records, []
        return records


def serve(path: str, busy_timeout_ms: int, read_only: bool = False) -> None:
    """The child's loop: a call read from stdin, its result (and the warnings logged meanwhile) written to stdout,
    until stdin closes."""
    kept = _Kept()
    logger = logging.getLogger("oxmem_gui")
    logger.addHandler(kept)
    logger.setLevel(min(logger.getEffectiveLevel(), logging.WARNING))
    conn = _open(path, busy_timeout_ms, read_only)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            fn, args, kwargs = _receive(stdin)
        except EOFError:
            return
        _send(stdout, (*_call(conn, fn, args, kwargs), kept.take()))


@functools.cache
def have_libsql() -> bool:
    """Whether the ``libsql`` package is installed (looked up once: capabilities ask it from the GUI thread)."""
    return importlib.util.find_spec("libsql") is not None


class LibsqlWriter:
    """The child process that writes ``path`` through libSQL (see the module's docstring)."""

    def __init__(self, path: Path, busy_timeout_ms: int, read_only: bool = False) -> None:
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        #: a reader only (``oxmem check``): the connection is opened ``mode=ro``
        self.read_only = read_only
        self._child: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def _start(self) -> subprocess.Popen[bytes]:
        if self._child is None or self._child.poll() is not None:
            if not have_libsql():
                raise ReadOnlyError(
                    f"{self.path.name} has libSQL's vector index: writing it needs the libSQL engine "
                    "(pip install 'oxmem-gui[libsql]', or pip install libsql); nothing was changed"
                )
            mode = "ro" if self.read_only else "rw"
            argv, env = [sys.executable, "-m", __name__, str(self.path), str(self.busy_timeout_ms), mode], None
            if getattr(sys, "frozen", False):  # a bundled app has no -m: it runs itself as the writer
                spec = f"{self.busy_timeout_ms}:{mode}:{self.path}"
                argv, env = [sys.executable], {**os.environ, WRITER_ENV: spec}
            self._child = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
            )
        return self._child

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(conn, *args, **kwargs)`` on the child's libSQL connection (blocking); its errors raised here."""
        with self._lock:
            child = self._start()
            try:
                _send(child.stdin, (fn, args, kwargs))
                status, value, message, current, *more = _receive(child.stdout)
            except (EOFError, OSError) as exc:
                self._stop()
                raise OxmemError(f"the libSQL writer stopped ({exc}); nothing was changed") from exc
        for level, name, text in more[0] if more else ():  # the child's warnings, in this process's log
            logging.getLogger(name).log(level, "%s (the libSQL writer)", text)
        if status == "ok":
            return value
        if value is ConflictError:
            raise ConflictError(message, current)
        raise value(message)

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """:meth:`call` off the event loop."""
        return await asyncio.to_thread(self.call, fn, *args, **kwargs)

    def _stop(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            if child.stdin:
                child.stdin.close()
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            if child.stdout:
                child.stdout.close()

    def close(self) -> None:
        """End the child (it commits nothing pending: each call is one transaction)."""
        with self._lock:
            self._stop()


#: set in the writer's environment: how a bundled app (no ``-m``) knows to serve (``timeout:rw|ro:path``)
WRITER_ENV = "OXMEM_LIBSQL_WRITER"


def serve_if_asked() -> None:
    """At the top of a bundled app's entry point: run as the libSQL writer when started as one."""
    spec = os.environ.get(WRITER_ENV)
    if spec:
        timeout, mode, path = spec.split(":", 2)
        serve(path, int(timeout), mode == "ro")
        sys.exit(0)


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]), sys.argv[3] == "ro")
