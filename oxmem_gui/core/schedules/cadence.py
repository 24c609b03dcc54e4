"""Cadences of schedules (contract §9): cron in an IANA zone, a fixed interval, or one time.

Cron is standard five-field cron evaluated by croniter in the schedule's zone (``zoneinfo``) and converted to UTC;
on daylight-saving days it does what croniter does: a time that does not exist (02:30 on a spring-forward day
in New York) fires at the first valid minute after it (03:00 local), and a time that occurs twice (01:30 on a
fall-back day) fires on both occurrences. Every time returned is an aware UTC ``datetime``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadCronError, CroniterBadDateError, CroniterNotAlphaError, croniter

from ..embeddings.indexing import dumps
from ..errors import InvalidInputError
from ..store.inputs import check_positive, loads_strict, shown

CADENCE_TYPES = ("cron", "interval", "once")
MIN_INTERVAL_SECS = 60
#: Ten years: longer intervals are typing mistakes, and their fires would run off the calendar's end.
MAX_INTERVAL_SECS = 10 * 31_557_600
MAX_FIRES = 200_000  # a guard for fires_between on cron: a month of "* * * * *" is 44,640
#: The most fires :func:`next_runs` lists at once (previews, ``oxmem schedules next --count``).
MAX_NEXT_RUNS = 1000
#: One-shot times are kept inside years the calendar can show in any zone.
EARLIEST = datetime(1970, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(9999, 1, 1, tzinfo=timezone.utc)
MAX_ZONE_CHARS = 64


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
    """An RFC 3339 time (``Z`` or an offset required) as an aware UTC datetime, between 1970 and 9998."""
    shown = repr(text) if len(str(text)) <= 40 else repr(str(text)[:37] + "…")
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
        if moment.tzinfo is None:
            raise InvalidInputError(f"{shown} has no time zone offset (add Z or +HH:MM)")
        moment = moment.astimezone(timezone.utc)
    except OverflowError:
        raise InvalidInputError(f"{shown} is outside the years 1970 to 9998") from None
    except (ValueError, AttributeError, TypeError) as exc:
        if isinstance(exc, InvalidInputError):
            raise
        raise InvalidInputError(f"{shown} is not an RFC 3339 time (e.g. 2026-12-01T09:30:00Z)") from None
    if not EARLIEST <= moment < LATEST:
        raise InvalidInputError(f"{shown} is outside the years 1970 to 9998")
    return moment


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def zone(name: str) -> ZoneInfo:
    """The IANA zone ``name``; anything else (a region folder like ``Europe``, a path, a long string) is
    :class:`InvalidInputError` with one line."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidInputError("time zone is empty")
    if len(name) > MAX_ZONE_CHARS:
        raise InvalidInputError(f"unknown time zone {name[:20]!r}… ({len(name):,} characters; zone names are short)")
    try:
        return ZoneInfo(name)
    except IsADirectoryError:
        raise InvalidInputError(
            f"{name!r} is a region, not a time zone: name a zone in it (e.g. {name.rstrip('/')}/…)"
        ) from None
    except (ZoneInfoNotFoundError, ValueError, OSError, UnicodeError):
        raise InvalidInputError(f"unknown time zone {name!r}") from None


# -- parsing and serializing ---------------------------------------------------------------------------------


_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _cron_iter(expression: str, tz: str, start: datetime) -> croniter:
    fields = expression.split()
    if len(fields) != 5:
        raise InvalidInputError(
            f"cron expression {_shown(expression)}: expected 5 fields (minute hour day-of-month month day-of-week), "
            f"got {len(fields)}"
        )
    tzinfo = zone(tz)
    try:
        local = start.astimezone(tzinfo)
    except (OverflowError, ValueError):
        raise InvalidInputError("the next run would be after the year 9999") from None
    try:
        it = croniter(expression, local)
    except (CroniterBadCronError, CroniterNotAlphaError, CroniterBadDateError, ValueError, KeyError) as exc:
        problem = cron_field_problem(fields)
        if problem:
            raise InvalidInputError(f"cron expression {_shown(expression)}: {problem}") from None
        raise InvalidInputError(f"cron expression {_shown(expression)} is not valid: {exc}") from None
    impossible = _impossible_days(it.expanded)
    if impossible:
        raise InvalidInputError(f"cron expression {_shown(expression)} never fires: {impossible}")
    return it


#: each cron field: its name, its smallest and largest value, and the names it accepts (numbered from the smallest)
_CRON_FIELDS = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day of month", 1, 31, ()),
    ("month", 1, 12, ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")),
    ("day of week", 0, 7, ("sun", "mon", "tue", "wed", "thu", "fri", "sat")),
)


