"""The commands on a file as a whole: ``info``, ``check``, ``diff``, ``backup``, ``tables``, ``sql``, ``rankings``
and ``model`` (oxmem's own semantic model). Each is its arguments and its handler."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import signal
import sys
from pathlib import Path
from typing import Any

from ..core.api import (
    INT64_MAX,
    MODEL_DIMS,
    MODEL_LICENSE,
    MODEL_NAME,
    SOURCE_DISTRIBUTION,
    SQL_LIMIT,
    SQL_SECONDS,
    TABLE_MAX_PAGE,
    EmbeddingError,
    InvalidInputError,
    Memory,
    OperationCancelled,
    Retriever,
    SqlResult,
    TargetExistsError,
    check_store,
    choose_ranking,
    default_search,
    describe_memory,
    diff_files,
    install_model,
    locate_model,
    setting_text,
    shown_value,
    verify_prepared,
)
from ..core.api import inspect_database as inspect_file
from .arguments import float_in, int_in, text_arg
from .reports import print_check, print_diff, print_info, print_sql
from .text import cell_json, print_json, safe, text_table


async def info_of_file(args: argparse.Namespace, db: Path, key: str | None) -> int:
    return print_info(await inspect_file(db, key), args.json)


async def info(store: Memory, args: argparse.Namespace) -> int:
    """``info`` of a remote memory: its server's URL and how its snapshot was read."""
    return print_info(await describe_memory(store), args.json)


def check_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quick", action="store_true", help="SQLite's quick_check instead of the full integrity_check")
    p.add_argument(
        "--repair",
        action="store_true",
        help="first re-insert the rows libSQL's vector index cannot return (newer Oxydra), and rebuild the index "
        "if that is not enough (about 17 ms a vector, the file locked: stop the agent first for a big file), in one "
        "transaction, after a backup; then check",
    )


async def check_file(args: argparse.Namespace, db: Path, key: str | None) -> int | None:
    """A plain check reads the file without opening it as a memory; ``--repair`` opens it (None)."""
    if args.repair:
        return None
    return print_check(await check_store(db, args.quick, key), args.json)


async def repair(store: Memory, args: argparse.Namespace) -> int:
    total, fixed, rebuilt = await store.repair_vector_index()
    done = f"re-inserted {len(fixed):,} of {total:,} vectors" + (" and rebuilt the index" if rebuilt else "")
    sys.stderr.write(f"oxmem: {done} (libSQL vector index)\n")
    return print_check(await check_store(store.path, args.quick), args.json)


def diff_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("old", type=text_arg, metavar="OLD", help="the earlier file (a backup)")
    p.add_argument("new", type=text_arg, metavar="NEW", help="the later file")


async def diff(args: argparse.Namespace, db: Path, key: str | None) -> int:
    return print_diff(await diff_files(args.old, args.new, key=key, embedding="deterministic"), args.json)


def backup_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", type=text_arg, metavar="FILE", help="the new file")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace FILE if it is a SQLite database or empty (never a device, folder, link, file of another "
        "kind, or one in use) (default: refuse an existing file)",
    )


async def backup(store: Memory, args: argparse.Namespace) -> int:
    try:
        taken = await store.backup_to(args.target, overwrite=args.overwrite)
    except TargetExistsError as exc:
        raise InvalidInputError(f"{exc.path} already exists ({exc.what}); --overwrite replaces it") from exc
    if args.json:
        print_json({"db": str(store.path), "backup": str(taken)})
    else:
        print(safe(f"backed up {store.path.name} to {taken}"))
    return 0


def tables_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "table", nargs="?", type=text_arg, default=None, help="a table to page through (default: list the tables)"
    )
    p.add_argument("--limit", type=int_in(1, TABLE_MAX_PAGE), default=20, help="rows per page (default: 20)")
    p.add_argument("--offset", type=int_in(0, INT64_MAX), default=0, help="rows to skip (default: 0)")


async def tables(store: Memory, args: argparse.Namespace) -> int:
    if args.table is None:
        found = await store.tables()
        if args.json:
            print_json(found)
        else:
            print(
                text_table(
                    ["table", "kind", "rows", "columns"],
                    [(t.name, t.kind, "?" if t.rows is None else f"{t.rows:,}", ", ".join(t.columns)) for t in found],
                )
            )
        return 0
    page = await store.table_page(args.table, args.offset, args.limit)
    if args.json:
        print_json({**dataclasses.asdict(page), "rows": [[cell_json(v) for v in r] for r in page.rows]})
        return 0
    print(text_table(page.columns, [[shown_value(v, 40) for v in r] for r in page.rows]))
    end = page.offset + len(page.rows)
    more = f"; more with --offset {end}" if page.more else ""
    print(f"rows {page.offset + 1}–{end}{more}" if page.rows else f"no rows after row {page.offset:,}")
    return 0


