"""The store's schema versions: ``migrations/NNNN_description.sql`` applied in order (contract §3).

Only this project's own stores are migrated. Another agent's file with the same tables (Oxydra's, which records
its *own* versions in a ``memory_migrations`` table of the same name) keeps the schema its agent gave it: no
script and no row of this project is ever written there (:func:`plan_migrations`).

Nothing is written before a write is known to be allowed and valid: a new (empty) file is created as a store
when opened read-write with ``create``; an existing store's pending versions are applied inside the first write
transaction of the connection (:func:`oxmem_gui.core.database.defer_to_first_write`), so a refused or failed
write rolls them back with itself. A version's scripts, its row in ``memory_migrations`` and that first write
commit together. Reads never need a pending version: a migration that adds a table must leave the code able to
read a file without it until then. Versions recorded in the file that this program does not know (a newer agent
wrote them) are tolerated and reported, never undone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import apsw

from ..database import damaged_message, tune_connection, write_transaction
from ..errors import DamagedError, StoreOpenError

TRACKING_TABLE_SQL = """
CREATE TABLE IF NOT EXISTS memory_migrations (
    version TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
)"""

#: Tables the core reads; a file without them is not a memory store.
REQUIRED_TABLES = ("sessions", "conversation_events", "session_state", "chunks", "chunks_vec", "chunks_fts")


@dataclass
class MigrationReport:
    """What opening a store found and did to its schema."""

    applied: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    created: bool = False


def migrations_dir() -> Path:
    """The folder of ``.sql`` files: inside the installed package, else the checkout's top-level folder."""
    packaged = Path(__file__).resolve().parents[2] / "migrations"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[3] / "migrations"
    if checkout.is_dir():
        return checkout
    raise StoreOpenError("the store's migrations are missing from this installation")


@cache
def available_migrations() -> tuple[tuple[str, str], ...]:
    """``(version, sql)`` pairs in application order."""
    files = sorted(migrations_dir().glob("[0-9][0-9][0-9][0-9]_*.sql"))
    return tuple((f.stem, f.read_text(encoding="utf-8")) for f in files)


def table_names(conn: apsw.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}


def recorded_versions(conn: apsw.Connection) -> list[str]:
    if "memory_migrations" not in table_names(conn):
        return []
    return [r[0] for r in conn.execute("SELECT version FROM memory_migrations ORDER BY version")]


def inspect_schema(conn: apsw.Connection) -> MigrationReport:
    """Report pending and unknown versions without writing anything (for read-only opens)."""
    known = [v for v, _ in available_migrations()]
    recorded = recorded_versions(conn)
    return MigrationReport(
        pending=[v for v in known if v not in recorded],
        unknown=[v for v in recorded if v not in known],
    )


@cache
def schema_objects(version: str) -> frozenset[tuple[str, str]]:
    """``(type, name)`` of the tables, indexes and triggers that migration ``version`` creates, found by applying
    the migrations up to it to an empty in-memory database."""
    conn = apsw.Connection(":memory:")
    before: set[tuple[str, str]] = set()
    for known, sql in available_migrations():
        before = set(_objects(conn))
        conn.execute(sql)
        if known == version:
            break
    made = frozenset(set(_objects(conn)) - before)
    conn.close()
    return made


def _objects(conn: apsw.Connection) -> list[tuple[str, str]]:
    return conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'index', 'trigger') AND name NOT LIKE 'sqlite_%'"
    ).fetchall()


def missing_schema(conn: apsw.Connection) -> str | None:
    """What is missing of the migrations the file records as applied (``"table x and 1 more of migration v is
    missing although it is recorded"``), or None when every table, index and trigger they made is there."""
    present = set(_objects(conn))
    known = {v for v, _ in available_migrations()}
    for version in recorded_versions(conn):
        if version not in known:
            continue
        missing = sorted(schema_objects(version) - present, key=lambda o: (o[0] != "table", o))
        if missing:
            kind, name = missing[0]
            more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
            return f"{kind} {name}{more} of migration {version} is missing although it is recorded"
    return None


def check_recorded_schema(conn: apsw.Connection, path: object) -> None:
    """A missing table, index or trigger of a recorded migration is damage (someone dropped it), reported as
    :class:`DamagedError` rather than "up to date"."""
    missing = missing_schema(conn)
    if missing:
        raise DamagedError(damaged_message(path, missing))


def plan_migrations(conn: apsw.Connection, path: object, create: bool, own: bool) -> MigrationReport:
    """What opening ``conn`` read-write will do to its schema, found without writing anything.

    An empty file becomes a new store (``created``; only with ``create``, otherwise :class:`StoreOpenError`).
    A file that is not a memory store is :class:`StoreOpenError`. ``own``: the file is this project's store, so
    its missing versions are ``pending``; another agent's file (Oxydra's, with its own versions in
    ``memory_migrations``) keeps the schema the agent gave it — nothing is pending there, ever.
    """
    if not table_names(conn):
        if not create:
            raise StoreOpenError(f"{path} is empty, not a memory store (`oxmem init` makes it one)")
        return MigrationReport(pending=[v for v, _ in available_migrations()], created=True)
    check_required_tables(conn, path)
    report = inspect_schema(conn)
    if not own:
        report.pending = []
    return report


def apply_pending(conn: apsw.Connection, report: MigrationReport, path: object = "the file") -> None:
    """Apply ``report.pending`` inside the caller's write transaction: the tracking table, then each script with
    its row. A failure raises, and the caller's rollback takes every one of them back with its own write."""
    conn.execute(TRACKING_TABLE_SQL)
    scripts = dict(available_migrations())
    for version in report.pending:
        conn.execute(scripts[version])
        conn.execute("INSERT INTO memory_migrations (version) VALUES (?)", (version,))
    check_recorded_schema(conn, path)
    report.applied += report.pending
    report.pending = []


def create_store(conn: apsw.Connection, report: MigrationReport, path: object = "the file") -> None:
    """Make an empty file a WAL store with every migration, in one transaction (nothing there to protect)."""
    conn.execute("PRAGMA journal_mode = WAL")
    tune_connection(conn)
    with write_transaction(conn):
        apply_pending(conn, report, path)


def check_required_tables(conn: apsw.Connection, path: object) -> None:
    """The tables the core reads must exist; a store that records its migrations must also have all they made."""
    tables = table_names(conn)
    if "memory_migrations" in tables:
        check_recorded_schema(conn, path)
    missing = [t for t in REQUIRED_TABLES if t not in tables]
    if missing:
        raise StoreOpenError(f"{path} is not a memory store (missing tables: {', '.join(missing)})")


def discard_new_store(path: Path, before: os.stat_result | None) -> bool:
    """Undo :func:`create_store` after the command that made it failed: a store that still holds no session and no
    schedule is removed with its ``-wal``/``-shm``/``-journal`` files — or, when an empty file was there
    ``before``, cut back to zero bytes with its times as they were. Returns True when it did so."""
    try:
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            rows = conn.execute(
                "SELECT (SELECT count(*) FROM sessions) + (SELECT count(*) FROM schedules) "
                "+ (SELECT count(*) FROM schedule_runs)"
            ).fetchall()[0][0]
        finally:
            conn.close()
    except apsw.Error:
        return False
    if rows:
        return False
    for suffix in ("-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    if before is not None:
        path.write_bytes(b"")
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    else:
        path.unlink(missing_ok=True)
    return True
