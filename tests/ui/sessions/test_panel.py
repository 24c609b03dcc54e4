"""The session browser and the Tables panel as people use them: panes that never show a session no longer
selected, a search hit's event shown in place, tool names and whole texts at hand, an over-budget context
flagged, read-only visible before clicking, the keyboard, and a fit on a laptop screen."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QApplication

from oxmem_gui.ui.rows_model import tip
from oxmem_gui.ui.sessions.models import describe_event
from oxmem_gui.ui.sessions.panel import CONTEXT_TAB, DELETE_TIP, EVENT_COLUMN_WIDEST, EVENTS_TAB
from oxmem_gui.ui.sessions.state import NO_SESSION
from tests.ui.conftest import settle
from tests.ui.layout import unreachable

LISBON = "telegram:alice:lisbon-trip"
TIP = Qt.ItemDataRole.ToolTipRole


def select(view, row):
    view.setCurrentIndex(view.model().index(row, 0))


def open_session(window, qloop, ctx, session_id, event_row=None):
    panel = window.sessions
    assert panel.select_session(session_id)
    settle(qloop, ctx)
    if event_row is not None:
        select(panel.events_view, event_row)
    return panel


def assert_empty(panel, refusal="Select a session to delete it.", header=NO_SESSION):
    assert panel.header.text() == header and panel.selected_session() is None
    assert panel.events.rowCount() == 0 and panel.chunks.rowCount() == 0
    assert panel.json_view.toPlainText() == "" and panel.event_label.text() == ""
    assert (panel.summary_epoch.text(), panel.summary_upper.text(), panel.summary_text.toPlainText()) == ("—", "—", "")
    assert panel.context.context_table.rowCount() == 0 and panel.context.context_info.text() == ""
    assert not panel.delete_button.isEnabled() and panel.delete_button.toolTip() == refusal


# -- 1. no stale panes -----------------------------------------------------------------------------------


def test_deleting_the_selected_session_empties_every_detail_pane(make_window, qloop):
    window, ctx, dialogs = make_window()
    panel = open_session(window, qloop, ctx, "cli:alice:invoice-rounding", event_row=1)
    panel.tabs.setCurrentIndex(CONTEXT_TAB)
    settle(qloop, ctx)
    assert panel.header.text() == "Session cli:alice:invoice-rounding · 13 events · 14 chunks"
    assert panel.event_label.text().startswith("Event 2 of cli:alice:invoice-rounding · user · ")
    assert panel.context.context_table.rowCount() == 13 and panel.delete_button.isEnabled()
    panel.delete_selected()
    settle(qloop, ctx)
    assert "This removes 13 events and 14 chunks" in dialogs.confirms[-1]
    assert "cli:alice:invoice-rounding" not in [r.session_id for r in panel.sessions.rows]
    assert_empty(panel)


def test_filtering_the_selected_session_out_empties_the_panes_and_a_filter_keeping_it_keeps_them(make_window, qloop):
    window, ctx, _ = make_window()
    panel = open_session(window, qloop, ctx, LISBON, event_row=5)
    panel.filter.setText("LISBON")
    settle(qloop, ctx)
    assert [r.session_id for r in panel.sessions.rows] == [LISBON]
    assert panel.selected_session() == LISBON and panel.header.text() == f"Session {LISBON} · 15 events · 15 chunks"
    assert panel.selected_event() == 6 and json.loads(panel.json_view.toPlainText())["sequence"] == 6
    panel.filter.setText("tomatoes")
    settle(qloop, ctx)
    assert [r.session_id for r in panel.sessions.rows] == ["telegram:alice:tomatoes"]
    assert_empty(panel)


def test_a_session_deleted_by_the_agent_empties_the_panes_and_says_why(make_window, qloop):
    """The panes empty, and the heading says the session was deleted (it used to say only "No session
    selected"); choosing another session shows it as usual."""
    window, ctx, _ = make_window()
    panel = open_session(window, qloop, ctx, LISBON, event_row=2)
    qloop.run_until_complete(ctx.store.forget(LISBON))
    panel.refresh()
    settle(qloop, ctx)
    assert_empty(panel, header=f"Session {LISBON} is no longer in the file: it was deleted since it was shown")
    open_session(window, qloop, ctx, "telegram:alice:tomatoes")
    assert panel.header.text().startswith("Session telegram:alice:tomatoes · ")


def test_enabling_editing_keeps_the_session_and_event_and_enables_delete(make_window, qloop, tmp_path, monkeypatch):
    monkeypatch.setattr("oxmem_gui.ui.context.backups_dir", lambda: tmp_path / "backups")
    window, ctx, _ = make_window(read_only=True)
    panel = open_session(window, qloop, ctx, LISBON, event_row=8)
    panel.filter.setText("alice")
    settle(qloop, ctx)
    refusal = ctx.edit_refusal("events")
    assert refusal is not None and "Enable Editing" in refusal
    assert not panel.delete_button.isEnabled() and panel.delete_button.toolTip() == refusal
    qloop.run_until_complete(ctx.enable_editing())
    settle(qloop, ctx)
    assert ctx.edit_refusal("events") is None
    assert panel.filter.text() == "alice" and panel.selected_session() == LISBON
    assert panel.selected_event() == 9 and json.loads(panel.json_view.toPlainText())["sequence"] == 9
    assert panel.header.text() == f"Session {LISBON} · 15 events · 15 chunks"
    assert panel.delete_button.isEnabled() and panel.delete_button.toolTip() == DELETE_TIP


def test_opening_another_file_starts_afresh(make_window, qloop, tmp_path):
    window, ctx, _ = make_window()
    panel = open_session(window, qloop, ctx, LISBON, event_row=2)
    panel.filter.setText("lisbon")
    settle(qloop, ctx)
    other = tmp_path / "other.db"
    qloop.run_until_complete(ctx.store.backup_to(other))
    qloop.run_until_complete(ctx.open(other, read_only=True, embedding="deterministic"))
    settle(qloop, ctx)
    assert panel.filter.text() == "" and panel.sessions.rowCount() == 6
    assert_empty(panel, ctx.edit_refusal("events"))


# -- 2. show_event -----------------------------------------------------------------------------------------


def test_show_event_clears_a_hiding_filter_selects_the_session_and_the_event(make_window, qloop):
    window, ctx, _ = make_window()
    panel = window.sessions
    panel.tabs.setCurrentIndex(CONTEXT_TAB)
    panel.filter.setText("tomatoes")
    settle(qloop, ctx)
    panel.show_event(LISBON, 9)
    settle(qloop, ctx)
    assert panel.filter.text() == "" and panel.selected_session() == LISBON
    assert panel.tabs.currentIndex() == EVENTS_TAB
    assert panel.events_view.currentIndex().row() == 8 and panel.selected_event() == 9
    assert panel.event_label.text().startswith(f"Event 9 of {LISBON} · assistant · ")
    shown = json.loads(panel.json_view.toPlainText())
    assert shown["payload"]["tool_calls"][0]["name"] == "memory_save"
    # the same session already shown: only the event changes
    panel.show_event(LISBON, 2)
    settle(qloop, ctx)
    assert panel.selected_event() == 2 and panel.header.text() == f"Session {LISBON} · 15 events · 15 chunks"


def test_show_event_loads_pages_until_the_event_and_scrolls_to_it(make_window, qloop):
    window, ctx, _ = make_window()
    window.show()
    window.resize(1024, 640)

    async def long_session():
        for i in range(1, 451):
            await ctx.store.store("agent:long-history", i, {"role": "user", "content": f"message number {i}"})

    qloop.run_until_complete(long_session())
    window.sessions.refresh()
    settle(qloop, ctx)
    panel = window.sessions
    panel.show_event("agent:long-history", 437)
    settle(qloop, ctx)
    assert panel.events.rowCount() == 450  # three pages of 200
    index = panel.events_view.currentIndex()
    assert index.row() == 436 and panel.selected_event() == 437
    assert panel.events_view.viewport().rect().intersects(panel.events_view.visualRect(index))
    assert panel.events.index(436, 4).data() == "message number 437"


def test_show_event_of_a_missing_event_or_session_says_so(make_window, qloop):
    window, ctx, _ = make_window()
    panel = window.sessions
    panel.show_event(LISBON, 99)
    settle(qloop, ctx)
    assert panel.selected_session() == LISBON and panel.selected_event() is None
    assert panel.event_label.text() == f"Event 99 is not in {LISBON}" and panel.json_view.toPlainText() == ""
    panel.show_event("telegram:nobody", 1)
    settle(qloop, ctx)
    assert panel.header.text() == "Session telegram:nobody is not in this store"
    assert panel.selected_session() is None and panel.events.rowCount() == 0


# -- 3. tool names and tooltips ----------------------------------------------------------------------------


def test_event_rows_name_the_tool_when_the_message_also_has_text(make_window, qloop):
    window, ctx, _ = make_window()
    panel = open_session(window, qloop, ctx, LISBON)
    events = panel.events
    assert (
        events.index(8, 4)
        .data()
        .startswith("→ tool memory_save — Booked. I'll remember your seat preference. tool memory_save arguments {")
    )
    assert events.index(2, 4).data().startswith("→ tool search_flights arguments {")
    full = events.index(8, 4).data(TIP)
    assert full.replace("\n", " ").endswith('"tags":["travel"]}') and "memory_save arguments" in full


def test_every_table_has_tooltips_with_the_whole_text(make_window, qloop):
    window, ctx, _ = make_window()
    panel = open_session(window, qloop, ctx, LISBON)
    events = panel.events
    output = events.rows[3]
    shown = events.index(3, 4).data()
    assert len(shown) == 160 and shown.endswith("…")
    assert events.index(3, 4).data(TIP).replace("\n", " ") == "← " + output.payload["content"]
    assert events.index(3, 3).data(TIP) == output.created_at and events.index(3, 0).data(TIP) is None
    sessions = panel.sessions
    row = [r.session_id for r in sessions.rows].index(LISBON)
    assert sessions.index(row, 1).data(TIP) == sessions.rows[row].updated_at
    assert sessions.index(row, 0).data(TIP).startswith(LISBON)
    chunks = panel.chunks
    assert chunks.index(0, 0).data(TIP) == chunks.rows[0].chunk_id
    assert chunks.index(3, 4).data(TIP) == tip(chunks.rows[3].text)
    panel.tabs.setCurrentIndex(CONTEXT_TAB)
    settle(qloop, ctx)
    preview = qloop.run_until_complete(ctx.store.context_preview(LISBON, 2000))
    assert panel.context.context_table.item(0, 4).toolTip() == tip(preview.summary_message)
    assert panel.context.context_table.item(0, 4).text().endswith("…")

    window.show_panel("tables")
    settle(qloop, ctx)
    tables = window.tables
    assert tables.select_table("conversation_events")
    settle(qloop, ctx)
    model = tables.model
    column = model.columns.index("payload_json")
    long_row = next(r for r, values in enumerate(model.rows) if len(values[column]) > 80)
    cell = model.index(long_row, column)
    assert cell.data().endswith("…") and len(cell.data()) == 80
    assert cell.data(TIP).replace("\n", " ") == model.rows[long_row][column]
    assert tables.title.text() == "conversation_events: rows 1–50"
    items = [tables.list.item(i).text() for i in range(tables.list.count())]
    assert "chunks_fts_config  (shadow, 1 row)" in items and "sessions  (table, 6 rows)" in items


def test_tip_breaks_long_lines_at_spaces_and_keeps_every_character():
    text = " ".join(f"word{i}" for i in range(60))
    lines = tip(text).split("\n")
    assert all(len(line) <= 100 for line in lines) and len(lines) == 5
    assert tip(text).replace("\n", " ") == text
    assert tip("x" * 5000).endswith("…\n(5,000 characters in all)")


# -- 4. over budget and plurals ----------------------------------------------------------------------------


def test_context_over_the_budget_is_flagged_with_the_figures(make_window, qloop):
    window, ctx, _ = make_window()
    window.show()
    panel = open_session(window, qloop, ctx, LISBON)
    panel.tabs.setCurrentIndex(CONTEXT_TAB)
    settle(qloop, ctx)
    assert panel.context.context_warning.isHidden()
    preview = qloop.run_until_complete(ctx.store.context_preview(LISBON, 2000))
    assert panel.context.context_info.text() == (
        f"{preview.used:,} of 2,000 tokens — summary message: {preview.summary_tokens} tokens; "
        "1 message included, 0 dropped, 14 covered by the summary"
    )
    panel.context.budget.setValue(50)
    settle(qloop, ctx)
    small = qloop.run_until_complete(ctx.store.context_preview(LISBON, 50))
    assert small.used > 50
    assert panel.context.context_warning.isVisible()
    assert panel.context.context_warning.text() == (
        f"⚠ {small.used:,} tokens — {small.used - 50:,} over the 50 budget: "
        f"the summary message alone takes {small.summary_tokens:,} tokens"
    )
    assert panel.context.context_info.text().endswith("0 messages included, 1 dropped, 14 covered by the summary")
    panel.context.budget.setValue(2000)
    settle(qloop, ctx)
    assert panel.context.context_warning.isHidden()


def test_counts_of_one_are_singular(make_window, qloop):
    window, ctx, dialogs = make_window()
    qloop.run_until_complete(ctx.store.store("solo", 1, {"role": "user", "content": "just one"}))
    window.sessions.refresh()
    settle(qloop, ctx)
    panel = open_session(window, qloop, ctx, "solo")
    assert panel.header.text() == "Session solo · 1 event · 1 chunk"
    panel.delete_selected()
    settle(qloop, ctx)
    assert "This removes 1 event and 1 chunk with" in dialogs.confirms[-1]


def test_event_text_of_several_tool_calls_names_them_all():
    from oxmem_gui.core.store.events import Event

    payload = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "a", "name": "one", "arguments": {}}, {"id": "b", "name": "two"}],
    }
    role, source, text = describe_event(Event(4, "2037-01-01T00:00:00Z", payload))
    assert (role, source) == ("assistant", "assistant_tool_call")
    assert text == "→ tool one, two — tool one arguments {}\ntool two invocation"


