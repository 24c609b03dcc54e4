"""File ▸ Backups…: the backups taken before editing, newest first, to open one read-only, restore one into the
open store, or show their folder."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..core.api import Backup
from .widgets import tab_leaves


def size_text(size: int) -> str:
    """``12.3 MiB``, ``840 KiB``."""
    if size >= 1 << 20:
        return f"{size / (1 << 20):.1f} MiB"
    return f"{max(1, round(size / 1024)):,} KiB"


class BackupsDialog(QDialog):
    """After ``exec()``, :attr:`action` is ``"open"``, ``"restore"``, ``"folder"`` or None, and :attr:`chosen`
    the selected backup (None for ``"folder"``). ``restore_refusal``: why restoring into the open store is not
    possible now (the Restore button is disabled with it as tooltip), or None."""

    def __init__(
        self,
        backups: Sequence[Backup],
        folder: str,
        current: str | None,
        restore_refusal: str | None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Backups")
        self.backups = list(backups)
        self.action: str | None = None
        self.chosen: Backup | None = None
        intro = QLabel(
            f"Taken before editing, in {folder}" if self.backups else f"No backups yet. They are kept in {folder}"
        )
        intro.setWordWrap(True)
        self.table = tab_leaves(QTableWidget(len(self.backups), 3))
        self.table.setHorizontalHeaderLabels(["Taken", "Of", "Size"])
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for row, backup in enumerate(self.backups):
            cells = (backup.taken_at.strftime("%Y-%m-%d %H:%M:%S"), backup.source, size_text(backup.size))
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(str(backup.path))
                if column == 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, column, item)
        self.table.resizeColumnsToContents()
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.itemActivated.connect(lambda _item: self._choose("open"))

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self.open_button = QPushButton("&Open Read-Only")
        self.open_button.setToolTip("Open the selected backup to look at it; nothing can change it")
        self.restore_button = QPushButton(f"&Restore Into {current}…" if current else "&Restore…")
        self.restore_button.setToolTip(
            restore_refusal
            or "Replace the open store's content with the selected backup (what is there now is backed up first)"
        )
        self.folder_button = QPushButton("Show &Folder")
        self.folder_button.setToolTip(folder)
        self.open_button.clicked.connect(lambda: self._choose("open"))
        self.restore_button.clicked.connect(lambda: self._choose("restore"))
        self.folder_button.clicked.connect(lambda: self._choose("folder"))
        for button in (self.open_button, self.restore_button, self.folder_button):
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
        self._restore_refusal = restore_refusal
        self.table.itemSelectionChanged.connect(self._update)
        if self.backups:
            self.table.selectRow(0)
        self._update()

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(640, 360)

    def _selected(self) -> Backup | None:
        rows = self.table.selectionModel().selectedRows()
        return self.backups[rows[0].row()] if rows else None

    def _update(self) -> None:
        chosen = self._selected() is not None
        self.open_button.setEnabled(chosen)
        self.restore_button.setEnabled(chosen and self._restore_refusal is None)

    def _choose(self, action: str) -> None:
        self.chosen = self._selected() if action != "folder" else None
        if action != "folder" and self.chosen is None:
            return
        self.action = action
        self.accept()
