"""Cadences: next fires, daylight-saving days, calendars, validation, words."""

from datetime import datetime, timezone

import pytest

from oxmem_gui.core import InvalidInputError
from oxmem_gui.core.schedules import cadence as cad
from oxmem_gui.core.schedules.cadence import (
    CronCadence,
    IntervalCadence,
    OnceCadence,
    cadence_json,
    cadence_warnings,
    describe,
    fires_between,
    format_in_timezone,
    next_run,
    next_runs,
    parse_cadence,
    validate_cadence,
)


def utc(*args):
    return datetime(*args, tzinfo=timezone.utc)


def iso(moments):
    return [m.isoformat() for m in moments]


def test_cron_in_kolkata_after_a_fixed_instant():
    c = CronCadence("0 8 * * *", "Asia/Kolkata")
    # 08:00 IST is 02:30 UTC; "after" is strict, so the fire at the instant itself is not next
    assert iso(next_runs(c, utc(2037, 11, 22, 2, 30), 3)) == [
        "2037-11-23T02:30:00+00:00",
        "2037-11-24T02:30:00+00:00",
        "2037-11-25T02:30:00+00:00",
    ]
    assert next_run(c, utc(2037, 11, 22, 2, 29)) == utc(2037, 11, 22, 2, 30)


def test_interval_and_once():
    assert next_run(IntervalCadence(3600), utc(2037, 1, 1, 10, 15)) == utc(2037, 1, 1, 11, 15)
    assert iso(next_runs(IntervalCadence(5400), utc(2037, 1, 1), 2)) == [
        "2037-01-01T01:30:00+00:00",
        "2037-01-01T03:00:00+00:00",
    ]
    once = OnceCadence(utc(2037, 12, 1, 9, 30))
    assert next_run(once, utc(2037, 11, 30)) == utc(2037, 12, 1, 9, 30)
    assert next_run(once, utc(2037, 12, 2)) is None
    assert next_runs(once, utc(2037, 12, 2), 5) == []


def test_spring_forward_fires_at_the_first_valid_minute():
    c = CronCadence("30 2 * * *", "America/New_York")  # 2037-03-08: 02:00 EST jumps to 03:00 EDT
    assert iso(next_runs(c, utc(2037, 3, 7, 17), 3)) == [
        "2037-03-08T07:00:00+00:00",  # 03:00 EDT: 02:30 does not exist that day
        "2037-03-09T06:30:00+00:00",  # 02:30 EDT
        "2037-03-10T06:30:00+00:00",
    ]


def test_fall_back_fires_once_at_0230_and_twice_at_0130():
    c = CronCadence("30 2 * * *", "America/New_York")  # 2037-11-01: 02:00 EDT falls back to 01:00 EST
    assert iso(next_runs(c, utc(2037, 10, 31, 16), 2)) == ["2037-11-01T07:30:00+00:00", "2037-11-02T07:30:00+00:00"]
    twice = CronCadence("30 1 * * *", "America/New_York")
    assert iso(next_runs(twice, utc(2037, 10, 31, 16), 3)) == [
        "2037-11-01T05:30:00+00:00",  # 01:30 EDT
        "2037-11-01T06:30:00+00:00",  # 01:30 EST, the same wall time an hour later
        "2037-11-02T06:30:00+00:00",
    ]


def test_fires_between_for_a_calendar():
    month = (utc(2037, 11, 1), utc(2037, 12, 1))
    assert len(fires_between(CronCadence("0 8 * * *", "Asia/Kolkata"), *month)) == 30
    every_minute = fires_between(IntervalCadence(60), *month)
    assert (
        len(every_minute) == 30 * 24 * 60
        and every_minute[0] == month[0]
        and every_minute[-1] == utc(2037, 11, 30, 23, 59)
    )
    anchored = fires_between(IntervalCadence(7200), utc(2037, 11, 2), utc(2037, 11, 2, 6), anchor=utc(2037, 11, 1, 1))
    assert iso(anchored) == ["2037-11-02T01:00:00+00:00", "2037-11-02T03:00:00+00:00", "2037-11-02T05:00:00+00:00"]
    assert fires_between(IntervalCadence(7200), utc(2037, 11, 1), utc(2037, 11, 2), anchor=utc(2037, 12, 1)) == []
    march = fires_between(CronCadence("30 2 * * *", "America/New_York"), utc(2037, 3, 1), utc(2037, 4, 1))
    assert len(march) == 31 and utc(2037, 3, 8, 7, 0) in march
    assert fires_between(OnceCadence(utc(2037, 11, 5)), *month) == [utc(2037, 11, 5)]


