"""Icons from ``resources/icons``, drawn in the palette's text colour so they suit light and dark themes."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication


@cache
def resources_dir() -> Path:
    """Inside the installed package, else the checkout's top-level folder."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "resources", here.parent / "resources"):
        if (candidate / "icons").is_dir():
            return candidate
    raise FileNotFoundError("oxmem's resources folder is missing from this installation")


def _render(svg: str, color: QColor, size: int) -> QPixmap:
    renderer = QSvgRenderer(QByteArray(svg.replace("currentColor", color.name()).encode()))
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    renderer.render(painter)
    painter.end()
    return pixmap


def icon(name: str) -> QIcon:
    """``resources/icons/NAME.svg`` tinted with the current palette (normal and disabled states)."""
    svg = (resources_dir() / "icons" / f"{name}.svg").read_text(encoding="utf-8")
    palette = QApplication.palette()
    result = QIcon()
    for size in (16, 24, 32, 48):
        result.addPixmap(_render(svg, palette.color(QPalette.ColorRole.WindowText), size))
        disabled = palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText)
        result.addPixmap(_render(svg, disabled, size), QIcon.Mode.Disabled)
    return result


def is_dark() -> bool:
    return QApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128
