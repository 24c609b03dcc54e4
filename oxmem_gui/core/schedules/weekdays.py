"""Cron weekdays as another agent counts them: newer Oxydra's cron library numbers weekdays 1–7 from Sunday = 1
(standard cron: 0–6 from Sunday = 0), so ``0 8 * * 1`` is Sunday 08:00 to that agent and Monday here. The
schedules of such a file are shown either way (:class:`~.api.ScheduleStore`), and numeric weekdays are flagged.
"""

from __future__ import annotations

import re

WEEKDAY_NUMBERINGS = ("standard", "sunday-1")
NUMERIC_WEEKDAY_WARNING = (
    "numeric weekday: Oxydra counts weekdays from Sunday = 1 (its `1` is Sunday, standard cron's is Monday); "
    "switch the weekday numbering to see the days as the agent runs them"
)

_NUMBER = re.compile(r"\d+")


def weekday_field(expression: str) -> str | None:
    """The day-of-week field of a five-field cron expression (None when it has another shape)."""
    fields = expression.split()
    return fields[4] if len(fields) == 5 else None


def has_numeric_weekday(expression: str) -> bool:
    dow = weekday_field(expression)
    return dow is not None and bool(re.search(r"(^|[,\-])\d", dow))


def sunday_one_to_standard(expression: str) -> str:
    """An Oxydra cron expression (weekdays 1–7, Sunday = 1) in standard numbering (0–6, Sunday = 0).

    Only weekday *values* move (``1`` → ``0``, ``2-6`` → ``1-5``); steps (``*/2``), ``#`` occurrences and
    names stay as written. Other fields are untouched."""
    fields = expression.split()
    if len(fields) != 5:
        return expression

    def part(p: str) -> str:
        value, _, step = p.partition("/")
        value, hash_, nth = value.partition("#")
        value = _NUMBER.sub(lambda m: str((int(m.group()) - 1) % 7) if int(m.group()) <= 7 else m.group(), value)
        return value + hash_ + nth + (("/" + step) if step else "")

    fields[4] = ",".join(part(p) for p in fields[4].split(","))
    return " ".join(fields)
