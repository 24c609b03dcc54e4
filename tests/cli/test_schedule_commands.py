"""``oxmem schedules``: list, add, update, next, pause, resume, delete and runs, run in-process as a user would
type them, and their mistakes in one line."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import apsw
import pytest

from tests.cli._support import run, run_json


def test_schedules_commands(capsys, db):
    made = run_json(
        capsys,
        "--db",
        db,
        "schedules",
        "add",
        "--user",
        "alice",
        "--goal",
        "Morning briefing",
        "--cron",
        "0 8 * * *",
        "--tz",
        "Asia/Kolkata",
        "--name",
        "brief",
    )
    sid = made["schedule_id"]
    (row,) = run_json(capsys, "--db", db, "schedules", "list", "--user", "alice")
    assert (row["schedule_id"], row["name"], row["status"]) == (sid, "brief", "active")
    assert row["cadence_json"] == '{"expression":"0 8 * * *","timezone":"Asia/Kolkata","type":"cron"}'
    nxt = run_json(capsys, "--db", db, "schedules", "next", sid, "--count", "3")["next"]
    assert len(nxt) == 3 and all(t.endswith("T02:30:00.000000+00:00") for t in nxt)
    assert run_json(capsys, "--db", db, "schedules", "pause", sid) == {
        "schedule_id": sid,
        "status": "paused",
        "next_run_at": None,
    }
    resumed = run_json(capsys, "--db", db, "schedules", "resume", sid)
    assert resumed["status"] == "active" and resumed["next_run_at"] == nxt[0]
    assert run_json(capsys, "--db", db, "schedules", "runs", sid) == []
    changed = run_json(
        capsys, "--db", db, "schedules", "update", sid, "--goal", "Evening briefing", "--cron", "0 20 * * *"
    )
    assert (changed["goal"], changed["cadence"]) == (
        "Evening briefing",
        {"expression": "0 20 * * *", "timezone": "UTC", "type": "cron"},
    )
    code, out, err = run(capsys, "--db", db, "schedules", "update", sid)
    assert (code, out) == (
        2,
        "",
    ) and err == "oxmem: error: nothing to change: give --goal, --name, or a new --cron/--every/--at\n"
    code, out, err = run(
        capsys, "--db", db, "schedules", "add", "--user", "bob", "--goal", "g", "--cron", "0 0 1,15 * 5"
    )
    assert code == 0 and "on days 1 and 15 of the month and every Friday at 00:00 UTC" in out
    assert err.startswith("oxmem: warning: this cron restricts both the day of the month (1,15)")
    assert run_json(capsys, "--db", db, "schedules", "list", "--type", "interval") == []
    assert run_json(capsys, "--db", db, "schedules", "delete", sid) == {"deleted": sid, "runs": 0}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--every", "30"], "interval of 30 seconds is below the minimum of 60"),
        (["--at", "2020-01-01T00:00:00Z"], "one-shot time 2020-01-01T00:00:00.000000+00:00 is in the past"),
        (["--at", "next tuesday"], "'next tuesday' is not an RFC 3339 time"),
        (["--cron", "0 8 * * *", "--tz", "Mars/Base"], "unknown time zone 'Mars/Base'"),
        (["--cron", "0 25 * * *"], "cron expression '0 25 * * *': hour must be 0–23, not 25"),
        (
            ["--cron", "0 8 *"],
            "cron expression '0 8 *': expected 5 fields (minute hour day-of-month month day-of-week), got 3",
        ),
        (["--every", "60", "--cron", "* * * * *"], "not allowed with argument"),
    ],
)
def test_schedule_errors(capsys, db, argv, message):
    code, out, err = run(capsys, "--db", db, "schedules", "add", "--user", "u", "--goal", "g", *argv)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("oxmem: error: ") and message in err
    run(capsys, "--db", db, "init")  # every add above failed: no store was created
    code, _, err = run(capsys, "--db", db, "schedules", "pause", "nope")
    assert (code, err) == (2, "oxmem: error: no schedule 'nope'\n")


def test_next_of_a_one_shot_that_has_passed_says_so(capsys, tmp_path):
    db = str(tmp_path / "m.db")
    soon = (datetime.now(timezone.utc) + timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")  # relative to the CLI's now
    made = run_json(capsys, "--db", db, "schedules", "add", "--user", "bob", "--goal", "g", "--at", soon)
    conn = apsw.Connection(db)
    conn.execute(
        "UPDATE schedules SET cadence_json = ? WHERE schedule_id = ?",
        ('{"type":"once","at":"2021-03-04T05:06:07Z"}', made["schedule_id"]),
    )
    conn.close()
    code, out, err = run(capsys, "--db", db, "schedules", "next", made["schedule_id"])
    assert code == 0 and err == ""
    assert out == f"{made['schedule_id']}: no future fires (once on 2021-03-04 05:06:07 UTC)\n"
    assert run_json(capsys, "--db", db, "schedules", "next", made["schedule_id"]) == {"next": []}
