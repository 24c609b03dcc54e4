"""The main window as people use it: fits a laptop screen, keeps the file and model in view, one backup per
editing session and a way back to it, recent files that exist, drop to open, a shortcut sheet, a start page."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QImage, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from oxmem_gui.core import MemoryStore
from oxmem_gui.core.known_places import human_size
from oxmem_gui.core.retrieval.persisted import MARKER, MARKER_TEXT
from oxmem_gui.ui.app import start
from oxmem_gui.ui.main_window import PANELS
from oxmem_gui.ui.status_bar import GAP
from oxmem_gui.ui.table_dialog import WIDEST, TableDialog
from tests.ui.conftest import settle
from tests.ui.layout import unreachable

ROOT = Path(__file__).resolve().parents[2]
#: every panel's picture at 1024×640, kept for a person to look at after the tests
SHOTS = ROOT / "build" / "screenshots"


def test_every_panel_fits_1024x640_with_every_control_reachable(make_window, qloop):
    window, ctx, _ = make_window()
    window.show()
    window.resize(1024, 640)
    SHOTS.mkdir(parents=True, exist_ok=True)
    for name in PANELS:
        window.show_panel(name)
        settle(qloop, ctx)
        views = range(3) if name == "schedules" else [None]
        for view in views:
            if view is not None:
                window.schedules.show_view(view)
                settle(qloop, ctx)
            window.resize(1024, 640)
            assert window.minimumSizeHint().width() <= 1024 and window.minimumSizeHint().height() <= 640
            assert window.size().toTuple() == (1024, 640), name
            assert unreachable(window) == [], (name, view)
            picture = window.grab()
            assert picture.size().toTuple() == (1024, 640)
            suffix = "" if view is None else f"-{('month', 'week', 'agenda')[view]}"
            picture.save(str(SHOTS / f"{name}{suffix}-1024x640.png"))


def test_screenshot_takes_a_size_and_leaves_no_demo_store(tmp_path):
    out = tmp_path / "notes.png"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "TMPDIR": str(scratch)}
    cmd = [sys.executable, "-m", "oxmem_gui", "--demo", "--embedding", "deterministic", "--panel", "notes"]
    done = subprocess.run([*cmd, "--size", "1024x640", "--screenshot", str(out)], env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert QImage(str(out)).size().toTuple() == (1024, 640)
    assert list(scratch.iterdir()) == []  # the demo store's folder went with the window
    bad = subprocess.run([*cmd, "--size", "wide", "--screenshot", str(out)], env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and "'wide' is not a size like 1024x640" in bad.stderr


def test_without_a_display_it_says_so_and_a_picture_still_works(tmp_path):
    """No DISPLAY, WAYLAND_DISPLAY or QT_QPA_PLATFORM (a server, a container, the wheel run over ssh): one line and
    exit 2 instead of Qt's abort (rc 134) blaming libxcb-cursor0; with --screenshot the window renders offscreen."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["TMPDIR"] = str(tmp_path)
    cmd = [sys.executable, "-m", "oxmem_gui", "--demo", "--embedding", "deterministic"]
    window = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert (window.returncode, window.stdout) == (2, "")
    assert window.stderr == (
        "oxmem-gui: error: no display to open a window on (neither DISPLAY nor WAYLAND_DISPLAY is set): run it in a "
        "desktop session, or add --screenshot PATH to save a picture of the window\n"
    )
    out = tmp_path / "demo.png"
    picture = subprocess.run([*cmd, "--screenshot", str(out)], env=env, capture_output=True, text=True, timeout=120)
    assert picture.returncode == 0, picture.stderr
    assert QImage(str(out)).width() > 600


def test_status_bar_keeps_path_and_model_beside_messages(make_window, qloop):
    window, ctx, _ = make_window(read_only=True)
    window.statusBar().showMessage("Imported 3 events")
    assert "demo.db" in window.path_label.text() and "deterministic" in window.path_label.text()
    tip = window.path_label.toolTip()
    assert f"File: {ctx.store.path}" in tip and "Embeddings: " in tip and "Backup" not in tip
    window.enable_editing()
    settle(qloop, ctx)
    assert f"Backup taken before editing: {ctx.backup_path}" in window.path_label.toolTip()
    assert str(ctx.backup_path) in window.mode_label.toolTip()


