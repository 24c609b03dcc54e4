"""Saving never loses what is typed meanwhile, never takes the window's own write for another program's, and
Undo goes back many steps in each file, every format."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tests.core.formats import fixtures
from tests.ui.conftest import settle
from tests.ui.notes.test_panel import AISLE, CTRL, open_notes, row_of, show


def held(store, method: str) -> asyncio.Event:
    """``store.method`` waits for the event before it writes: a slow save (a libSQL note can take seconds)."""
    gate, real = asyncio.Event(), getattr(store, method)

    async def slow(*args, **kwargs):
        await gate.wait()
        return await real(*args, **kwargs)

    setattr(store, method, slow)
    return gate


def type_keys(text: str) -> None:
    QTest.keyClicks(QApplication.focusWidget(), text)


def press(key: Qt.Key) -> None:
    QTest.keyClick(QApplication.focusWidget(), key, CTRL)


def contents(qloop, ctx, user="alice") -> list[str]:
    return sorted(n.content for n in qloop.run_until_complete(ctx.store.list_notes(user)))


def edit_aisle(window, ctx, qloop):
    notes = open_notes(window, ctx, qloop)
    show(window, qloop, ctx)
    notes.list_pane.view.setCurrentIndex(notes.model.index(row_of(notes, AISLE), 0))
    notes.editor.content.setFocus()
    notes.editor.content.moveCursor(notes.editor.content.textCursor().MoveOperation.End)
    return notes


def test_a_new_note_typed_while_the_last_one_saves_keeps_every_key(make_window, qloop):
    window, ctx, dialogs = make_window()
    notes = edit_aisle(window, ctx, qloop)
    gate = held(ctx.store, "update_note")
    type_keys(" Rows 10-15.")
    press(Qt.Key.Key_S)
    press(Qt.Key.Key_N)  # at once: not refused, not asked about (what was typed is being saved)
    type_keys("Kreuzberg flat.")
    assert notes.state.is_new and notes.editor.content.toPlainText() == "Kreuzberg flat."
    gate.set()
    settle(qloop, ctx)
    qloop.run_until_complete(ctx.poll_now())  # the file changed: by this window, which knows it
    settle(qloop, ctx)
    assert notes.state.is_new and notes.editor.content.toPlainText() == "Kreuzberg flat." and notes.dirty()
    assert AISLE + " Rows 10-15." in contents(qloop, ctx)
    press(Qt.Key.Key_S)
    settle(qloop, ctx)
    assert "Kreuzberg flat." in contents(qloop, ctx) and not notes.dirty()
    assert dialogs.conflicts == [] and dialogs.unsaved_asked == [] and dialogs.errors == []
    assert [r.description for r in notes.state.history.records] == ["edit note", "create note"]


def test_typing_on_and_saving_again_during_a_save_writes_it_all_with_no_conflict(make_window, qloop):
    window, ctx, dialogs = make_window()
    notes = edit_aisle(window, ctx, qloop)
    gate = held(ctx.store, "update_note")
    type_keys(" Rows 10-15.")
    press(Qt.Key.Key_S)
    type_keys(" Never row 1.")
    assert notes.dirty() and notes.editor.status.text() == "● unsaved changes"
    press(Qt.Key.Key_S)  # a second save while the first is written: done when it ends, over its result
    gate.set()
    settle(qloop, ctx)
    full = AISLE + " Rows 10-15. Never row 1."
    assert notes.editor.content.toPlainText() == full and not notes.dirty()
    assert full in contents(qloop, ctx) and AISLE + " Rows 10-15." not in contents(qloop, ctx)
    assert dialogs.conflicts == [] and "another program" not in notes.editor.status.text()
    assert [r.after[0].content for r in notes.state.history.records] == [AISLE + " Rows 10-15.", full]


def test_the_window_s_own_earlier_save_is_not_a_conflict(make_window, qloop):
    """The note in the file already holds exactly what is saved (a save whose answer came late): no dialog."""
    window, ctx, dialogs = make_window()
    notes = edit_aisle(window, ctx, qloop)
    loaded = notes.state.current
    qloop.run_until_complete(ctx.store.update_note("alice", loaded.note_id, AISLE + " Now.", loaded.tags))
    type_keys(" Now.")
    notes.save()
    settle(qloop, ctx)
    assert dialogs.conflicts == [] and not notes.dirty() and notes.state.current.content == AISLE + " Now."


def test_undo_goes_back_twenty_steps_in_each_of_two_formats(make_window, qloop, tmp_path):
    window, ctx, dialogs = make_window()
    demo = ctx.store.path
    notes = open_notes(window, ctx, qloop)

    def edit_twenty(user: str, note_id: str) -> str:
        for step in range(1, 21):
            row = next(i for i, n in enumerate(notes.model.notes) if n.note_id == note_id)
            notes.list_pane.view.setCurrentIndex(notes.model.index(row, 0))
            notes.editor.content.setPlainText(f"step {step}")
            notes.save()
            settle(qloop, ctx)
        return next(n.content for n in qloop.run_until_complete(ctx.store.list_notes(user)) if n.note_id == note_id)

    def undo_twenty(user: str, note_id: str) -> str:
        for _ in range(20):
            notes.undo()
            settle(qloop, ctx)
        return next(n.content for n in qloop.run_until_complete(ctx.store.list_notes(user)) if n.note_id == note_id)

    aisle = notes.model.notes[row_of(notes, AISLE)].note_id
    assert edit_twenty("alice", aisle) == "step 20" and len(notes.state.history.records) == 20

    zeke = fixtures.make_zeke(tmp_path / "zeke.db")
    window.open_path(str(zeke))
    settle(qloop, ctx)
    window.enable_editing()
    settle(qloop, ctx)
    notes.set_user("notes")
    settle(qloop, ctx)
    assert notes.state.undo_record is None  # this file's history: nothing yet
    bike = fixtures.ZEKE_IDS["n-bike"]
    before = next(n.content for n in notes.model.notes if n.note_id == bike)
    assert edit_twenty("notes", bike) == "step 20"
    dialogs.report_answer = False
    window.undo_history()
    title, heading, columns, listed = dialogs.tables[-1]
    assert (title, columns) == ("Undo history", ("Step", "Undoes", "Puts back"))
    assert len(listed) == 20 and listed[0][:2] == ("20", "edit note") and listed[0][2].startswith("step 19")
    assert heading.startswith(f"{zeke.name}: 20 edits to undo, newest first")
    assert undo_twenty("notes", bike) == before and notes.state.undo_record is None

    window.open_path(str(demo), read_only=False)
    settle(qloop, ctx)
    notes.set_user("alice")
    settle(qloop, ctx)
    assert len(notes.state.history.records) == 20  # the demo's own history came back with it
    got = undo_twenty("alice", aisle)
    assert got == AISLE and dialogs.errors == [], dialogs.errors
