"""The search panel is usable: the hit's text in view, hits open their event, moves measured from the defaults,
results that always answer the controls, a way back to the defaults, inline messages, and a window that fits."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QScrollBar,
    QStyleOptionViewItem,
    QWidget,
)

from oxmem_gui.ui.search.controls import DEFAULTS
from oxmem_gui.ui.search.metrics import MetricsDialog
from oxmem_gui.ui.search.results import GRADE_COLUMN, SESSION_COLUMN, TEXT_COLUMN, GradeDelegate
from tests.ui.conftest import settle
from tests.ui.layout import CONTROLS, unreachable
from tests.ui.search.test_panel import search

LISBON = "telegram:alice:lisbon-trip"
ROUNDING = "cli:alice:invoice-rounding"


def ranks(ctx, qloop, session, query, w, mode="terms", top_k=8):
    r = qloop.run_until_complete(
        ctx.store.hybrid_query(session, query, top_k, vector_weight=w, fts_weight=round(1 - w, 10), fts_mode=mode)
    )
    return {h.chunk_id: h.rank for h in r.hits}


def move_label(before, after):
    if before is None:
        return "new"
    return "=" if before == after else f"↑{before - after}" if after < before else f"↓{after - before}"


def shown_moves(panel):
    return {panel.model.hit(r).chunk_id: panel.model.index(r, 1).data() for r in range(panel.model.rowCount())}


def test_the_hits_text_has_the_width_and_the_pane_shows_where_it_is(make_window, qloop):
    window, ctx, _ = make_window()
    window.resize(1024, 640)
    window.show()
    panel = search(window, ctx, qloop, LISBON, "quiet hotel in Alfama")
    QApplication.processEvents()
    view = panel.view
    # the Text column is last, stretches, and keeps most of the table's width at 1024×640
    text_x = view.columnViewportPosition(TEXT_COLUMN)
    assert view.horizontalHeader().stretchLastSection()
    assert view.viewport().width() - text_x >= 300
    assert view.columnWidth(TEXT_COLUMN) >= 300
    # flags are a few words; the whole warning is in the tooltip
    flags = {r: panel.model.index(r, 6).data() for r in range(panel.model.rowCount())}
    assert flags[2] == "not in FTS"
    assert panel.model.index(2, 6).data(Qt.ItemDataRole.ToolTipRole) == "not in FTS candidates"
    assert max(view.columnWidth(c) for c in range(SESSION_COLUMN)) <= 130
    # the pane: rank line first, then session, sequence and the whole text, then the derivation
    panel.view.setCurrentIndex(panel.model.index(3, 0))
    text = panel.explain_view.toPlainText()
    lines = text.splitlines()
    hit = panel.model.hit(3)
    assert lines[0] == "Rank 4 of 8 — score 0.487454"
    assert lines[1] == f"Session {LISBON} · sequence 11 · chunk {hit.chunk_id}"
    assert lines[2] == "Alfama, something quiet, under 150 a night."
    assert "score = 0.7 × " in text and "FTS expression (terms mode)" in text


def double_click(view, index):
    pos, button, none = view.visualRect(index).center(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    QTest.mouseClick(view.viewport(), button, none, pos)
    QTest.mouseDClick(view.viewport(), button, none, pos)


def test_double_click_or_enter_on_a_hit_opens_its_event(make_window, qloop):
    window, ctx, _ = make_window()
    window.resize(1024, 640)
    window.show()
    panel = search(window, ctx, qloop, LISBON, "quiet hotel in Alfama")
    QApplication.processEvents()
    opened = []
    panel.open_event.connect(lambda session, sequence: opened.append((session, sequence)))
    view = panel.view
    double_click(view, panel.model.index(1, TEXT_COLUMN))
    assert opened == [(LISBON, 10)]
    view.setCurrentIndex(panel.model.index(3, 0))
    view.setFocus()
    QTest.keyClick(view, Qt.Key.Key_Return)
    assert opened == [(LISBON, 10), (LISBON, 11)]
    # the Grade cell is edited by a double-click, not opened
    double_click(view, panel.model.index(0, GRADE_COLUMN))
    assert len(opened) == 2 and view.state() == view.State.EditingState


def test_move_is_measured_from_the_default_ranking_not_the_previous_run(make_window, qloop):
    window, ctx, _ = make_window()
    panel = search(window, ctx, qloop, ROUNDING, "half up rounding", weight=0)
    defaults = ranks(ctx, qloop, ROUNDING, "half up rounding", 0.7)
    at_zero = ranks(ctx, qloop, ROUNDING, "half up rounding", 0.0)
    expected = {cid: move_label(defaults.get(cid), rank) for cid, rank in at_zero.items()}
    assert shown_moves(panel) == expected
    assert any(label != "=" for label in expected.values())
    assert panel.state.baseline is not None and panel.state.baseline.vector_weight == 0.7
    # the slider re-ranks; the moves still count from the defaults, not from the weight-0 run
    panel.controls.weight.setValue(20)
    at_twenty = ranks(ctx, qloop, ROUNDING, "half up rounding", 0.2)
    assert shown_moves(panel) == {cid: move_label(defaults.get(cid), rank) for cid, rank in at_twenty.items()}
    # a second search of the query with other settings: the same baseline
    panel.controls.mode.setCurrentText("phrase")
    settle(qloop, ctx)
    phrase = ranks(ctx, qloop, ROUNDING, "half up rounding", 0.2, mode="phrase")
    assert shown_moves(panel) == {cid: move_label(defaults.get(cid), rank) for cid, rank in phrase.items()}
    # with the default settings every hit is where it was
    panel.reset_to_defaults()
    settle(qloop, ctx)
    assert set(shown_moves(panel).values()) == {"="}
    # Compare with nothing pinned uses the same baseline
    assert panel.tools.compare_button.isEnabled()
    assert panel.compare_text().splitlines()[0].endswith("(the default settings)")


def test_changing_mode_top_k_or_tags_searches_again(make_window, qloop):
    window, ctx, _ = make_window()
    panel = search(window, ctx, qloop, LISBON, "quiet hotel in Alfama")
    assert panel.model.rowCount() == 8 and not panel.stale()
    panel.controls.mode.setCurrentText("phrase")
    settle(qloop, ctx)
    assert panel.state.result.fts_mode == "phrase" and panel.state.result.fts_expression == '"quiet hotel in Alfama"'
    panel.controls.top_k.setValue(3)
    settle(qloop, ctx)
    assert panel.model.rowCount() == 3 and panel.state.result.top_k == 3
    panel.controls.tags.input.setText("travel")
    panel.controls.tags.commit()
    settle(qloop, ctx)
    assert panel.state.result.tags == ["travel"] and not panel.stale()
    panel.controls.tag_mode.setCurrentText("all")
    settle(qloop, ctx)
    assert panel.state.result.tag_mode == "all"
    # an edited query is not searched on every key: the results say they are stale
    panel.controls.tags.clear()
    settle(qloop, ctx)
    panel.controls.query.setText("flights")
    assert panel.stale()
    assert panel.results_label.text() == (
        "3 hits for “quiet hotel in Alfama” in telegram:alice:lisbon-trip — not what the controls now say: "
        "press Search (or Enter in the query) to update"
    )
    assert "b35c00" in panel.results_label.styleSheet()
    panel.controls.query.returnPressed.emit()
    settle(qloop, ctx)
    assert not panel.stale() and panel.state.result.query == "flights"
    assert panel.results_label.text() == "3 hits for “flights” in telegram:alice:lisbon-trip"
    # Enter in the session box searches too (it only marked the hits stale)
    panel.controls.query.setText("hotel")
    panel.controls.session.lineEdit().returnPressed.emit()
    settle(qloop, ctx)
    assert not panel.stale() and panel.state.result.query == "hotel"


def test_reset_to_agent_defaults_and_the_note_when_they_differ(make_window, qloop):
    window, ctx, _ = make_window()
    panel = search(window, ctx, qloop, LISBON, "hotel")
    assert panel.controls.defaults_note.isHidden() and not panel.controls.reset_button.isEnabled()
    window.resize(1024, 640)
    window.show()
    settle(qloop, ctx)
    results_top = panel.view.mapTo(panel, panel.view.rect().topLeft()).y()
    panel.controls.weight.setValue(40)
    panel.controls.mode.setCurrentText("phrase")
    settle(qloop, ctx)
    assert not panel.controls.defaults_note.isHidden()
    assert panel.view.mapTo(panel, panel.view.rect().topLeft()).y() == results_top  # nothing jumps
    assert panel.controls.defaults_note.text() == (
        "Not the agent's defaults: vector 0.40 / FTS 0.60 (default 0.70 / 0.30); phrase mode (default terms)"
    )
    assert panel.controls.reset_button.isEnabled()
    assert panel.controls.reset_button.text() == "Reset to agent defaults"
    panel.controls.reset_button.click()
    settle(qloop, ctx)
    assert (
        panel.controls.weight.value() == 70
        and panel.controls.mode.currentText() == "terms"
        and panel.controls.tags.tags() == []
    )
    assert DEFAULTS["vector_weight"] == 0.7 and DEFAULTS["fts_mode"] == "terms"
    assert panel.controls.defaults_note.isHidden() and not panel.controls.reset_button.isEnabled()
    assert (panel.state.result.vector_weight, panel.state.result.fts_mode) == (0.7, "terms")
    assert panel.controls.weight_label.text() == "0.70 / FTS 0.30"


def effective_tip(widget: QWidget, top: QWidget) -> str:
    while widget is not None and widget is not top.parentWidget():
        if widget.toolTip():
            return widget.toolTip()
        widget = widget.parentWidget()
    return ""


def test_tooltips_grade_names_and_apply_best(make_window, qloop, monkeypatch):
    monkeypatch.setattr(MetricsDialog, "show", lambda self: None)
    window, ctx, dialogs = make_window()
    panel = search(window, ctx, qloop, ROUNDING, "half up rounding", top_k=5)
    missing = [
        f"{type(w).__name__} {getattr(w, 'text', lambda: '')()!r}"
        for w in panel.findChildren(QWidget)
        if isinstance(w, CONTROLS) and not isinstance(w, QScrollBar) and not effective_tip(w, panel)
    ]
    assert missing == []
    for name in ("weight", "mode", "tags", "tag_mode", "top_k", "query", "session", "go", "reset_button"):
        assert getattr(panel.controls, name).toolTip(), name
    # grades are named, in the editor and in the cell
    editor = GradeDelegate().createEditor(panel.view.viewport(), QStyleOptionViewItem(), panel.model.index(0, 7))
    assert [editor.itemText(i) for i in range(editor.count())] == [
        "— not graded",
        "0 irrelevant",
        "1 related",
        "2 relevant",
        "3 perfect",
    ]
    panel.tools.set_box.setCurrentText("rounding")
    panel.model.setData(panel.model.index(0, GRADE_COLUMN), "3 perfect")
    panel.model.setData(panel.model.index(1, GRADE_COLUMN), "0 irrelevant")
    panel.model.setData(panel.model.index(2, GRADE_COLUMN), "1")
    settle(qloop, ctx)
    assert [panel.model.index(r, GRADE_COLUMN).data() for r in range(4)] == [
        "3 perfect",
        "0 irrelevant",
        "1 related",
        "—",
    ]
    assert "0 irrelevant, 1 related, 2 relevant, 3 perfect" in panel.model.headerData(
        GRADE_COLUMN, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole
    )
    # the sweep's best point, applied
    panel.controls.weight.setValue(0)  # all on FTS: not the best here
    settle(qloop, ctx)
    panel.metrics()
    settle(qloop, ctx)
    dialog = panel.last_dialog
    best = dialog.evaluation.best()
    assert dialog.summary.text().startswith("<b>rounding</b>: 1 judged query<br>")
    assert dialog.apply_button.text() == f"Apply best (vector {best.vector_weight:g}, {best.fts_mode})"
    assert "Current settings (vector 0 / FTS 1, terms mode): recall@5" in dialog.summary.text()
    assert (best.vector_weight, best.fts_mode) == (0.2, "terms")  # of the points tied best, the nearest to 0
    dialog.resize(900, 420)
    dialog.show()
    dialog.chart.grab()  # the legend above the plot: no line crosses it, even at nDCG 1.0
    assert len(dialog.chart.legend) == 2 and len(dialog.chart.points) == 22
    assert all(p.y() > entry.bottom() for entry in dialog.chart.legend for p in dialog.chart.points)
    dialog.apply_button.click()
    settle(qloop, ctx)
    # the header follows: the settings now in use, with their metrics (the best point's)
    now = f"vector {best.vector_weight:g} / FTS {round(1 - best.vector_weight, 10):g}, {best.fts_mode} mode"
    assert f"Current settings ({now}): recall@5 <b>{best.metrics.recall:.3f}</b>" in dialog.summary.text()
    assert panel.controls.weight.value() == round(best.vector_weight * 100)
    assert panel.controls.mode.currentText() == best.fts_mode
    assert (
        panel.state.result.vector_weight == pytest.approx(best.vector_weight)
        and panel.state.result.fts_mode == best.fts_mode
    )
    assert not dialog.apply_button.isEnabled()
    assert dialogs.errors == []
    dialog.close()


def test_an_empty_query_or_unknown_session_is_said_inline(make_window, qloop):
    window, ctx, dialogs = make_window()
    panel = search(window, ctx, qloop, LISBON, "   ")
    assert dialogs.errors == []
    assert (
        not panel.controls.query_note.isHidden() and panel.controls.query_note.text() == "Type a query to search for."
    )
    assert panel.state.result is None
    panel.controls.query.setText("hotel")
    assert panel.controls.query_note.isHidden()
    panel = search(window, ctx, qloop, "no-such-session", "hotel")
    assert dialogs.errors == []
    assert panel.controls.query_note.text() == "No session 'no-such-session' in this store."
    panel.controls.session.setCurrentText("")
    panel.search()
    assert panel.controls.query_note.text() == "Choose a session to search."
    assert dialogs.errors == []


def test_enabling_editing_keeps_the_results_and_the_selected_hit(make_window, qloop, tmp_path, monkeypatch):
    monkeypatch.setattr("oxmem_gui.ui.context.backups_dir", lambda: tmp_path / "backups")
    window, ctx, _ = make_window(read_only=True)
    panel = search(window, ctx, qloop, LISBON, "quiet hotel in Alfama", weight=40)
    panel.view.setCurrentIndex(panel.model.index(2, 0))
    before = [panel.model.hit(r).chunk_id for r in range(panel.model.rowCount())]
    moved = shown_moves(panel)
    pane = panel.explain_view.toPlainText()
    qloop.run_until_complete(ctx.enable_editing())
    settle(qloop, ctx)
    assert not ctx.read_only
    assert [panel.model.hit(r).chunk_id for r in range(panel.model.rowCount())] == before
    assert panel.view.currentIndex().row() == 2
    assert panel.explain_view.toPlainText() == pane
    assert shown_moves(panel) == moved
    assert panel.controls.session.currentText() == LISBON and panel.controls.query.text() == "quiet hotel in Alfama"
    assert panel.controls.weight.value() == 40 and not panel.stale()


def test_the_panel_fits_1024x640_and_long_content_does_not_widen_it(make_window, qloop):
    window, ctx, _ = make_window()
    panel = window.search
    window.show_panel("search")
    empty = panel.minimumSizeHint()
    assert empty.width() <= 840 and empty.height() <= 520
    search(window, ctx, qloop, LISBON, "quiet hotel in Alfama")
    panel.controls.tags.input.setText("a-rather-long-tag-name-for-a-filter, another-long-tag, third")
    panel.controls.tags.commit()
    settle(qloop, ctx)
    search(window, ctx, qloop, LISBON, "x" * 300 + " hotel")
    panel.controls.query.setText("w" * 400)  # stale, and a long unbroken word in the labels
    panel.controls.weight.setValue(10)
    loaded = panel.minimumSizeHint()
    assert loaded.width() == empty.width() and loaded.height() <= 520
    window.resize(1024, 640)
    window.show()
    settle(qloop, ctx)
    assert unreachable(window) == []


def test_tab_leaves_the_table_tooltips_hold_the_whole_text_and_plurals(make_window, qloop):
    window, ctx, _ = make_window()
    window.resize(1024, 640)
    window.show()
    panel = search(window, ctx, qloop, LISBON, "quiet hotel in Alfama")
    assert not panel.view.tabKeyNavigation()
    window.activateWindow()
    panel.view.setFocus()
    QApplication.processEvents()
    QTest.keyClick(panel.view, Qt.Key.Key_Tab)
    QApplication.processEvents()
    assert QApplication.focusWidget() is not panel.view
    hit = panel.model.hit(0)
    tooltip = panel.model.index(0, TEXT_COLUMN).data(Qt.ItemDataRole.ToolTipRole)
    assert " ".join(tooltip.split()) == " ".join(hit.text.split())
    assert "raw → normalized × weight = contribution:\n0.2914 → 1.000 × 0.7 = 0.7000" in panel.model.index(0, 4).data(
        Qt.ItemDataRole.ToolTipRole
    )
    assert panel.results_label.text() == "8 hits for “quiet hotel in Alfama” in telegram:alice:lisbon-trip"
    assert "vector: 15 candidates" in panel.legs_label.text()
    search(window, ctx, qloop, "telegram:alice:tomatoes", "copper", top_k=1)
    assert panel.results_label.text() == "1 hit for “copper” in telegram:alice:tomatoes"
    assert "FTS: 1 candidate " in panel.legs_label.text()


def test_more_like_this_searches_with_the_hits_own_vector_and_says_so(make_window, qloop):
    """Ctrl+L on a hit (also in its context menu): the hit's stored vector becomes the query's, its words the
    keyword part; the hit itself then ranks first with a cosine of 1, and the results say by what they were
    searched. Typing another query ends it; a hit with no vector says why in the panel."""
    window, ctx, _ = make_window()
    window.show()
    panel = search(window, ctx, qloop, LISBON, "quiet hotel in Alfama")
    window.activateWindow()
    panel.view.setFocus()
    panel.view.selectRow(2)
    chosen = panel.model.hit(2)
    assert panel.like_action in panel.view.actions() and panel.like_action.shortcut().toString() == "Ctrl+L"
    QTest.keyClick(panel.view, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    settle(qloop, ctx)
    top = panel.model.hit(0)
    assert (top.chunk_id, round(top.vector_raw, 6)) == (chosen.chunk_id, 1.0)
    assert panel.controls.query.text() == chosen.text
    assert panel.results_label.text().endswith(f"— more like {chosen.chunk_id}: its stored vector is the query's")
    panel.controls.query.setText("quiet hotel in Alfama")
    panel.search()
    settle(qloop, ctx)
    assert "more like" not in panel.results_label.text()