# -- 5 and 6. read-only visible, keyboard ------------------------------------------------------------------


def test_read_only_disables_delete_with_the_reason_and_no_error(make_window, qloop):
    window, ctx, dialogs = make_window(read_only=True)
    panel = open_session(window, qloop, ctx, LISBON)
    assert not panel.delete_button.isEnabled()
    assert panel.delete_button.toolTip() == ctx.edit_refusal("events")
    panel.delete_button.click()
    settle(qloop, ctx)
    assert dialogs.errors == [] and dialogs.confirms == []


def test_tab_leaves_every_table_and_escape_clears_the_filters(make_window, qloop, qtbot):
    window, ctx, _ = make_window()
    window.show()
    for panel in (window.sessions, window.tables):
        views = panel.findChildren(QAbstractItemView)
        assert len(views) >= 2 and not any(v.tabKeyNavigation() for v in views), panel
    sessions = window.sessions
    sessions.filter.setText("tomatoes")
    settle(qloop, ctx)
    assert sessions.sessions.rowCount() == 1
    sessions.filter.setFocus()
    qtbot.keyClick(sessions.filter, Qt.Key.Key_Escape)
    settle(qloop, ctx)
    assert sessions.filter.text() == "" and sessions.sessions.rowCount() == 6

    window.show_panel("tables")
    settle(qloop, ctx)
    tables = window.tables
    tables.filter.setText("SCHED")
    names = [tables.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(tables.list.count())]
    visible = [n for i, n in enumerate(names) if not tables.list.item(i).isHidden()]
    assert visible == ["schedule_runs", "schedules"] and len(names) == 15
    tables.filter.setFocus()
    qtbot.keyClick(tables.filter, Qt.Key.Key_Escape)
    assert tables.filter.text() == ""
    assert not any(tables.list.item(i).isHidden() for i in range(tables.list.count()))


