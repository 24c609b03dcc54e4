"""What the window shows when no store is open (the file given at start could not be opened): why, and the ways
on — open a file, a recent one, or a fresh demo store."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent, QTextOption
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from .widgets import tab_leaves


class Reason(QTextEdit):
    """Why no store is open, whole: as wide as the page, as tall as its text, wrapped at words and, in a long
    path, anywhere (a label clipped it to one line, and could not break a path without changing what is copied);
    selectable, never editable, with no frame or background of its own."""

    def __init__(self) -> None:
        super().__init__()
        self.setReadOnly(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.viewport().setAutoFillBackground(False)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)

    def text(self) -> str:
        return self.toPlainText()

    def setPlainText(self, text: str) -> None:  # noqa: N802
        super().setPlainText(text)
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        self.document().setTextWidth(self.viewport().width())
        self.setFixedHeight(int(self.document().size().height()) + 2 * self.frameWidth())


class StartPage(QWidget):
    """Signals: ``open_file`` (choose a file), ``open_demo``, ``open_recent(path)``."""

    open_file = Signal()
    open_demo = Signal()
    open_recent = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.heading = QLabel("<h2>No memory store is open</h2>")
        self.message = Reason()
        self.open_button = QPushButton("&Open a File…")
        self.open_button.setToolTip("Choose an agent's memory file (Ctrl+O); it opens read-only")
        self.open_button.clicked.connect(self.open_file)
        self.demo_button = QPushButton("Open a New &Demo Store")
        self.demo_button.setToolTip("A fresh store filled with example sessions, notes and schedules, to try things")
        self.demo_button.clicked.connect(self.open_demo)
        self.recent_label = QLabel("Recent files:")
        self.recent = tab_leaves(QListWidget())
        self.recent.itemActivated.connect(lambda item: self.open_recent.emit(item.text()))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(48, 32, 48, 32)
        layout.addWidget(self.heading)
        layout.addWidget(self.message)
        for widget in (self.open_button, self.demo_button, self.recent_label):
            layout.addWidget(widget, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.recent, 100)
        layout.addStretch(1)  # keeps everything at the top when there are no recent files to list

    def show_message(self, message: str, recent: list[str]) -> None:
        """Say why no store is open (``message``) and list the ``recent`` files to pick from."""
        self.message.setPlainText(message)
        self.recent.clear()
        for path in recent:
            QListWidgetItem(path, self.recent).setToolTip(path)
        self.recent_label.setVisible(bool(recent))
        self.recent.setVisible(bool(recent))
        self.open_button.setFocus()
