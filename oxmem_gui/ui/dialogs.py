"""Every question the GUI asks a person, in one object, so tests can answer them and panels stay simple."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtGui import QColor, QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGridLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..core.api import Backup, FileDiff
from .backups_dialog import BackupsDialog
from .compare_dialog import CompareDialog
from .differences import differences
from .remote_dialog import RemoteAnswer, RemoteDialog
from .table_dialog import TableDialog


class ConflictDialog(QDialog):
    """Theirs (what is in the file now) beside mine (the edit that was not saved), what differs highlighted in
    each, and one button per way out. Nothing has been written when it shows; the caller acts on :attr:`choice`.
    The default — Enter anywhere, Escape, closing — is "Back to Editing" (``"cancel"``): nothing is written and
    no text is lost; each other way out takes a deliberate click or its underlined key."""

    def __init__(
        self, title: str, message: str, theirs: str, mine: str, choices: Sequence[tuple[str, str]], parent: QWidget
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.choice = "cancel"
        layout = QGridLayout(self)
        intro = QLabel(f"{message}\n\nNothing has been written yet. What differs is highlighted. Choose what to keep:")
        intro.setWordWrap(True)
        layout.addWidget(intro, 0, 0, 1, 2)
        spans = differences(theirs, mine)
        self.views: list[QPlainTextEdit] = []
        for column, (heading, text) in enumerate((("Theirs — in the file now", theirs), ("Mine — not saved", mine))):
            layout.addWidget(QLabel(f"<b>{heading}</b>"), 1, column)
            view = QPlainTextEdit(text)
            view.setReadOnly(True)
            view.setMinimumSize(300, 160)
            view.setTabChangesFocus(True)
            highlight(view, spans[column])
            layout.addWidget(view, 2, column)
            self.views.append(view)
        buttons = QDialogButtonBox()
        self.buttons: dict[str, QPushButton] = {}
        for key, label in choices:
            button = QPushButton(label)
            button.setAutoDefault(False)  # Enter never writes: only the safe way out is the default
            button.clicked.connect(lambda _=False, k=key: self._choose(k))
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
            self.buttons[key] = button
        back = buttons.addButton("&Back to Editing", QDialogButtonBox.ButtonRole.RejectRole)
        back.setToolTip("Nothing is written; your text stays in the editor")
        back.setDefault(True)
        back.clicked.connect(self.reject)
        self.buttons["cancel"] = back
        layout.addWidget(buttons, 3, 0, 1, 2)
        back.setFocus()

    def _choose(self, key: str) -> None:
        self.choice = key
        self.accept()


def highlight(view: QPlainTextEdit, spans: list[tuple[int, int]]) -> None:
    """Mark ``spans`` (character ranges) of the view's text with a background that reads on any palette."""
    marked = QTextCharFormat()
    marked.setBackground(QColor("#FFE08A"))
    marked.setForeground(QColor("#000000"))
    cursor = QTextCursor(view.document())
    for start, end in spans:
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.mergeCharFormat(marked)


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

    def conflict(self, title: str, message: str, theirs: str, mine: str, choices: Sequence[tuple[str, str]]) -> str:
        """Another program changed what the user edited: show both, return the key of the chosen way out
        (``"cancel"`` to go back with nothing written)."""
        dialog = ConflictDialog(title, message, theirs, mine, choices, self.parent)
        dialog.exec()
        return dialog.choice

    def text(self, title: str, label: str, value: str = "") -> str | None:
        """One line typed (None: cancelled); a long ``label`` wraps, so the dialog fits a small screen."""
        dialog = QInputDialog(self.parent)
        dialog.setWindowTitle(title)
        dialog.setLabelText(label)
        dialog.setTextValue(value)
        for child in dialog.findChildren(QLabel):
            child.setWordWrap(True)
        dialog.setMinimumWidth(min(560, max(320, len(label) * 7)))
        ok = dialog.exec() == QDialog.DialogCode.Accepted
        return dialog.textValue() if ok else None

    def secret(self, title: str, label: str) -> str | None:
        """A key or passphrase: typed hidden, never stored."""
        text, ok = QInputDialog.getText(self.parent, title, label, QLineEdit.EchoMode.Password)
        return text if ok and text else None

    def report(self, title: str, text: str, action: str | None = None) -> bool:
        """A read-only text to read and copy (what a database holds, a preview), in a fixed-width font; with
        ``action``, a button of that name beside Close: True when the user chose it."""
        dialog = QDialog(self.parent)
        dialog.setWindowTitle(title)
        view = QPlainTextEdit(text, readOnly=True)
        view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(dialog.reject)
        if action:
            buttons.addButton(action, QDialogButtonBox.ButtonRole.DestructiveRole).clicked.connect(dialog.accept)
        layout = QVBoxLayout(dialog)
        layout.addWidget(view)
        layout.addWidget(buttons)
        dialog.resize(760, 480)
        return dialog.exec() == QDialog.DialogCode.Accepted

    def _fit(self, dialog: QDialog) -> None:
        """Never wider than the window it belongs to."""
        if self.parent is not None:
            dialog.resize(min(dialog.width(), max(self.parent.width() - 40, 400)), dialog.height())

    def table(
        self,
        title: str,
        heading: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[str]],
        action: str | None = None,
    ) -> bool:
        """Rows to read under ``heading``, cut to the window's width (each cell whole in its tooltip); with
        ``action``, a button of that name beside Close: True when the user chose it."""
        dialog = TableDialog(title, heading, columns, rows, action, self.parent)
        self._fit(dialog)
        return dialog.exec() == QDialog.DialogCode.Accepted

    def backups(
        self, backups: Sequence[Backup], folder: str, current: str | None, restore_refusal: str | None
    ) -> tuple[str, Backup | None] | None:
        """File ▸ Backups…: ``("open" | "restore", backup)``, ``("folder", None)``, or None when closed."""
        dialog = BackupsDialog(backups, folder, current, restore_refusal, self.parent)
        dialog.exec()
        return (dialog.action, dialog.chosen) if dialog.action else None

    def pick_memory(self, items: Sequence[tuple[str, str]]) -> str | None:
        """*Why not…?*'s picker: the chosen memory's target (a sequence number), or None."""
        from .search.why_not import WhyNotPicker

        dialog = WhyNotPicker(items, self.parent)
        self._fit(dialog)
        return dialog.chosen if dialog.exec() == QDialog.DialogCode.Accepted else None

    def remote(self, url: str, variable: str) -> RemoteAnswer | None:
        """File ▸ Open Remote…: the URL and the token (see :mod:`.remote_dialog`), or None when cancelled."""
        dialog = RemoteDialog(url, variable, self.parent)
        return dialog.answer if dialog.exec() == QDialog.DialogCode.Accepted else None

    def compare(self, diff: FileDiff) -> None:
        """File ▸ Compare with Backup…'s answer: the changes, to read."""
        dialog = CompareDialog(diff, self.parent)
        self._fit(dialog)
        dialog.exec()

    def open_file(self, title: str, filters: str, folder: str = "") -> Path | None:
        """A file to open, the dialog starting in ``folder`` (the open file's; empty: the working folder)."""
        path, _ = QFileDialog.getOpenFileName(self.parent, title, folder, filters)
        return Path(path) if path else None

    def save_file(self, title: str, filters: str, suggested: str = "", confirm_overwrite: bool = True) -> Path | None:
        """A file to write; ``confirm_overwrite=False`` when the caller asks its own question about what is there."""
        options = QFileDialog.Option(0) if confirm_overwrite else QFileDialog.Option.DontConfirmOverwrite
        path, _ = QFileDialog.getSaveFileName(self.parent, title, suggested, filters, options=options)
        return Path(path) if path else None
