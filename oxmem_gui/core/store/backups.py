"""Backups: making one safely, where those taken before an edit go, how they are named and listed, and putting one
back.

:func:`backup_to` never harms a file: it refuses the source itself (also through a symbolic link), an existing
database unless told to overwrite it (the GUI's save dialog asks first), a file with a ``-wal`` or ``-journal``
beside it (another program's, or an unclean shutdown's: replacing the file under it would mix the two), and a
path holding a NUL. The copy is written to a hidden file in the target's folder and renamed over the target only
when complete, so a full disk or a crash leaves the old target as it was and no partial file. An error names the
file it is about: the target for what cannot be written, the source for what cannot be read.

A backup taken before an edit is ``{stem}-{YYYYmmdd-HHMMSS}{suffix}`` in a backups folder, made with SQLite's
online backup API (the WAL's content included), so it is itself a complete store. Restoring copies a backup's
pages into the live file in one step of that same API: SQLite locks the target for the copy, so another program
sees the old content or the restored one, never a mix, and a failed restore leaves the file as it was.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import apsw

from ..database import translate
from ..errors import InvalidInputError, OxmemError, StoreBusyError

STAMP = "%Y%m%d-%H%M%S"
_NAME = re.compile(r"^(?P<stem>.+)-(?P<stamp>\d{8}-\d{6})(?:-\d+)?(?P<suffix>\.[^.-]+)?$")


@dataclass(frozen=True)
class Backup:
    """One backup file: ``source`` is the name of the store it was taken of (``memory.db``)."""

    path: Path
    source: str
    taken_at: datetime
    size: int


def checked_target(source: Path | None, target: str | os.PathLike[str], overwrite: bool = False) -> Path:
    """``target`` as the file a backup of ``source`` may be written to (see the module's note), symbolic links
    followed; :class:`InvalidInputError` naming the target otherwise."""
    text = os.fspath(target)
    if "\0" in text:
        raise InvalidInputError("the backup's file name holds a NUL character; nothing was written")
    path = Path(text).expanduser()
    try:
        path.stat()  # a loop of symbolic links, a file where a folder should be (resolve() is silent on 3.13)
    except FileNotFoundError:  # a new name, or a link to one
        pass
    except OSError as exc:
        raise InvalidInputError(f"{path} cannot be a backup: {exc.strerror or exc}; nothing was written") from exc
    real = path.resolve(strict=False)
    if real.is_dir():
        raise InvalidInputError(f"{path} is a folder: name a file for the backup; nothing was written")
    if real.exists():
        if source is not None and real.samefile(source):
            raise InvalidInputError(
                f"{path} is {source.name} itself: a backup must go to another file; nothing was written"
            )
        if any(Path(f"{real}{end}").exists() for end in ("-wal", "-journal")):
            raise InvalidInputError(
                f"{path} has a -wal or -journal file beside it (in use by a program, or not closed cleanly): "
                "choose another name; nothing was written"
            )
        if real.stat().st_size and not overwrite:
            raise InvalidInputError(f"{path} already exists: choose a new name; nothing was overwritten")
    return real


def write_complete(target: Path, write: Callable[[Path], None]) -> Path:
    """``write(part)`` to a hidden file beside ``target``, then renamed over it; on any failure that file (and what
    SQLite made beside it) is removed and ``target`` is as it was. Errors of SQLite name ``target``."""
    part = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write(part)
        os.replace(part, target)
    except BaseException as exc:
        for leftover in (part, *(Path(f"{part}{end}") for end in ("-wal", "-shm", "-journal"))):
            with contextlib.suppress(OSError):
                leftover.unlink()
        if isinstance(exc, apsw.Error):
            raise (translate(exc, target) or OxmemError(f"cannot write {target}: {exc}")) from exc
        if isinstance(exc, OSError):
            raise OxmemError(f"cannot write {target}: {exc.strerror}; nothing was written") from exc
        raise
    return target


def backup_to(conn: apsw.Connection, target: str | os.PathLike[str], overwrite: bool = False) -> Path:
    """A complete copy of ``conn``'s database (its WAL content included) at ``target``, through SQLite's online
    backup API, made safely (see the module's note). Returns the file written."""
    source = Path(conn.filename) if conn.filename else None  # (an in-memory snapshot has no file)
    real = checked_target(source, target, overwrite)

    def copy(part: Path) -> None:
        dest = apsw.Connection(str(part))
        try:
            with dest.backup("main", conn, "main") as backup:
                while not backup.done:
                    try:
                        backup.step(1024)
                    except (apsw.CorruptError, apsw.NotADBError) as exc:  # the source's pages
                        raise translate(exc, source or "the database") from exc
        finally:
            dest.close()

    return write_complete(real, copy)


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


#: backups kept per file name in a backups folder: taking one more removes the oldest past this
KEEP = 10


def prune(folder: Path, source: Path, keep: int | None = None) -> list[Path]:
    """Remove the oldest backups of ``source``'s name in ``folder`` past the newest ``keep`` (:data:`KEEP`); the
    paths removed."""
    name = source.stem + (source.suffix or ".db")
    old = [b.path for b in list_backups(folder) if b.source == name][KEEP if keep is None else keep :]
    for path in old:
        path.unlink(missing_ok=True)
    return old


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