def test_a_long_status_message_is_cut_short_of_the_file_label_and_whole_in_the_tooltip(make_window, qloop):
    window, ctx, _ = make_window(read_only=True)
    window.resize(1024, 640)
    window.show()
    settle(qloop, ctx)
    bar = window.statusBar()
    message = "Imported 1,234 events from conversation-export-2037-11-24-final.jsonl — 3 lines skipped (not JSON)"
    bar.showMessage(message)
    bar.grab()
    shown, rect = bar.painted
    assert shown.endswith("…") and message.startswith(shown[:-1]) and len(shown) > 20
    assert rect.right() + GAP <= window.path_label.x()  # a gap before the file label: never run into it
    assert bar.toolTip() == message
    bar.showMessage("Imported 3 events")
    bar.grab()
    assert bar.painted[0] == "Imported 3 events"


def test_one_backup_per_editing_session(make_window, qloop, backups_in_tmp):
    window, ctx, dialogs = make_window(read_only=True)
    window.enable_editing()
    window.enable_editing()  # pressed twice while the first backup runs
    settle(qloop, ctx)
    assert not ctx.read_only and len(list(backups_in_tmp.iterdir())) == 1
    first = ctx.backup_path
    window.open_path(str(ctx.store.path))  # read-only again, then editing again: the same backup
    settle(qloop, ctx)
    assert ctx.read_only and ctx.backup_path == first
    window.enable_editing()
    settle(qloop, ctx)
    assert not ctx.read_only and ctx.backup_path == first and list(backups_in_tmp.iterdir()) == [first]
    assert dialogs.errors == []


def note_count(qloop, ctx) -> int:
    return len(qloop.run_until_complete(ctx.store.list_notes("alice")))


def test_backups_open_and_restore(make_window, qloop, backups_in_tmp):
    window, ctx, dialogs = make_window(read_only=True)
    before = note_count(qloop, ctx)
    # read-only: restoring is refused (the dialog shows why), nothing written
    dialogs.backup_answers.append(None)
    window.show_backups()
    settle(qloop, ctx)
    assert dialogs.backup_lists == [[]]
    window.enable_editing()
    settle(qloop, ctx)
    backup = ctx.backup_path
    notes = qloop.run_until_complete(ctx.store.list_notes("alice"))
    qloop.run_until_complete(ctx.store.delete_note("alice", notes[0].note_id))
    assert note_count(qloop, ctx) == before - 1

    listed = qloop.run_until_complete(ctx.backups())
    assert [b.path for b in listed] == [backup] and listed[0].source == "demo.db"
    dialogs.backup_answers.append(("restore", listed[0]))
    window.show_backups()
    settle(qloop, ctx)
    assert dialogs.confirms and "Replace everything in demo.db" in dialogs.confirms[-1]
    assert note_count(qloop, ctx) == before and not ctx.read_only
    assert len(list(backups_in_tmp.iterdir())) == 2  # what was there before the restore is kept too

    dialogs.backup_answers.append(("open", listed[0]))
    window.show_backups()
    settle(qloop, ctx)
    assert ctx.store.path == backup and ctx.read_only
    assert dialogs.errors == []


def test_open_recent_drops_missing_and_demo_files_and_clears(make_window, qloop, tmp_path):
    window, ctx, _ = make_window(read_only=True)
    demo = Path(tempfile.mkdtemp(prefix="oxmem-demo-")) / "demo.db"
    demo.write_bytes(b"")
    real = str(ctx.store.path)
    window.settings.setValue("recent", [real, str(tmp_path / "gone.db"), str(demo)])
    window._fill_recent()
    texts = [a.text() for a in window.recent_menu.actions() if not a.isSeparator()]
    assert texts == [real, "&Clear Menu"]
    window.clear_recent_action.trigger()
    assert window.recent_files() == [] and not window.clear_recent_action.isEnabled()
    qloop.run_until_complete(ctx.open_demo("deterministic"))
    settle(qloop, ctx)
    assert window.recent_files() == []  # a demo store is not remembered
    demo.unlink()
    demo.parent.rmdir()


