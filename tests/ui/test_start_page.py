"""The start page shown when no store is open: the reason and the recent files it lists (or hides), the focus on
*Open a File…*, and each way on — the buttons and a recent file — reached and chosen with the keyboard."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from oxmem_gui.ui.start_page import StartPage

REASON = "Could not open /home/alice/notes.txt: it is not a SQLite database (file is not a database)"
RECENT = ["/home/alice/.local/share/oxmem/memory.db", "/srv/agents/ada/memory.db"]


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
    assert order == [page.demo_button, page.recent, page.open_button]  # Tab leaves the list, the reason never in
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
