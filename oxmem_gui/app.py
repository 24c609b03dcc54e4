"""Entry point of ``oxmem-gui`` and ``python -m oxmem_gui``. The inspector needs the ``gui`` extra (PySide6,
qasync); an install without it says so in one line."""

from __future__ import annotations

import sys

#: the modules of the ``gui`` extra
GUI_MODULES = ("PySide6", "shiboken6", "qasync")
GUI_MISSING = (
    "oxmem-gui: error: the inspector needs PySide6 and qasync, which this install left out: "
    "pip install 'oxmem-gui[gui]' (the command line, oxmem, works without them)"
)


def main() -> int:
    try:
        from .ui.app import main as inspector
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in GUI_MODULES:
            raise
        print(GUI_MISSING, file=sys.stderr)
        return 2
    return inspector()


if __name__ == "__main__":
    sys.exit(main())