def test_demo_store_folder_is_removed_on_close(qloop, tmp_path):
    from oxmem_gui.ui.context import StoreContext

    ctx = StoreContext()
    store = qloop.run_until_complete(ctx.open_demo("deterministic"))
    folder = store.path.parent
    assert folder.name.startswith("oxmem-demo-") and store.path.exists() and not ctx.read_only
    qloop.run_until_complete(ctx.close())
    assert not folder.exists()


def drop(window, path) -> None:
    """``path`` dropped on the window, as a file manager drops it."""
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(
        QPointF(20, 20), Qt.DropAction.CopyAction, data, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    window.dropEvent(event)


def test_dropping_a_file_opens_it(make_window, qloop, tmp_path):
    window, ctx, _ = make_window(read_only=True)
    other = tmp_path / "other.db"
    qloop.run_until_complete(qloop.run_until_complete(MemoryStore.open(other, embedding="deterministic")).aclose())
    drop(window, other)
    settle(qloop, ctx)
    assert ctx.store.path == other and ctx.read_only
    assert window.windowTitle().startswith("other.db")


def test_f1_lists_the_shortcuts(make_window, qloop):
    window, ctx, dialogs = make_window()
    window.show()
    help_action = next(a for a in window.findChildren(type(window.enable_action)) if "Keyboard" in a.text())
    assert help_action.shortcut().toString() == "F1"
    help_action.trigger()
    title, _, columns, rows = dialogs.tables[-1]
    assert (title, columns) == ("Keyboard shortcuts", ("Keys", "What they do"))
    assert ("Ctrl+O", "File ▸ Open…") in rows and ("Ctrl+E", "Edit ▸ Enable Editing") in rows
    assert any(key.startswith("Escape") for key, _ in rows)
    assert any(key.startswith("Ctrl+L on a search hit") for key, _ in rows)


def test_a_table_dialog_fits_a_laptop_window_and_cuts_cells_with_their_tooltips(qtbot):
    long = "x" * 400
    dialog = TableDialog("Keyboard shortcuts", "heading", ("Keys", "What they do"), [("Ctrl+" + long, long)])
    qtbot.addWidget(dialog)
    dialog.show()
    table = dialog.table
    assert table.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
    assert table.columnWidth(0) == WIDEST  # cut, not widened
    assert table.columnWidth(0) + table.columnWidth(1) <= table.viewport().width()  # all in view
    assert table.item(0, 0).toolTip() == "Ctrl+" + long and table.item(0, 1).toolTip() == long


def test_a_failed_open_at_start_shows_the_start_page(make_window, qloop, tmp_path):
    window, ctx, dialogs = make_window(read_only=True)
    qloop.run_until_complete(ctx.close())
    bad = tmp_path / "notes.txt"
    bad.write_text("not a database")
    args = argparse.Namespace(db=str(bad), demo=False, remote=None, embedding="deterministic")
    window.settings.setValue("recent", [str(tmp_path / "demo.db")])
    assert qloop.run_until_complete(start(args, ctx, window)) is False
    assert window.pages.currentWidget() is window.start
    assert "notes.txt" in window.start.message.text() and dialogs.errors == []
    assert [window.start.recent.item(i).text() for i in range(window.start.recent.count())] == [
        str(tmp_path / "demo.db")
    ]
    window.start.demo_button.click()
    settle(qloop, ctx)
    assert window.pages.currentIndex() == 0 and ctx.store.path.name == "demo.db" and not ctx.read_only
    assert ctx.is_demo(ctx.store.path)


def tab_reachable(window) -> list[str]:
    """The controls of the shown panel that Tab, pressed over and over from the navigation list, never reaches
    (of a group of exclusive buttons, Tab reaches the checked one and the arrows the others, as with radios)."""
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QAbstractButton, QApplication, QWidget

    def radio_off(w: QWidget) -> bool:
        exclusive = isinstance(w, QAbstractButton) and (w.autoExclusive() or (w.group() and w.group().exclusive()))
        return exclusive and not w.isChecked()

    panel = window.stack.currentWidget()
    wanted = {
        w
        for w in panel.findChildren(QWidget)
        if w.isVisible()
        and w.isEnabled()
        and w.focusPolicy() & Qt.FocusPolicy.TabFocus
        and w.focusProxy() is None
        and not radio_off(w)
    }
    window.nav.setFocus()
    seen = set()
    for _ in range(4 * len(wanted) + 20):
        QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        seen.add(QApplication.focusWidget())
    return sorted(f"{type(w).__name__} {getattr(w, 'text', lambda: '')()!r}" for w in wanted - seen)


def test_every_control_of_every_panel_is_reached_by_tab(make_window, qloop, qtbot):
    window, ctx, _ = make_window()
    window.show()
    window.resize(1024, 640)
    window.activateWindow()
    qtbot.waitExposed(window)
    for name in PANELS:
        window.show_panel(name)
        settle(qloop, ctx)
        assert tab_reachable(window) == [], name
    # the calendar's view buttons: Tab reaches the checked one, the arrows the others, Space switches the view
    from PySide6.QtTest import QTest

    buttons = window.schedules.calendar.view_buttons
    buttons.button(0).setFocus()
    QTest.keyClick(buttons.button(0), Qt.Key.Key_Right)
    assert buttons.button(1).hasFocus()
    QTest.keyClick(buttons.button(1), Qt.Key.Key_Space)
    assert buttons.checkedId() == 1 and window.schedules.calendar.views.currentIndex() == 1


def test_tabbing_into_a_list_selects_what_the_panes_then_show(make_window, qloop, qtbot):
    from PySide6.QtTest import QTest

    window, ctx, _ = make_window()
    window.show()
    window.activateWindow()
    qtbot.waitExposed(window)
    sessions = window.sessions
    assert not sessions.sessions_view.currentIndex().isValid() and sessions.header.text() == "No session selected"
    sessions.filter.setFocus()
    QTest.keyClick(sessions.filter, Qt.Key.Key_Tab)
    settle(qloop, ctx)
    assert sessions.sessions_view.hasFocus()
    selected = sessions.sessions_view.selectionModel().selectedRows()
    first = sessions.sessions.rows[0].session_id
    assert [i.row() for i in selected] == [0] and sessions.header.text().startswith(f"Session {first} ·")


def test_escape_closes_the_backups_dialog_with_nothing_chosen(qtbot, tmp_path):
    from datetime import datetime

    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QDialog

    from oxmem_gui.core.store.backups import Backup
    from oxmem_gui.ui.backups_dialog import BackupsDialog

    backup = Backup(tmp_path / "memory-20371123-093005.db", "memory.db", datetime(2037, 11, 23, 9, 30, 5), 2048)
    dialog = BackupsDialog([backup], str(tmp_path), "memory.db", "Read-only: choose Edit ▸ Enable Editing")
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.table.item(0, 0).text() == "2037-11-23 09:30:05" and dialog.table.item(0, 2).text() == "2 KiB"
    assert not dialog.restore_button.isEnabled() and dialog.restore_button.toolTip().startswith("Read-only")
    assert dialog.open_button.isEnabled()
    QTest.keyClick(dialog.table, Qt.Key.Key_Escape)
    assert dialog.result() == QDialog.DialogCode.Rejected and not dialog.isVisible() and dialog.action is None


def test_the_first_window_and_a_size_saved_on_a_larger_screen_fit_a_laptop_screen(make_window, qloop, monkeypatch):
    """On a 1024×640 screen the first window used to open at 1200×720, its right side and status bar off-screen:
    it now fits the screen's available area with room for the window manager's frame, and so does a size saved
    on a larger screen."""
    from PySide6.QtCore import QRect
    from PySide6.QtGui import QScreen

    monkeypatch.setattr(QScreen, "availableGeometry", lambda self: QRect(0, 0, 1024, 640))
    window, ctx, _ = make_window()
    assert window.minimumSizeHint().height() <= 640 - 32
    assert (window.width(), window.height()) == (1024, 640 - 32) and (window.x(), window.y()) == (0, 0)
    window.resize(1600, 1000)  # as saved on a larger screen (restoreGeometry itself keeps it on the real screen)
    window.move(300, 200)
    window._fit_screen()
    assert (window.width(), window.height()) == (1024, 608) and (window.x(), window.y()) == (0, 0)


def test_the_start_page_shows_the_whole_reason_a_file_did_not_open(make_window, qloop, tmp_path):
    """The reason was clipped to one line in a ~160 px label, and stayed clipped when the window grew: it now
    takes the page's width and as many lines as it needs, a long path broken anywhere (the text, as copied, is
    unchanged), at 1024×640 and wider."""
    window, ctx, dialogs = make_window(read_only=True)
    qloop.run_until_complete(ctx.close())
    deep = tmp_path / ("a-rather-long-folder-name-" * 6) / "agent-memory-file-with-a-long-name.txt"
    deep.parent.mkdir(parents=True)
    deep.write_text("not a database")
    args = argparse.Namespace(db=str(deep), demo=False, remote=None, embedding="deterministic")
    assert qloop.run_until_complete(start(args, ctx, window)) is False
    reason = window.start.message
    for width in (1024, 1400):
        window.resize(width, 640)
        window.show()
        QApplication.processEvents()
        assert str(deep) in reason.text()
        assert reason.width() >= window.start.width() - 2 * 48 - 2  # the page's width, less its margins
        assert reason.document().size().height() <= reason.height()  # every line shown
        assert reason.document().size().width() <= reason.viewport().width() + 1  # nothing runs off the side
        assert window.minimumSizeHint().width() <= 1024
    assert reason.height() >= 2 * reason.fontMetrics().lineSpacing()  # the path took more than one line
    assert dialogs.errors == []


def test_the_list_or_table_with_the_keyboard_focus_is_framed(make_window, qloop):
    """Focused and unfocused tables looked the same: the one with the focus is now framed in the highlight colour
    (drawn over its own frame, so nothing moves), the others keep the style's quiet frame."""
    window, ctx, _ = make_window()
    window.resize(1024, 640)
    window.show()
    window.activateWindow()
    settle(qloop, ctx)
    view = window.sessions.sessions_view
    highlight = view.palette().color(QPalette.ColorRole.Highlight)

    def edge(widget):
        return widget.grab().toImage().pixelColor(widget.width() // 2, 0)

    window.nav.setFocus()
    QApplication.processEvents()
    unfocused = edge(view)
    view.setFocus()
    QApplication.processEvents()
    assert view.hasFocus() and edge(view) == highlight and unfocused != highlight
    assert edge(window.nav) != highlight


def test_the_open_dialog_starts_in_the_open_files_folder(make_window, qloop, tmp_path):
    """File ▸ Open… started in the working folder: it starts in the open file's folder (with nothing open, the
    most recent file's), and so does Import Events."""
    window, ctx, dialogs = make_window()
    dialogs.files += [None, None]
    window.open_dialog()
    window.import_events()
    assert dialogs.folders == [str(tmp_path), str(tmp_path)]
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "agent.db").write_bytes(b"")
    window.settings.setValue("recent", [str(tmp_path / "elsewhere" / "agent.db")])
    qloop.run_until_complete(ctx.close())
    dialogs.files.append(None)
    window.open_dialog()
    assert dialogs.folders[-1] == str(tmp_path / "elsewhere")


def test_escape_in_a_filter_clears_it_and_keeps_what_was_selected(make_window, qloop, qtbot):
    window, ctx, _ = make_window()
    window.show()
    lisbon = "telegram:alice:lisbon-trip"
    sessions = window.sessions
    assert sessions.select_session(lisbon)
    settle(qloop, ctx)
    sessions.filter.setText("lisbon")
    settle(qloop, ctx)
    sessions.filter.setFocus()
    qtbot.keyClick(sessions.filter, Qt.Key.Key_Escape)
    settle(qloop, ctx)
    assert sessions.filter.text() == "" and sessions.sessions.rowCount() == 6
    assert sessions.selected_session() == lisbon and sessions.header.text().startswith(f"Session {lisbon} ·")

    window.show_panel("notes")
    notes = window.notes
    notes.set_user("alice")
    settle(qloop, ctx)
    notes.list_pane.filter.setText("aisle")
    settle(qloop, ctx)
    notes.list_pane.view.setCurrentIndex(notes.model.index(0, 0))
    settle(qloop, ctx)
    notes.list_pane.filter.setFocus()
    qtbot.keyClick(notes.list_pane.filter, Qt.Key.Key_Escape)
    settle(qloop, ctx)
    (row,) = notes.list_pane.view.selectionModel().selectedRows()
    assert notes.model.rowCount() == 6 and notes.model.notes[row.row()].content.startswith("Alice prefers aisle")
    assert notes.state.current.content.startswith("Alice prefers aisle")

    window.show_panel("schedules")
    schedules = window.schedules
    schedules.list_pane.name_filter.setText("Lisbon")
    settle(qloop, ctx)
    schedules.list_pane.list_view.setCurrentIndex(schedules.list_model.index(0, 0))
    settle(qloop, ctx)
    chosen = schedules.state.selected
    schedules.list_pane.name_filter.setFocus()
    qtbot.keyClick(schedules.list_pane.name_filter, Qt.Key.Key_Escape)
    settle(qloop, ctx)
    (row,) = schedules.list_pane.list_view.selectionModel().selectedRows()
    assert (
        len(schedules.state.schedules) == 7
        and schedules.state.schedules[row.row()].schedule_id == chosen == schedules.state.selected
    )


@pytest.fixture
def first_launch(qtbot, qloop, tmp_path, monkeypatch):
    """A window on a machine of its own (HOME and the working directory in ``tmp_path``, no $OXMEM_DB): nothing
    open yet. Returns ``(home, work, window, ctx, dialogs)``."""
    from PySide6.QtCore import QSettings

    from oxmem_gui.core.retrieval.judgments import JudgmentStore
    from oxmem_gui.ui.context import StoreContext
    from oxmem_gui.ui.main_window import MainWindow
    from tests.ui.conftest import FakeDialogs

    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_DATA_HOME", "OXMEM_DB", "MEMORY_DB", "MEM0_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(work)
    ctx, dialogs = StoreContext(), FakeDialogs()
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(ctx, settings, dialogs, JudgmentStore(tmp_path / "inspector.db"))
    qtbot.addWidget(window)
    yield home, work, window, ctx, dialogs
    qloop.run_until_complete(ctx.close())


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_first_launch_creates_no_file_and_lists_the_agents_file_found_at_its_place(first_launch, qloop, qtbot):
    """``oxmem-gui`` with no file: no store is created (it used to make an empty ``memory.db`` and show empty
    lists); the start page lists the Omega file at Omega's place, and Enter on it opens it read-only."""
    from oxmem_gui.core.api import default_db_path
    from tests.core.formats import fixtures as fx

    home, work, window, ctx, dialogs = first_launch
    omega = fx.make_omega(home / ".omega" / "data" / "memory.db")
    before = files_under(home) + files_under(work)
    args = argparse.Namespace(db=None, demo=False, remote=None, embedding="deterministic")
    window.show()
    window.resize(1024, 640)
    assert qloop.run_until_complete(start(args, ctx, window)) is False
    settle(qloop, ctx)
    assert not default_db_path().exists() and default_db_path().is_relative_to(home)
    assert files_under(home) + files_under(work) == before  # nothing created, nothing left beside the Omega file
    page = window.start
    assert window.pages.currentWidget() is page and ctx.store is None
    assert page.heading.text() == "<h2>Open an agent's memory</h2>"
    assert page.found_paths() == [str(omega)]
    row = page.found.topLevelItem(0)
    assert [row.text(c) for c in range(3)] == ["Omega", f"Omega memory, {human_size(omega.stat().st_size)}", str(omega)]
    assert window.statusBar().currentMessage() == "" and dialogs.errors == []
    assert window.mode_label.isHidden()  # no file, so no "Read-only" to say
    QApplication.processEvents()
    assert unreachable(window) == [] and window.minimumSizeHint().height() <= 640
    SHOTS.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(SHOTS / "start-1024x640.png"))
    page.found.setFocus()
    qtbot.keyClick(page.found, Qt.Key.Key_Return)
    settle(qloop, ctx)
    assert ctx.store is not None and ctx.store.path == omega and ctx.read_only
    assert window.pages.currentIndex() == 0 and window.windowTitle().startswith("memory.db — Omega")
    assert not window.mode_label.isHidden() and window.mode_label.text() == "Read-only"


