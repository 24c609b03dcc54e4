"""Backups taken before a store is edited: where they go, how they are named and listed, and putting one back.

A backup is ``{stem}-{YYYYmmdd-HHMMSS}{suffix}`` in a backups folder, made with SQLite's online backup API (the
WAL's content included), so it is itself a complete store. Restoring copies a backup's pages into the live file
in one step of that same API: SQLite locks the target for the copy, so another program sees the old content or
the restored one, never a mix, and a failed restore leaves the file as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import apsw

from ..errors import InvalidInputError, StoreBusyError

STAMP = "%Y%m%d-%H%M%S"
_NAME = re.compile(r"^(?P<stem>.+)-(?P<stamp>\d{8}-\d{6})(?:-\d+)?(?P<suffix>\.[^.-]+)?$")


@dataclass(frozen=True)
class Backup:
    """One backup file: ``source`` is the name of the store it was taken of (``memory.db``)."""

    path: Path
    source: str
    taken_at: datetime
    size: int


def backup_target(folder: Path, source: Path, when: datetime | None = None) -> Path:
    """A new, unused backup path for ``source`` in ``folder``."""
    stamp = (when or datetime.now()).strftime(STAMP)
    suffix = source.suffix or ".db"
    target = folder / f"{source.stem}-{stamp}{suffix}"
    n = 1
    while target.exists():
        n += 1
        target = folder / f"{source.stem}-{stamp}-{n}{suffix}"
    return target


def list_backups(folder: Path) -> list[Backup]:
    """The backups in ``folder``, newest first (files not named like a backup are left out)."""
    found = []
    for path in folder.glob("*") if folder.is_dir() else ():
        match = _NAME.match(path.name)
        if not match or not path.is_file():
            continue
        taken = datetime.strptime(match["stamp"], STAMP)
        found.append(Backup(path, match["stem"] + (match["suffix"] or ""), taken, path.stat().st_size))
    return sorted(found, key=lambda b: (b.taken_at, b.path.name), reverse=True)


def restore(backup: Path, target: Path, busy_timeout_ms: int = 5000) -> None:
    """Replace ``target``'s whole content by ``backup``'s, as one locked copy (see the module's note).

    Raises :class:`InvalidInputError` when ``backup`` is not a SQLite database and :class:`StoreBusyError` when
    another program holds a write lock on ``target`` for longer than ``busy_timeout_ms``."""
    try:
        # immutable: a backup is never written, so no lock and no -wal/-shm files beside it
        source = apsw.Connection(
            f"{backup.resolve().as_uri()}?immutable=1", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
        )
        source.execute("SELECT count(*) FROM sqlite_schema").fetchall()
    except apsw.Error as exc:
        raise InvalidInputError(f"{backup.name} is not a SQLite database ({exc})") from exc
    dest = apsw.Connection(str(target))
    dest.set_busy_timeout(busy_timeout_ms)
    try:
        with dest.backup("main", source, "main") as copy:
            copy.step(-1)
            if not copy.done:
                raise StoreBusyError(f"{target.name} is busy; try restoring again")
    except apsw.BusyError as exc:
        raise StoreBusyError(f"{target.name} is busy (another program is writing); try again") from exc
    finally:
        dest.close()
        source.close()
