"""The table of ``oxmem``'s commands: one entry per command says everything about it — its words and help, its
arguments, whether it writes (and so opens the file read-write, after a backup), whether it may create the store,
what the file must hold, and the handler that calls the core and prints. :mod:`.parser` builds the argument
parser from it and :mod:`.running` runs a command by it; a new command is one entry here (and its handler).
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from ..core.api import BATCH_EVENTS, Memory
from . import file_commands as files
from . import notes_commands as notes
from . import schedule_commands as schedules
from . import searching
from . import session_commands as sessions

#: a handler on the open file (or a remote memory's snapshot)
OnMemory = Callable[[Memory, argparse.Namespace], Awaitable[int]]
#: a handler on the file's path, before (or instead of) opening it: None opens it and runs ``run``
OnFile = Callable[[argparse.Namespace, Path, "str | None"], Awaitable["int | None"]]


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    return None


@dataclass(frozen=True)
class Command:
    """One command. ``name`` is its words (``search``; an action of a group: ``notes add``)."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    #: runs on the open file
    run: OnMemory | None = None
    #: runs on the file's path first (``info``, ``check``, ``diff``); its None opens the file for ``run``
    on_file: OnFile | None = None
    #: runs with no file at all (``model``)
    alone: Callable[[argparse.Namespace], Awaitable[int]] | None = None
    #: it changes the file: opened read-write, backed up first, refused with --read-only and --remote; a function
    #: when that depends on its arguments (``check --repair``, ``evictions --apply``)
    writes: bool | Callable[[argparse.Namespace], bool] = False
    #: it may create the store (a path that does not exist yet, an empty file): the commands that add data
    creates: bool = False
    #: about a local file only (its integrity, its backups, its differences): refused with --remote
    local_only: bool = False
    #: why it cannot run on a remote memory as asked (None: it can)
    remote_refusal: Callable[[argparse.Namespace], str | None] | None = None
    #: what the file must have (a capability: sessions, notes, schedules, search), else one line
    needs: str | None = None
    #: it embeds text, so the embedding backend in use is said
    embeds: bool = False
    #: what an interrupt leaves, when the command commits in batches
    interrupted: str | None = None
    #: the kind of edit it makes (``events``, ``sessions``, ``notes``, ``schedules``): a format that refuses it is
    #: not backed up first, the command being refused
    edits: str | None = None

    def changes_file(self, args: argparse.Namespace) -> bool:
        return self.writes(args) if callable(self.writes) else self.writes


#: the groups of actions, with their help
GROUPS = {"schedules": "an agent's schedules and their runs", "notes": "a user's saved notes"}

