"""The tour of the command line (docs/command-line.md), kept true by running it.

``python -m tests.readme_tour --check`` exits 1 and prints a diff when the tour differs from what its
commands print now (0 when it is current); ``--write`` rewrites the tour in place (``./run docs``).

The tour is the part of the file between ``<!-- tour:begin -->`` and ``<!-- tour:end -->``. Prose there is left
as it is; every ```` ```console ```` block is a script whose ``$ `` lines are the commands, and everything else in
the block is replaced by what the commands print (stderr and stdout in the order a terminal shows them):

- ``export NAME=VALUE …`` sets variables for the commands after it;
- ``oxmem ARGS`` runs :func:`oxmem_gui.cli.main` in this process; ``oxmem ARGS | head -n N`` keeps the first N
  lines of its stdout;
- any other line runs in ``bash``.

The blocks run in order, in one fresh folder shown as ``/tmp/tour`` (the home folder is a folder in it), with
no ``OXMEM_*`` or ``XDG_*`` variable but those the tour exports, ``TZ=UTC`` and ``COLUMNS=100``. So that the output
is the same on every run and every machine, the clock is fixed (:data:`CLOCK`, one second later after each
command; times that SQLite's own clock wrote are set to it after each command) and ``uuid.uuid4`` draws from a
seeded generator: a command may name an id that an earlier one printed (the tour's ``schedules runs`` does), and
that id changes only when what runs before it does.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import logging
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import apsw

README = Path(__file__).resolve().parents[1] / "docs" / "command-line.md"
BEGIN, END = "<!-- tour:begin -->", "<!-- tour:end -->"
#: the folder the tour's commands and output name; the real one is a fresh temporary folder
TOUR_DIR = "/tmp/tour"
#: what the clock reads at the first command (a Friday morning)
CLOCK = datetime(2026, 11, 20, 8, 15, tzinfo=timezone.utc)
UUID_SEED = 13

_BLOCK = re.compile(r"^```console\n(.*?)^```$", re.S | re.M)
_HEAD = re.compile(r"^(?P<command>.*?)\s*\|\s*head -n (?P<lines>\d+)$")


class TourError(Exception):
    """The README has no tour, or a command of it could not run."""


# -- a fixed clock and fixed ids ------------------------------------------------------------------------------


class _Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def tick(self) -> None:
        self.now += timedelta(seconds=1)


@contextlib.contextmanager
def _fixed_world(clock: _Clock) -> Iterator[None]:
    """Python's clock reads ``clock`` and ``uuid.uuid4`` is seeded until the block ends."""
    import oxmem_gui.cli  # noqa: F401 - the modules whose bindings of the clock are replaced
    from oxmem_gui.core.schedules import cadence
    from oxmem_gui.core.store import notes

    def aware_now() -> datetime:
        return clock.now

    def text_now() -> str:
        return clock.now.isoformat(timespec="microseconds")

    def swap(pairs: list[tuple[object, object]]) -> None:
        """Every binding of a first element in the project's modules (``from .cadence import utc_now`` made one
        in each module that imports it) bound to the second."""
        for module in [m for name, m in list(sys.modules.items()) if name.split(".")[0] == "oxmem_gui"]:
            for attr, value in list(vars(module).items()):
                for old, new in pairs:
                    if value is old:
                        setattr(module, attr, new)

    pairs = [(cadence.utc_now, aware_now), (notes.utc_now_text, text_now)]
    ids = random.Random(UUID_SEED)
    real_uuid4 = uuid.uuid4
    swap(pairs)
    uuid.uuid4 = lambda: uuid.UUID(int=ids.getrandbits(128), version=4)
    try:
        yield
    finally:
        uuid.uuid4 = real_uuid4
        swap([(fixed, real) for real, fixed in pairs])


#: a time as SQLite's CURRENT_TIMESTAMP writes it
_SQLITE_TIME = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]"


def _is_sqlite(path: Path) -> bool:
    if not path.is_file():
        return False
    with path.open("rb") as f:
        return f.read(16) == b"SQLite format 3\x00"


def _settle(folder: Path, since: datetime, until: datetime, clock: _Clock) -> None:
    """Every time that SQLite's own clock (``CURRENT_TIMESTAMP``) wrote between ``since`` and ``until`` into a
    database in ``folder`` is set to what ``clock`` reads, as if SQLite had read it too. (SQLite's clock can only
    be replaced by a VFS, and one written in Python cannot share a WAL index between connections.)"""
    window = [t.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S") for t in (since, until)]
    fixed = clock.now.strftime("%Y-%m-%d %H:%M:%S")
    for path in sorted(folder.rglob("*")):
        if not _is_sqlite(path):
            continue
        conn = apsw.Connection(str(path))
        try:
            with conn:
                tables = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
                virtual = [name for name, sql in tables if sql and sql.upper().startswith("CREATE VIRTUAL")]
                for table, _ in tables:
                    if (
                        table.startswith("sqlite_")
                        or table in virtual
                        or any(table.startswith(f"{v}_") for v in virtual)
                    ):
                        continue  # SQLite's own, and a virtual table with its shadow tables
                    q = '"' + table.replace('"', '""') + '"'
                    for column in [row[1] for row in conn.execute(f"PRAGMA table_info({q})")]:
                        c = '"' + column.replace('"', '""') + '"'
                        conn.execute(
                            f"UPDATE {q} SET {c} = ? WHERE typeof({c}) = 'text' AND {c} GLOB ? AND {c} BETWEEN ? AND ?",
                            (fixed, _SQLITE_TIME, *window),
                        )
        finally:
            conn.close()


@contextlib.contextmanager
def _tour_environment(folder: Path) -> Iterator[None]:
    """The process's environment, working folder and log handlers for the tour; all restored afterwards (a handler
    the tour's ``oxmem`` runs add writes into the tour's folder, which is deleted after it)."""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OXMEM_", "XDG_"))}
    env.update(HOME=str(folder / "home"), TZ="UTC", COLUMNS="100")
    os.environ.clear()
    os.environ.update(env)
    time.tzset()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        time.tzset()
        for handler in [h for h in root.handlers if h not in saved_handlers]:
            root.removeHandler(handler)
            handler.close()
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)


