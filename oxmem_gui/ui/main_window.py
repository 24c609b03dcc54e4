"""The inspector's main window: navigation between the panels, menus with shortcuts, the read-only / editing
indicator, and progress of long work in the status bar."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings, QSize, Qt
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QFontMetrics,
    QGuiApplication,
    QKeySequence,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QWidget,
)

from .. import __version__
from ..core.api import (
    Capabilities,
    InvalidInputError,
    JudgmentStore,
    describe_memory,
    endpoint,
    find_known,
    info_lines,
)
from .context import StoreContext
from .dialogs import Dialogs
from .file_ops import FileOperations
from .focus_style import FocusFrameStyle
from .notes.panel import NotesPanel
from .resources import icon
from .schedules.panel import SchedulesPanel
from .search.panel import SearchPanel
from .sessions.panel import SessionsPanel
from .start_page import StartPage
from .status_bar import StatusBar
from .tables_panel import TablesPanel
from .widgets import ColumnChooser

PANELS = ("sessions", "notes", "search", "schedules", "tables")
MAX_RECENT = 8
#: the size of the first window, before the screen's available area is taken into account (:meth:`_fit_screen`)
FIRST_SIZE = QSize(1200, 720)
#: the title bar and borders a window manager adds, allowed for before the window is shown and framed
FRAME_ALLOWANCE = 32
#: the status bar's path label is elided to this width (the full path is its tooltip)
PATH_WIDTH = 340
#: keys that are not menu shortcuts, for Help ▸ Keyboard Shortcuts
KEYS = (
    ("Tab / Shift+Tab", "next / previous control (out of tables and text boxes too)"),
    ("Arrows, Page Up/Down, Home/End", "move within a list or table"),
    ("Escape", "clear the filter being typed in; close a dialog"),
    ("Enter or double-click on a search hit", "show its event in the session browser"),
    ("Ctrl+L on a search hit (or its context menu)", "more like this: search with its own stored vector"),
    ("Ctrl+Shift+C in a table (or right-click its header)", "show or hide its columns"),
    ("Comma or Enter in a tag field", "add the tag"),
    ("Ctrl+Z / Ctrl+Shift+Z in a text field", "undo / redo typing (Ctrl+Alt+Z undoes the last saved note edit)"),
    ("Alt+underlined letter", "press that button or open that menu"),
)


class MainWindow(FileOperations, QMainWindow):
    def __init__(
        self,
        ctx: StoreContext,
        settings: QSettings | None = None,
        dialogs: Dialogs | None = None,
        judgments: JudgmentStore | None = None,
    ) -> None:
        super().__init__()
        self.ctx = ctx
        self.settings = settings or QSettings()
        self.dialogs = dialogs or Dialogs(self)
        self.setWindowIcon(icon("oxmem"))
        self.setWindowTitle("oxmem")
        FocusFrameStyle.install()

        self.sessions = SessionsPanel(ctx, self.dialogs)
        self.notes = NotesPanel(ctx, self.dialogs)
        self.search = SearchPanel(ctx, self.dialogs, judgments)
        self.schedules = SchedulesPanel(ctx, self.dialogs)
        self.tables = TablesPanel(ctx, self.dialogs, self.settings)
        self.stack = QStackedWidget()
        self.nav = QListWidget()
        self.nav.setIconSize(QSize(22, 22))
        self.nav.setFixedWidth(150)
        panels = (self.sessions, self.notes, self.search, self.schedules, self.tables)
        for name, widget in zip(PANELS, panels, strict=True):
            self.stack.addWidget(widget)
            QListWidgetItem(icon(name), name.capitalize(), self.nav)
        self.nav.currentRowChanged.connect(self.stack.setCurrentIndex)
        self.search.open_event.connect(self.show_event)
        self.sessions.why_not.connect(self._why_not)
        body = QWidget()
        layout = QHBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.addWidget(self.nav)
        layout.addWidget(self.stack, 1)
        self.start = StartPage()
        self.start.open_file.connect(self.open_dialog)
        self.start.open_demo.connect(self.open_demo)
        self.start.new_store.connect(self.new_store)
        self.start.open_recent.connect(self.open_path)
        self.start.open_found.connect(self.open_path)
        self._looks = 0  # the start page's latest look at the usual places (an earlier one's answer is dropped)
        self.pages = QStackedWidget()
        self.pages.addWidget(body)
        self.pages.addWidget(self.start)
        self.setCentralWidget(self.pages)
        self.setAcceptDrops(True)

        self.path_label = QLabel()
        self.mode_icon = QLabel()
        self.mode_label = QLabel()
        self.enable_button = QPushButton("Enable editing")
        self.enable_button.clicked.connect(self.enable_editing)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel_work)
        bar = StatusBar()
        self.setStatusBar(bar)
        bar.messageChanged.connect(bar.setToolTip)  # a message cut short is whole in the tooltip
        self.paused_label = QLabel()
        self.paused_label.setStyleSheet("color: #b35c00;")
        self.paused_label.setVisible(False)
        bar.addPermanentWidget(self.paused_label)
        bar.addPermanentWidget(self.path_label)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)
        bar.addPermanentWidget(self.mode_icon)
        bar.addPermanentWidget(self.mode_label)
        bar.addPermanentWidget(self.enable_button)

        self._build_menus()
        ctx.waiting_changed.connect(lambda _: self._show_paused())
        self.pause_action.toggled.connect(lambda _: self._show_paused())
        for models in self._marked_models().values():
            for model in models:
                model.unseen_changed.connect(self._show_unseen)
        ctx.error.connect(self.dialogs.error)
        ctx.busy.connect(self._busy)
        ctx.progress.connect(self._progress)
        ctx.idle.connect(self._idle)
        ctx.mode_changed.connect(self._mode)
        ctx.opened.connect(self._opened)
        self._mode(True)
        self._restore_settings()

    # -- menus --------------------------------------------------------------------------------------

    def _action(self, menu: Any, text: str, slot: Any, shortcut: Any = None) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file = bar.addMenu("&File")
        self._action(file, "&Open…", self.open_dialog, QKeySequence.StandardKey.Open)
        self._action(file, "Open Re&mote…", self.open_remote, "Ctrl+Shift+O")
        self.recent_menu = file.addMenu("Open &Recent")
        self._action(file, "&New Store…", self.new_store, "Ctrl+Shift+N")
        self._action(file, "&Back Up To…", self.back_up)
        self._action(file, "Bac&kups…", self.show_backups)
        self._action(file, "&Compare with Backup…", self.compare_with_backup)
        self._action(file, "Search Ca&ches…", self.search_caches)
        self.save_snapshot_action = self._action(file, "Save &Snapshot As…", self.save_snapshot)
        self.save_snapshot_action.setStatusTip("Keep a copy of the remote memory's snapshot (it is removed on close)")
        file.addSeparator()
        self.import_action = self._action(file, "&Import Events (JSON Lines)…", self.import_events, "Ctrl+I")
        self.reindex_action = self._action(file, "Re-&index With the Semantic Model", lambda: self.reindex("semantic"))
        file.addSeparator()
        self._action(file, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        edit = bar.addMenu("&Edit")
        self.enable_action = self._action(edit, "&Enable Editing", self.enable_editing, "Ctrl+E")
        edit.addSeparator()
        self._action(edit, "&Find", self.find_in_panel, QKeySequence.StandardKey.Find)
        self._action(edit, "&New Note", self.new_note, QKeySequence.StandardKey.New)
        self._action(edit, "&Save Note", self.notes.save, QKeySequence.StandardKey.Save)
        self._action(edit, "&Undo Last Note Edit", self.notes.undo, "Ctrl+Alt+Z")
        self._action(edit, "&History…", self.undo_history, "Ctrl+Alt+H")
        self._action(edit, "&Delete…", self.delete, "Ctrl+Delete")
        edit.addSeparator()
        self._action(edit, "Embeddings End&point…", self.embeddings_endpoint)
        view = bar.addMenu("&View")
        for i, name in enumerate(PANELS, 1):
            self._action(view, f"&{name.capitalize()}", lambda _=False, n=name: self.show_panel(n), f"Ctrl+{i}")
        view.addSeparator()
        self._action(view, "&Refresh", self.refresh, QKeySequence.StandardKey.Refresh)
        self.pause_action = self._action(view, "&Pause Live Updates", self.ctx.set_paused, "Ctrl+Shift+P")
        self.pause_action.setCheckable(True)
        self.pause_action.setStatusTip("Freeze the view: what the agent writes meanwhile waits, counted")
        self.seen_action = self._action(view, "&Mark Changes Seen", self.mark_all_seen, "Ctrl+Shift+M")
        self.seen_action.setStatusTip("Clear the marks on what the agent added or changed")
        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "&Keyboard Shortcuts", self.shortcut_sheet, QKeySequence.StandardKey.HelpContents)
        self.info_action = self._action(help_menu, "About This &Database…", self.database_info)
        self._action(help_menu, "&About oxmem", self.about)
        self._fill_recent()

    # -- what the agent changes -----------------------------------------------------------------------

    def _marked_models(self) -> dict[str, tuple]:
        """Each panel's models whose rows are marked when the agent adds or changes them."""
        return {
            "sessions": (self.sessions.sessions, self.sessions.events),
            "notes": (self.notes.model,),
            "schedules": (self.schedules.list_model,),
        }

    def unseen(self) -> dict[str, int]:
        """How many rows the agent added or changed that the user has not seen, per panel."""
        return {name: sum(len(m.marks.unseen) for m in models) for name, models in self._marked_models().items()}

    def _show_unseen(self) -> None:
        """The count on each panel's entry in the side list: ``Notes · 3``."""
        counts = self.unseen()
        for row, name in enumerate(PANELS):
            count = counts.get(name, 0)
            item = self.nav.item(row)
            text, tip = item.data(Qt.ItemDataRole.UserRole) or (name.capitalize(), "")
            item.setText(text + (f" · {count}" if count else ""))
            item.setToolTip(f"{count} added or changed by another program, not seen yet" if count else tip)
        self.seen_action.setEnabled(any(counts.values()))

    def mark_all_seen(self) -> None:
        for models in self._marked_models().values():
            for model in models:
                if model.marks.unseen and model.rowCount():
                    model.marks.all_seen()
                    last = model.index(model.rowCount() - 1, model.columnCount() - 1)
                    model.dataChanged.emit(model.index(0, 0), last)  # repainted without the marks

    def _show_paused(self) -> None:
        paused, waiting = self.pause_action.isChecked(), self.ctx.waiting
        waits = f" · {waiting} change{'s wait' if waiting != 1 else ' waits'}" if waiting else ""
        self.paused_label.setText(f"Live updates paused{waits}")
        self.paused_label.setToolTip("View ▸ Pause Live Updates (Ctrl+Shift+P) again shows them")
        self.paused_label.setVisible(paused)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        recent = self.recent_files()
        for path in recent:
            self._action(self.recent_menu, path, lambda _=False, p=path: self.open_path(p))
        if recent:
            self.recent_menu.addSeparator()
        self.clear_recent_action = self._action(self.recent_menu, "&Clear Menu", self.clear_recent)
        self.clear_recent_action.setEnabled(bool(recent))

    def recent_files(self) -> list[str]:
        """The files opened lately, newest first: those that still exist and are not temporary demo stores."""
        value = self.settings.value("recent", [])
        paths = [value] if isinstance(value, str) else list(value or [])
        return [p for p in paths if Path(p).is_file() and not self.ctx.is_demo(p)]

    def clear_recent(self) -> None:
        self.settings.setValue("recent", [])
        self._fill_recent()

    # -- panels -------------------------------------------------------------------------------------

    def show_panel(self, name: str) -> None:
        if self.nav.item(PANELS.index(name)).flags() & Qt.ItemFlag.ItemIsEnabled:
            self.nav.setCurrentRow(PANELS.index(name))

    def current_panel(self) -> str:
        return PANELS[self.stack.currentIndex()]

    def _why_not(self, session_id: str, sequence: int) -> None:
        """The session browser's *Why wasn't this recalled?*: the search panel explains the event."""
        self.show_panel("search")
        self.search.why_not_event(session_id, sequence)

    def show_event(self, session_id: str, sequence: int) -> None:
        """Show one event in the session browser (a search hit's "open")."""
        self.show_panel("sessions")
        self.sessions.show_event(session_id, sequence)

    def show_start(self, message: str | None = None) -> None:
        """No store is open: say why (``message``; None when no file was named, at a first launch) and offer a
        file, the demo, a new store, the agents' files found at their usual places, or a recent file instead. The
        places are looked at on a worker thread (:func:`..core.known_places.find_known`: file reads and SQL, never
        on the GUI thread); the page's list fills in when that ends."""
        self.start.show_message(message, self.recent_files())
        self.pages.setCurrentWidget(self.start)
        self.setWindowTitle("oxmem")
        self._looks += 1
        look = self._looks
        self.start.show_looking()

        def failed(exc: Exception) -> bool:
            if look == self._looks:
                self.start.show_not_found(str(exc))
            return True

        self.ctx.run(
            lambda: asyncio.to_thread(find_known),
            on_done=lambda found: self.start.show_found(found) if look == self._looks else None,
            on_error=failed,
        )

    def find_in_panel(self) -> None:
        panel = self.stack.currentWidget()
        if panel is self.notes:
            self.notes.list_pane.filter.setFocus()
        elif panel is self.sessions:
            self.sessions.focus_filter()
        elif panel is self.search:
            self.search.focus_query()

    def new_note(self) -> None:
        self.show_panel("notes")
        self.notes.new_note()

    def undo_history(self) -> None:
        """Edit ▸ History: the note edits Undo can put back in this file, newest first; a button undoes the
        newest (Ctrl+Alt+Z, as often as there are steps)."""
        records = self.notes.state.history.records
        name = self.ctx.store.path.name if self.ctx.store is not None else "No file"
        count = f"{len(records)} edit{'s' if len(records) != 1 else ''} to undo, newest first" if records else ""
        heading = f"{name}: {count or 'nothing to undo'} (each file keeps its own, while oxmem runs)"
        rows = [(str(step), r.description, r.puts_back()) for step, r in reversed(list(enumerate(records, 1)))]
        action = "Undo the Newest" if records and self.ctx.edit_refusal("notes") is None else None
        if self.dialogs.table("Undo history", heading, ("Step", "Undoes", "Puts back"), rows, action):
            self.notes.undo()

    def delete(self) -> None:
        if self.stack.currentWidget() is self.notes:
            self.notes.delete()
        elif self.stack.currentWidget() is self.sessions:
            self.sessions.delete_selected()

    def refresh(self) -> None:
        """View ▸ Refresh: read the file again — or, on a remote memory, pull what changed on the server first."""
        if self.ctx.store is not None and self.ctx.store.remote is not None:
            self.refresh_snapshot()
            return
        self.sessions.refresh()
        self.notes.refresh()
        self.schedules.reload()
        self.tables.reload()

    # -- store --------------------------------------------------------------------------------------

    def shortcut_sheet(self) -> None:
        """Help ▸ Keyboard Shortcuts (F1): every menu shortcut, from the menus themselves, and the other keys."""
        rows = []
        for menu_action in self.menuBar().actions():
            menu = menu_action.menu()
            for action in menu.actions() if menu else ():
                if not action.shortcut().isEmpty():
                    where = f"{menu_action.text()} ▸ {action.text()}".replace("&", "")
                    rows.append((action.shortcut().toString(QKeySequence.SequenceFormat.NativeText), where))
        rows += KEYS
        self.dialogs.table("Keyboard shortcuts", "", ("Keys", "What they do"), rows)

    # -- status -------------------------------------------------------------------------------------

    def _opened(self) -> None:
        store = self.ctx.require()
        caps = store.capabilities
        name = store.remote.url if store.remote is not None else store.path.name
        self.setWindowTitle(f"{name} — {caps.label} — oxmem")
        self._fit_panels(caps)
        self.pages.setCurrentIndex(0)
        if not self.ctx.is_demo(store.path) and store.remote is None:
            recent = [str(store.path)] + [p for p in self.recent_files() if p != str(store.path)]
            self.settings.setValue("recent", recent[:MAX_RECENT])
        self._fill_recent()
        self._show_path()
        shown = store.open_notice if store.remote is None else None  # a remote one's is in the path label
        notices = [n for n in (store.backend_notice, shown) if n]
        if notices:
            self.statusBar().showMessage(" — ".join(notices))

    def _show_path(self) -> None:
        """The permanent part of the status bar: which file, with which embedding model (elided; the tooltip has
        it all, with the backup taken before editing)."""
        store = self.ctx.store
        if store is None:
            self.path_label.clear()
            return
        model = f"  ·  {store.backend.model_name}"
        metrics = QFontMetrics(self.path_label.font())
        if store.remote is not None:  # "snapshot of URL at TIME" (the model is in the tooltip)
            shown = metrics.elidedText(store.remote.notice, Qt.TextElideMode.ElideMiddle, PATH_WIDTH + 200)
            lines = [f"Server: {store.remote.url}", f"Copy: {store.path} (removed on close)"]
        else:
            room = max(PATH_WIDTH - metrics.horizontalAdvance(model), 80)
            shown = metrics.elidedText(str(store.path), Qt.TextElideMode.ElideLeft, room) + model
            lines = [f"File: {store.path}"]
        self.path_label.setText(shown)
        lines.append(f"Embeddings: {store.backend.model_name}")
        lines += [n for n in (store.backend_notice, store.open_notice) if n]
        if self.ctx.backup_path:
            lines.append(f"Backup taken before editing: {self.ctx.backup_path}")
        self.path_label.setToolTip("\n".join(lines))

    def _fit_panels(self, caps: Capabilities) -> None:
        """Name the panels as the agent does and disable those its format lacks (never branching on the format:
        the capabilities say it). Stay on the current panel when it still applies, else the first that does."""
        labels = {
            "sessions": (caps.sessions_label, caps.has_sessions),
            "notes": (caps.notes_label, caps.has_notes),
            "search": ("Search", caps.has_search),
            "schedules": ("Schedules", caps.has_schedules),
            "tables": ("Tables", True),
        }
        for row, name in enumerate(PANELS):
            text, available = labels[name]
            item = self.nav.item(row)
            flags = item.flags()
            item.setFlags(flags | Qt.ItemFlag.ItemIsEnabled if available else flags & ~Qt.ItemFlag.ItemIsEnabled)
            tip = "" if available else f"{caps.label} files have no {text.lower()}"
            item.setData(Qt.ItemDataRole.UserRole, (text, tip))  # the count of unseen changes goes after it
        self._show_unseen()
        if not labels[self.current_panel()][1]:
            self.show_panel(next(n for n in PANELS if labels[n][1]))

    def database_info(self) -> None:
        store = self.ctx.store
        if store is None:
            return
        name = store.remote.url if store.remote is not None else store.path.name
        self.ctx.run(
            lambda: describe_memory(store),
            label="Reading what the database holds",
            on_done=lambda info: self.dialogs.report(f"About {name}", "\n".join(info_lines(info))),
        )

    def _mode(self, read_only: bool) -> None:
        self.mode_icon.setPixmap(icon("lock" if read_only else "edit").pixmap(16, 16))
        for label in (self.mode_icon, self.mode_label):  # with no store open (the start page), no mode to tell
            label.setVisible(self.ctx.store is not None)
        snapshot = self.ctx.store.open_notice if self.ctx.store is not None else None
        if snapshot:
            self.mode_label.setText("Read-only snapshot")
            self.mode_label.setToolTip(snapshot)
        elif read_only:
            self.mode_label.setText("Read-only")
            self.mode_label.setToolTip(
                "Nothing can change this file. Enable editing to change it (a backup is taken first)."
            )
        else:
            self.mode_label.setText("Editing")
            backup = self.ctx.backup_path
            self.mode_label.setToolTip(
                f"Changes are written to the file. Backup: {backup}" if backup else "Changes are written to the file."
            )
        store = self.ctx.store
        editable = store is not None and store.capabilities.editable
        if store is not None and not editable:
            reason = store.capabilities.refusal("events") or ""
            self.mode_label.setToolTip((f"{snapshot}\n" if snapshot else "") + f"{store.capabilities.label}: {reason}.")
        can_edit = read_only and editable and not snapshot
        self.enable_button.setVisible(can_edit)
        self.enable_action.setEnabled(can_edit)
        # offered only while it can be done: the format allows it and editing is on (the tip says why not)
        refusal = self.ctx.edit_refusal("events")
        for action in (self.import_action, self.reindex_action):
            action.setEnabled(refusal is None)
            action.setStatusTip(refusal or "")
        self.save_snapshot_action.setEnabled(store is not None and store.remote is not None)
        self._show_path()

    def _busy(self, label: str) -> None:
        self.statusBar().showMessage(label + "…")
        self.progress.setRange(0, 0)
        self.progress.setVisible(True)
        self.cancel_button.setVisible(True)

    def _progress(self, label: str, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.setFormat(f"{label}: {done:,}/{total:,}")

    def _idle(self) -> None:
        self.progress.setVisible(False)
        self.cancel_button.setVisible(False)
        if self.ctx.store is not None:
            self.statusBar().clearMessage()

    def about(self) -> None:
        self.dialogs.info(
            f"oxmem {__version__}\n\nSee and fix what an AI agent remembers: sessions, notes, hybrid "
            "retrieval and schedules in an agent's SQLite memory store."
        )

    def embeddings_endpoint(self) -> None:
        """Edit ▸ Embeddings Endpoint…: an OpenAI-compatible endpoint for the models with no local copy, saying
        what will be sent; the key only from the environment. Empty: none, nothing is sent."""
        current = endpoint.configured()
        has_key = "set" if os.environ.get(endpoint.KEY_ENV) else "not set"
        url = self.dialogs.text(
            "Embeddings endpoint",
            "For a model oxmem cannot run here (ZEKE's text-embedding-3-small): 'openai', or an OpenAI-compatible "
            "URL such as http://localhost:11434/v1 (Ollama). Sent there: the text of each search query; a memory's "
            "text only when you save an edit that re-embeds it. The key is taken from "
            f"${endpoint.KEY_ENV} ({has_key}), never shown or saved. Empty: no endpoint, nothing is sent.",
            "openai" if current is not None and current.url == endpoint.OPENAI else (current.url if current else ""),
        )
        if url is None:
            return
        try:
            chosen = endpoint.endpoint_from(url)
        except InvalidInputError as exc:
            self.dialogs.error(str(exc))
            return
        self.settings.setValue("embeddings/url", url.strip())
        said = f"Embeddings endpoint: {chosen.url}" if chosen else "No embeddings endpoint: nothing is sent"
        self.ctx.run(lambda: self.ctx.use_embeddings_endpoint(chosen), label="Using the embeddings endpoint",
                     on_done=lambda _: self.statusBar().showMessage(said, 10000))  # fmt: skip

    # -- settings -----------------------------------------------------------------------------------

    def _restore_settings(self) -> None:
        with contextlib.suppress(InvalidInputError):  # (a bad saved value: no endpoint, as if none was saved)
            url = os.environ.get(endpoint.URL_ENV) or self.settings.value("embeddings/url")
            endpoint.configure(endpoint.endpoint_from(url))
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(FIRST_SIZE)
        self._fit_screen()
        for key, splitter in (
            ("sessions/splitter", self.sessions.splitter),
            ("notes/splitter", self.notes.splitter),
            ("search/splitter", self.search.splitter),
            ("schedules/splitter", self.schedules.splitter),
        ):
            state = self.settings.value(key)
            if state is not None:
                splitter.restoreState(state)
        for key, chooser in self._column_choosers():
            kept = self.settings.value(key)
            if kept is not None:  # (QSettings gives one value as a string, several as a list, none as "")
                chooser.hide_only([kept] if isinstance(kept, str) else list(kept))
        self.sessions.context.budget.setValue(int(self.settings.value("sessions/budget", 2000)))
        self.notes.state.user = self.settings.value("notes/user") or None
        self.search.controls.weight.setValue(int(self.settings.value("search/weight", 70)))
        panel = self.settings.value("window/panel", "sessions")
        self.show_panel(panel if panel in PANELS else "sessions")

    def _column_choosers(self) -> list[tuple[str, ColumnChooser]]:
        """Each table whose columns can be shown or hidden, with the setting that keeps its choice."""
        return [
            ("sessions/hidden_columns", self.sessions.session_columns),
            ("sessions/hidden_event_columns", self.sessions.event_columns),
            ("search/hidden_columns", self.search.view.columns),
            ("notes/hidden_columns", self.notes.list_pane.columns),
        ]

    def _fit_screen(self) -> None:
        """Keep the window, with its frame, inside the screen's available area: a first launch on a 1024×640
        laptop, or a size saved on a larger screen, must not put the right side and the status bar off-screen."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return
        area = screen.availableGeometry()
        frame = self.frameGeometry().height() - self.height() if self.isVisible() else FRAME_ALLOWANCE
        width, height = min(self.width(), area.width()), min(self.height(), area.height() - frame)
        self.resize(width, height)
        x = min(max(self.x(), area.left()), area.left() + area.width() - width)
        y = min(max(self.y(), area.top()), area.top() + area.height() - height - frame)
        self.move(x, y)

    def save_settings(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/panel", self.current_panel())
        self.settings.setValue("sessions/splitter", self.sessions.splitter.saveState())
        self.settings.setValue("notes/splitter", self.notes.splitter.saveState())
        self.settings.setValue("search/splitter", self.search.splitter.saveState())
        self.settings.setValue("schedules/splitter", self.schedules.splitter.saveState())
        for key, chooser in self._column_choosers():
            self.settings.setValue(key, [str(c) for c in chooser.hidden()] or ["none"])  # (an empty list is not kept)
        self.settings.setValue("search/weight", self.search.controls.weight.value())
        self.settings.setValue("sessions/budget", self.sessions.context.budget.value())
        if self.notes.state.user:
            self.settings.setValue("notes/user", self.notes.state.user)
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        if not self.notes.guard():
            event.ignore()
            return
        self.save_settings()
        event.accept()
