"""Cadences of schedules (SPEC §9): cron in an IANA zone, a fixed interval, or one time.

Cron is standard five-field cron evaluated by croniter in the schedule's zone (``zoneinfo``) and converted to UTC;
on daylight-saving days it does what croniter does: a time that does not exist (02:30 on a spring-forward day
in New York) fires at the first valid minute after it (03:00 local), and a time that occurs twice (01:30 on a
fall-back day) fires on both occurrences. Every time returned is an aware UTC ``datetime``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadCronError, CroniterBadDateError, CroniterNotAlphaError, croniter

from .errors import InvalidInputError
from .indexing import dumps

CADENCE_TYPES = ("cron", "interval", "once")
MIN_INTERVAL_SECS = 60
MAX_FIRES = 200_000  # a guard for fires_between on cron: a month of "* * * * *" is 44,640


@dataclass(frozen=True)
class CronCadence:
    expression: str
    timezone: str = "UTC"
    type: str = "cron"


@dataclass(frozen=True)
class IntervalCadence:
    every_secs: int
    type: str = "interval"


@dataclass(frozen=True)
class OnceCadence:
    at: datetime  # aware, UTC
    type: str = "once"


Cadence = CronCadence | IntervalCadence | OnceCadence


# -- times -------------------------------------------------------------------------------------------------


def to_rfc3339(moment: datetime) -> str:
    """UTC with microseconds and ``+00:00``, as the agent writes schedule times."""
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def parse_time(text: str) -> datetime:
    """An RFC 3339 time (``Z`` or an offset required) as an aware UTC datetime."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except (ValueError, AttributeError) as exc:
        raise InvalidInputError(f"{text!r} is not an RFC 3339 time (e.g. 2026-12-01T09:30:00Z)") from exc
    if moment.tzinfo is None:
        raise InvalidInputError(f"{text!r} has no time zone offset (add Z or +HH:MM)")
    return moment.astimezone(timezone.utc)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def zone(name: str) -> ZoneInfo:
    if not isinstance(name, str) or not name.strip():
        raise InvalidInputError("time zone is empty")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidInputError(f"unknown time zone {name!r}") from exc


# -- parsing and serializing ---------------------------------------------------------------------------------


def _cron_iter(expression: str, tz: str, start: datetime) -> croniter:
    fields = expression.split()
    if len(fields) != 5:
        raise InvalidInputError(
            f"cron expression {expression!r} must have 5 fields (minute hour day-of-month month day-of-week), "
            f"it has {len(fields)}"
        )
    tzinfo = zone(tz)
    try:
        return croniter(expression, start.astimezone(tzinfo))
    except (CroniterBadCronError, CroniterNotAlphaError, CroniterBadDateError, ValueError, KeyError) as exc:
        raise InvalidInputError(f"cron expression {expression!r} is not valid: {exc}") from exc


def parse_cadence(value: str | Mapping[str, Any]) -> Cadence:
    """A cadence from its JSON form (text or object); checks its shape, zone and expression, not the clock."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"cadence is not valid JSON: {exc.msg}") from exc
    if not isinstance(value, Mapping):
        raise InvalidInputError("cadence must be a JSON object with a 'type'")
    kind = value.get("type")
    if kind == "cron":
        expression, tz = value.get("expression"), value.get("timezone", "UTC")
        if not isinstance(expression, str) or not expression.strip():
            raise InvalidInputError("cron cadence needs an 'expression'")
        cadence: Cadence = CronCadence(" ".join(expression.split()), tz)
        _cron_iter(cadence.expression, tz, utc_now())
        return cadence
    if kind == "interval":
        every = value.get("every_secs")
        if isinstance(every, bool) or not isinstance(every, int):
            raise InvalidInputError("interval cadence needs 'every_secs', a whole number of seconds")
        if every < MIN_INTERVAL_SECS:
            raise InvalidInputError(f"interval of {every} seconds is below the minimum of {MIN_INTERVAL_SECS}")
        return IntervalCadence(every)
    if kind == "once":
        at = value.get("at")
        if not isinstance(at, str):
            raise InvalidInputError("one-shot cadence needs 'at', an RFC 3339 time")
        return OnceCadence(parse_time(at))
    raise InvalidInputError(f"unknown cadence type {kind!r} (cron, interval or once)")


def cadence_dict(cadence: Cadence) -> dict[str, Any]:
    if isinstance(cadence, CronCadence):
        return {"type": "cron", "expression": cadence.expression, "timezone": cadence.timezone}
    if isinstance(cadence, IntervalCadence):
        return {"type": "interval", "every_secs": cadence.every_secs}
    return {"type": "once", "at": to_rfc3339(cadence.at)}


def cadence_json(cadence: Cadence) -> str:
    """The exact stored form: sorted keys, compact."""
    return dumps(cadence_dict(cadence))


def validate_cadence(cadence: Cadence, now: datetime | None = None) -> None:
    """Checks that depend on the clock: a cron's next two fires at least 60 s apart; a one-shot in the future."""
    now = now or utc_now()
    if isinstance(cadence, CronCadence):
        first, second = next_runs(cadence, now, 2)
        gap = (second - first).total_seconds()
        if gap < MIN_INTERVAL_SECS:
            raise InvalidInputError(
                f"cron expression {cadence.expression!r} fires {gap:g} seconds apart; the minimum is "
                f"{MIN_INTERVAL_SECS}"
            )
    elif isinstance(cadence, IntervalCadence):
        if cadence.every_secs < MIN_INTERVAL_SECS:
            raise InvalidInputError(
                f"interval of {cadence.every_secs} seconds is below the minimum of {MIN_INTERVAL_SECS}"
            )
    elif cadence.at <= now:
        raise InvalidInputError(f"one-shot time {to_rfc3339(cadence.at)} is in the past")