def test_a_new_empty_store_is_made_only_when_asked_where(first_launch, qloop, tmp_path):
    home, _, window, ctx, dialogs = first_launch
    args = argparse.Namespace(db=None, demo=False, remote=None, embedding="deterministic")
    assert qloop.run_until_complete(start(args, ctx, window)) is False
    settle(qloop, ctx)
    assert window.start.found_paths() == [] and "No agent's memory file" in window.start.found_status.text()
    dialogs.files = [None]
    window.start.new_button.click()  # cancelled: nothing made
    settle(qloop, ctx)
    assert ctx.store is None and files_under(home) == []
    chosen = tmp_path / "mine" / "new.db"
    dialogs.files = [chosen]
    window.start.new_button.click()
    settle(qloop, ctx)
    assert ctx.store.path == chosen and chosen.is_file() and not ctx.read_only and dialogs.errors == []


def test_a_file_dropped_on_the_start_page_opens(first_launch, qloop, tmp_path):
    _, _, window, ctx, dialogs = first_launch
    window.show_start("gone.db does not exist")
    settle(qloop, ctx)
    other = tmp_path / "other.db"
    qloop.run_until_complete(qloop.run_until_complete(MemoryStore.open(other, embedding="deterministic")).aclose())
    assert window.acceptDrops() and not any(w.acceptDrops() for w in window.start.findChildren(QWidget))
    drop(window, other)
    settle(qloop, ctx)
    assert ctx.store.path == other and ctx.read_only and window.pages.currentIndex() == 0


