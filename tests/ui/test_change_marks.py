"""What the agent changes as it happens, written by a real second process: new and changed rows are marked until
seen, each panel's entry counts them, rows keep their place while the pointer is over the list, and Pause Live
Updates freezes the view, saying how many changes wait."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QApplication

from tests.core.formats import fixtures
from tests.processes import agent
from tests.ui.conftest import settle
from tests.ui.test_formats import open_as_demo

LISBON = "telegram:alice:lisbon-trip"
DOT = Qt.ItemDataRole.DecorationRole
TINT = Qt.ItemDataRole.BackgroundRole


def the_agent_wrote(qloop, ctx, *args: str) -> dict:
    report = agent(ctx.store.path, *args)
    qloop.run_until_complete(ctx.poll_now())
    settle(qloop, ctx)
    return report


def rows_marked(model) -> list[int]:
    return [r for r in range(model.rowCount()) if model.index(r, 0).data(DOT) is not None]


def open_everything(make_window, qloop):
    window, ctx, dialogs = make_window()
    window.show()
    window.sessions.select_session("telegram:alice:tomatoes")
    window.notes.set_user("alice")
    window.schedules.reload()
    settle(qloop, ctx)
    assert window.unseen() == {"sessions": 0, "notes": 0, "schedules": 0}
    return window, ctx, dialogs


def test_what_the_agent_adds_or_changes_is_marked_and_counted_until_seen(make_window, qloop):
    window, ctx, _ = open_everything(make_window, qloop)
    sessions, notes, schedules = window.sessions, window.notes, window.schedules
    aisle = next(n for n in notes.model.notes if n.content.startswith("Alice prefers aisle"))
    lisbon = next(s for s in schedules.state.schedules if s.name == "Lisbon fare tracker")

    the_agent_wrote(qloop, ctx, "events", "--session", LISBON, "--seconds", "0.2", "--rate", "20")
    the_agent_wrote(qloop, ctx, "note", "alice", aisle.note_id, "Alice now prefers window seats.")
    the_agent_wrote(qloop, ctx, "run", lisbon.schedule_id)

    # the events went to Lisbon's session; the note is indexed in alice's notes session, so it changed too
    marked = {sessions.sessions.row(r).session_id for r in rows_marked(sessions.sessions)}
    assert marked == {LISBON, "memory:alice"}
    assert window.unseen() == {"sessions": 2, "notes": 1, "schedules": 1}
    assert [window.nav.item(i).text() for i in range(5)] == [
        "Sessions · 2",
        "Notes · 1",
        "Search",
        "Schedules · 1",
        "Tables",
    ]
    tinted = {sessions.sessions.row(r).session_id for r in range(6) if sessions.sessions.index(r, 2).data(TINT)}
    assert tinted == marked
    (row,) = rows_marked(notes.model)
    assert notes.model.notes[row].note_id == aisle.note_id and notes.model.notes[row].content.startswith("Alice now")
    (row,) = rows_marked(schedules.list_model)
    assert schedules.state.schedules[row].schedule_id == lisbon.schedule_id
    # the session shown (tomatoes) was not touched: nothing of it is marked
    assert rows_marked(sessions.events) == []

    sessions.select_session(LISBON)  # seeing it
    settle(qloop, ctx)
    assert window.unseen()["sessions"] == 1 and window.nav.item(0).text() == "Sessions · 1"
    # new events of the session shown are marked as they arrive
    before = sessions.events.rowCount()
    report = the_agent_wrote(qloop, ctx, "events", "--session", LISBON, "--seconds", "0.2", "--rate", "20")
    assert sessions.selected_session() == LISBON
    assert report["written"] >= 1 and window.unseen()["sessions"] == 1 + report["written"]  # its row is seen
    assert rows_marked(sessions.events) == list(range(before, before + report["written"]))

    window.seen_action.trigger()  # View ▸ Mark Changes Seen
    assert window.unseen() == {"sessions": 0, "notes": 0, "schedules": 0}
    assert rows_marked(notes.model) == rows_marked(schedules.list_model) == rows_marked(sessions.events) == []
    assert [window.nav.item(i).text() for i in range(5)] == ["Sessions", "Notes", "Search", "Schedules", "Tables"]


def test_pause_live_updates_freezes_the_view_and_says_how_many_changes_wait(make_window, qloop):
    window, ctx, _ = open_everything(make_window, qloop)
    sessions = window.sessions
    shown = [r.session_id for r in sessions.sessions.rows]
    window.pause_action.trigger()
    assert ctx.paused and window.paused_label.isVisible()
    assert window.paused_label.text() == "Live updates paused"
    the_agent_wrote(qloop, ctx, "events", "--session", "agent:new", "--seconds", "0.1")
    assert window.paused_label.text() == "Live updates paused · 1 change waits"
    the_agent_wrote(qloop, ctx, "events", "--session", "agent:new", "--seconds", "0.1")
    assert window.paused_label.text() == "Live updates paused · 2 changes wait"
    assert [r.session_id for r in sessions.sessions.rows] == shown  # frozen
    window.pause_action.trigger()  # live again: what waited shows at once, marked
    settle(qloop, ctx)
    assert not ctx.paused and not window.paused_label.isVisible() and ctx.waiting == 0
    assert [r.session_id for r in sessions.sessions.rows] == ["agent:new", *shown]
    assert rows_marked(sessions.sessions) == [0] and window.unseen()["sessions"] == 1


def test_rows_keep_their_place_while_the_pointer_is_over_the_list(make_window, qloop):
    window, ctx, _ = open_everything(make_window, qloop)
    sessions = window.sessions
    shown = [r.session_id for r in sessions.sessions.rows]
    viewport = sessions.sessions_view.viewport()
    viewport.setAttribute(Qt.WidgetAttribute.WA_UnderMouse, True)  # the pointer is over the rows
    the_agent_wrote(qloop, ctx, "events", "--session", "agent:new", "--seconds", "0.1")
    assert [r.session_id for r in sessions.sessions.rows] == shown and sessions.agent_wrote.pending
    viewport.setAttribute(Qt.WidgetAttribute.WA_UnderMouse, False)
    QApplication.sendEvent(viewport, QEvent(QEvent.Type.Leave))  # it leaves: the list catches up
    settle(qloop, ctx)
    assert [r.session_id for r in sessions.sessions.rows] == ["agent:new", *shown]
    assert not sessions.agent_wrote.pending and rows_marked(sessions.sessions) == [0]


def test_the_count_goes_after_the_name_the_format_gives_the_panel(make_window, qloop, tmp_path):
    open_as_demo(fixtures.write_all(tmp_path / "formats"), "zeke", tmp_path)
    window, ctx, _ = make_window(read_only=True)
    settle(qloop, ctx)
    assert [window.nav.item(i).text() for i in range(5)] == ["Sessions", "Memories", "Search", "Schedules", "Tables"]
    assert window.nav.item(0).toolTip() == "ZEKE memory files have no sessions"
    window.notes.model.marks.mark("any")
    assert (
        window.nav.item(1).text() == "Memories · 1"
        and window.nav.item(0).toolTip() == "ZEKE memory files have no sessions"
    )
