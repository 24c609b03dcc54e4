"""The conflict dialog: Enter never writes (its default is Back to Editing), the focus shows wherever it is, and
what differs between theirs and mine is highlighted in both."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QWidget

from oxmem_gui.ui.dialogs import ConflictDialog
from oxmem_gui.ui.differences import differences

THEIRS = "Alice now prefers window seats.\n\ntags: agent"
MINE = "Alice prefers aisle seats, ideally rows 10–15.\n\ntags: agent"
CHOICES = [("mine", "Keep mine"), ("theirs", "Keep theirs"), ("both", "Keep both (mine as a new note)")]


def pieces(text: str, spans: list[tuple[int, int]]) -> list[str]:
    return [text[a:b] for a, b in spans]


def test_the_differences_are_the_words_each_side_lacks():
    theirs, mine = differences(THEIRS, MINE)
    assert pieces(THEIRS, theirs) == [" now", "window"]
    assert pieces(MINE, mine) == ["aisle", ", ideally rows 10–15"]
    assert differences("same text", "same text") == ([], [])
    assert differences("", "new") == ([], [(0, 3)])


@pytest.fixture
def dialog(qtbot):
    parent = QWidget()
    qtbot.addWidget(parent)
    shown = ConflictDialog("Note changed by another program", "note n1 was changed", THEIRS, MINE, CHOICES, parent)
    qtbot.addWidget(shown)
    shown.show()
    shown.activateWindow()
    QApplication.processEvents()
    yield shown
    del parent


@pytest.mark.parametrize("where", ["start", "theirs", "mine", "keep-mine"])
def test_enter_anywhere_goes_back_to_editing_and_writes_nothing(dialog, where):
    if where == "theirs":
        dialog.views[0].setFocus()
    elif where == "mine":
        dialog.views[1].setFocus()
    elif where == "keep-mine":  # a focused button that is not the default: Enter still goes back (Space acts)
        dialog.buttons["mine"].setFocus()
    QApplication.processEvents()
    focused = QApplication.focusWidget()
    assert focused is not None
    QTest.keyClick(focused, Qt.Key.Key_Return)
    assert dialog.choice == "cancel" and dialog.result() == QDialog.DialogCode.Rejected


def test_the_dialog_opens_on_the_safe_default_and_tab_moves_through_the_texts(dialog):
    assert QApplication.focusWidget() is dialog.buttons["cancel"] and dialog.buttons["cancel"].isDefault()
    assert not any(b.isDefault() or b.autoDefault() for k, b in dialog.buttons.items() if k != "cancel")
    dialog.views[0].setFocus()
    QTest.keyClick(dialog.views[0], Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is not dialog.views[0]  # Tab leaves a text instead of typing into it


def test_what_differs_is_highlighted_in_both_texts(dialog):
    def background(view, at: int) -> QColor:
        cursor = QTextCursor(view.document())
        cursor.setPosition(at + 1)  # the format of the character before the cursor
        return cursor.charFormat().background().color()

    theirs, mine = dialog.views
    assert background(theirs, THEIRS.index("window")) == QColor("#FFE08A")
    assert background(theirs, THEIRS.index("prefers")) != QColor("#FFE08A")
    assert background(mine, MINE.index("aisle")) == QColor("#FFE08A")
    assert background(mine, MINE.index("tags")) != QColor("#FFE08A")
