"""The ``oxmem`` command line: argument parsing and printing over the core's reader interface (the store, or
another agent's file opened by :func:`oxmem_gui.core.memory.open_memory`).

Global options (``--db``, ``--embedding``, ``--json``) are accepted before or after the command. Errors print
one line ``oxmem: error: …`` on stderr and exit with status 2. Commands that only read open the store
read-only, so they never change a file (an agent's live database included).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import csv
import dataclasses
import errno
import json
import logging
import math
import os
import re
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from .core import OxmemError
from .core.check import CheckReport, check_store
from .core.compare import FileDiff, diff_files, word_diff
from .core.database import BUSY_TIMEOUT_MS
from .core.demo import fill_demo
from .core.embeddings import api
from .core.embeddings.backends import BACKEND_NAMES
from .core.embeddings.local_models import set_model_paths
from .core.embeddings.model_files import (
    MODEL_DIMS,
    MODEL_LICENSE,
    MODEL_NAME,
    SOURCE_DISTRIBUTION,
    install_model,
    locate_model,
    verify_prepared,
)
from .core.errors import EmbeddingError, InvalidInputError, OperationCancelled, ReadOnlyError
from .core.folders import backups_dir, default_db_path
from .core.formats.base import EvictionPreview, Retriever
from .core.formats.detect import article
from .core.formats.encrypted import KEY_ENV
from .core.formats.info import DatabaseInfo, info_lines
from .core.formats.table_browser import MAX_PAGE as TABLE_MAX_PAGE
from .core.formats.table_browser import shown_value
from .core.memory import (
    Memory,
    choose_ranking,
    default_search,
    describe_memory,
    inspect_database,
    open_memory,
    open_remote,
)
from .core.remote import REMOTE_REASON, TOKEN_ENV, token_from
from .core.retrieval.explain import setting_text
from .core.retrieval.hybrid import FTS_MODES, MAX_TOP_K, TAG_MODES, LegStats, QueryResult
from .core.retrieval.options import SearchOptions
from .core.retrieval.scope import ALL_SESSIONS
from .core.schedules.cadence import (
    CADENCE_TYPES,
    MAX_NEXT_RUNS,
    cadence_warnings,
    describe,
    format_in_timezone,
    next_runs,
    parse_time,
    to_rfc3339,
    utc_now,
)
from .core.schedules.store import POLICIES, STATUSES, Schedule
from .core.schedules.weekdays import WEEKDAY_NUMBERINGS
from .core.store.backups import TargetExistsError, backup_target, prune
from .core.store.importing import BATCH_EVENTS
from .core.store.inputs import INT64_MAX
from .core.store.jsonl import read_jsonl
from .core.store.migrations import discard_new_store
from .core.store.notes import NOTES_PREFIX
from .core.store.sql_console import DEFAULT_LIMIT as SQL_LIMIT
from .core.store.sql_console import DEFAULT_SECONDS as SQL_SECONDS
from .core.store.sql_console import SqlResult
from .core.store.summary import message_text
from .logs import setup_logging

log = logging.getLogger(__name__)

EXIT_ERROR = 2
#: the hybrid search's weights when neither --vector-weight nor --fts-weight is given
VECTOR_WEIGHT, FTS_WEIGHT = 0.7, 0.3


#: Control characters (C0, DEL, C1) and the invisible formatting ones that reorder or hide text in a terminal.
#: (lone surrogates too: an undecodable byte of a file name cannot be printed as UTF-8)
_INVISIBLE = r"\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ud800-\udfff\ufeff"
_UNSAFE = re.compile(rf"[\x00-\x1f{_INVISIBLE}]")
#: what JSON leaves raw inside strings (it escapes C0 itself; its own indentation newlines must stay)
_UNSAFE_IN_JSON = re.compile(rf"[{_INVISIBLE}]")


def safe(text: object, keep_newlines: bool = False) -> str:
    """Stored data made harmless for a terminal: control characters (an ``ESC]0;…BEL`` in a session id would
    retitle the terminal) and bidirectional overrides are shown as escapes like ``\\x1b``, never sent raw."""

    def escape(m: re.Match[str]) -> str:
        c = m.group(0)
        if keep_newlines and c == "\n":
            return c
        return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"

    return _UNSAFE.sub(escape, str(text))


class _Parser(argparse.ArgumentParser):
    #: the command line being parsed, for the hint about text that starts with "-"
    argv: Sequence[str] = ()

    def error(self, message: str) -> NoReturn:
        hint = self._dash_hint()
        sys.stderr.write(
            f"oxmem: error: {safe(hint or message)}" + ("" if hint else f" (see '{self.prog} --help')") + "\n"
        )
        sys.exit(EXIT_ERROR)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """Refuse first a token that starts with one of this parser's short flags but is none of its options
        (``-hotel``): Python 3.13's argparse reads it as ``-h`` plus ``otel`` and prints the help with exit 0."""
        if any(isinstance(a, argparse._SubParsersAction) for a in self._actions):
            return super().parse_known_args(args, namespace)  # the command's own parser looks at its tokens
        short = {k for k in self._option_string_actions if len(k) == 2 and k[0] == "-" and k[1] != "-"}
        for token in list(sys.argv[1:] if args is None else args):
            if token == "--":
                break
            if token[:2] in short and len(token) > 2 and not token.startswith("--") and not _is_number(token):
                sys.stderr.write(f"oxmem: error: {safe(_dash_text(self.prog, token))}\n")
                sys.exit(EXIT_ERROR)
        return super().parse_known_args(args, namespace)

    def _options(self) -> set[str]:
        """This parser's options and its commands' (argparse reports a command's stray token from the top)."""
        known = set(self._option_string_actions)
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    known |= sub._options() if isinstance(sub, _Parser) else set(sub._option_string_actions)
        return known

    def _dash_hint(self) -> str | None:
        """A token that starts with "-" but is no option of this command is text meant as an argument."""
        known = self._options()
        for token in self.argv:
            if token == "--":
                return None
            name = token.split("=", 1)[0]
            if not token.startswith("-") or name in known or _is_number(token):
                continue
            if name.startswith("--") and any(k.startswith(name) for k in known):
                continue
            return _dash_text(self.prog, token)
        return None


def _dash_text(prog: str, token: str) -> str:
    return (
        f"{token!r} is not an option of {prog}; to pass text that starts with '-', put -- before it: "
        f"{prog} … -- {token}"
    )


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def _text(value: str) -> str:
    """An argument that is stored or searched must be valid UTF-8 (Python keeps an undecodable byte of the
    command line as a lone surrogate, which SQLite cannot take)."""
    for i, c in enumerate(value, 1):
        if "\ud800" <= c <= "\udfff":
            byte = f"byte 0x{ord(c) - 0xDC00:02x}" if "\udc80" <= c <= "\udcff" else f"{c!r}"
            raise argparse.ArgumentTypeError(f"is not valid UTF-8 text ({byte} at character {i})")
    return value


def _seconds(text: str) -> float:
    """``--wait``: a number of seconds from 0 to a day."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 86400:  # NaN fails too
        raise argparse.ArgumentTypeError(f"must be a number of seconds from 0 to 86400, got {text[:24]!r}")
    return value


#: an option left out that must be told apart from one given as "none"
KEEP: Any = object()


def _ttl(text: str) -> int | None:
    """``--ttl``: seconds ≥ 1, or ``none``."""
    return None if text.strip().lower() == "none" else _int_in(1, INT64_MAX)(text)


def _int_in(low: int, high: int) -> Callable[[str], int]:
    """An integer argument within ``[low, high]``, with a short message for anything else (a 5,000-digit
    number is named by its length, not printed)."""

    def parse(text: str) -> int:
        digits = text.strip().lstrip("+-")
        shown = text if len(text) <= 24 else f"a number of {len(digits):,} digits"
        try:
            value = int(text)
        except ValueError:
            if digits.isdigit():  # more digits than Python converts: certainly out of range
                raise argparse.ArgumentTypeError(f"must be between {low:,} and {high:,}, got {shown}") from None
            raise argparse.ArgumentTypeError(f"{text[:24]!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low:,} and {high:,}, got {shown}")
        return value

    return parse


def _float_in(low: float, high: float) -> Callable[[str], float]:
    """A number argument within ``[low, high]``, with a short message for anything else."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:24]!r} is not a number") from None
        if not low <= value <= high:  # NaN included
            raise argparse.ArgumentTypeError(f"must be between {low:g} and {high:g}, got {text[:24]}")
        return value

    return parse


