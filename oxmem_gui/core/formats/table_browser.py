"""A plain table browser for any SQLite file: its tables and views, their columns, rows a page at a time.

This is what an unknown SQLite file shows instead of a refusal, and what every format offers beside its own
panels. Row counts are exact (``count(*)``) — asked for explicitly, never to open a view. Values are shown as
text: a BLOB as its size and first bytes, long text cut (the full value is in the row's detail).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import apsw

from ..errors import InvalidInputError, NotFoundError
from ..store.inputs import check_positive

PAGE = 200
MAX_PAGE = 10_000
#: what a virtual table's module names the tables that hold its index, after the virtual table's name and ``_``
#: (FTS5, FTS3/4, R*Tree, sqlite-vec's vec0): such a table is listed as a ``shadow``; another table whose name merely
#: starts with a virtual table's is an ordinary one
SHADOW_NAMES = re.compile(
    r"data|idx|content|docsize|config|segments|segdir|stat|node|rowid|parent|info|chunks|rowids|auxiliary"
    r"|(vector_chunks|metadatachunks|metadatatext)\d+"
)
#: libSQL's vector index keeps its rows in ``<index>_shadow`` (and that table's own index)
LIBSQL_SHADOW = ("_shadow", "_shadow_idx")


@dataclass
class TableInfo:
    name: str
    kind: str  # table | view | virtual | shadow
    columns: list[str]
    rows: int | None  # None: not counted, or could not be (a virtual table whose module is missing)
    sql: str | None


@dataclass
class TablePage:
    name: str
    columns: list[str]
    rows: list[list[Any]]
    offset: int
    more: bool


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _objects(conn: apsw.Connection) -> list[tuple[str, str, str | None]]:
    return conn.execute(
        "SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' "
        "ORDER BY name"
    ).fetchall()


def _shadow_of(name: str, virtual: set[str]) -> bool:
    """Whether ``name`` is one of the tables a virtual table of ``virtual`` keeps its index in."""
    return any(name.startswith(v + "_") and SHADOW_NAMES.fullmatch(name[len(v) + 1 :]) for v in virtual)


def list_tables(conn: apsw.Connection, counts: bool = True) -> list[TableInfo]:
    """Every table and view with its columns (and row count when ``counts``)."""
    objects = _objects(conn)
    virtual = {n for n, _, sql in objects if (sql or "").upper().startswith("CREATE VIRTUAL")}
    out = []
    for name, kind, sql in objects:
        if name in virtual:
            kind = "virtual"
        elif _shadow_of(name, virtual) or name.endswith(LIBSQL_SHADOW):
            kind = "shadow"
        try:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({quoted(name)})").fetchall()]
        except apsw.Error:
            columns = []
        rows = None
        if counts:
            # NOT INDEXED: SQLite counts through the smallest index, and an index another engine keeps (libSQL's
            # vector index) looks empty to it
            plain = " NOT INDEXED" if kind in ("table", "shadow") else ""
            try:
                rows = int(conn.execute(f"SELECT count(*) FROM {quoted(name)}{plain}").fetchall()[0][0])
            except apsw.Error:  # a virtual table of a module this SQLite lacks
                rows = None
        out.append(TableInfo(name, kind, columns, rows, sql))
    return out


def table_page(conn: apsw.Connection, name: str, offset: int = 0, limit: int = PAGE) -> TablePage:
    """Rows ``offset`` … ``offset + limit`` of a table or view, in its rowid order when it has one."""
    check_positive(limit, "limit", MAX_PAGE)
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidInputError(f"offset must be a non-negative integer, got {offset!r}")
    if name not in {n for n, _, _ in _objects(conn)}:
        raise NotFoundError(f"no table or view {name!r}")
    cursor = conn.execute(f"SELECT * FROM {quoted(name)} LIMIT ? OFFSET ?", (limit + 1, offset))
    rows = [list(r) for r in cursor]
    try:
        columns = [d[0] for d in cursor.getdescription()]
    except apsw.ExecutionCompleteError:
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({quoted(name)})").fetchall()]
    return TablePage(name, columns, rows[:limit], offset, len(rows) > limit)


def shown_value(value: Any, width: int = 200) -> str:
    """A cell as one line of text: NULL, a BLOB's size and first bytes, text cut at ``width``."""
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        head = value[:8].hex(" ")
        return f"BLOB {len(value):,} bytes: {head}{' …' if len(value) > 8 else ''}"
    text = str(value).replace("\n", " ⏎ ")
    return text if len(text) <= width else text[: width - 1] + "…"