def test_oxmem_db_still_opens_directly_and_a_missing_one_is_not_created(first_launch, qloop, monkeypatch, tmp_path):
    _, _, window, ctx, _ = first_launch
    missing = tmp_path / "missing.db"
    monkeypatch.setenv("OXMEM_DB", str(missing))
    args = argparse.Namespace(db=None, demo=False, remote=None, embedding="deterministic")
    assert qloop.run_until_complete(start(args, ctx, window)) is False
    settle(qloop, ctx)
    assert not missing.exists() and "missing.db" in window.start.message.text()
    assert window.start.heading.text() == "<h2>No memory store is open</h2>"
    qloop.run_until_complete(qloop.run_until_complete(MemoryStore.open(missing, embedding="deterministic")).aclose())
    assert qloop.run_until_complete(start(args, ctx, window)) is True
    assert ctx.store.path == missing and ctx.read_only and window.pages.currentIndex() == 0


def test_a_screenshot_with_no_file_named_pictures_the_start_page_and_creates_nothing(tmp_path):
    from tests.core.formats import fixtures as fx

    home, work, out = tmp_path / "home", tmp_path / "work", tmp_path / "start.png"
    work.mkdir()
    fx.make_omega(home / ".omega" / "data" / "memory.db")
    env = {k: v for k, v in os.environ.items() if k not in ("OXMEM_DB", "XDG_DATA_HOME", "MEMORY_DB", "MEM0_DIR")}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(home), TMPDIR=str(tmp_path))
    cmd = [sys.executable, "-m", "oxmem_gui", "--size", "1024x640", "--screenshot", str(out)]
    done = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert QImage(str(out)).size().toTuple() == (1024, 640)
    assert not (home / ".local" / "share" / "oxmem").exists() and list(work.iterdir()) == []


