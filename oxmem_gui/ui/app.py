"""``oxmem-gui [DB] [--demo] [--size WxH] [--screenshot PATH [--panel NAME]]``: the inspector on a qasync event
loop. What it prints or shows about an error before its window's own reporter takes over — a usage error, the
store that could not be opened, an uncaught exception's traceback — has every secret hidden
(:mod:`..core.redaction`)."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtWidgets import QApplication

from ..core.api import KEY_ENV, TOKEN_ENV, OxmemError, default_db_path, excepthook, redact, stderr_redacted, token_from
from ..logs import setup_logging
from .context import StoreContext
from .crash import CrashReporter
from .main_window import PANELS, MainWindow
from .resources import icon


def window_size(text: str) -> tuple[int, int]:
    """``1024x640`` → ``(1024, 640)``; argparse's type for ``--size``."""
    match = re.fullmatch(r"\s*(\d{2,5})\s*[xX×]\s*(\d{2,5})\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size like 1024x640")
    return int(match[1]), int(match[2])


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="oxmem-gui", description="Inspect and fix an AI agent's memory store.")
    parser.add_argument(
        "db", nargs="?", help="store file (default: $OXMEM_DB; with neither, a start page to choose one from)"
    )
    parser.add_argument("--demo", action="store_true", help="open a fresh demo store (editing enabled)")
    parser.add_argument(
        "--remote", metavar="URL", help="open an agent's memory on a libSQL / Turso server as a read-only snapshot"
    )
    parser.add_argument(
        "--auth-token-env",
        metavar="VAR",
        help=f"the environment variable holding --remote's auth token (default: ${TOKEN_ENV} when it is set)",
    )
    parser.add_argument("--screenshot", metavar="PATH", help="render the window to a PNG and exit")
    parser.add_argument("--size", type=window_size, metavar="WxH", help="the window's size, e.g. 1024x640")
    parser.add_argument("--panel", choices=PANELS, help="the panel to show first")
    parser.add_argument("--embedding", choices=("auto", "deterministic", "semantic"), default="auto")
    parser.add_argument("--session", help="with --query: search this session at start")
    parser.add_argument("--query", help="a query to run in the search panel at start")
    parser.add_argument("--calendar", choices=("month", "week", "agenda"), help="the schedule calendar's view")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log down to debug level, on standard error and in the log file"
    )
    with stderr_redacted():  # (a usage error may repeat an argument)
        return parser.parse_args(argv)


async def open_initial(args: argparse.Namespace, ctx: StoreContext) -> bool:
    """The store of the command line: a fresh demo (read-write, nothing to protect), a remote memory's snapshot,
    or a given file — ``db``, else ``$OXMEM_DB`` — read-only. Nothing named: nothing is opened, and no file is
    created (the start page offers the ways in); returns whether a store was opened. A file named that does not
    exist is not created either: opening it fails (:class:`OxmemError`)."""
    if args.demo:
        await ctx.open_demo(args.embedding)
        return True
    if args.remote is not None:
        await ctx.open_remote(args.remote, token_from(args.auth_token_env), embedding=args.embedding)
        return True
    if args.db:
        path = Path(args.db).expanduser()
    elif os.environ.get("OXMEM_DB"):
        path = default_db_path()
    else:
        return False
    await ctx.open(path, read_only=True, embedding=args.embedding, key=os.environ.get(KEY_ENV) or None)
    return True


async def start(args: argparse.Namespace, ctx: StoreContext, window: MainWindow) -> bool:
    """Open the command line's store; with none named, or when it fails (saying why), the window shows the start
    page with the other ways in (a file, the demo, a new store, the agents' files found on this machine, a recent
    one) instead of empty panels. Returns whether a store is open."""
    try:
        opened = await open_initial(args, ctx)
    except OxmemError as exc:
        window.show_start(redact(str(exc)))
        return False
    if not opened:
        window.show_start()
    return opened


async def run_window(args: argparse.Namespace, ctx: StoreContext, window: MainWindow) -> int:
    if args.screenshot:
        try:
            opened = await open_initial(args, ctx)
        except OxmemError as exc:
            print(f"oxmem-gui: error: {redact(str(exc))}", file=sys.stderr)
            return 2
        if not opened:
            window.show_start()  # nothing named: the picture is of the start page
    else:
        opened = await start(args, ctx, window)
    if args.panel:
        window.show_panel(args.panel)
    if args.calendar:
        window.schedules.show_view(("month", "week", "agenda").index(args.calendar))
    if args.query and args.session and opened:
        await ctx.wait_idle()
        window.show_panel("search")
        window.search.controls.session.setCurrentText(args.session)
        window.search.controls.query.setText(args.query)
        window.search.search()
    if args.size:
        window.resize(*args.size)
    if args.screenshot:
        await ctx.wait_idle()
        on_sessions = args.panel == "sessions" or (args.panel is None and window.current_panel() == "sessions")
        if opened and on_sessions:
            window.sessions.sessions_view.selectRow(0)
            await ctx.wait_idle()
            window.sessions.events_view.selectRow(2)
        if opened and window.current_panel() == "notes" and window.notes.model.rowCount():
            window.notes.list_pane.view.setCurrentIndex(window.notes.model.index(1, 0))
        QApplication.processEvents()
        await asyncio.sleep(0.05)
        window.grab().save(args.screenshot)
        await ctx.close()
        return 0
    closed = asyncio.get_running_loop().create_future()
    QApplication.instance().lastWindowClosed.connect(lambda: closed.done() or closed.set_result(None))
    await closed
    await ctx.close()
    return 0


def no_display() -> bool:
    """On Linux, no display to open a window on and no Qt platform chosen (Qt would abort, blaming a missing
    xcb library)."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return False
    return not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def main(argv: Sequence[str] | None = None) -> int:
    import qasync

    sys.excepthook = excepthook  # (the window's reporter replaces it while the window runs)
    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    if no_display() and not QApplication.instance():
        if not args.screenshot:
            print(
                "oxmem-gui: error: no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set): run "
                "it in a desktop session, or add --screenshot PATH to save a picture of the window",
                file=sys.stderr,
            )
            return 2
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # a picture needs no display
    setup_logging("oxmem-gui", args.verbose)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("oxmem-gui")
    app.setOrganizationName("oxmem")
    app.setWindowIcon(icon("oxmem"))
    app.setDesktopFileName("io.github.oxmem.oxmem_gui")  # the menu entry's name (packaging/), for Wayland
    ctx = StoreContext()
    window = MainWindow(ctx)
    window.show()
    crashes = CrashReporter(window.dialogs)

    async def run() -> int:
        crashes.install(asyncio.get_running_loop())
        try:
            return await run_window(args, ctx, window)
        finally:
            crashes.uninstall()

    return qasync.run(run())
