"""Where ``packaging/shifted-dates.sh`` starts the clock for its run across a change of daylight saving time.

``python -m tests.shifted_dates`` prints, in Europe/Berlin's local time, the moment three minutes before that
zone's next change of UTC offset after now (``2027-03-28 01:57:00`` for any day of the winter before it).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

ZONE = "Europe/Berlin"
#: how long before the change the clock starts: the suite's first minutes run on one side, the rest on the other
LEAD = timedelta(minutes=3)


def before_next_change(now: datetime, zone: str = ZONE) -> datetime:
    """The local time ``LEAD`` before ``zone``'s first change of UTC offset after ``now`` (an aware time)."""
    tz = ZoneInfo(zone)
    at = now.astimezone(timezone.utc).replace(minute=0, second=0, microsecond=0)
    offset = at.astimezone(tz).utcoffset()
    for step in (timedelta(hours=1), timedelta(minutes=1)):  # to the last hour, then the last minute, before it
        while (at + step).astimezone(tz).utcoffset() == offset:
            at += step
    return (at + timedelta(minutes=1) - LEAD).astimezone(tz)


if __name__ == "__main__":
    print(before_next_change(datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M:%S"))
