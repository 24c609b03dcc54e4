"""Timestamps as other agents write them, read into one form.

Seen in the wild: RFC 3339 with a zone and up to nine fraction digits (chrono), ``YYYY-MM-DD HH:MM:SS``
from SQLite's ``datetime('now')`` (UTC), naive ISO with microseconds (Python's ``utcnow().isoformat()``), and a
trailing ``Z``. All are UTC unless they carry an offset.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

_FRACTION = re.compile(r"(\.\d{6})\d+")


def parse_when(text: object) -> datetime | None:
    """An aware UTC datetime, or None for NULL and for text that is no time (a foreign row is never fatal)."""
    if not isinstance(text, str) or not text.strip():
        return None
    value = _FRACTION.sub(r"\1", text.strip().replace(" ", "T", 1))
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc)


def rfc3339(when: datetime) -> str:
    """The form the store's own rows use (``2026-03-07T17:41:32.123456+00:00``)."""
    return when.astimezone(timezone.utc).isoformat(timespec="microseconds")


def shown_time(text: object) -> str:
    """A foreign timestamp as the store shows its own (RFC 3339 UTC), or the text as it is when it is no time."""
    when = parse_when(text)
    if when is None:
        return "" if text is None else str(text)
    return rfc3339(when)


def epoch_time(value: object) -> str:
    """A time kept as seconds since 1970 (Agno's ``BIGINT`` columns; a value past the year 5138 is read as
    milliseconds) as :func:`shown_time` shows one; a value that is no number as :func:`shown_time` reads it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return shown_time(value)
    seconds = value / 1000 if abs(value) >= 1e11 else value
    try:
        return rfc3339(datetime.fromtimestamp(seconds, timezone.utc))
    except (OverflowError, OSError, ValueError):
        return str(value)


def sql_place(expr: str) -> str:
    """SQL for a time's place in a list newest first: its Julian day where SQLite reads ``expr`` as a time (the
    forms above; a date first), else -1 — last. A C expression, so a page of 100k rows sorts in milliseconds."""
    return (
        f"coalesce(CASE WHEN {expr} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]*' THEN julianday({expr}) END, -1)"
    )


def cursor_place(conn: Any, table: str, key: str, expr: str, after: tuple[str, int]) -> float:
    """Where the list stands at the cursor ``after`` (a shown time and a row's ``key``): that row's place
    (:func:`sql_place`) where it still is, else the shown time's."""
    found = conn.execute(f"SELECT {sql_place(expr)} FROM {table} WHERE {key} = ?", (after[1],)).fetchone()
    if found is not None:
        return found[0]
    return conn.execute(f"SELECT {sql_place('?1')}", (after[0],)).fetchone()[0]
