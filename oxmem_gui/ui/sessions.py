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

from ..core.browse import ChunkRow, SessionRow
from ..core.events import Event
from ..core.indexing import PayloadNotIndexable, extract_text, normalize
from .context import StoreContext, gone
from .dialogs import Dialogs
from .paged import PagedTableModel
from .widgets.json_view import JsonView

ID_ROLE = Qt.ItemDataRole.UserRole + 1


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

    def extra(self, row: SessionRow, column: int, role: int) -> Any:
        if role == ID_ROLE:
            return row.session_id
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (2, 3, 4):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and column == 0:
            details = "".join(f"\n{k}: {v}" for k, v in row.details.items() if v not in (None, ""))
            return row.session_id + (f"\nagent: {row.agent_identity}" if row.agent_identity else "") + details
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


def describe_event(event: Event) -> tuple[str, str, str]:
    """``(role, source, text)`` for the events table; a payload that is not a message says so."""
    try:
        extracted = extract_text(event.payload)
    except PayloadNotIndexable as exc:
        return "?", "not indexed", f"⚠ not indexed: {exc}"
    text = extracted.text
    if extracted.source == "assistant_tool_call":
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

    def extra(self, row: ChunkRow, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.ToolTipRole and column == 4:
            return row.text
        return None

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
    return view


class SessionsPanel(QWidget):
    """Sessions on the left; the selected session's events, summary, chunks and context on the right."""

    def __init__(self, ctx: StoreContext, dialogs: Dialogs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.dialogs = dialogs
        self.sessions = SessionsModel(ctx, self)
        self.events = EventsModel(ctx, self)
        self.chunks = ChunksModel(ctx, self)

        self.filter = QLineEdit(placeholderText="Filter sessions by id…")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self.sessions.set_filter)
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

        self.events_view = _table(self.events)
        fit_columns(self.events_view, range(4))
        self.events_view.selectionModel().currentRowChanged.connect(self._event_changed)
        self.json_view = JsonView()
        events_split = QSplitter(Qt.Orientation.Vertical)
        events_split.addWidget(self.events_view)
        events_split.addWidget(self.json_view)
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
        self.context_info = QLabel()
        self.context_info.setWordWrap(True)
        self.context_table = QTableWidget(0, 5)
        self.context_table.setHorizontalHeaderLabels(["Seq", "Status", "Tokens", "Role", "Text"])
        self.context_table.verticalHeader().setVisible(False)
        self.context_table.horizontalHeader().setStretchLastSection(True)
        self.context_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        context = QWidget()
        ctx_layout = QVBoxLayout(context)
        row = QHBoxLayout()
        row.addWidget(QLabel("Token budget"))
        row.addWidget(self.budget)
        row.addStretch(1)
        ctx_layout.addLayout(row)
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
        split.addWidget(self.tabs)
        split.setSizes([520, 640])
        self.splitter = split
        layout = QVBoxLayout(self)
        layout.addWidget(split)

        ctx.opened.connect(self.reset)
        ctx.external_change.connect(self.refresh)
        ctx.changed.connect(lambda kind: self.refresh())
        ctx.mode_changed.connect(lambda read_only: self.delete_button.setEnabled(not read_only))

    # -- state --------------------------------------------------------------------------------------

    def selected_session(self) -> str | None:
        index = self.sessions_view.currentIndex()
        return self.sessions.data(index, ID_ROLE) if index.isValid() else None

    def select_session(self, session_id: str) -> bool:
        for i, row in enumerate(self.sessions.rows):
            if row.session_id == session_id:
                self.sessions_view.selectionModel().setCurrentIndex(
                    self.sessions.index(i, 0),
                    QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
                )
                return True
        return False

    def focus_filter(self) -> None:
        self.filter.setFocus()
        self.filter.selectAll()

    def reset(self) -> None:
        self.sessions.restart()
        self.events.set_session(None)
        self.chunks.set_session(None)
        self._show_summary(None)

    def refresh(self) -> None:
        """Re-read what is shown, keeping the selected session, event and the scroll positions."""
        current = self.selected_session()
        event_row = self.events_view.currentIndex().row()
        scroll = self.sessions_view.verticalScrollBar().value()
        events_scroll = self.events_view.verticalScrollBar().value()

        def restore() -> None:
            if current and self.select_session(current):
                self.events.reload(lambda: self._restore_event(event_row, events_scroll))
                self.chunks.reload()
                self._load_details(current)
            self.sessions_view.verticalScrollBar().setValue(scroll)

        self.sessions.reload(restore)

    def _restore_event(self, row: int, scroll: int) -> None:
        if 0 <= row < self.events.rowCount():
            self.events_view.setCurrentIndex(self.events.index(row, 0))
        self.events_view.verticalScrollBar().setValue(scroll)

    # -- selection ----------------------------------------------------------------------------------

    def _session_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        session_id = self.sessions.data(current, ID_ROLE) if current.isValid() else None
        previous_id = self.sessions.data(previous, ID_ROLE) if previous.isValid() else None
        if session_id == previous_id and session_id is not None:
            return
        self.events.set_session(session_id)
        self.chunks.set_session(session_id)
        self.json_view.clear()
        self._load_details(session_id)

    def _load_details(self, session_id: str | None) -> None:
        if session_id is None:
            self._show_summary(None)
            return
        store = self.ctx.require()
        self.ctx.run(lambda: store.read_summary_state(session_id), on_done=self._show_summary, on_error=gone)
        self._load_context()

    def _event_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        if current.isValid() and current.row() < len(self.events.rows):
            event = self.events.rows[current.row()]
            self.json_view.show_value(
                {"sequence": event.sequence, "created_at": event.created_at, "payload": event.payload}
            )

    def _show_summary(self, state: dict | None) -> None:
        if not state:
            self.summary_epoch.setText("—")
            self.summary_upper.setText("—")
            self.summary_text.setPlainText("No rolling summary for this session." if self.selected_session() else "")
            return
        self.summary_epoch.setText(str(state.get("epoch")))
        self.summary_upper.setText(str(state.get("upper_sequence")))
        self.summary_text.setPlainText(str(state.get("summary", "")))

    def _load_context(self) -> None:
        session_id = self.selected_session()
        if session_id is None or self.tabs.currentIndex() != 3:
            return
        store, budget = self.ctx.require(), self.budget.value()
        self.ctx.run(lambda: store.context_preview(session_id, budget), on_done=self._show_context, on_error=gone)

    def _show_context(self, preview: Any) -> None:
        counts = {s: sum(1 for i in preview.items if i.status == s) for s in ("included", "dropped", "summarized")}
        summary = f"summary message: {preview.summary_tokens} tokens; " if preview.summary_message else ""
        self.context_info.setText(
            f"{preview.used:,} of {preview.budget:,} tokens — {summary}{counts['included']} messages included, "
            f"{counts['dropped']} dropped, {counts['summarized']} covered by the summary"
        )
        rows = preview.items
        colors = {"included": None, "dropped": QColor("#9a9a9a"), "summarized": QColor("#2d7fb8")}
        self.context_table.setRowCount(len(rows) + (1 if preview.summary_message else 0))
        offset = 0
        if preview.summary_message:
            cells = ["—", "summary", str(preview.summary_tokens), "system", _preview(preview.summary_message)]
            for c, text in enumerate(cells):
                self.context_table.setItem(0, c, QTableWidgetItem(text))
            offset = 1
        for r, item in enumerate(rows):
            cells = [str(item.sequence), item.status, str(item.tokens), item.role, _preview(item.text)]
            for c, text in enumerate(cells):
                cell = QTableWidgetItem(text)
                if colors[item.status] is not None:
                    cell.setForeground(QBrush(colors[item.status]))
                self.context_table.setItem(r + offset, c, cell)

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
                f"Delete session “{session_id}”?\n\nThis removes {stats.event_count:,} events and "
                f"{stats.chunk_count:,} chunks with their vectors and full-text rows, and its summary state."
            )
            if self.ctx.backup_path:
                text += f"\n\nA backup was taken when editing was enabled: {self.ctx.backup_path}"
            if self.dialogs.confirm("Delete session", text):
                self.ctx.run(lambda: store.forget(session_id), label=f"Deleting {session_id}", changes="sessions")

        self.ctx.run(impact, on_done=ask)