def test_tables_panel_keeps_its_table_rows_and_cell_on_refresh(make_window, qloop):
    window, ctx, _ = make_window()
    window.show_panel("tables")
    settle(qloop, ctx)
    tables = window.tables
    tables.select_table("conversation_events")
    settle(qloop, ctx)
    tables.view.setCurrentIndex(tables.model.index(5, 2))
    before = tables.cell.toPlainText()
    tables.reload()
    settle(qloop, ctx)
    assert tables.current == "conversation_events" and tables.model.rowCount() == 50
    assert tables.view.currentIndex().row() == 5 and tables.cell.toPlainText() == before


# -- 7. fits -------------------------------------------------------------------------------------------------


def fits(panel):
    hint = panel.minimumSizeHint()
    assert hint.width() <= 840 and hint.height() <= 520, hint
    return hint.toTuple()


def test_both_panels_fit_and_long_content_does_not_widen_them(make_window, qloop):
    window, ctx, _ = make_window()
    sessions, tables = window.sessions, window.tables
    before = (fits(sessions), fits(tables))
    long_id = "telegram:" + "x" * 300
    long_text = "y" * 5000

    async def long_content():
        await ctx.store.store(long_id, 1, {"role": "user", "content": long_text})
        await ctx.store.store(long_id, 2, {"role": "assistant", "content": "z " * 3000})

    qloop.run_until_complete(long_content())
    sessions.refresh()
    settle(qloop, ctx)
    window.show()
    window.resize(1024, 640)
    window.show_panel("sessions")
    open_session(window, qloop, ctx, long_id, event_row=0)
    for tab in range(4):
        sessions.tabs.setCurrentIndex(tab)
        settle(qloop, ctx)
        assert unreachable(window) == [], tab
    assert sessions.header.text().startswith(f"Session {long_id}")
    window.show_panel("tables")
    settle(qloop, ctx)
    tables.select_table("conversation_events")
    settle(qloop, ctx)
    tables.view.setCurrentIndex(tables.model.index(tables.model.rowCount() - 2, 2))
    assert long_text in tables.cell.toPlainText()
    assert unreachable(window) == []
    assert (fits(sessions), fits(tables)) == before


