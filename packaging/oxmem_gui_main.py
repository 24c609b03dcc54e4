"""The frozen app's entry point: ``oxmem-gui`` as PyInstaller runs it (``packaging/oxmem-gui.spec``)."""

import sys

from oxmem_gui.ui.app import main

if __name__ == "__main__":
    sys.exit(main())
