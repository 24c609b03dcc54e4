"""The open store as the GUI sees it, and the one way panels run work on it.

:class:`StoreContext` holds the :class:`MemoryStore`, says whether it is read-only, polls ``PRAGMA data_version``
once a second so views refresh when the agent writes, and runs every piece of work as an *operation*
(:meth:`StoreContext.run`): a coroutine on the qasync loop whose SQL runs on the store's worker thread. Errors
reach the user as one dialog; long operations show progress in the status bar and can be cancelled.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from ..core.api import (
    Backup,
    Memory,
    NotFoundError,
    OperationCancelled,
    OxmemError,
    PullReport,
    backup_target,
    backups_dir,
    endpoint,
    fill_demo,
    list_backups,
    open_memory,
    open_remote,
    prune,
    refresh_remote,
    restore,
)
from .crash import unexpected

log = logging.getLogger(__name__)

POLL_MS = 1000
PROGRESS_INTERVAL_S = 0.05
DEMO_PREFIX = "oxmem-demo-"
#: the same error again within this many seconds is not shown again
REPEAT_S = 5.0


def gone(exc: Exception) -> bool:
    """``on_error`` for loading what the user selected: the agent deleted it meanwhile. Not worth a dialog —
    the row disappears on the next refresh, and the pane stays empty."""
    return isinstance(exc, NotFoundError)


class Operation:
    """A running operation: ``cancel()`` asks it to stop. Work that was given ``stop`` (``with_progress``) stops
    itself at its next checkpoint and says how far it got (a resumable import, a re-index); other work has its
    task cancelled."""

    def __init__(self, label: str, task: asyncio.Task, stop: threading.Event, cooperative: bool = False) -> None:
        self.label = label
        self.task = task
        self.stop = stop
        self.cooperative = cooperative

    def cancel(self) -> None:
        self.stop.set()
        if not self.cooperative:
            self.task.cancel()


class StoreContext(QObject):
    """Signals: ``opened`` (a store was opened or re-opened), ``changed(kind)`` (this app wrote: "sessions",
    "notes"), ``external_change`` (another program wrote; held back while :attr:`paused`, the polls that saw a
    change counted in ``waiting_changed(n)``), ``mode_changed(read_only)``, ``busy(label)`` /
    ``progress(label, done, total)`` / ``idle`` for the status bar, ``error(message)``."""

    opened = Signal()
    changed = Signal(str)
    external_change = Signal()
    waiting_changed = Signal(int)
    mode_changed = Signal(bool)
    busy = Signal(str)
    progress = Signal(str, int, int)
    idle = Signal()
    error = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.store: Memory | None = None
        self.backup_path: Path | None = None
        #: True while ``opened`` is emitted for the same file opened again (editing enabled): views keep their
        #: selection, results and filters and only refresh
        self.reopened = False
        #: the backup taken of each file since this app started: editing a file again takes no new one
        self._backups: dict[Path, Path] = {}
        self._enabling: asyncio.Future | None = None
        self._demo_dirs: list[Path] = []  # removed on close
        self._version: int | None = None
        self._ops: list[Operation] = []  # labelled: shown in the status bar
        self._tasks: set[asyncio.Task] = set()  # every running operation
        self._polling = False
        #: live updates paused: other programs' changes wait (how many polls saw one) instead of showing
        self.paused = False
        self.waiting = 0
        self._last_error: tuple[str, float] = ("", 0.0)
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    # -- state --------------------------------------------------------------------------------------

    @property
    def read_only(self) -> bool:
        return self.store is None or self.store.read_only

    @property
    def path(self) -> Path | None:
        return self.store.path if self.store else None

    @property
    def running(self) -> list[Operation]:
        return list(self._ops)

    async def open(
        self, path: str | Path, *, read_only: bool = True, embedding: str = "auto", key: str | None = None
    ) -> Memory:
        """Open ``path`` with the reader for its format (closing the current one); refresh everything.
        ``key``: of an encrypted file (:class:`KeyRequiredError` without one)."""
        store = await open_memory(path, read_only=read_only, embedding=embedding, key=key)
        await self.set_store(store)
        return store

    async def open_remote(
        self,
        url: str,
        token: str | None,
        progress: Any = None,
        stop: threading.Event | None = None,
        embedding: str = "auto",
    ) -> Memory:
        """Open a memory on a libSQL server as a read-only snapshot (:func:`..core.memory.open_remote`); the copy
        goes when the store is closed or another is opened."""
        store = await open_remote(url, token, progress=progress, stop=stop, embedding=embedding)
        await self.set_store(store)
        return store

    async def refresh_remote(self, progress: Any = None, stop: threading.Event | None = None) -> PullReport:
        """Pull what changed on the server into the open snapshot; the panels re-read it as they do when an agent
        writes (selection and scroll kept), and the status bar shows the new time."""
        store = self.require()
        report = await refresh_remote(store, progress, stop)
        await self.poll_now()
        self.mode_changed.emit(store.read_only)
        return report

    async def open_demo(self, embedding: str = "auto") -> Memory:
        """A fresh demo store in a temporary folder, open read-write (nothing there to protect); the folder is
        removed when the context closes."""
        folder = Path(tempfile.mkdtemp(prefix=DEMO_PREFIX))
        self._demo_dirs.append(folder)
        store = await open_memory(folder / "demo.db", read_only=False, create=True, embedding=embedding)
        await fill_demo(store)
        await self.set_store(store)
        return store

    def is_demo(self, path: str | Path) -> bool:
        """Whether ``path`` is a temporary demo store (of this or an earlier run): not worth remembering."""
        parent = Path(path).parent
        return parent.name.startswith(DEMO_PREFIX) and parent.parent == Path(tempfile.gettempdir())

    async def set_store(self, store: Memory) -> None:
        old, self.store = self.store, store
        same = old is not None and old.path == store.path
        self.backup_path = self._backups.get(store.path.resolve())
        if old is not None and old is not store:
            await old.aclose()
        self._version = await store.data_version()
        if self.waiting:  # what waited was the other file's
            self.waiting = 0
            self.waiting_changed.emit(0)
        self._timer.start()
        self.reopened = same
        try:
            self.opened.emit()
        finally:
            self.reopened = False
        self.mode_changed.emit(store.read_only)

    async def enable_editing(self) -> Path:
        """Back the file up with SQLite's backup API (WAL included), then re-open it read-write; returns the
        backup. One backup per file per run of the app: enabling editing again (after re-opening the file, or
        pressing the shortcut twice) reuses it."""
        if self._enabling is not None:  # already under way: the same backup, not a second one
            return await asyncio.shield(self._enabling)
        self._enabling = asyncio.get_running_loop().create_future()
        try:
            backup = await self._enable_editing()
        except BaseException as exc:
            self._enabling.set_exception(exc)
            self._enabling.exception()  # retrieved: a second caller may never come
            raise
        else:
            self._enabling.set_result(backup)
            return backup
        finally:
            self._enabling = None

    async def _enable_editing(self) -> Path:
        store = self.require()
        key = store.path.resolve()
        if not store.read_only:
            return self._backups.get(key) or store.path
        backup = self._backups.get(key)
        if backup is None or not backup.exists():
            backup = await store.backup_to(await asyncio.to_thread(backup_target, backups_dir(), store.path))
            await asyncio.to_thread(prune, backups_dir(), store.path)
            self._backups[key] = backup
        key = getattr(store, "cipher_key", None)  # an encrypted file is edited with the key it was opened with
        writable = await open_memory(store.path, read_only=False, embedding=store.backend, key=key)
        await self.set_store(writable)
        return backup

    async def use_embeddings_endpoint(self, chosen: endpoint.Endpoint | None) -> None:
        """Use ``chosen`` (None: none) for models with no local copy, and open the file again so its searches
        and edits look their models up afresh."""
        endpoint.configure(chosen)
        store = self.store
        if store is not None and store.remote is None:
            key = getattr(store, "cipher_key", None)
            await self.set_store(await open_memory(store.path, read_only=store.read_only, embedding=store.backend,
                                                   key=key))  # fmt: skip

    async def backups(self) -> list[Backup]:
        """Every backup in the backups folder, newest first."""
        return await asyncio.to_thread(list_backups, backups_dir())

    async def restore_backup(self, backup: Path) -> Path:
        """Put ``backup``'s content back into the open store's file, after backing up what is there now
        (returned); the store is re-opened in the mode it had."""
        store = self.require()
        before = await store.backup_to(await asyncio.to_thread(backup_target, backups_dir(), store.path))
        await asyncio.to_thread(restore, backup, store.path)
        reopened = await open_memory(store.path, read_only=store.read_only, embedding=store.backend)
        await self.set_store(reopened)
        return before

    def require(self) -> Memory:
        if self.store is None:
            raise OxmemError("no store is open")
        return self.store

    def edit_refusal(self, kind: str = "events") -> str | None:
        """Why ``kind`` of edit (events, notes, schedules, summary) cannot be made now, as a tooltip for the
        disabled control — or None when it can."""
        if self.store is None:
            return "No store is open."
        refusal = self.store.capabilities.refusal(kind)
        if refusal:
            return f"{self.store.capabilities.label}: {refusal}."
        if self.store.read_only:
            return "Read-only: choose Edit ▸ Enable Editing (Ctrl+E) first; a backup is taken."
        return None

    def writable(self, kind: str = "events") -> Memory | None:
        """The store if it may be changed (``kind`` of edit: events, notes, schedules, summary); otherwise None,
        after telling the user why (the ``error`` signal)."""
        if self.store is None:
            return None
        refusal = self.store.capabilities.refusal(kind)
        if refusal:
            self.error.emit(f"{self.store.path.name}: {refusal}.")
            return None
        if self.store.read_only:
            self.error.emit("this store is open read-only; choose Edit ▸ Enable Editing first (a backup is taken)")
            return None
        return self.store

    async def close(self) -> None:
        self._timer.stop()
        for op in self.running:
            op.cancel()
        if self.store is not None:
            await self.store.aclose()
            self.store = None
        for folder in self._demo_dirs:
            shutil.rmtree(folder, ignore_errors=True)
        self._demo_dirs.clear()

    # -- operations ---------------------------------------------------------------------------------

    def run(
        self,
        work: Callable[..., Awaitable[Any]],
        *,
        label: str | None = None,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[Exception], bool] | None = None,
        changes: str | None = None,
        with_progress: bool = False,
    ) -> Operation:
        """Run ``work()`` (a coroutine function) as an operation.

        ``on_done(result)`` runs on the GUI thread; an error goes to ``on_error`` (return True if handled) and
        otherwise to the ``error`` signal (one dialog). ``changes`` is emitted as ``changed`` after success.
        With ``with_progress``, ``work`` receives ``progress(done, total)`` (callable from any thread) and a
        ``threading.Event`` that is set on cancel; the operation shows in the status bar while it runs.
        """
        stop = threading.Event()

        last = [0.0]

        def report(done: int, total: int) -> None:
            # at most ~20 updates a second: a signal emitted from the worker thread costs the GUI thread time
            now = time.monotonic()
            if now - last[0] >= PROGRESS_INTERVAL_S or done >= total:
                last[0] = now
                self.progress.emit(label or "", done, total)

        async def body() -> Any:
            if with_progress:
                return await work(report, stop)
            return await work()

        task = asyncio.ensure_future(body())
        self._tasks.add(task)
        op = Operation(label or "", task, stop, cooperative=with_progress)
        if label:
            self._ops.append(op)
            self.busy.emit(label)

        def finished(t: asyncio.Task) -> None:
            self._tasks.discard(t)
            if op in self._ops:
                self._ops.remove(op)
            if label and not self._ops:
                self.idle.emit()
            if t.cancelled():
                return
            exc = t.exception()
            if exc is None:
                if changes:
                    self.changed.emit(changes)
                if on_done:
                    on_done(t.result())
                return
            if on_error and on_error(exc):
                return
            if isinstance(exc, OperationCancelled):
                return
            if not isinstance(exc, OxmemError):
                log.error("unexpected error in %s", label or "an operation", exc_info=exc)
                self._report(unexpected(str(exc) or type(exc).__name__))
            else:
                self._report(str(exc))

        task.add_done_callback(finished)
        return op

    def _report(self, message: str) -> None:
        """One dialog per problem: several loads failing the same way at once (every view of a damaged file)
        would otherwise stack identical dialogs."""
        now = time.monotonic()
        if message == self._last_error[0] and now - self._last_error[1] < REPEAT_S:
            return
        self._last_error = (message, now)
        self.error.emit(message)

    async def wait_idle(self) -> None:
        """Wait until no operation runs, including those started by others' completion (screenshots, tests)."""
        while self._tasks:
            await asyncio.wait(set(self._tasks))
            await asyncio.sleep(0)

    # -- live refresh -------------------------------------------------------------------------------

    def _poll(self) -> None:
        if self.store is None or self._polling:
            return
        self._polling = True
        store = self.store

        async def check() -> None:
            try:
                version = await store.data_version()
            except (OxmemError, RuntimeError) as exc:  # closed meanwhile, or the file went away: not every second
                log.warning("could not poll %s for changes: %s", store.path, exc)
                return
            finally:
                self._polling = False
            if store is self.store and version != self._version:
                self._version = version
                self._other_wrote()

        asyncio.ensure_future(check())

    def _other_wrote(self) -> None:
        """Another program committed: the panels re-read — or, paused, the change waits (and is counted)."""
        if self.paused:
            self.waiting += 1
            self.waiting_changed.emit(self.waiting)
        else:
            self.external_change.emit()

    def set_paused(self, paused: bool) -> None:
        """Pause live updates (the view stays as it is; what other programs write is counted), or resume them,
        re-reading at once when something waits. This app's own writes show either way."""
        self.paused = paused
        if not paused and self.waiting:
            self.waiting = 0
            self.waiting_changed.emit(0)
            self.external_change.emit()

    async def poll_now(self) -> None:
        """Check for changes by other programs at once (what the timer does every second)."""
        if self.store is None:
            return
        version = await self.store.data_version()
        if version != self._version:
            self._version = version
            self._other_wrote()