def _global_options(parser: argparse.ArgumentParser, suppress: bool) -> None:
    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    parser.add_argument(
        "--db", default=default(None), metavar="PATH", help="store file (default: $OXMEM_DB or the user data folder)"
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=default(False),
        help="log what happens, down to debug level, on standard error and in the log file",
    )
    parser.add_argument(
        "--embedding",
        choices=BACKEND_NAMES,
        default=default(os.environ.get("OXMEM_EMBEDDING", "auto")),
        help="backend for new vectors and queries: auto = semantic when its model is installed, else "
        "deterministic (default: $OXMEM_EMBEDDING or auto)",
    )
    parser.add_argument(
        "--model-path",
        action="append",
        default=default(None),
        metavar="DIR|NAME=DIR",
        help="a folder of your own with the semantic model (default: the one `oxmem model install` prepared); "
        "NAME=DIR: the folder of the model a file names (its embedding_model), used as it is, unverified; "
        "repeatable (default: looked up in the Hugging Face and fastembed caches)",
    )
    parser.add_argument(
        "--embeddings-url",
        default=default(os.environ.get(api.URL_ENV)),
        metavar="URL",
        help="an OpenAI-compatible embeddings endpoint for a model no local copy of which is found (ZEKE's "
        "text-embedding-3-small): 'openai' or a base URL such as http://localhost:11434/v1; the key comes from "
        f"${api.KEY_ENV}; a query's text is sent, a memory's when an edit re-embeds it "
        f"(default: ${api.URL_ENV}, else none: nothing is sent)",
    )
    parser.add_argument("--json", action="store_true", default=default(False), help="print one JSON document on stdout")
    parser.add_argument(
        "--wait",
        type=_seconds,
        default=default(BUSY_TIMEOUT_MS / 1000),
        metavar="SECONDS",
        help=f"how long a write waits for another program's lock on the store (default: {BUSY_TIMEOUT_MS / 1000:g})",
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        default=default(False),
        help="never write: a command that would change the file is refused (exit 2) before it is opened "
        "(default: off; reading commands always open it read-only)",
    )
    parser.add_argument(
        "--no-backup",
        action="store_true",
        default=default(False),
        help="a command that changes an existing file first backs it up, as the inspector's Enable Editing does "
        "(the newest 10 per file kept, in $OXMEM_BACKUP_DIR or the user data folder's backups/); this skips it",
    )
    parser.add_argument(
        "--key",
        type=_text,
        default=default(None),
        metavar="KEY",
        help=f"key of an encrypted (SQLCipher) database (default: ${KEY_ENV}; prefer the variable: "
        "arguments are visible to other users)",
    )
    parser.add_argument(
        "--remote",
        default=default(None),
        metavar="URL",
        help="read an agent's memory on a libSQL / Turso server (libsql://HOST, https://HOST, http://HOST:PORT): a "
        "snapshot is pulled into the cache folder, read, and removed; nothing is written (default: off)",
    )
    parser.add_argument(
        "--auth-token-env",
        default=default(None),
        metavar="VAR",
        help=f"the environment variable holding --remote's auth token (default: ${TOKEN_ENV} when it is set)",
    )
    parser.add_argument(
        "--cron-weekdays",
        choices=WEEKDAY_NUMBERINGS,
        default=default("standard"),
        help="how numeric cron weekdays are read in newer Oxydra files: standard (Sunday = 0) or sunday-1 "
        "(Sunday = 1, as that agent counts; default: standard)",
    )


def _like_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--like",
        type=_text,
        default=None,
        metavar="ID",
        help="more like this: the stored vector of ID (a chunk, note or memory id) is the query of the vector leg — "
        "exact and offline for any model; QUERY, if given, is the keyword part (default: ID's own words)",
    )