def test_day_of_month_and_day_of_week_are_ored():
    c = CronCadence("0 0 1,15 * 5", "UTC")
    fires = fires_between(c, utc(2038, 2, 1), utc(2038, 3, 1))
    assert [f.day for f in fires] == [1, 5, 12, 15, 19, 26]  # the 1st, the 15th and every Friday
    assert cadence_warnings(c) == [
        "this cron restricts both the day of the month (1,15) and the day of the week (5); standard cron fires when "
        "either matches, not only when both do"
    ]
    assert cadence_warnings(CronCadence("0 0 1 * *")) == []


@pytest.mark.parametrize(
    ("cadence", "words"),
    [
        (CronCadence("0 8 * * *", "Asia/Kolkata"), "every day at 08:00 Asia/Kolkata"),
        (CronCadence("0 9 * * 1", "Europe/Berlin"), "every Monday at 09:00 Europe/Berlin"),
        (CronCadence("30 7 * * 1-5", "Europe/Lisbon"), "every weekday (Monday to Friday) at 07:30 Europe/Lisbon"),
        (CronCadence("0 9,17 * * *", "UTC"), "every day at 09:00 and 17:00 UTC"),
        (CronCadence("0 0 1 1,7 *"), "on day 1 of the month in January and July at 00:00 UTC"),
        (CronCadence("*/15 * * * *"), "every 15 minutes"),
        (CronCadence("0 0 L * *"), "cron 0 0 L * * (UTC)"),
        (CronCadence("*/45 * * * *"), "at minutes 0 and 45 of every hour"),
        (CronCadence("0 22-2 * * *"), "every day at 00:00, 01:00, 02:00, 22:00 and 23:00 UTC"),
        (CronCadence("0 */5 * * *"), "every day at 00:00, 05:00, 10:00, 15:00 and 20:00 UTC"),
        (CronCadence("15 */6 * * *", "Asia/Kolkata"), "every day at 00:15, 06:15, 12:15 and 18:15 Asia/Kolkata"),
        (CronCadence("0 */2 * * *"), "every 2 hours at minute 0 (UTC)"),
        (
            CronCadence("0,30 9-17 * * 1-5", "Europe/Berlin"),
            "at minutes 0 and 30 of hours 9–17, every weekday (Monday to Friday) (Europe/Berlin)",
        ),
        (CronCadence("* 9-11 * * *"), "every minute of hours 9–11 (UTC)"),
        (CronCadence("5-55/10 * * * *"), "at minutes 5, 15, 25, 35, 45 and 55 of every hour"),
        (CronCadence("0 0 * * 5-1"), "every Sunday, Monday, Friday and Saturday at 00:00 UTC"),
        (CronCadence("0 0 1W * *"), "cron 0 0 1W * * (UTC)"),
        (IntervalCadence(7200), "every 2 hours"),
        (IntervalCadence(60), "every minute"),
        (IntervalCadence(90), "every 90 seconds"),
        (IntervalCadence(86400 * 3), "every 3 days"),
        (OnceCadence(utc(2037, 12, 1, 9, 30)), "once on 2037-12-01 09:30 UTC"),
    ],
)
def test_descriptions(cadence, words):
    assert describe(cadence) == words


