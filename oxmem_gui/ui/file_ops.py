"""What the inspector does with files: open one (asking for an encrypted file's key), a demo, a new store, a
dropped file or a remote memory (its snapshot refreshed and saved); back up; enable editing (after a backup);
list, open, restore and compare with backups; import events from JSON Lines and re-embed chunks with a model,
both with progress and cancel.

:class:`FileOperations` is mixed into :class:`~.main_window.MainWindow`, whose menus call these.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSettings, QUrl
from PySide6.QtGui import QDesktopServices, QDragEnterEvent, QDropEvent

from ..core.api import (
    TOKEN_ENV,
    Backup,
    ImportResult,
    InvalidInputError,
    KeyRequiredError,
    Memory,
    OperationCancelled,
    PullReport,
    TargetExistsError,
    backups_dir,
    cache_root,
    cached_bytes,
    clear_all,
    diff_files,
    human_size,
    list_backups,
    max_bytes,
    read_jsonl,
    server_url,
)
from .context import StoreContext
from .dialogs import Dialogs
from .notes.panel import NotesPanel
from .widgets import plural

if TYPE_CHECKING:  # mixed into the main window
    from PySide6.QtWidgets import QMainWindow as _Window
else:
    _Window = object


class FileOperations(_Window):
    """The file actions of :class:`~.main_window.MainWindow` (see the module's docstring)."""

    # what it uses of the window
    ctx: StoreContext
    dialogs: Dialogs
    notes: NotesPanel
    recent_files: Callable[[], list[str]]
    settings: QSettings

    def _folder(self) -> str:
        """Where a file dialog starts: the open file's folder, else the most recent file's (the dialog itself
        falls back to the working folder when that is gone)."""
        if self.ctx.store is not None:
            return str(Path(self.ctx.store.path).parent)
        recent = self.recent_files()
        return str(Path(recent[0]).parent) if recent else ""

    def open_dialog(self) -> None:
        path = self.dialogs.open_file(
            "Open a memory store", "SQLite databases (*.db *.sqlite *.sqlite3);;All files (*)", self._folder()
        )
        if path:
            self.open_path(str(path))

    def open_path(self, path: str, read_only: bool = True, key: str | None = None) -> None:
        if not self.notes.guard():
            return

        def needs_key(exc: Exception) -> bool:  # an encrypted file: ask for its key, and try again with it
            if not isinstance(exc, KeyRequiredError):
                return False
            answer = self.dialogs.secret("Encrypted database", f"{exc}\n\nKey:")
            if answer:
                self.open_path(path, read_only, answer)
            return True

        self.ctx.run(
            lambda: self.ctx.open(path, read_only=read_only, key=key),
            label=f"Opening {Path(path).name}",
            on_error=needs_key,
        )

    def open_remote(self) -> None:
        """File ▸ Open Remote…: a memory on a libSQL / Turso server, pulled into a read-only snapshot. The URL and
        the token variable's name are remembered; a typed token lives only in the open snapshot's client."""
        if not self.notes.guard():
            return
        answer = self.dialogs.remote(
            str(self.settings.value("remote/url", "")), str(self.settings.value("remote/variable", TOKEN_ENV))
        )
        if answer is None:
            return
        try:
            server_url(answer.url)  # a URL that could carry a token is refused before it is shown or kept
        except InvalidInputError as exc:
            self.dialogs.error(str(exc))
            return
        self.settings.setValue("remote/url", answer.url)
        if answer.variable:
            self.settings.setValue("remote/variable", answer.variable)

        async def work(progress: Any, stop: Any) -> Any:
            return await self.ctx.open_remote(answer.url, answer.token, progress, stop)

        self.ctx.run(work, label=f"Pulling a snapshot of {answer.url}", with_progress=True)

    def refresh_snapshot(self) -> None:
        """View ▸ Refresh on a remote memory: pull what changed since the snapshot (only that is transferred)."""

        async def work(progress: Any, stop: Any) -> PullReport:
            return await self.ctx.refresh_remote(progress, stop)

        def done(report: PullReport) -> None:
            self.statusBar().showMessage(
                f"Refreshed: {plural(sum(report.changed.values()), 'row')} changed "
                f"({plural(report.total, 'row')} read in {plural(report.requests, 'request')})",
                15000,
            )

        self.ctx.run(work, label="Pulling what changed", with_progress=True, on_done=done)

    def save_snapshot(self) -> None:
        """File ▸ Save Snapshot As…: keep a copy of the remote memory's snapshot (the cache copy still goes on
        close)."""
        store = self.ctx.store
        if store is not None and store.remote is not None:
            stamp = store.remote.pulled_at.strftime("%Y%m%d-%H%M%S")
            self._copy_to("Save the snapshot as", f"snapshot-{stamp}.db", "Saving the snapshot", "Snapshot saved to")

    def open_demo(self) -> None:
        if self.notes.guard():
            self.ctx.run(self.ctx.open_demo, label="Creating a demo store")

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt's name
        if any(url.isLocalFile() for url in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt's name
        """A file dropped on the window opens (read-only, like File ▸ Open)."""
        files = [url.toLocalFile() for url in event.mimeData().urls() if url.isLocalFile()]
        if files:
            event.acceptProposedAction()
            self.open_path(files[0])

    def new_store(self) -> None:
        path = self.dialogs.save_file("New memory store", "SQLite databases (*.db)", "memory.db")
        if path:
            self.open_path(str(path), read_only=False)

    def back_up(self) -> None:
        if self.ctx.store is not None:
            self._copy_to("Back up the store to", f"{self.ctx.store.path.stem}-backup.db", "Backing up", "Backed up to")

    def _copy_to(self, title: str, suggested: str, label: str, done: str) -> None:
        """A consistent copy of the open file (SQLite's backup API, WAL included) where the user says. A file
        there is replaced only after a question naming what it is (a device, a folder, a link, another kind of
        file or the store itself are refused with the reason: :func:`..core.store.backups.checked_target`)."""
        store = self.ctx.require()
        path = self.dialogs.save_file(title, "SQLite databases (*.db)", suggested, confirm_overwrite=False)
        if path:
            self._write_copy(store, path, label, done, overwrite=False)

    def _write_copy(self, store: Memory, path: Path, label: str, done: str, overwrite: bool) -> None:
        def replace_asked(exc: Exception) -> bool:
            if not isinstance(exc, TargetExistsError):
                return False
            if self.dialogs.confirm(
                "Replace the file?", f"{exc.path} already exists: {exc.what}.\n\nReplace it with the copy?", "Replace"
            ):
                self._write_copy(store, path, label, done, overwrite=True)
            return True

        self.ctx.run(
            lambda: store.backup_to(path, overwrite=overwrite),
            label=label,
            on_done=lambda p: self.statusBar().showMessage(f"{done} {p}", 10000),
            on_error=replace_asked,
        )

    def enable_editing(self) -> None:
        if self.ctx.store is None or not self.ctx.read_only:
            return
        self.ctx.run(
            self.ctx.enable_editing,
            label="Backing up before editing",
            on_done=lambda p: self.statusBar().showMessage(
                f"Editing enabled; backup at {p} (File ▸ Backups… lists them)", 15000
            ),
        )

    def show_backups(self) -> None:
        """File ▸ Backups…: list them; open one read-only, restore one into the open store, or show the folder."""
        self.ctx.run(self.ctx.backups, label="Listing backups", on_done=self._chose_backup)

    def _chose_backup(self, backups: list[Backup]) -> None:
        store = self.ctx.store
        refusal = self.ctx.edit_refusal("events") if store is not None else "No store is open."
        answer = self.dialogs.backups(backups, str(backups_dir()), store.path.name if store else None, refusal)
        if answer is None:
            return
        action, backup = answer
        if action == "folder":
            backups_dir().mkdir(parents=True, exist_ok=True)
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(backups_dir())))
        elif action == "open" and backup is not None:
            self.open_path(str(backup.path))
        elif action == "restore" and backup is not None and store is not None and refusal is None:
            self._restore(backup)

    def search_caches(self) -> None:
        """File ▸ Search Caches…: how much the search indexes kept between launches take (the files opened before),
        and a button that removes them all — nothing is lost: each is built again at its file's next search."""

        def measured(size: int) -> None:
            bound = max_bytes()
            text = (
                f"The search indexes of the files opened before are kept in {cache_root()}, so a file opened again "
                f"answers its first search at once. They take {human_size(size)}. At most {human_size(bound)} are "
                "kept (the setting OXMEM_CACHE_MAX_MB), the least recently used removed first.\n\n"
                "Removing them loses nothing: each is built again at its file's next search."
            )
            if not size:
                self.dialogs.info(text)
            elif self.dialogs.confirm("Search caches", text, "Remove All"):  # (words that wrap, not a report's)
                self.ctx.run(
                    lambda: asyncio.to_thread(clear_all),
                    label="Removing the search caches",
                    on_done=lambda freed: self.dialogs.info(f"Removed {human_size(freed)} of search caches."),
                )

        self.ctx.run(lambda: asyncio.to_thread(cached_bytes), label="Measuring the search caches", on_done=measured)

    def compare_with_backup(self) -> None:
        """File ▸ Compare with Backup…: pick a backup or another file of the format — the picker opens in the
        backups folder, where this file's backups are kept, its newest backup selected (never the open file's own
        folder, a temporary one for the demo); what changed from it to the open file is read in the background and
        shown (:func:`.compare.diff_files`)."""
        store = self.ctx.store
        if store is None:
            return
        name = store.path.stem + (store.path.suffix or ".db")  # as its backups name their source

        def start() -> str:  # (file I/O: in a worker)
            folder = backups_dir()
            folder.mkdir(parents=True, exist_ok=True)
            newest = next((b.path for b in list_backups(folder) if b.source == name), None)
            return str(newest or folder)

        def pick(where: str) -> None:
            if self.ctx.store is store:  # (still the file asked about)
                self._compare_from(store, where)

        self.ctx.run(lambda: asyncio.to_thread(start), label="Finding backups", on_done=pick)

    def _compare_from(self, store: Memory, where: str) -> None:
        """Pick the file to compare ``store`` with, the picker starting at ``where`` (a folder, or a file to
        select), and show what changed."""
        path = self.dialogs.open_file(
            f"Compare {store.path.name} with a backup",
            "SQLite databases (*.db *.sqlite *.sqlite3);;All files (*)",
            where,
        )
        if path is None:
            return
        key = getattr(store, "cipher_key", None)
        self.ctx.run(
            lambda: diff_files(path, store.path, key=key, embedding="deterministic"),
            label=f"Comparing with {path.name}",
            on_done=self.dialogs.compare,
        )

    def _restore(self, backup: Backup) -> None:
        store = self.ctx.require()
        taken = backup.taken_at.strftime("%Y-%m-%d %H:%M:%S")
        question = (
            f"Replace everything in {store.path.name} with the backup taken {taken}?\n\n"
            "What the file holds now is backed up first, so this can be undone the same way."
        )
        if not self.notes.guard() or not self.dialogs.confirm("Restore a backup", question, "Restore"):
            return
        self.ctx.run(
            lambda: self.ctx.restore_backup(backup.path),
            label=f"Restoring {backup.path.name}",
            on_done=lambda before: self.statusBar().showMessage(
                f"Restored the backup of {taken}; what was there before is in {before}", 15000
            ),
        )

    def import_events(self) -> None:
        store = self.ctx.writable()
        if store is None:
            return
        path = self.dialogs.open_file("Import events", "JSON Lines (*.jsonl *.ndjson);;All files (*)", self._folder())
        if path is None:
            return

        async def work(progress: Any, stop: Any) -> ImportResult:
            records = await asyncio.to_thread(read_jsonl, path)
            return await store.import_events(records, progress=progress, stop=stop)

        def done(result: ImportResult) -> None:
            skipped = f" ({plural(result.skipped, 'was', 'were')} already there)" if result.skipped else ""
            self.statusBar().showMessage(f"Imported {plural(result.stored, 'event')} from {path.name}{skipped}", 10000)

        def failed(exc: Exception) -> bool:  # a cancel keeps the batches already committed: say so
            if isinstance(exc, OperationCancelled) and "resume" in str(exc):
                self.dialogs.info(str(exc).capitalize() + ".")
                return True
            return False

        self.ctx.run(
            work,
            label=f"Importing {path.name}",
            with_progress=True,
            changes="sessions",
            on_done=done,
            on_error=failed,
        )

    def reindex(self, model: str) -> None:
        store = self.ctx.writable()
        if store is None:
            return

        async def work(progress: Any, stop: Any) -> Any:
            return await store.reindex(None, model, progress, stop)

        def done(result: Any) -> None:
            self.statusBar().showMessage(
                f"Re-embedded {plural(result.reembedded, 'chunk')} with {result.model}"
                + (f"; {result.remaining:,} remain — run it again to resume" if result.remaining else ""),
                15000,
            )

        self.ctx.run(
            work, label=f"Re-indexing with the {model} model", with_progress=True, changes="sessions", on_done=done
        )

    def cancel_work(self) -> None:
        for op in self.ctx.running:
            op.cancel()