def _search_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--top-k",
        type=_int_in(1, MAX_TOP_K),
        default=8,
        metavar="N",
        help=f"how many hits, 1 to {MAX_TOP_K:,} (default: %(default)s)",
    )
    parser.add_argument(
        "--vector-weight",
        type=float,
        default=None,
        metavar="W",
        help=f"weight of the vector (cosine) leg (default: {VECTOR_WEIGHT:g}, or 1 − --fts-weight when only that "
        "is given)",
    )
    parser.add_argument(
        "--fts-weight",
        type=float,
        default=None,
        metavar="W",
        help=f"weight of the full-text (BM25) leg (default: {FTS_WEIGHT:g}, or 1 − --vector-weight when only that "
        "is given)",
    )
    parser.add_argument(
        "--fts-mode",
        choices=FTS_MODES,
        default=None,
        help=f"terms: any of the words; phrase: the words in a row (default: {FTS_MODES[0]})",
    )
    parser.add_argument(
        "--tag",
        action="append",
        type=_text,
        default=[],
        dest="tags",
        metavar="T",
        help="only hits tagged T; repeat for more tags (default: no tag filter)",
    )
    parser.add_argument(
        "--tag-mode",
        choices=TAG_MODES,
        default="any",
        help="any: a hit needs one of the --tag tags; all: every one (default: %(default)s)",
    )
    parser.add_argument(
        "--ranking",
        type=_text,
        default=None,
        metavar="NAME",
        help="which ranking to run (see `oxmem rankings`; default: the store's hybrid, or the agent's own for "
        "another agent's file)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="oxmem", description="Inspect and edit an AI agent's memory store.")
    _global_options(parser, suppress=False)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    def command(name: str, help_text: str, parent: Any = commands) -> argparse.ArgumentParser:
        sub = parent.add_parser(name, help=help_text, description=help_text)
        _global_options(sub, suppress=True)
        return sub

    for name, what in (
        ("init", "create the store or apply pending migrations"),
        ("demo", "fill the store with realistic demo sessions and notes"),
    ):
        sub = command(name, what)
        sub.add_argument("path", nargs="?", metavar="PATH", help="the store file, as --db PATH (default: --db's)")
    p = command(
        "import-jsonl",
        "store events from a JSON Lines file: all checked first (a bad line writes nothing), then committed in "
        f"batches of {BATCH_EVENTS}, so running it again after an interruption resumes",
    )
    p.add_argument("file")
    command("sessions", "list sessions, most recently updated first")
    p = command("events", "show a session's events")
    p.add_argument("session", type=_text)
    p.add_argument(
        "--limit",
        type=_int_in(1, INT64_MAX),
        default=None,
        metavar="N",
        help="only the newest N events (default: every event)",
    )
    p = command("search", "hybrid search of a session, or of all of them, with each hit's score breakdown")
    p.add_argument(
        "session",
        type=_text,
        nargs="?",
        help="the session's id (`oxmem sessions` lists them; default: none, with --all)",
    )
    p.add_argument("query", type=_text, nargs="?", help="what to search for (default with --like: its words)")
    p.add_argument(
        "--all",
        action="store_true",
        dest="all_sessions",
        help="search every session at once, in one ranking (give no SESSION); each hit names its session",
    )
    p.add_argument(
        "--why",
        type=_text,
        default=None,
        metavar="ID",
        help="why this memory (a chunk id, an event's sequence number, a note id; an agent's message or memory id) "
        "is not in the top k: where it ranked, the step that cut it, and what would bring it back (default: the "
        "hits themselves)",
    )
    _like_option(p)
    _search_options(p)
    p = command("reindex", "re-embed chunks with another model, in short batches (resumable)")
    p.add_argument("--session", type=_text, default=None, help="only this session (default: every session)")
    p.add_argument(
        "--model", type=_text, default=None, help="semantic, deterministic or a model name (default: --embedding)"
    )
    p = command("model", "the semantic model: where it is and whether its files verify")
    p.add_argument("action", nargs="?", choices=("status", "install"), default="status", help="(default: status)")
    p = command("forget", "delete a session and everything indexed from it")
    p.add_argument("session", type=_text)
    for verb, what in (("close", "as the agent does (Omega: its /forget)"), ("reopen", "so the agent continues it")):
        p = command(verb, f"{verb} a session {what}; for agents whose sessions open and close")
        p.add_argument("session", type=_text)
    p = command("summary", "show a session's rolling summary state")
    p.add_argument("session", type=_text)
    p = command("context", "preview what the agent would see under a token budget")
    p.add_argument("session", type=_text)
    p.add_argument("--budget", type=_int_in(1, INT64_MAX), default=2000, help="token budget (default: %(default)s)")
    command("info", "what the file is: format, version markers, tables with row counts, journal mode, embeddings")
    p = command("tables", "browse any table of the file read-only: the tables, or one table's rows")
    p.add_argument(
        "table", nargs="?", type=_text, default=None, help="a table to page through (default: list the tables)"
    )
    p.add_argument("--limit", type=_int_in(1, TABLE_MAX_PAGE), default=20, help="rows per page (default: 20)")
    p.add_argument("--offset", type=_int_in(0, INT64_MAX), default=0, help="rows to skip (default: 0)")
    p = command(
        "sql",
        "run read-only SQL on the file (SQLite refuses anything but reading: writes, schema changes, ATTACH, "
        "load_extension and pragmas that set something); the first rows as a table, --csv or --json",
    )
    p.add_argument("statement", type=_text, metavar="SQL")
    p.add_argument("--limit", type=_int_in(1, INT64_MAX), default=SQL_LIMIT, help="rows at most (default: %(default)s)")
    p.add_argument("--csv", action="store_true", help="print CSV (a header row, then the rows)")
    p.add_argument(
        "--timeout",
        type=_float_in(0.001, 86_400),
        default=SQL_SECONDS,
        metavar="SECONDS",
        help="stop the statement after this long (default: %(default)g; Ctrl-C stops it at once)",
    )
    p = command(
        "diff",
        "what changed from OLD (a backup) to NEW, two files of one format: sessions added and removed, events "
        "appended, summaries, notes (facts, memories) added, deleted and changed, schedules; counts first",
    )
    p.add_argument("old", type=_text, metavar="OLD", help="the earlier file (a backup)")
    p.add_argument("new", type=_text, metavar="NEW", help="the later file")
    p = command(
        "rankings",
        "the rankings this file can be searched with (the tuned profile, the store's hybrid, the agent's own), "
        "and which one a search uses by default",
    )
    choice = p.add_mutually_exclusive_group()
    choice.add_argument(
        "--use",
        type=_text,
        default=None,
        metavar="NAME",
        help="make NAME the default ranking of this file's searches, or of --session's (kept in oxmem's "
        "configuration, not in the file; default: leave the choice as it is)",
    )
    choice.add_argument("--reset", action="store_true", help="forget the choice: back to the built-in default")
    p.add_argument(
        "--session",
        type=_text,
        default=None,
        metavar="S",
        help="with --use/--reset: only for session S; alone: show S's default (default: the whole file)",
    )
    p = command("evictions", "what the agent's own clean-up (TTL, caps) would delete now; --apply deletes it")
    p.add_argument("--at", type=_text, default=None, metavar="TIME", help="as of this time (RFC 3339; default: now)")
    p.add_argument(
        "--apply",
        type=_int_in(0, INT64_MAX),
        default=None,
        metavar="COUNT",
        help="delete what the clean-up would delete now, as the agent does; COUNT is how many rows the preview "
        "listed (if that changed meanwhile, nothing is deleted) (default: only the preview)",
    )
    p = command("backup", "a consistent copy of the file (its WAL included) in another file (read-only)")
    p.add_argument("target", type=_text, metavar="FILE", help="the new file")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace FILE if it is a SQLite database or empty (never a device, folder, link, file of another "
        "kind, or one in use) (default: refuse an existing file)",
    )
    p = command("check", "is the file healthy? integrity, schema, index sync and counts (read-only)")
    p.add_argument("--quick", action="store_true", help="SQLite's quick_check instead of the full integrity_check")
    p.add_argument(
        "--repair",
        action="store_true",
        help="first re-insert the rows libSQL's vector index cannot return (newer Oxydra), and rebuild the index "
        "if that is not enough (about 17 ms a vector, the file locked: stop the agent first for a big file), in one "
        "transaction, after a backup; then check",
    )

    sched = command("schedules", "an agent's schedules and their runs").add_subparsers(
        dest="schedules_command", required=True, metavar="ACTION", parser_class=_Parser
    )
    p = command("list", "list schedules, newest first (rows another program wrote badly are flagged ⚠)", sched)
    p.add_argument("--user", type=_text, default=None, metavar="U", help="only this user's (default: every user's)")
    p.add_argument("--status", choices=STATUSES, default=None, help="only schedules in this status (default: any)")
    p.add_argument(
        "--type", choices=CADENCE_TYPES, default=None, dest="cadence_type", help="only this cadence (default: any)"
    )
    p.add_argument("--name", type=_text, default=None, help="only names containing this (default: any name)")
    p.add_argument("--limit", type=_int_in(1, INT64_MAX), default=100, metavar="N", help="at most N (default: 100)")
    p = command("add", "create a schedule", sched)
    p.add_argument("--user", type=_text, required=True)
    p.add_argument("--goal", type=_text, required=True)
    p.add_argument("--name", type=_text, default=None, help="a name to show (default: none)")
    p.add_argument("--policy", choices=POLICIES, default="always", help="notification policy (default: always)")
    when = p.add_mutually_exclusive_group(required=True)
    when.add_argument("--cron", type=_text, metavar="EXPR", help="five-field cron, evaluated in --tz")
    when.add_argument(
        "--every", type=_int_in(1, INT64_MAX), metavar="SECS", help="an interval in seconds (60 s to 10 years)"
    )
    when.add_argument("--at", type=_text, metavar="TIME", help="one time, RFC 3339 (e.g. 2026-12-01T09:30:00Z)")
    p.add_argument("--tz", type=_text, default="UTC", metavar="ZONE", help="IANA time zone of --cron (default: UTC)")
    p = command(
        "update",
        "change a schedule's goal, name or cadence (Omega: a pending task's description, due time, repeat)",
        sched,
    )
    p.add_argument("schedule_id", type=_text)
    p.add_argument("--goal", type=_text, default=None, help="the new goal (default: unchanged)")
    p.add_argument("--name", type=_text, default=None, help="the new name (default: unchanged)")
    when = p.add_mutually_exclusive_group()
    when.add_argument(
        "--cron", type=_text, metavar="EXPR", help="a new five-field cron, evaluated in --tz (default: unchanged)"
    )
    when.add_argument(
        "--every", type=_int_in(1, INT64_MAX), metavar="SECS", help="a new interval in seconds (default: unchanged)"
    )
    when.add_argument("--at", type=_text, metavar="TIME", help="a new one time, RFC 3339 (default: unchanged)")
    p.add_argument("--tz", type=_text, default="UTC", metavar="ZONE", help="IANA time zone of --cron (default: UTC)")
    p = command("next", "the next fire times of a schedule", sched)
    p.add_argument("schedule_id", type=_text)
    p.add_argument("--count", type=_int_in(1, MAX_NEXT_RUNS), default=5, help="how many (at most 1,000; default 5)")
    for action, text in (
        ("pause", "pause a schedule"),
        ("resume", "resume a paused or disabled schedule"),
        ("delete", "delete a schedule and its runs"),
    ):
        command(action, text, sched).add_argument("schedule_id", type=_text)
    p = command("runs", "a schedule's run history, newest first", sched)
    p.add_argument("schedule_id", type=_text)
    p.add_argument("--limit", type=_int_in(1, INT64_MAX), default=20, metavar="N", help="the newest N (default: 20)")

    notes = command("notes", "a user's saved notes").add_subparsers(
        dest="notes_command", required=True, metavar="ACTION", parser_class=_Parser
    )
    note_tag_help = "a tag of the note; repeat for more tags (default: no tags)"
    p = command("list", "list notes", notes)
    p.add_argument("user", type=_text)
    p.add_argument(
        "--tag",
        action="append",
        type=_text,
        default=[],
        dest="tags",
        metavar="T",
        help="only notes tagged T; repeat for more tags (default: every note)",
    )
    p.add_argument(
        "--tag-mode",
        choices=TAG_MODES,
        default="any",
        help="any: a note needs one of the --tag tags; all: every one (default: any)",
    )
    p.add_argument(
        "--contains", type=_text, default=None, help="only notes whose text contains this (default: any text)"
    )
    p = command("add", "save a note", notes)
    p.add_argument("user", type=_text)
    p.add_argument("text", type=_text)
    p.add_argument("--tag", action="append", type=_text, default=[], dest="tags", metavar="T", help=note_tag_help)
    p = command("update", "replace a note's text and tags (one transaction)", notes)
    p.add_argument("user", type=_text)
    p.add_argument("note_id", type=_text)
    p.add_argument("text", type=_text)
    p.add_argument("--tag", action="append", type=_text, default=[], dest="tags", metavar="T", help=note_tag_help)
    p.add_argument(
        "--scope", type=_text, default=KEEP, metavar="S", help="ZEKE: move the memory to scope S (default: stays)"
    )
    p.add_argument(
        "--ttl",
        type=_ttl,
        default=KEEP,
        metavar="SECONDS",
        help="ZEKE: the memory's time to live, or 'none' (default: stays as it is)",
    )
    p = command("delete", "delete a note", notes)
    p.add_argument("user", type=_text)
    p.add_argument("note_id", type=_text)
    p = command("search", "hybrid search of a user's notes", notes)
    p.add_argument("user", type=_text)
    p.add_argument("query", type=_text, nargs="?", help="what to search for (default with --like: its words)")
    p.add_argument(
        "--why",
        type=_text,
        default=None,
        metavar="ID",
        help="why this note (its id; an agent's memory or fact id) is not in the top k: where it ranked, the step "
        "that cut it, and what would bring it back (default: the hits themselves)",
    )
    _like_option(p)
    _search_options(p)
    return parser


# -- output ---------------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _finite(value: Any) -> Any:
    """``value`` with every float JSON cannot hold (``1e999``, NaN) as the string Python writes for it
    (``"inf"``, ``"-inf"``, ``"nan"``): what ``--json`` prints is always valid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _print_json(value: Any) -> None:
    text = json.dumps(_finite(_plain(value)), indent=2, ensure_ascii=False, allow_nan=False)
    # JSON escapes C0 controls itself; DEL, C1 and bidirectional controls are escaped too (inside strings, the
    # only place they can occur), so piping the document to a terminal is as safe as the table
    sys.stdout.write(_UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text) + "\n")


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[("" if v is None else safe(v)) for v in row] for row in rows]
    headers = [safe(h) for h in headers]  # a column name is the file's text too (``SELECT 1 AS "\x1b]0;…"``)
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines)


def _preview(text: str, width: int = 70) -> str:
    text = safe(" ".join(str(text).split()))
    return text if len(text) <= width else text[: width - 1] + "…"


def _num(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _progress_printer() -> Callable[[str, int, int], None] | None:
    if not sys.stderr.isatty():
        return None

    def show(stage: str, done: int, total: int) -> None:
        width = 30
        filled = width * done // max(total, 1)
        sys.stderr.write(f"\r{stage:<10} [{'#' * filled}{' ' * (width - filled)}] {done}/{total}")
        if stage == "storing" and done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def _weights(args: argparse.Namespace) -> tuple[float, float]:
    vw, fw = args.vector_weight, args.fts_weight
    if vw is None and fw is None:
        return VECTOR_WEIGHT, FTS_WEIGHT
    if vw is None:
        return 1.0 - fw, fw
    if fw is None:
        return vw, 1.0 - vw
    return vw, fw


def _search_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    vw, fw = _weights(args)
    return dict(
        vector_weight=vw, fts_weight=fw, fts_mode=args.fts_mode or "terms", tags=args.tags, tag_mode=args.tag_mode
    )


def _tuning_flags(args: argparse.Namespace) -> list[str]:
    """The hybrid's tuning options given on the command line (weights and mode; tags are a filter)."""
    given = (("--vector-weight", args.vector_weight), ("--fts-weight", args.fts_weight), ("--fts-mode", args.fts_mode))
    return [flag for flag, value in given if value is not None]


async def _ranking(store: Memory, args: argparse.Namespace, scope: str, session: str | None = None) -> Retriever:
    """The ranking asked for; else, over sessions, the tunable hybrid when tuning options are given, or the
    default chosen for the session or file (``oxmem rankings --use``, or the GUI's *Make default*, which keeps the
    tunable hybrid's weight and mode too: they go into ``args``); else the first over ``scope``."""
    found = store.retrievers()
    if not found:
        raise OxmemError(f"{store.path.name} ({store.capabilities.label}) has no ranking to search with")
    if args.ranking is None and any(r.scope == scope == "session" for r in found):
        tunable = next((r for r in found if r.scope == scope and r.tunable), None)
        if tunable is not None and _tuning_flags(args):
            return tunable
        ranking, _, tuning = await default_search(store, session)
        if tuning:  # the weights and mode chosen with it (no tuning flag was given)
            args.vector_weight, args.fts_mode = tuning["vector_weight"], tuning["fts_mode"]
        return ranking
    if args.ranking is None:
        return next((r for r in found if r.scope == scope), found[0])
    for r in found:
        if r.name == args.ranking:
            return r
    raise OxmemError(f"no ranking {args.ranking!r} here (known: {', '.join(r.name for r in found)})")


def _ranking_kwargs(ranking: Retriever, args: argparse.Namespace) -> dict[str, Any]:
    """The hybrid's options for a tunable ranking; an agent's own ranking takes none (saying so if some were given)."""
    if ranking.tunable:
        return _search_kwargs(args)
    given = _tuning_flags(args) + (["--tag"] if args.tags and not ranking.tag_filter else [])
    if given:
        what = "a fixed profile" if ranking.tag_filter else "the agent's own and fixed"
        raise OxmemError(
            f"ranking {ranking.name!r} is {what}: {', '.join(given)} do not apply to it"
            + (" (--ranking oxmem is the tunable hybrid)" if ranking.tag_filter else "")
        )
    return {"tags": args.tags, "tag_mode": args.tag_mode} if ranking.tag_filter and args.tags else {}


async def _like(store: Memory, args: argparse.Namespace) -> dict[str, Any]:
    """``--like ID``: the search options of a query by example (:mod:`.core.embeddings.example`), said on stderr;
    the QUERY defaults to ID's words. Without it, a QUERY is required."""
    if args.like is None:
        if args.query is None:
            raise InvalidInputError("give the QUERY to search for (or --like ID: more like that memory)")
        return {}
    example = await store.example(args.like)
    if args.query is None:
        args.query = example.text
    sys.stderr.write(safe(f"oxmem: notice: {example.said()}") + "\n")
    return example.options()


async def _why_note(store: Memory, args: argparse.Namespace, like: dict[str, Any]) -> None:
    """``notes search USER QUERY --why ID``: the agent's own ranking of notes where it has one (ZEKE's), else the
    store's hybrid over the user's notes (``memory:USER``); ``like``: a query by example's options."""
    if any(r.scope == "notes" for r in store.retrievers()):
        ranking = await _ranking(store, args, "notes")
        story = await store.why_not(
            ranking.name,
            args.user,
            args.query,
            args.why,
            args.top_k,
            SearchOptions(**_ranking_kwargs(ranking, args), **like),
        )
    else:
        story = await store.why_not(
            "oxmem",
            f"{NOTES_PREFIX}{args.user}",
            args.query,
            args.why,
            args.top_k,
            SearchOptions(**_search_kwargs(args), **like),
        )
    _print_json(_why_json(story)) if args.json else print(safe("\n".join(story.lines()), keep_newlines=True))


def _why_json(story: Any) -> dict[str, Any]:
    """A why-not story as ``--json`` prints it: every field, the ranking's hits as ``search --json`` has them."""
    out = {f.name: getattr(story, f.name) for f in dataclasses.fields(story) if f.name != "result"}
    out["legs"] = {name: dataclasses.asdict(leg) for name, leg in story.legs.items()}
    out["changes"] = [dataclasses.asdict(c) for c in story.changes]
    out["above"] = [{"rank": r, "chunk_id": c, "score": s} for r, c, s in story.above]
    out["hits"] = _query_json(story.result)["hits"] if story.result is not None else []
    return out


def _query_json(result: QueryResult) -> dict[str, Any]:
    doc = dataclasses.asdict(result)
    doc.pop("ranking")  # the pool, ranked: ``pool`` and ``hits`` have it
    doc["vector_errors"] = [{"chunk_id": c, "error": e} for c, e in result.vector_errors]
    return doc


def _print_query(result: QueryResult, ranking: Retriever) -> None:
    v, f = result.legs.get("vector", LegStats()), result.legs.get("fts", LegStats())

    def leg(name: str, stats: Any) -> str:
        if not stats.candidates:
            return f"{name}: no candidates"
        flag = "  (range collapsed: every score 1.0)" if stats.collapsed else ""
        return f"{name}: {stats.candidates} candidates, raw {stats.min:.6g} … {stats.max:.6g}{flag}"

    if ranking.tunable:
        print(
            safe(
                f"query {result.query!r}  weights vector {result.vector_weight:g} / fts {result.fts_weight:g}  "
                f"fts {result.fts_mode}: {result.fts_expression or '(no terms)'}"
            )
        )
    else:
        print(safe(f"query {result.query!r}  ranking {ranking.name}: {ranking.label}"))
        if result.fts_expression:
            print(safe(f"fts expression: {result.fts_expression}"))
    if result.dropped_terms:
        print(safe(f"stopwords dropped: {', '.join(result.dropped_terms)}"))
    for step in result.steps:
        print(safe(f"  · {step}"))
    print(leg("vector", v) + (f"  models {', '.join(result.models)}" if result.models else ""))
    print(leg("fts", f))
    for model, why in result.skipped_models.items():
        print(safe(f"skipped vectors of {model}: {why}"))
    if result.vector_errors:
        chunk, why = result.vector_errors[0]
        more = f" (and {len(result.vector_errors) - 1:,} more)" if len(result.vector_errors) > 1 else ""
        print(safe(f"left out: {len(result.vector_errors):,} stored vectors cannot be read — {chunk}: {why}{more}; "
                   "`oxmem check` lists them"))  # fmt: skip
    if not result.hits:
        print("no hits")
        return
    neighbours = bool(result.profile.get("neighbour_weight"))
    many = result.session_id is None  # a search of every session: each hit names its own
    rows = [
        (
            h.rank,
            f"{h.score:.4f}",
            f"{_num(h.vector_raw)}→{h.vector_score:.3f}",
            f"{_num(h.fts_raw)}→{h.fts_score:.3f}",
            *([f"+{h.context_score:.3f} (seq {h.context_sequence})" if h.context_sequence else "+0"] * neighbours),
            *([h.session_id] * many),
            h.sequence_end,
            _preview(h.text, 60),
        )
        for h in result.hits
    ]
    headers = ["rank", "score", "vector raw→norm", "fts raw→norm", *(["neighbour"] * neighbours),
               *(["session"] * many), "seq", "text"]  # fmt: skip
    print(_table(headers, rows))
    for name, ids in result.lists.items():
        print(safe(f"list {name}: {', '.join(ids) if ids else '(empty)'}"))
    for h in result.hits:
        for note in h.notes:
            print(safe(f"  #{h.rank} {note}"))


# -- commands -------------------------------------------------------------------------------------------

READ_ONLY_COMMANDS = {
    "sessions", "events", "search", "summary", "context", "check", "tables", "sql", "rankings", "evictions", "backup",
}  # fmt: skip
READ_ONLY_ACTIONS = {
    ("notes", "list"),
    ("notes", "search"),
    ("schedules", "list"),
    ("schedules", "next"),
    ("schedules", "runs"),
}
#: Commands about a local file only (its integrity, its backups, its differences), refused with --remote.
LOCAL_ONLY_COMMANDS = {"check", "diff", "init", "demo"}
#: Commands that may create the store (a path that does not exist yet, an empty file): those that add data.
CREATING_COMMANDS = {"init", "demo", "import-jsonl"}
CREATING_ACTIONS = {("notes", "add"), ("schedules", "add")}
#: What a command needs the file to have (a capability), so a format without it gets one line, not an empty list.
NEEDS = {
    "sessions": "sessions",
    "events": "sessions",
    "summary": "sessions",
    "context": "sessions",
    "forget": "sessions",
    "close": "sessions",
    "reopen": "sessions",
    "search": "search",
    "notes": "notes",
    "schedules": "schedules",
}
#: Commands that embed text, so the backend in use matters (its notice is shown).
EMBEDDING_COMMANDS = {"demo", "import-jsonl", "search", "reindex", "notes"}


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


async def _run(args: argparse.Namespace) -> int:
    args.model_path = _model_paths(args.model_path)
    api.configure(api.endpoint_from(args.embeddings_url))
    if args.command == "model":
        return await asyncio.to_thread(_model_command, args)
    if args.remote is not None:
        return await _run_remote(args)
    if getattr(args, "path", None):  # `oxmem demo PATH`, `oxmem init PATH`
        if args.db and Path(args.db).expanduser() != Path(args.path).expanduser():
            raise InvalidInputError(f"two stores named: --db {args.db} and {args.path}; give one")
        args.db = args.path
    db = args.db or default_db_path()
    key = args.key or os.environ.get(KEY_ENV) or None
    action = getattr(args, "notes_command", None) or getattr(args, "schedules_command", None)
    creating = args.command in CREATING_COMMANDS or (args.command, action) in CREATING_ACTIONS
    if args.command != "diff" and not creating and not args.db and not os.environ.get("OXMEM_DB") and not db.exists():
        raise OxmemError(_no_default_store(db))
    if args.command == "check" and not args.repair:
        return _print_check(await check_store(db, args.quick, key), args.json)
    if args.command == "info":
        return _print_info(await inspect_database(db, key), args.json)
    if args.command == "diff":
        return _print_diff(await diff_files(args.old, args.new, key=key, embedding="deterministic"), args.json)
    read_only = args.command in READ_ONLY_COMMANDS or (args.command, action) in READ_ONLY_ACTIONS
    if getattr(args, "repair", False):
        read_only = False
    if getattr(args, "apply", None) is not None:
        if args.at:
            raise InvalidInputError("--apply deletes what the agent's clean-up would delete now; --at is for previews")
        read_only = False
    if args.read_only and not read_only:
        what = " ".join(w for w in (args.command, action) if w)
        raise ReadOnlyError(f"--read-only: `oxmem {what}` would change {Path(db).name}; nothing was changed")
    if args.command == "import-jsonl":  # a bad file is refused before any store is opened (or created)
        args.records = await asyncio.to_thread(read_jsonl, args.file)
    # a store this command creates is taken back if the command then fails (bad input, a refusal)
    path = Path(db).expanduser()
    before = path.stat() if path.is_file() else None
    new = creating and args.command != "init" and (not path.exists() or (before is not None and before.st_size == 0))
    back_up = not read_only and not args.no_backup and before is not None and before.st_size > 0
    try:
        code = await _open_and_dispatch(db, key, read_only, creating, args, back_up)
    except BaseException:
        if new:
            await asyncio.to_thread(discard_new_store, path, before)
        raise
    if new and args.command not in ("demo", "import-jsonl"):  # a mistyped --db would otherwise go unnoticed
        what = "did not exist" if before is None else "was an empty file"
        sys.stderr.write(f"oxmem: notice: {safe(str(path))} {what}: a new store was created there\n")
    return code


async def _open_and_dispatch(
    db: Path, key: str | None, read_only: bool, creating: bool, args: argparse.Namespace, back_up: bool = False
) -> int:
    """Open the file and run the command on it; ``back_up``: first back up the existing file the command changes."""
    store = await open_memory(
        db,
        key=key,
        read_only=read_only,
        create=creating,
        embedding=args.embedding,
        model_path=args.model_path,
        busy_timeout_ms=int(args.wait * 1000),
    )
    if back_up:
        try:
            await _back_up(store)
        except BaseException:
            await store.aclose()
            raise
    return await _use(store, args)


async def _back_up(store: Memory) -> None:
    """The backup a command that changes a file takes first (the inspector's, pruned alike), said in one line."""
    folder = backups_dir()
    taken = await store.backup_to(await asyncio.to_thread(backup_target, folder, store.path))
    await asyncio.to_thread(prune, folder, store.path)
    said = f"{safe(store.path.name)} backed up to {safe(str(taken))} (--no-backup skips it)"
    log.info(said)
    if sys.stderr.isatty():  # a person sees where it went; a script's stderr stays its one line
        sys.stderr.write(f"oxmem: notice: {said}\n")


async def _use(store: Memory, args: argparse.Namespace) -> int:
    """Run the command on the open file (or a remote memory's snapshot), saying first how it is open; close it."""
    async with store:
        if store.backend_notice and args.command in EMBEDDING_COMMANDS:
            sys.stderr.write(f"oxmem: notice: {store.backend_notice}\n")
        if store.open_notice:
            sys.stderr.write(f"oxmem: notice: {safe(store.open_notice)}\n")
        store.set_weekday_numbering(args.cron_weekdays)
        _require(store, args.command)
        said = store.open_notice
        code = await _dispatch(store, args)
        if store.open_notice != said and store.open_notice:  # what reading found (text that is not UTF-8)
            sys.stderr.write(f"oxmem: notice: {safe(store.open_notice.removeprefix(f'{said}; ' if said else ''))}\n")
        return code


async def _run_remote(args: argparse.Namespace) -> int:
    """A command on a remote memory: read-only, on a snapshot that is removed afterwards."""
    action = getattr(args, "notes_command", None) or getattr(args, "schedules_command", None)
    what = " ".join(w for w in (args.command, action) if w)
    if args.db or getattr(args, "path", None):
        raise InvalidInputError("--remote and a local file were both given; give one")
    if args.command in LOCAL_ONLY_COMMANDS:
        raise InvalidInputError(f"`oxmem {what}` works on local files; with --remote, use info, sessions, search…")
    reads = args.command in READ_ONLY_COMMANDS or (args.command, action) in READ_ONLY_ACTIONS or args.command == "info"
    if args.command == "rankings" and (args.use or args.reset):
        raise InvalidInputError(
            "a default ranking chosen for a remote memory would be kept for its snapshot, which is removed: "
            "pass --ranking to search instead"
        )
    if not reads or getattr(args, "apply", None) is not None:
        raise ReadOnlyError(f"`oxmem {what}` would change the remote database: {REMOTE_REASON}; nothing was changed")
    memory = await open_remote(
        args.remote, token_from(args.auth_token_env), embedding=args.embedding, model_path=args.model_path
    )
    if args.command != "info":
        return await _use(memory, args)
    async with memory:
        return _print_info(await describe_memory(memory), args.json)


def _no_default_store(db: Path) -> str:
    """What to do when the default store (no --db, no $OXMEM_DB) does not exist yet; the path with ``~`` for
    the home folder."""
    try:
        shown = f"~/{db.relative_to(Path.home())}"
    except (ValueError, RuntimeError):  # not under the home folder, or no home folder
        shown = str(db)
    return f"no store at {shown} — create one with `oxmem init`, or try `oxmem demo`; --db PATH opens another file"


def _require(store: Memory, command: str) -> None:
    """One line when the file's format has no such thing (ZEKE keeps no sessions; an unknown file no notes)."""
    need = NEEDS.get(command)
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


def _print_info(info: DatabaseInfo, as_json: bool) -> int:
    if as_json:
        _print_json(info)
    else:
        print("\n".join(safe(line) for line in info_lines(info)))
    return 0


def _diff_words(old: str, new: str) -> str:
    """A changed text as ``[-removed-]{+added+}`` in its words (as ``git diff --word-diff=plain``), on one line."""
    marks = {"=": "{}", "-": "[-{}-]", "+": "{{+{}+}}"}
    return " ".join("".join(marks[op].format(text.strip()) + " " for op, text in word_diff(old, new)).split())


def _print_diff(diff: FileDiff, as_json: bool) -> int:
    """The counts, then a line per change (a changed note's text as a word diff)."""
    if as_json:
        doc = dataclasses.asdict(diff)
        doc["counts"] = diff.counts()
        for change, entry in zip(diff.notes, doc["notes"], strict=True):
            entry.update(tags_added=change.tags_added, tags_removed=change.tags_removed)
            if change.text_changed:
                entry["words"] = [
                    {"op": op, "text": text} for op, text in word_diff(change.old.content, change.new.content)
                ]
        _print_json(doc)
        return 0
    print(safe(f"{diff.old_path} → {diff.new_path} ({diff.format})"))
    if diff.empty:
        print("no changes")
        return 0
    print(", ".join(f"{what} {n:,}" for what, n in diff.counts().items()))
    for c in diff.sessions:
        print(safe(f"session {c.kind:<9} {c.session_id}  {c.events}"))
    for c in diff.summaries:
        print(safe(f"summary changed  {c.session_id}  {_diff_words(c.old or '', c.new or '')[:200]}"))
    for c in diff.notes:
        note = c.new or c.old
        tags = " ".join([*(f"+#{t}" for t in c.tags_added), *(f"-#{t}" for t in c.tags_removed)])
        tags = tags if c.kind == "changed" else " ".join(f"#{t}" for t in note.tags)
        text = _diff_words(c.old.content, c.new.content) if c.text_changed else " ".join(note.content.split())
        line = f"{diff.note_noun} {c.kind:<7} {c.group}/{c.note_id}" + (f"  {tags}" if tags else "")
        print(safe(f"{line}  {_preview(text, 100) if c.kind != 'changed' or c.text_changed else ''}".rstrip()))
    for c in diff.schedules:
        fields = "; ".join(f"{f} {_preview(str(a), 40)} → {_preview(str(b), 40)}" for f, a, b in c.fields)
        print(safe(f"schedule {c.kind:<8} {c.schedule_id}  {c.name}" + (f"  {fields}" if fields else "")))
    return 0


def _print_check(report: CheckReport, as_json: bool) -> int:
    """Exit status 0 when healthy (warnings allowed), 1 when a problem was found."""
    if as_json:
        _print_json({**dataclasses.asdict(report), "ok": report.ok})
    else:
        journal = f", journal {report.journal_mode}" if report.journal_mode else ""
        pages = f"{journal}, {report.pages:,} pages" if report.pages is not None else ""
        print(safe(f"{report.path}: {report.format}{pages}"))
        print(_table(["status", "check", "finding"], [(f.level, f.check, f.detail) for f in report.findings]))
        if report.counts:
            print("counts: " + ", ".join(f"{k} {v:,}" for k, v in report.counts.items()))
        print(report.verdict)
    return 0 if report.ok else 1


def _model_command(args: argparse.Namespace) -> int:
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
        _print_json(doc)
    else:
        state = "installed and verified (SHA-256 of every file)" if doc["verified"] else "your own folder"
        print(f"{MODEL_NAME} ({MODEL_DIMS} dimensions, {MODEL_LICENSE}): {state}\n  {folder}")
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
        _print_json({"now": preview.now, "deleted": ids})
    else:
        print(safe(f"deleted {len(gone):,} rows as the agent's clean-up would as of {preview.now}"))
    return 0


async def _dispatch(store: Memory, args: argparse.Namespace) -> int:
    out_json = args.json
    cmd = args.command
    if cmd == "backup":
        try:
            taken = await store.backup_to(args.target, overwrite=args.overwrite)
        except TargetExistsError as exc:
            raise InvalidInputError(f"{exc.path} already exists ({exc.what}); --overwrite replaces it") from exc
        if out_json:
            _print_json({"db": str(store.path), "backup": str(taken)})
        else:
            print(safe(f"backed up {store.path.name} to {taken}"))
        return 0
    if cmd == "check":  # --repair (a plain check never opens the store)
        total, fixed, rebuilt = await store.repair_vector_index()
        done = f"re-inserted {len(fixed):,} of {total:,} vectors" + (" and rebuilt the index" if rebuilt else "")
        sys.stderr.write(f"oxmem: {done} (libSQL vector index)\n")
        return _print_check(await check_store(store.path, args.quick), out_json)
    if cmd == "init":
        report = await store.migrate()
        own = store.format == "oxmem"
        if out_json:
            _print_json({"db": str(store.path), "applied": report.applied, "unknown": report.unknown})
        elif own:
            print(
                safe(f"{store.path}: " + (f"applied {', '.join(report.applied)}" if report.applied else "up to date"))
            )
            if report.unknown:
                print(safe(f"versions written by a newer program (left as they are): {', '.join(report.unknown)}"))
        else:
            label = store.capabilities.label
            print(
                safe(f"{store.path}: {label}: the agent's schema, left as it is (oxmem migrates only its own stores)")
            )
            if report.unknown:
                print(safe(f"versions the agent recorded: {', '.join(report.unknown)}"))
    elif cmd == "demo":
        counts = await fill_demo(store)
        if out_json:
            _print_json(counts)
        else:
            print(
                safe(
                    f"demo written to {store.path}: {counts.sessions} sessions, {counts.events} events, "
                    f"{counts.notes} notes, {counts.summaries} rolling summary, {counts.schedules} schedules with "
                    f"{counts.runs} runs"
                )
            )
    elif cmd == "import-jsonl":
        show = _progress_printer()
        result = await store.import_events(
            args.records, progress=(lambda d, t: show("importing", d, t)) if show else None
        )
        if show:
            sys.stderr.write("\n")
        unindexed = [{"session_id": s, "sequence": q, "reason": why} for s, q, why in result.not_indexed]
        if out_json:
            _print_json(
                {
                    "stored": result.stored,
                    "skipped": result.skipped,
                    "batches": result.batches,
                    "not_indexed": unindexed,
                }
            )
        else:
            print(
                f"stored {result.stored:,} events in {result.batches:,} transaction{'s' if result.batches != 1 else ''}"
                + (f"; {result.skipped:,} were already stored (skipped)" if result.skipped else "")
            )
            for u in unindexed:
                print(safe(f"not indexed: {u['session_id']} #{u['sequence']}: {u['reason']}"))
    elif cmd == "sessions":
        sessions = await store.list_sessions()
        if out_json:
            _print_json([{k: v for k, v in dataclasses.asdict(s).items() if k != "agent_identity"} for s in sessions])
        else:
            print(
                _table(
                    ["session", "created", "updated", "last seq", "events"],
                    [(s.session_id, s.created_at, s.updated_at, s.last_sequence, s.event_count) for s in sessions],
                )
            )
    elif cmd == "events":
        evs = await store.recall(args.session, args.limit)
        if out_json:
            _print_json(evs)
        else:
            rows = []
            for e in evs:
                role, text = message_text(e)
                rows.append((e.sequence, e.created_at, role, _preview(text)))
            print(_table(["seq", "created", "role", "text"], rows))
    elif cmd == "search":
        if args.query is None and args.session is not None and (args.all_sessions or args.like is None):
            args.session, args.query = None, args.session  # one word is the QUERY, unless --like gives it
        like = await _like(store, args)
        if args.all_sessions == (args.session is not None):
            raise OxmemError("give a SESSION or --all (every session), not both" if args.all_sessions
                             else "give the SESSION to search, or --all to search every session")  # fmt: skip
        ranking = await _ranking(store, args, "session", args.session)
        scope = ALL_SESSIONS if args.all_sessions else args.session
        if args.why is not None:
            if args.all_sessions:
                raise OxmemError("--why explains a miss in one SESSION: give the session, not --all")
            story = await store.why_not(
                ranking.name,
                scope,
                args.query,
                args.why,
                args.top_k,
                SearchOptions(**_ranking_kwargs(ranking, args), **like),
            )
            _print_json(_why_json(story)) if out_json else print(safe("\n".join(story.lines()), keep_newlines=True))
            return 0
        result = await store.search(
            ranking.name, scope, args.query, args.top_k, SearchOptions(**_ranking_kwargs(ranking, args), **like)
        )
        if out_json:
            _print_json({**_query_json(result), **({"like": args.like} if args.like else {})})
        else:
            _print_query(result, ranking)
    elif cmd == "reindex":
        show = _progress_printer()
        result = await store.reindex(args.session, args.model, (lambda d, t: show("embedding", d, t)) if show else None)
        if show:
            sys.stderr.write("\n")
        if out_json:
            _print_json(
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
    elif cmd in ("close", "reopen"):
        status = await store.set_session_open(args.session, cmd == "reopen")
        shown = "open" if status == "active" else status
        _print_json({"session": args.session, "status": status}) if out_json else print(
            safe(f"{args.session} is {shown}")
        )
    elif cmd == "forget":
        await store.forget(args.session)
        _print_json({"forgotten": args.session}) if out_json else print(safe(f"forgot session {args.session}"))
    elif cmd == "summary":
        state = await store.read_summary_state(args.session)
        if out_json:
            _print_json(state)
        elif state is None:
            print("no summary")
        else:
            print(safe(f"epoch {state.get('epoch')}  upper sequence {state.get('upper_sequence')}"))
            print(safe(state.get("summary", ""), keep_newlines=True))
    elif cmd == "context":
        preview = await store.context_preview(args.session, args.budget)
        if out_json:
            _print_json(preview)
        else:
            print(f"{preview.used} of {preview.budget} tokens used")
            if preview.summary_message:
                print(f"[summary, {preview.summary_tokens} tokens] {_preview(preview.summary_message)}")
            print(
                _table(
                    ["seq", "status", "tokens", "role", "text"],
                    [(i.sequence, i.status, i.tokens, i.role, _preview(i.text, 60)) for i in preview.items],
                )
            )
    elif cmd == "tables":
        await _tables(store, args)
    elif cmd == "sql":
        _print_sql(await _console(store, args), args)
    elif cmd == "rankings":
        if args.use or args.reset:
            await choose_ranking(store, None if args.reset else args.use, args.session)
        found = store.retrievers()
        default, tuning = None, {}
        if any(r.scope == "session" for r in found):
            default, why, tuning = await default_search(store, args.session)
        if out_json:
            _print_json([dict(dataclasses.asdict(r), default=r == default) for r in found])
        else:
            print(
                _table(
                    ["ranking", "over", "tunable", "what it does"],
                    [
                        (r.name + (" *" if r == default else ""), r.scope, "yes" if r.tunable else "no", r.description)
                        for r in found
                    ],
                )
            )
            if default is not None:
                whose = f"session {args.session!r}" if args.session else "this file's sessions"
                how = {"session": "chosen for the session", "file": "chosen for the file", "built-in": "built in"}
                tuned = f", {setting_text(tuning['vector_weight'], tuning['fts_mode'])}" if tuning else ""
                print(safe(f"* the default for {whose} ({how[why]}{tuned}; change it with oxmem rankings --use NAME)"))
    elif cmd == "evictions":
        at = parse_time(args.at) if args.at else None
        preview = await store.eviction_preview(at)
        if args.apply is not None and preview is not None:
            return await _apply_eviction(store, preview, args.apply, out_json)
        if out_json:
            _print_json(preview)
        elif preview is None:
            print(
                safe(
                    f"{store.path.name} ({store.capabilities.label}) has no clean-up of its own: "
                    "nothing would be deleted"
                )
            )
        else:
            print(safe(f"as of {preview.now}, the agent's clean-up would delete {len(preview.items):,} rows"))
            for rule in preview.rules:
                print(safe(f"rule: {rule}"))
            print(
                _table(
                    ["id", "group", "rule", "last used", "text"],
                    [
                        (e.id, e.group, e.rule, e.last_used_at or e.created_at or "", _preview(e.text, 50))
                        for e in preview.items
                    ],
                )
            )
    elif cmd == "notes":
        return await _notes(store, args)
    elif cmd == "schedules":
        return await _schedules(store, args)
    return 0


async def _tables(store: Memory, args: argparse.Namespace) -> None:
    if args.table is None:
        found = await store.tables()
        if args.json:
            _print_json(found)
        else:
            print(
                _table(
                    ["table", "kind", "rows", "columns"],
                    [(t.name, t.kind, "?" if t.rows is None else f"{t.rows:,}", ", ".join(t.columns)) for t in found],
                )
            )
        return
    page = await store.table_page(args.table, args.offset, args.limit)
    if args.json:
        _print_json({**dataclasses.asdict(page), "rows": [[_cell_json(v) for v in r] for r in page.rows]})
        return
    print(_table(page.columns, [[shown_value(v, 40) for v in r] for r in page.rows]))
    end = page.offset + len(page.rows)
    more = f"; more with --offset {end}" if page.more else ""
    print(f"rows {page.offset + 1}–{end}{more}" if page.rows else f"no rows after row {page.offset:,}")


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


def _print_sql(result: SqlResult, args: argparse.Namespace) -> None:
    if args.json:
        _print_json(
            {"columns": result.columns, "rows": [[_cell_json(v) for v in r] for r in result.rows], "more": result.more}
        )
        return
    if args.csv:
        out = csv.writer(sys.stdout, lineterminator="\n")
        out.writerow([safe(c, keep_newlines=True) for c in result.columns])
        out.writerows([[_cell_csv(v) for v in r] for r in result.rows])
    elif result.columns:
        print(_table(result.columns, [[shown_value(v, 40) for v in r] for r in result.rows]))
    more = f"; more with --limit {args.limit * 10}" if result.more else ""
    sys.stderr.write(f"{len(result.rows):,} row{'s' if len(result.rows) != 1 else ''}{more}\n")


def _cell_csv(value: Any) -> Any:
    """A cell for CSV: a BLOB as its hex, text with its control characters escaped (line ends kept: CSV quotes
    them), a number as it is."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.hex()
    return safe(value, keep_newlines=True) if isinstance(value, str) else value


def _cell_json(value: Any) -> Any:
    """A cell for JSON: a BLOB as its hex (JSON has no bytes)."""
    return {"blob_hex": value.hex()} if isinstance(value, bytes) else value


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


async def _schedules(store: Memory, args: argparse.Namespace) -> int:
    action, s = args.schedules_command, store.schedules
    if action == "list":
        rows = await s.search(
            user_id=args.user,
            status=args.status,
            cadence_type=args.cadence_type,
            name_contains=args.name,
            limit=args.limit,
        )
        if args.json:
            _print_json([{**dataclasses.asdict(r), "problem": r.problem} for r in rows])
        else:
            print(
                _table(
                    ["id", "user", "name", "cadence", "status", "next run", "last run", "fails"],
                    [
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
                    ],
                )
            )
            for r in rows:
                if r.note and not r.problem:
                    print(safe(f"ⓘ {r.schedule_id}: {r.note}"))
    elif action == "update":
        patch: dict[str, Any] = {k: v for k, v in (("goal", args.goal), ("name", args.name)) if v is not None}
        cadence = _cadence_args(args)
        if cadence is not None:
            patch["cadence"] = cadence
        if not patch:
            raise InvalidInputError("nothing to change: give --goal, --name, or a new --cron/--every/--at")
        changed = await s.update(args.schedule_id, patch)
        doc = {"schedule_id": changed.schedule_id, "goal": changed.goal, "cadence": json.loads(changed.cadence_json)}
        doc["next_run_at"] = changed.next_run_at
        _print_json(doc) if args.json else print(
            safe(f"{changed.schedule_id}: {describe(changed.cadence)}; next run {changed.next_run_at or '—'}")
        )
    elif action == "add":
        cadence = _cadence_args(args)
        made = await s.create(args.user, args.goal, cadence, name=args.name, notification_policy=args.policy)
        for warning in cadence_warnings(made.cadence):
            sys.stderr.write(f"oxmem: warning: {warning}\n")
        if args.json:
            _print_json({"schedule_id": made.schedule_id})
        else:
            print(safe(f"{made.schedule_id}: {describe(made.cadence)}; next run {made.next_run_at}"))
    elif action == "next":
        schedule = await s.get(args.schedule_id)
        fires = next_runs(schedule.cadence, utc_now(), args.count)
        if args.json:
            _print_json({"next": [to_rfc3339(f) for f in fires]})
        else:
            for f in fires:
                print(f"{to_rfc3339(f)}  ({format_in_timezone(f, schedule.cadence)})")
            if not fires:  # a one-shot already past: say so rather than print nothing
                print(safe(f"{schedule.schedule_id}: no future fires ({describe(schedule.cadence)})"))
    elif action in ("pause", "resume"):
        schedule = await (s.pause if action == "pause" else s.resume)(args.schedule_id)
        doc = {"schedule_id": schedule.schedule_id, "status": schedule.status, "next_run_at": schedule.next_run_at}
        _print_json(doc) if args.json else print(
            safe(f"{schedule.schedule_id}: {schedule.status}, next run {schedule.next_run_at or '—'}")
        )
    elif action == "delete":
        runs = await s.delete(args.schedule_id)
        doc = {"deleted": args.schedule_id, "runs": runs}
        _print_json(doc) if args.json else print(safe(f"deleted {args.schedule_id} and its {runs} runs"))
    elif action == "runs":
        runs = await s.runs(args.schedule_id, args.limit)
        if args.json:
            _print_json(runs)
        else:
            print(
                _table(
                    ["started", "finished", "status", "turns", "cost", "summary"],
                    [
                        (
                            r.started_at[:19],
                            r.finished_at[:19],
                            r.status,
                            r.turn_count,
                            f"{r.cost:.4f}",
                            _preview(r.output_summary or "", 50),
                        )
                        for r in runs
                    ],
                )
            )
    return 0


async def _notes(store: Memory, args: argparse.Namespace) -> int:
    action = args.notes_command
    if action == "list":
        notes = await store.list_notes(args.user, args.tags, args.tag_mode, args.contains)
        if args.json:
            _print_json(notes)
        else:
            print(
                _table(
                    ["note", "updated", "tags", "text"],
                    [(n.note_id, n.updated_at, ",".join(n.tags), _preview(n.content, 60)) for n in notes],
                )
            )
    elif action in ("add", "update"):
        notice = getattr(store, "vector_notice", None)  # what the edit leaves the agent's vector search without
        said = await notice() if notice else None
        if action == "add":
            note = await store.save_note(args.user, args.text, args.tags)
        else:
            given = {k: v for k, v in (("scope", args.scope), ("ttl", args.ttl)) if v is not KEEP}
            lacking = [k for k in given if k not in store.capabilities.note_fields]
            if lacking:
                raise InvalidInputError(
                    f"{store.capabilities.label} files' notes have no {' or '.join(lacking)} to change "
                    f"({' and '.join('--' + k for k in lacking)}: for ZEKE's memories)"
                )
            fields = {("ttl_seconds" if k == "ttl" else k): v for k, v in given.items()}
            note = await store.update_note(args.user, args.note_id, args.text, args.tags, **fields)
        if said:  # (after the edit: a refused one stays one line)
            sys.stderr.write(safe(f"oxmem: notice: {said}") + "\n")
        _print_json({"note_id": note.note_id}) if args.json else print(safe(note.note_id))
    elif action == "delete":
        await store.delete_note(args.user, args.note_id)
        _print_json({"deleted": args.note_id}) if args.json else print(safe(f"deleted {args.note_id}"))
    elif action == "search":
        like = await _like(store, args)
        if args.why is not None:
            await _why_note(store, args, like)
            return 0
        if args.ranking is None and any(r.scope == "notes" for r in store.retrievers()):
            ranking = await _ranking(store, args, "notes")
            kwargs = _ranking_kwargs(ranking, args)
        else:
            kwargs = _search_kwargs(args)
        hits = await store.search_notes(args.user, args.query, args.top_k, SearchOptions(**kwargs, **like))
        if args.json:  # (a list, as before: what was left out goes to stderr, one line per model)
            _print_json(hits)
            for model, why in getattr(hits, "skipped_models", {}).items():
                sys.stderr.write(safe(f"oxmem: notice: skipped vectors of {model}: {why}") + "\n")
        else:
            print(
                _table(
                    ["score", "note", "tags", "text"],
                    [(f"{h.score:.4f}", h.note_id, ",".join(h.tags), _preview(h.text, 60)) for h in hits],
                )
            )
            for model, why in getattr(hits, "skipped_models", {}).items():
                print(safe(f"skipped vectors of {model}: {why}"))
    return 0


#: what an interrupt leaves: the commands that commit in batches keep the batches they finished
_INTERRUPTED = {
    None: "nothing was written by the unfinished command",
    "import-jsonl": f"the batches of {BATCH_EVENTS} events that finished are stored, whole; run the same command "
    "again to resume (it skips what is stored)",
    "reindex": "the batches that finished are re-embedded, whole; run the same command again to resume",
}
#: what writing the output meets when it cannot go anywhere (`> /dev/full`, a quota, a disk gone)
_OUTPUT_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}


def _any_encoding() -> None:
    """Output in any terminal encoding: what it cannot show is written as ``\\uXXXX`` (still valid JSON), never a
    ``UnicodeEncodeError``."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    if sys.stderr is None:  # started with its stderr closed (`2>&-`)
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process
    if sys.stdout is None:  # `>&-`: refused before anything runs, so a change is never made unseen
        sys.stderr.write("oxmem: error: the output cannot be written (standard output is closed); nothing was done\n")
        return EXIT_ERROR
    _any_encoding()
    _Parser.argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    setup_logging("oxmem", args.verbose)
    try:
        code = asyncio.run(_run(args))
        sys.stdout.flush()  # a full disk or a closed pipe shows here, not in the interpreter's exit
        return code
    except OxmemError as exc:
        sys.stderr.write(f"oxmem: error: {safe(exc)}\n")
        return EXIT_ERROR
    except BrokenPipeError:  # `oxmem … | head`: the reader left; that is not an error
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's final flush quiet
        return 0
    except OSError as exc:
        if exc.errno not in _OUTPUT_ERRORS:
            raise
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - nothing more can reach it
        sys.stderr.write(
            f"oxmem: error: the output could not be written ({exc.strerror}); any change the command made is saved\n"
        )
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write(f"oxmem: interrupted; {_INTERRUPTED.get(args.command, _INTERRUPTED[None])}\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
