"""The search panel's "(all sessions)" entry: one ranking over every session, each hit naming its session."""

from __future__ import annotations

from PySide6.QtCore import Qt

from oxmem_gui.core.retrieval.scope import ALL_SESSIONS
from oxmem_gui.ui.search.results import SESSION_COLUMN, TEXT_COLUMN
from tests.ui.conftest import settle
from tests.ui.search.test_panel import search


def test_all_sessions_is_offered_first_and_ranks_every_session_together(make_window, qloop):
    window, ctx, _ = make_window()
    window.show_panel("search")
    settle(qloop, ctx)
    panel = window.search
    assert panel.controls.session.itemText(0) == "(all sessions)"
    assert "every session at once" in panel.controls.session.itemData(0, Qt.ItemDataRole.ToolTipRole)
    panel = search(window, ctx, qloop, "(all sessions)", "invoice rounding", top_k=6)
    want = qloop.run_until_complete(
        ctx.store.hybrid_query(ALL_SESSIONS, "invoice rounding", 6, vector_weight=0.7, fts_weight=0.3)
    )
    m = panel.model
    assert [m.hit(r).chunk_id for r in range(m.rowCount())] == [h.chunk_id for h in want.hits]
    sessions = [m.index(r, SESSION_COLUMN).data() for r in range(m.rowCount())]
    assert sessions == [h.session_id for h in want.hits] and len(set(sessions)) >= 2
    assert not panel.view.isColumnHidden(SESSION_COLUMN)
    assert panel.results_label.text() == "6 hits for “invoice rounding” in (all sessions)"
    # Enter on a hit opens its event in its own session
    opened = []
    panel.open_event.connect(lambda sid, seq: opened.append((sid, seq)))
    panel.view.setCurrentIndex(m.index(1, TEXT_COLUMN))
    assert panel.open_hit() and opened == [(want.hits[1].session_id, want.hits[1].sequence_start)]
    # one session again: the Session column goes
    one = want.hits[0].session_id
    panel = search(window, ctx, qloop, one, "invoice rounding", top_k=6)
    assert panel.view.isColumnHidden(SESSION_COLUMN)
    assert {panel.model.hit(r).session_id for r in range(panel.model.rowCount())} == {one}


def test_all_users_notes_searches_every_notes_session_and_nothing_else(make_window, qloop):
    window, ctx, _ = make_window()
    window.show_panel("search")
    settle(qloop, ctx)
    assert window.search.controls.session.itemText(1) == "(all users' notes)"
    panel = search(window, ctx, qloop, "(all users' notes)", "seats travel", top_k=8)
    sessions = {panel.model.hit(r).session_id for r in range(panel.model.rowCount())}
    assert sessions == {"memory:alice", "memory:bob"} and panel.model.rowCount() == 8
    assert panel.results_label.text() == "8 hits for “seats travel” in (all users' notes)"


def test_a_hit_of_all_sessions_is_graded_kept_shown_again_and_measured(make_window, qloop):
    """Grading a hit under "(all sessions)" raised IndexError (the judgment's session was None) while the cell said
    the grade: it is kept for that search, shown again when it is searched again, and measured by its metrics."""
    from oxmem_gui.ui.search.results import GRADE_COLUMN

    window, ctx, dialogs = make_window()
    panel = search(window, ctx, qloop, "(all sessions)", "invoice rounding", top_k=6)
    panel.tools.set_box.setCurrentText("everywhere")
    first = panel.model.hit(0).chunk_id
    panel.model.setData(panel.model.index(0, GRADE_COLUMN), "2")
    settle(qloop, ctx)
    assert dialogs.errors == []
    (judged,) = panel.judgments.queries(ctx.store.path, "everywhere")
    assert (judged.session_id, judged.query, judged.grades) == (ALL_SESSIONS, "invoice rounding", {first: 2})
    search(window, ctx, qloop, panel.model.hit(1).session_id, "invoice rounding", top_k=6)
    panel = search(window, ctx, qloop, "(all sessions)", "invoice rounding", top_k=6)
    assert panel.model.index(0, GRADE_COLUMN).data() == "2 relevant"
    panel.metrics()
    settle(qloop, ctx)
    assert dialogs.errors == [] and panel.last_dialog.evaluation.failed == []
    panel.last_dialog.close()
