"""Timestamps as other agents write them, read into one form.

Seen in the wild: RFC 3339 with a zone and up to nine fraction digits (chrono), ``YYYY-MM-DD HH:MM:SS``
from SQLite's ``datetime('now')`` (UTC), naive ISO with microseconds (Python's ``utcnow().isoformat()``), and a
trailing ``Z``. All are UTC unless they carry an offset.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

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