def cron_field_problem(fields: list[str]) -> str | None:
    """The first value of five cron ``fields`` outside its field's range, in words ("minute must be 0–59, not
    60", "month must be 1–12 or jan–dec, not 'jam'", "hour step must be a whole number of at least 1, not 0");
    None when every value is in range."""
    for text, (name, low, high, names) in zip(fields, _CRON_FIELDS, strict=False):
        allowed = f"{low}–{high}" + (f" or {names[0]}–{names[-1]}" if names else "")
        for atom in text.split(","):
            if not atom:
                return f"{name} has an empty item in {_short(text)}"
            base, _, step = atom.partition("/")
            if step and (not step.isdigit() or int(step) < 1):
                got = int(step) if step.isdigit() else _short(step)
                return f"{name} step must be a whole number of at least 1, not {got}"
            if base in ("*", "?"):
                continue
            values = base.split("-", 1)
            if not all(values):
                return f"{name} must be {allowed}, not {_short(base)}"
            for value in values:
                if value.isdigit():
                    if not low <= int(value) <= high:
                        return f"{name} must be {allowed}, not {int(value)}"
                elif value.lower() not in names:
                    return f"{name} must be {allowed}, not {_short(value)}"
    return None


def _short(text: str) -> str:
    return repr(text) if len(text) <= 20 else repr(text[:19] + "…")


def _shown(expression: str) -> str:
    return repr(expression) if len(expression) <= 60 else repr(expression[:57] + "…")


def _fields(expanded: list) -> list[list]:
    """croniter's expansion with a field that holds ``*`` anywhere (``*,2``) as plain ``*``: it means every value."""
    return [["*"] if "*" in field else field for field in expanded]


def _impossible_days(expanded: list) -> str | None:
    """Why a cron restricting only the day of the month names no day that exists in its months, else None."""
    _, _, days, months, weekdays = _fields(expanded)
    if days == ["*"] or weekdays != ["*"] or not all(isinstance(d, int) for d in days):
        return None
    months = list(range(1, 13)) if months == ["*"] else months
    if any(d <= _MONTH_DAYS[m - 1] for d in days for m in months):
        return None
    names = _join([_MONTHS[m - 1] for m in months])
    return f"{names} {'has' if len(months) == 1 else 'have'} no day {_join([str(d) for d in days], 'or')}"


def _next(it: croniter, expression: str) -> datetime:
    try:
        return it.get_next(datetime).astimezone(timezone.utc)
    except CroniterBadDateError:
        raise InvalidInputError(f"cron expression {_shown(expression)} never fires") from None
    except (OverflowError, ValueError):  # past the end of the calendar
        raise InvalidInputError("the next run would be after the year 9999") from None


def parse_cadence(value: str | Mapping[str, Any]) -> Cadence:
    """A cadence from its JSON form (text or object); checks its shape, zone and expression, not the clock."""
    if isinstance(value, str):
        try:
            value = loads_strict(value)
        except InvalidInputError as exc:
            raise InvalidInputError(f"cadence is {exc}") from None
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
        _check_interval(every)
        return IntervalCadence(every)
    if kind == "once":
        at = value.get("at")
        if not isinstance(at, str):
            raise InvalidInputError("one-shot cadence needs 'at', an RFC 3339 time")
        return OnceCadence(parse_time(at))
    raise InvalidInputError(f"unknown cadence type {shown(kind)} (cron, interval or once)")


def _check_interval(every: int) -> None:
    if every < MIN_INTERVAL_SECS:
        raise InvalidInputError(f"interval of {shown(every)} seconds is below the minimum of {MIN_INTERVAL_SECS}")
    if every > MAX_INTERVAL_SECS:
        raise InvalidInputError(
            f"interval of {every:,} seconds is longer than the maximum of 10 years ({MAX_INTERVAL_SECS:,} seconds)"
            if every.bit_length() < 200
            else "interval is longer than the maximum of 10 years"
        )


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
        _check_interval(cadence.every_secs)
    elif cadence.at <= now:
        raise InvalidInputError(f"one-shot time {to_rfc3339(cadence.at)} is in the past")


# -- fire times ---------------------------------------------------------------------------------------------


def next_run(cadence: Cadence, after: datetime) -> datetime | None:
    """The first fire strictly after ``after`` (UTC), or None (a one-shot whose time has come)."""
    if isinstance(cadence, OnceCadence):
        return cadence.at if cadence.at > after else None
    if isinstance(cadence, IntervalCadence):
        return _add(after, cadence.every_secs)
    return _next(_cron_iter(cadence.expression, cadence.timezone, after), cadence.expression)


def _add(moment: datetime, seconds: int) -> datetime:
    try:
        return moment.astimezone(timezone.utc) + timedelta(seconds=seconds)
    except OverflowError:
        raise InvalidInputError("the next run would be after the year 9999") from None


