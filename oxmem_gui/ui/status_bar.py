"""The main window's status bar: its message is cut with "…" a gap short of the file label and the other
permanent widgets, where Qt's own runs into them uncut."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QStatusBar, QWidget

#: the room left between the message and the first permanent widget, in pixels
GAP = 16


class StatusBar(QStatusBar):
    """A status bar that paints its message (a temporary one, or an action's status tip) itself, fitted to the
    room left of its permanent widgets."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.permanent: list[QWidget] = []
        #: the message as last painted, and where
        self.painted: tuple[str, QRect] = ("", QRect())

    def addPermanentWidget(self, widget: QWidget, stretch: int | None = 0) -> None:  # noqa: N802 - Qt's name
        super().addPermanentWidget(widget, stretch)
        self.permanent.append(widget)

    def message_rect(self) -> QRect:
        """Where the message goes: from the left edge to a gap before the first visible permanent widget."""
        right = min((w.x() for w in self.permanent if w.isVisible()), default=self.width()) - GAP
        return QRect(6, 0, max(right - 6, 0), self.height())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        message = self.currentMessage()
        if not message:
            self.painted = ("", QRect())
            super().paintEvent(event)
            return
        rect = self.message_rect()
        shown = self.fontMetrics().elidedText(message, Qt.TextElideMode.ElideRight, rect.width())
        painter = QPainter(self)
        painter.setPen(self.palette().windowText().color())
        painter.drawText(rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), shown)
        painter.end()
        self.painted = (shown, rect)
