"""``ScheduleStore``, the async face of a store's schedules: rows shown in the agent's cron weekday numbering (a
note, or the expression moved to standard numbering), every write asking ``writable()`` first, runs read back."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from oxmem_gui.core.errors import ReadOnlyError
from oxmem_gui.core.schedules.api import ScheduleStore
from oxmem_gui.core.schedules.weekdays import NUMERIC_WEEKDAY_WARNING

NOW = datetime(2037, 11, 22, 2, 30, tzinfo=timezone.utc)
MONDAY = {"type": "cron", "expression": "0 8 * * 1", "timezone": "UTC"}  # its Sunday to newer Oxydra


class Switch:
    """What the store says: the weekday numbering shown, and whether writes are refused."""

    def __init__(self) -> None:
        self.numbering: str | None = None
        self.refusal: str | None = None

    def writable(self) -> None:
        if self.refusal:
            raise ReadOnlyError(self.refusal)


@pytest.fixture
def setup(store):
    switch = Switch()
    schedules = ScheduleStore(store.inner._db, switch.writable, lambda: switch.numbering)

    def run(coro):
        return store.loop.run_until_complete(coro)

    return store, schedules, switch, run


def test_rows_are_as_stored_when_the_file_numbers_weekdays_the_standard_way(setup):
    _, schedules, _, run = setup
    made = run(schedules.create("alice", "plan the week", MONDAY, now=NOW))
    got = run(schedules.get(made.schedule_id))
    assert got == made and got.note is None
    assert got.cadence_json == '{"expression":"0 8 * * 1","timezone":"UTC","type":"cron"}'


def test_standard_numbering_flags_only_numeric_cron_weekdays(setup):
    _, schedules, switch, run = setup
    cadences = {
        "numeric": MONDAY,
        "range": {"type": "cron", "expression": "30 9 * * 1-5", "timezone": "UTC"},
        "named": {"type": "cron", "expression": "0 8 * * MON", "timezone": "UTC"},
        "daily": {"type": "cron", "expression": "0 8 * * *", "timezone": "UTC"},
        "interval": {"type": "interval", "every_secs": 3600},
    }
    for name, cadence in cadences.items():
        run(schedules.create("alice", name, cadence, name=name, now=NOW))
    switch.numbering = "standard"
    notes = {s.name: s.note for s in run(schedules.search())}
    assert notes == {
        "numeric": NUMERIC_WEEKDAY_WARNING,
        "range": NUMERIC_WEEKDAY_WARNING,
        "named": None,
        "daily": None,
        "interval": None,
    }
    due = run(schedules.due(NOW + timedelta(days=8)))
    assert {s.name: s.note for s in due} == notes
    made = run(schedules.create("alice", "also on Mondays", MONDAY, now=NOW))  # a row written is shown as read
    assert made.note == NUMERIC_WEEKDAY_WARNING
    _, rescheduled = run(schedules.record_run(made.schedule_id, started_at=NOW, finished_at=NOW, status="success"))
    assert rescheduled.note == NUMERIC_WEEKDAY_WARNING


def test_sunday_one_numbering_shows_the_expression_in_standard_numbering(setup):
    store, schedules, switch, run = setup
    made = run(schedules.create("alice", "plan the week", {**MONDAY, "expression": "0 8 * * 2-6"}, now=NOW))
    switch.numbering = "sunday-1"
    shown = run(schedules.get(made.schedule_id))
    assert json.loads(shown.cadence_json) == {"expression": "0 8 * * 1-5", "timezone": "UTC", "type": "cron"}
    assert shown.cadence_json == '{"expression":"0 8 * * 1-5","timezone":"UTC","type":"cron"}'
    assert shown.note == "stored as '0 8 * * 2-6', weekdays counted from Sunday = 1 as the agent does"
    stored = store.sql("SELECT cadence_json FROM schedules WHERE schedule_id = ?", (made.schedule_id,))
    assert stored == [('{"expression":"0 8 * * 2-6","timezone":"UTC","type":"cron"}',)]  # only shown, not written


@pytest.mark.parametrize("cadence_json", ["not json", "[1, 2]", '{"type": "cron", "expression": 5}'])
def test_a_cadence_another_program_wrote_badly_is_shown_as_it_is(setup, cadence_json):
    store, schedules, switch, run = setup
    made = run(schedules.create("alice", "plan", MONDAY, now=NOW))
    store.exec_sql("UPDATE schedules SET cadence_json = ? WHERE schedule_id = ?", (cadence_json, made.schedule_id))
    for numbering in ("standard", "sunday-1"):
        switch.numbering = numbering
        got = run(schedules.get(made.schedule_id))
        assert (got.cadence_json, got.note) == (cadence_json, None)


def test_every_write_asks_writable_first_and_changes_nothing_when_refused(setup):
    store, schedules, switch, run = setup
    made = run(schedules.create("alice", "hourly", {"type": "interval", "every_secs": 3600}, now=NOW))
    later = NOW + timedelta(minutes=1)
    run(schedules.record_run(made.schedule_id, started_at=NOW, finished_at=later, status="success"))
    before = store.sql("SELECT * FROM schedules"), store.sql("SELECT * FROM schedule_runs")
    switch.refusal = "schedules are read-only here"
    writes = [
        lambda: schedules.create("bob", "g", {"type": "interval", "every_secs": 600}, now=NOW),
        lambda: schedules.update(made.schedule_id, {"goal": "other"}, NOW),
        lambda: schedules.pause(made.schedule_id),
        lambda: schedules.resume(made.schedule_id),
        lambda: schedules.delete(made.schedule_id),
        lambda: schedules.record_run(made.schedule_id, started_at=NOW, finished_at=NOW, status="failed"),
        lambda: schedules.prune_run_history(0),
    ]
    for write in writes:
        with pytest.raises(ReadOnlyError, match="^schedules are read-only here$"):
            run(write())
    assert (store.sql("SELECT * FROM schedules"), store.sql("SELECT * FROM schedule_runs")) == before
    assert (run(schedules.count()), run(schedules.run_count(made.schedule_id))) == (1, 1)  # reads still work


def test_runs_are_read_back_by_id_by_schedule_and_by_time(setup):
    _, schedules, _, run = setup
    made = run(schedules.create("alice", "hourly", {"type": "interval", "every_secs": 3600}, now=NOW))
    recorded = []
    for hour, status in ((0, "success"), (1, "failed"), (2, "success")):
        start = NOW + timedelta(hours=hour)
        got, _ = run(
            schedules.record_run(
                made.schedule_id, started_at=start, finished_at=start + timedelta(minutes=5), status=status
            )
        )
        recorded.append(got)
    assert run(schedules.run(recorded[1].run_id)) == recorded[1]
    assert [r.status for r in run(schedules.runs(made.schedule_id))] == ["success", "failed", "success"]
    assert run(schedules.runs(made.schedule_id, limit=1, offset=1)) == [recorded[1]]
    window = run(schedules.runs_between(NOW + timedelta(minutes=30), NOW + timedelta(hours=2)))
    assert [(r.started_at, r.status) for r in window] == [("2037-11-22T03:30:00.000000+00:00", "failed")]
    assert run(schedules.run_count(made.schedule_id)) == 3
    assert run(schedules.delete(made.schedule_id)) == 3
    assert run(schedules.run_count(made.schedule_id)) == 0
