"""The store's schema versions: ``migrations/NNNN_description.sql`` applied in order (SPEC §3).

Each file runs inside ``BEGIN IMMEDIATE … COMMIT`` together with its row in ``memory_migrations``.
Versions recorded in the file that this program does not know (a newer agent wrote them) are tolerated and
reported, never undone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import apsw

from .database import damaged_message, tune_connection, write_transaction
from .errors import DamagedError, StoreOpenError

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
    packaged = Path(__file__).resolve().parent.parent / "migrations"
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "migrations"
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


def migrate(conn: apsw.Connection, path: object = "the file", create: bool = True) -> MigrationReport:
    """Apply every pending migration, one transaction each. A new (empty) file becomes a WAL store — only with
    ``create``; otherwise an empty file is :class:`StoreOpenError` and stays as it is.

    A non-empty file without ``memory_migrations`` is another program's database: nothing is added to it;
    it opens as is when it has the memory tables, else :class:`StoreOpenError`.
    """
    tables = table_names(conn)
    created = not tables
    if created and not create:
        raise StoreOpenError(f"{path} is empty, not a memory store (`oxmem init` makes it one)")
    if tables and "memory_migrations" not in tables:
        check_required_tables(conn, path)
        return inspect_schema(conn)
    if created:
        conn.execute("PRAGMA journal_mode = WAL")
        tune_connection(conn)
    with write_transaction(conn):
        conn.execute(TRACKING_TABLE_SQL)
    report = inspect_schema(conn)
    report.created = created
    scripts = dict(available_migrations())
    for version in report.pending:
        with write_transaction(conn):
            conn.execute(scripts[version])
            conn.execute("INSERT INTO memory_migrations (version) VALUES (?)", (version,))
        report.applied.append(version)
    report.pending = []
    check_recorded_schema(conn, path)
    return report


def check_required_tables(conn: apsw.Connection, path: object) -> None:
    """The tables the core reads must exist; a store that records its migrations must also have all they made."""
    tables = table_names(conn)
    if "memory_migrations" in tables:
        check_recorded_schema(conn, path)
    missing = [t for t in REQUIRED_TABLES if t not in tables]
    if missing:
        raise StoreOpenError(f"{path} is not a memory store (missing tables: {', '.join(missing)})")
