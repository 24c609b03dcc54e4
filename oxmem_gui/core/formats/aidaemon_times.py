"""Questions about an aidaemon session's times answered in SQL over its ``(session_id, created_at)`` index, so a
session of a hundred thousand events is never read whole to answer them: each session's count and first and last
time, and the last event at or before a summary's time or named by it (see :mod:`.aidaemon`).

aidaemon writes ``created_at`` as chrono's ``to_rfc3339`` in UTC (``2026-02-01T10:00:00.123456789+00:00``) and,
in older tables, SQLite's ``datetime('now')`` (``2026-02-01 10:00:00``). With the space made a ``T``, text of
either shape orders as its time does (a time without fraction is a prefix of the same second with one, and ``+``
sorts before any digit). A session holding any other text is answered row by row with :func:`.times.parse_when`,
as before, so the answers never depend on the shapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import apsw

from ..errors import NotFoundError
from .aidaemon_rows import Span, json_or_reason, table_names
from .times import parse_when

#: the shapes of ``created_at`` whose rows :func:`upper_at` compares in SQL (see the module's docstring)
UTC_TIMES = ("[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]*+00:00",
              "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]")  # fmt: skip
ODD_TIMES = "(created_at IS NULL OR (created_at NOT GLOB ? AND created_at NOT GLOB ?))"
ORDERED_TIME = "replace(created_at, ' ', 'T')"


def session_table(conn: apsw.Connection, session_id: str) -> tuple[str, str]:
    """The table holding the session's events and its sequence column: v0.9's ``events`` (``id``), else the
    legacy ``messages`` (``rowid``); NotFoundError when neither has a row of it."""
    tables = table_names(conn)
    for table, key in (("events", "id"), ("messages", "rowid")):
        if (
            table in tables
            and conn.execute(f"SELECT 1 FROM {table} WHERE session_id = ? LIMIT 1", (session_id,)).fetchone()
        ):
            return table, key
    raise NotFoundError(f"no session {session_id!r}")


#: each row's shape, cheaply (``?`` is any character): 1 RFC 3339 in UTC, 2 ``datetime('now')``, 4 anything else
_KIND = (
    "CASE WHEN created_at GLOB '????-??-??T??:??:??*+00:00' THEN 1 "
    "WHEN created_at GLOB '????-??-?? ??:??:??' THEN 2 ELSE 4 END"
)


def session_spans(conn: apsw.Connection, table: str) -> dict[str, tuple[int, Span]]:
    """Every session of ``table``: its row count and the span of its times, as parsing every row gives it.

    One pass over the index gives each session's count, its smallest and largest ``created_at`` text and the
    shapes among its rows. Within one shape, text orders as the time of every row that parses, and a row that
    does not parse is ignored unless it is an extreme — so the extremes are the span when both parse. A session
    mixing the two shapes has its extremes read again with the space made a ``T``; one with another shape, or
    an extreme that does not parse, has every time read and parsed."""
    out: dict[str, tuple[int, Span]] = {}
    for sid, count, first, last, kinds in conn.execute(
        f"SELECT session_id, count(*), min(created_at), max(created_at), sum(DISTINCT {_KIND}) FROM {table} "
        "GROUP BY session_id"
    ):
        if sid is None:
            continue
        if kinds == 3:
            first, last = conn.execute(
                f"SELECT min({ORDERED_TIME}), max({ORDERED_TIME}) FROM {table} WHERE session_id = ?", (sid,)
            ).fetchone()
        span = Span()
        if kinds in (1, 2, 3) and parse_when(first) is not None and parse_when(last) is not None:
            span.widen(first)
            span.widen(last)
        else:
            for (created,) in conn.execute(f"SELECT created_at FROM {table} WHERE session_id = ?", (sid,)):
                span.widen(created)
        out[str(sid)] = (int(count), span)
    return out


def upper_at(conn: apsw.Connection, table: str, key: str, session_id: str, when: Any) -> int:
    """The session's last event at or before ``when`` (0 when none, or when ``when`` is no time). Rows in an
    earlier second are counted in SQL; rows in the same second, and every row of a session holding times of
    another shape, are compared parsed, so the answer is what comparing every row parsed gives."""
    limit = parse_when(when)
    if limit is None:
        return 0
    odd = conn.execute(f"SELECT 1 FROM {table} WHERE session_id = ? AND {ODD_TIMES} LIMIT 1", (session_id, *UTC_TIMES))
    if odd.fetchone() is not None:
        rows = conn.execute(f"SELECT {key}, created_at FROM {table} WHERE session_id = ?", (session_id,))
        return max((int(k) for k, at in rows if (t := parse_when(at)) is not None and t <= limit), default=0)
    second = limit.strftime("%Y-%m-%dT%H:%M:%S")
    (upper,) = conn.execute(
        f"SELECT max({key}) FROM {table} WHERE session_id = ? AND substr({ORDERED_TIME}, 1, 19) < ?",
        (session_id, second),
    ).fetchone()
    same = conn.execute(
        f"SELECT {key}, created_at FROM {table} WHERE session_id = ? AND substr({ORDERED_TIME}, 1, 19) = ?",
        (session_id, second),
    )
    candidates = [int(k) for k, at in same if (t := parse_when(at)) is not None and t <= limit]
    return max([int(upper or 0), *candidates])


def upper_from_ids(conn: apsw.Connection, table: str, key: str, session_id: str, row: Mapping[str, Any]) -> int | None:
    """The sequence a summary row names: ``last_event_id`` (an events id), or ``last_message_id`` (an events id, a
    message id inside an event's data, or a legacy message's id); the first of the session's events that matches."""
    for name in ("last_event_id", "last_message_id"):
        value = row.get(name)
        if value is None:
            continue
        try:
            number = int(value)
        except (TypeError, ValueError):
            number = None
        if (
            number is not None
            and conn.execute(
                f"SELECT 1 FROM {table} WHERE session_id = ? AND {key} = ?", (session_id, number)
            ).fetchone()
        ):
            return number
        if table == "messages":
            ids = conn.execute("SELECT rowid, id FROM messages WHERE session_id = ? ORDER BY rowid", (session_id,))
            found = next((int(r) for r, message_id in ids if message_id == value), None)
        else:  # only an event whose data names a message id can match
            rows = conn.execute(
                "SELECT id, data FROM events WHERE session_id = ? AND instr(data, 'message_id') ORDER BY id",
                (session_id,),
            )
            found = next((int(i) for i, data in rows if _names_message(data, value)), None)
        if found is not None:
            return found
    return None


def _names_message(data_text: Any, value: Any) -> bool:
    data, problem = json_or_reason(data_text)
    return problem is None and isinstance(data, dict) and data.get("message_id") == value
