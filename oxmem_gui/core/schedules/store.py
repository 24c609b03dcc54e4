"""The scheduler store (contract §9): schedules with cadences, and their run history.

Every write is one transaction. Times are RFC 3339 UTC strings with microseconds, so they compare as text.
Choices where the contract is silent: a one-shot that ran successfully becomes ``completed``, one whose run
failed or was cancelled becomes ``disabled`` (it has no later fire; edit its time to run it again); a schedule
whose ``consecutive_failures`` reaches ``max_consecutive_failures`` (5 by default) becomes ``disabled``.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import apsw

from ..database import write_transaction
from ..errors import ConflictError, InvalidInputError, NotFoundError, OxmemError
from ..store.inputs import check_text
from .cadence import (
    Cadence,
    CronCadence,
    IntervalCadence,
    OnceCadence,
    cadence_json,
    next_run,
    parse_cadence,
    parse_time,
    to_rfc3339,
    utc_now,
    validate_cadence,
)

STATUSES = ("active", "paused", "completed", "disabled")
POLICIES = ("always", "conditional", "never")
RUN_STATUSES = ("success", "failed", "cancelled")
MAX_CONSECUTIVE_FAILURES = 5
PATCHABLE = ("name", "goal", "cadence", "notification_policy", "status", "channel_id", "channel_context_id")

_COLUMNS = (
    "schedule_id, user_id, name, goal, cadence_json, notification_policy, status, created_at, updated_at, "
    "next_run_at, last_run_at, last_run_status, consecutive_failures, channel_id, channel_context_id"
)
_RUN_COLUMNS = (
    "run_id, schedule_id, started_at, finished_at, status, output_summary, output, turn_count, cost, notified"
)


@dataclass
class Schedule:
    schedule_id: str
    user_id: str
    name: str | None
    goal: str
    cadence_json: str
    notification_policy: str
    status: str
    created_at: str
    updated_at: str
    next_run_at: str | None
    last_run_at: str | None
    last_run_status: str | None
    consecutive_failures: int
    channel_id: str | None
    channel_context_id: str | None
    #: a remark on how this row is shown (another agent's cron numbering), for the user; never an error
    note: str | None = None

    @property
    def cadence(self) -> Cadence:
        """The parsed cadence; :class:`InvalidInputError` for a row another program wrote badly."""
        return parse_cadence(self.cadence_json)

    @functools.cached_property
    def problem(self) -> str | None:
        """Why this row — written by another program — cannot be used as it is (shown flagged, never fatal):
        a cadence that does not parse or never fires, an unknown status, a time that is not RFC 3339. Computed
        once per row object (views ask for it on every paint)."""
        try:
            cadence = self.cadence
            if isinstance(cadence, CronCadence):
                next_run(cadence, utc_now())
        except OxmemError as exc:
            return f"cadence: {exc}"
        if self.status not in STATUSES:
            return f"unknown status {self.status!r}"
        for name in ("next_run_at", "last_run_at", "created_at", "updated_at"):
            value = getattr(self, name)
            if value is not None and time_or_none(value) is None:
                return f"{name.replace('_', ' ')} {str(value)[:40]!r} is not an RFC 3339 time"
        return None

    @property
    def next_run_time(self) -> datetime | None:
        """``next_run_at`` as an aware UTC time; None when absent or unreadable."""
        return time_or_none(self.next_run_at)


@dataclass
class ScheduleRun:
    run_id: str
    schedule_id: str
    started_at: str
    finished_at: str
    status: str
    output_summary: str | None
    output: str | None
    turn_count: int
    cost: float
    notified: bool


def time_or_none(value: Any) -> datetime | None:
    """An RFC 3339 time from a row, or None when it is missing or not one."""
    if not isinstance(value, str):
        return None
    try:
        return parse_time(value)
    except OxmemError:
        return None


def _choice(value: Any, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise InvalidInputError(f"{what} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"{what} must be a non-empty string")
    return check_text(value, what)


def _as_cadence(value: Cadence | str | Mapping[str, Any]) -> Cadence:
    return value if isinstance(value, (CronCadence, IntervalCadence, OnceCadence)) else parse_cadence(value)


def has_schedule_tables(conn: apsw.Connection) -> bool:
    """Whether the file has ``schedules`` and ``schedule_runs`` with every column read here (an early Oxydra file
    has neither, or lacks the columns its later migrations add)."""
    for table, columns in (("schedules", _COLUMNS), ("schedule_runs", _RUN_COLUMNS)):
        have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        if not {c.strip() for c in columns.split(",")} <= have:
            return False
    return True


def get_schedule(conn: apsw.Connection, schedule_id: str) -> Schedule:
    rows = conn.execute(f"SELECT {_COLUMNS} FROM schedules WHERE schedule_id = ?", (schedule_id,)).fetchall()
    if not rows:
        raise NotFoundError(f"no schedule {schedule_id!r}")
    return Schedule(*rows[0])


def create_schedule(
    conn: apsw.Connection,
    user_id: str,
    goal: str,
    cadence: Cadence | str | Mapping[str, Any],
    *,
    name: str | None = None,
    notification_policy: str = "always",
    channel_id: str | None = None,
    channel_context_id: str | None = None,
    now: datetime | None = None,
) -> Schedule:
    """Validate and insert an active schedule whose ``next_run_at`` is its first fire after ``now``."""
    now = now or utc_now()
    _text(user_id, "user")
    _text(goal, "goal")
    for value, what in ((name, "name"), (channel_id, "channel id"), (channel_context_id, "channel context id")):
        if value is not None:
            check_text(value, what)
    _choice(notification_policy, POLICIES, "notification policy")
    cad = _as_cadence(cadence)
    validate_cadence(cad, now)
    nxt = next_run(cad, now)
    stamp = to_rfc3339(now)
    schedule_id = str(uuid.uuid4())
    with write_transaction(conn):
        conn.execute(
            f"INSERT INTO schedules ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, NULL, NULL, 0, ?, ?)",
            (
                schedule_id,
                user_id,
                name,
                goal,
                cadence_json(cad),
                notification_policy,
                stamp,
                stamp,
                to_rfc3339(nxt) if nxt else None,
                channel_id,
                channel_context_id,
            ),
        )
    return get_schedule(conn, schedule_id)


def _filters(
    user_id: str | None, status: str | None, cadence_type: str | None, name_contains: str | None
) -> tuple[str, list[Any]]:
    where, args = ["1"], []
    if user_id is not None:
        where.append("user_id = ?")
        args.append(user_id)
    if status is not None:
        where.append("status = ?")
        args.append(_choice(status, STATUSES, "status"))
    if cadence_type is not None:
        where.append("json_extract(cadence_json, '$.type') = ?")
        args.append(cadence_type)
    if name_contains:
        escaped = name_contains.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        where.append("coalesce(name, '') LIKE ? ESCAPE '\\'")
        args.append(f"%{escaped}%")
    return " AND ".join(where), args


def search_schedules(
    conn: apsw.Connection,
    *,
    user_id: str | None = None,
    status: str | None = None,
    cadence_type: str | None = None,
    name_contains: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> list[Schedule]:
    """Schedules matching every given filter, newest first, a page at a time."""
    where, args = _filters(user_id, status, cadence_type, name_contains)
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM schedules WHERE {where} ORDER BY created_at DESC, schedule_id LIMIT ? OFFSET ?",
        (*args, limit, offset),
    ).fetchall()
    return [Schedule(*r) for r in rows]


def count_schedules(
    conn: apsw.Connection,
    *,
    user_id: str | None = None,
    status: str | None = None,
    cadence_type: str | None = None,
    name_contains: str | None = None,
) -> int:
    where, args = _filters(user_id, status, cadence_type, name_contains)
    return conn.execute(f"SELECT count(*) FROM schedules WHERE {where}", args).fetchall()[0][0]


def check_unchanged(conn: apsw.Connection, schedule_id: str, expected: Schedule | None) -> Schedule:
    """Inside a write transaction: the schedule as it is now. With ``expected`` (the row as the caller loaded
    it), any difference — the agent recorded a run, another program edited or deleted it — is a
    :class:`ConflictError` carrying the current row, and nothing is written."""
    try:
        current = get_schedule(conn, schedule_id)
    except NotFoundError:
        if expected is None:
            raise
        raise ConflictError(
            f"schedule {schedule_id} was deleted by another program since it was loaded; nothing was changed"
        ) from None
    if expected is not None and current != expected:
        raise ConflictError(
            f"schedule {schedule_id} was changed by another program since it was loaded (now updated "
            f"{current.updated_at}); nothing was changed",
            current,
        )
    return current


def delete_schedule(conn: apsw.Connection, schedule_id: str, expected: Schedule | None = None) -> int:
    """Delete a schedule and (by cascade) its runs; returns how many runs went with it. With ``expected``, a
    schedule changed since it was loaded is a :class:`ConflictError`."""
    with write_transaction(conn):
        check_unchanged(conn, schedule_id, expected)
        runs = conn.execute("SELECT count(*) FROM schedule_runs WHERE schedule_id = ?", (schedule_id,)).fetchall()
        conn.execute("DELETE FROM schedules WHERE schedule_id = ?", (schedule_id,))
    return runs[0][0]


def update_schedule(
    conn: apsw.Connection,
    schedule_id: str,
    patch: Mapping[str, Any],
    now: datetime | None = None,
    expected: Schedule | None = None,
) -> Schedule:
    """Apply a patch of :data:`PATCHABLE` fields in one transaction.

    Pausing clears ``next_run_at``; making a schedule active again recomputes it from ``now``; a new cadence is
    validated (a one-shot must be in the future) and, if the schedule is active, recomputes it too. With
    ``expected`` (the row as loaded), a schedule changed since is a :class:`ConflictError`.
    """
    now = now or utc_now()
    unknown = sorted(set(patch) - set(PATCHABLE))
    if unknown:
        raise InvalidInputError(f"cannot change {', '.join(unknown)} (changeable: {', '.join(PATCHABLE)})")
    with write_transaction(conn):
        current = check_unchanged(conn, schedule_id, expected)
        values = {
            k: getattr(current, k)
            for k in ("name", "goal", "notification_policy", "status", "channel_id", "channel_context_id")
        }
        values["cadence_json"] = current.cadence_json
        next_at = current.next_run_at
        if "goal" in patch:
            values["goal"] = _text(patch["goal"], "goal")
        if "notification_policy" in patch:
            values["notification_policy"] = _choice(patch["notification_policy"], POLICIES, "notification policy")
        for key in ("name", "channel_id", "channel_context_id"):
            if key in patch:
                values[key] = None if patch[key] is None else check_text(patch[key], key.replace("_", " "))
        recompute = False
        if "cadence" in patch:
            cad = _as_cadence(patch["cadence"])
            validate_cadence(cad, now)
            values["cadence_json"] = cadence_json(cad)
            recompute = True
        if "status" in patch:
            status = _choice(patch["status"], STATUSES, "status")
            recompute = recompute or (status == "active" and current.status != "active")
            values["status"] = status
        if values["status"] == "active" and recompute:
            nxt = next_run(parse_cadence(values["cadence_json"]), now)
            if nxt is None:
                raise InvalidInputError("cannot activate: the one-shot time has passed; give it a new time first")
            next_at = to_rfc3339(nxt)
        elif values["status"] != "active":
            next_at = None
        conn.execute(
            "UPDATE schedules SET name = ?, goal = ?, cadence_json = ?, notification_policy = ?, status = ?, "
            "channel_id = ?, channel_context_id = ?, next_run_at = ?, updated_at = ? WHERE schedule_id = ?",
            (
                values["name"],
                values["goal"],
                values["cadence_json"],
                values["notification_policy"],
                values["status"],
                values["channel_id"],
                values["channel_context_id"],
                next_at,
                to_rfc3339(now),
                schedule_id,
            ),
        )
    return get_schedule(conn, schedule_id)


def due_schedules(conn: apsw.Connection, now: datetime | None = None, limit: int = 100) -> list[Schedule]:
    """Active schedules whose next run is at or before ``now``, soonest first."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM schedules WHERE status = 'active' AND next_run_at IS NOT NULL "
        "AND next_run_at <= ? ORDER BY next_run_at, schedule_id LIMIT ?",
        (to_rfc3339(now or utc_now()), limit),
    ).fetchall()
    return [Schedule(*r) for r in rows]


