"""The inspector beside a live agent: a row the agent changed since the window loaded it is never overwritten
silently. Each test changes the row from a real second process (the stand-in agent or the ``oxmem`` CLI)."""

from __future__ import annotations

import apsw
import pytest

from tests.processes import agent, oxmem
from tests.ui.conftest import DEMO_NOW, settle

AGENT_TEXT = "Alice now prefers window seats."
MINE = "Alice prefers aisle seats, ideally rows 10–15."


def select(view, row):
    view.setCurrentIndex(view.model().index(row, 0))


def edit_aisle_note(window, ctx, qloop):
    window.show_panel("notes")
    window.notes.set_user("alice")
    settle(qloop, ctx)
    notes = window.notes
    row = next(i for i, n in enumerate(notes.model.notes) if n.content.startswith("Alice prefers aisle"))
    select(notes.list_pane.view, row)
    loaded = notes.state.current
    notes.editor.content.setPlainText(MINE)
    return notes, loaded


def stored_notes(qloop, ctx):
    return {n.note_id: n for n in qloop.run_until_complete(ctx.store.list_notes("alice"))}


@pytest.mark.parametrize("answer", ["mine", "theirs", "both", "cancel"])
def test_note_changed_by_the_agent_while_edited_shows_theirs_vs_mine(make_window, qloop, answer):
    window, ctx, dialogs = make_window()
    notes, loaded = edit_aisle_note(window, ctx, qloop)
    agent(ctx.store.path, "note", "alice", loaded.note_id, AGENT_TEXT)
    qloop.run_until_complete(ctx.poll_now())
    settle(qloop, ctx)
    assert notes.editor.content.toPlainText() == MINE  # the refresh keeps the edit in progress
    assert "another program changed this note since you opened it" in notes.editor.status.text()
    dialogs.conflict_answers = [answer]
    notes.save()
    settle(qloop, ctx)
    (asked,) = dialogs.conflicts
    assert asked["title"] == "Note changed by another program"
    assert asked["message"].startswith(f"note {loaded.note_id} was changed by another program since it was loaded")
    assert asked["theirs"].startswith(AGENT_TEXT + "\n\ntags: agent") and asked["mine"].startswith(MINE)
    assert asked["choices"] == ["mine", "theirs", "both"]
    now = stored_notes(qloop, ctx)
    if answer == "mine":
        assert now[loaded.note_id].content == MINE and not notes.dirty()
        assert notes.state.undo_record.before[0].content == AGENT_TEXT  # theirs is one Undo away
        notes.undo()
        settle(qloop, ctx)
        assert stored_notes(qloop, ctx)[loaded.note_id].content == AGENT_TEXT
    elif answer == "theirs":
        assert now[loaded.note_id].content == AGENT_TEXT
        assert notes.editor.content.toPlainText() == AGENT_TEXT and not notes.dirty()
    elif answer == "both":
        assert now[loaded.note_id].content == AGENT_TEXT
        assert [n.content for n in now.values()].count(MINE) == 1 and len(now) == 7
    else:
        assert now[loaded.note_id].content == AGENT_TEXT and len(now) == 6
        assert notes.editor.content.toPlainText() == MINE and notes.dirty()  # back to editing, nothing written


def test_note_deleted_by_the_cli_while_edited_can_be_saved_again(make_window, qloop):
    window, ctx, dialogs = make_window()
    notes, loaded = edit_aisle_note(window, ctx, qloop)
    done = oxmem("--db", str(ctx.store.path), "notes", "delete", "alice", loaded.note_id)
    assert done.returncode == 0, done.stderr
    dialogs.conflict_answers = ["mine"]
    notes.save()
    settle(qloop, ctx)
    (asked,) = dialogs.conflicts
    assert asked["theirs"] == "(deleted)" and asked["message"].endswith(
        "deleted by another program since it was loaded; nothing was saved"
    )
    back = stored_notes(qloop, ctx)[loaded.note_id]
    assert (back.content, back.created_at) == (MINE, loaded.created_at)


def test_bulk_delete_and_undo_refuse_notes_changed_elsewhere(make_window, qloop):
    window, ctx, dialogs = make_window()
    window.show_panel("notes")
    window.notes.set_user("alice")
    settle(qloop, ctx)
    notes = window.notes
    notes.list_pane.view.selectAll()
    chosen = notes.selected_notes()
    agent(ctx.store.path, "note", "alice", chosen[1].note_id, AGENT_TEXT)
    notes.delete()
    settle(qloop, ctx)
    assert len(dialogs.errors) == 1 and "changed by another program" in dialogs.errors[0]
    assert len(stored_notes(qloop, ctx)) == 6  # nothing deleted

    dialogs.errors.clear()
    edited, _ = edit_aisle_note(window, ctx, qloop)
    edited.save()
    settle(qloop, ctx)
    saved = edited.state.current
    agent(ctx.store.path, "note", "alice", saved.note_id, AGENT_TEXT)
    edited.undo()
    settle(qloop, ctx)
    assert len(dialogs.errors) == 1 and "changed by another program" in dialogs.errors[0]
    assert stored_notes(qloop, ctx)[saved.note_id].content == AGENT_TEXT  # undo did not overwrite the agent


