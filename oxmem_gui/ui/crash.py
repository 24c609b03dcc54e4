"""What happens to an error nobody expected: it goes to the log file with its traceback, and the person sees one
dialog saying what went wrong and where the details are — from a Qt slot, the asyncio loop or another thread."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from types import TracebackType
from typing import Any

from PySide6.QtCore import QObject, Signal

from ..core.api import redact
from ..logs import log_file
from .dialogs import Dialogs

log = logging.getLogger("oxmem_gui.crash")
#: the same message again within this many seconds shows no second dialog
REPEAT_S = 5.0


def unexpected(message: str) -> str:
    """The dialog's text for an unexpected error: the error, and where its details were written."""
    path = log_file()
    where = f"\n\nThe details are in {path}." if path else ""
    return f"Unexpected error: {message}{where}"


class CrashReporter(QObject):
    """``install()`` routes ``sys.excepthook``, ``threading.excepthook`` and the running asyncio loop's exception
    handler here; ``uninstall()`` puts the previous hooks back. The dialog is always shown on the GUI thread."""

    reported = Signal(str)

    def __init__(self, dialogs: Dialogs) -> None:
        super().__init__()
        self.dialogs = dialogs
        self._last = ("", 0.0)
        self._previous: tuple[Any, Any] | None = None
        self.reported.connect(self._show)

    def install(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._previous = (sys.excepthook, threading.excepthook)
        sys.excepthook = self.excepthook
        threading.excepthook = lambda args: self.excepthook(args.exc_type, args.exc_value, args.exc_traceback)
        if loop is not None:
            loop.set_exception_handler(self._loop_error)

    def uninstall(self) -> None:
        if self._previous is not None:
            sys.excepthook, threading.excepthook = self._previous
            self._previous = None

    def excepthook(
        self, kind: type[BaseException], error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, error or kind(), traceback)
            return
        log.critical("unexpected error", exc_info=(kind, error, traceback))
        self.reported.emit(unexpected(redact(str(error)) or kind.__name__))

    def _loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if error is None:
            log.error("asyncio: %s", context.get("message"))
            return
        self.excepthook(type(error), error, error.__traceback__)

    def _show(self, message: str) -> None:
        now = time.monotonic()
        if message == self._last[0] and now - self._last[1] < REPEAT_S:
            return
        self._last = (message, now)
        self.dialogs.error(message)
