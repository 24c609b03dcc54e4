"""The command line's parser (one clear line for every mistake, exit 2), the types of its values, and the
options many commands share."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from ..core.api import (
    BACKEND_NAMES,
    BUSY_TIMEOUT_MS,
    FTS_MODES,
    INT64_MAX,
    KEY_ENV,
    MAX_TOP_K,
    TAG_MODES,
    TOKEN_ENV,
    WEEKDAY_NUMBERINGS,
    endpoint,
)
from .text import safe

EXIT_ERROR = 2
#: the hybrid search's weights when neither --vector-weight nor --fts-weight is given
VECTOR_WEIGHT, FTS_WEIGHT = 0.7, 0.3


class Parser(argparse.ArgumentParser):
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
                    known |= sub._options() if isinstance(sub, Parser) else set(sub._option_string_actions)
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


def text_arg(value: str) -> str:
    """An argument that is stored or searched must be valid UTF-8 (Python keeps an undecodable byte of the
    command line as a lone surrogate, which SQLite cannot take)."""
    for i, c in enumerate(value, 1):
        if "\ud800" <= c <= "\udfff":
            byte = f"byte 0x{ord(c) - 0xDC00:02x}" if "\udc80" <= c <= "\udcff" else f"{c!r}"
            raise argparse.ArgumentTypeError(f"is not valid UTF-8 text ({byte} at character {i})")
    return value


def seconds_arg(text: str) -> float:
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


def ttl_arg(text: str) -> int | None:
    """``--ttl``: seconds ≥ 1, or ``none``."""
    return None if text.strip().lower() == "none" else int_in(1, INT64_MAX)(text)


def int_in(low: int, high: int) -> Callable[[str], int]:
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


def float_in(low: float, high: float) -> Callable[[str], float]:
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


def _global_options() -> tuple[tuple[tuple[str, ...], dict[str, Any]], ...]:
    """Every global option: its flags and what ``add_argument`` takes (read when the parser is built, so the
    environment's defaults are today's)."""
    return (
        (("--db",), dict(default=None, metavar="PATH", help="store file (default: $OXMEM_DB or the user data folder)")),
        (("-v", "--verbose"), dict(action="store_true", default=False,
            help="log what happens, down to debug level, on standard error and in the log file")),
        (("--embedding",), dict(choices=BACKEND_NAMES, default=os.environ.get("OXMEM_EMBEDDING", "auto"),
            help="backend for new vectors and queries: auto = semantic when its model is installed, else "
            "deterministic (default: $OXMEM_EMBEDDING or auto)")),
        (("--model-path",), dict(action="append", default=None, metavar="DIR|NAME=DIR",
            help="a folder of your own with the semantic model (default: the one `oxmem model install` prepared); "
            "NAME=DIR: the folder of the model a file names (its embedding_model), used as it is, unverified; "
            "repeatable (default: looked up in the Hugging Face and fastembed caches)")),
        (("--embeddings-url",), dict(default=os.environ.get(endpoint.URL_ENV), metavar="URL",
            help="an OpenAI-compatible embeddings endpoint for a model no local copy of which is found (ZEKE's "
            "text-embedding-3-small): 'openai' or a base URL such as http://localhost:11434/v1; the key comes from "
            f"${endpoint.KEY_ENV}; a query's text is sent, a memory's when an edit re-embeds it "
            f"(default: ${endpoint.URL_ENV}, else none: nothing is sent)")),
        (("--json",), dict(action="store_true", default=False, help="print one JSON document on stdout")),
        (("--wait",), dict(type=seconds_arg, default=BUSY_TIMEOUT_MS / 1000, metavar="SECONDS",
            help="how long a write waits for another program's lock on the store "
            f"(default: {BUSY_TIMEOUT_MS / 1000:g})")),
        (("--read-only",), dict(action="store_true", default=False,
            help="never write: a command that would change the file is refused (exit 2) before it is opened "
            "(default: off; reading commands always open it read-only)")),
        (("--no-backup",), dict(action="store_true", default=False,
            help="a command that changes an existing file first backs it up, as the inspector's Enable Editing does "
            "(the newest 10 per file kept, in $OXMEM_BACKUP_DIR or the user data folder's backups/); this skips it")),
        (("--key",), dict(type=text_arg, default=None, metavar="KEY",
            help=f"key of an encrypted (SQLCipher) database (default: ${KEY_ENV}; prefer the variable: "
            "arguments are visible to other users)")),
        (("--remote",), dict(default=None, metavar="URL",
            help="read an agent's memory on a libSQL / Turso server (libsql://HOST, https://HOST, http://HOST:PORT): "
            "a snapshot is pulled into the cache folder, read, and removed; nothing is written (default: off)")),
        (("--auth-token-env",), dict(default=None, metavar="VAR",
            help=f"the environment variable holding --remote's auth token (default: ${TOKEN_ENV} when it is set)")),
        (("--cron-weekdays",), dict(choices=WEEKDAY_NUMBERINGS, default="standard",
            help="how numeric cron weekdays are read in newer Oxydra files: standard (Sunday = 0) or sunday-1 "
            "(Sunday = 1, as that agent counts; default: standard)")),
    )  # fmt: skip


def global_options(parser: argparse.ArgumentParser, suppress: bool) -> None:
    """The options every command takes, before or after it: on a command's parser ``suppress`` leaves them
    unset unless given there, so the program's own values stand."""
    for flags, options in _global_options():
        if suppress:
            options = {**options, "default": argparse.SUPPRESS}
        parser.add_argument(*flags, **options)


def tag_filter(parser: argparse.ArgumentParser, noun: str, without: str) -> None:
    """``--tag T`` (repeatable) and ``--tag-mode any|all``: only the ``noun``s tagged so (``without``: what a
    command gives with no tag)."""
    parser.add_argument(
        "--tag",
        action="append",
        type=text_arg,
        default=[],
        dest="tags",
        metavar="T",
        help=f"only {noun}s tagged T; repeat for more tags (default: {without})",
    )
    parser.add_argument(
        "--tag-mode",
        choices=TAG_MODES,
        default="any",
        help=f"any: a {noun} needs one of the --tag tags; all: every one (default: any)",
    )


def like_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--like",
        type=text_arg,
        default=None,
        metavar="ID",
        help="more like this: the stored vector of ID (a chunk, note or memory id) is the query of the vector leg — "
        "exact and offline for any model; QUERY, if given, is the keyword part (default: ID's own words)",
    )


def search_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--top-k",
        type=int_in(1, MAX_TOP_K),
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
    tag_filter(parser, "hit", "no tag filter")
    parser.add_argument(
        "--ranking",
        type=text_arg,
        default=None,
        metavar="NAME",
        help="which ranking to run (see `oxmem rankings`; default: the store's hybrid, or the agent's own for "
        "another agent's file)",
    )
