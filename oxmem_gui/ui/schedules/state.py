"""What the Schedules panel shows, without Qt: the schedules listed, the one selected, the date the calendar is on,
the clock it reads ("now", which tests set), the last drag to undo, and the words and states of its list and
actions.

:class:`~.panel.SchedulesPanel` is a thin view of it. A calendar load asked for before the view moved on is dropped
when it arrives (``calendar_generation``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any

from ...core.api import Schedule, utc_now
from ..words import plural

DUE_SOON = timedelta(hours=1)
#: the schedule actions, by the name the formats' refusals use
ACTIONS = ("new", "edit", "pause", "resume", "delete", "undo")
#: the actions an agent may never take (:attr:`Capabilities.schedule_refusals`)
REFUSABLE = ("new", "edit", "resume", "delete")
PICK = "Select a schedule first"


@dataclass
class MoveRecord:
    """A one-shot dragged to another time: its cadence before, and the schedule as the move left it (undo refuses
    to overwrite a change another program made since)."""

    schedule_id: str
    previous: dict[str, Any]
    after: Schedule | None = None


@dataclass
class SchedulesState:
    """The Schedules panel's state (see the module's docstring)."""

    now: Callable[[], datetime] = utc_now
    zones: list[str] = field(default_factory=lambda: ["UTC"])
    schedules: list[Schedule] = field(default_factory=list)
    selected: str | None = None
    undo_move: MoveRecord | None = None
    #: the date every calendar view shows (switching views keeps it); None: today, by :attr:`now`
    anchor: date | None = None
    calendar_generation: int = 0

    def day(self) -> date:
        """The date the calendar is on."""
        if self.anchor is None:
            self.anchor = self.now().astimezone().date()
        return self.anchor

    def selected_schedule(self) -> Schedule | None:
        return next((s for s in self.schedules if s.schedule_id == self.selected), None)

    def select(self, schedule_id: str | None) -> int | None:
        """Select ``schedule_id``: its row, or None (and nothing selected) when it is not listed."""
        row = next((r for r, s in enumerate(self.schedules) if s.schedule_id == schedule_id), None)
        self.selected = schedule_id if row is not None else None
        return row

    def forget(self) -> None:
        """Another file: nothing listed, selected or to undo."""
        self.schedules, self.selected, self.undo_move = [], None, None

    def due_line(self) -> str:
        """How many are listed, how many fire within the hour, and how many cannot be read as they are."""
        now, found = self.now(), self.schedules
        soon = [s for s in found if s.status == "active" and (t := s.next_run_time) and t - now <= DUE_SOON]
        flagged = sum(1 for s in found if s.problem)
        unreadable = f" · ⚠ {flagged} cannot be read as {'it is' if flagged == 1 else 'they are'}" if flagged else ""
        return f"{plural(len(found), 'schedule')} · {len(soon)} due within the hour" + unreadable

    def actions(self, refusal: str | None, refused: Mapping[str, str]) -> dict[str, tuple[bool, str]]:
        """Each action (:data:`ACTIONS`): whether it applies now, and its tooltip. While the file refuses schedule
        edits (``refusal``) every one is off and says why; one the agent never takes (``refused``) says so."""
        if refusal is not None:
            return {name: (False, refusal) for name in ACTIONS}
        s = self.selected_schedule()
        status = s.status if s is not None else None
        states = {
            "new": (True, "Create a schedule"),
            "edit": (s is not None, "Edit the selected schedule" if s else PICK),
            "pause": (
                status == "active",
                "Stop it firing until resumed" if status == "active" else f"It is {status}" if s else PICK,
            ),
            "resume": (
                s is not None and status != "active",
                "It is active already" if status == "active" else "Let it fire again" if s else PICK,
            ),
            "delete": (s is not None, "Delete it with its run history" if s else PICK),
            "undo": (
                self.undo_move is not None,
                "Put the last dragged one-shot back" if self.undo_move else "Nothing was moved",
            ),
        }
        return {
            name: (False, f"{refused[name]}.") if name in refused and name in REFUSABLE else states[name]
            for name in ACTIONS
        }


def search_filters(status: str, cadence: str, name: str) -> dict[str, Any]:
    """The store's schedule search for the list's filters (``any status``, ``any cadence``: no filter)."""
    return dict(
        status=None if status == "any status" else status,
        cadence_type=None if cadence == "any cadence" else cadence,
        name_contains=name.strip() or None,
        limit=1000,
    )


def time_window(start: date, end: date, zone: tzinfo) -> tuple[datetime, datetime]:
    """The span a calendar of the days ``start``–``end`` loads: a day more each side, in the display zone (the
    margin covers schedules shown in their own zones)."""
    day = timedelta(days=1)
    return datetime.combine(start, time(), zone) - day, datetime.combine(end, time(), zone) + day
