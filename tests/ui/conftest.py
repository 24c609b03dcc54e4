"""Qt tests run offscreen on a qasync loop, with the dialogs answered by the test."""

from __future__ import annotations

import asyncio
import os
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
import qasync  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402

from oxmem_gui.core import MemoryStore  # noqa: E402
from oxmem_gui.core.demo import fill_demo  # noqa: E402
from oxmem_gui.core.retrieval.judgments import JudgmentStore  # noqa: E402
from oxmem_gui.ui.context import StoreContext  # noqa: E402
from oxmem_gui.ui.main_window import MainWindow  # noqa: E402


class FakeDialogs:
    """Records what the GUI asked and answers from queues the test fills."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.infos: list[str] = []
        self.confirms: list[str] = []
        self.confirm_answer = True
        self.unsaved_answers: list[str] = []
        self.unsaved_asked: list[str] = []
        self.texts: list[str | None] = []
        self.files: list = []
        self.folders: list[str] = []  # where each open dialog started
        self.conflicts: list[dict] = []
        self.conflict_answers: list[str] = []
        self.secrets: list[str | None] = []
        self.reports: list[tuple[str, str]] = []
        self.report_actions: list[str | None] = []
        self.report_answer = False
        self.tables: list[tuple[str, str, tuple, list[tuple]]] = []
        self.backup_lists: list[list] = []
        self.backup_answers: list = []
        self.compared: list = []  # the diffs File ▸ Compare with Backup… showed
        self.memory_lists: list[list[tuple[str, str]]] = []  # what each Why not…? picker offered
        self.memory_answers: list[str | None] = []
        self.remote_asked: list[tuple[str, str]] = []  # the URL and variable each Open Remote… dialog started with
        self.remote_answers: list = []

    def error(self, message: str) -> None:
        self.errors.append(message)

    def remote(self, url: str, variable: str):
        self.remote_asked.append((url, variable))
        return self.remote_answers.pop(0) if self.remote_answers else None

    def pick_memory(self, items) -> str | None:
        self.memory_lists.append(list(items))
        return self.memory_answers.pop(0) if self.memory_answers else None

    def info(self, message: str) -> None:
        self.infos.append(message)

    def confirm(self, title: str, text: str, action: str = "Delete") -> bool:
        self.confirms.append(text)
        return self.confirm_answer

    def unsaved(self, what: str) -> str:
        self.unsaved_asked.append(what)
        return self.unsaved_answers.pop(0) if self.unsaved_answers else "discard"

    def conflict(self, title: str, message: str, theirs: str, mine: str, choices) -> str:
        self.conflicts.append(
            {"title": title, "message": message, "theirs": theirs, "mine": mine, "choices": [k for k, _ in choices]}
        )
        return self.conflict_answers.pop(0) if self.conflict_answers else "cancel"

    def text(self, title: str, label: str, value: str = "") -> str | None:
        return self.texts.pop(0)

    def secret(self, title: str, label: str) -> str | None:
        return self.secrets.pop(0) if self.secrets else None

    def report(self, title: str, text: str, action: str | None = None) -> bool:
        self.reports.append((title, text))
        self.report_actions.append(action)
        return bool(action) and self.report_answer

    def table(self, title: str, heading: str, columns, rows, action: str | None = None) -> bool:
        self.tables.append((title, heading, tuple(columns), [tuple(r) for r in rows]))
        self.report_actions.append(action)
        return bool(action) and self.report_answer

    def backups(self, backups, folder: str, current, restore_refusal):
        self.backup_lists.append([b.path.name for b in backups])
        return self.backup_answers.pop(0) if self.backup_answers else None

    def compare(self, diff) -> None:
        self.compared.append(diff)

    def open_file(self, title: str, filters: str, folder: str = ""):
        self.folders.append(folder)
        return self.files.pop(0)

    def save_file(self, title: str, filters: str, suggested: str = "", confirm_overwrite: bool = True):
        return self.files.pop(0)


@pytest.fixture(autouse=True)
def backups_in_tmp(tmp_path, monkeypatch):
    """Backups taken by enabling editing go to the test's folder, never the user's."""
    monkeypatch.setattr("oxmem_gui.ui.context.backups_dir", lambda: tmp_path / "backups")
    return tmp_path / "backups"


@pytest.fixture
def qloop(qapp):
    loop = qasync.QEventLoop(qapp, already_running=False)
    asyncio.set_event_loop(loop)
    yield loop
    loop.close()
    asyncio.set_event_loop(None)


#: the instant the windows' demo store is filled at (its schedules' runs played up to it, its notes aged from it):
#: the tests' clock, never the machine's, so a test's calendar and lists are the same on any day
DEMO_NOW = datetime(2037, 11, 23, 12, 0, tzinfo=timezone.utc)


async def write_demo(path: Path) -> None:
    """The demo store at ``path``, filled as of :data:`DEMO_NOW`."""
    store = await MemoryStore.open(path, embedding="deterministic")
    await fill_demo(store, now=DEMO_NOW)
    await store.aclose()


@pytest.fixture
def make_window(qtbot, qloop, tmp_path):
    """``make_window(read_only=False)``: a main window on a fresh demo store; returns ``(window, ctx, dialogs)``."""
    made = []

    def make(read_only: bool = False):
        path = tmp_path / "demo.db"

        async def setup():
            if not path.exists():
                await write_demo(path)
            ctx = StoreContext()
            dialogs = FakeDialogs()
            judgments = JudgmentStore(tmp_path / "inspector.db")
            window = MainWindow(
                ctx, QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat), dialogs, judgments
            )
            qtbot.addWidget(window)
            await ctx.open(path, read_only=read_only, embedding="deterministic")
            await ctx.wait_idle()
            made.append(ctx)
            return window, ctx, dialogs

        return qloop.run_until_complete(setup())

    yield make
    for ctx in made:
        qloop.run_until_complete(ctx.close())


@pytest.fixture
def alone(qtbot, qloop, tmp_path):
    """``alone(make_panel, read_only=True)``: a panel built by ``make_panel(ctx, dialogs)`` with no main window, on
    a fresh demo store; returns ``(panel, ctx, dialogs)``."""
    made = []

    def build(make_panel, read_only: bool = True):
        path = tmp_path / "demo.db"
        if not path.exists():
            qloop.run_until_complete(write_demo(path))
        ctx, dialogs = StoreContext(), FakeDialogs()
        panel = make_panel(ctx, dialogs)
        qtbot.addWidget(panel)
        qloop.run_until_complete(ctx.open(path, read_only=read_only, embedding="deterministic"))
        made.append(ctx)
        settle(qloop, ctx)
        return panel, ctx, dialogs

    yield build
    for ctx in made:
        qloop.run_until_complete(ctx.close())


def settle(qloop, ctx) -> None:
    """Let every pending operation (and what it starts) finish."""
    qloop.run_until_complete(ctx.wait_idle())
