"""Other agents' times (core/formats/times.py): every form they write read into one, and the SQL that orders a list
by them (``sql_place``) in the order the parsed times give, a value that is no time last."""

from __future__ import annotations

import apsw
import pytest

from oxmem_gui.core.formats.times import cursor_place, parse_when, shown_time, sql_place

SEEN = [
    "2026-02-01T07:30:12.500000000+00:00",  # chrono, nine fraction digits
    "2026-02-01 07:30:12",  # SQLite's datetime('now')
    "2026-02-01T07:30:12.500000",  # Python's naive isoformat
    "2026-02-01T07:30:12Z",
    "2026-02-01T09:30:12+02:00",  # the same instant as the last one, in another zone
    "2025-12-31T23:59:59.999999+00:00",
]
NOT_TIMES = ["yesterday", "", "1770757200", "2026-13-45 99:99:99"]


@pytest.mark.parametrize("text", SEEN)
def test_each_form_is_read_as_utc(text):
    when = parse_when(text)
    assert when is not None and when.utcoffset().total_seconds() == 0
    assert shown_time(text).endswith("+00:00") and len(shown_time(text)) == 32


@pytest.mark.parametrize("text", [*NOT_TIMES, None, 12])
def test_no_time_is_none_and_shown_as_it_is(text):
    assert parse_when(text) is None
    assert shown_time(text) == ("" if text is None else str(text))


def test_the_sql_order_is_the_parsed_order_and_no_time_comes_last():
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, at TEXT)")
    values = [*SEEN, *NOT_TIMES, None]
    conn.executemany("INSERT INTO t (at) VALUES (?)", [(v,) for v in values])
    in_sql = [r[0] for r in conn.execute(f"SELECT id FROM t ORDER BY {sql_place('at')} DESC, id DESC")]
    known = sorted(((parse_when(v), i) for i, v in enumerate(values, 1) if parse_when(v) is not None), reverse=True)
    unknown = sorted((i for i, v in enumerate(values, 1) if parse_when(v) is None), reverse=True)
    assert in_sql == [i for _, i in known] + unknown
    # the same instant in two zones is one place
    places = dict(conn.execute(f"SELECT id, {sql_place('at')} FROM t"))
    assert places[4] == places[5] and places[1] > places[4]
    assert places[len(SEEN) + 1] == -1


def test_a_cursor_stands_where_its_row_is_or_where_its_shown_time_is():
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, at TEXT)")
    conn.execute("INSERT INTO t (id, at) VALUES (1, '2026-02-01 07:30:12')")
    row = cursor_place(conn, "t", "id", "at", ("anything", 1))
    gone = cursor_place(conn, "t", "id", "at", ("2026-02-01T07:30:12.000000+00:00", 2))
    assert row == gone == conn.execute(f"SELECT {sql_place('at')} FROM t").fetchone()[0]
    assert cursor_place(conn, "t", "id", "at", ("not a time", 3)) == -1
