"""Widgets shared by the panels."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractItemView, QLineEdit, QSplitter, QVBoxLayout, QWidget


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 note``, ``2 notes``, ``1,200 entries`` (``many``: an irregular plural)."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"


def escape_clears(field: QLineEdit) -> QLineEdit:
    """A filter field: a clear button, and Escape empties it (emitting ``textChanged``/``textEdited``)."""
    field.setClearButtonEnabled(True)

    def clear() -> None:
        if field.text():
            field.clear()
            field.textEdited.emit("")

    QShortcut(QKeySequence(Qt.Key.Key_Escape), field, clear, context=Qt.ShortcutContext.WidgetShortcut)
    return field


def tab_leaves(view: QAbstractItemView) -> QAbstractItemView:
    """Tab moves focus out of ``view`` (to the next control) instead of from cell to cell; the arrows move
    within it."""
    view.setTabKeyNavigation(False)
    return view


def show_editable(widgets: list[QWidget], refusal: str | None, tip: str = "") -> None:
    """Enable ``widgets`` when ``refusal`` is None, else disable them with the refusal as their tooltip
    (``tip``: the tooltip when enabled)."""
    for widget in widgets:
        widget.setEnabled(refusal is None)
        widget.setToolTip(refusal or tip)


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
