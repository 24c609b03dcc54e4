"""The focus frame style (ui/focus_style.py): installed once as the application's style over the platform's, it
frames a list or table that has the keyboard focus in the highlight colour, and nothing else."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage, QPainter, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QLineEdit,
    QStyle,
    QStyleOptionFrame,
    QTableView,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from oxmem_gui.ui.focus_style import FOCUS_WIDTH, FocusFrameStyle

MAGENTA = QColor("#ff00ff")  # the highlight colour here: one no style draws by itself


@pytest.fixture
def views(qtbot):
    """A table, a text editor (a framed scroll area but no list or table) and a line edit in one shown window, all
    painted by a focus frame style with a magenta highlight."""
    style = FocusFrameStyle("fusion")
    window = QWidget()
    qtbot.addWidget(window)
    layout = QVBoxLayout(window)
    table, editor, line = QTableView(), QTextEdit(), QLineEdit()
    for widget in (table, editor, line):
        widget.setStyle(style)
        palette = widget.palette()
        palette.setColor(QPalette.ColorRole.Highlight, MAGENTA)
        widget.setPalette(palette)
        layout.addWidget(widget)
    window.resize(300, 400)
    window.show()
    window.activateWindow()
    QApplication.processEvents()
    yield table, editor, line  # the window, and the style no widget owns, live on until the test ends


def edges(widget: QWidget) -> list[QColor]:
    """The colours of the widget's outermost pixels at the middle of its top, left, right and bottom edges."""
    image = widget.grab().toImage()
    w, h = image.width(), image.height()
    return [image.pixelColor(*at) for at in ((w // 2, 0), (0, h // 2), (w - 1, h // 2), (w // 2, h - 1))]


def focus(widget: QWidget) -> None:
    widget.setFocus()
    QApplication.processEvents()
    assert widget.hasFocus()


def test_install_makes_the_application_style_a_focus_frame_over_the_platforms_once(qapp):
    qapp.setStyle("fusion")
    FocusFrameStyle.install()
    installed = qapp.style()
    assert isinstance(installed, FocusFrameStyle) and installed.baseStyle().name() == "fusion"
    FocusFrameStyle.install()
    assert qapp.style() is installed


def test_a_table_with_the_focus_is_framed_on_all_four_edges(views):
    table, _, line = views
    focus(line)
    assert MAGENTA not in edges(table)
    focus(table)
    assert edges(table) == [MAGENTA] * 4


def test_a_framed_widget_that_is_no_list_or_table_keeps_its_own_frame_with_the_focus(views):
    _, editor, _ = views
    focus(editor)
    assert MAGENTA not in edges(editor)


def test_the_frame_is_drawn_focus_width_pixels_thick_inside_the_frames_rectangle(views):
    table, _, _ = views
    focus(table)
    image = QImage(40, 30, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    option = QStyleOptionFrame()
    option.initFrom(table)
    option.rect = QRect(0, 0, 40, 30)
    painter = QPainter(image)
    table.style().drawControl(QStyle.ControlElement.CE_ShapedFrame, option, painter, table)
    painter.end()
    column = [image.pixelColor(20, y) for y in range(FOCUS_WIDTH + 1)]
    assert column[:FOCUS_WIDTH] == [MAGENTA] * FOCUS_WIDTH and column[FOCUS_WIDTH] != MAGENTA
    assert [image.pixelColor(x, 15) for x in (0, 39)] == [MAGENTA, MAGENTA]


def test_a_read_only_text_with_the_focus_is_framed_as_it_shows_no_caret(views):
    _, editor, line = views
    editor.setReadOnly(True)
    focus(editor)
    assert edges(editor) == [MAGENTA] * 4
    focus(line)
    assert MAGENTA not in edges(editor)