COMMANDS: tuple[Command, ...] = (
    Command("init", "create the store or apply pending migrations", sessions.path_argument, sessions.init,
            writes=True, creates=True, local_only=True),
    Command("demo", "fill the store with realistic demo sessions and notes", sessions.path_argument, sessions.demo,
            writes=True, creates=True, local_only=True, embeds=True, edits="events"),
    Command("import-jsonl", "store events from a JSON Lines file: all checked first (a bad line writes nothing), then "
            f"committed in batches of {BATCH_EVENTS}, so running it again after an interruption resumes",
            sessions.import_arguments, sessions.import_jsonl, writes=True, creates=True, embeds=True,
            interrupted=f"the batches of {BATCH_EVENTS} events that finished are stored, whole; run the same command "
            "again to resume (it skips what is stored)", edits="events"),
    Command("sessions", "list sessions, most recently updated first, a page at a time", sessions.sessions_arguments,
            sessions.sessions, needs="sessions"),
    Command("events", "show a session's events", sessions.events_arguments, sessions.events, needs="sessions"),
    Command("search", "hybrid search of a session, or of all of them, with each hit's score breakdown",
            searching.search_arguments, searching.search, needs="search", embeds=True),
    Command("reindex", "re-embed chunks with another model, in short batches (resumable)",
            sessions.reindex_arguments, sessions.reindex, writes=True, embeds=True,
            interrupted="the batches that finished are re-embedded, whole; run the same command again to resume",
            edits="events"),
    Command("model", "the semantic model: where it is and whether its files verify", files.model_arguments,
            alone=files.model),
    Command("forget", "delete a session and everything indexed from it", sessions.session_argument,
            sessions.forget, writes=True, needs="sessions", edits="sessions"),
    Command("forget-turn", "delete one turn of a session as the agent would: the user's message, what answered it "
            "and each tool call with its output (the OpenAI Agents SDK's files)", sessions.turn_arguments,
            sessions.forget_turn, writes=True, needs="sessions", edits="turns"),
    Command("close", "close a session as the agent does (Omega: its /forget); for agents whose sessions open and "
            "close", sessions.session_argument, sessions.close_or_reopen, writes=True, needs="sessions",
            edits="sessions"),
    Command("reopen", "reopen a session so the agent continues it; for agents whose sessions open and close",
            sessions.session_argument, sessions.close_or_reopen, writes=True, needs="sessions", edits="sessions"),
    Command("summary", "show a session's rolling summary state", sessions.session_argument, sessions.summary,
            needs="sessions"),
    Command("context", "preview what the agent would see under a token budget", sessions.context_arguments,
            sessions.context, needs="sessions"),
    Command("info", "what the file is: format, version markers, tables with row counts, journal mode, embeddings",
            run=files.info, on_file=files.info_of_file),
    Command("tables", "browse any table of the file read-only: the tables, or one table's rows",
            files.tables_arguments, files.tables),
    Command("sql", "run read-only SQL on the file (SQLite refuses anything but reading: writes, schema changes, "
            "ATTACH, load_extension and pragmas that set something); the first rows as a table, --csv or --json",
            files.sql_arguments, files.sql),
    Command("diff", "what changed from OLD (a backup) to NEW, two files of one format: sessions added and removed, "
            "events appended, summaries, notes (facts, memories) added, deleted and changed, schedules; counts "
            "first", files.diff_arguments, on_file=files.diff, local_only=True),
    Command("rankings", "the rankings this file can be searched with (the tuned profile, the store's hybrid, the "
            "agent's own), and which one a search uses by default", files.rankings_arguments, files.rankings,
            remote_refusal=files.rankings_remote),
    Command("evictions", "what the agent's own clean-up (TTL, caps) would delete now; --apply deletes it",
            sessions.evictions_arguments, sessions.evictions, writes=sessions.evictions_write, edits="notes"),
    Command("backup", "a consistent copy of the file (its WAL included) in another file (read-only)",
            files.backup_arguments, files.backup),
    Command("check", "is the file healthy? integrity, schema, index sync and counts (read-only)",
            files.check_arguments, files.repair, on_file=files.check_file, writes=lambda args: args.repair,
            local_only=True, edits="events"),
    Command("schedules list", "list schedules, newest first (rows another program wrote badly are flagged ⚠)",
            schedules.list_arguments, schedules.list_schedules, needs="schedules"),
    Command("schedules add", "create a schedule", schedules.add_arguments, schedules.add, writes=True, creates=True,
            needs="schedules", edits="schedules"),
    Command("schedules update", "change a schedule's goal, name or cadence (Omega: a pending task's description, "
            "due time, repeat)", schedules.update_arguments, schedules.update, writes=True, needs="schedules",
            edits="schedules"),
    Command("schedules next", "the next fire times of a schedule", schedules.next_arguments, schedules.next_fires,
            needs="schedules"),
    Command("schedules pause", "pause a schedule", schedules.id_argument, schedules.pause_or_resume, writes=True,
            needs="schedules", edits="schedules"),
    Command("schedules resume", "resume a paused or disabled schedule", schedules.id_argument,
            schedules.pause_or_resume, writes=True, needs="schedules", edits="schedules"),
    Command("schedules delete", "delete a schedule and its runs", schedules.id_argument, schedules.delete,
            writes=True, needs="schedules", edits="schedules"),
    Command("schedules runs", "a schedule's run history, newest first", schedules.runs_arguments, schedules.runs,
            needs="schedules"),
    Command("notes list", "list notes", notes.list_arguments, notes.list_notes, needs="notes", embeds=True),
    Command("notes add", "save a note", notes.add_arguments, notes.add_or_update, writes=True, creates=True,
            needs="notes", embeds=True, edits="notes"),
    Command("notes update", "replace a note's text and tags (one transaction)", notes.update_arguments,
            notes.add_or_update, writes=True, needs="notes", embeds=True, edits="notes"),
    Command("notes delete", "delete a note", notes.delete_arguments, notes.delete, writes=True, needs="notes",
            embeds=True, edits="notes"),
    Command("notes search", "hybrid search of a user's notes", notes.search_arguments, notes.search, needs="notes",
            embeds=True),
)  # fmt: skip

BY_NAME = {c.name: c for c in COMMANDS}
#: what an interrupt leaves when the command does not say
NOTHING_WRITTEN = "nothing was written by the unfinished command"


def command_of(args: argparse.Namespace) -> Command:
    """The command the parsed arguments name."""
    action = getattr(args, "notes_command", None) or getattr(args, "schedules_command", None)
    return BY_NAME[f"{args.command} {action}" if action else args.command]
