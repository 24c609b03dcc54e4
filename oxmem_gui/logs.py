"""Where oxmem's programs log, and how much.

Both programs append to ``oxmem.log`` in the user's log folder (``~/.local/state/oxmem/log`` on Linux;
``$OXMEM_LOG_DIR`` overrides it): warnings and errors always, with their tracebacks, and everything down to debug
with ``--verbose``, which also prints it on standard error. The file rotates at 1 MiB, keeping three old ones. A
folder that cannot be written costs the file, never the program. No secret reaches either (:mod:`.core.redaction`).
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

from .core.api import RedactingFormatter, log_dir

LOG_NAME = "oxmem.log"
MAX_BYTES = 1 << 20
BACKUPS = 3
FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"

#: the handlers :func:`setup_logging` installed (replaced when it is called again), and the file they write
_installed: list[logging.Handler] = []
_file: list[Path] = []


def log_file() -> Path | None:
    """The file :func:`setup_logging` logs to, if it was called and the folder could be written."""
    return _file[0] if _file else None


def setup_logging(program: str, verbose: bool = False) -> Path | None:
    """Log to the file (and, with ``verbose``, to standard error at debug level); returns the file's path, or
    None when its folder cannot be written. Calling it again replaces what an earlier call installed."""
    root = logging.getLogger()
    for handler in _installed:
        root.removeHandler(handler)
        handler.close()
    _installed.clear()
    _file.clear()
    path: Path | None = log_dir() / LOG_NAME
    level = logging.DEBUG if verbose else logging.WARNING
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        to_file: logging.Handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", delay=True
        )
        to_file.setFormatter(RedactingFormatter(FORMAT.replace("%(process)d", f"{program}[%(process)d]")))
        to_file.setLevel(level)
        _installed.append(to_file)
        _file.append(path)
    except OSError:
        path = None
    if verbose:
        to_stderr = logging.StreamHandler(sys.stderr)
        to_stderr.setFormatter(RedactingFormatter(f"{program}: %(levelname)s %(name)s: %(message)s"))
        to_stderr.setLevel(logging.DEBUG)
        _installed.append(to_stderr)
    for handler in _installed:
        root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger(__name__).debug("logging to %s", path)
    return path
