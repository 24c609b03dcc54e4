"""Entry point of ``oxmem-gui`` and ``python -m oxmem_gui``."""

from __future__ import annotations

import sys

from .ui.app import main

if __name__ == "__main__":
    sys.exit(main())
