"""Running one command: which file, opened how (read-only unless the command writes; created only by the
commands that add data), backed up first when it changes, or a remote memory's snapshot; then the command's
handler from :mod:`.commands`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path

from ..core.api import (
    KEY_ENV,
    REMOTE_REASON,
    InvalidInputError,
    Memory,
    OxmemError,
    ReadOnlyError,
    article,
    backup_target,
    backups_dir,
    default_db_path,
    discard_new_store,
    endpoint,
    open_memory,
    open_remote,
    prune,
    read_jsonl,
    set_model_paths,
    token_from,
)
from .commands import Command, command_of
from .text import safe

log = logging.getLogger("oxmem_gui.cli")


def _model_paths(given: list[str] | None) -> str | None:
    """``--model-path`` values: ``NAME=DIR`` ones name an agent's model folder (for the whole run, see
    :func:`.core.embeddings.local_models.set_model_paths`); the one plain ``DIR`` is the semantic model's."""
    named = dict(value.split("=", 1) for value in given or () if "=" in value)
    plain = [value for value in given or () if "=" not in value]
    if len(plain) > 1:
        raise InvalidInputError(f"--model-path: one semantic model folder, not {len(plain)}; name others NAME=DIR")
    if any(not name or not folder for name, folder in named.items()):
        raise InvalidInputError("--model-path NAME=DIR needs both the model's name and its folder")
    set_model_paths(named)
    return plain[0] if plain else None


async def run(args: argparse.Namespace) -> int:
    """Run the command ``args`` names, by its entry in the table of commands."""
    command = command_of(args)
    args.model_path = _model_paths(args.model_path)
    endpoint.configure(endpoint.endpoint_from(args.embeddings_url))
    if command.alone is not None:
        return await command.alone(args)
    if args.remote is not None:
        return await _run_remote(command, args)
    if getattr(args, "path", None):  # `oxmem demo PATH`, `oxmem init PATH`
        if args.db and Path(args.db).expanduser() != Path(args.path).expanduser():
            raise InvalidInputError(f"two stores named: --db {args.db} and {args.path}; give one")
        args.db = args.path
    db = args.db or default_db_path()
    key = args.key or os.environ.get(KEY_ENV) or None
    named = args.db or os.environ.get("OXMEM_DB")
    if command.name != "diff" and not command.creates and not named and not db.exists():
        raise OxmemError(_no_default_store(db))
    if command.on_file is not None:
        code = await command.on_file(args, db, key)
        if code is not None:
            return code
    read_only = not command.changes_file(args)
    if args.read_only and not read_only:
        raise ReadOnlyError(f"--read-only: `oxmem {command.name}` would change {Path(db).name}; nothing was changed")
    if command.name == "import-jsonl":  # a bad file is refused before any store is opened (or created)
        args.records = await asyncio.to_thread(read_jsonl, args.file)
    return await _on_store(command, args, Path(db).expanduser(), key, read_only)


async def _on_store(command: Command, args: argparse.Namespace, path: Path, key: str | None, read_only: bool) -> int:
    """Open the file and run the command; a store the command creates is taken back if the command then fails
    (bad input, a refusal)."""
    before = path.stat() if path.is_file() else None
    new = command.creates and command.name != "init"
    new = new and (not path.exists() or (before is not None and before.st_size == 0))
    back_up = not read_only and not args.no_backup and before is not None and before.st_size > 0
    try:
        code = await _open_and_dispatch(command, path, key, read_only, args, back_up)
    except BaseException:
        if new:
            await asyncio.to_thread(discard_new_store, path, before)
        raise
    if new and command.name not in ("demo", "import-jsonl"):  # a mistyped --db would otherwise go unnoticed
        what = "did not exist" if before is None else "was an empty file"
        sys.stderr.write(f"oxmem: notice: {safe(str(path))} {what}: a new store was created there\n")
    return code


