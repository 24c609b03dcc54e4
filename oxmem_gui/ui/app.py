"""``oxmem-gui [DB] [--demo] [--size WxH] [--screenshot PATH [--panel NAME]]``: the inspector on a qasync event
loop."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtWidgets import QApplication

from ..core.api import KEY_ENV, TOKEN_ENV, MemoryStore, OxmemError, default_db_path, token_from
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
    parser.add_argument("db", nargs="?", help="store file (default: $OXMEM_DB or the user data folder's memory.db)")
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
    return parser.parse_args(argv)


async def open_initial(args: argparse.Namespace, ctx: StoreContext) -> None:
    """The store of the command line: a fresh demo (read-write, nothing to protect), a given file (read-only),
    or the default store (created if missing, then read-only like any other)."""
    if args.demo:
        await ctx.open_demo(args.embedding)
        return
    if args.remote is not None:
        await ctx.open_remote(args.remote, token_from(args.auth_token_env), embedding=args.embedding)
        return
    path = Path(args.db).expanduser() if args.db else default_db_path()
    if not args.db and not path.exists():
        await (await MemoryStore.open(path, embedding="deterministic")).aclose()
    await ctx.open(path, read_only=True, embedding=args.embedding, key=os.environ.get(KEY_ENV) or None)


async def start(args: argparse.Namespace, ctx: StoreContext, window: MainWindow) -> bool:
    """Open the command line's store; when that fails, the window says why and offers other ways in (a file, a
    recent one, a demo store) instead of showing empty panels. Returns whether a store is open."""
    try:
        await open_initial(args, ctx)
    except OxmemError as exc:
        window.show_start(str(exc))
        return False
    return True


async def run_window(args: argparse.Namespace, ctx: StoreContext, window: MainWindow) -> int:
    if args.screenshot:
        try:
            await open_initial(args, ctx)
        except OxmemError as exc:
            print(f"oxmem-gui: error: {exc}", file=sys.stderr)
            return 2
    else:
        await start(args, ctx, window)
    if args.panel:
        window.show_panel(args.panel)
    if args.calendar:
        window.schedules.show_view(("month", "week", "agenda").index(args.calendar))
    if args.query and args.session:
        await ctx.wait_idle()
        window.show_panel("search")
        window.search.controls.session.setCurrentText(args.session)
        window.search.controls.query.setText(args.query)
        window.search.search()
    if args.size:
        window.resize(*args.size)
    if args.screenshot:
        await ctx.wait_idle()
        if args.panel == "sessions" or (args.panel is None and window.current_panel() == "sessions"):
            window.sessions.sessions_view.selectRow(0)
            await ctx.wait_idle()
            window.sessions.events_view.selectRow(2)
        if window.current_panel() == "notes" and window.notes.model.rowCount():
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