def sql_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("statement", type=text_arg, metavar="SQL")
    p.add_argument("--limit", type=int_in(1, INT64_MAX), default=SQL_LIMIT, help="rows at most (default: %(default)s)")
    p.add_argument("--csv", action="store_true", help="print CSV (a header row, then the rows)")
    p.add_argument(
        "--timeout",
        type=float_in(0.001, 86_400),
        default=SQL_SECONDS,
        metavar="SECONDS",
        help="stop the statement after this long (default: %(default)g; Ctrl-C stops it at once)",
    )


async def sql(store: Memory, args: argparse.Namespace) -> int:
    print_sql(await _console(store, args), args)
    return 0


async def _console(store: Memory, args: argparse.Namespace) -> SqlResult:
    """``oxmem sql``: the statement stopped at ``--timeout`` or by Ctrl-C (SQLite's interrupt, as the inspector's
    Cancel), which then ends the command as any interrupt does."""
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):  # elsewhere Ctrl-C is as Python handles it
        loop.add_signal_handler(signal.SIGINT, store.interrupt)
    try:
        return await store.sql(args.statement, args.limit, seconds=args.timeout)
    except OperationCancelled:
        raise KeyboardInterrupt from None
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)


def rankings_arguments(p: argparse.ArgumentParser) -> None:
    choice = p.add_mutually_exclusive_group()
    choice.add_argument(
        "--use",
        type=text_arg,
        default=None,
        metavar="NAME",
        help="make NAME the default ranking of this file's searches, or of --session's (kept in oxmem's "
        "configuration, not in the file; default: leave the choice as it is)",
    )
    choice.add_argument("--reset", action="store_true", help="forget the choice: back to the built-in default")
    p.add_argument(
        "--session",
        type=text_arg,
        default=None,
        metavar="S",
        help="with --use/--reset: only for session S; alone: show S's default (default: the whole file)",
    )


def rankings_remote(args: argparse.Namespace) -> str | None:
    """Why ``rankings`` cannot run on a remote memory as asked (None: it can)."""
    if args.use or args.reset:
        return (
            "a default ranking chosen for a remote memory would be kept for its snapshot, which is removed: "
            "pass --ranking to search instead"
        )
    return None


async def rankings(store: Memory, args: argparse.Namespace) -> int:
    if args.use or args.reset:
        await choose_ranking(store, None if args.reset else args.use, args.session)
    found = store.retrievers()
    default: Retriever | None = None
    why, tuning = "", dict[str, Any]()
    if any(r.scope == "session" for r in found):
        default, why, tuning = await default_search(store, args.session)
    if args.json:
        print_json([dict(dataclasses.asdict(r), default=r == default) for r in found])
        return 0
    rows = [
        (r.name + (" *" if r == default else ""), r.scope, "yes" if r.tunable else "no", r.description) for r in found
    ]
    print(text_table(["ranking", "over", "tunable", "what it does"], rows))
    if default is not None:
        whose = f"session {args.session!r}" if args.session else "this file's sessions"
        how = {"session": "chosen for the session", "file": "chosen for the file", "built-in": "built in"}
        tuned = f", {setting_text(tuning['vector_weight'], tuning['fts_mode'])}" if tuning else ""
        print(safe(f"* the default for {whose} ({how[why]}{tuned}; change it with oxmem rankings --use NAME)"))
    return 0


def model_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", nargs="?", choices=("status", "install"), default="status", help="(default: status)")


async def model(args: argparse.Namespace) -> int:
    return await asyncio.to_thread(_model, args)


def _model(args: argparse.Namespace) -> int:
    if args.action == "install":
        folder = install_model(announce=lambda command: print(f"oxmem: installing: {command}", file=sys.stderr))
    else:
        location = locate_model(args.model_path, prepare=False)
        if location.path is None:
            raise EmbeddingError(location.reason)
        folder = location.path
        if not args.model_path:
            verify_prepared(folder)
    doc = {
        "model": MODEL_NAME,
        "dimensions": MODEL_DIMS,
        "license": MODEL_LICENSE,
        "path": str(folder),
        "source": SOURCE_DISTRIBUTION,
        "verified": not args.model_path,
    }
    if args.json:
        print_json(doc)
    else:
        state = "installed and verified (SHA-256 of every file)" if doc["verified"] else "your own folder"
        print(f"{MODEL_NAME} ({MODEL_DIMS} dimensions, {MODEL_LICENSE}): {state}\n  {folder}")
    return 0
