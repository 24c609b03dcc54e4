"""The Tables panel: any table of any SQLite file, read-only — what an unknown database shows, and what every
format offers beside its own panels. Tables on the left (kind and exact row count), rows on the right a page at a
time ("Load more"), a cell's full value in the pane below."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..core.formats.tables import TableInfo, TablePage, shown_value
from .context import StoreContext, gone
from .dialogs import Dialogs

PAGE = 200


class RowsModel(QAbstractTableModel):
    """The rows loaded so far of one table."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.columns: list[str] = []
        self.rows: list[list[Any]] = []

    def reset(self, columns: list[str], rows: list[list[Any]]) -> None:
        self.beginResetModel()
        self.columns, self.rows = columns, rows
        self.endResetModel()

    def append(self, rows: list[list[Any]]) -> None:
        if not rows:
            return
        self.beginInsertRows(QModelIndex(), len(self.rows), len(self.rows) + len(rows) - 1)
        self.rows.extend(rows)
        self.endInsertRows()

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's signature
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self.columns[section] if section < len(self.columns) else None
        return section + 1

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        value = self.rows[index.row()][index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return shown_value(value, 80)
        if role == Qt.ItemDataRole.ToolTipRole:
            return shown_value(value, 400)
        if role == Qt.ItemDataRole.ForegroundRole and value is None:
            return Qt.GlobalColor.gray
        return None

    def full_value(self, index: QModelIndex) -> str:
        if not index.isValid():
            return ""
        value = self.rows[index.row()][index.column()]
        if isinstance(value, bytes):
            return f"BLOB, {len(value):,} bytes:\n" + value[:4096].hex(" ") + (" …" if len(value) > 4096 else "")
        return "NULL" if value is None else str(value)


class TablesPanel(QWidget):
    def __init__(self, ctx: StoreContext, dialogs: Dialogs, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.dialogs = dialogs
        self.current: str | None = None
        self._generation = 0

        self.list = QListWidget()
        self.list.setMinimumWidth(180)
        self.list.currentItemChanged.connect(self._table_changed)
        self.model = RowsModel(self)
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.view.setTabKeyNavigation(False)
        self.view.selectionModel().currentChanged.connect(self._cell_changed)
        self.title = QLabel("Choose a table")
        self.title.setWordWrap(True)
        self.more = QPushButton("Load more")
        self.more.setToolTip(f"The next {PAGE} rows")
        self.more.clicked.connect(self.load_more)
        self.more.setEnabled(False)
        self.cell = QPlainTextEdit(readOnly=True)
        self.cell.setPlaceholderText("The selected cell's full value")
        self.cell.setMaximumHeight(120)

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
        self.splitter.addWidget(self.list)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Every table of the file, read-only"))
        layout.addWidget(self.splitter, 1)
        ctx.opened.connect(self.reload)
        ctx.external_change.connect(self.reload)

    def reload(self) -> None:
        store = self.ctx.store
        if store is None:
            return
        self._generation += 1
        generation = self._generation

        def got(tables: list[TableInfo]) -> None:
            if generation != self._generation:
                return
            keep = self.current
            self.list.blockSignals(True)
            self.list.clear()
            for t in tables:
                rows = "?" if t.rows is None else f"{t.rows:,}"
                item = QListWidgetItem(f"{t.name}  ({t.kind}, {rows} rows)", self.list)
                item.setData(Qt.ItemDataRole.UserRole, t.name)
                item.setToolTip(t.sql or t.name)
            self.list.blockSignals(False)
            names = [t.name for t in tables]
            if keep in names:
                self.list.setCurrentRow(names.index(keep))
            elif tables:
                self.list.setCurrentRow(0)
            else:
                self.current = None
                self.model.reset([], [])
                self.title.setText("Choose a table" if tables else "This file has no tables")
                self.more.setEnabled(False)

        self.ctx.run(store.tables, on_done=got)

    def select_table(self, name: str) -> bool:
        for i in range(self.list.count()):
            if self.list.item(i).data(Qt.ItemDataRole.UserRole) == name:
                self.list.setCurrentRow(i)
                return True
        return False

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

    def _load(self, offset: int) -> None:
        store, name = self.ctx.require(), self.current
        generation = self._generation

        def got(page: TablePage) -> None:
            if name != self.current or generation != self._generation:
                return  # the selection moved on meanwhile: never show another table's rows
            if offset == 0:
                self.model.reset(page.columns, page.rows)
            else:
                self.model.append(page.rows)
            shown = len(self.model.rows)
            self.title.setText(
                f"{name}: rows 1–{shown:,}" + (" (more to load)" if page.more else "") if shown else f"{name}: no rows"
            )
            self.more.setEnabled(page.more)

        self.ctx.run(lambda: store.table_page(name, offset, PAGE), on_done=got, on_error=gone)

    def _cell_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.cell.setPlainText(self.model.full_value(current))
