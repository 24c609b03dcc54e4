"""An Agno file (written by Agno's own code, a test dependency) in the inspector: its sessions' messages, its
users' memories with their topics as written, and a memory edited after *Enable editing*, read back by Agno."""

from __future__ import annotations

import pytest

from tests.core.formats.test_agno import agno_memories, write
from tests.ui.conftest import settle

pytest.importorskip("agno.db.sqlite", reason="Agno writes these files (a test dependency)")


@pytest.fixture
def agno_window(make_window, qloop, tmp_path):
    write(tmp_path / "demo.db")  # the path make_window opens
    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    return window, ctx, dialogs


def test_a_sessions_messages_are_shown_with_their_tool_call(agno_window, qloop):
    window, ctx, _ = agno_window
    window.show_panel("sessions")
    sessions = window.sessions
    assert sessions.select_session("s-ana")
    settle(qloop, ctx)
    model = sessions.events
    texts = [model.data(model.index(r, 4)) for r in range(model.rowCount())]
    assert texts[:2] == ["Be brief.", "hello"]
    assert "get_weather" in texts[4] and texts[6] == "It is sunny."
    # an Agno file keeps no chunks: the header counts none and the Chunks tab is not offered
    from oxmem_gui.ui.sessions.panel import CHUNKS_TAB

    assert sessions.header.text() == "Session s-ana · 7 events" and not sessions.tabs.isTabVisible(CHUNKS_TAB)


def test_topics_keep_their_case_and_a_memory_loads_clean(agno_window, qloop):
    window, ctx, dialogs = agno_window
    window.show_panel("notes")
    notes = window.notes
    notes.set_user("ana")
    settle(qloop, ctx)
    assert notes.list_pane.count_label.text() == "2 memories"
    row = next(i for i, n in enumerate(notes.model.notes) if n.content == "Lives in Kreuzberg")
    notes.list_pane.view.setCurrentIndex(notes.model.index(row, 0))
    settle(qloop, ctx)
    assert notes.editor.tags.tags() == ["home", "Berlin"]
    assert not notes.dirty() and "unsaved" not in notes.editor.status.text()

    window.enable_editing()
    settle(qloop, ctx)
    notes.editor.tags.input.setText("Travel")
    notes.editor.tags.commit()
    notes.save()
    settle(qloop, ctx)
    saved = next(m for m in agno_memories(ctx.store.path, "ana").values() if m.memory == "Lives in Kreuzberg")
    assert saved.topics == ["home", "Berlin", "Travel"]
    assert dialogs.errors == []
