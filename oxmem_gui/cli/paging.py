"""Pages on the command line: ``--limit``, ``--after`` and ``--offset`` of ``sessions``, ``events`` and ``notes
list``, read through the readers' page methods (``sessions_page``, ``events_page``, ``notes_page``) so a command
on a file of a million rows reads the page it prints, never the whole list.

A page is the ``--limit`` rows after the cursor ``--after`` (the last shown row's key, as the page method takes
it), past ``--offset`` more rows (walked a page at a time, never read at once). When rows follow the page, one
line ends standard error: ``more: --after CURSOR``, the next page being the same command with that ``--after``
(and no ``--offset``). A session's events asked for with neither ``--after`` nor ``--offset`` are its newest
``--limit`` (in order, as ``events --limit`` always showed them): found with a few page reads from the session's
count and last sequence, and followed by ``earlier: N events; from the first: --offset 0`` when there are more.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ..core.api import INT64_MAX, Event, Memory
from .arguments import int_in

#: rows a page holds when --limit is not given: today's whole list on any file but a big one
DEFAULT_LIMIT = 1000
#: rows read per step when --offset walks past rows
WALK = 1000
#: the lowest sequence --after takes
INT64_MIN = -(2**63)

T = TypeVar("T")
K = TypeVar("K")


def _key_arg(shape: str, second: type) -> Callable[[str], Any]:
    """``--after`` of sessions and notes: the JSON array ``more:`` printed, ``[text, second]``."""

    def parse(text: str) -> tuple[str, Any]:
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not isinstance(value[0], str)
            or not isinstance(value[1], second)
            or isinstance(value[1], bool)
            or (isinstance(value[1], int) and not INT64_MIN <= value[1] <= INT64_MAX)
        ):
            shown = text if len(text) <= 40 else text[:39] + "…"
            raise argparse.ArgumentTypeError(
                f"{shown!r} is not a cursor: give the one `more:` printed, a JSON array {shape}"
            )
        return value[0], value[1]

    return parse


#: sessions' cursor: ``["UPDATED_AT", "SESSION_ID"]`` (their order: updated desc, id asc)
session_cursor_arg = _key_arg('["UPDATED_AT","SESSION_ID"]', str)
#: notes' cursor: ``["UPDATED_AT", SEQUENCE]``, :func:`~oxmem_gui.core.api.note_cursor`
note_cursor_arg = _key_arg('["UPDATED_AT",SEQUENCE]', int)


def page_options(p: argparse.ArgumentParser, noun: str, after: Callable[[str], Any], after_help: str,
                 limit_help: str | None = None) -> None:  # fmt: skip
    """``--limit N``, ``--after CURSOR`` and ``--offset N`` of a command that lists ``noun``s."""
    p.add_argument(
        "--limit",
        type=int_in(1, INT64_MAX),
        default=None,
        metavar="N",
        help=limit_help or f"{noun}s per page (default: {DEFAULT_LIMIT:,}); when more follow, the last line on "
        "standard error is `more: --after CURSOR`, the next page's option",
    )
    p.add_argument("--after", type=after, default=None, metavar="CURSOR", help=after_help)
    p.add_argument(
        "--offset",
        type=int_in(0, INT64_MAX),
        default=None,
        metavar="N",
        help=f"skip N {noun}s first (after --after's cursor, when given), read a page at a time; --after is the "
        "quicker way on (default: 0)",
    )


def limit_of(args: argparse.Namespace) -> int:
    return DEFAULT_LIMIT if args.limit is None else int(args.limit)


def _plus_one(n: int) -> int:
    """``n + 1`` rows, to know whether more follow, within SQLite's 64-bit LIMIT."""
    return n + 1 if n < INT64_MAX else n


