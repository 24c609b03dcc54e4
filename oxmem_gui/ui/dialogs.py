"""Every question the GUI asks a person, in one object, so tests can answer them and panels stay simple."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox, QWidget


class Dialogs:
    def __init__(self, parent: QWidget) -> None:
        self.parent = parent

    def error(self, message: str) -> None:
        QMessageBox.warning(self.parent, "oxmem", message)

    def info(self, message: str) -> None:
        QMessageBox.information(self.parent, "oxmem", message)

    def confirm(self, title: str, text: str, action: str = "Delete") -> bool:
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Cancel, self.parent)
        button = box.addButton(action, QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is button

    def unsaved(self, what: str) -> str:
        """``"save"``, ``"discard"`` or ``"cancel"``."""
        answer = QMessageBox.question(
            self.parent,
            "Unsaved changes",
            f"{what} has unsaved changes.",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        return {QMessageBox.StandardButton.Save: "save", QMessageBox.StandardButton.Discard: "discard"}.get(
            answer, "cancel"
        )

    def text(self, title: str, label: str, value: str = "") -> str | None:
        text, ok = QInputDialog.getText(self.parent, title, label, text=value)
        return text if ok else None

    def open_file(self, title: str, filters: str) -> Path | None:
        path, _ = QFileDialog.getOpenFileName(self.parent, title, "", filters)
        return Path(path) if path else None

    def save_file(self, title: str, filters: str, suggested: str = "") -> Path | None:
        path, _ = QFileDialog.getSaveFileName(self.parent, title, suggested, filters)
        return Path(path) if path else None
