"""Checks that a window fits a laptop screen: every control visible, none clipped off the window or squeezed to
nothing (a control inside a scroll area counts as reachable when its scroll area is)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QTabBar,
    QWidget,
)

CONTROLS = (QAbstractButton, QAbstractScrollArea, QAbstractSlider, QAbstractSpinBox, QComboBox, QLineEdit, QTabBar)
#: smaller than this in either direction, a control cannot be used
MIN_SIDE = 8


def _scrolled(widget: QWidget) -> bool:
    """Inside a scroll area's viewport: reachable by scrolling, so judged by its scroll area."""
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea) and parent.viewport().isAncestorOf(widget):
            return True
        parent = parent.parentWidget()
    return False


def unreachable(window: QWidget) -> list[str]:
    """Each visible control of ``window`` that lies (partly) outside it or is squeezed below ``MIN_SIDE``:
    ``"ClassName 'text' at x,y wxh"``. Empty when everything fits."""
    QApplication.processEvents()
    bounds = window.rect()
    found = []
    for widget in window.findChildren(QWidget):
        if not isinstance(widget, CONTROLS) or not widget.isVisible() or _scrolled(widget):
            continue
        if widget.window() is not window:
            continue
        rect = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
        if not bounds.contains(rect) or rect.width() < MIN_SIDE or rect.height() < MIN_SIDE:
            text = widget.text() if hasattr(widget, "text") and callable(widget.text) else widget.objectName()
            found.append(f"{type(widget).__name__} {text!r} at {rect.x()},{rect.y()} {rect.width()}x{rect.height()}")
    return found