# -- fire times ---------------------------------------------------------------------------------------------


def next_run(cadence: Cadence, after: datetime) -> datetime | None:
    """The first fire strictly after ``after`` (UTC), or None (a one-shot whose time has come)."""
    if isinstance(cadence, OnceCadence):
        return cadence.at if cadence.at > after else None
    if isinstance(cadence, IntervalCadence):
        return after.astimezone(timezone.utc) + timedelta(seconds=cadence.every_secs)
    return _cron_iter(cadence.expression, cadence.timezone, after).get_next(datetime).astimezone(timezone.utc)


def next_runs(cadence: Cadence, after: datetime, n: int) -> list[datetime]:
    """The next ``n`` fires after ``after`` (fewer for a one-shot)."""
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise InvalidInputError(f"count must be a positive integer, got {n!r}")
    if isinstance(cadence, OnceCadence):
        return [cadence.at] if cadence.at > after else []
    if isinstance(cadence, IntervalCadence):
        step = timedelta(seconds=cadence.every_secs)
        return [after.astimezone(timezone.utc) + step * (i + 1) for i in range(n)]
    it = _cron_iter(cadence.expression, cadence.timezone, after)
    return [it.get_next(datetime).astimezone(timezone.utc) for _ in range(n)]


def fires_between(cadence: Cadence, start: datetime, end: datetime, anchor: datetime | None = None) -> list[datetime]:
    """Every fire in ``[start, end)`` (UTC), for a calendar.

    An interval fires at ``anchor + k × every_secs`` (k ≥ 0; ``anchor`` is the schedule's next run, default
    ``start``), computed by arithmetic — a 60-second interval over a month is 44,640 additions, not a search.
    Cron fires are enumerated by croniter (at most :data:`MAX_FIRES`).
    """
    if end <= start:
        return []
    if isinstance(cadence, OnceCadence):
        return [cadence.at] if start <= cadence.at < end else []
    if isinstance(cadence, IntervalCadence):
        anchor = anchor or start
        every = cadence.every_secs
        first = max(0, math.ceil((start - anchor).total_seconds() / every))
        last = math.ceil((end - anchor).total_seconds() / every)  # exclusive
        base = anchor.astimezone(timezone.utc)
        return [base + timedelta(seconds=every * k) for k in range(first, max(first, last))]
    it = _cron_iter(cadence.expression, cadence.timezone, start - timedelta(microseconds=1))
    fires = []
    while len(fires) < MAX_FIRES:
        moment = it.get_next(datetime).astimezone(timezone.utc)
        if moment >= end:
            break
        fires.append(moment)
    return fires


def format_in_timezone(utc: datetime | str, cadence: Cadence) -> str:
    """A UTC time shown in the schedule's zone (cron) or in UTC (other cadences): ``2026-11-23 08:00 IST``."""
    moment = parse_time(utc) if isinstance(utc, str) else utc
    tz = zone(cadence.timezone) if isinstance(cadence, CronCadence) else timezone.utc
    local = moment.astimezone(tz)
    return local.strftime("%Y-%m-%d %H:%M ") + (local.tzname() or "")


