"""What the window shows when no store is open (the file given at start could not be opened): why, and the ways
on — open a file, a recent one, or a fresh demo store."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QPushButton, QVBoxLayout, QWidget

from .widgets import tab_leaves


class StartPage(QWidget):
    """Signals: ``open_file`` (choose a file), ``open_demo``, ``open_recent(path)``."""

    open_file = Signal()
    open_demo = Signal()
    open_recent = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.heading = QLabel("<h2>No memory store is open</h2>")
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
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
        for widget in (self.heading, self.message, self.open_button, self.demo_button, self.recent_label):
            layout.addWidget(widget, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.recent, 1)

    def show_message(self, message: str, recent: list[str]) -> None:
        """Say why no store is open (``message``) and list the ``recent`` files to pick from."""
        self.message.setText(message)
        self.recent.clear()
        for path in recent:
            QListWidgetItem(path, self.recent).setToolTip(path)
        self.recent_label.setVisible(bool(recent))
        self.recent.setVisible(bool(recent))
        self.open_button.setFocus()