async def _open_and_dispatch(
    command: Command, db: Path, key: str | None, read_only: bool, args: argparse.Namespace, back_up: bool
) -> int:
    """Open the file and run the command on it; ``back_up``: first back up the existing file the command changes."""
    store = await open_memory(
        db,
        key=key,
        read_only=read_only,
        create=command.creates,
        embedding=args.embedding,
        model_path=args.model_path,
        busy_timeout_ms=int(args.wait * 1000),
    )
    if back_up and not (command.edits and store.capabilities.refusal(command.edits)):  # (refused: nothing to keep)
        try:
            await _back_up(store)
        except BaseException:
            await store.aclose()
            raise
    return await _use(command, store, args)


async def _back_up(store: Memory) -> None:
    """The backup a command that changes a file takes first (the inspector's, pruned alike), said in one line."""
    folder = backups_dir()
    taken = await store.backup_to(await asyncio.to_thread(backup_target, folder, store.path))
    await asyncio.to_thread(prune, folder, store.path)
    said = f"{safe(store.path.name)} backed up to {safe(str(taken))} (--no-backup skips it)"
    log.info(said)
    if sys.stderr.isatty():  # a person sees where it went; a script's stderr stays its one line
        sys.stderr.write(f"oxmem: notice: {said}\n")


async def _use(command: Command, store: Memory, args: argparse.Namespace) -> int:
    """Run the command on the open file (or a remote memory's snapshot), saying first how it is open; close it."""
    async with store:
        if store.backend_notice and command.embeds:
            sys.stderr.write(f"oxmem: notice: {store.backend_notice}\n")
        if store.open_notice:
            sys.stderr.write(f"oxmem: notice: {safe(store.open_notice)}\n")
        store.set_weekday_numbering(args.cron_weekdays)
        _require(store, command.needs)
        said = store.open_notice
        assert command.run is not None  # every command that opens a file runs on it
        code = await command.run(store, args)
        if store.open_notice != said and store.open_notice:  # what reading found (text that is not UTF-8)
            sys.stderr.write(f"oxmem: notice: {safe(store.open_notice.removeprefix(f'{said}; ' if said else ''))}\n")
        return code


async def _run_remote(command: Command, args: argparse.Namespace) -> int:
    """A command on a remote memory: read-only, on a snapshot that is removed afterwards."""
    if args.db or getattr(args, "path", None):
        raise InvalidInputError("--remote and a local file were both given; give one")
    if command.local_only:
        raise InvalidInputError(
            f"`oxmem {command.name}` works on local files; with --remote, use info, sessions, search…"
        )
    refusal = command.remote_refusal(args) if command.remote_refusal else None
    if refusal:
        raise InvalidInputError(refusal)
    if command.changes_file(args):
        raise ReadOnlyError(
            f"`oxmem {command.name}` would change the remote database: {REMOTE_REASON}; nothing was changed"
        )
    memory = await open_remote(
        args.remote, token_from(args.auth_token_env), embedding=args.embedding, model_path=args.model_path
    )
    return await _use(command, memory, args)


def _no_default_store(db: Path) -> str:
    """What to do when the default store (no --db, no $OXMEM_DB) does not exist yet; the path with ``~`` for
    the home folder."""
    try:
        shown = f"~/{db.relative_to(Path.home())}"
    except (ValueError, RuntimeError):  # not under the home folder, or no home folder
        shown = str(db)
    return f"no store at {shown} — create one with `oxmem init`, or try `oxmem demo`; --db PATH opens another file"


def _require(store: Memory, need: str | None) -> None:
    """One line when the file's format has no such thing (ZEKE keeps no sessions; an unknown file no notes)."""
    caps = store.capabilities
    if need is None or getattr(caps, f"has_{need}"):
        return
    if store.remote is None:
        name, where = store.path.name, f"--db {store.path}"
    else:  # the snapshot's file is gone once the command ends
        name, where = store.remote.url, f"--remote {store.remote.url}"
    raise OxmemError(
        f"{name} is {article(caps.label)} {caps.label}: it has no {need} "
        f"(`oxmem {where} info` says what it holds; `oxmem tables` browses any table)"
    )
