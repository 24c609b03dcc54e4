"""A local copy of a remote memory: :func:`pull` makes it, :func:`refresh` brings it up to date.

**What is copied.** Every table of the server's ``sqlite_master`` with its own ``CREATE`` text, rowids kept, then
its indexes, triggers and views — except what only the server's engine can hold or rebuild: libSQL's vector index
(``libsql_vector_idx`` and its shadow tables) and SQLite's internal tables. The store's full-text table
``chunks_fts`` is never transferred: it is made here and filled from ``chunks`` (the server may lack FTS5 — the
``tursodb`` server does — or have it; either way the copy's FTS leg is rebuilt locally), and the store's triggers
keep it in step during a refresh.

**Consistency.** A pull first reads, in one transaction on the server, every table's row count and highest rowid
(its high-water mark) and its first :data:`PAGE_ROWS` rows. A memory whose tables fit in one page is therefore
one transaction. A larger table is read on in pages by rowid, each page its own transaction, up to the mark: rows
added meanwhile wait for the next refresh. A final transaction counts each paged table's rows up to its mark; a
different count means rows were deleted during the pull, which then starts over (:data:`ATTEMPTS` times). What
paging cannot see is a row changed in place between the first read and its page: it comes as its page found it.

**Refresh** asks, in one request and one transaction on the server, for each table's count and highest rowid
and what differs: rows past the copy's highest rowid (new events, chunks, vectors); rows whose ``updated_at`` is at
or after the server's clock when the rows were last read, less a minute for the agent's clock (:data:`SINCE`:
changed sessions, summaries, schedules, chunks); and tables without ``updated_at`` of at most
:data:`SMALL_TABLE` rows whole (schedule runs, migrations), whose rows may change in place unseen otherwise —
except the events, which the agent only appends (:data:`APPEND_ONLY`). A table whose count then differs from the
copy's lost rows there: its rowids are asked for and the others deleted. A larger table without ``updated_at``
gets its new and deleted rows; a row of it changed in place shows once the memory is opened again. The copy is
written in one local transaction: a refresh cut off midway leaves it as it was.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from ..errors import OperationCancelled, OxmemError
from ..store.migrations import available_migrations
from .hrana import HranaClient, RemoteError, Rows

#: rows read per table in one request
PAGE_ROWS = 2_000
#: a pull that finds rows deleted under it starts over this many times before giving up
ATTEMPTS = 3
#: tables without ``updated_at`` up to this many rows are read whole at each refresh
SMALL_TABLE = 1_000
#: tables whose rows the agent never changes in place: a session's events are appended by sequence (or all
#: deleted with the session), so new ones are those past the copy's highest rowid whatever the table's size
APPEND_ONLY = frozenset({"conversation_events"})
#: the server's clock, less a margin for the agent's clock running behind it: rows changed after a pull or a
#: refresh carry an ``updated_at`` at or after this (read in the same transaction as the rows)
SINCE = "SELECT datetime('now', '-60 seconds')"
FTS_TABLE = "chunks_fts"
SCHEMA = "SELECT type, name, tbl_name, sql FROM sqlite_master"
#: the FTS5 shadow tables of a virtual table ``v``: ``v_data``, ``v_idx``…
FTS_SHADOWS = ("_data", "_idx", "_content", "_docsize", "_config")

Progress = Callable[[int, int], None]
REFRESH_STOPPED = "the refresh was cancelled; the snapshot is as it was"


@dataclass
class PullReport:
    """What a pull or a refresh transferred."""

    #: table → rows received for it
    rows: dict[str, int] = field(default_factory=dict)
    requests: int = 0
    bytes: int = 0
    #: how the copy is consistent: ``"one transaction"`` or ``"paged"`` (see the module's docstring)
    consistency: str = "one transaction"
    #: tables of the server not copied, with why
    skipped: dict[str, str] = field(default_factory=dict)
    #: the server's time (:data:`SINCE`) when these rows were read: the next refresh asks for rows changed since
    since: str | None = None

    @property
    def total(self) -> int:
        return sum(self.rows.values())


@dataclass
class _Table:
    name: str
    sql: str
    rowid: bool
    columns: list[str] = field(default_factory=list)
    #: how its rows are counted: ``count(KEY)`` through the primary key's index where it has one, else ``count(*)``
    #: (which tursodb answers by reading every row: 134 ms against 21 ms for 100k vectors)
    count: str = "count(*)"

    def learn(self, conn: apsw.Connection) -> None:
        """Take the counting expression from the table as created in ``conn`` (the copy)."""
        info = conn.execute(f"PRAGMA table_info({_quote(self.name)})").fetchall()
        keys = [(r[5], r[1], (r[2] or "").upper()) for r in info if r[5]]
        if len(keys) == 1 and keys[0][2] != "INTEGER":  # an INTEGER PRIMARY KEY is the rowid: no index of its own
            self.count = f"count({_quote(keys[0][1])})"


@dataclass
class _Plan:
    """What of the server's schema is copied, in which order."""

    tables: list[_Table]
    after: list[str]  # indexes, triggers and views, created once the rows are in
    fts: list[str]  # the store's chunks_fts and its triggers, when they are made here
    skipped: dict[str, str]
    signature: tuple[tuple[str, str], ...]


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def statements(script: str) -> list[str]:
    """The statements of an SQL script, each whole (triggers included)."""
    out, current = [], ""
    for part in script.split(";"):
        current += part + ";"
        if apsw.complete(current):
            if current.strip(" \n\t;"):
                out.append(current.strip())
            current = ""
    return out


