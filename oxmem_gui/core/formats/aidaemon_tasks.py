"""aidaemon's scheduled tasks, paused, resumed and deleted the way aidaemon's own tools do.

**Since v0.9** a schedule is a ``goal_schedules`` row of a goal. aidaemon (@ 39a1955) pauses or resumes one schedule
with ``manage_memories``' ``pause_scheduled`` / ``resume_scheduled`` given a ``schedule_id``
(``src/tools/manage_memories.rs`` 1248–1313): ``is_paused`` set and ``updated_at`` now through
``update_goal_schedule`` (``src/state/sqlite/goals.rs`` 824–853; the next run is not recomputed), and cancels one
with ``cancel_scheduled`` given a ``schedule_id`` (1198–1216): ``delete_goal_schedule``, ``DELETE FROM goal_schedules
WHERE id = ?`` (855–861). The goal itself is left as it is.

**Before v0.9**, ``scheduled_tasks``:

aidaemon (``davo20019/aidaemon`` at 672743d, the last commit with ``scheduled_tasks``, ``src/tools/scheduler.rs``)
lets its user pause a task — ``UPDATE scheduled_tasks SET is_paused = 1, updated_at = ? WHERE id = ?`` (lines
310–330) —, resume one — ``UPDATE scheduled_tasks SET is_paused = 0, next_run_at = ?, updated_at = ? WHERE id =
?`` with the next run computed from its ``cron_expr`` from now (lines 332–364) — and delete one — ``DELETE FROM
scheduled_tasks WHERE id = ?`` (lines 291–308); times are ``Utc::now().to_rfc3339()``. Nothing else of a task is
changed after it is created, so oxmem changes nothing else either: its goal, name and cadence are refused, and so is
creating one (aidaemon makes them from its scheduler tool and its config). Every change carries the task as
loaded: one the agent ran, rescheduled or removed since is a :class:`ConflictError` with the task as it is now.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

from ..database import write_transaction
from ..errors import ConflictError, InvalidInputError, NotFoundError
from ..schedules.cadence import next_run, parse_cadence
from ..schedules.store import Schedule
from .aidaemon_rows import five_field_cron

#: ``(conn, task_id)`` → the task as a schedule, or None
ScheduleOf = Callable[[Any, str], Schedule | None]

NOT_CREATED = "aidaemon creates its scheduled tasks itself (its scheduler and goal tools, its config); oxmem "
NOT_CREATED += "pauses, resumes and deletes them"
NOT_EDITED = "aidaemon's own tools only pause, resume and delete a scheduled task: its prompt, name and schedule stay"


def _rfc3339(when: datetime) -> str:
    return when.astimezone(timezone.utc).isoformat()


def _current(conn: Any, of: ScheduleOf, task_id: str, expected: Schedule | None) -> Schedule:
    current = of(conn, task_id)
    if expected is not None and current != expected:
        if current is None:
            raise ConflictError(f"task {task_id} was deleted by aidaemon since it was loaded; nothing was changed")
        raise ConflictError(f"task {task_id} was changed by aidaemon since it was loaded; nothing was changed", current)
    if current is None:
        raise NotFoundError(f"no scheduled task {task_id!r}")
    return current


def set_paused(
    conn: Any,
    of: ScheduleOf,
    task_id: str,
    patch: Mapping[str, Any],
    now: datetime,
    expected: Schedule | None = None,
) -> Schedule:
    """The tool's ``pause`` (status paused/disabled) or ``resume`` (status active: the next run from now by the
    task's ``cron_expr``); a field of ``patch`` other than the status that would change is refused."""
    with write_transaction(conn):
        current = _current(conn, of, task_id, expected)
        for field, value in patch.items():
            same = _cadence(current) == value if field == "cadence" else getattr(current, field, None) == value
            if field != "status" and not same:
                raise InvalidInputError(f"{NOT_EDITED}; nothing was changed")
        status = patch.get("status", current.status)
        if status == current.status:
            return current
        if _is_goal_schedule(conn, task_id):
            paused = status in ("paused", "disabled")
            if status not in ("paused", "disabled", "active"):
                raise InvalidInputError(f"unknown status {status!r}; nothing was changed")
            conn.execute(
                "UPDATE goal_schedules SET is_paused = ?, updated_at = ? WHERE id = ?",
                (int(paused), _rfc3339(now), task_id),
            )
        elif status in ("paused", "disabled"):
            conn.execute(
                "UPDATE scheduled_tasks SET is_paused = 1, updated_at = ? WHERE id = ?", (_rfc3339(now), task_id)
            )
        elif status == "active":
            (cron,) = conn.execute("SELECT cron_expr FROM scheduled_tasks WHERE id = ?", (task_id,)).fetchall()[0]
            expression, _ = five_field_cron(cron)
            conn.execute(
                "UPDATE scheduled_tasks SET is_paused = 0, next_run_at = ?, updated_at = ? WHERE id = ?",
                (_rfc3339(_next(expression, now)), _rfc3339(now), task_id),
            )
        else:
            raise InvalidInputError(f"unknown status {status!r}; nothing was changed")
        result = of(conn, task_id)
        assert result is not None
        return result


def _next(expression: str, now: datetime) -> datetime:
    """``compute_next_run``: the cron's next time after now, in UTC."""
    when = next_run(parse_cadence({"type": "cron", "expression": expression, "timezone": "UTC"}), now)
    assert when is not None
    return when


def _cadence(schedule: Schedule) -> Any:
    return json.loads(schedule.cadence_json)


def _is_goal_schedule(conn: Any, task_id: str) -> bool:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return "goal_schedules" in tables and bool(
        conn.execute("SELECT 1 FROM goal_schedules WHERE id = ?", (task_id,)).fetchall()
    )


def delete_task(conn: Any, of: ScheduleOf, task_id: str, expected: Schedule | None = None) -> int:
    """The tool's ``delete`` (before v0.9) or ``cancel_scheduled`` of one schedule (v0.9+): the row goes (neither
    layout keeps run history)."""
    with write_transaction(conn):
        _current(conn, of, task_id, expected)
        table = "goal_schedules" if _is_goal_schedule(conn, task_id) else "scheduled_tasks"
        conn.execute(f"DELETE FROM {table} WHERE id = ?", (task_id,))
    return 0
