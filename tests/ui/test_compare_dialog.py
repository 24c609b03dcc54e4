"""File ▸ Compare with Backup…: the diff is read in the background and shown — counts first, changes grouped, the
selected one in full (a note's words struck through and added)."""

from __future__ import annotations

import shutil

import apsw
from PySide6.QtCore import Qt

from oxmem_gui.ui.compare_dialog import CompareDialog
from tests.ui.conftest import settle


def test_compare_with_a_backup_lists_the_edit_and_shows_its_words(make_window, qloop, qtbot, tmp_path):
    window, ctx, dialogs = make_window(read_only=False)
    store = ctx.require()
    backup = tmp_path / "before.db"
    shutil.copy(store.path, backup)
    note = qloop.run_until_complete(store.list_notes("alice"))[0]
    text = note.content.replace("every", "each")
    qloop.run_until_complete(store.update_note("alice", note.note_id, text, [*note.tags, "new"], expected=note))
    dialogs.files.append(backup)
    window.compare_with_backup()
    settle(qloop, ctx)
    (diff,) = dialogs.compared
    assert diff.counts() == {"notes changed": 1}
    assert dialogs.errors == [] and dialogs.folders[-1]  # the picker started in a folder
    dialog = CompareDialog(diff, window)
    qtbot.addWidget(dialog)
    assert dialog.heading.text().endswith("notes changed 1")
    top = dialog.tree.topLevelItem(0)
    assert dialog.tree.topLevelItemCount() == 1 and top.text(0) == "Notes (1)"
    assert dialog.tree.currentItem() is top.child(0) and top.child(0).text(0).startswith("changed: alice · ")
    shown = dialog.detail.toHtml()
    assert "line-through" in shown and ">every<" in shown and ">each<" in shown and "+new" in shown
    assert top.child(0).data(0, Qt.ItemDataRole.UserRole).note_id == note.note_id


def test_comparing_with_a_file_of_another_format_says_so_in_a_dialog(make_window, qloop, tmp_path):
    window, ctx, dialogs = make_window()
    other = tmp_path / "plain.db"
    conn = apsw.Connection(str(other))
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    dialogs.files.append(other)
    window.compare_with_backup()
    settle(qloop, ctx)
    assert dialogs.compared == [] and len(dialogs.errors) == 1
    assert "compare a file with a backup of it, or another file of the same format" in dialogs.errors[0]
