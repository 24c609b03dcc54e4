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

**Refresh** trusts no clock and no format: no ``updated_at`` is read as a time. What changed is found from what the
server and the copy can both compute, and only that is transferred. The first request asks, in one transaction:

- a table of at most :data:`SMALL_TABLE` rows (sessions, summaries, schedules, runs, migrations): all its rows,
  compared with the copy's byte for byte;
- a larger one (events, chunks, vectors): per bucket of 256 rowids, its row count, the sum of its rowids and the
  sum of a signature of each row — every cell's type and size, an integer's value, a real's to 2⁻²⁰, a time's
  instant in whatever format it is written (:func:`summary_sql`; the copy runs the same query on its rows) —, its
  rows past the copy's highest rowid, and a window of about :data:`CHECK_BYTES` of its rows, compared byte for
  byte, that moves on at each refresh.

A bucket whose summary differs (rows added, deleted, re-inserted under a reused rowid, a cell of another size or
type, a number or a time changed) is read again whole in later requests, :data:`PAGE_ROWS` rows each. What a
summary cannot see is a text that is not a time, or a blob, rewritten in place with its size kept (a letter for
another, a vector re-embedded) in a row whose other cells did not change: the window finds it within
``rows / window`` refreshes, and each report says how many rows were compared by summary only
(:attr:`PullReport.unchecked`). The server has no hash function to make that exact at this cost (neither
``tursodb`` nor libSQL ship one, and hashing in SQL a character at a time costs ~2 µs a character there). The copy
is written in one local transaction, only the rows that differ: a refresh cut off midway leaves it as it was.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
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
#: tables of at most this many rows are read whole at each refresh, every byte compared
SMALL_TABLE = 1_000
#: a larger table is summarized per bucket of 2**BUCKET_BITS rowids (256)
BUCKET_BITS = 8
#: and, at each refresh, about this many bytes of its rows (at least CHECK_MIN_ROWS rows) are compared byte for
#: byte, the window moving on from one refresh to the next
CHECK_BYTES = 1 << 20
CHECK_MIN_ROWS = 100
MIN_ROWID, MAX_ROWID = -(2**63), 2**63 - 1
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
    #: table → rows of the copy added, replaced or deleted (a refresh)
    changed: dict[str, int] = field(default_factory=dict)
    #: table → where the next refresh's byte-for-byte check window starts (after this rowid)
    cursor: dict[str, int] = field(default_factory=dict)
    #: table → rows of a larger table this refresh compared by summary only, not byte for byte
    unchecked: dict[str, int] = field(default_factory=dict)
    #: table → the copy's bucket summaries of a larger table (:func:`summary_sql`), kept by the refresh that
    #: writes the copy (its only writer), so a refresh computes only those of the buckets it wrote
    summaries: dict[str, dict[int, tuple[int, int, int]]] = field(default_factory=dict)

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
        answers = client.read([q for t in tables for q in (_marks(t), _first(t))])
        report = PullReport(skipped=schema.skipped)
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
        for table in tables:  # what the first refresh compares the server's summaries with
            if table.rowid and marks[table.name][0] > SMALL_TABLE:
                report.summaries[table.name] = summaries(conn, table.name, _columns(conn, table.name))
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
        said = client.hide(f"{type(exc).__name__}: {exc}")  # a server may echo the token into a value
        raise RemoteError(f"{client.url} sent rows oxmem cannot use ({said})") from None


def _names(conn: apsw.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}


