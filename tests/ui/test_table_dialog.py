"""The read-only table dialog: its heading (plain text, hidden when empty), the rows under their columns, cells
the keyboard selects by row but never edits, Tab on to the buttons, and Close or the action as its answer."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QAbstractItemView, QApplication, QDialog, QDialogButtonBox

from oxmem_gui.ui.table_dialog import TableDialog

COLUMNS = ("Note", "User", "Age")
ROWS = [("Alice prefers aisle seats", "alice", "3 days"), ("Bob's KPI post", "bob", "2 weeks")]


@pytest.fixture
def make(qtbot):
    def build(heading: str = "2 notes would be evicted", action: str | None = None) -> TableDialog:
        dialog = TableDialog("Eviction preview", heading, COLUMNS, ROWS, action)
        qtbot.addWidget(dialog)
        dialog.show()
        dialog.activateWindow()
        QApplication.processEvents()
        return dialog

    return build


def buttons(dialog: TableDialog) -> dict[str, QDialogButtonBox.ButtonRole]:
    box = dialog.findChild(QDialogButtonBox)
    return {b.text(): box.buttonRole(b) for b in box.buttons()}


def cells(dialog: TableDialog) -> list[tuple[str, ...]]:
    table = dialog.table
    return [tuple(table.item(r, c).text() for c in range(table.columnCount())) for r in range(table.rowCount())]


def test_the_rows_are_shown_under_their_columns(make):
    dialog = make()
    table = dialog.table
    assert dialog.windowTitle() == "Eviction preview" and cells(dialog) == ROWS
    assert [table.horizontalHeaderItem(c).text() for c in range(3)] == list(COLUMNS)
    assert table.verticalHeader().isHidden() and table.horizontalHeader().stretchLastSection()


def test_the_heading_is_plain_text_and_hidden_when_empty(make):
    dialog = make("<b>2 notes</b> & more")
    assert dialog.heading.text() == "<b>2 notes</b> & more" and dialog.heading.textFormat() == Qt.TextFormat.PlainText
    assert dialog.heading.isVisible() and dialog.heading.wordWrap()
    assert make("").heading.isHidden()


def test_without_an_action_there_is_only_close_and_it_rejects(make):
    dialog = make()
    assert buttons(dialog) == {"Close": QDialogButtonBox.ButtonRole.RejectRole}
    dialog.findChild(QDialogButtonBox).buttons()[0].click()
    assert dialog.result() == QDialog.DialogCode.Rejected and not dialog.isVisible()


def test_the_action_button_is_destructive_and_its_choice_is_accepted(make):
    dialog = make(action="Evict 2 notes")
    assert buttons(dialog) == {
        "Close": QDialogButtonBox.ButtonRole.RejectRole,
        "Evict 2 notes": QDialogButtonBox.ButtonRole.DestructiveRole,
    }
    (evict,) = [b for b in dialog.findChild(QDialogButtonBox).buttons() if b.text() == "Evict 2 notes"]
    QTimer.singleShot(0, evict.click)
    assert dialog.exec() == QDialog.DialogCode.Accepted


def test_the_keyboard_selects_whole_rows_and_never_edits_a_cell(make, qtbot):
    dialog = make()
    table = dialog.table
    table.setFocus()
    QApplication.processEvents()
    assert table.selectionModel().selectedRows()[0].row() == 0  # tabbing in selects the first row
    qtbot.keyClick(table, Qt.Key.Key_Down)
    assert [i.row() for i in table.selectionModel().selectedRows()] == [1]
    assert [i.text() for i in table.selectedItems()] == list(ROWS[1])
    qtbot.keyClick(table, Qt.Key.Key_F2)
    qtbot.keyClicks(table, "zzz")
    qtbot.keyClick(table, Qt.Key.Key_Return)
    assert table.state() != QAbstractItemView.State.EditingState and cells(dialog) == ROWS


def test_tab_leaves_the_table_for_the_buttons(make, qtbot):
    dialog = make(action="Evict 2 notes")
    dialog.table.setFocus()
    QApplication.processEvents()
    qtbot.keyClick(dialog.table, Qt.Key.Key_Tab)
    focused = QApplication.focusWidget()
    assert focused is not dialog.table and focused.parent() is dialog.findChild(QDialogButtonBox)
