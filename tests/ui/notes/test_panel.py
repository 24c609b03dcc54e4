"""The Notes panel, offscreen: it fits a laptop screen, tags split and wrap, read-only shows before typing, the
editor never shows a note the list no longer lists, the keyboard reaches and leaves everything, tooltips carry
what cells cut and counts are singular or plural."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QFontMetrics, QKeySequence, QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel, QSizePolicy, QToolButton

from oxmem_gui.core.api import open_memory
from oxmem_gui.core.store.tags import MAX_TAGS
from oxmem_gui.ui.notes.model import readable
from oxmem_gui.ui.widgets.json_view import JsonView
from oxmem_gui.ui.widgets.tags import chip_height, chip_lines
from tests.ui.conftest import settle
from tests.ui.layout import unreachable

AISLE = "Alice prefers aisle seats on flights."
LONG_TAGS = [f"{i:02d}-a-rather-long-tag-that-says-where-this-note-came-from-{i:02d}" for i in range(20)]
CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


def open_notes(window, ctx, qloop, user="alice"):
    window.show_panel("notes")
    window.notes.set_user(user)
    settle(qloop, ctx)
    return window.notes


def row_of(notes, start: str) -> int:
    return next(i for i, n in enumerate(notes.model.notes) if n.content.startswith(start))


def select(notes, row: int) -> None:
    """Make ``row`` current and the only row selected."""
    notes.list_pane.view.setCurrentIndex(notes.model.index(row, 0))
    flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
    notes.list_pane.view.selectionModel().select(notes.model.index(row, 0), flags)


def show(window, qloop, ctx, size=(1024, 640)) -> None:
    window.resize(*size)
    window.show()
    window.activateWindow()
    settle(qloop, ctx)
    QApplication.processEvents()


# -- 1. it fits ---------------------------------------------------------------------------------------------------


def test_panel_fits_and_many_long_tags_wrap_without_widening_it(make_window, qloop):
    window, ctx, _ = make_window()
    notes = open_notes(window, ctx, qloop)
    select(notes, row_of(notes, AISLE))
    show(window, qloop, ctx)
    before = notes.minimumSizeHint()
    assert before.width() <= 840 and before.height() <= 520, before
    sizes = notes.splitter.sizes()
    many = qloop.run_until_complete(ctx.store.save_note("alice", "Trip notes\n" + "word " * 400, LONG_TAGS))
    assert len(many.tags) == MAX_TAGS
    notes.reload(select=many.note_id)
    settle(qloop, ctx)
    assert notes.state.current.note_id == many.note_id
    # 16 long tags in the editor and 16 in the tag filter: the minimum size does not move, the splitter neither
    notes.list_pane.tag_filter.set_tags(LONG_TAGS)
    QApplication.processEvents()
    assert notes.minimumSizeHint() == before
    assert notes.splitter.sizes() == sizes and not notes.splitter.childrenCollapsible()
    chips = [c for c in notes.editor.tags.findChildren(QToolButton) if c.objectName() == "tagChip" and c.isVisible()]
    assert len(chips) == MAX_TAGS
    lines = {c.y() for c in chips}
    assert len(lines) >= 4  # the chips wrap onto lines
    assert all(c.width() <= notes.editor.tags.chip_width for c in chips)
    assert chips[0].toolTip() == f"{LONG_TAGS[0]}\n(click to remove)"
    # what follows the chips is below them, not under them
    tags_bottom = notes.editor.tags.mapTo(notes, notes.editor.tags.rect().bottomLeft()).y()
    assert tags_bottom < notes.editor.dates.mapTo(notes, notes.editor.dates.rect().topLeft()).y()
    assert tags_bottom < notes.editor.save_button.mapTo(notes, notes.editor.save_button.rect().topLeft()).y()
    assert max(c.geometry().bottom() for c in chips) <= notes.editor.tags.height()
    assert unreachable(window) == []


def test_panel_fits_at_1024_by_640(make_window, qloop):
    window, ctx, _ = make_window()
    notes = open_notes(window, ctx, qloop)
    qloop.run_until_complete(ctx.store.save_note("alice", "Many tags", LONG_TAGS))
    notes.reload()
    settle(qloop, ctx)
    select(notes, row_of(notes, "Many tags"))
    notes.list_pane.eviction_button.setVisible(True)  # the widest row of buttons a format gives
    assert notes.minimumSizeHint().width() <= 840 and notes.minimumSizeHint().height() <= 520
    for i in range(window.stack.count()):  # the other panels' sizes are theirs to test
        if window.stack.widget(i) is not notes:
            window.stack.widget(i).setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
    show(window, qloop, ctx)
    assert (window.width(), window.height()) == (1024, 640)
    assert unreachable(window) == []


# -- 2. tags -------------------------------------------------------------------------------------------------------


def test_comma_and_enter_always_split_into_tags(make_window, qloop):
    window, ctx, _ = make_window()
    notes = open_notes(window, ctx, qloop)
    notes.new_note()
    entry = notes.editor.tags.input
    QTest.keyClicks(entry, " Travel ,seats,")
    assert notes.editor.tags.tags() == ["travel", "seats"] and entry.text() == ""
    QTest.keyClicks(entry, "Window")
    assert notes.editor.tags.tags() == ["travel", "seats"] and entry.text() == "window" and notes.dirty()
    QTest.keyClick(entry, Qt.Key.Key_Return)
    assert notes.editor.tags.tags() == ["travel", "seats", "window"] and entry.text() == ""
    QTest.keyClicks(entry, "travel,,")  # a duplicate and an empty tag: nothing added, the entry is emptied
    assert notes.editor.tags.tags() == ["travel", "seats", "window"] and entry.text() == ""


def test_pasting_a_list_gives_one_tag_each(make_window, qloop):
    window, ctx, _ = make_window()
    notes = open_notes(window, ctx, qloop)
    notes.new_note()
    show(window, qloop, ctx)
    QApplication.clipboard().setText("a, b,c")
    notes.editor.tags.input.setFocus()
    QTest.keyClick(notes.editor.tags.input, Qt.Key.Key_V, CTRL)
    assert notes.editor.tags.tags() == ["a", "b", "c"] and notes.editor.tags.input.text() == ""
    QApplication.clipboard().setText("D")  # no comma: stays in the entry, still being typed
    notes.editor.tags.input.paste()
    assert notes.editor.tags.tags() == ["a", "b", "c"] and notes.editor.tags.input.text() == "d"


def test_a_tag_still_being_typed_is_saved(make_window, qloop):
    window, ctx, _ = make_window()
    notes = open_notes(window, ctx, qloop)
    notes.new_note()
    notes.editor.content.setPlainText("Pack the charger")
    QTest.keyClicks(notes.editor.tags.input, "trip")
    notes.save()
    settle(qloop, ctx)
    assert notes.state.current.tags == ["trip"] and notes.editor.tags.tags() == ["trip"] and not notes.dirty()


def test_a_comma_tag_is_never_saved(make_window, qloop):
    window, ctx, dialogs = make_window()
    notes = open_notes(window, ctx, qloop)
    select(notes, row_of(notes, AISLE))
    loaded = notes.state.current
    notes.editor.tags.set_tags(["travel", "a,b"])  # as another program might have written it
    notes.editor.content.setPlainText("Aisle, always.")
    notes.save()
    settle(qloop, ctx)
    assert dialogs.errors == ["tag 'a,b' contains a comma; commas separate tags, so give each tag on its own"]
    assert qloop.run_until_complete(ctx.store.get_note("alice", loaded.note_id)) == loaded
    assert notes.dirty()  # the edit is still there to fix


# -- 3. read-only is visible ---------------------------------------------------------------------------------------


def test_read_only_editors_and_disabled_controls_say_why(make_window, qloop, tmp_path, monkeypatch):
    monkeypatch.setattr("oxmem_gui.ui.context.backups_dir", lambda: tmp_path / "backups")
    window, ctx, dialogs = make_window(read_only=True)
    notes = open_notes(window, ctx, qloop)
    row = row_of(notes, AISLE)
    select(notes, row)
    refusal = ctx.edit_refusal("notes")
    assert refusal == "Read-only: choose Edit ▸ Enable Editing (Ctrl+E) first; a backup is taken."
    writers = (
        notes.editor.new_button,
        notes.editor.save_button,
        notes.editor.delete_button,
        notes.list_pane.bulk_add,
        notes.list_pane.bulk_remove,
    )
    writers += (notes.editor.undo_button, notes.list_pane.import_button)
    assert [(b.isEnabled(), b.toolTip()) for b in writers] == [(False, refusal)] * len(writers)
    assert notes.editor.content.isReadOnly() and notes.editor.content.toolTip() == refusal
    assert not notes.editor.tags.input.isEnabled() and notes.editor.tags.input.toolTip() == refusal
    assert notes.editor.tags.findChildren(QToolButton) == []  # chips cannot be removed: they are labels
    assert sorted(c.text() for c in notes.editor.tags.findChildren(QLabel) if c.objectName() == "tagChip") == [
        "preferences",
        "travel",
    ]
    assert notes.list_pane.export_button.isEnabled()
    # read-only looks it: the window's colour, not an input box's white; no caret; the heading says so
    palette = notes.editor.content.palette()
    assert palette.color(QPalette.ColorRole.Base) == palette.color(QPalette.ColorRole.Window)
    assert notes.editor.content.cursorWidth() == 0 and notes.editor.heading.text().endswith("— read-only")
    show(window, qloop, ctx)
    notes.editor.content.setFocus()
    QTest.keyClicks(notes.editor.content, "typed")
    QTest.keyClick(notes.editor.content, Qt.Key.Key_S, CTRL)
    notes.new_note()
    settle(qloop, ctx)
    assert notes.editor.content.toPlainText() == AISLE and not notes.dirty() and not notes.state.is_new
    assert dialogs.errors == []

    # Enable Editing re-opens the same file: everything is enabled, the selection and the editor stay
    qloop.run_until_complete(ctx.enable_editing())
    settle(qloop, ctx)
    assert ctx.edit_refusal("notes") is None
    assert not notes.editor.content.isReadOnly() and notes.editor.tags.input.isEnabled()
    for button in (
        notes.editor.new_button,
        notes.editor.delete_button,
        notes.list_pane.bulk_add,
        notes.list_pane.bulk_remove,
        notes.list_pane.import_button,
    ):
        assert button.isEnabled(), button.text()
    assert (
        notes.editor.delete_button.toolTip() == "Delete the selected notes (Ctrl+Delete)"
        and notes.editor.new_button.toolTip() == "Write a new note (Ctrl+N)"
    )
    assert not notes.editor.save_button.isEnabled() and notes.editor.save_button.toolTip() == "Save the note (Ctrl+S)"
    assert notes.state.current.content == AISLE and notes.editor.content.toPlainText() == AISLE
    palette = notes.editor.content.palette()
    assert palette.color(QPalette.ColorRole.Base) != palette.color(QPalette.ColorRole.Window)
    assert notes.editor.content.cursorWidth() == 1 and not notes.editor.heading.text().endswith("read-only")
    assert notes.list_pane.view.currentIndex().row() == row_of(notes, AISLE)
    assert len(notes.editor.tags.findChildren(QToolButton)) == 2
    notes.editor.content.setFocus()
    notes.editor.content.moveCursor(notes.editor.content.textCursor().MoveOperation.End)
    QTest.keyClicks(notes.editor.content, " Window on night flights.")
    assert notes.editor.content.toPlainText() == AISLE + " Window on night flights."
    assert notes.editor.save_button.isEnabled() and notes.editor.revert_button.isEnabled()
    assert dialogs.errors == []


# -- 4. no stale pane ----------------------------------------------------------------------------------------------


def test_filtering_the_note_out_clears_the_editor(make_window, qloop):
    window, ctx, _ = make_window()
    notes = open_notes(window, ctx, qloop)
    select(notes, row_of(notes, AISLE))
    assert notes.editor.heading.text() == f"Note “{AISLE}”"
    notes.list_pane.filter.setText("vegetarian")
    settle(qloop, ctx)
    assert notes.model.rowCount() == 1 and notes.state.current is None and notes.editor.content.toPlainText() == ""
    assert (
        notes.editor.tags.tags() == []
        and notes.editor.heading.text() == "No note selected — choose one in the list, or New"
    )
    notes.list_pane.filter.clear()
    settle(qloop, ctx)
    select(notes, row_of(notes, AISLE))
    notes.list_pane.tag_filter.set_tags(["garden"])
    notes.list_pane.tag_filter.tags_changed.emit(["garden"])
    settle(qloop, ctx)
    assert notes.model.rowCount() == 1 and notes.state.current is None and notes.editor.content.toPlainText() == ""


def test_an_edit_the_filter_hides_is_kept_and_says_so(make_window, qloop):
    window, ctx, _ = make_window()
    notes = open_notes(window, ctx, qloop)
    select(notes, row_of(notes, AISLE))
    notes.editor.content.setPlainText(AISLE + " Not over the wing.")
    notes.list_pane.filter.setText("vegetarian")
    settle(qloop, ctx)
    assert notes.state.current.content == AISLE and notes.editor.content.toPlainText() == AISLE + " Not over the wing."
    assert notes.editor.heading.text() == f"Note “{AISLE}” — not in the list: the filters hide it"
    notes.list_pane.filter.clear()
    settle(qloop, ctx)
    assert notes.editor.heading.text() == f"Note “{AISLE}”" and notes.dirty()


def test_deleting_clears_the_editor(make_window, qloop):
    window, ctx, dialogs = make_window()
    notes = open_notes(window, ctx, qloop)
    select(notes, row_of(notes, AISLE))
    notes.delete()
    settle(qloop, ctx)
    assert notes.state.current is None and notes.editor.content.toPlainText() == "" and notes.model.rowCount() == 5
    assert notes.state.undo_record.description == "delete 1 note"
    assert dialogs.confirms[-1] == f"Delete the note “{AISLE}”? Its search index entries go too. Undo puts it back."
    # deleted by another program: gone from the list and from the editor at the next refresh
    select(notes, 0)
    gone = notes.state.current
    qloop.run_until_complete(ctx.store.delete_notes("alice", [gone.note_id]))
    notes.refresh()
    settle(qloop, ctx)
    assert notes.state.current is None and notes.editor.content.toPlainText() == "" and notes.model.rowCount() == 4
    # ...unless it holds an unsaved edit: that is kept, and the heading says the note is gone
    select(notes, 0)
    edited = notes.state.current
    notes.editor.content.setPlainText("my edit")
    qloop.run_until_complete(ctx.store.delete_notes("alice", [edited.note_id]))
    notes.refresh()
    settle(qloop, ctx)
    assert (
        notes.state.current == edited
        and notes.editor.content.toPlainText() == "my edit"
        and notes.model.rowCount() == 3
    )
    first = edited.content.splitlines()[0]
    assert notes.editor.heading.text() == f"Note “{first}” — not in the list: it is no longer in the file"


def test_another_file_starts_afresh(make_window, qloop, tmp_path):
    window, ctx, _ = make_window()
    notes = open_notes(window, ctx, qloop)
    select(notes, row_of(notes, AISLE))
    notes.editor.content.setPlainText("changed")
    notes.save()
    settle(qloop, ctx)
    notes.list_pane.filter.setText("changed")
    settle(qloop, ctx)
    assert notes.state.undo_record is not None
    qloop.run_until_complete(ctx.open(tmp_path / "other.db", read_only=False, embedding="deterministic"))
    settle(qloop, ctx)
    assert (
        notes.state.current is None and notes.editor.content.toPlainText() == "" and notes.list_pane.filter.text() == ""
    )
    assert notes.state.undo_record is None and not notes.editor.undo_button.isEnabled()


# -- 5. keyboard ---------------------------------------------------------------------------------------------------


def test_tab_leaves_the_text_and_the_table_and_escape_clears_filters(make_window, qloop):
    window, ctx, _ = make_window()
    notes = open_notes(window, ctx, qloop)
    select(notes, 0)
    show(window, qloop, ctx)
    assert notes.editor.content.tabChangesFocus() and not notes.list_pane.view.tabKeyNavigation()
    notes.editor.content.setFocus()
    before = notes.editor.content.toPlainText()
    QTest.keyClick(notes.editor.content, Qt.Key.Key_Tab)
    assert notes.editor.content.toPlainText() == before and QApplication.focusWidget() is not notes.editor.content
    notes.list_pane.view.setFocus()
    QTest.keyClick(notes.list_pane.view, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is not notes.list_pane.view
    notes.list_pane.filter.setFocus()
    QTest.keyClicks(notes.list_pane.filter, "aisle")
    settle(qloop, ctx)
    assert notes.model.rowCount() == 1 and notes.list_pane.count_label.text() == "1 note matches the filters"
    QTest.keyClick(notes.list_pane.filter, Qt.Key.Key_Escape)
    settle(qloop, ctx)
    assert (
        notes.list_pane.filter.text() == ""
        and notes.model.rowCount() == 6
        and notes.list_pane.count_label.text() == "6 notes"
    )
    entry = notes.list_pane.tag_filter.input
    entry.setFocus()
    QTest.keyClicks(entry, "travel,food")
    settle(qloop, ctx)
    assert notes.list_pane.tag_filter.tags() == ["travel"] and entry.text() == "food" and notes.model.rowCount() == 3
    popup = entry.completer().popup()
    if popup.isVisible():  # Escape first closes the completions offered
        QTest.keyClick(entry, Qt.Key.Key_Escape)
        assert not popup.isVisible() and entry.text() == "food"
    QTest.keyClick(entry, Qt.Key.Key_Escape)  # then empties what is typed, then drops the tags
    assert notes.list_pane.tag_filter.tags() == ["travel"] and entry.text() == ""
    QTest.keyClick(entry, Qt.Key.Key_Escape)
    settle(qloop, ctx)
    assert notes.list_pane.tag_filter.tags() == [] and notes.model.rowCount() == 6


def test_undo_and_redo_work_in_the_text_box(make_window, qloop, monkeypatch):
    window, ctx, _ = make_window()
    notes = open_notes(window, ctx, qloop)
    select(notes, row_of(notes, AISLE))
    show(window, qloop, ctx)
    undone = []
    monkeypatch.setattr(notes, "undo", lambda: undone.append(True))
    notes.editor.content.setFocus()
    notes.editor.content.moveCursor(notes.editor.content.textCursor().MoveOperation.End)
    QTest.keyClicks(QApplication.focusWidget(), " Window at night.")
    assert notes.editor.content.toPlainText() == AISLE + " Window at night." and notes.dirty()
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Z, CTRL)
    assert notes.editor.content.toPlainText() == AISLE and not notes.dirty()
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Z, CTRL | SHIFT)
    assert notes.editor.content.toPlainText() == AISLE + " Window at night."
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Z, CTRL)
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Y, CTRL)
    assert notes.editor.content.toPlainText() == AISLE + " Window at night."
    assert undone == []  # the window's Undo Last Note Edit did not fire from the text box
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_End)  # no modifier held for the tests that follow


def test_undo_last_note_edit_is_not_a_text_editing_key(make_window):
    window, _, _ = make_window()
    action = next(a for a in window.findChildren(type(window.menuBar().actions()[0])) if "Undo Last" in a.text())
    taken = {
        k.toString()
        for key in (QKeySequence.StandardKey.Undo, QKeySequence.StandardKey.Redo)
        for k in QKeySequence.keyBindings(key)
    }
    assert action.shortcut().toString() and action.shortcut().toString() not in taken


# -- 6. tooltips and plurals ---------------------------------------------------------------------------------------


def test_cells_tooltips_carry_the_full_text_and_counts_are_plural_right(make_window, qloop):
    window, ctx, _ = make_window()
    notes = open_notes(window, ctx, qloop)
    long_text = "First line of a long note\n" + "more " * 100
    qloop.run_until_complete(ctx.store.save_note("alice", long_text, ["zeta", "alpha", "mid"]))
    notes.reload()
    settle(qloop, ctx)
    row = row_of(notes, "First line of a long note")
    note = notes.model.notes[row]
    tip = Qt.ItemDataRole.ToolTipRole
    assert notes.model.index(row, 0).data() == "First line of a long note"
    assert notes.model.index(row, 0).data(tip) == long_text
    assert notes.model.index(row, 1).data(tip) == "zeta, alpha, mid"
    when = datetime.fromisoformat(note.created_at).strftime("%Y-%m-%d %H:%M:%S UTC")  # to the second, no offset
    assert notes.model.index(row, 2).data(tip) == f"created {when}\nupdated {readable(note.updated_at)}"
    assert notes.list_pane.count_label.text() == "7 notes"
    notes.list_pane.view.selectAll()
    assert notes.list_pane.count_label.text() == "7 notes · 7 selected"
    notes.list_pane.filter.setText("First line of a long")
    settle(qloop, ctx)
    assert notes.list_pane.count_label.text() == "1 note matches the filters"
    notes.list_pane.filter.setText("Alice")
    settle(qloop, ctx)
    assert notes.list_pane.count_label.text() == "4 notes match the filters"
    notes.list_pane.filter.setText("")
    settle(qloop, ctx)
    select(notes, row_of(notes, AISLE))
    window.dialogs.texts = ["Trip"]
    notes.bulk_tags(add=True)
    settle(qloop, ctx)
    assert window.dialogs.confirms[-1] == "Add trip to 1 of the 1 selected note?"
    assert notes.state.undo_record.description == "add tags on 1 note"


def test_json_view_is_read_only_and_tab_leaves_it(qtbot):
    view = JsonView()
    qtbot.addWidget(view)
    view.show_value({"b": [1, 2.5, None], "a": "x"})
    assert view.toPlainText() == '{\n  "a": "x",\n  "b": [\n    1,\n    2.5,\n    null\n  ]\n}'
    assert view.isReadOnly() and view.tabChangesFocus()
    assert view.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByKeyboard


def test_chip_lines_wrap_at_the_width_and_cut_only_a_tag_wider_than_a_line():
    metrics = QFontMetrics(QApplication.font())
    tags = ["travel", "food", "preferences"]
    one_line = sum(metrics.horizontalAdvance(t) + 12 for t in tags) + 4 * len(tags) + 8
    assert [[text for text, _ in line] for line in chip_lines(tags, metrics, one_line)] == [tags]
    assert [[text for text, _ in line] for line in chip_lines(tags, metrics, one_line - 30)] == [
        ["travel", "food"],
        ["preferences"],
    ]
    (only,) = chip_lines([LONG_TAGS[0]], metrics, 120)
    assert only[0][0].endswith("…") and only[0][1] <= 120 - 8
    assert chip_lines([], metrics, 120) == []


def test_a_notes_tags_wrap_onto_lines_and_its_row_grows_with_them(make_window, qloop):
    window, ctx, _ = make_window()
    notes = open_notes(window, ctx, qloop)
    show(window, qloop, ctx)
    view, plain = notes.list_pane.view, notes.list_pane.view.verticalHeader().defaultSectionSize()
    row = row_of(notes, AISLE)  # two short tags: one line, the plain height
    assert view.rowHeight(row) == plain
    note = qloop.run_until_complete(ctx.store.save_note("alice", "Packing list", ["travel", "food", "preferences"]))
    notes.reload(select=note.note_id)
    settle(qloop, ctx)
    row = row_of(notes, "Packing list")
    view.setColumnWidth(1, 110)  # too narrow for the three on one line
    QApplication.processEvents()
    lines = chip_lines(["travel", "food", "preferences"], view.fontMetrics(), 110)
    assert len(lines) >= 2
    assert view.rowHeight(row) == chip_height(view.fontMetrics(), len(lines)) > plain
    view.setColumnWidth(1, 400)  # wide again: back to one line
    QApplication.processEvents()
    assert view.rowHeight(row) == plain


def test_several_selected_notes_show_what_acts_on_them_all_and_stay_selected_after_a_bulk_action(make_window, qloop):
    window, ctx, dialogs = make_window()
    notes = open_notes(window, ctx, qloop)
    show(window, qloop, ctx)
    aisle, lisbon = row_of(notes, AISLE), row_of(notes, "Lisbon trip")
    both = {notes.model.notes[aisle].note_id, notes.model.notes[lisbon].note_id}
    select(notes, aisle)
    settle(qloop, ctx)
    notes.list_pane.view.selectionModel().select(
        notes.model.index(lisbon, 0), QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    )
    settle(qloop, ctx)
    assert notes.editor.heading.text() == "2 notes selected"
    assert notes.editor.body.currentWidget() is notes.editor.many and not notes.editor.content.isVisible()
    assert notes.editor.many.text().startswith("Add tag…, Remove tag…, Delete…, Export… act on all of them.")
    assert notes.list_pane.bulk_add.isEnabled() and not notes.editor.save_button.isEnabled()
    dialogs.texts = ["packing"]
    notes.bulk_tags(add=True)
    settle(qloop, ctx)
    assert {n.note_id for n in notes.selected_notes()} == both  # both still selected
    assert all("packing" in n.tags for n in notes.selected_notes())
    assert notes.editor.heading.text() == "2 notes selected"
    select(notes, row_of(notes, AISLE))  # one again: its fields are back
    settle(qloop, ctx)
    assert notes.editor.body.currentIndex() == 0 and notes.editor.content.isVisible()
    assert notes.editor.content.toPlainText() == AISLE and notes.editor.heading.text().startswith("Note “Alice prefers")


def test_the_panel_alone_lists_edits_and_undoes(qtbot, qloop, tmp_path):
    from oxmem_gui.ui.context import StoreContext
    from oxmem_gui.ui.notes.panel import NotesPanel
    from tests.ui.conftest import FakeDialogs

    async def make():
        async with await open_memory(tmp_path / "m.db", read_only=False, embedding="deterministic") as m:
            for i in range(3):
                await m.save_note("alice", f"note {i}", ["travel"])

    qloop.run_until_complete(make())
    ctx = StoreContext()
    panel = NotesPanel(ctx, FakeDialogs())
    qtbot.addWidget(panel)
    qloop.run_until_complete(ctx.open(tmp_path / "m.db", read_only=False, embedding="deterministic"))
    panel.set_user("alice")
    settle(qloop, ctx)
    assert panel.model.rowCount() == 3 and panel.list_pane.count_label.text() == "3 notes"
    select(panel, row_of(panel, "note 1"))
    panel.editor.content.setPlainText("note 1, edited")
    assert panel.dirty() and panel.editor.save_button.isEnabled()
    panel.save()
    settle(qloop, ctx)
    assert panel.state.current.content == "note 1, edited" and not panel.dirty()
    assert panel.state.undo_tip() == "Undo: edit note" and panel.editor.undo_button.toolTip() == "Undo: edit note"
    panel.undo()
    settle(qloop, ctx)
    assert sorted(n.content for n in panel.model.notes) == ["note 0", "note 1", "note 2"]
    qloop.run_until_complete(ctx.close())
