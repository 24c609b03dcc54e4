"""An agent's memory on a libSQL / Turso server, opened as a read-only local copy.

:func:`~oxmem_gui.core.memory.open_remote` pulls a consistent snapshot (:mod:`.snapshot`) over Hrana's HTTP
pipeline (:mod:`.hrana`) into a private file in the user's cache folder and opens that file as any local one is
opened — same readers, same panels, the FTS leg rebuilt on the copy. :class:`RemoteSnapshot` is what the opened
memory keeps of where it came from: it refreshes the copy, says what it is, and removes it when the memory is
closed. Nothing is ever sent back to the server, and no edit is made to the copy but a refresh.

May import :mod:`..store` (the store's own full-text table, from its migration), :mod:`..database` and
:mod:`..errors`; never retrieval, schedules, formats or the front doors (which open the copy).
"""

from __future__ import annotations

import itertools
import os
import threading
from datetime import datetime
from pathlib import Path

from .. import folders
from ..database import Database
from ..errors import InvalidInputError
from .hrana import HranaClient, RemoteError, TokenError, server_url
from .snapshot import PullReport, pull, refresh, remove_copy

#: why nothing can be edited in a copy (said where an edit would be)
REMOTE_REASON = "a snapshot of a remote database is read-only: oxmem never writes to the server or to the copy"
#: where the command line finds a token when no other variable is named (as Turso's own tools name it)
TOKEN_ENV = "TURSO_AUTH_TOKEN"
_numbers = itertools.count(1)


def token_from(variable: str | None) -> str | None:
    """The auth token in the environment variable ``variable`` (:class:`InvalidInputError` when it is not set),
    or, when none is named, in ``$TURSO_AUTH_TOKEN`` if that is set."""
    if variable:
        token = os.environ.get(variable)
        if not token:
            raise InvalidInputError(f"--auth-token-env {variable}: that environment variable is not set")
        return token
    return os.environ.get(TOKEN_ENV) or None


def cache_dir() -> Path:
    """Where copies are made: ``remote/`` in the user's cache folder (``~/.cache/oxmem/remote`` on Linux)."""
    return folders.cache_dir() / "remote"


def copy_path(folder: Path, url: str) -> Path:
    """A new copy's file: the process id first, so :func:`sweep` can tell copies of processes that ended."""
    host = "".join(c if c.isalnum() or c in ".-" else "_" for c in server_url(url).split("//", 1)[1])[:60]
    return folder / f"{os.getpid()}-{next(_numbers)}-{host}.db"


def sweep(folder: Path) -> None:
    """Remove copies left by processes that no longer run (a crash, a kill)."""
    for path in folder.glob("*-*-*.db*"):
        pid = path.name.split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _running(int(pid)):
            path.unlink(missing_ok=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


class RemoteSnapshot:
    """Where a memory's copy came from: the server (its client holds the token, in memory only), the copy's file,
    and when it was taken."""

    def __init__(self, client: HranaClient, path: Path, report: PullReport) -> None:
        self.client = client
        self.path = path
        self.report = report
        self.pulled_at = datetime.now().astimezone()
        #: what the copy is when it is not an agent's memory ("not an agent's memory: its tables are shown")
        self.what: str | None = None
        self._db: Database | None = None
        self._lock = threading.Lock()

    def attach(self, db: Database) -> None:
        """Make ``db`` (the copy, open read-only) refuse every edit with :data:`REMOTE_REASON`, say what it is in
        its notice, and remove the copy once it is closed."""
        db.locked = REMOTE_REASON
        db.cleanups.append(self.discard)
        self._db = db
        self._show()

    def describe(self, what: str) -> None:
        """Say in the notice what the copy is when it is not an agent's memory."""
        self.what = what
        self._show()

    def _show(self) -> None:
        if self._db is not None:
            self._db.notice = self.notice

    @property
    def url(self) -> str:
        return self.client.url

    @property
    def notice(self) -> str:
        """``snapshot of URL at TIME``: what the status bar and the CLI say."""
        what = f" ({self.what})" if self.what else ""
        return f"snapshot of {self.url} at {self.pulled_at:%Y-%m-%d %H:%M:%S}{what}"

    def summary(self) -> str:
        """The notice, and what the last pull or refresh moved."""
        r = self.report
        said = f"{self.notice}: {r.total:,} rows in {r.requests} requests ({r.consistency})"
        unchecked = sum(r.unchecked.values())
        if unchecked:  # what the last refresh compared by bucket summary only (see .snapshot)
            said += f"; {unchecked:,} rows compared by size, type, number and time only (the byte check goes on)"
        return said

    def refresh(self, progress: object = None, stop: threading.Event | None = None) -> PullReport:
        """Bring the copy up to date (:func:`.snapshot.refresh`); runs off the event loop."""
        with self._lock:
            report = refresh(self.client, self.path, previous=self.report, progress=progress, stop=stop)  # type: ignore[arg-type]
            self.report = report
            self.pulled_at = datetime.now().astimezone()
            self._show()
            return report

    def discard(self) -> None:
        """Remove the copy (with its WAL files) and let go of the connection to the server."""
        self.client.close()
        remove_copy(self.path)


__all__ = [
    "REMOTE_REASON",
    "HranaClient",
    "PullReport",
    "RemoteError",
    "RemoteSnapshot",
    "TOKEN_ENV",
    "TokenError",
    "cache_dir",
    "copy_path",
    "pull",
    "server_url",
    "sweep",
    "token_from",
]