def record_run_and_reschedule(
    conn: apsw.Connection,
    schedule_id: str,
    *,
    started_at: datetime,
    finished_at: datetime,
    status: str,
    output_summary: str | None = None,
    output: str | None = None,
    turn_count: int = 0,
    cost: float = 0.0,
    notified: bool = False,
    now: datetime | None = None,
    max_consecutive_failures: int = MAX_CONSECUTIVE_FAILURES,
) -> tuple[ScheduleRun, Schedule]:
    """In one transaction: insert the run, set ``last_run_*``, the failure count, the next run and status."""
    _choice(status, RUN_STATUSES, "run status")
    if finished_at < started_at:
        raise InvalidInputError("a run cannot finish before it started")
    now = now or finished_at
    run_id = str(uuid.uuid4())
    with write_transaction(conn):
        current = get_schedule(conn, schedule_id)
        failures = current.consecutive_failures + 1 if status == "failed" else 0
        new_status, next_at = current.status, None
        cadence = current.cadence
        if isinstance(cadence, OnceCadence):
            new_status = "completed" if status == "success" else "disabled"
        elif failures >= max_consecutive_failures:
            new_status = "disabled"
        elif current.status == "active":
            nxt = next_run(cadence, now)
            next_at = to_rfc3339(nxt) if nxt else None
        conn.execute(
            f"INSERT INTO schedule_runs ({_RUN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                schedule_id,
                to_rfc3339(started_at),
                to_rfc3339(finished_at),
                status,
                output_summary,
                output,
                turn_count,
                cost,
                int(notified),
            ),
        )
        conn.execute(
            "UPDATE schedules SET last_run_at = ?, last_run_status = ?, consecutive_failures = ?, status = ?, "
            "next_run_at = ?, updated_at = ? WHERE schedule_id = ?",
            (to_rfc3339(finished_at), status, failures, new_status, next_at, to_rfc3339(now), schedule_id),
        )
    return get_run(conn, run_id), get_schedule(conn, schedule_id)


