"""The agents' memory files at their usual places on this machine, and what each is — for the inspector's start
page (“Found on this machine”).

Each place is the one the agent itself uses when nothing else is configured (its own documentation; see
docs/formats.md); a place that depends on where the agent runs (Oxydra's workspace, ZEKE's and aidaemon's
folder) is looked for in the current directory:

=========  ====================================================  ==============================================
agent      places looked at, in order                            why there
=========  ====================================================  ==============================================
Oxydra     ``./.oxydra/memory.db``                               ``<workspace>/.oxydra/memory.db``
Omega      ``~/.omega/data/memory.db``, ``~/.omega/memory.db``   its default, then older versions' default
ZEKE       ``$MEMORY_DB``, ``./data/memory.db``                  its setting, then its default
aidaemon   ``./aidaemon.db``, ``~/.aidaemon/aidaemon.db``        beside its ``config.toml`` (the folder it is run
                                                                 in), and ``~/.aidaemon``, where it keeps its
                                                                 other files
mem0       ``$MEM0_DIR/history.db`` or ``~/.mem0/history.db``    its change log's default
oxmem      :func:`.folders.default_db_path`                      the store ``oxmem`` opens when none is named
=========  ====================================================  ==============================================

A place is listed only when a regular file is there. Looking is read-only to the byte: the first bytes are read
(:func:`.formats.detect.sniff_file`), and a SQLite file is opened ``mode=ro&immutable=1`` — no lock, no ``-wal``,
``-shm`` or ``-journal`` made or removed — for :func:`.formats.detect.detect_schema`. (``immutable`` does not
read a ``-wal``: a file whose agent has just created its tables may be called a plain SQLite database until the
agent checkpoints.) A file that is not SQLite, is encrypted, is empty or cannot be read is listed saying so.
Nothing here creates a file or a folder. It does file I/O: run it off the GUI thread.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import apsw

from .folders import default_db_path
from .formats.detect import LABELS, detect_schema, sniff_file

#: what the start page says of a file that is not a readable agent's memory (``LABELS`` says it for the others)
SAID = {
    "not-sqlite": "not a SQLite file",
    "encrypted": "encrypted (needs a key)",
    "empty": "an empty file",
    "sqlite-unknown": "a SQLite database of another program",
}


@dataclass(frozen=True)
class Place:
    """Where an agent keeps its memory: ``agent`` (its name), ``path`` and ``where`` (the place as its agent
    documents it, e.g. ``~/.omega/data/memory.db``)."""

    agent: str
    path: Path
    where: str


@dataclass(frozen=True)
class Found:
    """A file at a :class:`Place`: ``format`` is the name ``oxmem info`` prints (:mod:`.formats.detect`; also
    ``"empty"`` and ``"unreadable"``), ``what`` says it in plain words, ``size_bytes`` its size."""

    agent: str
    path: Path
    where: str
    format: str
    what: str
    size_bytes: int

    @property
    def summary(self) -> str:
        """``Omega memory, 48 KB``."""
        return f"{self.what}, {human_size(self.size_bytes)}"


def human_size(size: int) -> str:
    """``512 bytes``, ``48 KB``, ``3.2 MB``, ``1.5 GB`` (1 KB = 1024 bytes)."""
    if size < 1024:
        return f"{size} byte{'s' if size != 1 else ''}"
    value = float(size)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1024
        if value < 1024 or unit == "TB":
            return f"{value:.0f} {unit}" if value >= 10 else f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def known_places(
    home: Path | None = None, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> list[Place]:
    """The usual places of each agent's memory file (see the module's table), in order, whether a file is there
    or not. ``home``, ``cwd`` and ``env`` default to this process's home folder, directory and environment."""
    home = Path.home() if home is None else home
    cwd = Path.cwd() if cwd is None else cwd
    env = os.environ if env is None else env
    places = [
        Place("Oxydra", cwd / ".oxydra" / "memory.db", "<workspace>/.oxydra/memory.db"),
        Place("Omega", home / ".omega" / "data" / "memory.db", "~/.omega/data/memory.db"),
        Place("Omega", home / ".omega" / "memory.db", "~/.omega/memory.db (older versions)"),
    ]
    if env.get("MEMORY_DB"):
        places.append(Place("ZEKE", Path(env["MEMORY_DB"]).expanduser(), "$MEMORY_DB"))
    places += [
        Place("ZEKE", cwd / "data" / "memory.db", "./data/memory.db"),
        Place("aidaemon", cwd / "aidaemon.db", "aidaemon.db beside its config.toml"),
        Place("aidaemon", home / ".aidaemon" / "aidaemon.db", "~/.aidaemon/aidaemon.db"),
    ]
    mem0 = env.get("MEM0_DIR")
    places.append(
        Place("mem0", Path(mem0).expanduser() / "history.db", "$MEM0_DIR/history.db")
        if mem0
        else Place("mem0", home / ".mem0" / "history.db", "~/.mem0/history.db")
    )
    places.append(Place("oxmem", default_db_path(), "oxmem's own store"))
    return places


def probe(path: Path) -> tuple[str, str]:
    """``(format, what)`` of the regular file at ``path``, read-only to the byte (see the module's docstring)."""
    try:
        if path.stat().st_size == 0:
            return "empty", SAID["empty"]
        sniffed = sniff_file(path)
        if sniffed is not None:
            return sniffed, SAID[sniffed]
        if not os.access(path, os.R_OK):
            return "unreadable", "cannot be read (permission denied)"
        uri = f"file:{quote(os.fsencode(path.resolve()))}?mode=ro&immutable=1"
        conn = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        try:
            fmt = detect_schema(conn)
        finally:
            conn.close()
    except apsw.Error as exc:
        return "unreadable", f"cannot be read as SQLite ({exc})"
    except OSError as exc:
        return "unreadable", f"cannot be read ({exc.strerror or exc})"
    return fmt, SAID.get(fmt) or LABELS.get(fmt, fmt)


def find_known(home: Path | None = None, cwd: Path | None = None, env: Mapping[str, str] | None = None) -> list[Found]:
    """The files at :func:`known_places` that exist and are regular files, each probed (:func:`probe`), in the
    places' order; a file reached from two places is listed once, under the first."""
    found: list[Found] = []
    seen: set[Path] = set()
    for place in known_places(home, cwd, env):
        try:
            if not place.path.is_file():
                continue
            resolved = place.path.resolve()
            size = place.path.stat().st_size
        except OSError:
            continue
        if resolved in seen:
            continue
        seen.add(resolved)
        fmt, what = probe(place.path)
        found.append(Found(place.agent, place.path, place.where, fmt, what, size))
    return found
