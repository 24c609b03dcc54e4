"""A read-only table to read in a window (the keyboard shortcuts, an eviction preview): a heading that wraps and
rows whose cells are cut to the window's width, each whole in its tooltip — never a sideways scroll."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .widgets import tab_leaves

#: the widest a column other than the last gets (the last stretches to the window's edge)
WIDEST = 220


class TableDialog(QDialog):
    """``heading`` above ``rows`` under ``columns``; with ``action``, a button of that name beside Close whose
    choice :meth:`exec` reports as Accepted."""

    def __init__(
        self,
        title: str,
        heading: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[str]],
        action: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.heading = QLabel(heading)
        self.heading.setWordWrap(True)
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.heading.setVisible(bool(heading))
        self.table = tab_leaves(QTableWidget(len(rows), len(columns)))
        self.table.setHorizontalHeaderLabels(list(columns))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.horizontalHeader().setStretchLastSection(True)
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.table.setItem(r, c, item)
        for c in range(len(columns) - 1):
            self.table.resizeColumnToContents(c)
            self.table.setColumnWidth(c, min(self.table.columnWidth(c), WIDEST))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        if action:
            buttons.addButton(action, QDialogButtonBox.ButtonRole.DestructiveRole).clicked.connect(self.accept)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(760, 480)