def test_json_round_trip_is_sorted_and_compact():
    text = '{"expression":"0 8 * * *","timezone":"Asia/Kolkata","type":"cron"}'
    assert cadence_json(parse_cadence(text)) == text
    assert (
        cadence_json(parse_cadence({"type": "interval", "every_secs": 3600})) == '{"every_secs":3600,"type":"interval"}'
    )
    assert cadence_json(parse_cadence({"type": "once", "at": "2037-12-01T09:30:00Z"})) == (
        '{"at":"2037-12-01T09:30:00.000000+00:00","type":"once"}'
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"type": "cron", "expression": "0 8 * * *", "timezone": "Mars/Olympus"}, "unknown time zone 'Mars/Olympus'"),
        ({"type": "cron", "expression": "61 * * * *"}, "cron expression '61 * * * *': minute must be 0–59, not 61"),
        ({"type": "cron", "expression": "0 24 * * *"}, "cron expression '0 24 * * *': hour must be 0–23, not 24"),
        ({"type": "cron", "expression": "0 8 32 * *"}, "day of month must be 1–31, not 32"),
        ({"type": "cron", "expression": "0 8 * jam *"}, "month must be 1–12 or jan–dec, not 'jam'"),
        ({"type": "cron", "expression": "0 8 * * 1-9"}, "day of week must be 0–7 or sun–sat, not 9"),
        ({"type": "cron", "expression": "*/0 * * * *"}, "minute step must be a whole number of at least 1, not 0"),
        (
            {"type": "cron", "expression": "0 8 * *"},
            "cron expression '0 8 * *': expected 5 fields (minute hour day-of-month month day-of-week), got 4",
        ),
        (
            {"type": "cron", "expression": "*/10 * * * * *"},
            "expected 5 fields (minute hour day-of-month month day-of-week), got 6",
        ),
        ({"type": "interval", "every_secs": 30}, "interval of 30 seconds is below the minimum of 60"),
        ({"type": "interval", "every_secs": "3600"}, "a whole number of seconds"),
        ({"type": "once", "at": "tomorrow"}, "'tomorrow' is not an RFC 3339 time"),
        ({"type": "once", "at": "2037-12-01T09:30:00"}, "has no time zone offset"),
        ({"type": "weekly"}, "unknown cadence type 'weekly' (cron, interval or once)"),
        ("{not json", "cadence is not valid JSON"),
    ],
)
def test_validation_errors(value, message):
    with pytest.raises(InvalidInputError, match=message.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        parse_cadence(value)


def test_clock_dependent_validation(monkeypatch):
    with pytest.raises(InvalidInputError, match="one-shot time 2037-01-01T00:00:00.000000\\+00:00 is in the past"):
        validate_cadence(OnceCadence(utc(2037, 1, 1)), now=utc(2037, 6, 1))
    validate_cadence(OnceCadence(utc(2037, 7, 1)), now=utc(2037, 6, 1))
    monkeypatch.setattr(cad, "next_runs", lambda c, after, n: [utc(2037, 1, 1, 0, 0), utc(2037, 1, 1, 0, 0, 30)])
    with pytest.raises(InvalidInputError, match="fires 30 seconds apart; the minimum is 60"):
        validate_cadence(CronCadence("* * * * *"), now=utc(2036, 12, 31))


def test_format_in_timezone():
    c = CronCadence("0 8 * * *", "Asia/Kolkata")
    assert format_in_timezone("2037-11-23T02:30:00+00:00", c) == "2037-11-23 08:00 IST"
    assert format_in_timezone(utc(2037, 7, 1, 12), CronCadence("0 8 * * *", "Europe/Berlin")) == "2037-07-01 14:00 CEST"
    assert format_in_timezone(utc(2037, 7, 1, 12), IntervalCadence(60)) == "2037-07-01 12:00 UTC"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            {"type": "cron", "expression": "0 0 31 2 *"},
            "cron expression '0 0 31 2 *' never fires: February has no day 31",
        ),
        ({"type": "cron", "expression": "0 0 30 2 *"}, "never fires: February has no day 30"),
        ({"type": "cron", "expression": "0 0 30,31 2 *"}, "never fires: February has no day 30 or 31"),
        (
            {"type": "cron", "expression": "0 0 31 4,6,9,11 *"},
            "never fires: April, June, September and November have no day 31",
        ),
        (
            {"type": "cron", "expression": "0 8 * * *", "timezone": "Europe"},
            "'Europe' is a region, not a time zone: name a zone in it (e.g. Europe/…)",
        ),
        (
            {"type": "cron", "expression": "0 8 * * *", "timezone": "A" * 5000},
            "unknown time zone 'AAAAAAAAAAAAAAAAAAAA'… (5,000 characters; zone names are short)",
        ),
        ({"type": "cron", "expression": "0 8 * * *", "timezone": "../../etc/passwd"}, "unknown time zone"),
        ({"type": "cron", "expression": "0 8 * * *", "timezone": "x\x00y"}, "unknown time zone"),
        (
            {"type": "interval", "every_secs": 10**18},
            "interval of 1,000,000,000,000,000,000 seconds is longer than the maximum of 10 years "
            "(315,576,000 seconds)",
        ),
        ({"type": "interval", "every_secs": 10**5000}, "interval is longer than the maximum of 10 years"),
        (
            {"type": "once", "at": "9999-12-31T23:59:59-05:00"},
            "'9999-12-31T23:59:59-05:00' is outside the years 1970 to 9998",
        ),
        ({"type": "once", "at": "0001-01-01T00:00:00Z"}, "is outside the years 1970 to 9998"),
    ],
)
def test_cadences_that_cannot_work_are_refused_before_anything_is_written(value, message):
    with pytest.raises(InvalidInputError) as caught:
        parse_cadence(value)
    assert message in str(caught.value) and len(str(caught.value)) < 200


