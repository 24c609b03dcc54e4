"""A search's scope: one session, every session, or every session whose id starts with a prefix — in Python and
as the SQL condition the legs run with, which admit the same sessions."""

from __future__ import annotations

import apsw
import pytest

from oxmem_gui.core.retrieval.scope import ALL_SESSIONS, AllSessions, admits, scope_sql, shown_scope

SESSIONS = ["telegram:alice:lisbon", "telegram:alice:tomatoes", "slack:bob:metrics", "telegram:ali", "tele%gram"]


@pytest.mark.parametrize(
    "scope, expected",
    [
        ("telegram:ali", ["telegram:ali"]),
        (ALL_SESSIONS, SESSIONS),
        (AllSessions("telegram:alice:"), ["telegram:alice:lisbon", "telegram:alice:tomatoes"]),
        (AllSessions("tele%"), ["tele%gram"]),  # a prefix, never a LIKE pattern
    ],
)
def test_the_sql_condition_admits_what_python_admits(scope, expected):
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE c (session_id TEXT)")
    conn.executemany("INSERT INTO c VALUES (?)", [(s,) for s in SESSIONS])
    where, args = scope_sql(scope, "session_id")
    in_sql = [r[0] for r in conn.execute(f"SELECT session_id FROM c WHERE {where} ORDER BY rowid", args)]
    assert in_sql == [s for s in SESSIONS if admits(scope, s)] == expected


def test_a_result_names_one_session_or_none():
    assert shown_scope("telegram:ali") == "telegram:ali"
    assert shown_scope(ALL_SESSIONS) is None and shown_scope(AllSessions("x")) is None