def open_briefing(window, ctx, qloop):
    """The schedules panel with the demo's "Morning briefing" selected; returns the panel and the row as loaded."""
    panel = window.schedules
    window.show_panel("schedules")
    panel.reload()
    settle(qloop, ctx)
    loaded = next(s for s in panel.state.schedules if s.name == "Morning briefing")
    panel.select(loaded.schedule_id)
    return panel, loaded


@pytest.mark.parametrize("answer", ["mine", "theirs"])
def test_schedule_edited_while_the_agent_runs_it(make_window, qloop, answer):
    window, ctx, dialogs = make_window()
    panel, loaded = open_briefing(window, ctx, qloop)
    runs_before = qloop.run_until_complete(ctx.store.schedules.run_count(loaded.schedule_id))
    dialog = panel.make_dialog(loaded)
    dialog.goal.setText("Briefing with the weather first")
    dialog.setResult(dialog.DialogCode.Accepted)
    ran = agent(ctx.store.path, "run", loaded.schedule_id)
    dialogs.conflict_answers = [answer]
    panel.edit(dialog)
    settle(qloop, ctx)
    (asked,) = dialogs.conflicts
    assert asked["title"] == "Schedule changed by another program"
    assert f"now updated {ran['updated_at']}" in asked["message"]
    assert "last run: " in asked["theirs"] and "success" in asked["theirs"]
    assert "goal: Briefing with the weather first" in asked["mine"]
    now = qloop.run_until_complete(ctx.store.schedules.get(loaded.schedule_id))
    assert qloop.run_until_complete(ctx.store.schedules.run_count(loaded.schedule_id)) == runs_before + 1
    assert now.last_run_status == "success"  # the agent's run is kept either way
    expected_goal = "Briefing with the weather first" if answer == "mine" else loaded.goal
    assert now.goal == expected_goal


def test_pause_after_the_cli_deleted_the_schedule_says_so(make_window, qloop):
    window, ctx, dialogs = make_window()
    panel, loaded = open_briefing(window, ctx, qloop)
    assert oxmem("--db", str(ctx.store.path), "schedules", "delete", loaded.schedule_id).returncode == 0
    panel.set_status("paused")
    settle(qloop, ctx)
    assert dialogs.conflicts == [] and len(dialogs.errors) == 1
    assert dialogs.errors[0].startswith(f"schedule {loaded.schedule_id} was deleted by another program")
    assert all(s.schedule_id != loaded.schedule_id for s in panel.state.schedules)


def test_a_foreign_schedule_row_is_listed_flagged(make_window, qloop):
    window, ctx, dialogs = make_window()
    now = DEMO_NOW.isoformat()
    conn = apsw.Connection(str(ctx.store.path))
    for sid, cadence, next_run in (
        ("bad-zone", '{"type":"cron","expression":"0 8 * * *","timezone":"Mars/Base"}', None),
        ("never", '{"type":"cron","expression":"0 0 31 2 *","timezone":"UTC"}', None),
        ("garbled", '{"type":"interval","every_secs":3600}', "next tuesday"),
    ):
        conn.execute(
            "INSERT INTO schedules (schedule_id, user_id, name, goal, cadence_json, created_at, updated_at, "
            "next_run_at) VALUES (?, 'alice', ?, 'g', ?, ?, ?, ?)",
            (sid, sid, cadence, now, now, next_run),
        )
    conn.close()
    panel = window.schedules
    window.show_panel("schedules")
    panel.reload()
    settle(qloop, ctx)
    assert dialogs.errors == []
    shown = {s.schedule_id: row for row, s in enumerate(panel.state.schedules)}
    cadence = {sid: panel.list_model.index(shown[sid], 2).data() for sid in ("bad-zone", "never", "garbled")}
    assert cadence == {
        "bad-zone": "⚠ cadence: unknown time zone 'Mars/Base'",
        "never": "⚠ cadence: cron expression '0 0 31 2 *' never fires: February has no day 31",
        "garbled": "⚠ next run at 'next tuesday' is not an RFC 3339 time",
    }
    assert panel.list_model.index(shown["garbled"], 4).data() == "⚠ next tuesday"
    assert [panel.list_model.index(shown[sid], 0).data() for sid in ("never", "garbled")] == ["⚠ never", "⚠ garbled"]
    assert panel.list_pane.due_label.text().endswith("· ⚠ 3 cannot be read as they are")
    panel.select("never")
    settle(qloop, ctx)
    assert panel.list_pane.cadence_view.toPlainText().endswith(
        "⚠ cadence: cron expression '0 0 31 2 *' never fires: February has no day 31"
    )
    assert panel.list_pane.next_fires.rowCount() == 0 and dialogs.errors == []