def prune_run_history(conn: apsw.Connection, keep: int, schedule_id: str | None = None) -> int:
    """Keep each schedule's newest ``keep`` runs; returns how many were deleted."""
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 0:
        raise InvalidInputError(f"keep must be a non-negative integer, got {keep!r}")
    scope, args = ("WHERE schedule_id = ?", [schedule_id]) if schedule_id else ("", [])
    with write_transaction(conn):
        conn.execute(
            "DELETE FROM schedule_runs WHERE run_id IN (SELECT run_id FROM (SELECT run_id, row_number() OVER "
            f"(PARTITION BY schedule_id ORDER BY started_at DESC, run_id DESC) AS n FROM schedule_runs {scope}) "
            "WHERE n > ?)",
            (*args, keep),
        )
        return conn.changes()


def run_history(conn: apsw.Connection, schedule_id: str, limit: int = 50, offset: int = 0) -> list[ScheduleRun]:
    """A schedule's runs, newest first."""
    get_schedule(conn, schedule_id)
    rows = conn.execute(
        f"SELECT {_RUN_COLUMNS} FROM schedule_runs WHERE schedule_id = ? "
        "ORDER BY started_at DESC, run_id DESC LIMIT ? OFFSET ?",
        (schedule_id, limit, offset),
    ).fetchall()
    return [_run(r) for r in rows]


def _run(row: tuple) -> ScheduleRun:
    return ScheduleRun(*row[:9], bool(row[9]))


def get_run(conn: apsw.Connection, run_id: str) -> ScheduleRun:
    rows = conn.execute(f"SELECT {_RUN_COLUMNS} FROM schedule_runs WHERE run_id = ?", (run_id,)).fetchall()
    if not rows:
        raise NotFoundError(f"no run {run_id!r}")
    return _run(rows[0])


def runs_between(conn: apsw.Connection, start: datetime, end: datetime, limit: int = 20_000) -> list[ScheduleRun]:
    """Every schedule's runs that started in ``[start, end)``, oldest first (for a calendar)."""
    rows = conn.execute(
        f"SELECT {_RUN_COLUMNS} FROM schedule_runs WHERE started_at >= ? AND started_at < ? "
        "ORDER BY started_at, run_id LIMIT ?",
        (to_rfc3339(start), to_rfc3339(end), limit),
    ).fetchall()
    return [_run(r) for r in rows]


def run_count(conn: apsw.Connection, schedule_id: str) -> int:
    return conn.execute("SELECT count(*) FROM schedule_runs WHERE schedule_id = ?", (schedule_id,)).fetchall()[0][0]