def test_the_29th_of_february_fires_in_leap_years_only():
    fires = next_runs(parse_cadence({"type": "cron", "expression": "0 0 29 2 *"}), utc(2037, 11, 22), 3)
    assert iso(fires) == ["2040-02-29T00:00:00+00:00", "2044-02-29T00:00:00+00:00", "2048-02-29T00:00:00+00:00"]


def test_next_runs_is_capped():
    assert len(next_runs(IntervalCadence(60), utc(2037, 1, 1), 1000)) == 1000
    for n in (1001, 2**70, 0, -1):
        with pytest.raises(InvalidInputError, match="count must be"):
            next_runs(IntervalCadence(60), utc(2037, 1, 1), n)


def test_foreign_rows_are_flagged_not_fatal():
    from oxmem_gui.core.schedules.calendar import calendar_items
    from oxmem_gui.core.schedules.store import Schedule

    def row(sid, cadence_json, next_run_at=None, status="active"):
        stamp = "2037-11-01T00:00:00.000000+00:00"
        return Schedule(
            sid, "u", sid, "g", cadence_json, "always", status, stamp, stamp, next_run_at, None, None, 0, None, None
        )

    rows = [
        row("zone", '{"type":"cron","expression":"0 8 * * *","timezone":"Mars/Base"}'),
        row("never", '{"type":"cron","expression":"0 0 31 2 *","timezone":"UTC"}'),
        row("garbled", '{"type":"interval","every_secs":3600}', "next tuesday"),
        row("status", '{"type":"interval","every_secs":3600}', status="sleeping"),
        row("fine", '{"type":"interval","every_secs":86400}', "2037-11-22T08:00:00.000000+00:00"),
    ]
    assert {r.schedule_id: r.problem for r in rows} == {
        "zone": "cadence: unknown time zone 'Mars/Base'",
        "never": "cadence: cron expression '0 0 31 2 *' never fires: February has no day 31",
        "garbled": "next run at 'next tuesday' is not an RFC 3339 time",
        "status": "unknown status 'sleeping'",
        "fine": None,
    }
    items = calendar_items(rows, [], utc(2037, 11, 22), utc(2037, 11, 25), utc(2037, 11, 22), "utc")
    assert {i.schedule_id for i in items} == {"fine"} and len(items) == 3
