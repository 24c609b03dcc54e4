"""``oxmem-gui``: the desktop inspector's entry point (the full window comes with the inspector issue)."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    from PySide6.QtWidgets import QApplication, QLabel

    app = QApplication(list(argv) if argv is not None else sys.argv)
    label = QLabel(
        "oxmem inspector — the session browser and note editor are on their way.\n"
        "Meanwhile, the command line `oxmem` shows everything in a store."
    )
    label.setMargin(24)
    label.setWindowTitle("oxmem")
    label.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
