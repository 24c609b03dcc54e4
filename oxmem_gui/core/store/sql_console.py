"""Read-only SQL on a memory file, enforced by SQLite itself.

A statement runs on the file's own connection (so it works on every format oxmem opens, an encrypted file's
decrypted snapshot included), with an authorizer installed for that statement only: SQLite asks it about every
action the statement would take while compiling it, and anything but reading is denied before a single step runs —
writes and schema changes (also inside a CTE or a trigger), ``ATTACH`` (which ``VACUUM INTO`` needs too),
``load_extension`` and other functions that reach outside the file, and every ``PRAGMA`` except those that only
read. The connection the CLI and the inspector give it is read-only as well, so there are two locks, not one.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import apsw

from ..errors import InvalidInputError

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


def run_sql(conn: apsw.Connection, sql: str, limit: int = DEFAULT_LIMIT, skip: int = 0) -> SqlResult:
    """The result of ``sql`` (one statement, or several: the last one's result) — at most ``limit`` rows, after
    the first ``skip`` (the next page of a result shown a page at a time: the statement runs again, in the snapshot
    of the call).

    Raises :class:`InvalidInputError` with one line for SQL that SQLite rejects, and for anything but reading:
    "refused: INSERT into messages — the SQL console only reads; nothing was changed"."""
    if not isinstance(sql, str) or not sql.strip():
        raise InvalidInputError("no SQL given")
    refusals: list[str] = []
    previous = conn.authorizer
    conn.authorizer = _authorizer(refusals)
    try:
        cursor = conn.cursor()
        try:
            cursor.execute(sql)
            try:
                columns = [d[0] for d in cursor.get_description()]
            except apsw.ExecutionCompleteError:
                columns = []
            rows = []
            for row in itertools.islice(cursor, skip, None):
                if len(rows) == limit:
                    return SqlResult(columns, rows, True)
                rows.append(row)
            return SqlResult(columns, rows)
        finally:
            cursor.close(force=True)
    except apsw.Error as exc:
        if refusals:  # a denied function is an SQLError, a denied action an AuthError
            raise InvalidInputError(
                f"refused: {refusals[0]} — the SQL console only reads; nothing was changed"
            ) from exc
        if isinstance(exc, apsw.ReadOnlyError):
            raise InvalidInputError("refused: the statement would write — the SQL console only reads") from exc
        raise InvalidInputError(f"SQL error: {str(exc).removeprefix('SQLError: ')}") from exc
    finally:
        conn.authorizer = previous
