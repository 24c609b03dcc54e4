"""The schedule list's table model alone (ui/schedules/model.py), on a fixed clock: each column's text, the colours
and tooltips, rows another program wrote badly flagged ⚠, the countdown following the clock, and a schedule in
words for the conflict dialog."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from oxmem_gui.core.api import Schedule
from oxmem_gui.ui.schedules.calendar_views import schedule_color
from oxmem_gui.ui.schedules.model import ScheduleListModel, schedule_text

NOW = datetime(2037, 11, 23, 12, 0, tzinfo=timezone.utc)
TIP = Qt.ItemDataRole.ToolTipRole
PEN = Qt.ItemDataRole.ForegroundRole
RED = QColor("#c0392b")  # a problem, failures in a row, and a failed last run
EVERY_2H = '{"type":"interval","every_secs":7200}'


def schedule(schedule_id: str, name: str | None, cadence_json: str, **given) -> Schedule:
    fields = {
        "status": "active",
        "next_run_at": None,
        "last_run_at": None,
        "last_run_status": None,
        "consecutive_failures": 0,
        "note": None,
        **given,
    }
    return Schedule(
        schedule_id=schedule_id,
        user_id="alice",
        name=name,
        goal="Check the fares",
        cadence_json=cadence_json,
        notification_policy="always",
        created_at="2037-11-01T08:00:00Z",
        updated_at="2037-11-20T08:00:00Z",
        channel_id=None,
        channel_context_id=None,
        **fields,
    )


FARES = schedule(
    "s1",
    "Fares",
    EVERY_2H,
    next_run_at="2037-11-23T15:20:00Z",
    last_run_at="2037-11-23T07:30:12Z",
    last_run_status="failed",
    consecutive_failures=2,
)
ONCE = schedule("s2", None, '{"type":"once","at":"2037-12-01T09:30:00Z"}', status="paused", note="Sunday is 7 here")
BROKEN = schedule("s3", "Broken", '{"type":"weekly"}', next_run_at="next tuesday")


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def model(qtbot, clock):
    model = ScheduleListModel(clock)
    model.set_rows([FARES, ONCE, BROKEN])
    return model


def texts(model, row):
    return [model.index(row, c).data() for c in range(model.columnCount())]


def test_each_column_says_its_part_of_the_schedule(model):
    assert model.COLUMNS == ("Name", "Goal", "Cadence", "Status", "Next run", "Last run", "Fails")
    assert sorted(model.SHOWN) == list(range(7))
    assert texts(model, 0) == [
        "Fares",
        "Check the fares",
        "every 2 hours",
        "active",
        "15:20 (in 3 h 20 min)",
        "2037-11-23 07:30 failed",
        "2",
    ]
    assert texts(model, 1) == [
        "(unnamed)",
        "Check the fares",
        "once on 2037-12-01 09:30 UTC ⓘ",
        "paused",
        "—",
        "—",
        "0",
    ]
    assert model.index(3, 0).data() is None


def test_a_row_written_badly_is_flagged_in_red_with_what_is_wrong(model):
    problem = "cadence: unknown cadence type 'weekly' (cron, interval or once)"
    assert texts(model, 2)[:5] == ["⚠ Broken", "Check the fares", f"⚠ {problem}", "active", "⚠ next tuesday"]
    assert model.index(2, 0).data(PEN).color() == model.index(2, 2).data(PEN).color() == RED
    assert model.index(2, 0).data(TIP) == (
        '⚠ Broken\n\ns3\nCheck the fares\n{"type":"weekly"}\n'
        f"⚠ written by another program in a form oxmem cannot use: {problem}"
    )
    model.set_rows([schedule("s4", "Odd", EVERY_2H, status="sleeping")])
    assert texts(model, 0)[:4] == ["⚠ Odd", "Check the fares", "⚠ unknown status 'sleeping'", "sleeping"]


def test_colours_name_each_schedule_and_mark_failures(model):
    assert model.index(0, 0).data(PEN).color() == schedule_color("s1")
    assert model.index(0, 5).data(PEN).color() == RED  # the last run failed
    assert model.index(0, 6).data(PEN).color() == RED  # 2 failures in a row
    assert model.index(1, 5).data(PEN) is None and model.index(1, 6).data(PEN) is None
    assert [model.index(0, c).data(PEN) for c in (1, 2, 3, 4)] == [None] * 4


def test_tooltips_hold_the_full_times_and_the_schedules_identity(model):
    assert model.index(0, 4).data(TIP) == "next run 2037-11-23 15:20 UTC (in 3 h 20 min)"
    assert model.index(0, 5).data(TIP) == "last run 2037-11-23T07:30:12Z failed"
    assert model.index(0, 3).data(TIP) == "active" and model.index(0, 6).data(TIP) == "2"
    assert model.index(1, 2).data(TIP) == (
        'once on 2037-12-01 09:30 UTC ⓘ\n\ns2\nCheck the fares\n{"type":"once","at":"2037-12-01T09:30:00Z"}\n'
        "ⓘ Sunday is 7 here"
    )


def test_a_tick_repaints_only_the_countdowns_which_follow_the_clock(model, clock):
    changed = []
    model.dataChanged.connect(
        lambda first, last, *_: changed.append((first.row(), first.column(), last.row(), last.column()))
    )
    clock.now = NOW + timedelta(hours=3, minutes=5)
    model.tick()
    assert changed == [(0, 4, 2, 4)]
    assert model.index(0, 4).data() == "15:20 (in 15 min)"
    clock.now = NOW + timedelta(hours=4)
    assert model.index(0, 4).data() == "23 Nov 15:20 (due)"
    model.set_rows([])
    model.tick()
    assert len(changed) == 1  # nothing listed: nothing to repaint


def test_a_schedule_in_words_for_the_conflict_dialog():
    assert schedule_text(FARES) == (
        "name: Fares\ngoal: Check the fares\ncadence: every 2 hours\nstatus: active\n"
        "next run: 2037-11-23T15:20:00Z\nlast run: 2037-11-23T07:30:12Z failed\nfailures in a row: 2\n"
        "updated 2037-11-20T08:00:00Z"
    )
    assert schedule_text(ONCE).splitlines()[:6] == [
        "name: (unnamed)",
        "goal: Check the fares",
        "cadence: once on 2037-12-01 09:30 UTC",
        "status: paused",
        "next run: —",
        "last run: —",
    ]
