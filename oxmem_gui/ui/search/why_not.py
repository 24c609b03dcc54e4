"""*Why not…?*: pick a memory of the session that a search did not recall, and read why (the core's
:mod:`~oxmem_gui.core.retrieval.why_not`). After a search of many sessions the picker offers every session's
memories, each target naming its session (:func:`many_target`)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

#: what joins a session and a memory of it in a picked target of a search over many sessions
SEP = "\t"


def many_target(session: str, target: str) -> str:
    """A memory of ``session`` as the picker hands it back when the search ran over many sessions."""
    return f"{session}{SEP}{target}"


def split_target(picked: str) -> tuple[str | None, str]:
    """``(session, target)`` of a :func:`many_target` (the session None for a plain target). A target (a sequence
    number, a chunk or note id) holds no tab, so a session id holding one still splits right."""
    session, sep, target = picked.rpartition(SEP)
    return (session, target) if sep else (None, picked)


class WhyNotPicker(QDialog):
    """Type to find a memory by its text; Enter (or OK) picks the selected one."""

    def __init__(self, items: Sequence[tuple[str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Why not…?")
        self.chosen: str | None = None
        self.find = QLineEdit()
        self.find.setPlaceholderText("Type words of the memory the agent should have recalled")
        self.list = QListWidget()
        for label, target in items:
            item = QListWidgetItem(label[:200])
            item.setToolTip(label)
            item.setData(Qt.ItemDataRole.UserRole, target)
            self.list.addItem(item)
        self.list.setCurrentRow(0)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Why not this one?")
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        self.find.textChanged.connect(self.filter)
        self.find.installEventFilter(self)
        self.list.itemActivated.connect(lambda _: self._accept())
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Which memory did the agent not recall?"))
        layout.addWidget(self.find)
        layout.addWidget(self.list, 1)
        layout.addWidget(buttons)
        self.resize(640, 420)

    def filter(self, text: str) -> None:
        """Show the memories holding every typed word; the first of them selected."""
        words = text.casefold().split()
        first = None
        for i in range(self.list.count()):
            item = self.list.item(i)
            hidden = not all(w in item.toolTip().casefold() for w in words)
            item.setHidden(hidden)
            if not hidden and first is None:
                first = i
        if first is not None:
            self.list.setCurrentRow(first)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        """Up and Down in the search field move through the list."""
        if (
            watched is self.find
            and event.type() == QEvent.Type.KeyPress
            and event.key() in (Qt.Key.Key_Up, Qt.Key.Key_Down)
        ):
            self.list.keyPressEvent(event)
            return True
        return super().eventFilter(watched, event)

    def _accept(self) -> None:
        item = self.list.currentItem()
        if item is not None and not item.isHidden():
            self.chosen = item.data(Qt.ItemDataRole.UserRole)
            self.accept()
