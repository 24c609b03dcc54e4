"""File ▸ Backups…: the sizes as shown, an empty folder, the rows with each backup's path, and what the dialog
answers — open (Enter on a row), restore, show the folder — with nothing chosen when no row is selected."""

from __future__ import annotations

from datetime import datetime

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialog, QLabel

from oxmem_gui.core.store.backups import Backup
from oxmem_gui.ui.backups_dialog import BackupsDialog, size_text

REFUSAL = "Read-only: choose Edit ▸ Enable Editing"


@pytest.fixture
def backups(tmp_path) -> list[Backup]:
    folder = tmp_path / "backups"
    return [
        Backup(folder / "memory-20371123-093005.db", "memory.db", datetime(2037, 11, 23, 9, 30, 5), 3 << 20),
        Backup(folder / "memory-20371120-180000.db", "memory.db", datetime(2037, 11, 20, 18, 0, 0), 840 * 1024),
        Backup(folder / "agent-20371101-070707.db", "agent.db", datetime(2037, 11, 1, 7, 7, 7), 100),
    ]


@pytest.fixture
def make(qtbot, tmp_path):
    def build(found, current="memory.db", refusal=None) -> BackupsDialog:
        dialog = BackupsDialog(found, str(tmp_path / "backups"), current, refusal)
        qtbot.addWidget(dialog)
        dialog.show()
        dialog.activateWindow()
        QApplication.processEvents()
        return dialog

    return build


def test_sizes_are_whole_kib_below_a_mib_and_tenths_of_a_mib_above():
    assert [size_text(n) for n in (0, 100, 1536, 840 * 1024)] == ["1 KiB", "1 KiB", "2 KiB", "840 KiB"]
    assert [size_text(n) for n in (1 << 20, 12_897_485)] == ["1.0 MiB", "12.3 MiB"]


def test_with_no_backups_only_show_folder_can_be_chosen(make, tmp_path):
    dialog = make([])
    intro = dialog.findChild(QLabel)
    assert intro.text() == f"No backups yet. They are kept in {tmp_path / 'backups'}" and dialog.table.rowCount() == 0
    assert not dialog.open_button.isEnabled() and not dialog.restore_button.isEnabled()
    assert dialog.folder_button.isEnabled() and dialog.folder_button.toolTip() == str(tmp_path / "backups")
    dialog.folder_button.click()
    assert (dialog.action, dialog.chosen, dialog.result()) == ("folder", None, QDialog.DialogCode.Accepted)


def test_each_row_shows_a_backup_with_its_path_as_tooltip(make, backups, tmp_path):
    dialog = make(backups)
    table = dialog.table
    assert dialog.findChild(QLabel).text() == f"Taken before editing, in {tmp_path / 'backups'}"
    assert [[table.item(r, c).text() for c in range(3)] for r in range(3)] == [
        ["2037-11-23 09:30:05", "memory.db", "3.0 MiB"],
        ["2037-11-20 18:00:00", "memory.db", "840 KiB"],
        ["2037-11-01 07:07:07", "agent.db", "1 KiB"],
    ]
    assert [[table.item(r, c).toolTip() for c in range(3)] for r in range(3)] == [[str(b.path)] * 3 for b in backups]
    assert table.item(0, 2).textAlignment() == int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    assert table.selectionModel().selectedRows()[0].row() == 0  # the newest, selected
    assert dialog.restore_button.text() == "&Restore Into memory.db…" and dialog.restore_button.isEnabled()
    assert dialog.restore_button.toolTip().startswith("Replace the open store's content with the selected backup")


def test_enter_on_a_row_opens_that_backup(make, backups, qtbot):
    dialog = make(backups)
    dialog.table.setFocus()
    QApplication.processEvents()
    qtbot.keyClick(dialog.table, Qt.Key.Key_Down)
    qtbot.keyClick(dialog.table, Qt.Key.Key_Down)
    qtbot.keyClick(dialog.table, Qt.Key.Key_Return)
    assert (dialog.action, dialog.chosen, dialog.result()) == ("open", backups[2], QDialog.DialogCode.Accepted)


def test_restore_answers_the_selected_backup(make, backups):
    dialog = make(backups, current=None)
    assert dialog.restore_button.text() == "&Restore…"
    dialog.table.selectRow(1)
    dialog.restore_button.click()
    assert (dialog.action, dialog.chosen, dialog.result()) == ("restore", backups[1], QDialog.DialogCode.Accepted)


def test_with_no_row_selected_nothing_can_be_opened_or_restored(make, backups, qtbot):
    dialog = make(backups, refusal=REFUSAL)
    table = dialog.table
    table.setFocus()
    QApplication.processEvents()
    qtbot.keyClick(table, Qt.Key.Key_Space, Qt.KeyboardModifier.ControlModifier)  # deselects the row
    assert table.selectionModel().selectedRows() == []
    assert not dialog.open_button.isEnabled() and not dialog.restore_button.isEnabled()
    qtbot.keyClick(table, Qt.Key.Key_Down)
    assert dialog.open_button.isEnabled() and not dialog.restore_button.isEnabled()  # the refusal still holds
    assert dialog.restore_button.toolTip() == REFUSAL
    qtbot.keyClick(table, Qt.Key.Key_Space, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(table, Qt.Key.Key_Return)  # on the current row, not selected: closes, as Close would
    assert (dialog.action, dialog.chosen, dialog.result()) == (None, None, QDialog.DialogCode.Rejected)
