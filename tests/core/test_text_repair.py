"""Text cells that are not valid UTF-8: ``invalid_text`` names them (table, rowid, column) and ``repaired_copy``
gives an in-memory copy where they read with U+FFFD, leaving the original connection's bytes untouched."""

from __future__ import annotations

import apsw
import pytest

from oxmem_gui.core.text_repair import BadText, invalid_text, register, repaired_copy


@pytest.fixture
def conn():
    c = apsw.Connection(":memory:")
    c.execute("CREATE TABLE t (a TEXT, b)")
    c.execute("CREATE TABLE w (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID")
    c.execute('CREATE TABLE "odd ""name""" ("my col" TEXT)')
    c.execute("INSERT INTO t VALUES ('fine', CAST(? AS TEXT))", (b"h\xffi",))
    c.execute("INSERT INTO t VALUES (CAST(? AS TEXT), ?)", (b"caf\xe9", b"\xff a blob is not text"))
    c.execute("INSERT INTO t VALUES (NULL, NULL)")
    c.execute("INSERT INTO w VALUES ('k1', CAST(? AS TEXT))", (b"\xc3",))
    c.execute('INSERT INTO "odd ""name""" VALUES (CAST(? AS TEXT))', (b"x\xfe",))
    yield c
    c.close()


def test_every_bad_text_cell_is_named_and_blobs_and_nulls_are_not(conn):
    found, total = invalid_text(conn)
    assert found == [
        BadText("t", 2, "a"),
        BadText("t", 1, "b"),
        BadText("w", None, "v"),  # a table without rowid has none to give
        BadText('odd "name"', 1, "my col"),
    ]
    assert total == 4


def test_the_list_is_cut_at_the_limit_but_the_total_counts_them_all(conn):
    found, total = invalid_text(conn, limit=2)
    assert found == [BadText("t", 2, "a"), BadText("t", 1, "b")]
    assert total == 4
    assert invalid_text(conn, limit=0) == ([], 4)


def test_text_inside_a_full_text_index_is_found_in_its_shadow_table(conn):
    conn.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
    conn.execute("INSERT INTO docs VALUES (CAST(? AS TEXT))", (b"bad \xff doc",))
    found, total = invalid_text(conn)
    assert found[-1] == BadText("docs_content", 1, "c0") and total == 5


def test_the_copy_reads_with_replacement_characters_and_the_original_keeps_its_bytes(conn):
    copy, fixed = repaired_copy(conn)
    try:
        assert fixed == 4
        assert copy.execute("SELECT a, b FROM t ORDER BY rowid").fetchall() == [
            ("fine", "h\ufffdi"),
            ("caf\ufffd", b"\xff a blob is not text"),
            (None, None),
        ]
        assert copy.execute("SELECT k, v FROM w").fetchall() == [("k1", "\ufffd")]
        assert copy.execute('SELECT "my col" FROM "odd ""name"""').fetchall() == [("x\ufffd",)]
        assert invalid_text(copy) == ([], 0)
    finally:
        copy.close()
    with pytest.raises(UnicodeDecodeError):
        conn.execute("SELECT a FROM t WHERE rowid = 2").fetchall()
    assert conn.execute("SELECT CAST(b AS BLOB) FROM t WHERE rowid = 1").fetchall() == [(b"h\xffi",)]


def test_the_copys_triggers_are_dropped_before_the_repair_and_the_originals_kept(conn):
    conn.execute("CREATE TABLE audit (what TEXT)")
    conn.execute("CREATE TRIGGER t_changed AFTER UPDATE ON t BEGIN INSERT INTO audit VALUES ('changed'); END")
    copy, fixed = repaired_copy(conn)
    try:
        assert fixed == 4
        assert copy.execute("SELECT count(*) FROM audit").fetchall() == [(0,)]
        assert copy.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall() == []
    finally:
        copy.close()
    assert conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall() == [("t_changed",)]


def test_the_registered_functions_check_and_decode_bytes():
    c = apsw.Connection(":memory:")
    register(c)
    row = c.execute(
        "SELECT oxmem_utf8_ok(x'41ff'), oxmem_utf8_fix(x'41ff'), oxmem_utf8_ok(x'e282ac'), oxmem_utf8_fix(x'e282ac'), "
        "oxmem_utf8_ok(NULL)"
    ).fetchall()
    assert row == [(0, "A\ufffd", 1, "\u20ac", 1)]