# -- running one command --------------------------------------------------------------------------------------


class _Tape(io.TextIOBase):
    """One of a command's two output streams, recorded in the order of writing with the other one."""

    def __init__(self, chunks: list[tuple[str, str]], name: str) -> None:
        self.chunks, self.name = chunks, name

    def write(self, text: str) -> int:
        self.chunks.append((self.name, text))
        return len(text)

    def isatty(self) -> bool:
        return False


def _run_oxmem(argv: list[str], keep_lines: int | None) -> str:
    from oxmem_gui.cli import main

    chunks: list[tuple[str, str]] = []
    out, err = _Tape(chunks, "out"), _Tape(chunks, "err")
    # SystemExit: argparse's usage errors and --help
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), contextlib.suppress(SystemExit):
        main(argv)
    if keep_lines is None:
        return "".join(text for _, text in chunks)
    shown, left = [], keep_lines
    for name, text in chunks:
        if name == "err":
            shown.append(text)
            continue
        for line in text.splitlines(keepends=True):
            if left > 0:
                shown.append(line)
                left -= line.endswith("\n")
    return "".join(shown)


def _run_line(line: str, folder: Path) -> str:
    """What ``line`` prints, with the real tour folder named ``/tmp/tour``."""
    real = line.replace(TOUR_DIR, str(folder))
    head = _HEAD.match(real)
    words = shlex.split(head.group("command") if head else real)
    if words[:1] == ["export"]:
        for word in words[1:]:
            name, _, value = word.partition("=")
            os.environ[name] = value
        return ""
    if words[:1] == ["oxmem"]:
        output = _run_oxmem(words[1:], int(head.group("lines")) if head else None)
    else:
        done = subprocess.run(
            ["bash", "-c", real], cwd=folder, env=dict(os.environ), capture_output=True, encoding="utf-8", check=False
        )
        output = done.stdout + done.stderr
    if "Traceback (most recent call last)" in output:
        raise TourError(f"`{line}` crashed:\n{output}")
    for shown_as in {str(folder), os.path.realpath(folder)}:
        output = output.replace(shown_as, TOUR_DIR)
    return output


# -- the README -----------------------------------------------------------------------------------------------


def _tour_span(text: str) -> tuple[int, int]:
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise TourError(f"the README has no tour: {BEGIN} … {END} not found")
    return start + len(BEGIN), end


def render(text: str) -> str:
    """``text`` (a README) with every console block of its tour replaced by what its commands print now."""
    start, end = _tour_span(text)
    clock = _Clock(CLOCK)
    with tempfile.TemporaryDirectory(prefix="oxmem-tour-") as tmp:
        folder = Path(tmp)

        def block(match: re.Match[str]) -> str:
            lines = []
            for line in match.group(1).splitlines():
                if not line.startswith("$ "):
                    continue
                since = datetime.now(timezone.utc) - timedelta(seconds=2)
                output = _run_line(line[2:], folder)
                if not line.startswith("$ export "):
                    _settle(folder, since, datetime.now(timezone.utc) + timedelta(seconds=2), clock)
                    clock.tick()
                lines.append(line)
                lines += [o.rstrip() for o in output.splitlines()]
            return "```console\n" + "".join(f"{line}\n" for line in lines) + "```"

        with _tour_environment(folder), _fixed_world(clock):
            tour = _BLOCK.sub(block, text[start:end])
    return text[:start] + tour + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.readme_tour", description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 with a diff when the tour is out of date (default)")
    mode.add_argument("--write", action="store_true", help="rewrite the tour with what its commands print now")
    parser.add_argument(
        "--readme", type=Path, default=README, help="the file (default: the project's docs/command-line.md)"
    )
    args = parser.parse_args(argv)
    old = args.readme.read_text(encoding="utf-8")
    try:
        new = render(old)
    except TourError as exc:
        sys.stderr.write(f"readme_tour: {exc}\n")
        return 2
    if args.write:
        if new != old:
            args.readme.write_text(new, encoding="utf-8")
        print(f"{args.readme}: tour {'rewritten' if new != old else 'already current'}")
        return 0
    if new == old:
        print(f"{args.readme}: tour is current")
        return 0
    name = str(args.readme)
    sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), name, f"{name} (now)"))
    print(f"{args.readme}: tour is out of date; `./run docs` rewrites it")
    return 1


if __name__ == "__main__":
    sys.exit(main())
