"""The session browser: sessions, and for the selected one its events (with a JSON view), summary state,
chunks and the context preview of SPEC §8."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ..core.embeddings.indexing import PayloadNotIndexable, extract_text, normalize
from ..core.store.browse import PAGE, ChunkRow, SessionRow
from ..core.store.events import Event
from .context import StoreContext, gone
from .dialogs import Dialogs
from .paged import PagedTableModel
from .table_model import tip
from .widgets import ElidedLabel, escape_clears, plural, show_editable, tab_leaves
from .widgets.json_view import JsonView

ID_ROLE = Qt.ItemDataRole.UserRole + 1
#: the tabs of the session browser, by index
EVENTS_TAB, SUMMARY_TAB, CHUNKS_TAB, CONTEXT_TAB = range(4)
NO_SESSION = "No session selected"
NO_EVENT = "Select an event to see it in full"
WARNING_STYLE = "color: #c0392b; font-weight: bold;"
DELETE_TIP = "Delete the selected session: its events, chunks, vectors and summary (asks first)"


def _preview(text: str, width: int = 160) -> str:
    text = normalize(text)
    return text if len(text) <= width else text[: width - 1] + "…"


class SessionsModel(PagedTableModel):
    COLUMNS = ("Session", "Updated", "Events", "Chunks", "Last seq", "Created")

    def __init__(self, ctx: StoreContext, parent: Any = None) -> None:
        super().__init__(ctx, parent)
        self.filter = ""
        self.stats: dict[str, Any] = {}

    async def page(self, after: Any, limit: int) -> list[SessionRow]:
        return await self.ctx.require().sessions_page(after, limit, self.filter or None)

    def cursor(self, row: SessionRow) -> tuple[str, str]:
        return (row.updated_at, row.session_id)

    def display(self, row: SessionRow, column: int) -> Any:
        if column == 0:
            short = [str(v) for v in row.details.values() if v not in (None, "") and len(str(v)) <= 24]
            return row.session_id + (f"  · {' · '.join(short)}" if short else "")
        if column in (1, 5):
            return {1: row.updated_at[:16], 5: row.created_at[:16]}[column]
        stats = self.stats.get(row.session_id)
        if stats is None:
            return "…"
        return {2: f"{stats.event_count:,}", 3: f"{stats.chunk_count:,}", 4: stats.last_sequence}[column]

    def full(self, row: SessionRow, column: int) -> str:
        if column in (1, 5):
            return row.updated_at if column == 1 else row.created_at
        return super().full(row, column)

    def extra(self, row: SessionRow, column: int, role: int) -> Any:
        if role == ID_ROLE:
            return row.session_id
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (2, 3, 4):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and column == 0:
            details = "".join(f"\n{k}: {v}" for k, v in row.details.items() if v not in (None, ""))
            return tip(row.session_id + (f"\nagent: {row.agent_identity}" if row.agent_identity else "") + details)
        return None

    def on_rows_loaded(self, first: int, last: int) -> None:
        ids = [r.session_id for r in self.rows[first : last + 1]]
        generation = self._generation

        def got(stats: dict) -> None:
            if generation != self._generation:
                return
            self.stats.update(stats)
            for i, row in enumerate(self.rows):
                if row.session_id in stats:
                    self.dataChanged.emit(self.index(i, 2), self.index(i, 4))

        self.ctx.run(lambda: self.ctx.require().session_stats(ids), on_done=got)

    def set_filter(self, text: str) -> None:
        self.filter = text.strip()
        self.restart()

    def hides(self, session_id: str) -> bool:
        """Whether the filter certainly leaves ``session_id`` out (it keeps ids containing it, ignoring case)."""
        return bool(self.filter) and self.filter.casefold() not in session_id.casefold()


def tool_names(payload: Any) -> list[str]:
    """The names of the tools a message calls (none when it calls none)."""
    calls = payload.get("tool_calls") if isinstance(payload, dict) else None
    return [c["name"] for c in calls or [] if isinstance(c, dict) and isinstance(c.get("name"), str)]


def describe_event(event: Event) -> tuple[str, str, str]:
    """``(role, source, text)`` for the events table; a payload that is not a message says so.

    A tool call starts with "→ tool NAME": alone, "→ tool NAME arguments {…}"; with text,
    "→ tool NAME — TEXT" followed by the arguments (names joined by ", " for several calls). A tool's output
    starts with "← "."""
    try:
        extracted = extract_text(event.payload)
    except PayloadNotIndexable as exc:
        return "?", "not indexed", f"⚠ not indexed: {exc}"
    text = extracted.text
    if extracted.source == "assistant_tool_call":
        names = tool_names(event.payload)
        content = event.payload.get("content") or ""
        content = content.strip()
        if content or len(names) > 1:
            calls = text[len(content) :].lstrip("\n")
            text = f"→ tool {', '.join(names)} — " + (f"{content}\n{calls}" if content else calls)
        else:
            text = "→ " + text
    elif extracted.source == "tool_output":
        text = "← " + text
    return extracted.role, extracted.source, text


class EventsModel(PagedTableModel):
    COLUMNS = ("Seq", "Role", "Source", "Time", "Text")

    def __init__(self, ctx: StoreContext, parent: Any = None) -> None:
        super().__init__(ctx, parent)
        self.session_id: str | None = None

    def active(self) -> bool:
        return self.ctx.store is not None and self.session_id is not None

    async def page(self, after: Any, limit: int) -> list[Event]:
        return await self.ctx.require().events_page(self.session_id, after, limit)

    def cursor(self, row: Event) -> int:
        return row.sequence

    def display(self, row: Event, column: int) -> Any:
        if column == 0:
            return row.sequence
        if column == 3:
            return row.created_at[:16]
        role, source, text = describe_event(row)
        return (role, source, _preview(text))[{1: 0, 2: 1, 4: 2}[column]]

    def full(self, row: Event, column: int) -> str:
        if column == 3:
            return row.created_at
        if column == 4:
            return describe_event(row)[2]
        return super().full(row, column)

    def extra(self, row: Event, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.ForegroundRole and column == 4:
            kind = describe_event(row)[1]
            if kind == "not indexed":
                return QBrush(QColor("#c0392b"))
        if role == Qt.ItemDataRole.FontRole and column == 4 and describe_event(row)[1] == "assistant_tool_call":
            font = QFont()
            font.setItalic(True)
            return font
        return None

    def row_of(self, sequence: int) -> int | None:
        return next((i for i, e in enumerate(self.rows) if e.sequence == sequence), None)

    def set_session(self, session_id: str | None) -> None:
        self.session_id = session_id
        self.restart()


class ChunksModel(PagedTableModel):
    COLUMNS = ("Chunk", "Sequences", "Model", "Dims", "Text")

    def __init__(self, ctx: StoreContext, parent: Any = None) -> None:
        super().__init__(ctx, parent)
        self.session_id: str | None = None

    def active(self) -> bool:
        return self.ctx.store is not None and self.session_id is not None

    async def page(self, after: Any, limit: int) -> list[ChunkRow]:
        return await self.ctx.require().chunks_page(self.session_id, after, limit)

    def cursor(self, row: ChunkRow) -> int:
        return row.rowid

    def display(self, row: ChunkRow, column: int) -> Any:
        seq = (
            f"{row.sequence_start}"
            if row.sequence_start == row.sequence_end
            else f"{row.sequence_start}–{row.sequence_end}"
        )
        return (row.chunk_id, seq, row.embedding_model or "— no vector", row.dimensions, _preview(row.text))[column]

    def full(self, row: ChunkRow, column: int) -> str:
        return row.text if column == 4 else super().full(row, column)

    def set_session(self, session_id: str | None) -> None:
        self.session_id = session_id
        self.restart()


def fit_columns(view: QTableView, columns: range | tuple[int, ...]) -> None:
    """Size ``columns`` to their content whenever a model's first rows arrive (the last column stretches)."""
    model = view.model()

    def fit(*_: Any) -> None:
        if model.rowCount() <= 250:
            for column in columns:
                view.resizeColumnToContents(column)

    model.rowsInserted.connect(fit)
    model.modelReset.connect(fit)
    fit()


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
    chunks and context. The right side only ever shows the session selected on the left (or nothing)."""

    def __init__(self, ctx: StoreContext, dialogs: Dialogs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.dialogs = dialogs
        self.sessions = SessionsModel(ctx, self)
        self.events = EventsModel(ctx, self)
        self.chunks = ChunksModel(ctx, self)
        #: the session whose details the right side shows
        self._shown: str | None = None
        #: the pending ``show_event`` request (a later one replaces it)
        self._request: object | None = None

        self.filter = escape_clears(QLineEdit(placeholderText="Filter sessions by id…"))
        self.filter.textChanged.connect(self._filter_changed)
        self.delete_button = QPushButton("Delete session…")
        self.delete_button.clicked.connect(self.delete_selected)
        top = QHBoxLayout()
        top.addWidget(self.filter, 1)
        top.addWidget(self.delete_button)

        self.sessions_view = _table(self.sessions)
        self.sessions_view.horizontalHeader().setMinimumSectionSize(40)
        self.sessions_view.horizontalHeader().resizeSection(0, 210)
        fit_columns(self.sessions_view, (1, 2, 3, 4))
        self.sessions_view.selectionModel().currentRowChanged.connect(self._session_changed)
        self.sessions.dataChanged.connect(lambda *_: self._update_header())

        self.header = ElidedLabel(NO_SESSION)
        bold = self.header.font()
        bold.setBold(True)
        self.header.setFont(bold)

        self.events_view = _table(self.events)
        fit_columns(self.events_view, range(4))
        self.events_view.selectionModel().currentRowChanged.connect(self._event_changed)
        self.events.modelReset.connect(lambda: self._show_event(None))
        self.event_label = ElidedLabel("")
        self.json_view = JsonView()
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

        self.budget = QSpinBox(minimum=50, maximum=1_000_000, singleStep=500, value=2000, suffix=" tokens")
        self.budget.valueChanged.connect(lambda _: self._load_context())
        self.context_warning = QLabel()
        self.context_warning.setWordWrap(True)
        self.context_warning.setStyleSheet(WARNING_STYLE)
        self.context_warning.setVisible(False)
        self.context_info = QLabel()
        self.context_info.setWordWrap(True)
        self.context_table = QTableWidget(0, 5)
        self.context_table.setHorizontalHeaderLabels(["Seq", "Status", "Tokens", "Role", "Text"])
        self.context_table.verticalHeader().setVisible(False)
        self.context_table.horizontalHeader().setStretchLastSection(True)
        self.context_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.context_table.setWordWrap(False)
        self.context_table.verticalHeader().setDefaultSectionSize(self.context_table.fontMetrics().height() + 8)
        tab_leaves(self.context_table)
        context = QWidget()
        ctx_layout = QVBoxLayout(context)
        row = QHBoxLayout()
        budget_label = QLabel("&Token budget")
        budget_label.setBuddy(self.budget)
        row.addWidget(budget_label)
        row.addWidget(self.budget)
        row.addStretch(1)
        ctx_layout.addLayout(row)
        ctx_layout.addWidget(self.context_warning)
        ctx_layout.addWidget(self.context_info)
        ctx_layout.addWidget(self.context_table, 1)

        self.tabs = QTabWidget()
        self.tabs.addTab(events_split, "Events")
        self.tabs.addTab(summary, "Summary")
        self.tabs.addTab(self.chunks_view, "Chunks")
        self.tabs.addTab(context, "Context preview")
        self.tabs.currentChanged.connect(lambda _: self._load_context())

        split = QSplitter(Qt.Orientation.Horizontal)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addLayout(top)
        left_layout.addWidget(self.sessions_view)
        split.addWidget(left)
        split.addWidget(_pane(self.header, self.tabs))
        split.setChildrenCollapsible(False)
        split.setSizes([520, 640])
        self.splitter = split
        layout = QVBoxLayout(self)
        layout.addWidget(split)

        ctx.opened.connect(self._opened)
        ctx.external_change.connect(self.refresh)
        ctx.changed.connect(lambda kind: self.refresh())
        ctx.mode_changed.connect(lambda _read_only: self._update_actions())
        self._show_session(None)

    # -- state --------------------------------------------------------------------------------------

    def selected_session(self) -> str | None:
        index = self.sessions_view.currentIndex()
        return self.sessions.data(index, ID_ROLE) if index.isValid() else None

    def shown_session(self) -> str | None:
        """The session the right side shows (None: nothing)."""
        return self._shown

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
        self._show_session(None)
        self.sessions.restart()

    def refresh(self) -> None:
        """Re-read what is shown, keeping the selected session, event and the scroll positions; when the session
        is gone (deleted here or by the agent), the right side empties."""
        current = self._shown
        within = len(self.sessions.rows) + PAGE
        event = self.selected_event()
        scroll = self.sessions_view.verticalScrollBar().value()
        events_scroll = self.events_view.verticalScrollBar().value()

        def restore(row: int | None) -> None:
            if current is None or self._shown != current:
                return
            if row is None:
                self._show_session(None)
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
        shown = self._shown
        if shown is None:
            return
        if self.sessions.hides(shown):
            self._show_session(None)
            return

        def found(row: int | None) -> None:
            if self._shown != shown:
                return
            if row is None:
                self._show_session(None)
            else:
                self._select_row(row)

        self.sessions.load_until(lambda r: r.session_id == shown, found, within)

    def _session_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        session_id = self.sessions.data(current, ID_ROLE) if current.isValid() else None
        if session_id != self._shown:
            self._show_session(session_id)

    def _show_session(self, session_id: str | None) -> None:
        """Show ``session_id`` on the right (None: empty it, and select no session)."""
        self._shown = session_id
        if session_id is None and self.sessions_view.currentIndex().isValid():
            self.sessions_view.selectionModel().clear()
        self.events.set_session(session_id)
        self.chunks.set_session(session_id)
        self._show_event(None)
        self._show_summary(session_id, None)
        self._clear_context()
        self._update_header()
        self._update_actions()
        if session_id is not None:
            self._load_details(session_id)

    def _update_header(self) -> None:
        if self._shown is None:
            self.header.setText(NO_SESSION)
            return
        stats = self.sessions.stats.get(self._shown)
        counts = f" · {plural(stats.event_count, 'event')} · {plural(stats.chunk_count, 'chunk')}" if stats else ""
        self.header.setText(f"Session {self._shown}{counts}")

    def _update_actions(self) -> None:
        refusal = self.ctx.edit_refusal("events")
        if refusal is None and self._shown is None:
            refusal = "Select a session to delete it."
        show_editable([self.delete_button], refusal, DELETE_TIP)

    def _load_details(self, session_id: str) -> None:
        store = self.ctx.require()
        self.ctx.run(
            lambda: store.read_summary_state(session_id),
            on_done=lambda state: self._show_summary(session_id, state),
            on_error=gone,
        )
        self._load_context()

    def _event_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._show_event(self.events.row(current.row()) if current.isValid() else None)

    def _show_event(self, event: Event | None) -> None:
        if event is None:
            self.json_view.clear()
            self.event_label.setText(NO_EVENT if self._shown is not None else "")
            return
        role = describe_event(event)[0]
        self.event_label.setText(f"Event {event.sequence} of {self._shown} · {role} · {event.created_at}")
        self.json_view.show_value(
            {"sequence": event.sequence, "created_at": event.created_at, "payload": event.payload}
        )

    def _show_summary(self, session_id: str | None, state: dict | None) -> None:
        if session_id != self._shown:
            return
        if not state:
            self.summary_epoch.setText("—")
            self.summary_upper.setText("—")
            self.summary_text.setPlainText("No rolling summary for this session." if session_id else "")
            return
        self.summary_epoch.setText(str(state.get("epoch")))
        self.summary_upper.setText(str(state.get("upper_sequence")))
        self.summary_text.setPlainText(str(state.get("summary", "")))

    def _clear_context(self) -> None:
        self.context_table.setRowCount(0)
        self.context_info.setText("")
        self.context_warning.setVisible(False)

    def _load_context(self) -> None:
        session_id = self._shown
        if session_id is None or self.tabs.currentIndex() != CONTEXT_TAB:
            return
        store, budget = self.ctx.require(), self.budget.value()

        def show(preview: Any) -> None:
            if session_id == self._shown and budget == self.budget.value():
                self._show_context(preview)

        self.ctx.run(lambda: store.context_preview(session_id, budget), on_done=show, on_error=gone)

    def _show_context(self, preview: Any) -> None:
        counts = {s: sum(1 for i in preview.items if i.status == s) for s in ("included", "dropped", "summarized")}
        summary = f"summary message: {plural(preview.summary_tokens, 'token')}; " if preview.summary_message else ""
        self.context_info.setText(
            f"{preview.used:,} of {plural(preview.budget, 'token')} — {summary}"
            f"{plural(counts['included'], 'message')} included, {counts['dropped']:,} dropped, "
            f"{counts['summarized']:,} covered by the summary"
        )
        over = preview.used - preview.budget
        if over > 0:
            alone = (
                f": the summary message alone takes {plural(preview.summary_tokens, 'token')}"
                if preview.summary_tokens > preview.budget
                else ""
            )
            self.context_warning.setText(
                f"⚠ {plural(preview.used, 'token')} — {over:,} over the {preview.budget:,} budget{alone}"
            )
        self.context_warning.setVisible(over > 0)
        rows = preview.items
        colors = {"included": None, "dropped": QColor("#9a9a9a"), "summarized": QColor("#2d7fb8")}
        self.context_table.setRowCount(len(rows) + (1 if preview.summary_message else 0))
        offset = 0
        if preview.summary_message:
            cells = ["—", "summary", str(preview.summary_tokens), "system", preview.summary_message]
            for c, text in enumerate(cells):
                self.context_table.setItem(0, c, self._context_cell(text, c))
            offset = 1
        for r, item in enumerate(rows):
            cells = [str(item.sequence), item.status, str(item.tokens), item.role, item.text]
            for c, text in enumerate(cells):
                cell = self._context_cell(text, c)
                if colors[item.status] is not None:
                    cell.setForeground(QBrush(colors[item.status]))
                self.context_table.setItem(r + offset, c, cell)
        for column in range(4):
            self.context_table.resizeColumnToContents(column)

    @staticmethod
    def _context_cell(text: str, column: int) -> QTableWidgetItem:
        if column != 4:
            return QTableWidgetItem(text)
        cell = QTableWidgetItem(_preview(text))
        cell.setToolTip(tip(text))
        return cell

    # -- actions ------------------------------------------------------------------------------------

    def delete_selected(self) -> None:
        session_id = self.selected_session()
        if session_id is None:
            return
        store = self.ctx.writable()
        if store is None:
            return

        async def impact() -> Any:
            return (await store.session_stats([session_id]))[session_id]

        def ask(stats: Any) -> None:
            text = (
                f"Delete session “{session_id}”?\n\nThis removes {plural(stats.event_count, 'event')} and "
                f"{plural(stats.chunk_count, 'chunk')} with their vectors and full-text rows, and its summary state."
            )
            if self.ctx.backup_path:
                text += f"\n\nA backup was taken when editing was enabled: {self.ctx.backup_path}"
            if self.dialogs.confirm("Delete session", text):
                self.ctx.run(lambda: store.forget(session_id), label=f"Deleting {session_id}", changes="sessions")

        self.ctx.run(impact, on_done=ask)
