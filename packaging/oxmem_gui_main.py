"""The frozen app's entry point: ``oxmem-gui`` as PyInstaller runs it (``packaging/oxmem-gui.spec``)."""

import sys

from oxmem_gui.core.libsql_writer import serve_if_asked
from oxmem_gui.ui.app import main

if __name__ == "__main__":
    serve_if_asked()  # started as the libSQL writer of a newer Oxydra file (no `python -m` in a bundle)
    sys.exit(main())
