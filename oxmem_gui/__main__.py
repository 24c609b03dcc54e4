import sys

from .ui.app import main

sys.exit(main())
