"""``oxmem-gui [DB] [--demo] [--screenshot PATH]``: the desktop inspector over the async core on qasync.

This first window lists the store's sessions; the session browser, note editor, search panel and schedule
calendar grow from here. The GUI thread only awaits the core: all SQL runs on the store's worker thread.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtWidgets import (
    QApplication,
    QHeaderView,
    QLabel,
    QMainWindow,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from . import __version__
from .core import MemoryStore, OxmemError
from .core.demo import fill_demo
from .paths import default_db_path


class MainWindow(QMainWindow):
    """The inspector's window: a header naming the store and the sessions table."""

    HEADERS = ("session", "updated", "last seq", "events")

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle(f"oxmem {__version__}")
        self.header = QLabel("Opening…")
        self.table = QTableWidget(0, len(self.HEADERS))
        self.table.setHorizontalHeaderLabels(self.HEADERS)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addWidget(self.header)
        layout.addWidget(self.table)
        self.setCentralWidget(body)
        self.statusBar().showMessage("Opening…")
        self.resize(860, 420)

    async def load(self, store: MemoryStore) -> None:
        sessions = await store.list_sessions()
        mode = "read-only" if store.read_only else "editing"
        self.header.setText(f"<b>{store.path}</b> — {len(sessions)} sessions ({mode})")
        self.statusBar().showMessage(
            f"Embeddings: {store.backend.model_name}" + (f" — {store.backend_notice}" if store.backend_notice else "")
        )
        self.table.setRowCount(len(sessions))
        for row, s in enumerate(sessions):
            for col, value in enumerate((s.session_id, s.updated_at, s.last_sequence, s.event_count)):
                self.table.setItem(row, col, QTableWidgetItem("" if value is None else str(value)))


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="oxmem-gui", description="Inspect an AI agent's memory store.")
    parser.add_argument("db", nargs="?", help="store file (default: the user data folder's memory.db)")
    parser.add_argument("--demo", action="store_true", help="open a fresh demo store")
    parser.add_argument("--screenshot", metavar="PATH", help="render the window to a PNG and exit")
    return parser.parse_args(argv)


async def open_store(args: argparse.Namespace) -> MemoryStore:
    if args.demo:
        path = Path(tempfile.mkdtemp(prefix="oxmem-demo-")) / "demo.db"
        store = await MemoryStore.open(path)
        await fill_demo(store)
        return store
    path = Path(args.db) if args.db else default_db_path()
    # The default store is ours: create it if missing. Any other file opens read-only.
    return await MemoryStore.open(path, read_only=bool(args.db))


async def run_window(args: argparse.Namespace, window: MainWindow) -> int:
    try:
        store = await open_store(args)
    except OxmemError as exc:
        if args.screenshot:
            print(f"oxmem-gui: error: {exc}", file=sys.stderr)
        else:
            QMessageBox.critical(window, "Cannot open the store", str(exc))
        return 2
    async with store:
        await window.load(store)
        if args.screenshot:
            QApplication.processEvents()
            window.grab().save(args.screenshot)
            return 0
        closed = asyncio.get_running_loop().create_future()
        QApplication.instance().lastWindowClosed.connect(lambda: closed.done() or closed.set_result(None))
        await closed
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    import qasync

    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("oxmem")
    window = MainWindow()
    window.show()
    return qasync.run(run_window(args, window))


if __name__ == "__main__":
    sys.exit(main())