async def page(
    fetch: Callable[[K | None, int], Awaitable[list[T]]],
    key: Callable[[T], K],
    after: K | None,
    offset: int | None,
    limit: int,
) -> tuple[list[T], K | None]:
    """The ``limit`` rows after ``after`` past ``offset`` more, and the cursor of the next page (None: none
    follows). ``fetch(cursor, n)`` is a page method: the ``n`` rows after ``cursor`` (None: from the first)."""
    cursor = after
    skip = offset or 0
    while skip > 0:
        rows = await fetch(cursor, min(WALK, skip))
        if not rows:
            return [], None
        skip -= len(rows)
        cursor = key(rows[-1])
    rows = await fetch(cursor, _plus_one(limit))
    if len(rows) > limit:
        return rows[:limit], key(rows[limit - 1])
    return rows, None


async def newest_events(store: Memory, session_id: str, limit: int) -> tuple[list[Event], int]:
    """The session's newest ``limit`` events, in order, and how many come before them — read through
    ``events_page`` alone, a page a step: the first page tells a short session whole; a longer one's count and last
    sequence (``session_stats``) place the tail where the sequences' density puts it (exact in one more read when
    they are dense), else the search narrows ``(low, high]`` — more than ``limit`` events after ``low``, at most
    ``limit`` after ``high`` — by the density of the events found after ``high``, halving every other step."""
    head = await store.events_page(session_id, None, _plus_one(limit))
    if len(head) <= limit:
        return head, 0
    stats = (await store.session_stats([session_id])).get(session_id)
    count = stats.event_count if stats else 0
    last = stats.last_sequence if stats else None
    if last is None or count <= limit or last - limit <= head[0].sequence - 1:  # changed between the reads
        return head[:limit], 0
    low, low_rows = head[0].sequence - 1, head  # the first limit + 1 events after low
    high, high_rows = last - limit, None  # every event after high, once read
    span = last - head[0].sequence + 1
    probe = last - math.ceil(limit * span / count)  # where the tail starts if the sequences are evenly spread
    for step in range(260):  # (a 64-bit range halves in at most 64 of every other step)
        if high_rows is not None and low_rows[-1].sequence > high:  # the reads so far hold every event after low
            found = [e for e in low_rows if e.sequence <= high] + high_rows
            return found[-limit:], max(count - limit, 0)
        if high - low <= 1:
            break
        if not low < probe < high and not (probe == high and high_rows is None):
            probe = (low + high) // 2
        rows = await store.events_page(session_id, probe, _plus_one(limit))
        if len(rows) == limit:
            return rows, max(count - limit, 0)
        if len(rows) > limit:
            low, low_rows = probe, rows
        else:
            high, high_rows = probe, rows
        if high_rows is None:  # what follows high tells the density there
            probe = high
        elif step % 2 == 1:
            probe = (low + high) // 2
        elif not high_rows:  # no event after high: twice as far down
            probe = high - 2 * (last - high + 1)
        else:  # as many more events before high as the density after it puts there
            probe = high - math.ceil((limit - len(high_rows)) * (last - high) / len(high_rows))
    rows = await store.events_page(session_id, high, limit)
    return rows, max(count - len(rows), 0)


def _cursor_text(cursor: Any) -> str:
    """The cursor as ``--after`` takes it, quoted for a shell: a sequence as it is, a key as compact JSON (ASCII:
    a control character of a session id is escaped, so the line is safe on a terminal)."""
    if isinstance(cursor, int):
        return str(cursor)
    return shlex.quote(json.dumps(list(cursor), ensure_ascii=True, separators=(",", ":")))


def say_more(cursor: Any) -> None:
    """``more: --after CURSOR`` on standard error, after what the page printed, when rows follow."""
    if cursor is None:
        return
    sys.stdout.flush()
    sys.stderr.write(f"more: --after {_cursor_text(cursor)}\n")


def say_earlier(earlier: int) -> None:
    if earlier > 0:
        sys.stdout.flush()
        sys.stderr.write(f"earlier: {earlier:,} events; from the first: --offset 0\n")


def from_start(args: argparse.Namespace) -> bool:
    """Whether a page counts from the first row (or a cursor), not from the newest."""
    return args.after is not None or args.offset is not None
