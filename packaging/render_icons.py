"""Render the application icon ``resources/icons/oxmem.svg`` to ``resources/icons/oxmem-N.png`` for every size in
:data:`SIZES` (the sizes desktops look up in the ``hicolor`` theme), with Qt's own SVG renderer.

    .venv/bin/python packaging/render_icons.py          # from the repository: rewrites the PNGs
    .venv/bin/python packaging/render_icons.py --check  # exit 1 naming each PNG that is missing or of a wrong size
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ICONS = ROOT / "resources" / "icons"
SVG = ICONS / "oxmem.svg"
SIZES = (16, 32, 48, 64, 128, 256)


def png_path(size: int) -> Path:
    return ICONS / f"oxmem-{size}.png"


def _app():
    """A QGuiApplication (offscreen unless a platform is chosen): QPainter needs one for its fonts and pixmaps."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    return QGuiApplication.instance() or QGuiApplication([sys.argv[0]])


def render(size: int, svg: Path = SVG):
    """The SVG drawn on a transparent ``size``×``size`` ARGB image."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app()
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise ValueError(f"{svg} is not an SVG Qt can draw")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def problems() -> list[str]:
    """One line per PNG that is missing, unreadable or not of its size."""
    from PySide6.QtGui import QImage

    _app()
    found = []
    for size in SIZES:
        path = png_path(size)
        image = QImage(str(path))
        if image.isNull():
            found.append(f"{path.relative_to(ROOT)} is missing or not a PNG")
        elif (image.width(), image.height()) != (size, size):
            found.append(f"{path.relative_to(ROOT)} is {image.width()}x{image.height()}, not {size}x{size}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check the PNGs, write nothing")
    args = parser.parse_args(argv)
    if args.check:
        found = problems()
        for line in found:
            print(line, file=sys.stderr)
        return 1 if found else 0
    for size in SIZES:
        if not render(size).save(str(png_path(size)), "PNG"):
            print(f"could not write {png_path(size)}", file=sys.stderr)
            return 1
        print(png_path(size).relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