def _store_fts() -> list[str]:
    """The store's ``CREATE`` of ``chunks_fts`` and of the three triggers that keep it (contract §3)."""
    (_, first), *_ = available_migrations()
    return [s for s in statements(first) if FTS_TABLE in s]


_CREATE = re.compile(
    r"\s*CREATE\s+(?:(?:TEMP|TEMPORARY)\s+)?(?:UNIQUE\s+)?(?:TABLE|INDEX|TRIGGER|VIEW)\b"
    r"|\s*CREATE\s+VIRTUAL\s+TABLE\s+.+?\s+USING\s+fts5\s*\(",
    re.IGNORECASE | re.DOTALL,
)


def plain(sql: str) -> bool:
    """Whether a ``sqlite_master`` text from the server is one ``CREATE`` of a table, an FTS5 table, an index, a
    trigger or a view — all the copy runs of the server's text (a server could send anything: ``ATTACH`` after a
    semicolon, a virtual table reading files)."""
    return len(statements(sql)) == 1 and _CREATE.match(sql) is not None


def guard(conn: apsw.Connection) -> None:
    """The copy's connection never attaches another file, and its schema runs no function marked unsafe."""
    conn.execute("PRAGMA trusted_schema = OFF")

    def authorize(action: int, *_: Any) -> int:
        return apsw.SQLITE_DENY if action in (apsw.SQLITE_ATTACH, apsw.SQLITE_DETACH) else apsw.SQLITE_OK

    conn.authorizer = authorize


def plan(schema: Iterable[tuple[Any, ...]]) -> _Plan:
    """Which tables to copy and what to create after them, from ``(type, name, tbl_name, sql)`` rows."""
    entries = [(t, n, tb, sql) for t, n, tb, sql in schema if sql]
    virtual = {n for t, n, _, sql in entries if t == "table" and sql.upper().startswith("CREATE VIRTUAL")}
    shadows = {v + s for v in virtual for s in FTS_SHADOWS}
    tables, after, skipped = [], [], {}
    for kind, name, table, sql in entries:
        if name.startswith("sqlite_"):
            continue
        if not plain(sql):
            skipped[name] = "not one plain CREATE statement of a table, an FTS5 table, an index, a trigger or a view"
        elif name.startswith("libsql_") or name.endswith("_shadow") or "libsql_vector_idx" in sql:
            skipped[name] = "libSQL's vector index: only the libSQL engine keeps it (the vector leg reads the table)"
        elif name in shadows:
            continue
        elif kind == "table" and name == FTS_TABLE:
            continue  # made here and filled from chunks
        elif kind == "table":
            tables.append(_Table(name, sql, "WITHOUT ROWID" not in sql.upper().replace("\n", " ")))
        elif table != FTS_TABLE and FTS_TABLE not in sql:
            after.append(sql)
    names = {t.name for t in tables}
    fts = _store_fts() if "chunks" in names else []
    return _Plan(tables, after, fts, skipped, tuple(sorted((t.name, t.sql) for t in tables)))


def _stopped(stop: threading.Event | None, said: str = "the pull was cancelled; nothing was kept") -> None:
    if stop is not None and stop.is_set():
        raise OperationCancelled(said)


