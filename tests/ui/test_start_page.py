"""The start page shown when no store is open: the welcome (no file named) or the reason (a file that did not
open), the agents' files found on this machine and the recent files it lists (or hides), the focus on *Open a
File…*, and each way on — the buttons, a found file and a recent file — reached and chosen with the keyboard."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget

from oxmem_gui.core.known_places import Found
from oxmem_gui.ui.start_page import INTRO, StartPage

REASON = "Could not open /home/alice/notes.txt: it is not a SQLite database (file is not a database)"
RECENT = ["/home/alice/.local/share/oxmem/memory.db", "/srv/agents/ada/memory.db"]
OMEGA = Path("/home/alice/.omega/data/memory.db")
FOUND = [
    Found("Omega", OMEGA, "~/.omega/data/memory.db", "omega", "Omega memory", 49152),
    Found("aidaemon", Path("/home/alice/aidaemon.db"), "aidaemon.db", "encrypted", "encrypted (needs a key)", 8192),
]


@pytest.fixture
def page(qtbot):
    start = StartPage()
    qtbot.addWidget(start)
    start.resize(800, 600)
    start.show()
    start.activateWindow()
    QApplication.processEvents()
    return start


def listed(page: StartPage) -> list[tuple[str, str]]:
    return [(page.recent.item(i).text(), page.recent.item(i).toolTip()) for i in range(page.recent.count())]


def test_the_reason_and_the_recent_files_are_shown_and_open_has_the_focus(page):
    page.show_message(REASON, RECENT)
    QApplication.processEvents()
    assert page.heading.text() == "<h2>No memory store is open</h2>" and page.message.text() == REASON
    assert listed(page) == [(p, p) for p in RECENT]
    assert page.recent_label.isVisible() and page.recent.isVisible()
    assert page.open_button.hasFocus()


def test_with_no_recent_files_the_list_and_its_label_are_hidden(page):
    page.show_message(REASON, RECENT)
    page.show_message("The file was moved", [])
    assert page.message.text() == "The file was moved" and listed(page) == []
    assert page.recent_label.isHidden() and page.recent.isHidden()
    page.show_message(REASON, RECENT[1:])
    assert listed(page) == [(RECENT[1], RECENT[1])] and not page.recent.isHidden()


def test_the_reason_is_read_only_and_tab_skips_it(page, qtbot):
    page.show_message(REASON, RECENT)
    QApplication.processEvents()
    assert page.message.isReadOnly() and page.message.focusPolicy() == Qt.FocusPolicy.NoFocus
    order = []
    for _ in range(3):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        order.append(QApplication.focusWidget())
    assert order[:2] == [page.demo_button, page.new_button]
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    order.append(QApplication.focusWidget())
    assert order[2:] == [page.recent, page.open_button]  # Tab leaves the list, the reason never in
    assert page.recent.currentRow() == 0 and page.recent.selectedItems() == [page.recent.item(0)]


def test_space_on_open_and_on_demo_ask_for_a_file_and_the_demo(page, qtbot):
    page.show_message(REASON, [])
    QApplication.processEvents()
    with qtbot.waitSignal(page.open_file, timeout=1000):
        qtbot.keyClick(page.open_button, Qt.Key.Key_Space)
    qtbot.keyClick(page.open_button, Qt.Key.Key_Tab)
    assert page.demo_button.hasFocus()
    with qtbot.waitSignal(page.open_demo, timeout=1000):
        qtbot.keyClick(page.demo_button, Qt.Key.Key_Space)


def test_enter_on_a_recent_file_opens_that_file(page, qtbot):
    page.show_message(REASON, RECENT)
    page.recent.setFocus()
    QApplication.processEvents()
    qtbot.keyClick(page.recent, Qt.Key.Key_Down)
    assert page.recent.currentRow() == 1
    with qtbot.waitSignal(page.open_recent, timeout=1000) as opened:
        qtbot.keyClick(page.recent, Qt.Key.Key_Return)
    assert opened.args == [RECENT[1]]


def test_a_longer_reason_makes_the_reason_taller(page):
    page.show_message("short", [])
    one_line = page.message.height()
    page.show_message(" ".join(["the file could not be read"] * 30), [])
    assert page.message.height() >= one_line + 2 * page.message.fontMetrics().lineSpacing()
    page.show_message("short", [])
    assert page.message.height() == one_line


def test_with_no_file_named_it_welcomes_and_says_how_files_open(page):
    page.show_message(None, [])
    assert page.heading.text() == "<h2>Open an agent's memory</h2>" and page.message.text() == INTRO
    assert "read-only" in INTRO and "drop" in INTRO
    assert [b.text() for b in (page.open_button, page.demo_button, page.new_button)] == [
        "&Open a File…",
        "Open the &Demo",
        "&New Empty Store…",
    ]


def test_the_files_found_fill_in_with_what_each_is_and_none_found_is_said(page):
    page.show_message(None, RECENT)
    assert "Looking" in page.found_status.text() and page.found.isHidden()
    page.show_found(FOUND)
    rows = [[page.found.topLevelItem(i).text(c) for c in range(3)] for i in range(page.found.topLevelItemCount())]
    assert rows == [
        ["Omega", "Omega memory, 48 KB", "/home/alice/.omega/data/memory.db"],
        ["aidaemon", "encrypted (needs a key), 8.0 KB", "/home/alice/aidaemon.db"],
    ]
    assert page.found_paths() == [str(f.path) for f in FOUND] and page.found_status.isHidden()
    assert "~/.omega/data/memory.db" in page.found.topLevelItem(0).toolTip(2)
    page.show_found([])
    assert page.found.isHidden() and "No agent's memory file" in page.found_status.text()
    page.show_not_found("permission denied")
    assert page.found_status.text() == "Could not look at the usual places: permission denied"


def test_tab_goes_through_the_buttons_then_the_lists_and_enter_opens_a_found_file(page, qtbot):
    page.show_message(None, RECENT)
    page.show_found(FOUND)
    QApplication.processEvents()
    order = []
    for _ in range(5):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        order.append(QApplication.focusWidget())
    assert order == [page.demo_button, page.new_button, page.found, page.recent, page.open_button]
    page.found.setFocus()
    qtbot.keyClick(page.found, Qt.Key.Key_Down)
    with qtbot.waitSignal(page.open_found, timeout=1000) as opened:
        qtbot.keyClick(page.found, Qt.Key.Key_Return)
    assert opened.args == [str(FOUND[1].path)]
    page.new_button.setFocus()
    with qtbot.waitSignal(page.new_store, timeout=1000):
        qtbot.keyClick(page.new_button, Qt.Key.Key_Space)


def test_no_control_of_the_page_takes_a_drop_so_the_window_gets_it(page):
    page.show_message(REASON, RECENT)
    page.show_found(FOUND)
    takers = [w for w in page.findChildren(QWidget) if w.acceptDrops()]
    assert takers == [] and not page.acceptDrops()
