"""The session browser: sessions, and for the selected one its events (with a JSON view), summary state,
chunks and the context preview of contract §8 (:mod:`.context_preview`); the tables' models are :mod:`.models`."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ...core.api import BROWSE_PAGE as PAGE
from ...core.api import NATIVE_FORMATS, CheckpointInfo, Event, SessionRow, TimelineReader
from ..change_marks import HoldWhilePointed, mark_current_seen
from ..context import StoreContext, gone
from ..dialogs import Dialogs
from ..widgets import ColumnChooser, ElidedLabel, escape_clears, fit_columns, show_editable, tab_leaves
from ..widgets.json_view import JsonView
from .context_preview import ContextPreview
from .models import ID_ROLE, ChunksModel, EventsModel, SessionsModel, describe_event, preview
from .state import NO_SESSION, SessionsState, delete_question, summary_fields, turn_question
from .timeline import TimelinePane

#: the tabs of the session browser, by index
EVENTS_TAB, SUMMARY_TAB, CHUNKS_TAB, CONTEXT_TAB, TIMELINE_TAB = range(5)
DELETE_TIP = "Delete the selected session: its events, chunks, vectors and summary (asks first)"


#: the widest an event's role or source gets (a long one is cut, whole in its tooltip)
EVENT_COLUMN_WIDEST = 100
#: the session list's width at first (it keeps it as the window widens: the events' Text gets the room)
LIST_WIDTH = 170
#: the columns shown only on demand (the header's context menu, or Ctrl+Shift+C in the table): the list's Updated,
#: Events, Chunks, Last seq and Created (the heading above the events has the shown session's counts); the
#: events' Source
SESSION_COLUMNS_HIDDEN = (1, 2, 3, 4, 5)
EVENT_COLUMNS_HIDDEN = (2,)


def _table(model: Any) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setAlternatingRowColors(True)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 8)
    view.horizontalHeader().setStretchLastSection(True)
    view.setWordWrap(False)
    tab_leaves(view)
    return view


def _pane(*widgets: QWidget) -> QWidget:
    pane = QWidget()
    layout = QVBoxLayout(pane)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget, 1 if isinstance(widget, QAbstractItemView | QPlainTextEdit | QTabWidget) else 0)
    return pane


class SessionsPanel(QWidget):
    """Sessions on the left; on the right, under a header naming the session they show, its events, summary,
    chunks and context. The right side only ever shows the session selected on the left (or nothing).

    ``why_not(session_id, sequence)`` is emitted by an event's context menu, *Why wasn't this recalled?*."""

    why_not = Signal(str, int)

    def __init__(self, ctx: StoreContext, dialogs: Dialogs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.dialogs = dialogs
        self.sessions = SessionsModel(ctx, self)
        self.events = EventsModel(ctx, self)
        self.chunks = ChunksModel(ctx, self)
        self.state = SessionsState()
        #: the pending ``show_event`` request (a later one replaces it)
        self._request: object | None = None

        self.filter = escape_clears(QLineEdit(placeholderText="Filter sessions by id…"))
        self.filter.textChanged.connect(self._filter_changed)
        self.delete_button = QPushButton("Delete session…")
        self.delete_button.clicked.connect(self.delete_selected)
        #: closes or reopens the shown session, for agents whose sessions open and close (Omega)
        self.open_button = QPushButton("Close")
        self.open_button.clicked.connect(self.toggle_open)
        self.open_button.setVisible(False)
        top = QHBoxLayout()
        top.addWidget(self.open_button)
        top.addWidget(self.delete_button)
        top.addStretch(1)

        self.sessions_view = _table(self.sessions)
        self.sessions_view.horizontalHeader().setMinimumSectionSize(40)
        # the Session column takes what the list's width leaves; a long label loses its middle (its start and its
        # end tell sessions apart), whole in its tooltip
        self.sessions_view.horizontalHeader().setStretchLastSection(False)
        self.sessions_view.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.sessions_view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        fit_columns(self.sessions_view, (1, 2, 3, 4, 5))
        #: the list shows a session and its size; its times, chunks and last sequence are a right-click away
        self.session_columns = ColumnChooser(self.sessions_view, hidden=SESSION_COLUMNS_HIDDEN, fixed=(0,))
        self.sessions_view.selectionModel().currentRowChanged.connect(self._session_changed)
        self.sessions.dataChanged.connect(lambda *_: self._update_header())

        self.header = ElidedLabel(NO_SESSION)
        bold = self.header.font()
        bold.setBold(True)
        self.header.setFont(bold)

        self.events_view = _table(self.events)
        fit_columns(self.events_view, (0, 3))
        fit_columns(self.events_view, (1, 2), widest=EVENT_COLUMN_WIDEST)
        #: Source (in the JSON) is a right-click on the header away (or Ctrl+Shift+C): Seq, Role, Time and the
        #: Text show, the Text with half the window at 1024 px
        self.event_columns = ColumnChooser(self.events_view, hidden=EVENT_COLUMNS_HIDDEN, fixed=(4,), own_menu=True)
        self.events_view.selectionModel().currentRowChanged.connect(self._event_changed)
        self.events_view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.events_view.customContextMenuRequested.connect(self._event_menu)
        #: the event's context menu last opened
        self.event_menu: QMenu | None = None
        self.events.modelReset.connect(lambda: self._show_event(None))
        self.event_label = ElidedLabel("")
        self.json_view = JsonView(wrap=True)
        events_split = QSplitter(Qt.Orientation.Vertical)
        events_split.addWidget(self.events_view)
        events_split.addWidget(_pane(self.event_label, self.json_view))
        events_split.setChildrenCollapsible(False)
        events_split.setSizes([300, 200])

        self.summary_epoch = QLabel("—")
        self.summary_upper = QLabel("—")
        self.summary_text = QPlainTextEdit(readOnly=True)
        summary = QWidget()
        form = QFormLayout(summary)
        form.addRow("Epoch", self.summary_epoch)
        form.addRow("Upper sequence", self.summary_upper)
        form.addRow("Summary", self.summary_text)

        self.chunks_view = _table(self.chunks)
        fit_columns(self.chunks_view, range(1, 4))

        self.context = ContextPreview()
        self.context.budget.valueChanged.connect(lambda _: self._load_context())

        self.tabs = QTabWidget()
        self.tabs.addTab(events_split, "Events")
        self.tabs.addTab(summary, "Summary")
        self.tabs.addTab(self.chunks_view, "Chunks")
        self.tabs.addTab(self.context, "Context preview")
        self.timeline = TimelinePane()
        self.timeline.chosen.connect(self._load_checkpoint)
        self.tabs.addTab(self.timeline, "Timeline")
        self.tabs.setTabVisible(TIMELINE_TAB, False)
        self.tabs.currentChanged.connect(self._tab_changed)

        split = QSplitter(Qt.Orientation.Horizontal)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.filter)  # above the buttons: the narrow list leaves it its width
        left_layout.addLayout(top)
        left_layout.addWidget(self.sessions_view)
        split.addWidget(left)
        split.addWidget(_pane(self.header, self.tabs))
        split.setChildrenCollapsible(False)
        # the list is skimmed, the events read: at 1024 px their Text gets half the window, and the room a wider
        # window adds
        split.setSizes([LIST_WIDTH, 686])
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        self.splitter = split
        layout = QVBoxLayout(self)
        margins = layout.contentsMargins()  # none at the sides: that width goes to the text
        layout.setContentsMargins(0, margins.top(), 0, margins.bottom())
        layout.addWidget(split)

        ctx.opened.connect(self._opened)
        # what the agent wrote: marked until seen; held while the pointer is over the list (rows would move)
        self.agent_wrote = HoldWhilePointed(self.sessions_view, self._agent_wrote)
        ctx.external_change.connect(self.agent_wrote)
        mark_current_seen(self.sessions_view, self.sessions.marks, self.sessions.row)
        mark_current_seen(self.events_view, self.events.marks, self.events.row)
        ctx.changed.connect(lambda kind: self.refresh())
        ctx.mode_changed.connect(lambda _read_only: self._update_actions())
        self._show_session(None)

    # -- state --------------------------------------------------------------------------------------

    def selected_session(self) -> str | None:
        index = self.sessions_view.currentIndex()
        return self.sessions.data(index, ID_ROLE) if index.isValid() else None

    def shown_session(self) -> str | None:
        """The session the right side shows (None: nothing)."""
        return self.state.shown

    def select_session(self, session_id: str) -> bool:
        """Select ``session_id`` if it is among the rows loaded; whether it is."""
        row = next((i for i, r in enumerate(self.sessions.rows) if r.session_id == session_id), None)
        if row is not None:
            self._select_row(row)
        return row is not None

    def _select_row(self, row: int) -> None:
        index = self.sessions.index(row, 0)
        self.sessions_view.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        self.sessions_view.scrollTo(index)

    def focus_filter(self) -> None:
        self.filter.setFocus()
        self.filter.selectAll()

    def _opened(self) -> None:
        self.tabs.setTabVisible(TIMELINE_TAB, isinstance(self.ctx.store, TimelineReader))
        store = self.ctx.store
        self.tabs.setTabVisible(CHUNKS_TAB, store is None or store.capabilities.format in NATIVE_FORMATS)
        if self.ctx.reopened:
            self.refresh()
        else:
            self.reset()
        self._update_actions()

    def reset(self) -> None:
        """Another file: no filter, no selection, the first page of its sessions."""
        self._request = None
        self.filter.blockSignals(True)
        self.filter.clear()
        self.filter.blockSignals(False)
        self.sessions.filter = ""
        self.sessions.stats.clear()
        self.sessions.marks.forget()
        self._show_session(None)
        self.sessions.restart()

    def _agent_wrote(self) -> None:
        self.sessions.marks.live()
        if self.state.shown is not None:
            self.events.marks.live()
        self.refresh()

    def refresh(self) -> None:
        """Re-read what is shown, keeping the selected session, event and the scroll positions; when the session
        is gone (deleted here or by the agent), the right side empties."""
        current = self.state.shown
        within = len(self.sessions.rows) + PAGE
        event = self.selected_event()
        scroll = self.sessions_view.verticalScrollBar().value()
        events_scroll = self.events_view.verticalScrollBar().value()

        def restore(row: int | None) -> None:
            if current is None or self.state.shown != current:
                return
            if row is None:  # deleted since it was shown (by the agent, as a rule): say so, not just empty the pane
                self._show_session(None)
                self.state.lost(current)
                self._update_header()
                return
            self._select_row(row)
            self.sessions_view.verticalScrollBar().setValue(scroll)
            self.events.reload(lambda: self._restore_event(event, events_scroll))
            self.chunks.reload()
            self._load_details(current)

        def reloaded() -> None:
            if current is None:
                self.sessions_view.verticalScrollBar().setValue(scroll)
            else:
                self.sessions.load_until(lambda r: r.session_id == current, restore, within)

        self.sessions.reload(reloaded)

    def _event_menu(self, point: Any) -> None:
        """The event's context menu (the menu key opens it too): *Why wasn't this recalled?*, and *Delete This
        Turn…* where the format deletes turns (disabled, with why, until editing is enabled). With no event
        selected, the columns to show (as the header's menu, or Ctrl+Shift+C)."""
        sequence, session = self.selected_event(), self.selected_session()
        if sequence is None or session is None:  # no event: the columns to show
            self.event_columns.popup(self.events_view.viewport().mapToGlobal(point))
            return
        menu = QMenu(self.events_view)
        menu.setToolTipsVisible(True)
        action = menu.addAction("Why wasn't this recalled?")
        action.setToolTip("Explain in the search panel why a search did not recall this event")
        action.triggered.connect(lambda: self.why_not.emit(session, sequence))
        store = self.ctx.store
        if store is not None and "turns" not in store.capabilities.refusals:
            refusal = self.ctx.edit_refusal("turns")
            delete = menu.addAction("Delete This Turn…")
            delete.setEnabled(refusal is None)
            delete.setToolTip(refusal or "Delete the user's message, what answered it and its tool calls with outputs")
            delete.triggered.connect(lambda: self.delete_turn(session, sequence))
        self.event_menu = menu
        menu.popup(self.events_view.viewport().mapToGlobal(point))

    def selected_event(self) -> int | None:
        """The sequence of the selected event."""
        index = self.events_view.currentIndex()
        event = self.events.row(index.row()) if index.isValid() else None
        return event.sequence if event is not None else None

    def _restore_event(self, sequence: int | None, scroll: int) -> None:
        row = self.events.row_of(sequence) if sequence is not None else None
        if row is not None:
            self.events_view.setCurrentIndex(self.events.index(row, 0))
        self.events_view.verticalScrollBar().setValue(scroll)

    # -- show one event -----------------------------------------------------------------------------

    def show_event(self, session_id: str, sequence: int) -> None:
        """Select session ``session_id`` (clearing the filter when it hides it) and switch to the Events tab;
        once its events are loaded (as many pages as it takes), select the event with ``sequence``, scroll to
        it and focus the events table. Returns at once; the rest happens as the loads finish (at once when
        they are loaded already). A later call replaces a pending one. A session that is not in the store
        empties the right side and the header says so; an event that is not in the session leaves no event
        selected and the label above the JSON view says so."""
        request = object()
        self._request = request
        self.tabs.setCurrentIndex(EVENTS_TAB)

        def is_it(row: SessionRow) -> bool:
            return row.session_id == session_id

        def event_found(row: int | None) -> None:
            if self._request is not request:
                return
            self._request = None
            if row is None:
                self.events_view.setCurrentIndex(QModelIndex())
                self.event_label.setText(f"Event {sequence} is not in {session_id}")
                return
            index = self.events.index(row, 0)
            self.events_view.setCurrentIndex(index)
            self.events_view.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
            self.events_view.setFocus()

        def session_found(row: int | None) -> None:
            if self._request is not request:
                return
            if row is None and self.sessions.filter:
                self.filter.clear()
                self.sessions.load_until(is_it, session_found)
                return
            if row is None:
                self._request = None
                self._show_session(None)
                self.header.setText(f"Session {session_id} is not in this store")
                return
            self._select_row(row)
            self.events.load_until(lambda e: e.sequence == sequence, event_found)

        if self.sessions.hides(session_id):
            self.filter.clear()
        self.sessions.load_until(is_it, session_found)

    # -- selection ----------------------------------------------------------------------------------

    def _filter_changed(self, text: str) -> None:
        within = len(self.sessions.rows) + PAGE
        self.sessions.set_filter(text)
        shown = self.state.shown
        if shown is None:
            return
        if self.sessions.hides(shown):
            self._show_session(None)
            return

        def found(row: int | None) -> None:
            if self.state.shown != shown:
                return
            if row is None:
                self._show_session(None)
            else:
                self._select_row(row)

        self.sessions.load_until(lambda r: r.session_id == shown, found, within)

    def _session_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        session_id = self.sessions.data(current, ID_ROLE) if current.isValid() else None
        if session_id != self.state.shown:
            self._show_session(session_id)

    def _show_state(self, session_id: str, state: str | None) -> None:
        if session_id == self.state.shown:
            self.state.lifecycle = state
            self._update_actions()

    def _show_session(self, session_id: str | None) -> None:
        """Show ``session_id`` on the right (None: empty it, and select no session)."""
        self.state.show(session_id)
        if session_id is None and self.sessions_view.currentIndex().isValid():
            self.sessions_view.selectionModel().clear()
        self.events.set_session(session_id)
        self.chunks.set_session(session_id)
        self._show_event(None)
        self._show_summary(session_id, None)
        self.context.clear()
        self.timeline.clear()
        self._update_header()
        self._update_actions()
        if session_id is not None:
            self._load_details(session_id)

    def _noun(self) -> str:
        """What the open format calls a session (``conversation``)."""
        return self.ctx.store.capabilities.session_noun if self.ctx.store is not None else "session"

    def _update_header(self) -> None:
        shown = self.state.shown
        store = self.ctx.store
        chunks = store is None or store.capabilities.format in NATIVE_FORMATS  # (other agents' files keep none)
        self.header.setText(self.state.header(self._noun(), self.sessions.stats.get(shown) if shown else None, chunks))

    def _update_actions(self) -> None:
        refusal = self.ctx.edit_refusal("sessions")
        if refusal is None and self.state.shown is None:
            refusal = "Select a session to delete it."
        show_editable([self.delete_button], refusal, DELETE_TIP)
        caps = self.ctx.store.capabilities if self.ctx.store is not None else None
        noun = self._noun()
        self.delete_button.setText(f"Delete {noun}…")
        self.filter.setPlaceholderText(f"Filter {caps.sessions_label.lower() if caps else 'sessions'} by id…")
        self.sessions.set_heading(0, noun.capitalize())
        self.open_button.setVisible(bool(caps and caps.session_lifecycle))
        if caps and caps.session_lifecycle:
            text, name, tip, why = self.state.open_action(noun)
            self.open_button.setText(text)  # short: the filter keeps its room at 1024 px
            self.open_button.setAccessibleName(name)
            show_editable([self.open_button], refusal or why, tip)

    def _load_details(self, session_id: str) -> None:
        store = self.ctx.require()
        if store.capabilities.session_lifecycle:
            self.ctx.run(lambda: store.session_state(session_id), on_done=lambda s: self._show_state(session_id, s))
        self.ctx.run(
            lambda: store.read_summary_state(session_id),
            on_done=lambda state: self._show_summary(session_id, state),
            on_error=gone,
        )
        self._load_context()
        self._load_timeline()

    def _tab_changed(self, _index: int) -> None:
        self._load_context()
        self._load_timeline()

    def _load_timeline(self) -> None:
        """The shown session's checkpoints, read when the Timeline tab is shown (a format with versions only)."""
        session_id, store = self.state.shown, self.ctx.store
        if session_id is None or self.tabs.currentIndex() != TIMELINE_TAB or not isinstance(store, TimelineReader):
            return

        def show(checkpoints: list[CheckpointInfo]) -> None:
            if session_id == self.state.shown and store is self.ctx.store:
                self.timeline.show_checkpoints(checkpoints)

        self.ctx.run(lambda: store.checkpoints(session_id), on_done=show, on_error=gone)

    def _load_checkpoint(self, checkpoint_id: str) -> None:
        """The shown session's events as of ``checkpoint_id`` (dropped if another session or checkpoint is chosen
        before they arrive)."""
        session_id, store = self.state.shown, self.ctx.store
        if session_id is None or not isinstance(store, TimelineReader):
            return

        def show(events: list[Event]) -> None:
            if session_id == self.state.shown and self.timeline.selected() == checkpoint_id:
                self.timeline.show_events(checkpoint_id, events)

        self.ctx.run(lambda: store.events_at(session_id, checkpoint_id), on_done=show, on_error=gone)

    def _event_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._show_event(self.events.row(current.row()) if current.isValid() else None)

    def _show_event(self, event: Event | None) -> None:
        self.event_label.setText(self.state.event_line(event, describe_event(event)[0] if event else ""))
        if event is None:
            self.json_view.clear()
            return
        self.json_view.show_value(
            {"sequence": event.sequence, "created_at": event.created_at, "payload": event.payload}
        )

    def _show_summary(self, session_id: str | None, state: dict[str, Any] | None) -> None:
        if session_id != self.state.shown:
            return
        epoch, upper, text = summary_fields(session_id, state)
        self.summary_epoch.setText(epoch)
        self.summary_upper.setText(upper)
        self.summary_text.setPlainText(text)

    def _load_context(self) -> None:
        session_id = self.state.shown
        if session_id is None or self.tabs.currentIndex() != CONTEXT_TAB:
            return
        store, budget = self.ctx.require(), self.context.budget.value()

        def show(preview: Any) -> None:
            if session_id == self.state.shown and budget == self.context.budget.value():
                self.context.show_preview(preview)

        self.ctx.run(lambda: store.context_preview(session_id, budget), on_done=show, on_error=gone)

    # -- actions ------------------------------------------------------------------------------------

    def toggle_open(self) -> None:
        """Close the shown session, or reopen it when it is closed (reversible: nothing is asked)."""
        session_id, reopen = self.state.shown, self.state.lifecycle == "closed"
        store = self.ctx.writable("sessions")
        if session_id is None or store is None or self.state.lifecycle is None:
            return
        self.ctx.run(
            lambda: store.set_session_open(session_id, reopen),
            label=f"{'Reopening' if reopen else 'Closing'} {session_id}",
            on_done=lambda state: self._show_state(session_id, state),
            changes="sessions",
        )

    def delete_turn(self, session_id: str, sequence: int) -> None:
        """Ask, listing each item that goes (the format's :meth:`turn`), then delete them as the agent would; what
        the file holds by then must still be that turn (else the conflict is shown and nothing is deleted)."""
        store = self.ctx.writable("turns")
        if store is None:
            return
        noun = store.capabilities.session_noun

        def ask(turn: list[Event]) -> None:
            lines = [f"{e.sequence}  {describe_event(e)[0]}: {preview(describe_event(e)[2], 80)}" for e in turn]
            backup = self.ctx.backup_path
            if self.dialogs.confirm(
                "Delete turn", turn_question(noun, session_id, lines, str(backup) if backup else None)
            ):
                self.ctx.run(
                    lambda: store.delete_turn(session_id, sequence, expected=turn),
                    label=f"Deleting a turn of {session_id}",
                    changes="sessions",
                )

        self.ctx.run(lambda: store.turn(session_id, sequence), on_done=ask)

    def delete_selected(self) -> None:
        session_id = self.selected_session()
        if session_id is None:
            return
        store = self.ctx.writable("sessions")
        if store is None:
            return

        async def impact() -> Any:
            return (await store.session_stats([session_id]))[session_id]

        caps = store.capabilities

        def ask(stats: Any) -> None:
            backup = self.ctx.backup_path
            text = delete_question(caps, session_id, stats, str(backup) if backup else None)
            if self.dialogs.confirm("Delete session", text):
                self.state.deleting = session_id  # gone by our own hand: the heading need not say it went
                self.ctx.run(lambda: store.forget(session_id), label=f"Deleting {session_id}", changes="sessions")

        self.ctx.run(impact, on_done=ask)
