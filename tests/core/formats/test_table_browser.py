"""The plain table browser on hand-made SQLite files: how tables are classed and counted (FTS5 shadows, a virtual
table whose module is missing), pages of rows and their bounds, and cells as one line of text."""

from __future__ import annotations

import apsw
import pytest

from oxmem_gui.core.errors import InvalidInputError, NotFoundError
from oxmem_gui.core.formats.table_browser import list_tables, quoted, shown_value, table_page


@pytest.fixture
def conn():
    c = apsw.Connection(":memory:")
    c.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, data BLOB)")
    c.executemany("INSERT INTO items (name) VALUES (?)", [(f"item {i}",) for i in range(1, 6)])
    c.execute("CREATE VIEW named AS SELECT name FROM items WHERE id > 3")
    c.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
    c.execute("INSERT INTO docs (body) VALUES ('one'), ('two')")
    c.execute("CREATE TABLE idx_vec_shadow (index_key, data)")
    yield c
    c.close()


def test_tables_are_classed_and_counted_exactly(conn):
    tables = list_tables(conn)
    assert {t.name: (t.kind, t.columns) for t in tables} == {
        "docs": ("virtual", ["body"]),
        "docs_config": ("shadow", ["k", "v"]),
        "docs_content": ("shadow", ["id", "c0"]),
        "docs_data": ("shadow", ["id", "block"]),
        "docs_docsize": ("shadow", ["id", "sz"]),
        "docs_idx": ("shadow", ["segid", "term", "pgno"]),
        "idx_vec_shadow": ("shadow", ["index_key", "data"]),
        "items": ("table", ["id", "name", "data"]),
        "named": ("view", ["name"]),
    }
    rows = {t.name: t.rows for t in tables if t.name not in ("docs_data", "docs_idx")}  # FTS5's own b-tree layout
    assert rows == {
        "docs": 2,
        "docs_config": 1,
        "docs_content": 2,
        "docs_docsize": 2,
        "idx_vec_shadow": 0,
        "items": 5,
        "named": 2,
    }
    assert [t.name for t in tables] == sorted(t.name for t in tables)  # by name, sqlite_* left out


def test_a_table_named_like_a_virtual_tables_shadow_is_an_ordinary_table(conn):
    conn.execute("CREATE TABLE docs_archive (body TEXT)")  # starts with "docs_", holds the user's own rows
    conn.execute("CREATE VIRTUAL TABLE places USING rtree(id, x0, x1)")
    kinds = {t.name: t.kind for t in list_tables(conn, counts=False)}
    assert kinds["docs_archive"] == "table" and kinds["docs_data"] == "shadow"
    assert [kinds[f"places_{part}"] for part in ("node", "rowid", "parent")] == ["shadow"] * 3


def test_without_counts_no_table_is_counted(conn):
    tables = list_tables(conn, counts=False)
    assert {t.rows for t in tables} == {None}
    view = next(t for t in tables if t.name == "named")
    assert view.sql == "CREATE VIEW named AS SELECT name FROM items WHERE id > 3"


class _Cursor:
    def __init__(self) -> None:
        self.i = 0

    def Filter(self, *args):  # noqa: N802 - APSW's virtual table protocol
        self.i = 0

    def Eof(self):  # noqa: N802
        return self.i >= 2

    def Rowid(self):  # noqa: N802
        return self.i

    def Column(self, n):  # noqa: N802
        return self.i

    def Next(self):  # noqa: N802
        self.i += 1

    def Close(self):  # noqa: N802
        pass


class _Table:
    def BestIndex(self, *args):  # noqa: N802
        return None

    def Open(self):  # noqa: N802
        return _Cursor()

    def Disconnect(self):  # noqa: N802
        pass

    Destroy = Disconnect


class _Module:
    def Create(self, db, module, dbname, table, *args):  # noqa: N802
        return "CREATE TABLE x(n)", _Table()

    Connect = Create


def test_a_virtual_table_whose_module_is_missing_is_listed_uncounted(tmp_path):
    path = str(tmp_path / "vt.db")
    writer = apsw.Connection(path)
    writer.createmodule("pyrows", _Module())
    writer.execute("CREATE VIRTUAL TABLE ghost USING pyrows()")
    assert [(t.name, t.kind, t.columns, t.rows) for t in list_tables(writer)] == [("ghost", "virtual", ["n"], 2)]
    writer.close()
    reader = apsw.Connection(path)  # this connection has no "pyrows" module
    assert [(t.name, t.kind, t.columns, t.rows) for t in list_tables(reader)] == [("ghost", "virtual", [], None)]
    reader.close()


def test_pages_of_rows_say_whether_more_follow(conn):
    first = table_page(conn, "items", 0, 2)
    assert (first.name, first.columns, first.rows, first.offset, first.more) == (
        "items",
        ["id", "name", "data"],
        [[1, "item 1", None], [2, "item 2", None]],
        0,
        True,
    )
    last = table_page(conn, "items", 3, 2)
    assert (last.rows, last.more) == ([[4, "item 4", None], [5, "item 5", None]], False)
    past = table_page(conn, "named", 10)
    assert (past.columns, past.rows, past.more) == (["name"], [], False)  # no rows: the columns all the same


def test_a_name_with_quotes_and_spaces_is_quoted(conn):
    assert quoted('odd "name"') == '"odd ""name"""'
    conn.execute('CREATE TABLE "odd ""name""" ("a b" INTEGER)')
    conn.execute('INSERT INTO "odd ""name""" VALUES (7)')
    (odd,) = [t for t in list_tables(conn) if t.name == 'odd "name"']
    assert (odd.kind, odd.columns, odd.rows) == ("table", ["a b"], 1)
    assert table_page(conn, 'odd "name"').rows == [[7]]


@pytest.mark.parametrize(
    ("name", "offset", "limit", "error", "message"),
    [
        ("items", 0, 0, InvalidInputError, "limit must be a positive integer, got 0"),
        ("items", 0, 10_001, InvalidInputError, "limit must be at most 10,000, got 10001"),
        ("items", -1, 5, InvalidInputError, "offset must be a non-negative integer, got -1"),
        ("items", True, 5, InvalidInputError, "offset must be a non-negative integer, got True"),
        ("items", 1.0, 5, InvalidInputError, "offset must be a non-negative integer, got 1.0"),
        ("nope", 0, 5, NotFoundError, "no table or view 'nope'"),
        ("sqlite_master", 0, 5, NotFoundError, "no table or view 'sqlite_master'"),
    ],
)
def test_bad_pages_are_refused(conn, name, offset, limit, error, message):
    with pytest.raises(error) as caught:
        table_page(conn, name, offset, limit)
    assert str(caught.value) == message


def test_cells_are_shown_as_one_line():
    assert shown_value(None) == "NULL"
    assert shown_value(b"\x00\x01\xfe\xff") == "BLOB 4 bytes: 00 01 fe ff"
    assert shown_value(bytes(range(8))) == "BLOB 8 bytes: 00 01 02 03 04 05 06 07"
    assert shown_value(bytes(range(10)) * 200) == "BLOB 2,000 bytes: 00 01 02 03 04 05 06 07 …"
    assert shown_value("first\nsecond") == "first ⏎ second"
    assert shown_value(3.5) == "3.5"
    assert shown_value("x" * 10, width=10) == "x" * 10
    assert shown_value("x" * 11, width=10) == "x" * 9 + "…"