# -- words --------------------------------------------------------------------------------------------------

_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
_DAY_NAMES = {d[:3].lower(): i for i, d in enumerate(_DAYS)}
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_MONTH_NAMES = {m[:3].lower(): i + 1 for i, m in enumerate(_MONTHS)}


def _values(field: str, names: Mapping[str, int]) -> list[int] | None:
    """The values of a simple field (``a``, ``a,b``, ``a-b`` with numbers or names), else None."""
    out: list[int] = []
    for part in field.lower().split(","):
        bounds = part.split("-")
        if len(bounds) > 2:
            return None
        nums = []
        for b in bounds:
            if b.isdigit():
                nums.append(int(b))
            elif b in names:
                nums.append(names[b])
            else:
                return None
        out.extend(range(nums[0], nums[-1] + 1) if len(nums) == 2 else nums)
    return out


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _plural(n: int, unit: str) -> str:
    return f"every {unit}" if n == 1 else f"every {n} {unit}s"


def _days_phrase(dom: str, dow: str) -> str | None:
    parts = []
    if dom != "*":
        days = _values(dom, {})
        if days is None:
            return None
        parts.append(f"on day{'s' if len(days) > 1 else ''} {_join([str(d) for d in days])} of the month")
    if dow != "*":
        days = _values(dow, _DAY_NAMES)
        if days is None:
            return None
        days = sorted({d % 7 for d in days})
        if days == [1, 2, 3, 4, 5]:
            parts.append("every weekday (Monday to Friday)")
        elif days == [0, 6]:
            parts.append("every Saturday and Sunday")
        else:
            parts.append("every " + _join([_DAYS[d] for d in days]))
    return " and ".join(parts) if parts else "every day"


def _describe_cron(c: CronCadence) -> str:
    minute, hour, dom, month, dow = c.expression.split()
    days = _days_phrase(dom, dow)
    months = ""
    if month != "*":
        values = _values(month, _MONTH_NAMES)
        if values is None:
            return f"cron {c.expression} ({c.timezone})"
        months = " in " + _join([_MONTHS[m - 1] for m in values])
    minutes, hours = _values(minute, {}), _values(hour, {})
    if days is None:
        return f"cron {c.expression} ({c.timezone})"
    if minutes is not None and hours is not None and len(minutes) * len(hours) <= 6:
        times = _join([f"{h:02d}:{m:02d}" for h in hours for m in minutes])
        return f"{days}{months} at {times} {c.timezone}"
    if minute.startswith("*/") and minute[2:].isdigit() and hour == "*":
        what = _plural(int(minute[2:]), "minute")
    elif minute == "*" and hour == "*":
        what = "every minute"
    elif minutes is not None and len(minutes) == 1 and hour == "*":
        what = f"every hour at minute {minutes[0]}"
    elif minutes is not None and len(minutes) == 1 and hour.startswith("*/") and hour[2:].isdigit():
        what = f"{_plural(int(hour[2:]), 'hour')} at minute {minutes[0]}"
    else:
        return f"cron {c.expression} ({c.timezone})"
    when = "" if days == "every day" else f", {days}"
    zone_note = f" ({c.timezone})" if when or months else ""
    return f"{what}{when}{months}{zone_note}"


def describe(cadence: Cadence) -> str:
    """Words for a person: "every day at 08:00 Asia/Kolkata", "every 2 hours", "once on 2026-12-01 09:30 UTC"."""
    if isinstance(cadence, OnceCadence):
        fmt = "%Y-%m-%d %H:%M:%S" if cadence.at.second else "%Y-%m-%d %H:%M"
        return f"once on {cadence.at.strftime(fmt)} UTC"
    if isinstance(cadence, IntervalCadence):
        every = cadence.every_secs
        for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
            if every % size == 0:
                return _plural(every // size, unit)
        return _plural(every, "second")
    return _describe_cron(cadence)


def cadence_warnings(cadence: Cadence) -> list[str]:
    """Things a person probably did not mean; today: a cron restricting both day-of-month and day-of-week."""
    if isinstance(cadence, CronCadence):
        _, _, dom, _, dow = cadence.expression.split()
        if dom != "*" and dow != "*":
            return [
                f"this cron restricts both the day of the month ({dom}) and the day of the week ({dow}); standard "
                "cron fires when either matches, not only when both do"
            ]
    return []
