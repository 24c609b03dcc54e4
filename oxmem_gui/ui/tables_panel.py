"""The Tables panel: any table of any SQLite file, read-only — what an unknown database shows, and what every
format offers beside its own panels. *Browse*: tables on the left (kind and exact row count), rows on the right a
page at a time ("Load more"), a cell's full value in the pane below. *Execute SQL*: :mod:`.sql_console`."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QSettings, Qt
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

from ..core.api import TABLE_MAX_PAGE as MAX_PAGE
from ..core.api import TableInfo, TablePage
from .cells_model import CellsModel
from .context import StoreContext, gone
from .dialogs import Dialogs
from .sql_console import SqlConsole
from .widgets import ElidedLabel, escape_clears, plural, tab_leaves

PAGE = 200
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
        self.current: str | None = None
        self._generation = 0

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
        self.title = ElidedLabel("Choose a table")
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

    def reload(self, keep: bool = True) -> None:
        """Re-list the tables; the chosen table stays chosen while it exists — with ``keep``, its rows loaded so
        far are re-read and the current cell and scroll position kept, else its first page is loaded afresh."""
        store = self.ctx.store
        if store is None:
            return
        self._generation += 1
        generation = self._generation

        def got(tables: list[TableInfo]) -> None:
            if generation != self._generation:
                return
            current = self.current
            self.list.blockSignals(True)
            self.list.clear()
            for t in tables:
                rows = "? rows" if t.rows is None else plural(t.rows, "row")
                item = QListWidgetItem(f"{t.name}  ({t.kind}, {rows})", self.list)
                item.setData(Qt.ItemDataRole.UserRole, t.name)
                item.setToolTip(t.sql or t.name)
            self._filter_changed(self.filter.text())
            names = [t.name for t in tables]
            if current in names and keep:
                self.list.setCurrentRow(names.index(current))
                self.list.blockSignals(False)
                self._refresh_rows()
                return
            self.list.blockSignals(False)
            if current in names:
                self.list.setCurrentRow(names.index(current))
                self._table_changed(self.list.currentItem())
            elif tables:
                self.list.setCurrentRow(0)
            else:
                self.current = None
                self.model.reset([], [])
                self.cell.clear()
                self.title.setText("This file has no tables")
                self.more.setEnabled(False)

        self.ctx.run(store.tables, on_done=got)

    def select_table(self, name: str) -> bool:
        for i in range(self.list.count()):
            if self.list.item(i).data(Qt.ItemDataRole.UserRole) == name:
                self.list.setCurrentRow(i)
                return True
        return False

    def _filter_changed(self, text: str) -> None:
        """Hide the tables whose name does not contain ``text`` (ignoring case); the chosen table stays shown on
        the right, its title naming it."""
        needle = text.strip().casefold()
        for i in range(self.list.count()):
            item = self.list.item(i)
            item.setHidden(needle not in str(item.data(Qt.ItemDataRole.UserRole)).casefold())

    def _table_changed(self, item: QListWidgetItem | None, _previous: Any = None) -> None:
        self.current = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        self.model.reset([], [])
        self.cell.clear()
        self.more.setEnabled(False)
        if self.current is None:
            self.title.setText("Choose a table")
            return
        self.title.setText(f"{self.current}: loading…")
        self._load(0)

    def load_more(self) -> None:
        if self.current is not None:
            self._load(len(self.model.rows))

    def _refresh_rows(self) -> None:
        """Re-read as many rows as are loaded, keeping the current cell and the scroll position."""
        if self.current is None:
            return
        cell = self.view.currentIndex()
        at = (cell.row(), cell.column()) if cell.isValid() else None
        scroll = (self.view.verticalScrollBar().value(), self.view.horizontalScrollBar().value())

        def restore() -> None:
            if at is not None and at[0] < self.model.rowCount() and at[1] < self.model.columnCount():
                self.view.setCurrentIndex(self.model.index(*at))
            else:
                self.cell.clear()
            self.view.verticalScrollBar().setValue(scroll[0])
            self.view.horizontalScrollBar().setValue(scroll[1])

        self._load(0, min(max(PAGE, len(self.model.rows)), MAX_PAGE), restore)

    def _load(self, offset: int, limit: int = PAGE, done: Any = None) -> None:
        store, name = self.ctx.require(), self.current
        generation = self._generation

        def got(page: TablePage) -> None:
            if name != self.current or generation != self._generation:
                return  # the selection moved on meanwhile: never show another table's rows
            if offset == 0:
                refit = page.columns != self.model.columns  # another table: not a refresh of this one
                self.model.reset(page.columns, page.rows)
                if refit:
                    self._fit_columns()
            else:
                self.model.append(page.rows)
            shown = len(self.model.rows)
            rows = f"rows 1–{shown:,}" if shown > 1 else plural(shown, "row").replace("0 rows", "no rows")
            self.title.setText(f"{name}: {rows}" + (" (more to load)" if page.more else ""))
            self.more.setEnabled(page.more)
            if done:
                done()

        self.ctx.run(lambda: store.table_page(name, offset, limit), on_done=got, on_error=gone)

    def _fit_columns(self) -> None:
        self.view.resizeColumnsToContents()
        header = self.view.horizontalHeader()
        for column in range(self.model.columnCount()):
            if header.sectionSize(column) > COLUMN_MAX:
                header.resizeSection(column, COLUMN_MAX)

    def _cell_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.cell.setPlainText(self.model.full_value(current))
