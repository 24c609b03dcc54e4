"""Widgets shared by the panels."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget


def fill_with_panes(
    panel: QWidget,
    left: QWidget,
    right: QWidget,
    sizes: tuple[int, int],
    orientation: Qt.Orientation = Qt.Orientation.Horizontal,
) -> QSplitter:
    """Lay ``left`` and ``right`` out in a splitter filling ``panel`` (panels save the splitter's state)."""
    split = QSplitter(orientation)
    split.addWidget(left)
    split.addWidget(right)
    split.setSizes(list(sizes))
    QVBoxLayout(panel).addWidget(split)
    return split
