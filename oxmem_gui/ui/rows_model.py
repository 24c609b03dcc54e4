"""The base of the inspector's table models: a list of rows and a tuple of column titles; ``tip`` makes a
cell's whole text readable as a tooltip."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal

from .change_marks import ChangeMarks

Index = QModelIndex | QPersistentModelIndex

#: tooltip lines are broken (at a space) to at most this many characters
TIP_LINE = 100
#: longer texts are cut in a tooltip, which says how long the whole is
TIP_MAX = 4000


def tip(text: str, line: int = TIP_LINE, limit: int = TIP_MAX) -> str:
    """``text`` as a tooltip: every character kept (up to ``limit``), lines longer than ``line`` characters
    broken at their last space that fits (the space becomes the line break; a line without one is cut at
    ``line``). A text longer than ``limit`` ends with "…" and a line giving its whole length."""
    cut = len(text) > limit
    body = text[:limit] if cut else text
    out = []
    for paragraph in body.split("\n"):
        while len(paragraph) > line:
            at = paragraph.rfind(" ", 0, line + 1)
            if at <= 0:
                out.append(paragraph[:line])
                paragraph = paragraph[line:]
            else:
                out.append(paragraph[:at])
                paragraph = paragraph[at + 1 :]
        out.append(paragraph)
    shown = "\n".join(out)
    return shown + f"…\n({len(text):,} characters in all)" if cut else shown


class RowsModel(QAbstractTableModel):
    """``unseen_changed`` is emitted when the number of rows another program added or changed and the user has
    not seen yet may have changed (:attr:`marks`; only for models that observe their loads)."""

    COLUMNS: tuple[str, ...] = ()
    unseen_changed = Signal()

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[Any] = []
        self.marks = ChangeMarks(self.key, self.unseen_changed.emit)

    def key(self, row: Any) -> Any:
        """What identifies a row across loads."""
        return row

    def set_rows(self, rows: list[Any]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def set_heading(self, column: int, text: str) -> None:
        """Rename a column (the first, to what the open format calls its rows: ``Fact``, ``Conversation``)."""
        self.COLUMNS = (*self.COLUMNS[:column], text, *self.COLUMNS[column + 1 :])
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, column, column)

    def row(self, i: int) -> Any:
        return self.rows[i] if 0 <= i < len(self.rows) else None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.COLUMNS[section] if 0 <= section < len(self.COLUMNS) else None
        return None
