"""The application's style with one addition: a list or table with the keyboard focus is framed in the highlight
colour, and so is a read-only text view (no caret shows where its focus is). Focused and unfocused views looked
the same, so a keyboard user could not tell where the arrow keys would go. A proxy of the platform's style rather
than a style sheet: a style sheet changes how the views size their scroll bars, and panels that fit 1024 px
stopped fitting."""

from __future__ import annotations

from PySide6.QtGui import QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QPlainTextEdit,
    QProxyStyle,
    QStyle,
    QStyleOption,
    QTextEdit,
    QWidget,
)

#: the frame's width in pixels, drawn over the view's own frame
FOCUS_WIDTH = 2


class FocusFrameStyle(QProxyStyle):
    @classmethod
    def install(cls) -> None:
        """Make the application's style this one (once)."""
        app = QApplication.instance()
        if isinstance(app, QApplication) and not isinstance(app.style(), cls):
            app.setStyle(cls(app.style().name()))

    def drawControl(  # noqa: N802
        self, element: QStyle.ControlElement, option: QStyleOption, painter: QPainter, widget: QWidget | None = None
    ) -> None:
        super().drawControl(element, option, painter, widget)
        # a list or table with the focus, or a read-only text (an editable one shows its caret)
        read_only_text = isinstance(widget, (QTextEdit, QPlainTextEdit)) and widget.isReadOnly()
        framed = (isinstance(widget, QAbstractItemView) or read_only_text) and widget is not None and widget.hasFocus()
        if element == QStyle.ControlElement.CE_ShapedFrame and framed:
            painter.save()
            painter.setPen(QPen(option.palette.color(QPalette.ColorRole.Highlight), FOCUS_WIDTH))
            half = FOCUS_WIDTH // 2
            painter.drawRect(option.rect.adjusted(half, half, -half, -half))
            painter.restore()
