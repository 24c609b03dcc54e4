"""An aidaemon session's times answered in SQL over its ``(session_id, created_at)`` index
(``core/formats/aidaemon_times.py``): counts, first and last times and a summary's last event equal parsing every
row, for every shape of time aidaemon writes."""

from __future__ import annotations

import json

import apsw
import pytest

from tests.core.formats import fixtures as fx
from tests.core.formats.test_aidaemon import read, when


def _listing(path):
    return read(path, lambda m: m.sessions_page(limit=1000))


@pytest.mark.parametrize(
    ("times", "in_sql"),
    [
        # chrono's RFC 3339 beside SQLite's datetime('now') in one session: ordered in SQL (a second without a fraction
        # sorts before the same second with one)
        (["2026-03-01T10:00:00.500000000+00:00", "2026-03-01 10:00:00", "2026-03-01T09:59:59+00:00"], True),
        # a shape SQL cannot order ('Z', another offset): every row parsed, as before
        (["2026-03-01T10:00:00Z", "2026-03-01T12:00:00+02:00", "2026-03-01 10:30:00"], False),
        # the right shape but no time, and the largest text: every row parsed
        (["2026-03-01T10:00:00+00:00", "2026-13-45T99:00:00+00:00", "2026-03-01T09:00:00+00:00"], None),
    ],
)
def test_session_times_from_sql_equal_those_parsed_row_by_row(tmp_path, monkeypatch, times, in_sql):
    """A session's count, first and last time come from one pass over the (session_id, created_at) index when its
    times have shapes whose text orders as their time does, instead of parsing every event (the list at 500,000
    events: 953 → 92 ms, see bench_formats): the listing is the same as parsing them all."""
    from oxmem_gui.core.formats.aidaemon_times import _KIND

    path = fx.make_aidaemon(tmp_path / "a.db")
    conn = apsw.Connection(str(path))
    conn.execute("DELETE FROM events WHERE created_at NOT GLOB '*+00:00'")  # the fixture mixes in other shapes too
    conn.executemany(
        "INSERT INTO events (session_id, event_type, data, created_at) VALUES ('mixed', 'user_message', ?, ?)",
        [(json.dumps({"content": f"turn {i}"}), t) for i, t in enumerate(times)],
    )
    kinds = conn.execute(f"SELECT sum(DISTINCT {_KIND}) FROM events WHERE session_id = 'mixed'").fetchone()[0]
    conn.close()
    assert kinds == {True: 3, False: 6, None: 1}[in_sql]  # both shapes; others beside one; one shape
    fast = _listing(path)
    monkeypatch.setattr("oxmem_gui.core.formats.aidaemon_times._KIND", "4")  # every session parsed row by row
    assert _listing(path) == fast
    mixed = next(r for r in fast if r.session_id == "mixed")
    assert mixed.details["events"] == 3
    first, last = {True: (2, 0), False: (0, 2), None: (2, 0)}[in_sql]  # 12:00+02:00 is 10:00 UTC, before 10:30
    assert (mixed.created_at, mixed.updated_at) == (when(times[first]), when(times[last]))


def test_summary_upper_in_sql_equals_every_event_parsed(tmp_path, monkeypatch):
    """The event a summary reaches (the last at or before its time) is found in SQL, with only the events of the
    summary's own second parsed, so opening a session of 125,000 events no longer reads them all (3.4 s → 16 ms):
    for limits before, between, inside and after the events' seconds it equals comparing every event parsed."""
    from oxmem_gui.core.formats.aidaemon_times import upper_at

    path = fx.make_aidaemon(tmp_path / "a.db")
    conn = apsw.Connection(str(path))
    times = ["2026-03-01 10:00:00", "2026-03-01T10:00:00.250+00:00", "2026-03-01T10:00:00.750000001+00:00",
             "2026-03-01T10:00:01+00:00", "2026-03-01 10:00:02", "2026-03-02T00:00:00+00:00"]  # fmt: skip
    conn.executemany(
        "INSERT INTO events (session_id, event_type, data, created_at) VALUES ('s', 'user_message', '{}', ?)",
        [(t,) for t in times],
    )
    ids = [i for (i,) in conn.execute("SELECT id FROM events WHERE session_id = 's' ORDER BY id")]
    limits = ["2026-02-28T00:00:00Z", "2026-03-01T10:00:00+00:00", "2026-03-01T10:00:00.5+00:00",
              "2026-03-01 10:00:00.75", "2026-03-01T10:00:01.000001+00:00", "2026-03-01T12:00:02+02:00",
              "2026-03-03T00:00:00+00:00", "not a time", None]  # fmt: skip
    fast = [upper_at(conn, "events", "id", "s", limit) for limit in limits]
    monkeypatch.setattr("oxmem_gui.core.formats.aidaemon_times.UTC_TIMES", ("no such shape", "no such shape"))
    parsed = [upper_at(conn, "events", "id", "s", limit) for limit in limits]
    conn.close()
    assert fast == parsed == [0, ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], 0, 0]
