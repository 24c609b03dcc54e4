"""The schedule list: its table model (name, goal, cadence in words, status, a countdown to the next run, the
last run, failures in a row; a row another program wrote badly flagged ⚠) and a schedule in words."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush

from ...core.api import Schedule, describe, time_or_none
from ..rows_model import RowsModel
from .calendar_views import STATUS, schedule_color


def countdown(stamp: str | None, now: datetime) -> str:
    """When ``stamp`` (UTC) comes, short: ``08:00 (in 3 h 20 min)`` within a day, ``30 Nov 08:00 (in 5 d)``
    later, ``30 Nov 08:00 (due)`` once passed (:func:`full_countdown` gives the year and the rest)."""
    return _countdown(stamp, now, short=True)


def full_countdown(stamp: str | None, now: datetime) -> str:
    """``2026-11-30 08:00 UTC (in 5 d 23 h)``: a cell's tooltip."""
    return _countdown(stamp, now, short=False)


def _countdown(stamp: str | None, now: datetime, short: bool) -> str:
    if not stamp:
        return "—"
    when = time_or_none(stamp)
    if when is None:
        return f"⚠ {stamp[:40]}"
    seconds = (when - now).total_seconds()
    if not short:
        shown = when.strftime("%Y-%m-%d %H:%M UTC")
    else:
        shown = when.strftime("%H:%M" if 0 <= seconds < 86400 else "%d %b %H:%M")
    if seconds < 0:
        return f"{shown} (due)"
    parts = []
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            parts.append(f"{int(seconds // size)} {unit}")
            seconds %= size
    kept = parts[:1] if short and (when - now).days else parts[:2]
    return f"{shown} (in {' '.join(kept) or '<1 min'})"


def words(schedule: Schedule) -> str:
    """The cadence in words; a row another program wrote badly says what is wrong with it, flagged ⚠."""
    problem = schedule.problem
    return f"⚠ {problem}" if problem else describe(schedule.cadence)


def schedule_text(s: Schedule) -> str:
    """A schedule as the conflict dialog shows it."""
    last = f"{s.last_run_at or '—'} {s.last_run_status or ''}".strip()
    return (
        f"name: {s.name or '(unnamed)'}\ngoal: {s.goal}\ncadence: {words(s)}\nstatus: {s.status}\n"
        f"next run: {s.next_run_at or '—'}\nlast run: {last}\nfailures in a row: {s.consecutive_failures}\n"
        f"updated {s.updated_at}"
    )


class ScheduleListModel(RowsModel):
    COLUMNS = ("Name", "Goal", "Cadence", "Status", "Next run", "Last run", "Fails")
    #: the order the list shows them in: what a narrow pane must show first, the long goal last
    SHOWN = (0, 3, 4, 6, 2, 5, 1)

    def __init__(self, now: Any, parent: Any = None) -> None:
        super().__init__(parent)
        self.now = now

    @property
    def schedules(self) -> list[Schedule]:
        return self.rows

    def key(self, row: Schedule) -> str:
        return row.schedule_id

    def set_rows(self, rows: list[Schedule], live: bool = False) -> None:
        """List ``rows`` (``live``: a re-read after another program wrote, whose changes are marked)."""
        self.marks.observe(rows, live)
        super().set_rows(rows)

    def tick(self) -> None:
        if self.rows:
            self.dataChanged.emit(self.index(0, 4), self.index(len(self.rows) - 1, 4))

    def data(self, index: Any, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.schedules):
            return None
        s, col = self.schedules[index.row()], index.column()
        marked = self.marks.data(s, col, role)
        if marked is not None:
            return marked
        if role == Qt.ItemDataRole.DisplayRole:
            return self.cell_text(s, col)
        if role == Qt.ItemDataRole.ForegroundRole:
            if col in (0, 2) and s.problem:
                return QBrush("#c0392b")
            if col == 0:
                return QBrush(schedule_color(s.schedule_id))
            if col == 5 and s.last_run_status in STATUS:
                return QBrush(STATUS[s.last_run_status][1])
            if col == 6 and s.consecutive_failures:
                return QBrush("#c0392b")
        if role == Qt.ItemDataRole.ToolTipRole:
            text = self.cell_text(s, col)
            if col == 4:
                text = f"next run {full_countdown(s.next_run_at, self.now())}"
            if col == 5 and s.last_run_at:
                text = f"last run {s.last_run_at} {s.last_run_status or ''}".strip()
            if col not in (0, 1, 2):
                return text
            problem = s.problem
            flag = f"\n⚠ written by another program in a form oxmem cannot use: {problem}" if problem else ""
            note = f"\nⓘ {s.note}" if s.note else ""
            return f"{text}\n\n{s.schedule_id}\n{s.goal}\n{s.cadence_json}{flag}{note}"
        return None

    def cell_text(self, s: Schedule, col: int) -> str:
        """A cell's text in full (the table may elide it; its tooltip holds it whole)."""
        if col == 0:
            return ("⚠ " if s.problem else "") + (s.name or "(unnamed)")
        if col == 1:
            return s.goal
        if col == 2:
            return words(s) + (" ⓘ" if s.note else "")
        if col == 3:
            return s.status
        if col == 4:
            return countdown(s.next_run_at, self.now())
        if col == 5:
            return f"{(s.last_run_at or '')[:16].replace('T', ' ')} {s.last_run_status or ''}".strip() or "—"
        return str(s.consecutive_failures)
