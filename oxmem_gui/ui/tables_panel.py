"""The Tables panel: any table of any SQLite file, read-only — what an unknown database shows, and what every
format offers beside its own panels. *Browse*: tables on the left (kind and exact row count), rows on the right a
page at a time ("Load more"), a cell's full value in the pane below. *Execute SQL*: :mod:`.sql_console`."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QSettings, Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from .cells_model import CellsModel
from .context import StoreContext, gone
from .dialogs import Dialogs
from .sql_console import SqlConsole
from .tables_state import NO_TABLE, PAGE, TablesState, table_label
from .widgets import ElidedLabel, escape_clears, tab_leaves

#: a column sized to its content is at most this wide (the tooltip and the pane below show the rest)
COLUMN_MAX = 320


class TablesPanel(QWidget):
    """The tables of the file (filterable) on the left; the chosen one's rows, under a title naming it, on the
    right. Re-opening the file or another program writing keeps the table, the rows loaded and the cell."""

    def __init__(
        self, ctx: StoreContext, dialogs: Dialogs, settings: QSettings | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.dialogs = dialogs
        self.state = TablesState(changed=self._state_changed)

        self.filter = escape_clears(QLineEdit(placeholderText="Filter tables by name…"))
        self.filter.textChanged.connect(self._filter_changed)
        self.list = QListWidget()
        self.list.setMinimumWidth(180)
        tab_leaves(self.list)
        self.list.currentItemChanged.connect(self._table_changed)
        self.model = CellsModel(self)
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.view.setWordWrap(False)
        self.view.verticalHeader().setDefaultSectionSize(self.view.fontMetrics().height() + 8)
        tab_leaves(self.view)
        self.view.selectionModel().currentChanged.connect(self._cell_changed)
        self.title = ElidedLabel(NO_TABLE)
        self.more = QPushButton("Load more")
        self.more.setToolTip(f"The next {PAGE} rows")
        self.more.clicked.connect(self.load_more)
        self.more.setEnabled(False)
        self.cell = QPlainTextEdit(readOnly=True)
        self.cell.setPlaceholderText("The selected cell's full value")
        self.cell.setMaximumHeight(120)

        left = QWidget()
        tables = QVBoxLayout(left)
        tables.setContentsMargins(0, 0, 0, 0)
        tables.addWidget(self.filter)
        tables.addWidget(self.list, 1)
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.more)
        column.addLayout(top)
        column.addWidget(self.view, 1)
        column.addWidget(self.cell)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setSizes([240, 760])
        browse = QWidget()
        browsing = QVBoxLayout(browse)
        browsing.setContentsMargins(0, 0, 0, 0)
        browsing.addWidget(QLabel("Every table of the file, read-only"))
        browsing.addWidget(self.splitter, 1)
        self.console = SqlConsole(ctx, dialogs, settings)
        self.tabs = QTabWidget()
        self.tabs.addTab(browse, "&Browse")
        self.tabs.addTab(self.console, "E&xecute SQL")
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        ctx.opened.connect(lambda: self.reload(keep=self.ctx.reopened))
        ctx.external_change.connect(self.reload)
        ctx.changed.connect(self._own_write)
        #: this app wrote while the panel was hidden: its counts and rows are read again when it is shown
        self._behind = False

    def _own_write(self, _kind: str) -> None:
        """This app's own save: the row counts and rows follow at once when shown, else when next shown (a
        file's row counts are not read again for every save made in another panel)."""
        if self.isVisible():
            self.reload()
        else:
            self._behind = True

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._behind:
            self._behind = False
            self.reload()

    def reload(self, keep: bool = True) -> None:
        """Re-list the tables; the chosen table stays chosen while it exists — with ``keep``, its rows loaded so
        far are re-read and the current cell and scroll position kept, else its first page is loaded afresh."""
        store = self.ctx.store
        if store is not None:
            self.ctx.run(lambda: self.state.reload(store, keep), on_error=gone)

    @property
    def current(self) -> str | None:
        return self.state.current

    def select_table(self, name: str) -> bool:
        for i in range(self.list.count()):
            if self.list.item(i).data(Qt.ItemDataRole.UserRole) == name:
                self.list.setCurrentRow(i)
                return True
        return False

    def load_more(self) -> None:
        store = self.ctx.store
        if store is not None:
            self.ctx.run(lambda: self.state.load_more(store), on_error=gone)

    def _filter_changed(self, text: str) -> None:
        """Hide the tables whose name does not contain ``text`` (ignoring case); the chosen table stays shown on
        the right, its title naming it."""
        shown = set(self.state.names(text))
        for i in range(self.list.count()):
            item = self.list.item(i)
            item.setHidden(item.data(Qt.ItemDataRole.UserRole) not in shown)

    def _table_changed(self, item: QListWidgetItem | None, _previous: Any = None) -> None:
        name = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        store = self.ctx.store
        if store is not None:  # (the state may not have taken an earlier choice yet: it is always asked)
            self.ctx.run(lambda: self.state.choose(store, name), on_error=gone)

    def _state_changed(self, what: str) -> None:
        """Redraw what the state says changed: the list of tables, or the chosen table's rows."""
        if what == "tables":
            self.list.blockSignals(True)
            self.list.clear()
            for t in self.state.tables:
                item = QListWidgetItem(table_label(t), self.list)
                item.setData(Qt.ItemDataRole.UserRole, t.name)
                item.setToolTip(t.sql or t.name)
            self._filter_changed(self.filter.text())
            self._select_current()
            self.list.blockSignals(False)
            return
        self._select_current()
        cell = self.view.currentIndex()
        at = (cell.row(), cell.column()) if cell.isValid() and what == "kept" else None
        scroll = (self.view.verticalScrollBar().value(), self.view.horizontalScrollBar().value())
        refit = self.state.columns != self.model.columns  # another table: not a refresh of this one
        self.model.reset(self.state.columns, self.state.rows)
        if refit and self.state.columns:
            self._fit_columns()
        if at is not None and at[0] < self.model.rowCount() and at[1] < self.model.columnCount():
            self.view.setCurrentIndex(self.model.index(*at))
            self.view.verticalScrollBar().setValue(scroll[0])
            self.view.horizontalScrollBar().setValue(scroll[1])
        elif what != "kept" or at is None:
            self.cell.clear()
        self.title.setText(self.state.title)
        self.more.setEnabled(self.state.more)

    def _select_current(self) -> None:
        """The list's selection on the state's table (no signal: the state chose it)."""
        names = [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())]
        if self.state.current in names and self.list.currentRow() != names.index(self.state.current):
            self.list.blockSignals(True)
            self.list.setCurrentRow(names.index(self.state.current))
            self.list.blockSignals(False)

    def _fit_columns(self) -> None:
        self.view.resizeColumnsToContents()
        header = self.view.horizontalHeader()
        for column in range(self.model.columnCount()):
            if header.sectionSize(column) > COLUMN_MAX:
                header.resizeSection(column, COLUMN_MAX)

    def _cell_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.cell.setPlainText(self.model.full_value(current))