def _page(table: _Table, after: int, mark: int | None) -> tuple[str, tuple[int, ...]]:
    """The next page of rows after rowid ``after`` (up to rowid ``mark``, when given)."""
    upto = "" if mark is None else f" AND rowid <= {int(mark)}"
    return (
        f"SELECT rowid, * FROM {_quote(table.name)} WHERE rowid > ?{upto} ORDER BY rowid LIMIT {PAGE_ROWS}",
        (after,),
    )


def _insert(conn: apsw.Connection, table: _Table, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
    if not rows:
        return
    names = ["rowid", *columns[1:]] if table.rowid else columns
    marks = ", ".join("?" * len(names))
    conn.executemany(
        f"INSERT OR REPLACE INTO {_quote(table.name)} ({', '.join(map(_quote, names))}) VALUES ({marks})", rows
    )


def _read_schema(client: HranaClient) -> _Plan:
    (schema,) = client.read([SCHEMA])
    return plan(schema.rows)


def _marks(table: _Table) -> str:
    if not table.rowid:
        return f"SELECT {table.count}, 0 FROM {_quote(table.name)}"
    return f"SELECT {table.count}, coalesce(max(rowid), 0) FROM {_quote(table.name)}"


def _first(table: _Table) -> str:
    if not table.rowid:
        return f"SELECT * FROM {_quote(table.name)}"
    return f"SELECT rowid, * FROM {_quote(table.name)} ORDER BY rowid LIMIT {PAGE_ROWS}"


class _Moved(Exception):
    """Rows were deleted on the server during a pull."""


def pull(
    client: HranaClient, dest: Path, *, progress: Progress | None = None, stop: threading.Event | None = None
) -> PullReport:
    """Copy the server's memory into a new file at ``dest`` (made whole at ``dest.partial`` first, then renamed:
    a pull cut off leaves no file). Raises :class:`RemoteError`, or :class:`OperationCancelled` on ``stop``."""
    partial = dest.with_name(dest.name + ".partial")
    before = (client.traffic.requests, client.traffic.bytes)
    try:
        for attempt in range(ATTEMPTS):
            _remove(partial)
            try:
                with _untrusted(client):
                    report = _pull_once(client, partial, progress, stop)
                break
            except _Moved:
                if attempt == ATTEMPTS - 1:
                    raise RemoteError(
                        f"rows kept being deleted on the server while they were read ({ATTEMPTS} tries); try again"
                    ) from None
        os.replace(partial, dest)
    finally:
        _remove(partial)
    report.requests = client.traffic.requests - before[0]
    report.bytes = client.traffic.bytes - before[1]
    return report


def _pull_once(client: HranaClient, path: Path, progress: Progress | None, stop: threading.Event | None) -> PullReport:
    schema = _read_schema(client)
    tables = schema.tables
    conn = apsw.Connection(str(path))
    guard(conn)
    try:
        conn.execute("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
        conn.execute("BEGIN")
        for table in tables:
            conn.execute(table.sql)
            table.learn(conn)
        *answers, now = client.read([*(q for t in tables for q in (_marks(t), _first(t))), SINCE])
        report = PullReport(skipped=schema.skipped, since=now.rows[0][0])
        marks: dict[str, tuple[int, int]] = {}
        for i, table in enumerate(tables):
            (count, mark), first = answers[2 * i].rows[0], answers[2 * i + 1]
            table.columns = first.columns
            marks[table.name] = (count, mark)
            _insert(conn, table, first.columns, first.rows)
            report.rows[table.name] = len(first.rows)
        total = sum(count for count, _ in marks.values())
        done = report.total
        if progress is not None:
            progress(done, total)
        for table in tables:
            count, mark = marks[table.name]
            first = answers[2 * tables.index(table) + 1].rows
            if not table.rowid or len(first) >= count:
                continue
            report.consistency = "paged"
            for page in _pages(client, table, first[-1][0] if first else 0, mark, stop):
                _insert(conn, table, page.columns, page.rows)
                report.rows[table.name] += len(page.rows)
                done += len(page.rows)
                if progress is not None:
                    progress(done, total)
        paged = [t for t in tables if t.rowid and marks[t.name][0] > PAGE_ROWS]
        if paged:
            counts = [f"SELECT {t.count} FROM {_quote(t.name)} WHERE rowid <= {marks[t.name][1]}" for t in paged]
            counted = client.read(counts)
            if any(c.rows[0][0] != report.rows[t.name] for c, t in zip(counted, paged, strict=True)):
                raise _Moved
        _stopped(stop)
        _finish(conn, schema)
        conn.execute("COMMIT")
        conn.execute("PRAGMA journal_mode = WAL")
    finally:
        conn.close()
    return report


def _pages(client: HranaClient, table: _Table, after: int, mark: int, stop: threading.Event | None) -> Iterator[Rows]:
    """The table's pages after rowid ``after`` up to ``mark``, each asked for as soon as the one before it came
    (on a thread of its own), so the server and the network work while the caller writes the page it has."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="oxmem-pull") as ahead:
        coming = ahead.submit(client.read, [_page(table, after, mark)])
        while True:
            (page,) = coming.result()
            if not page.rows:
                return
            if page.rows[0][0] <= after:  # a server that sends the same rows again would never end
                raise RemoteError(f"{client.url} sent {table.name} rows out of rowid order")
            after = page.rows[-1][0]
            if len(page.rows) == PAGE_ROWS and page.rows[-1][0] < mark:
                coming = ahead.submit(client.read, [_page(table, page.rows[-1][0], mark)])
            else:
                coming = None
            _stopped(stop)
            yield page
            if coming is None:
                return


def _finish(conn: apsw.Connection, schema: _Plan) -> None:
    """The full-text table filled from chunks, then indexes, triggers and views (those whose tables are here)."""
    columns = {r[1] for r in conn.execute("PRAGMA table_info(chunks)")}  # the store's chunks, not any of that name
    if schema.fts and {"chunk_id", "session_id", "chunk_text"} <= columns:
        conn.execute(schema.fts[0])
        conn.execute(
            f"INSERT INTO {FTS_TABLE} (rowid, chunk_id, session_id, chunk_text) "
            "SELECT rowid, chunk_id, session_id, chunk_text FROM chunks"
        )
    for sql in [*schema.after, *(schema.fts[1:] if FTS_TABLE in _names(conn) else [])]:
        try:
            conn.execute(sql)
        except apsw.SQLError:  # refers to something not copied (a libSQL function, a skipped table)
            continue


@contextmanager
def _untrusted(client: HranaClient) -> Iterator[None]:
    """What a server's answers break (a row of the wrong shape, a value of a type the copy's table refuses) is
    said in one line as the server's, never a traceback."""
    try:
        yield
    except OxmemError:
        raise
    except (ValueError, TypeError, IndexError, KeyError, AttributeError, OverflowError, apsw.SQLError,
            apsw.ConstraintError, apsw.BindingsError, apsw.MismatchError) as exc:  # fmt: skip
        raise RemoteError(f"{client.url} sent rows oxmem cannot use ({type(exc).__name__}: {exc})") from None


def _names(conn: apsw.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}


def refresh(
    client: HranaClient,
    path: Path,
    *,
    since: str | None = None,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> PullReport:
    """Bring the copy at ``path`` up to date, transferring only what changed (see the module's docstring), in one
    local transaction. A server whose tables changed since the pull raises :class:`RemoteError` (open it again).

    One request asks, in one transaction, for the schema, each table's count and mark, its first page of new
    rows, its changed rows (``updated_at`` at or after ``since``, the time the last pull or refresh reported; the
    copy's latest ``updated_at`` when not given) or, for a small table without it, all of it; only a table with
    more new rows than a page, or with rows deleted, needs more requests."""
    with _untrusted(client):  # what the server's answers break is one line
        before = (client.traffic.requests, client.traffic.bytes)
        conn = apsw.Connection(str(path))
        guard(conn)
        try:
            conn.set_busy_timeout(30_000)
            # a row replaced by its key fires the delete triggers too, so chunks_fts loses the old text
            conn.execute("PRAGMA recursive_triggers = ON")
            local = plan(conn.execute(SCHEMA).fetchall())
            asks = [_Ask.of(conn, t, since) for t in local.tables]
            changed = f"the tables of {client.url} changed since the snapshot was taken: open it again"
            try:
                *answers, now = client.read([SCHEMA, *(q for ask in asks for q in ask.questions()), SINCE])
            except RemoteError as exc:
                if "no such" in str(exc):  # a table or column the copy has is gone
                    raise RemoteError(changed) from None
                raise
            if plan(answers[0].rows).signature != local.signature:
                raise RemoteError(changed)
            report = PullReport(since=now.rows[0][0])
            conn.execute("BEGIN IMMEDIATE")
            at = 1
            for done, ask in enumerate(asks, 1):
                _stopped(stop, REFRESH_STOPPED)
                count = len(ask.questions())
                report.rows[ask.table.name] = ask.apply(client, conn, answers[at : at + count], stop)
                at += count
                if progress is not None:
                    progress(done, len(asks))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            conn.close()
        report.requests = client.traffic.requests - before[0]
        report.bytes = client.traffic.bytes - before[1]
        return report


@dataclass
class _Ask:
    """What a refresh asks the server about one table, from what the copy holds."""

    table: _Table
    have: int  # rows in the copy
    last: int  # the copy's highest rowid
    since: str | None  # rows changed at or after this are read again; None when the table has no updated_at
    whole: bool  # read all of it (no rowid, or small and without updated_at)

    @classmethod
    def of(cls, conn: apsw.Connection, table: _Table, since: str | None) -> _Ask:
        name = _quote(table.name)
        if not table.rowid:
            return cls(table, 0, 0, None, True)
        table.learn(conn)
        have, last = conn.execute(f"SELECT {table.count}, coalesce(max(rowid), 0) FROM {name}").fetchall()[0]
        if not _has_column(conn, table.name, "updated_at"):
            return cls(table, have, last, None, have <= SMALL_TABLE and table.name not in APPEND_ONLY)
        if since is None:
            since = conn.execute(f"SELECT coalesce(max(updated_at), '') FROM {name}").fetchall()[0][0]
        return cls(table, have, last, since, False)

    def questions(self) -> list[str | tuple[str, tuple[Any, ...]]]:
        name = _quote(self.table.name)
        if self.whole:
            return [f"SELECT rowid, * FROM {name}" if self.table.rowid else f"SELECT * FROM {name}"]
        asked: list[str | tuple[str, tuple[Any, ...]]] = [_marks(self.table), _page(self.table, self.last, None)]
        if self.since is not None:
            asked.append((f"SELECT rowid, * FROM {name} WHERE rowid <= ? AND updated_at >= ?", (self.last, self.since)))
        return asked

    def apply(
        self, client: HranaClient, conn: apsw.Connection, answers: list[Rows], stop: threading.Event | None
    ) -> int:
        """Write the answers into the copy, paging on for more new rows and asking for the rowids left when rows
        were deleted; the rows received for this table."""
        name = _quote(self.table.name)
        if self.whole:
            conn.execute(f"DELETE FROM {name}")
            _insert(conn, self.table, answers[0].columns, answers[0].rows)
            return len(answers[0].rows)
        (count, top), page, *changed = answers[0].rows[0], answers[1], *answers[2:]
        received, after = 0, self.last
        for rows in changed:
            _insert(conn, self.table, rows.columns, rows.rows)
            received += len(rows.rows)
        while True:
            if page.rows and page.rows[0][0] <= after:  # a server that sends the same rows again would never end
                raise RemoteError(f"{client.url} sent {self.table.name} rows out of rowid order")
            after = page.rows[-1][0] if page.rows else after
            rows = [r for r in page.rows if r[0] <= top]  # those added after the marks were read wait
            _insert(conn, self.table, page.columns, rows)
            received += len(rows)
            if len(page.rows) < PAGE_ROWS or not rows or rows[-1][0] >= top:
                break
            _stopped(stop, REFRESH_STOPPED)
            (page,) = client.read([_page(self.table, rows[-1][0], top)])
        # every row of the copy is at or below the server's mark now: count them all (through an index)
        if conn.execute(f"SELECT {self.table.count} FROM {name}").fetchall()[0][0] != count:
            (kept,) = client.read([f"SELECT rowid FROM {name} WHERE rowid <= {top}"])  # rows were deleted there
            received += len(kept.rows)
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS kept_rowids (id INTEGER PRIMARY KEY)")
            conn.execute("DELETE FROM temp.kept_rowids")
            conn.executemany("INSERT INTO temp.kept_rowids VALUES (?)", kept.rows)
            conn.execute(f"DELETE FROM {name} WHERE rowid NOT IN temp.kept_rowids")  # above the mark too: gone
        return received


def _has_column(conn: apsw.Connection, table: str, column: str) -> bool:
    return any(r[1] == column for r in conn.execute(f"PRAGMA table_info({_quote(table)})"))


def _remove(path: Path) -> None:
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        p.unlink(missing_ok=True)


def remove_copy(path: Path) -> None:
    """Delete a copy with its WAL and shared-memory files."""
    _remove(path)


__all__ = ["PAGE_ROWS", "PullReport", "plan", "pull", "refresh", "remove_copy", "statements"]
