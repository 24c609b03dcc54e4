"""A grid of any values as SQLite returns them (text, numbers, BLOBs, NULL): the Tables panel's rows and the SQL
console's result. A cell shows at most :data:`CELL_WIDTH` characters; its tooltip and :meth:`CellsModel.full_value`
give the whole value."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt

from ..core.api import shown_value
from .paged import TIP_FROM
from .rows_model import tip

#: a cell shows at most this many characters (its tooltip and the pane below show the whole value)
CELL_WIDTH = 80


class CellsModel(QAbstractTableModel):
    """The rows loaded so far (of a table, or of a query's result)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.columns: list[str] = []
        self.rows: list[Sequence[Any]] = []

    def reset(self, columns: list[str], rows: Sequence[Sequence[Any]]) -> None:
        self.beginResetModel()
        self.columns, self.rows = columns, list(rows)  # (a copy: appending never grows the caller's list)
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
            return shown_value(value, CELL_WIDTH)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.tooltip(value)
        if role == Qt.ItemDataRole.ForegroundRole and value is None:
            return Qt.GlobalColor.gray
        return None

    @staticmethod
    def tooltip(value: Any) -> str | None:
        """A text cell's whole text when the cell shows less (cut, or its line breaks as ⏎) or may be cut by
        its column; a BLOB's size and first bytes."""
        if value is None:
            return None
        if isinstance(value, bytes):
            return shown_value(value)
        text = str(value)
        if text != shown_value(value, CELL_WIDTH) or len(text) >= TIP_FROM:
            return tip(text)
        return None

    def full_value(self, index: QModelIndex) -> str:
        if not index.isValid():
            return ""
        value = self.rows[index.row()][index.column()]
        if isinstance(value, bytes):
            return f"BLOB, {len(value):,} bytes:\n" + value[:4096].hex(" ") + (" …" if len(value) > 4096 else "")
        return "NULL" if value is None else str(value)
