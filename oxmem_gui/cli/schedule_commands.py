"""``oxmem schedules``: an agent's schedules and their runs, listed, added, changed, paused, resumed and deleted
the way the file's agent does. Each action is its arguments and its handler."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

from ..core.api import (
    CADENCE_TYPES,
    INT64_MAX,
    MAX_NEXT_RUNS,
    POLICIES,
    STATUSES,
    InvalidInputError,
    Memory,
    Schedule,
    cadence_warnings,
    describe,
    format_in_timezone,
    next_runs,
    to_rfc3339,
    utc_now,
)
from .arguments import int_in, text_arg
from .text import preview, print_json, safe, text_table


def id_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("schedule_id", type=text_arg)


def list_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", type=text_arg, default=None, metavar="U", help="only this user's (default: every user's)")
    p.add_argument("--status", choices=STATUSES, default=None, help="only schedules in this status (default: any)")
    p.add_argument(
        "--type", choices=CADENCE_TYPES, default=None, dest="cadence_type", help="only this cadence (default: any)"
    )
    p.add_argument("--name", type=text_arg, default=None, help="only names containing this (default: any name)")
    p.add_argument("--limit", type=int_in(1, INT64_MAX), default=100, metavar="N", help="at most N (default: 100)")


async def list_schedules(store: Memory, args: argparse.Namespace) -> int:
    rows = await store.schedules.search(
        user_id=args.user, status=args.status, cadence_type=args.cadence_type, name_contains=args.name, limit=args.limit
    )
    if args.json:
        print_json([{**dataclasses.asdict(r), "problem": r.problem} for r in rows])
        return 0
    shown = [
        (
            r.schedule_id,
            r.user_id,
            r.name,
            _cadence_words(r),
            r.status,
            (r.next_run_at or "")[:16],
            r.last_run_status,
            r.consecutive_failures,
        )
        for r in rows
    ]
    print(text_table(["id", "user", "name", "cadence", "status", "next run", "last run", "fails"], shown))
    for r in rows:
        if r.note and not r.problem:
            print(safe(f"ⓘ {r.schedule_id}: {r.note}"))
    return 0


def _cadence_arguments(p: argparse.ArgumentParser, required: bool) -> None:
    """``--cron`` (with ``--tz``), ``--every`` or ``--at``: one of them (``required``), or none to keep it."""
    keep = "" if required else " (default: unchanged)"
    when = p.add_mutually_exclusive_group(required=required)
    when.add_argument("--cron", type=text_arg, metavar="EXPR", help=f"five-field cron, evaluated in --tz{keep}")
    when.add_argument(
        "--every", type=int_in(1, INT64_MAX), metavar="SECS", help=f"an interval in seconds (60 s to 10 years){keep}"
    )
    when.add_argument(
        "--at", type=text_arg, metavar="TIME", help=f"one time, RFC 3339 (e.g. 2026-12-01T09:30:00Z){keep}"
    )
    p.add_argument("--tz", type=text_arg, default="UTC", metavar="ZONE", help="IANA time zone of --cron (default: UTC)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", type=text_arg, required=True)
    p.add_argument("--goal", type=text_arg, required=True)
    p.add_argument("--name", type=text_arg, default=None, help="a name to show (default: none)")
    p.add_argument("--policy", choices=POLICIES, default="always", help="notification policy (default: always)")
    _cadence_arguments(p, required=True)


async def add(store: Memory, args: argparse.Namespace) -> int:
    cadence = _cadence_args(args)
    made = await store.schedules.create(args.user, args.goal, cadence, name=args.name, notification_policy=args.policy)
    for warning in cadence_warnings(made.cadence):
        sys.stderr.write(f"oxmem: warning: {warning}\n")
    if args.json:
        print_json({"schedule_id": made.schedule_id})
    else:
        print(safe(f"{made.schedule_id}: {describe(made.cadence)}; next run {made.next_run_at}"))
    return 0


def update_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("schedule_id", type=text_arg)
    p.add_argument("--goal", type=text_arg, default=None, help="the new goal (default: unchanged)")
    p.add_argument("--name", type=text_arg, default=None, help="the new name (default: unchanged)")
    _cadence_arguments(p, required=False)


async def update(store: Memory, args: argparse.Namespace) -> int:
    patch: dict[str, Any] = {k: v for k, v in (("goal", args.goal), ("name", args.name)) if v is not None}
    cadence = _cadence_args(args)
    if cadence is not None:
        patch["cadence"] = cadence
    if not patch:
        raise InvalidInputError("nothing to change: give --goal, --name, or a new --cron/--every/--at")
    changed = await store.schedules.update(args.schedule_id, patch)
    doc = {"schedule_id": changed.schedule_id, "goal": changed.goal, "cadence": json.loads(changed.cadence_json)}
    doc["next_run_at"] = changed.next_run_at
    print_json(doc) if args.json else print(
        safe(f"{changed.schedule_id}: {describe(changed.cadence)}; next run {changed.next_run_at or '—'}")
    )
    return 0


def next_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("schedule_id", type=text_arg)
    p.add_argument("--count", type=int_in(1, MAX_NEXT_RUNS), default=5, help="how many (at most 1,000; default 5)")


async def next_fires(store: Memory, args: argparse.Namespace) -> int:
    schedule = await store.schedules.get(args.schedule_id)
    fires = next_runs(schedule.cadence, utc_now(), args.count)
    if args.json:
        print_json({"next": [to_rfc3339(f) for f in fires]})
        return 0
    for f in fires:
        print(f"{to_rfc3339(f)}  ({format_in_timezone(f, schedule.cadence)})")
    if not fires:  # a one-shot already past: say so rather than print nothing
        print(safe(f"{schedule.schedule_id}: no future fires ({describe(schedule.cadence)})"))
    return 0


async def pause_or_resume(store: Memory, args: argparse.Namespace) -> int:
    s = store.schedules
    schedule = await (s.pause if args.schedules_command == "pause" else s.resume)(args.schedule_id)
    doc = {"schedule_id": schedule.schedule_id, "status": schedule.status, "next_run_at": schedule.next_run_at}
    print_json(doc) if args.json else print(
        safe(f"{schedule.schedule_id}: {schedule.status}, next run {schedule.next_run_at or '—'}")
    )
    return 0


async def delete(store: Memory, args: argparse.Namespace) -> int:
    runs = await store.schedules.delete(args.schedule_id)
    doc = {"deleted": args.schedule_id, "runs": runs}
    print_json(doc) if args.json else print(safe(f"deleted {args.schedule_id} and its {runs} runs"))
    return 0


def runs_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("schedule_id", type=text_arg)
    p.add_argument("--limit", type=int_in(1, INT64_MAX), default=20, metavar="N", help="the newest N (default: 20)")


async def runs(store: Memory, args: argparse.Namespace) -> int:
    found = await store.schedules.runs(args.schedule_id, args.limit)
    if args.json:
        print_json(found)
        return 0
    rows = [
        (
            r.started_at[:19],
            r.finished_at[:19],
            r.status,
            r.turn_count,
            f"{r.cost:.4f}",
            preview(r.output_summary or "", 50),
        )
        for r in found
    ]
    print(text_table(["started", "finished", "status", "turns", "cost", "summary"], rows))
    return 0


def _cadence_words(schedule: Schedule) -> str:
    """The cadence in words, or the row's problem flagged with ⚠ (a foreign row is listed, never fatal); ⓘ marks
    a row with a note on how it is read (listed under the table)."""
    problem = schedule.problem
    return f"⚠ {problem}" if problem else describe(schedule.cadence) + (" ⓘ" if schedule.note else "")


def _cadence_args(args: argparse.Namespace) -> dict[str, Any] | None:
    """The cadence ``--cron``/``--tz``, ``--every`` or ``--at`` give, or None."""
    if args.cron is not None:
        return {"type": "cron", "expression": args.cron, "timezone": args.tz}
    if args.every is not None:
        return {"type": "interval", "every_secs": args.every}
    if args.at is not None:
        return {"type": "once", "at": args.at}
    return None
