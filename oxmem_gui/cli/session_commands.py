"""The commands on a store's sessions and what is in them: ``init``, ``demo``, ``import-jsonl``, ``sessions``,
``events``, ``reindex``, ``forget``, ``forget-turn``, ``close``/``reopen``, ``summary``, ``context``,
``evictions``. Each is its arguments and its handler (the table in :mod:`.commands` says how it opens the file)."""

from __future__ import annotations

import argparse
import sys

from ..core.api import (
    INT64_MAX,
    EvictionPreview,
    InvalidInputError,
    Memory,
    MemoryStore,
    ReadOnlyError,
    article,
    fill_demo,
    message_text,
    parse_time,
)
from . import paging
from .arguments import int_in, text_arg
from .text import preview, print_json, progress_printer, safe, text_table


def path_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", nargs="?", metavar="PATH", help="the store file, as --db PATH (default: --db's)")


def session_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("session", type=text_arg)


async def init(store: Memory, args: argparse.Namespace) -> int:
    report = await store.migrate()
    if args.json:
        print_json({"db": str(store.path), "applied": report.applied, "unknown": report.unknown})
    elif store.format == "oxmem":
        print(safe(f"{store.path}: " + (f"applied {', '.join(report.applied)}" if report.applied else "up to date")))
        if report.unknown:
            print(safe(f"versions written by a newer program (left as they are): {', '.join(report.unknown)}"))
    else:
        label = store.capabilities.label
        print(safe(f"{store.path}: {label}: the agent's schema, left as it is (oxmem migrates only its own stores)"))
        if report.unknown:
            print(safe(f"versions the agent recorded: {', '.join(report.unknown)}"))
    return 0


async def demo(store: Memory, args: argparse.Namespace) -> int:
    if not isinstance(store, MemoryStore):
        label = store.capabilities.label
        raise ReadOnlyError(
            f"{store.path.name} is {article(label)} {label} file: the demo fills only oxmem's own store; "
            "nothing was changed"
        )
    counts = await fill_demo(store)
    if args.json:
        print_json(counts)
    else:
        print(
            safe(
                f"demo written to {store.path}: {counts.sessions} sessions, {counts.events} events, "
                f"{counts.notes} notes, {counts.summaries} rolling summary, {counts.schedules} schedules with "
                f"{counts.runs} runs"
            )
        )
    return 0


def import_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file")


async def import_jsonl(store: Memory, args: argparse.Namespace) -> int:
    show = progress_printer()
    result = await store.import_events(args.records, progress=(lambda d, t: show("importing", d, t)) if show else None)
    if show:
        sys.stderr.write("\n")
    unindexed = [{"session_id": s, "sequence": q, "reason": why} for s, q, why in result.not_indexed]
    if args.json:
        print_json(
            {"stored": result.stored, "skipped": result.skipped, "batches": result.batches, "not_indexed": unindexed}
        )
        return 0
    print(
        f"stored {result.stored:,} events in {result.batches:,} transaction{'s' if result.batches != 1 else ''}"
        + (f"; {result.skipped:,} were already stored (skipped)" if result.skipped else "")
    )
    for u in unindexed:
        print(safe(f"not indexed: {u['session_id']} #{u['sequence']}: {u['reason']}"))
    return 0


def sessions_arguments(p: argparse.ArgumentParser) -> None:
    paging.page_options(
        p,
        "session",
        paging.session_cursor_arg,
        "the sessions after this one: the cursor `more:` printed, the last shown session's "
        '\'["UPDATED_AT","SESSION_ID"]\' (default: from the most recently updated)',
    )


async def sessions(store: Memory, args: argparse.Namespace) -> int:
    found, more = await paging.page(
        lambda after, n: store.sessions_page(after, n),
        lambda s: (s.updated_at, s.session_id),
        args.after,
        args.offset,
        paging.limit_of(args),
    )
    stats = await store.session_stats([s.session_id for s in found]) if found else {}
    rows = [
        {
            "session_id": s.session_id,
            "created_at": s.created_at,
            "updated_at": s.updated_at,
            "last_sequence": stats[s.session_id].last_sequence if s.session_id in stats else None,
            "event_count": stats[s.session_id].event_count if s.session_id in stats else None,
        }
        for s in found
    ]
    if args.json:
        print_json(rows)
    else:
        print(
            text_table(
                ["session", "created", "updated", "last seq", "events"],
                [tuple(r.values()) for r in rows],
            )
        )
    paging.say_more(more)
    return 0


def events_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("session", type=text_arg)
    paging.page_options(
        p,
        "event",
        int_in(paging.INT64_MIN, INT64_MAX),
        "the events after this sequence (the seq column; the cursor `more:` printed), oldest first "
        "(default: the newest --limit events)",
        limit_help=f"how many events (default: {paging.DEFAULT_LIMIT:,}): the newest N, in order, or with --after "
        "or --offset the N from there; when more follow, the last line on standard error is "
        "`more: --after SEQ`, the next page's option",
    )


async def events(store: Memory, args: argparse.Namespace) -> int:
    limit, earlier, more = paging.limit_of(args), 0, None
    if paging.from_start(args):
        found, more = await paging.page(
            lambda after, n: store.events_page(args.session, after, n),
            lambda e: e.sequence,
            args.after,
            args.offset,
            limit,
        )
    else:
        found, earlier = await paging.newest_events(store, args.session, limit)
    if args.json:
        print_json(found)
        paging.say_more(more)
        paging.say_earlier(earlier)
        return 0
    rows = []
    for e in found:
        role, text = message_text(e)
        rows.append((e.sequence, e.created_at, role, preview(text)))
    print(text_table(["seq", "created", "role", "text"], rows))
    paging.say_more(more)
    paging.say_earlier(earlier)
    return 0


def reindex_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--session", type=text_arg, default=None, help="only this session (default: every session)")
    p.add_argument(
        "--model", type=text_arg, default=None, help="semantic, deterministic or a model name (default: --embedding)"
    )


async def reindex(store: Memory, args: argparse.Namespace) -> int:
    show = progress_printer()
    result = await store.reindex(args.session, args.model, (lambda d, t: show("embedding", d, t)) if show else None)
    if show:
        sys.stderr.write("\n")
    if args.json:
        print_json(
            {
                "model": result.model,
                "reembedded": result.reembedded,
                "remaining": result.remaining,
                "sessions": sorted(result.sessions),
            }
        )
    else:
        print(
            f"re-embedded {result.reembedded} chunks of {len(result.sessions)} sessions with {result.model}"
            + (f"; {result.remaining} remain (run again to resume)" if result.remaining else "")
        )
    return 0


async def forget(store: Memory, args: argparse.Namespace) -> int:
    await store.forget(args.session)
    print_json({"forgotten": args.session}) if args.json else print(safe(f"forgot session {args.session}"))
    return 0


def turn_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("session", type=text_arg)
    p.add_argument("sequence", type=int_in(0, INT64_MAX), help="any event of the turn (its seq in `events`)")


async def forget_turn(store: Memory, args: argparse.Namespace) -> int:
    turn = await store.turn(args.session, args.sequence)
    deleted = await store.delete_turn(args.session, args.sequence, expected=turn)
    if args.json:
        print_json({"session": args.session, "deleted": deleted})
    else:
        print(safe(f"deleted {len(deleted)} events of session {args.session}: {', '.join(map(str, deleted))}"))
    return 0


async def close_or_reopen(store: Memory, args: argparse.Namespace) -> int:
    status = await store.set_session_open(args.session, args.command == "reopen")
    shown = "open" if status == "active" else status
    print_json({"session": args.session, "status": status}) if args.json else print(safe(f"{args.session} is {shown}"))
    return 0


async def summary(store: Memory, args: argparse.Namespace) -> int:
    state = await store.read_summary_state(args.session)
    if args.json:
        print_json(state)
    elif state is None:
        print("no summary")
    else:
        print(safe(f"epoch {state.get('epoch')}  upper sequence {state.get('upper_sequence')}"))
        print(safe(state.get("summary", ""), keep_newlines=True))
    return 0


def context_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("session", type=text_arg)
    p.add_argument("--budget", type=int_in(1, INT64_MAX), default=2000, help="token budget (default: %(default)s)")


async def context(store: Memory, args: argparse.Namespace) -> int:
    found = await store.context_preview(args.session, args.budget)
    if args.json:
        print_json(found)
        return 0
    print(f"{found.used} of {found.budget} tokens used")
    if found.summary_message:
        print(f"[summary, {found.summary_tokens} tokens] {preview(found.summary_message)}")
    print(
        text_table(
            ["seq", "status", "tokens", "role", "text"],
            [(i.sequence, i.status, i.tokens, i.role, preview(i.text, 60)) for i in found.items],
        )
    )
    return 0


def evictions_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--at", type=text_arg, default=None, metavar="TIME", help="as of this time (RFC 3339; default: now)")
    p.add_argument(
        "--apply",
        type=int_in(0, INT64_MAX),
        default=None,
        metavar="COUNT",
        help="delete what the clean-up would delete now, as the agent does; COUNT is how many rows the preview "
        "listed (if that changed meanwhile, nothing is deleted) (default: only the preview)",
    )


def evictions_write(args: argparse.Namespace) -> bool:
    """``--apply`` deletes (and is for now only: ``--at`` is for previews)."""
    if args.apply is not None and args.at:
        raise InvalidInputError("--apply deletes what the agent's clean-up would delete now; --at is for previews")
    return args.apply is not None


async def evictions(store: Memory, args: argparse.Namespace) -> int:
    at = parse_time(args.at) if args.at else None
    found = await store.eviction_preview(at)
    if args.apply is not None and found is not None:
        return await _apply_eviction(store, found, args.apply, args.json)
    if args.json:
        print_json(found)
    elif found is None:
        label = store.capabilities.label
        print(safe(f"{store.path.name} ({label}) has no clean-up of its own: nothing would be deleted"))
    else:
        print(safe(f"as of {found.now}, the agent's clean-up would delete {len(found.items):,} rows"))
        for rule in found.rules:
            print(safe(f"rule: {rule}"))
        print(
            text_table(
                ["id", "group", "rule", "last used", "text"],
                [
                    (e.id, e.group, e.rule, e.last_used_at or e.created_at or "", preview(e.text, 50))
                    for e in found.items
                ],
            )
        )
    return 0


async def _apply_eviction(store: Memory, preview: EvictionPreview, count: int, as_json: bool) -> int:
    """``evictions --apply COUNT``: the preview just made, deleted if it lists ``count`` rows (the number the user
    saw); the store deletes them only if that is still the list inside its write transaction."""
    ids = [e.id for e in preview.items]
    if len(ids) != count:
        raise InvalidInputError(
            f"the agent's clean-up would delete {len(ids):,} rows now, not {count:,}: nothing was deleted "
            "(`oxmem evictions` lists them)"
        )
    gone = await store.apply_eviction(ids, preview.now) if ids else []
    if as_json:
        print_json({"now": preview.now, "deleted": ids})
    else:
        print(safe(f"deleted {len(gone):,} rows as the agent's clean-up would as of {preview.now}"))
    return 0
