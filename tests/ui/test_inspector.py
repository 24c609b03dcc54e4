"""The inspector, offscreen: models, the session browser, the note editor, read-only safety, live refresh."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import apsw

from oxmem_gui.core import MemoryStore
from tests.ui.conftest import settle


def select(view, row):
    view.setCurrentIndex(view.model().index(row, 0))


def session_row(window, session_id):
    return [r.session_id for r in window.sessions.sessions.rows].index(session_id)


def test_models_pass_qt_model_tester(make_window, qtmodeltester, qloop):
    window, ctx, _ = make_window()
    select(window.sessions.sessions_view, 0)
    settle(qloop, ctx)
    window.show_panel("notes")
    settle(qloop, ctx)
    for model in (window.sessions.sessions, window.sessions.events, window.sessions.chunks, window.notes.model):
        assert model.rowCount() > 0
        qtmodeltester.check(model)


def test_sessions_most_recent_first_with_lazy_counts(make_window, qloop):
    window, ctx, _ = make_window()
    rows = window.sessions.sessions.rows
    assert len(rows) == 6 and {r.session_id for r in rows} >= {"memory:alice", "telegram:alice:lisbon-trip"}
    model = window.sessions.sessions
    lisbon = session_row(window, "telegram:alice:lisbon-trip")
    assert [model.index(lisbon, c).data() for c in (2, 3, 4)] == ["15", "15", "15"]


def test_select_a_session_and_see_its_events_summary_chunks(make_window, qloop):
    window, ctx, _ = make_window()
    panel = window.sessions
    select(panel.sessions_view, session_row(window, "telegram:alice:lisbon-trip"))
    settle(qloop, ctx)
    events = panel.events
    assert events.rowCount() == 15
    assert [events.index(0, c).data() for c in (0, 1, 2)] == ["1", "system", "system_message"]
    assert events.index(2, 4).data().startswith("→ tool search_flights arguments {")
    assert events.index(3, 2).data() == "tool_output" and events.index(3, 4).data().startswith("← {")
    select(panel.events_view, 5)
    shown = json.loads(panel.json_view.toPlainText())
    assert shown["sequence"] == 6 and shown["payload"]["role"] == "user"
    assert panel.summary_epoch.text() == "1" and panel.summary_upper.text() == "14"
    assert panel.summary_text.toPlainText().startswith("Recent condensed turns:\n- [1] system:")
    assert panel.chunks.rowCount() == 15 and panel.chunks.index(0, 3).data() == "64"
    panel.tabs.setCurrentIndex(3)
    panel.context.budget.setValue(600)
    settle(qloop, ctx)
    statuses = [panel.context.context_table.item(r, 1).text() for r in range(panel.context.context_table.rowCount())]
    assert statuses[0] == "summary" and statuses.count("summarized") == 14 and statuses[-1] == "included"


def test_payload_that_is_not_a_message_is_flagged(make_window, qloop, tmp_path):
    window, ctx, _ = make_window()
    qloop.run_until_complete(ctx.store.store("odd", 1, ["a", "list"]))
    window.sessions.refresh()
    settle(qloop, ctx)
    select(window.sessions.sessions_view, session_row(window, "odd"))
    settle(qloop, ctx)
    assert window.sessions.events.index(0, 4).data() == "⚠ not indexed: payload is a JSON list, not a message object"


def open_notes(window, ctx, qloop, user="alice"):
    window.show_panel("notes")
    window.notes.set_user(user)
    settle(qloop, ctx)


def test_edit_a_note_and_find_the_change_in_the_store(make_window, qloop, qtbot):
    window, ctx, _ = make_window()
    open_notes(window, ctx, qloop)
    notes = window.notes
    target = next(i for i, n in enumerate(notes.model.notes) if n.content.startswith("Alice prefers aisle"))
    note_id = notes.model.notes[target].note_id
    select(notes.list_pane.view, target)
    assert notes.editor.content.toPlainText() == "Alice prefers aisle seats on flights."
    notes.editor.content.setPlainText("Alice prefers aisle seats, ideally rows 10–15.")
    qtbot.keyClicks(notes.editor.tags.input, " Seats ,")  # normalized as typed, committed on the comma
    notes.editor.tags.remove("preferences")
    assert notes.editor.tags.tags() == ["travel", "seats"] and notes.dirty()
    notes.save()
    settle(qloop, ctx)
    stored = qloop.run_until_complete(ctx.store.get_note("alice", note_id))
    assert (stored.content, stored.tags) == ("Alice prefers aisle seats, ideally rows 10–15.", ["travel", "seats"])
    assert not notes.dirty() and notes.state.current.note_id == note_id
    assert notes.state.undo_record.description == "edit note"
    notes.undo()
    settle(qloop, ctx)
    back = qloop.run_until_complete(ctx.store.get_note("alice", note_id))
    assert (back.content, back.tags) == ("Alice prefers aisle seats on flights.", ["travel", "preferences"])


def test_read_only_refuses_edits_with_a_message(make_window, qloop):
    window, ctx, dialogs = make_window(read_only=True)
    assert window.mode_label.text() == "Read-only" and not window.enable_button.isHidden()
    open_notes(window, ctx, qloop)
    select(window.notes.list_pane.view, 0)
    before = window.notes.state.current
    window.notes.editor.content.setPlainText("changed")
    window.notes.save()
    window.notes.delete()
    window.sessions.delete_selected() if window.sessions.selected_session() else None
    settle(qloop, ctx)
    assert dialogs.errors and all("read-only" in e and "Enable Editing" in e for e in dialogs.errors)
    assert qloop.run_until_complete(ctx.store.get_note("alice", before.note_id)).content == before.content


def test_enable_editing_takes_a_backup_first(make_window, qloop, tmp_path, monkeypatch):
    monkeypatch.setattr("oxmem_gui.ui.context.backups_dir", lambda: tmp_path / "backups")
    window, ctx, _ = make_window(read_only=True)
    qloop.run_until_complete(ctx.enable_editing())
    settle(qloop, ctx)
    assert not ctx.read_only and window.mode_label.text() == "Editing" and window.enable_button.isHidden()
    copy = apsw.Connection(str(ctx.backup_path))
    assert copy.execute("SELECT count(*) FROM sessions").fetchall() == [(6,)]
    copy.close()
    assert ctx.backup_path.parent == tmp_path / "backups"


def test_unsaved_changes_guard(make_window, qloop):
    window, ctx, dialogs = make_window()
    open_notes(window, ctx, qloop)
    notes = window.notes
    select(notes.list_pane.view, 0)
    first = notes.state.current
    notes.editor.content.setPlainText("half-typed thought")
    dialogs.unsaved_answers = ["cancel"]
    select(notes.list_pane.view, 1)
    assert notes.state.current.note_id == first.note_id and notes.editor.content.toPlainText() == "half-typed thought"
    assert notes.list_pane.view.currentIndex().row() == 0
    dialogs.unsaved_answers = ["discard"]
    select(notes.list_pane.view, 1)
    assert notes.state.current.note_id == notes.model.notes[1].note_id and not notes.dirty()
    notes.editor.content.setPlainText("more")
    dialogs.unsaved_answers = ["cancel"]
    assert not window.close()
    dialogs.unsaved_answers = ["discard"]
    assert window.close()


def test_bulk_tags_bulk_delete_and_undo(make_window, qloop):
    window, ctx, dialogs = make_window()
    open_notes(window, ctx, qloop)
    notes = window.notes
    notes.list_pane.view.selectAll()
    dialogs.texts = ["Trip"]
    notes.bulk_tags(add=True)
    settle(qloop, ctx)
    assert dialogs.confirms[-1] == "Add trip to 6 of the 6 selected notes?"
    assert all("trip" in n.tags for n in qloop.run_until_complete(ctx.store.list_notes("alice")))
    notes.undo()
    settle(qloop, ctx)
    assert not any("trip" in n.tags for n in qloop.run_until_complete(ctx.store.list_notes("alice")))
    notes.list_pane.view.selectAll()
    notes.delete()
    settle(qloop, ctx)
    assert dialogs.confirms[-1].startswith("Delete 6 notes?")
    assert qloop.run_until_complete(ctx.store.list_notes("alice")) == []
    notes.undo()
    settle(qloop, ctx)
    assert len(qloop.run_until_complete(ctx.store.list_notes("alice"))) == 6


def test_delete_session_states_the_impact(make_window, qloop):
    window, ctx, dialogs = make_window()
    select(window.sessions.sessions_view, session_row(window, "cli:alice:invoice-rounding"))
    settle(qloop, ctx)
    window.sessions.delete_selected()
    settle(qloop, ctx)
    assert "This removes 13 events and 14 chunks" in dialogs.confirms[-1]
    assert "cli:alice:invoice-rounding" not in [r.session_id for r in window.sessions.sessions.rows]


def test_export_and_import_notes(make_window, qloop, tmp_path):
    window, ctx, dialogs = make_window()
    open_notes(window, ctx, qloop)
    dialogs.files = [tmp_path / "notes.json", tmp_path / "notes.md"]
    window.notes.export()
    settle(qloop, ctx)
    window.notes.export()
    settle(qloop, ctx)
    exported = json.loads((tmp_path / "notes.json").read_text())
    assert len(exported) == 6 and set(exported[0]) == {"note_id", "user", "content", "tags", "created_at", "updated_at"}
    assert (tmp_path / "notes.md").read_text().startswith("# Notes of alice\n\n## ")
    qloop.run_until_complete(ctx.store.delete_notes("alice", [n["note_id"] for n in exported]))
    dialogs.files = [tmp_path / "notes.json"]
    window.notes.import_notes()
    settle(qloop, ctx)
    back = qloop.run_until_complete(ctx.store.list_notes("alice"))
    assert sorted((n.note_id, n.created_at) for n in back) == sorted((n["note_id"], n["created_at"]) for n in exported)
    (tmp_path / "bad.json").write_text('[{"note_id": "x"}]')
    dialogs.files = [tmp_path / "bad.json"]
    window.notes.import_notes()
    settle(qloop, ctx)
    assert dialogs.errors[-1] == "note 1 has no user"


def test_live_refresh_keeps_selection(make_window, qloop, tmp_path):
    window, ctx, _ = make_window()
    panel = window.sessions
    select(panel.sessions_view, session_row(window, "telegram:alice:tomatoes"))
    settle(qloop, ctx)
    select(panel.events_view, 2)

    async def agent_writes():
        other = await MemoryStore.open(tmp_path / "demo.db", embedding="deterministic")
        await other.store("telegram:alice:tomatoes", 5, {"role": "user", "content": "They look better now!"})
        await other.store("agent:new-session", 1, {"role": "user", "content": "hello"})
        await other.aclose()

    qloop.run_until_complete(agent_writes())
    qloop.run_until_complete(ctx.poll_now())
    settle(qloop, ctx)
    assert "agent:new-session" in [r.session_id for r in panel.sessions.rows]
    assert panel.selected_session() == "telegram:alice:tomatoes"
    assert panel.events.rowCount() == 5 and panel.events_view.currentIndex().row() == 2


def test_import_events_runs_with_progress_off_the_gui_thread(make_window, qloop, tmp_path):
    window, ctx, dialogs = make_window()
    lines = [
        json.dumps({"session_id": "bulk", "sequence": i, "payload": {"role": "user", "content": f"m{i}"}})
        for i in range(1, 3001)
    ]
    (tmp_path / "e.jsonl").write_text("\n".join(lines))
    seen = []
    ctx.progress.connect(lambda label, done, total: seen.append((done, total)))
    dialogs.files = [tmp_path / "e.jsonl"]
    window.import_events()
    settle(qloop, ctx)
    assert seen and seen[-1] == (3000, 3000)
    assert "bulk" in [r.session_id for r in window.sessions.sessions.rows]
    assert window.progress.isHidden()


def test_screenshot_of_each_panel(tmp_path):
    for panel in ("sessions", "notes", "search", "schedules"):
        shot = tmp_path / f"{panel}.png"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "oxmem_gui",
                "--demo",
                "--embedding",
                "deterministic",
                "--panel",
                panel,
                "--screenshot",
                str(shot),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        )
        assert done.returncode == 0, done.stderr
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "x.db"
    bad.write_text("not sqlite " * 50)
    done = subprocess.run(
        [sys.executable, "-m", "oxmem_gui", str(bad), "--screenshot", str(tmp_path / "s.png")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == f"oxmem-gui: error: {bad} is not a SQLite database"


def test_back_up_to_asks_before_replacing_a_database_and_refuses_a_device(make_window, qloop, tmp_path):
    """An existing SQLite file is replaced only after a question naming what it is (declined: untouched); a FIFO
    — or a device, a folder, a link — is refused in one dialog line, never replaced."""
    window, ctx, dialogs = make_window(read_only=True)
    old = tmp_path / "old-copy.db"
    conn = apsw.Connection(str(old))
    conn.execute("CREATE TABLE precious (x); INSERT INTO precious VALUES ('keep me')")
    conn.close()
    before = old.read_bytes()
    dialogs.files, dialogs.confirm_answer = [old], False
    window.back_up()
    settle(qloop, ctx)
    assert len(dialogs.confirms) == 1 and dialogs.confirms[0].startswith(f"{old} already exists: a SQLite database, ")
    assert dialogs.errors == [] and old.read_bytes() == before
    dialogs.files, dialogs.confirm_answer = [old], True
    window.back_up()
    settle(qloop, ctx)
    assert dialogs.errors == [] and window.statusBar().currentMessage() == f"Backed up to {old}"
    conn = apsw.Connection(str(old), flags=apsw.SQLITE_OPEN_READONLY)
    assert conn.execute("SELECT count(*) FROM conversation_events").fetchall()[0][0] > 0
    conn.close()
    fifo = tmp_path / "pipe.db"
    os.mkfifo(fifo)
    dialogs.files = [fifo]
    window.back_up()
    settle(qloop, ctx)
    assert dialogs.errors == [
        f"{fifo} is a FIFO (named pipe): a backup is written only to a regular file; nothing was written"
    ]
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and len(dialogs.confirms) == 2


def test_back_up_to_writes_a_whole_copy_where_the_user_says(make_window, qloop, tmp_path):
    window, ctx, dialogs = make_window(read_only=True)
    target = tmp_path / "elsewhere" / "copy.db"
    target.parent.mkdir()
    dialogs.files = [target]
    window.back_up()  # File ▸ Back Up To…
    settle(qloop, ctx)
    assert dialogs.errors == []
    assert window.statusBar().currentMessage() == f"Backed up to {target}"
    conn = apsw.Connection(str(target), flags=apsw.SQLITE_OPEN_READONLY)
    copied = conn.execute("SELECT count(*) FROM conversation_events").fetchall()[0][0]
    conn.close()
    source = apsw.Connection(str(ctx.store.path), flags=apsw.SQLITE_OPEN_READONLY)
    assert copied == source.execute("SELECT count(*) FROM conversation_events").fetchall()[0][0] > 0
    source.close()