def next_runs(cadence: Cadence, after: datetime, n: int) -> list[datetime]:
    """The next ``n`` fires after ``after`` (fewer for a one-shot; ``n`` at most :data:`MAX_NEXT_RUNS`)."""
    check_positive(n, "count", MAX_NEXT_RUNS)
    if isinstance(cadence, OnceCadence):
        return [cadence.at] if cadence.at > after else []
    if isinstance(cadence, IntervalCadence):
        return [_add(after, cadence.every_secs * (i + 1)) for i in range(n)]
    it = _cron_iter(cadence.expression, cadence.timezone, after)
    return [_next(it, cadence.expression) for _ in range(n)]


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
        return [base + timedelta(seconds=every * k) for k in range(first, min(max(first, last), first + MAX_FIRES))]
    it = _cron_iter(cadence.expression, cadence.timezone, start - timedelta(microseconds=1))
    fires = []
    while len(fires) < MAX_FIRES:
        moment = _next(it, cadence.expression)
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
# Standard cron syntax in a field: *, numbers or three-letter names, ranges (wrapping ones too), steps, lists.
_ATOM = r"(?:\*|\d+|[a-z]{3})(?:-(?:\d+|[a-z]{3}))?(?:/\d+)?"
_STANDARD_FIELD = re.compile(rf"{_ATOM}(?:,{_ATOM})*")


def _join(words: list[str], conjunction: str = "and") -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" {conjunction} " + words[-1]


def _plural(n: int, unit: str) -> str:
    return f"every {unit}" if n == 1 else f"every {n} {unit}s"


def _runs(values: list[int]) -> str:
    """``[9, 10, 11, 12, 17]`` → ``"9–12 and 17"``."""
    groups: list[list[int]] = []
    for v in values:
        if groups and v == groups[-1][-1] + 1:
            groups[-1].append(v)
        else:
            groups.append([v])
    return _join([f"{g[0]}–{g[-1]}" if len(g) > 2 else ", ".join(map(str, g)) for g in groups])


def _step(field: str, size: int) -> int | None:
    """N for ``*/N`` when N divides ``size`` (so it fires evenly all day or all hour), else None."""
    if field.startswith("*/") and field[2:].isdigit() and int(field[2:]) and size % int(field[2:]) == 0:
        return int(field[2:])
    return None


def _days_phrase(days: list, weekdays: list) -> str:
    parts = []
    if days != ["*"]:
        parts.append(f"on day{'s' if len(days) > 1 else ''} {_join([str(d) for d in days])} of the month")
    if weekdays != ["*"]:
        chosen = sorted({d % 7 for d in weekdays})
        if chosen == [1, 2, 3, 4, 5]:
            parts.append("every weekday (Monday to Friday)")
        elif chosen == [0, 6]:
            parts.append("every Saturday and Sunday")
        else:
            parts.append("every " + _join([_DAYS[d] for d in chosen]))
    return " and ".join(parts) if parts else "every day"


def _describe_cron(c: CronCadence) -> str:
    """Words for what the expression does — from croniter's own expansion of each field, so steps that do not
    divide the hour (``*/45`` fires at :00 and :45) and wrapping ranges (``22-2``) are described as they fire."""
    raw = c.expression.lower().split()
    literal = f"cron {c.expression} ({c.timezone})"
    if len(raw) != 5 or not all(_STANDARD_FIELD.fullmatch(f) for f in raw):
        return literal
    try:
        minutes, hours, days, months, weekdays = _fields(croniter(c.expression).expanded)
    except Exception:  # noqa: BLE001 - a foreign row's expression: show it as it is
        return literal
    day_words = _days_phrase(days, weekdays)
    month_words = "" if months == ["*"] else " in " + _join([_MONTHS[m - 1] for m in months])
    if minutes != ["*"] and hours != ["*"] and len(minutes) * len(hours) <= 6:
        times = _join([f"{h:02d}:{m:02d}" for h in hours for m in minutes])
        return f"{day_words}{month_words} at {times} {c.timezone}"
    minute_step, hour_step = _step(raw[0], 60), _step(raw[1], 24)
    if minutes == ["*"]:
        what = "every minute" + ("" if hours == ["*"] else f" of hours {_runs(hours)}")
    elif minute_step and hours == ["*"]:
        what = _plural(minute_step, "minute")
    elif hours == ["*"]:
        at = f"minute {minutes[0]}" if len(minutes) == 1 else f"minutes {_join([str(m) for m in minutes])}"
        what = f"every hour at {at}" if len(minutes) == 1 else f"at {at} of every hour"
    elif len(minutes) == 1 and hour_step:
        what = f"{_plural(hour_step, 'hour')} at minute {minutes[0]}"
    else:
        at = f"minute {minutes[0]}" if len(minutes) == 1 else f"minutes {_join([str(m) for m in minutes])}"
        what = f"at {at} of hours {_runs(hours)}"
    when = "" if day_words == "every day" else f", {day_words}"
    zone_note = f" ({c.timezone})" if when or month_words or hours != ["*"] else ""
    return f"{what}{when}{month_words}{zone_note}"


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
