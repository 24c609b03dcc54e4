"""The Schedules panel's state without Qt (ui/schedules/state.py): the clock it reads, the date the calendar is on,
selection, the list's due line and each action's state and tooltip, the store's filters and the calendar's window."""

from __future__ import annotations

import asyncio
from datetime import date, datetime, timedelta, timezone

import pytest

from oxmem_gui.core.api import MemoryStore
from oxmem_gui.core.demo import fill_demo
from oxmem_gui.ui.schedules.state import ACTIONS, MoveRecord, SchedulesState, search_filters, time_window

NOW = datetime(2037, 11, 23, 12, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def listed(tmp_path_factory):
    """The demo's seven schedules, as the store lists them."""

    async def read():
        store = await MemoryStore.open(tmp_path_factory.mktemp("demo") / "demo.db", embedding="deterministic")
        await fill_demo(store, now=NOW)
        found = await store.schedules.search(limit=1000)
        await store.aclose()
        return found

    return asyncio.run(read())


def by_name(schedules, name):
    return next(s for s in schedules if s.name == name)


def test_the_calendar_starts_on_the_clocks_day_not_the_machines():
    state = SchedulesState(now=lambda: datetime(2031, 2, 3, 23, 30, tzinfo=timezone.utc))
    assert state.anchor is None
    day = state.day()
    assert day == datetime(2031, 2, 3, 23, 30, tzinfo=timezone.utc).astimezone().date() and state.anchor == day


def test_the_due_line_counts_what_fires_within_the_hour_by_the_states_clock(listed):
    state = SchedulesState(now=lambda: NOW, schedules=list(listed))
    assert state.due_line() == "7 schedules · 1 due within the hour"  # Inbox watch, at 12:47
    state.now = lambda: datetime(2037, 11, 24, 7, 0, tzinfo=timezone.utc)
    assert state.due_line() == "7 schedules · 2 due within the hour"  # and the briefing at 07:30


def test_selecting_an_unlisted_schedule_selects_nothing(listed):
    state = SchedulesState(schedules=list(listed))
    briefing = by_name(listed, "Morning briefing")
    assert state.select(briefing.schedule_id) == listed.index(briefing) and state.selected_schedule() == briefing
    assert state.select("no-such-id") is None and state.selected is None and state.selected_schedule() is None
    state.select(briefing.schedule_id)
    state.undo_move = MoveRecord(briefing.schedule_id, {"kind": "once"})
    state.forget()
    assert (state.schedules, state.selected, state.undo_move) == ([], None, None)


def test_each_action_applies_when_it_should_and_says_why_not(listed):
    state = SchedulesState(schedules=list(listed))
    none = state.actions(None, {})
    assert list(none) == list(ACTIONS)
    assert {name: enabled for name, (enabled, _) in none.items()} == {
        "new": True, "edit": False, "pause": False, "resume": False, "delete": False, "undo": False,
    }  # fmt: skip
    assert none["edit"][1] == "Select a schedule first" and none["undo"][1] == "Nothing was moved"
    state.select(by_name(listed, "Water the tomatoes").schedule_id)
    paused = state.actions(None, {})
    assert paused["pause"] == (False, "It is paused") and paused["resume"] == (True, "Let it fire again")
    state.select(by_name(listed, "Morning briefing").schedule_id)
    active = state.actions(None, {"delete": "Omega never deletes a task: cancel it instead"})
    assert active["pause"] == (True, "Stop it firing until resumed")
    assert active["resume"] == (False, "It is active already")
    assert active["delete"] == (False, "Omega never deletes a task: cancel it instead.")
    read_only = "Read-only: choose Edit ▸ Enable Editing (Ctrl+E) first; a backup is taken."
    assert set(state.actions(read_only, {}).values()) == {(False, read_only)}


def test_the_filters_and_the_calendars_window():
    assert search_filters("any status", "any cadence", "  ") == {
        "status": None, "cadence_type": None, "name_contains": None, "limit": 1000,
    }  # fmt: skip
    assert search_filters("paused", "cron", " fare ") == {
        "status": "paused", "cadence_type": "cron", "name_contains": "fare", "limit": 1000,
    }  # fmt: skip
    start, end = time_window(date(2037, 11, 1), date(2037, 12, 6), timezone(timedelta(hours=1)))
    assert start == datetime(2037, 10, 31, 0, 0, tzinfo=timezone(timedelta(hours=1)))
    assert end == datetime(2037, 12, 7, 0, 0, tzinfo=timezone(timedelta(hours=1)))