def refresh(
    client: HranaClient,
    path: Path,
    *,
    previous: PullReport | None = None,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> PullReport:
    """Bring the copy at ``path`` up to date without trusting any clock or format (see the module's docstring),
    in one local transaction. A server whose tables changed since the pull raises :class:`RemoteError` (open it
    again). ``previous`` is the last pull's or refresh's report: where each larger table's byte-for-byte check goes
    on, and the copy's summaries.

    The first request asks, in one transaction, for the schema and, per table, either all of it (a small table)
    or its bucket summaries, its rows past the copy's highest rowid and its next check window. The buckets whose
    summaries differ from the copy's are read again in later requests, only when there are any."""
    with _untrusted(client):  # what the server's answers break is one line
        before = (client.traffic.requests, client.traffic.bytes)
        conn = apsw.Connection(str(path))
        guard(conn)
        try:
            conn.set_busy_timeout(30_000)
            # a row replaced by its key fires the delete triggers too, so chunks_fts loses the old text
            conn.execute("PRAGMA recursive_triggers = ON")
            local = plan(conn.execute(SCHEMA).fetchall())
            asks = [_Ask.of(conn, t, previous or PullReport()) for t in local.tables]
            changed = f"the tables of {client.url} changed since the snapshot was taken: open it again"
            try:
                theirs, *answers = client.read([SCHEMA, *(q for ask in asks for q in ask.questions())])
            except RemoteError as exc:
                if "no such" in str(exc):  # a table or column the copy has is gone
                    raise RemoteError(changed) from None
                raise
            if plan(theirs.rows).signature != local.signature:
                raise RemoteError(changed)
            report = PullReport()
            conn.execute("BEGIN IMMEDIATE")
            at = 0
            for done, ask in enumerate(asks, 1):
                _stopped(stop, REFRESH_STOPPED)
                count = len(ask.questions())
                ask.apply(client, conn, answers[at : at + count], report, stop)
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
        if report.requests > 1:
            report.consistency = "paged"
        return report


def summary_sql(table: str, columns: list[str], where: str = "") -> str:
    """Per bucket of 2**:data:`BUCKET_BITS` rowids: its rows, the sum of their rowids, the sum of a signature of each
    row, and its highest rowid. The signature weighs every cell's type and size, an integer's value, a real's to
    2⁻²⁰, and a text's instant to the millisecond when it reads as a time (``julianday``, whatever its format) —
    what SQLite, libSQL and the ``tursodb`` engine compute alike, so the copy runs the same query and compares."""
    cells = " + ".join(f"{i + 1} * {_cell(_quote(c))}" for i, c in enumerate(columns)) or "0"
    return (
        f"SELECT rowid >> {BUCKET_BITS}, count(*), sum(rowid % 1000003), sum({cells}), max(rowid) "
        f"FROM {_quote(table)} {where} GROUP BY 1 ORDER BY 1"
    )


def summaries(conn: apsw.Connection, table: str, columns: list[str], buckets: Iterable[int] | None = None) -> dict:
    """The copy's bucket summaries of ``table``: all of them, or those of ``buckets`` (absent when empty)."""
    if buckets is None:
        return {r[0]: tuple(r[1:4]) for r in conn.execute(summary_sql(table, columns))}
    sql = summary_sql(table, columns, "WHERE rowid BETWEEN ? AND ?")
    return {r[0]: tuple(r[1:4]) for b in buckets for r in conn.execute(sql, _bucket(b))}


def _cell(c: str) -> str:
    return (
        f"(CASE typeof({c}) WHEN 'null' THEN 1 WHEN 'integer' THEN 2 + 8 * ({c} % 1000003) "
        f"WHEN 'real' THEN 3 + 8 * (CAST({c} * 1048576 AS INTEGER) % 1000003) "
        f"WHEN 'text' THEN 4 + 8 * octet_length({c}) "
        f"+ 16 * coalesce(CAST(julianday({c}) * 86400000 AS INTEGER) % 1000003, 0) "
        f"ELSE 5 + 8 * length({c}) END)"
    )


def _rows_between(table: _Table, low: int, high: int, limit: int | None = None) -> tuple[str, tuple[int, int]]:
    """The rows with a rowid from ``low`` to ``high``, in rowid order (the first ``limit`` of them)."""
    cap = "" if limit is None else f" LIMIT {int(limit)}"
    return f"SELECT rowid, * FROM {_quote(table.name)} WHERE rowid BETWEEN ? AND ? ORDER BY rowid{cap}", (low, high)


@dataclass
class _Ask:
    """What a refresh asks the server about one table, from what the copy holds."""

    table: _Table
    columns: list[str]
    last: int  # the copy's highest rowid
    whole: bool  # read all of it (no rowid, or small)
    cursor: int  # a larger table's check window starts after this rowid
    window: int  # and holds this many rows
    mine: dict[int, tuple[int, int, int]] | None  # the copy's summaries, when the last refresh kept them

    @classmethod
    def of(cls, conn: apsw.Connection, table: _Table, previous: PullReport) -> _Ask:
        name = _quote(table.name)
        columns = _columns(conn, table.name)
        if not table.rowid:
            return cls(table, columns, 0, True, 0, 0, None)
        have, last = conn.execute(f"SELECT count(*), coalesce(max(rowid), 0) FROM {name}").fetchall()[0]
        # the window's rows from the size of the latest ones (a sum over the whole table would read all of it)
        (size,) = conn.execute(
            f"SELECT coalesce(avg({_size(columns)}), 1) FROM (SELECT * FROM {name} ORDER BY rowid DESC LIMIT 100)"
        ).fetchall()[0]
        window = max(CHECK_MIN_ROWS, int(CHECK_BYTES // max(1.0, size)))
        cursor, mine = previous.cursor.get(table.name, 0), previous.summaries.get(table.name)
        return cls(table, columns, last, have <= SMALL_TABLE, cursor, window, mine)

    def questions(self) -> list[str | tuple[str, tuple[Any, ...]]]:
        name = _quote(self.table.name)
        if not self.table.rowid:
            return [f"SELECT * FROM {name}"]
        new = [f"SELECT coalesce(max(rowid), {MIN_ROWID}) FROM {name}", _page(self.table, self.last, None)]
        if self.whole:  # one row more than a small table holds says rows were added among its rows
            return [_rows_between(self.table, MIN_ROWID, self.last, SMALL_TABLE + 1), *new]
        window = _rows_between(self.table, self.cursor + 1, self.last, self.window)  # new rows come in the page
        return [summary_sql(self.table.name, self.columns), window, *new]

    def apply(
        self,
        client: HranaClient,
        conn: apsw.Connection,
        answers: list[Rows],
        report: PullReport,
        stop: threading.Event | None,
    ) -> None:
        """Make the copy's table equal to the server's as the answers show it, asking for more where they say a
        bucket differs; counts in ``report`` the rows received and the rows changed."""
        name, table = self.table.name, self.table
        if not table.rowid:
            report.rows[name] = len(answers[0].rows)
            report.changed[name] = _sync_keyless(conn, table, answers[0])
            return
        ask, received = self, 0
        if self.whole and len(answers[0].rows) > SMALL_TABLE:  # read again as a larger table, in a request of its own
            ask, received = replace(self, whole=False), len(answers[0].rows)
            answers = client.read(ask.questions())
        *first, marks, page = answers
        report.rows[name] = received + len(first[-1].rows) + len(page.rows)  # the old rows or the window; new rows
        touched: set[int] = set()  # the buckets written
        changed = ask._new_rows(client, conn, page, marks.rows[0][0], report, stop, touched)
        if ask.whole:
            report.changed[name] = changed + _sync(conn, table, first[0], MIN_ROWID, ask.last)
            return
        summaries, window = first
        # the check window: every byte of its rows compared, then on from where it ended (from the start once it
        # reached the copy's highest rowid)
        full = len(window.rows) == ask.window
        high = window.rows[-1][0] if full else ask.last
        changed += _sync(conn, table, window, ask.cursor + 1, high, touched)
        report.cursor[name] = high if full else 0
        report.unchecked[name] = max(0, sum(r[1] for r in summaries.rows) - len(window.rows))
        # every bucket whose summary differs from the copy's is read again (one that is gone, deleted)
        theirs = {r[0]: tuple(r[1:4]) for r in summaries.rows}
        mine = _recount(conn, ask, ask.mine, touched)
        differ = sorted(b for b in theirs.keys() | mine.keys() if theirs.get(b) != mine.get(b))
        touched = set(differ)
        for b in (b for b in differ if b not in theirs):
            conn.execute(f"DELETE FROM {_quote(name)} WHERE rowid BETWEEN ? AND ?", _bucket(b))
            changed += conn.changes()
        wanted = [b for b in differ if b in theirs]
        per = max(1, PAGE_ROWS >> BUCKET_BITS)
        for i in range(0, len(wanted), per):
            _stopped(stop, REFRESH_STOPPED)
            part = wanted[i : i + per]
            for b, rows in zip(part, client.read([_rows_between(table, *_bucket(b)) for b in part]), strict=True):
                report.rows[name] += len(rows.rows)
                changed += _sync(conn, table, rows, *_bucket(b))
        report.changed[name] = changed
        report.summaries[name] = _recount(conn, ask, mine, touched)

    def _new_rows(
        self,
        client: HranaClient,
        conn: apsw.Connection,
        page: Rows,
        top: int,
        report: PullReport,
        stop: threading.Event | None,
        touched: set[int],
    ) -> int:
        """The rows past the copy's highest rowid, from ``page`` on, up to ``top`` (the server's highest rowid when
        the first request was read: rows added later wait for the next refresh); the rows changed."""
        name, changed, after = self.table.name, 0, self.last
        while after < top:
            if page.rows and page.rows[0][0] <= after:  # a server that sends the same rows again would never end
                raise RemoteError(f"{client.url} sent {name} rows out of rowid order")
            end = page.rows[-1][0] if len(page.rows) == PAGE_ROWS and page.rows[-1][0] < top else top
            changed += _sync(conn, self.table, page, after + 1, end, touched)
            after = end
            if after < top:
                _stopped(stop, REFRESH_STOPPED)
                (page,) = client.read([_rows_between(self.table, after + 1, top, PAGE_ROWS)])
                report.rows[name] += len(page.rows)
        return changed


def _bucket(b: int) -> tuple[int, int]:
    """The first and last rowid of bucket ``b``."""
    return max(MIN_ROWID, b << BUCKET_BITS), min(MAX_ROWID, ((b + 1) << BUCKET_BITS) - 1)


def _size(columns: list[str]) -> str:
    return " + ".join(f"coalesce(octet_length({_quote(c)}), 0)" for c in columns) or "0"


def _recount(
    conn: apsw.Connection, ask: _Ask, mine: dict[int, tuple[int, int, int]] | None, buckets: set[int]
) -> dict[int, tuple[int, int, int]]:
    """The copy's summaries of ``ask``'s table: ``mine`` with those of ``buckets`` computed again, or all of them
    computed when there is no ``mine``."""
    if mine is None:
        return summaries(conn, ask.table.name, ask.columns)
    out = {b: s for b, s in mine.items() if b not in buckets}
    out.update(summaries(conn, ask.table.name, ask.columns, buckets))
    return out


def _columns(conn: apsw.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({_quote(table)})")]


def _sync(
    conn: apsw.Connection, table: _Table, theirs: Rows, low: int, high: int, touched: set[int] | None = None
) -> int:
    """Make the copy's rows with a rowid from ``low`` to ``high`` those of ``theirs`` (rowid first) in that range,
    writing only the rows that differ; how many rows were added, replaced or deleted (their buckets are added to
    ``touched``)."""
    name = _quote(table.name)
    mine = {r[0]: r for r in conn.execute(f"SELECT rowid, * FROM {name} WHERE rowid BETWEEN ? AND ?", (low, high))}
    server = {r[0]: r for r in theirs.rows if low <= r[0] <= high}
    gone = [(rowid,) for rowid in mine.keys() - server.keys()]
    new = [r for rowid, r in server.items() if mine.get(rowid) != r]
    conn.executemany(f"DELETE FROM {name} WHERE rowid = ?", gone)
    _insert(conn, table, theirs.columns, new)
    if touched is not None:
        touched.update(r[0] >> BUCKET_BITS for r in gone)
        touched.update(r[0] >> BUCKET_BITS for r in new)
    return len(gone) + len(new)


def _sync_keyless(conn: apsw.Connection, table: _Table, theirs: Rows) -> int:
    """A table without rowid made equal to ``theirs``: written again only when its rows differ."""
    name = _quote(table.name)
    mine = conn.execute(f"SELECT * FROM {name}").fetchall()
    if sorted(map(repr, mine)) == sorted(map(repr, theirs.rows)):
        return 0
    conn.execute(f"DELETE FROM {name}")
    _insert(conn, table, theirs.columns, theirs.rows)
    return len(set(mine) ^ set(theirs.rows))


def _remove(path: Path) -> None:
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        p.unlink(missing_ok=True)


def remove_copy(path: Path) -> None:
    """Delete a copy with its WAL and shared-memory files."""
    _remove(path)


__all__ = ["PAGE_ROWS", "PullReport", "plan", "pull", "refresh", "remove_copy", "statements"]