def test_at_1024_by_640_an_events_text_gets_the_room_and_a_long_source_is_cut_with_its_tooltip(make_window, qloop):
    window, ctx, _ = make_window()
    window.resize(1024, 640)
    window.show()
    window.show_panel("sessions")
    panel = open_session(window, qloop, ctx, LISBON, event_row=0)
    QApplication.processEvents()
    view, model = panel.events_view, panel.events
    assert view.columnWidth(4) >= 180, [view.columnWidth(c) for c in range(5)]
    assert view.columnWidth(2) <= EVENT_COLUMN_WIDEST  # 'assistant_tool_call' is cut…
    call = next(r for r in range(model.rowCount()) if model.index(r, 2).data() == "assistant_tool_call")
    assert model.index(call, 2).data(TIP) == "assistant_tool_call"  # …and whole in its tooltip
    time = model.index(0, 3)
    assert view.columnWidth(3) >= view.fontMetrics().horizontalAdvance(time.data())  # the time is never cut


def test_the_panel_alone_shows_a_session_and_says_when_the_agent_deleted_it(alone, qloop):
    from oxmem_gui.ui.sessions.panel import SessionsPanel

    panel, ctx, _ = alone(SessionsPanel, read_only=False)
    assert panel.sessions.rowCount() >= 2
    assert panel.select_session(LISBON)
    settle(qloop, ctx)
    assert panel.shown_session() == LISBON and panel.header.text().startswith(f"Session {LISBON} · ")
    select(panel.events_view, 0)
    assert panel.event_label.text().startswith(f"Event 1 of {LISBON} · ")
    qloop.run_until_complete(ctx.store.forget(LISBON))  # as the agent would: not through this panel
    panel.refresh()
    settle(qloop, ctx)
    assert panel.header.text() == f"Session {LISBON} is no longer in the file: it was deleted since it was shown"
    assert panel.shown_session() is None and panel.events.rowCount() == 0
