"""Calendar placement of fires and runs (core, no Qt)."""

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from oxmem_gui.core.schedules.calendar import by_day, by_hour, calendar_items, cell_lines

NY = ZoneInfo("America/New_York")


def utc(*a):
    return datetime(*a, tzinfo=timezone.utc)


def make(store, created, cadence, name):
    return store.loop.run_until_complete(store.inner.schedules.create("u", name, cadence, name=name, now=created))


def test_a_cron_in_a_daylight_saving_month(store):
    s = make(
        store, utc(2037, 2, 20), {"type": "cron", "expression": "30 2 * * *", "timezone": "America/New_York"}, "nightly"
    )
    items = calendar_items(
        [s], [], utc(2037, 3, 1, 5), utc(2037, 4, 1, 4), now=utc(2037, 2, 20), mode="local", local=NY
    )
    days = by_day(items)
    assert len(items) == 31 and sorted(days) == [date(2037, 3, d) for d in range(1, 32)]
    assert [i.shown.strftime("%H:%M") for i in days[date(2037, 3, 8)]] == ["03:00"]  # 02:30 did not exist
    assert [i.shown.strftime("%H:%M") for i in days[date(2037, 3, 9)]] == ["02:30"]
    in_utc = calendar_items([s], [], utc(2037, 3, 1), utc(2037, 4, 1), now=utc(2037, 2, 20), mode="utc")
    assert {i.shown.strftime("%H:%M") for i in in_utc} == {"07:30", "07:00", "06:30"}
    in_own = calendar_items(
        [s], [], utc(2037, 3, 1, 5), utc(2037, 4, 1, 4), now=utc(2037, 2, 20), mode="schedule", local=timezone.utc
    )
    assert [i.shown for i in in_own] == [i.shown for i in items]


def test_hourly_fires_fold_into_a_count_and_runs_show_their_status(store):
    hourly = make(store, utc(2037, 11, 1), {"type": "interval", "every_secs": 3600}, "hourly")
    daily = make(store, utc(2037, 11, 1), {"type": "cron", "expression": "0 9 * * *", "timezone": "UTC"}, "daily")
    run, _ = store.loop.run_until_complete(
        store.inner.schedules.record_run(
            daily.schedule_id,
            started_at=utc(2037, 11, 1, 9),
            finished_at=utc(2037, 11, 1, 9, 1),
            status="failed",
            now=utc(2037, 11, 1, 9, 1),
        )
    )
    hourly = store.loop.run_until_complete(store.inner.schedules.get(hourly.schedule_id))
    daily = store.loop.run_until_complete(store.inner.schedules.get(daily.schedule_id))
    items = calendar_items(
        [hourly, daily], [run], utc(2037, 11, 1), utc(2037, 11, 3), now=utc(2037, 11, 1, 9, 30), mode="utc"
    )
    day2 = cell_lines(by_day(items)[date(2037, 11, 2)])
    assert [(line.schedule_id == hourly.schedule_id, line.kind, line.count) for line in day2] == [
        (True, "fire", 24),
        (False, "fire", 1),
    ]
    day1 = by_day(items)[date(2037, 11, 1)]
    runs = [i for i in day1 if i.kind == "run"]
    assert [(i.status, i.shown.hour, i.run_id) for i in runs] == [("failed", 9, run.run_id)]
    fires_day1 = [i for i in day1 if i.kind == "fire"]
    assert len(fires_day1) == 14 and fires_day1[0].at == utc(2037, 11, 1, 10)  # from the next run on, after now
    assert len(by_hour(items)[(date(2037, 11, 2), 9)]) == 2


def test_paused_and_completed_schedules_do_not_fire(store):
    s = make(store, utc(2037, 11, 1), {"type": "interval", "every_secs": 600}, "p")
    store.loop.run_until_complete(store.inner.schedules.pause(s.schedule_id))
    s = store.loop.run_until_complete(store.inner.schedules.get(s.schedule_id))
    assert calendar_items([s], [], utc(2037, 11, 1), utc(2037, 11, 2), now=utc(2037, 11, 1)) == []
    assert calendar_items([s], [], utc(2037, 11, 1), utc(2037, 11, 1) + timedelta(hours=1), now=utc(2037, 11, 1)) == []
