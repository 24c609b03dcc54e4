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


def test_the_picker_opens_in_the_backups_folder_with_this_files_newest_backup_selected(
    make_window, qloop, tmp_path, monkeypatch
):
    folder = tmp_path / "kept-backups"  # (not there yet: made for the picker, never the file's own folder)
    monkeypatch.setenv("OXMEM_BACKUP_DIR", str(folder))
    window, ctx, dialogs = make_window(read_only=False)
    store = ctx.require()
    dialogs.files.append(None)  # cancelled
    window.compare_with_backup()
    settle(qloop, ctx)
    assert dialogs.folders == [str(folder)] and folder.is_dir() and store.path.parent == tmp_path
    for name in ("demo-20260101-090000.db", "demo-20260301-090000.db", "other-20270101-090000.db", "demo-notes.db"):
        shutil.copy(store.path, folder / name)
    newest = folder / "demo-20260301-090000.db"  # the newest of demo.db's (other.db's is newer, not this file's)
    dialogs.files.append(newest)
    window.compare_with_backup()
    settle(qloop, ctx)
    assert dialogs.folders[-1] == str(newest) and dialogs.errors == []
    (diff,) = dialogs.compared
    assert diff.old_path.endswith("demo-20260301-090000.db") and diff.empty


def test_the_detail_shows_what_changed_in_the_selected_row_not_the_row_again(qtbot):
    from oxmem_gui.core.compare import FileDiff, ScheduleChange, SessionChange, SummaryChange

    diff = FileDiff(
        "old.db",
        "new.db",
        "oxmem",
        sessions=[SessionChange("telegram:alice:lisbon-trip", "appended", 12, 14),
                  SessionChange("cli:bob:gone", "removed", 9, None)],  # fmt: skip
        summaries=[SummaryChange("telegram:alice:lisbon-trip", "Alice flies to Lisbon.", "Alice flies to Porto.")],
        schedules=[ScheduleChange("sch-1", "Weekly KPI post", "added"),
                   ScheduleChange("sch-2", "Standup", "paused", [("status", "active", "paused")])],  # fmt: skip
    )
    dialog = CompareDialog(diff, None)
    qtbot.addWidget(dialog)

    def detail(top: int, child: int) -> tuple[str, str]:
        item = dialog.tree.topLevelItem(top).child(child)
        dialog.tree.setCurrentItem(item)
        return item.text(0), dialog.detail.toPlainText()

    row, text = detail(0, 0)
    assert row == "appended: telegram:alice:lisbon-trip — +2 events (12 → 14)" and row not in text
    assert text.startswith("Appended · session telegram:alice:lisbon-trip\nEvents added after the backup's last one")
    assert "events\n12\n14" in text and "events appended\n—\n2" in text
    row, text = detail(0, 1)
    assert row == "removed: cli:bob:gone — had 9 events" and row not in text
    assert "A session the backup has that the file no longer does." in text and "events\n9\n—" in text
    _, text = detail(1, 0)
    assert "Before (the backup)\nNow (this file)\nAlice flies to Lisbon.\nAlice flies to Porto." in text
    assert "Lisbon" in dialog.detail.toHtml().split("line-through")[1][:80]  # the word diff strikes Lisbon out
    row, text = detail(2, 0)
    assert row == "added: Weekly KPI post"
    assert text == "Added: Weekly KPI post · sch-1\nA schedule the backup does not have."
    _, text = detail(2, 1)
    assert "status\nactive\npaused" in text
