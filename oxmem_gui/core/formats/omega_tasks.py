"""Omega's scheduled tasks, edited and cancelled the way Omega does it.

Omega (``omgagi/omega`` at ce9f4b2, ``backend/crates/omega-memory/src/store/tasks.rs``) changes a task only while it
is ``pending``: ``update_task`` (lines 316–366) sets any of ``description``, ``due_at`` and ``repeat``
(``UPDATE scheduled_tasks SET … WHERE id LIKE ? AND sender_id = ? AND status = 'pending'``), ``cancel_task``
(lines 281–313) sets ``status = 'cancelled'`` under the same condition. It never deletes a task and never makes a
cancelled one pending again. ``create_task`` stores ``due_at`` as ``normalize_due_at`` leaves it (lines 381–384:
``YYYY-MM-DD HH:MM:SS``, UTC), and a repeating task is ``daily``, ``weekdays``, ``weekly`` or ``monthly`` from its
due time (lines 160–200); NULL is a one-shot.

Through the schedules interface (what the panel and ``oxmem schedules`` call): the goal is the description, a
once-cadence is ``due_at`` with no repeat, and a UTC cron that is one of Omega's repeats (``M H * * *``,
``M H * * 1-5``, ``M H * * D``, ``M H DOM * *``) is that ``repeat`` with ``due_at`` its next time; any other
cadence, a name (Omega's tasks have none: it is the description's first words), a notification policy, making one
active again, creating and deleting are refused, each with Omega's reason. Pausing is cancelling. Every edit carries
the task as loaded: a task the agent delivered, retried or changed since is a :class:`ConflictError` with the task
as it is now, and nothing is written. One ``BEGIN IMMEDIATE`` transaction each.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

import apsw

from ..database import write_transaction
from ..errors import ConflictError, InvalidInputError, NotFoundError
from ..schedules.cadence import next_run, parse_cadence
from ..schedules.store import Schedule
from ..store.inputs import check_text

#: ``(conn, task_id)`` → the task as a schedule, or None
ScheduleOf = Callable[[apsw.Connection, str], Schedule | None]

NEVER_DELETED = "Omega never deletes a task: cancel it instead (its row stays, cancelled)"
NEVER_REACTIVATED = "Omega never makes a cancelled or delivered task pending again"
NOT_CREATED = "Omega creates its tasks from what its users ask; oxmem edits and cancels them"
_CRON_REPEATS = (
    (re.compile(r"(\d+) (\d+) \* \* \*"), "daily"),
    (re.compile(r"(\d+) (\d+) \* \* 1-5"), "weekdays"),
    (re.compile(r"(\d+) (\d+) \* \* [0-7]"), "weekly"),
    (re.compile(r"(\d+) (\d+) (?:[1-9]|[12]\d|3[01]) \* \*"), "monthly"),
)


def due_text(when: datetime) -> str:
    """``normalize_due_at``'s form: ``YYYY-MM-DD HH:MM:SS`` in UTC."""
    return when.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _columns_for(cadence: str | Mapping[str, Any], now: datetime) -> tuple[str, str | None]:
    """A cadence as Omega's ``(due_at, repeat)``; :class:`InvalidInputError` when Omega has no such repeat."""
    parsed = parse_cadence(cadence if isinstance(cadence, str) else dict(cadence))
    if parsed.type == "once":
        when = next_run(parsed, now)
        if when is None:
            raise InvalidInputError("a one-shot task needs a time in the future; nothing was changed")
        return due_text(when), None
    expression = " ".join(str(getattr(parsed, "expression", "")).split())
    zone = getattr(parsed, "timezone", None)
    repeat = next((name for pattern, name in _CRON_REPEATS if pattern.fullmatch(expression)), None)
    if parsed.type != "cron" or repeat is None or zone not in ("UTC", "Etc/UTC"):
        raise InvalidInputError(
            "Omega repeats a task daily, on weekdays, weekly or monthly at its due time in UTC (cron 'M H * * *', "
            "'M H * * 1-5', 'M H * * D' or 'M H DOM * *', time zone UTC); nothing was changed"
        )
    when = next_run(parsed, now)
    assert when is not None
    return due_text(when), repeat


def _pending(conn: apsw.Connection, of: ScheduleOf, task_id: str, expected: Schedule | None) -> dict[str, Any]:
    """Inside the transaction: the task row, after checking it is still ``expected`` and pending."""
    current = of(conn, task_id)
    if expected is not None and current != expected:
        if current is None:
            raise ConflictError(
                f"task {task_id} was deleted by another program since it was loaded; nothing was changed"
            )
        raise ConflictError(
            f"task {task_id} was changed by Omega or another program since it was loaded; nothing was changed", current
        )
    if current is None:
        raise NotFoundError(f"no task {task_id!r}")
    row = conn.execute("SELECT sender_id, status FROM scheduled_tasks WHERE id = ?", (task_id,)).fetchall()[0]
    if row[1] != "pending":
        raise InvalidInputError(f"task {task_id} is {row[1]}: Omega changes only a pending task; nothing was changed")
    return {"sender_id": row[0], "schedule": current}


def update_task(
    conn: apsw.Connection,
    of: ScheduleOf,
    task_id: str,
    patch: Mapping[str, Any],
    now: datetime,
    expected: Schedule | None = None,
) -> Schedule:
    """Omega's ``update_task`` (description, due_at, repeat) or ``cancel_task`` (status paused/disabled) for one
    schedule patch; see the module's docstring for what maps to what."""
    with write_transaction(conn):
        found = _pending(conn, of, task_id, expected)
        current: Schedule = found["schedule"]
        sets: dict[str, Any] = {}
        cancel = False
        for field, value in patch.items():
            if field == "goal":
                if not isinstance(value, str) or not value.strip():
                    raise InvalidInputError("a task needs a description; nothing was changed")
                if value != current.goal:
                    sets["description"] = check_text(value, "description")
            elif field == "cadence":
                if parse_cadence(value if isinstance(value, str) else dict(value)) != current.cadence:
                    sets["due_at"], sets["repeat"] = _columns_for(value, now)
            elif field == "status":
                if value in ("paused", "disabled"):
                    cancel = True
                elif value != current.status:
                    raise InvalidInputError(f"{NEVER_REACTIVATED}; nothing was changed")
            elif field in ("name", "notification_policy", "channel_id", "channel_context_id"):
                if value != getattr(current, field):
                    raise InvalidInputError(
                        f"Omega's tasks have no {field.replace('_', ' ')} of their own (the name is the "
                        "description's first words); nothing was changed"
                    )
            else:
                raise InvalidInputError(f"cannot change {field} of an Omega task; nothing was changed")
        where = "WHERE id = ? AND sender_id = ? AND status = 'pending'"
        if sets:
            assignments = ", ".join(f"{column} = ?" for column in sets)
            conn.execute(
                f"UPDATE scheduled_tasks SET {assignments} {where}", (*sets.values(), task_id, found["sender_id"])
            )
        if cancel:
            conn.execute(f"UPDATE scheduled_tasks SET status = 'cancelled' {where}", (task_id, found["sender_id"]))
        result = of(conn, task_id)
        assert result is not None
        return result
