"""``store.schedules``: the schedules of an open store, async, as its agent reads them."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from ..database import Database
from . import store as schedules
from .weekdays import NUMERIC_WEEKDAY_WARNING, has_numeric_weekday, sunday_one_to_standard


class ScheduleStore:
    """The async face of :mod:`.store` on a store's connection: ``store.schedules.create(...)``.

    Rows are shown as the store's agent reads them: in a newer Oxydra file a cron with numeric weekdays gets a
    ``note`` (or, with its weekday numbering switched on, the expression in standard numbering)."""

    def __init__(self, db: Database, writable: Callable[[], None], numbering: Callable[[], str | None]) -> None:
        """``writable()`` raises when schedules may not be changed now; ``numbering()`` is how the file's agent
        numbers cron weekdays when it differs from standard cron (``standard`` or ``sunday-1``, as chosen), or
        None when the file's cron is standard."""
        self._db = db
        self._writable = writable
        self._numbering = numbering

    def _shown(self, row: schedules.Schedule) -> schedules.Schedule:
        numbering = self._numbering()
        if numbering is None or not row.cadence_json:
            return row
        try:
            cadence = json.loads(row.cadence_json)
            expression = cadence.get("expression") if cadence.get("type") == "cron" else None
        except (ValueError, AttributeError):
            return row
        if not isinstance(expression, str) or not has_numeric_weekday(expression):
            return row
        if numbering == "standard":
            return dataclasses.replace(row, note=NUMERIC_WEEKDAY_WARNING)
        shown = {**cadence, "expression": sunday_one_to_standard(expression)}
        return dataclasses.replace(
            row,
            cadence_json=json.dumps(shown, sort_keys=True, separators=(",", ":")),
            note=f"stored as {expression!r}, weekdays counted from Sunday = 1 as the agent does",
        )

    async def create(self, user_id: str, goal: str, cadence: Any, **options: Any) -> schedules.Schedule:
        self._writable()
        return self._shown(await self._db.run(schedules.create_schedule, user_id, goal, cadence, **options))

    async def get(self, schedule_id: str) -> schedules.Schedule:
        return self._shown(await self._db.read(schedules.get_schedule, schedule_id))

    async def search(self, **filters: Any) -> list[schedules.Schedule]:
        return [self._shown(r) for r in await self._db.read(schedules.search_schedules, **filters)]

    async def count(self, **filters: Any) -> int:
        return await self._db.read(schedules.count_schedules, **filters)

    async def update(
        self,
        schedule_id: str,
        patch: Mapping[str, Any],
        now: datetime | None = None,
        *,
        expected: schedules.Schedule | None = None,
    ) -> schedules.Schedule:
        """Apply a patch; ``expected`` (the row as loaded) turns a change by another program since into
        :class:`ConflictError` with the current row, nothing written."""
        self._writable()
        return self._shown(await self._db.run(schedules.update_schedule, schedule_id, patch, now, expected))

    async def pause(self, schedule_id: str, *, expected: schedules.Schedule | None = None) -> schedules.Schedule:
        return await self.update(schedule_id, {"status": "paused"}, expected=expected)

    async def resume(self, schedule_id: str, *, expected: schedules.Schedule | None = None) -> schedules.Schedule:
        return await self.update(schedule_id, {"status": "active"}, expected=expected)

    async def delete(self, schedule_id: str, *, expected: schedules.Schedule | None = None) -> int:
        """Delete a schedule; returns how many runs were deleted with it."""
        self._writable()
        return await self._db.run(schedules.delete_schedule, schedule_id, expected)

    async def due(self, now: datetime | None = None, limit: int = 100) -> list[schedules.Schedule]:
        return [self._shown(r) for r in await self._db.read(schedules.due_schedules, now, limit)]

    async def record_run(self, schedule_id: str, **run: Any) -> tuple[schedules.ScheduleRun, schedules.Schedule]:
        """``record_run_and_reschedule``: one transaction."""
        self._writable()
        done, schedule = await self._db.run(schedules.record_run_and_reschedule, schedule_id, **run)
        return done, self._shown(schedule)

    async def prune_run_history(self, keep: int, schedule_id: str | None = None) -> int:
        self._writable()
        return await self._db.run(schedules.prune_run_history, keep, schedule_id)

    async def runs(self, schedule_id: str, limit: int = 50, offset: int = 0) -> list[schedules.ScheduleRun]:
        return await self._db.read(schedules.run_history, schedule_id, limit, offset)

    async def run(self, run_id: str) -> schedules.ScheduleRun:
        return await self._db.read(schedules.get_run, run_id)

    async def runs_between(self, start: datetime, end: datetime) -> list[schedules.ScheduleRun]:
        return await self._db.read(schedules.runs_between, start, end)

    async def run_count(self, schedule_id: str) -> int:
        return await self._db.read(schedules.run_count, schedule_id)