def test_the_search_caches_are_measured_and_removed_from_the_file_menu(make_window, qloop, tmp_path, monkeypatch):
    caches = tmp_path / "caches"
    ours = caches / ("a" * 32)  # a file's folder oxmem made (marked): removed; another program's beside it: kept
    ours.mkdir(parents=True)
    (ours / MARKER).write_bytes(MARKER_TEXT)
    (ours / "vectors.npy").write_bytes(b"\0" * (3000 - len(MARKER_TEXT)))
    (caches / "other").mkdir()
    (caches / "other" / "model.bin").write_bytes(b"\0" * 5000)
    monkeypatch.setenv("OXMEM_CACHE_DIR", str(caches))
    monkeypatch.setenv("OXMEM_CACHE_MAX_MB", "512")
    window, ctx, dialogs = make_window()
    dialogs.confirm_answer = True
    window.search_caches()
    settle(qloop, ctx)
    text = dialogs.confirms[-1]
    assert f"kept in {caches}" in text and "They take 2.9 KB. At most 512 MB are kept" in text
    assert dialogs.infos[-1] == "Removed 2.9 KB of search caches."
    assert [p.name for p in caches.iterdir()] == ["other"]
    window.search_caches()
    settle(qloop, ctx)
    assert "They take 0 bytes" in dialogs.infos[-1] and len(dialogs.confirms) == 1  # nothing to remove: no button
