"""The demo store is realistic and reproducible for a given moment."""

from datetime import datetime, timezone

from oxmem_gui.core.demo import fill_demo


def test_demo_schedules_and_runs_at_a_fixed_moment(store):
    now = datetime(2037, 11, 22, 12, 0, tzinfo=timezone.utc)  # a Sunday
    counts = store.loop.run_until_complete(fill_demo(store.inner, now=now))
    assert (counts.sessions, counts.events, counts.notes, counts.summaries, counts.schedules) == (6, 50, 9, 1, 7)
    rows = store.sql(
        "SELECT name, status, consecutive_failures, last_run_status, "
        "(SELECT count(*) FROM schedule_runs r WHERE r.schedule_id = s.schedule_id) FROM schedules s "
        "ORDER BY name"
    )
    assert rows == [
        ("Check-in reminder", "active", 0, None, 0),
        ("Inbox watch", "active", 0, "success", 47),  # hourly for two days, each hour counted from the last finish
        ("Lisbon fare tracker", "disabled", 5, "failed", 5),  # five failures in a row disable it
        ("Morning briefing", "active", 0, "success", 15),  # weekdays of the last three weeks
        ("Passport renewal reminder", "completed", 0, "success", 1),
        ("Water the tomatoes", "paused", 0, None, 0),
        ("Weekly KPI post", "active", 0, "success", 6),  # Mondays of the last six weeks
    ]
    assert counts.runs == 47 + 5 + 15 + 1 + 6
    statuses = store.sql("SELECT status, count(*) FROM schedule_runs GROUP BY status ORDER BY status")
    assert statuses == [("cancelled", 1), ("failed", 7), ("success", 66)]
