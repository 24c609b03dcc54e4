"""What a schedule calendar shows for a window of time: future fires and past runs, placed in a display zone.

Fires come from :func:`cadence.fires_between` (an interval is anchored at the schedule's next run, so its fires
are the scheduler's); only active schedules fire, and only from ``now`` on. Runs come from ``schedule_runs``.
Times are grouped by the calendar day (and hour) they fall on in the display zone: the viewer's local zone, UTC,
or each schedule's own zone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone, tzinfo

from ..errors import OxmemError
from .cadence import CronCadence, IntervalCadence, fires_between, zone
from .store import Schedule, ScheduleRun, time_or_none

ZONE_MODES = ("local", "utc", "schedule")


@dataclass(frozen=True)
class CalendarItem:
    schedule_id: str
    kind: str  # "fire" | "run"
    at: datetime  # UTC
    shown: datetime  # in the display zone
    status: str | None = None  # a run's status
    run_id: str | None = None


def display_tz(mode: str, schedule: Schedule | None, local: tzinfo) -> tzinfo:
    if mode == "utc":
        return timezone.utc
    if mode == "schedule" and schedule is not None:
        try:
            cadence = schedule.cadence
        except OxmemError:
            return local
        return zone(cadence.timezone) if isinstance(cadence, CronCadence) else timezone.utc
    return local


def calendar_items(
    schedules: Sequence[Schedule],
    runs: Iterable[ScheduleRun],
    start: datetime,
    end: datetime,
    now: datetime,
    mode: str = "local",
    local: tzinfo | None = None,
) -> list[CalendarItem]:
    """Fires of active schedules in ``[max(start, now), end)`` and runs that started in ``[start, end)``."""
    local = local or datetime.now().astimezone().tzinfo
    by_id = {s.schedule_id: s for s in schedules}
    items = []
    for s in schedules:
        if s.status != "active":
            continue
        if s.problem:  # a foreign row that cannot be read: listed flagged, not drawn
            continue
        cadence = s.cadence
        tz = display_tz(mode, s, local)
        anchor = s.next_run_time if isinstance(cadence, IntervalCadence) else None
        for moment in fires_between(cadence, max(start, now), end, anchor=anchor):
            items.append(CalendarItem(s.schedule_id, "fire", moment, moment.astimezone(tz)))
    for r in runs:
        moment = time_or_none(r.started_at)
        if moment is not None and start <= moment < end:
            tz = display_tz(mode, by_id.get(r.schedule_id), local)
            items.append(CalendarItem(r.schedule_id, "run", moment, moment.astimezone(tz), r.status, r.run_id))
    items.sort(key=lambda i: (i.at, i.kind, i.schedule_id))
    return items


def by_day(items: Iterable[CalendarItem]) -> dict[date, list[CalendarItem]]:
    days: dict[date, list[CalendarItem]] = defaultdict(list)
    for item in items:
        days[item.shown.date()].append(item)
    return dict(days)


def by_hour(items: Iterable[CalendarItem]) -> dict[tuple[date, int], list[CalendarItem]]:
    cells: dict[tuple[date, int], list[CalendarItem]] = defaultdict(list)
    for item in items:
        cells[(item.shown.date(), item.shown.hour)].append(item)
    return dict(cells)


@dataclass(frozen=True)
class CellLine:
    """One line of a calendar cell: a single item, or a schedule's many fires folded into a count."""

    schedule_id: str
    kind: str
    count: int
    first: CalendarItem


def cell_lines(items: Sequence[CalendarItem], fold_above: int = 3) -> list[CellLine]:
    """A cell's lines: a schedule's fires (or its runs of one status) one by one, or one counted line when there
    are more than ``fold_above`` of them in the cell — an hourly job shows "×24", not 24 lines."""
    groups: dict[tuple[str, str, str | None], list[CalendarItem]] = defaultdict(list)
    for item in items:
        groups[(item.schedule_id, item.kind, item.status)].append(item)
    lines: list[CellLine] = []
    for (sid, kind, _), group in groups.items():
        if len(group) > fold_above:
            lines.append(CellLine(sid, kind, len(group), group[0]))
        else:
            lines += [CellLine(sid, kind, 1, item) for item in group]
    lines.sort(key=lambda line: (line.first.shown, line.kind))
    return lines
