"""What the window shows when no store is open — at a first launch with no file named, or when the file given could
not be opened (then why): the ways on — open a file (or drop one on the window), the demo, a new empty store, the
agents' memory files found at their usual places on this machine (:mod:`..core.known_places`, looked for off the
GUI thread; the list fills in when that ends) and the recent files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent, QTextOption
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QTextEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .widgets import tab_leaves


class Found(Protocol):
    """A file found at an agent's usual place, as the page shows it (the core's ``known_places.Found``)."""

    @property
    def agent(self) -> str: ...
    @property
    def path(self) -> Path: ...
    @property
    def where(self) -> str: ...
    @property
    def summary(self) -> str: ...


#: the heading when no file was named, and when the one named could not be opened (the reason under it)
WELCOME = "Open an agent's memory"
FAILED = "No memory store is open"
#: what the page says under :data:`WELCOME`
INTRO = (
    "Choose an agent's memory file, or drop one on this window. It opens read-only: nothing in it changes until "
    "you choose Edit ▸ Enable Editing, which backs the file up first."
)


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


def fit_rows(view: QAbstractItemView, rows: int, header: int = 0) -> None:
    """No taller than ``rows`` rows (and a ``header``) need, so a short list leaves no empty box below it; a
    window too small for them all shrinks it, and it scrolls."""
    row = view.sizeHintForRow(0) if rows else view.fontMetrics().height()
    view.setMaximumHeight(header + max(rows, 1) * max(row, 1) + 2 * view.frameWidth() + 4)


class StartPage(QWidget):
    """Signals: ``open_file`` (choose a file), ``open_demo``, ``new_store`` (create an empty one where the user
    says), ``open_recent(path)`` (a recent file) and ``open_found(path)`` (a file found on this machine).

    Tab goes through the buttons, then the lists; a file dropped anywhere on the page goes to the window (no
    control of the page takes drops), which opens it."""

    open_file = Signal()
    open_demo = Signal()
    new_store = Signal()
    open_recent = Signal(str)
    open_found = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.heading = QLabel(f"<h2>{FAILED}</h2>")
        self.message = Reason()
        self.open_button = QPushButton("&Open a File…")
        self.open_button.setToolTip("Choose an agent's memory file (Ctrl+O); it opens read-only")
        self.open_button.clicked.connect(self.open_file)
        self.demo_button = QPushButton("Open the &Demo")
        self.demo_button.setToolTip(
            "A fresh store filled with example sessions, notes and schedules, to try things; removed on close"
        )
        self.demo_button.clicked.connect(self.open_demo)
        self.new_button = QPushButton("&New Empty Store…")
        self.new_button.setToolTip("Create an empty oxmem store in a file you choose (Ctrl+Shift+N)")
        self.new_button.clicked.connect(self.new_store)
        self.found_label = QLabel("Found on this machine:")
        self.found_status = QLabel()
        self.found_status.setWordWrap(True)
        self.found = tab_leaves(QTreeWidget())
        self.found.setColumnCount(3)
        self.found.setHeaderLabels(["Agent", "What it is", "File"])
        self.found.setRootIsDecorated(False)
        self.found.setUniformRowHeights(True)
        self.found.setAllColumnsShowFocus(True)
        self.found.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.found.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.found.header().setStretchLastSection(True)
        self.found.header().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.found.itemActivated.connect(lambda item, _: self.open_found.emit(item.data(2, Qt.ItemDataRole.UserRole)))
        self.recent_label = QLabel("Recent files:")
        self.recent = tab_leaves(QListWidget())
        self.recent.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.recent.itemActivated.connect(lambda item: self.open_recent.emit(item.text()))
        for widget in (self.message, self.found, self.recent):
            widget.setAcceptDrops(False)  # a dropped file goes on to the window
            if isinstance(widget, QAbstractItemView):
                widget.viewport().setAcceptDrops(False)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        for button in (self.open_button, self.demo_button, self.new_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(48, 16, 48, 16)
        layout.addWidget(self.heading)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        layout.addSpacing(8)
        layout.addWidget(self.found_label)
        layout.addWidget(self.found_status)
        layout.addWidget(self.found, 1)
        layout.addSpacing(8)
        layout.addWidget(self.recent_label)
        layout.addWidget(self.recent, 1)
        layout.addStretch(1)  # keeps everything at the top when there is no list to show
        chain = (self.open_button, self.demo_button, self.new_button, self.found, self.recent)
        for before, after in zip(chain, chain[1:], strict=False):
            QWidget.setTabOrder(before, after)
        self.show_looking()

    def show_message(self, message: str | None, recent: list[str]) -> None:
        """Say why no store is open (``message``; None: no file was named, so the page welcomes instead) and list
        the ``recent`` files to pick from."""
        self.heading.setText(f"<h2>{FAILED if message is not None else WELCOME}</h2>")
        self.message.setPlainText(message if message is not None else INTRO)
        self.recent.clear()
        for path in recent:
            QListWidgetItem(path, self.recent).setToolTip(path)
        self.recent_label.setVisible(bool(recent))
        self.recent.setVisible(bool(recent))
        fit_rows(self.recent, self.recent.count())
        self.open_button.setFocus()

    def show_looking(self) -> None:
        """While the usual places are looked at: say so (the list comes with :meth:`show_found`)."""
        self.found.clear()
        self.found.setVisible(False)
        self.found_status.setText("Looking at the usual places of the agents' memory files…")
        self.found_status.setVisible(True)

    def show_found(self, found: Sequence[Found]) -> None:
        """The agents' memory files found on this machine, one row each: the agent whose place it is, what the file
        is (as looked at) with its size, and its path (whole in the tooltip). None found: said so."""
        self.found.clear()
        for each in found:
            item = QTreeWidgetItem(self.found, [each.agent, each.summary, str(each.path)])
            item.setData(2, Qt.ItemDataRole.UserRole, str(each.path))
            tip = f"{each.path}\n{each.agent}'s usual place: {each.where}\n{each.summary}"
            for column in range(3):
                item.setToolTip(column, tip)
        for column in (0, 1):
            self.found.resizeColumnToContents(column)
            self.found.setColumnWidth(column, self.found.columnWidth(column) + 16)
        fit_rows(self.found, len(found), self.found.header().sizeHint().height())
        self.found.setVisible(bool(found))
        self.found_status.setText(
            "" if found else "No agent's memory file at the usual places (see Open a File… for any other)."
        )
        self.found_status.setVisible(not found)

    def show_not_found(self, reason: str) -> None:
        """Looking at the usual places failed as a whole (each file's own trouble is said in its row)."""
        self.found.clear()
        self.found.setVisible(False)
        self.found_status.setText(f"Could not look at the usual places: {reason}")
        self.found_status.setVisible(True)

    def found_paths(self) -> list[str]:
        """The paths the list of files found shows, in order."""
        items = (self.found.topLevelItem(i) for i in range(self.found.topLevelItemCount()))
        return [item.data(2, Qt.ItemDataRole.UserRole) for item in items if item is not None]
