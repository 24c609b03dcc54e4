"""An OpenAI Agents SDK session file (written by the SDK's own ``SQLiteSession``, a test dependency) in the
inspector: a turn deleted from an event's context menu after *Enable editing*, listed first, read back by the SDK."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from PySide6.QtCore import QPoint

from tests.core.formats.test_openai_agents import TWO_TURNS, sdk_items, write
from tests.ui.conftest import settle

pytest.importorskip("agents", reason="the OpenAI Agents SDK writes these files (a test dependency)")


def aside(fn, *args):
    """``fn(*args)`` in another thread: the SDK's calls run their own event loop (``asyncio.run``), which must not
    end the inspector's."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


def turn_action(panel, row):
    panel.events_view.setCurrentIndex(panel.events.index(row, 0))
    panel._event_menu(QPoint(1, 1))
    menu = panel.event_menu
    action = next(a for a in menu.actions() if a.text() == "Delete This Turn…")
    menu.close()
    return action


def test_a_turn_is_deleted_from_the_events_menu_after_enable_editing(make_window, qloop, tmp_path):
    aside(write, tmp_path / "demo.db", {"weather": TWO_TURNS})  # the path make_window opens
    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    window.show_panel("sessions")
    panel = window.sessions
    assert panel.select_session("weather")
    settle(qloop, ctx)
    action = turn_action(panel, 2)  # the first turn's tool output
    assert not action.isEnabled() and "Enable Editing" in action.toolTip()

    window.enable_editing()
    settle(qloop, ctx)
    action = turn_action(panel, 2)
    assert action.isEnabled()
    action.trigger()
    settle(qloop, ctx)
    (asked,) = dialogs.confirms
    assert asked.startswith("Delete 4 items of session “weather”?")
    assert "3  tool: ← Sunny, 21°C" in asked and "A backup was taken when editing was enabled" in asked
    assert aside(sdk_items, ctx.store.path, "weather") == TWO_TURNS[4:]
    settle(qloop, ctx)
    assert [panel.events.row(r).sequence for r in range(panel.events.rowCount())] == [5, 6, 7, 8]
    assert dialogs.errors == []


def test_the_store_offers_no_turn_deletion(make_window, qloop):
    window, ctx, _ = make_window()
    settle(qloop, ctx)
    window.show_panel("sessions")
    panel = window.sessions
    session = panel.sessions.row(0).session_id
    assert panel.select_session(session)
    settle(qloop, ctx)
    panel.events_view.setCurrentIndex(panel.events.index(0, 0))
    panel._event_menu(QPoint(1, 1))
    assert [a.text() for a in panel.event_menu.actions()] == ["Why wasn't this recalled?"]
    panel.event_menu.close()
