"""Text that is not valid UTF-8: found, and shown with replacement characters instead of failing.

Any SQLite client can store bytes that are not UTF-8 in a ``TEXT`` cell; APSW then raises ``UnicodeDecodeError``
when the cell is read. oxmem never trusts a format it did not write, so a read that meets such a cell is run
again on a *repaired snapshot*: a copy of the file in memory (SQLite's backup API) in which each such cell holds
its text decoded with U+FFFD for every invalid byte. The file itself is never changed; a write never runs on the
copy. :func:`invalid_text` lists the cells, for ``oxmem check``.

Cells are found with two SQL functions registered on the connection: ``oxmem_utf8_ok(blob)`` and
``oxmem_utf8_fix(blob)`` — each cell is read as a BLOB (``CAST(col AS BLOB)``), which APSW never decodes.
"""

from __future__ import annotations

from dataclasses import dataclass

import apsw


@dataclass(frozen=True)
class BadText:
    """A TEXT cell that is not valid UTF-8."""

    table: str
    rowid: int | None  # None in a table without rowid
    column: str


def _ok(data: bytes | None) -> bool:
    try:
        (data or b"").decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _fix(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", "replace")


def register(conn: apsw.Connection) -> None:
    """The two functions this module's SQL calls, on ``conn``."""
    conn.create_scalar_function("oxmem_utf8_ok", _ok, 1, deterministic=True)
    conn.create_scalar_function("oxmem_utf8_fix", _fix, 1, deterministic=True)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _tables(conn: apsw.Connection) -> list[tuple[str, bool, list[str]]]:
    """Ordinary tables (virtual tables' shadow tables included): name, whether they have a rowid, columns."""
    out = []
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    for name, sql in rows.fetchall():
        if (sql or "").upper().startswith("CREATE VIRTUAL"):
            continue
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({_quote(name)})")]
        out.append((name, "WITHOUT ROWID" not in (sql or "").upper(), columns))
    return out


def _bad(column: str) -> str:
    c = _quote(column)
    return f"typeof({c}) = 'text' AND NOT oxmem_utf8_ok(CAST({c} AS BLOB))"


def invalid_text(conn: apsw.Connection, limit: int = 1000) -> tuple[list[BadText], int]:
    """The first ``limit`` TEXT cells of ``conn``'s tables that are not valid UTF-8, and how many there are."""
    register(conn)
    found: list[BadText] = []
    total = 0
    for table, rowid, columns in _tables(conn):
        for column in columns:
            key = "rowid" if rowid else "NULL"
            rows = conn.execute(f"SELECT {key} FROM {_quote(table)} WHERE {_bad(column)}").fetchall()
            total += len(rows)
            found.extend(BadText(table, r[0], column) for r in rows[: max(0, limit - len(found))])
    return found, total


def repaired_copy(conn: apsw.Connection) -> tuple[apsw.Connection, int]:
    """A copy of ``conn``'s database in memory with every TEXT cell that is not valid UTF-8 decoded with U+FFFD,
    and how many cells that was. Its triggers are dropped first (the copy is only read)."""
    copy = apsw.Connection(":memory:")
    try:
        with copy.backup("main", conn, "main") as backup:
            backup.step(-1)
        register(copy)
        for (name,) in copy.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            copy.execute(f"DROP TRIGGER {_quote(name)}")
        fixed = 0
        with copy:
            for table, _, columns in _tables(copy):
                for column in columns:
                    c = _quote(column)
                    copy.execute(
                        f"UPDATE {_quote(table)} SET {c} = oxmem_utf8_fix(CAST({c} AS BLOB)) WHERE {_bad(column)}"
                    )
                    fixed += copy.changes()
        return copy, fixed
    except BaseException:
        copy.close()
        raise
