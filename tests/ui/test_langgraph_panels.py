"""A LangGraph checkpoints file (written by LangGraph's own graph and SqliteSaver, a test dependency) in the
inspector: a thread's messages, and its checkpoints as a timeline stepped through in the Timeline tab."""

from __future__ import annotations

import pytest

from tests.ui.conftest import settle
from tests.ui.test_openai_agents_panels import aside

pytest.importorskip("langgraph.graph", reason="LangGraph writes these files (a test dependency)")


def test_a_threads_checkpoints_are_stepped_through_in_the_timeline_tab(make_window, qloop, tmp_path):
    from oxmem_gui.ui.sessions.panel import TIMELINE_TAB
    from tests.core.formats.test_langgraph_checkpoints import config, langgraph, write

    aside(write, tmp_path / "demo.db")  # the path make_window opens

    def history():
        with langgraph(tmp_path / "demo.db") as (_, saver):
            return list(saver.list(config("weather")))

    checkpoints = aside(history)
    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    window.show_panel("sessions")
    panel = window.sessions
    assert panel.tabs.isTabVisible(TIMELINE_TAB)
    assert panel.select_session("weather")
    settle(qloop, ctx)
    panel.tabs.setCurrentIndex(TIMELINE_TAB)
    settle(qloop, ctx)
    timeline = panel.timeline
    ids = [timeline.checkpoints_table.item(r, 5).text() for r in range(timeline.checkpoints_table.rowCount())]
    assert ids == [c.config["configurable"]["checkpoint_id"] for c in checkpoints]
    newest = len(checkpoints[0].checkpoint["channel_values"]["messages"])
    assert timeline.events_table.rowCount() == newest == panel.events.rowCount()
    first_answer = next(i for i, c in enumerate(checkpoints) if c.metadata["step"] == 1)
    timeline.checkpoints_table.setCurrentCell(first_answer, 0)
    settle(qloop, ctx)
    shown = len(checkpoints[first_answer].checkpoint["channel_values"]["messages"])
    assert timeline.events_table.rowCount() == shown < newest
    assert timeline.events_label.text().startswith(f"As of checkpoint {ids[first_answer]}: {shown} messages")
    assert dialogs.errors == []


def test_the_timeline_tab_is_hidden_where_sessions_have_no_versions(make_window, qloop):
    from oxmem_gui.ui.sessions.panel import TIMELINE_TAB

    window, ctx, _ = make_window()
    settle(qloop, ctx)
    assert not window.sessions.tabs.isTabVisible(TIMELINE_TAB)
