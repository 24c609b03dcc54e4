"""Backups: making one safely, where those taken before an edit go, how they are named and listed, and putting one
back.

:func:`backup_to` never harms a file (:func:`checked_target`): it writes a new file, or replaces a SQLite database
or an empty file only when told to (the inspector asks first, naming what is there; the command line wants
``--overwrite``), and never a device, FIFO, socket, folder, symbolic link, a file of another kind, the source
itself, or a database with a ``-wal`` or ``-journal`` beside it (another program's, or an unclean shutdown's:
replacing the file under it would mix the two). The copy is written to a hidden file in the target's folder and
renamed over the target only when complete, so a full disk or a crash leaves the old target as it was and no
partial file. An error names the file it is about: the target for what cannot be written, the source for what
cannot be read.

A backup taken before an edit is ``{stem}-{YYYYmmdd-HHMMSS}{suffix}`` in a backups folder, made with SQLite's
online backup API (the WAL's content included), so it is itself a complete store. Restoring copies a backup's
pages into the live file in one step of that same API: SQLite locks the target for the copy, so another program
sees the old content or the restored one, never a mix, and a failed restore leaves the file as it was.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import apsw

from ..database import translate
from ..errors import InvalidInputError, OxmemError, StoreBusyError

STAMP = "%Y%m%d-%H%M%S"
#: the first 16 bytes of every SQLite database file
SQLITE_HEADER = b"SQLite format 3\x00"
_NAME = re.compile(r"^(?P<stem>.+)-(?P<stamp>\d{8}-\d{6})(?:-\d+)?(?P<suffix>\.[^.-]+)?$")


@dataclass(frozen=True)
class Backup:
    """One backup file: ``source`` is the name of the store it was taken of (``memory.db``)."""

    path: Path
    source: str
    taken_at: datetime
    size: int


class TargetExistsError(InvalidInputError):
    """The chosen backup file exists and may be replaced, but only when the user confirms (``overwrite``):
    ``what`` says what is there, for the question."""

    def __init__(self, path: Path, what: str) -> None:
        super().__init__(f"{path} already exists ({what}): choose a new name; nothing was overwritten")
        self.path = path
        self.what = what


_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def _not_regular(mode: int) -> str | None:
    return next((kind for test, kind in _KINDS if test(mode)), None if stat.S_ISREG(mode) else "not a regular file")


def what_is_there(path: Path, st: os.stat_result) -> str:
    """What an existing regular file holds, as the overwrite question names it: a SQLite database (an oxmem
    backup by its name), an empty file; :class:`InvalidInputError` for anything else, which is never replaced."""
    if st.st_size == 0:
        return "an empty file"
    try:
        with path.open("rb") as f:
            head = f.read(16)
    except OSError as exc:
        raise InvalidInputError(f"{path} cannot be read: {exc.strerror}; nothing was written") from exc
    if head != SQLITE_HEADER:
        raise InvalidInputError(
            f"{path} is not a SQLite database: a backup never replaces another kind of file; choose another name; "
            "nothing was written"
        )
    size = f"{st.st_size / 1e6:.1f} MB" if st.st_size >= 100_000 else f"{st.st_size:,} bytes"
    kind = "an oxmem backup" if _NAME.match(path.name) else "a SQLite database"
    return f"{kind}, {size}, changed {datetime.fromtimestamp(st.st_mtime):%Y-%m-%d %H:%M}"


def checked_target(source: Path | None, target: str | os.PathLike[str], overwrite: bool = False) -> Path:
    """``target`` as the file a backup of ``source`` may be written to, or :class:`InvalidInputError` naming it.

    Written: a new file (its folder made if need be); a regular file that is a SQLite database or empty, only with
    ``overwrite`` (:class:`TargetExistsError` otherwise, saying what is there). Never: a device, FIFO, socket or
    folder, a symbolic link (whatever it names), a non-empty file that is not SQLite, the source itself (also
    through a hard link), a database with a ``-wal`` or ``-journal`` beside it (in use)."""
    text = os.fspath(target)
    if "\0" in text:
        raise InvalidInputError("the backup's file name holds a NUL character; nothing was written")
    path = Path(text).expanduser().absolute()
    try:
        st: os.stat_result | None = path.lstat()
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InvalidInputError(f"{path} cannot be a backup: {exc.strerror or exc}; nothing was written") from exc
    if st is None:
        return path
    if stat.S_ISLNK(st.st_mode):
        raise InvalidInputError(
            f"{path} is a symbolic link (to {os.readlink(path)}): a backup is written only to a file named itself; "
            "nothing was written"
        )
    kind = _not_regular(st.st_mode)
    if kind:
        raise InvalidInputError(f"{path} is {kind}: a backup is written only to a regular file; nothing was written")
    if source is not None and source.exists() and path.samefile(source):
        raise InvalidInputError(
            f"{path} is {source.name} itself: a backup must go to another file; nothing was written"
        )
    if any(Path(f"{path}{end}").exists() for end in ("-wal", "-journal")):
        raise InvalidInputError(
            f"{path} has a -wal or -journal file beside it (in use by a program, or not closed cleanly): "
            "choose another name; nothing was written"
        )
    what = what_is_there(path, st)
    if not overwrite:
        raise TargetExistsError(path, what)
    return path


def write_complete(target: Path, write: Callable[[Path], None]) -> Path:
    """``write(part)`` to a hidden file beside ``target``, then renamed over it; on any failure that file (and what
    SQLite made beside it) is removed and ``target`` is as it was. Errors of SQLite name ``target``."""
    part = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write(part)
        with contextlib.suppress(FileNotFoundError):  # (still what was checked: not something made there since)
            kind = _not_regular(target.lstat().st_mode) or ("a symbolic link" if target.is_symlink() else None)
            if kind:
                raise InvalidInputError(f"{target} is {kind} now: a backup is written only to a regular file")
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
