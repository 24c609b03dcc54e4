"""The hybrid-search panel shows the core's numbers, re-ranks from cached legs, and measures judged queries."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QTextBrowser

from oxmem_gui.core.memory import default_search
from oxmem_gui.core.retrieval.metrics import evaluate
from oxmem_gui.ui.context import StoreContext
from oxmem_gui.ui.main_window import MainWindow
from oxmem_gui.ui.search.metrics import MetricsDialog
from oxmem_gui.ui.search.panel import DEMO_DEFAULT_TIP
from oxmem_gui.ui.search.results import BAR_ROLE, GRADE_COLUMN, VALUE_ROLE, highlight
from tests.conftest import user
from tests.ui.conftest import FakeDialogs, settle


def use_ranking(panel, name):
    """Choose the ranking ``name`` in the panel's list (the panel opens on the file's default: the tuned profile)."""
    panel.controls.ranking.setCurrentIndex(
        next(i for i in range(panel.controls.ranking.count()) if panel.controls.ranking.itemData(i).name == name)
    )


def search(window, ctx, qloop, session, query, weight=70, mode="terms", top_k=8, ranking="oxmem"):
    panel = window.search
    window.show_panel("search")
    use_ranking(panel, ranking)
    panel.controls.session.setCurrentText(session)
    panel.controls.query.setText(query)
    panel.controls.weight.setValue(weight)
    panel.controls.mode.setCurrentText(mode)
    panel.controls.top_k.setValue(top_k)
    panel.search()
    settle(qloop, ctx)
    return panel


def shown(panel):
    m = panel.model
    return [
        (
            m.hit(r).chunk_id,
            m.index(r, 0).data(VALUE_ROLE),
            m.index(r, 2).data(VALUE_ROLE),
            m.index(r, 4).data(VALUE_ROLE),
            m.index(r, 5).data(VALUE_ROLE),
        )
        for r in range(m.rowCount())
    ]


def core(ctx, qloop, session, query, w, mode="terms", top_k=8):
    r = qloop.run_until_complete(
        ctx.store.hybrid_query(session, query, top_k, vector_weight=w, fts_weight=round(1 - w, 10), fts_mode=mode)
    )
    return [
        (
            h.chunk_id,
            h.rank,
            h.score,
            (h.vector_raw, h.vector_score, w * h.vector_score),
            (h.fts_raw, h.fts_score, round(1 - w, 10) * h.fts_score),
        )
        for h in r.hits
    ]


def close(a, b):
    if isinstance(a, tuple):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    if a is None or b is None or isinstance(a, str):
        return a == b
    return abs(a - b) <= 1e-9


def test_breakdown_shown_equals_the_core(make_window, qloop):
    window, ctx, _ = make_window()
    panel = search(window, ctx, qloop, "telegram:alice:lisbon-trip", "quiet hotel in Alfama")
    got, expected = shown(panel), core(ctx, qloop, "telegram:alice:lisbon-trip", "quiet hotel in Alfama", 0.7)
    assert len(got) == 8 and all(close(a, b) for a, b in zip(got, expected, strict=True))
    assert panel.legs_label.text().startswith("FTS expression: <code>&quot;quiet&quot; OR &quot;hotel&quot;")
    assert panel.model_label.text() == "model: deterministic-hash-v1"
    assert panel.explain_view.toPlainText().startswith("Rank 1 of 8 — score ")


def test_slider_reranks_from_cached_legs(make_window, qloop, monkeypatch):
    window, ctx, _ = make_window()
    panel = search(window, ctx, qloop, "cli:alice:invoice-rounding", "half up rounding")
    calls = []
    real = ctx.store.hybrid_query
    monkeypatch.setattr(ctx.store, "hybrid_query", lambda *a, **k: calls.append(a) or real(*a, **k))
    before = {panel.model.hit(r).chunk_id: r + 1 for r in range(panel.model.rowCount())}
    panel.controls.weight.setValue(20)
    assert calls == []  # no new query
    got = shown(panel)
    monkeypatch.undo()
    expected = core(ctx, qloop, "cli:alice:invoice-rounding", "half up rounding", 0.2)
    assert all(close(a, b) for a, b in zip(got, expected, strict=True)) and len(got) == len(expected)
    for r in range(panel.model.rowCount()):
        cid, label = panel.model.hit(r).chunk_id, panel.model.index(r, 1).data()
        old = before.get(cid)
        assert label == (
            "new" if old is None else "=" if old == r + 1 else f"↑{old - r - 1}" if r + 1 < old else f"↓{r + 1 - old}"
        )


def test_flags_for_a_collapsed_leg_and_missing_leg(make_window, qloop):
    window, ctx, _ = make_window()
    panel = search(window, ctx, qloop, "telegram:alice:tomatoes", "copper", weight=30)
    flags = [panel.model.index(r, 6).data(Qt.ItemDataRole.ToolTipRole) for r in range(panel.model.rowCount())]
    assert any("FTS range collapsed (one candidate): every FTS score is 1.0" in f for f in flags)
    assert sum("not in FTS candidates" in f for f in flags) == 3
    short = [panel.model.index(r, 6).data() for r in range(panel.model.rowCount())]
    assert sum("FTS collapsed" in f for f in short) == sum("FTS range collapsed" in f for f in flags)
    assert sum("not in FTS" in f for f in short) == 3


def test_highlight_terms_and_phrase(make_window, qloop):
    window, ctx, _ = make_window()
    panel = search(window, ctx, qloop, "telegram:alice:tomatoes", "copper fungicide")
    mark = "<b style='background-color:#ffe58a;color:#000'>"
    assert highlight("A copper fungicide & co", panel.state.result) == (
        f"A {mark}copper</b> {mark}fungicide</b> &amp; co"
    )
    panel = search(window, ctx, qloop, "telegram:alice:tomatoes", "copper fungicide", mode="phrase")
    assert highlight("A Copper  fungicide slows", panel.state.result) == f"A {mark}Copper  fungicide</b> slows"


def test_grades_go_to_the_inspector_file_and_metrics_match_the_core(make_window, qloop):
    window, ctx, dialogs = make_window()
    panel = search(window, ctx, qloop, "cli:alice:invoice-rounding", "half up rounding", top_k=5)
    panel.tools.set_box.setCurrentText("rounding")
    first, third = panel.model.hit(0).chunk_id, panel.model.hit(2).chunk_id
    panel.model.setData(panel.model.index(0, GRADE_COLUMN), "3")
    panel.model.setData(panel.model.index(2, GRADE_COLUMN), "1")
    settle(qloop, ctx)
    judged = panel.judgments.queries(ctx.store.path, "rounding")
    assert [(q.session_id, q.query, q.grades) for q in judged] == [
        ("cli:alice:invoice-rounding", "half up rounding", {first: 3, third: 1})
    ]
    panel.metrics()
    settle(qloop, ctx)
    dialog = panel.last_dialog
    assert isinstance(dialog, MetricsDialog)
    expected = evaluate({"q": [panel.model.hit(r).chunk_id for r in range(5)]}, {"q": {first: 3, third: 1}}, 5)
    assert dialog.evaluation.current == expected
    assert dialog.table.rowCount() == 22
    dialogs.files = [window.search.judgments.path.parent / "m.json"]
    dialog._export("json")
    assert json.loads((window.search.judgments.path.parent / "m.json").read_text())["current"]["ndcg"] == expected.ndcg
    dialog.close()


def test_compare_a_and_b_and_export(make_window, qloop, tmp_path):
    window, ctx, dialogs = make_window()
    panel = search(window, ctx, qloop, "telegram:alice:lisbon-trip", "hotel")
    panel.pin()
    panel = search(window, ctx, qloop, "telegram:alice:lisbon-trip", "hotel", weight=0)
    assert [panel.controls.model_box.itemText(i) for i in range(panel.controls.model_box.count())] == [
        "all models",
        "deterministic-hash-v1",
    ]
    text = panel.compare_text()
    assert text.splitlines()[0].startswith("A: vector 0.7 / FTS 0.3, terms mode, top 8")
    assert text.splitlines()[1].startswith("B: vector 0 / FTS 1, terms mode, top 8")
    assert any(line.strip().startswith(("↑", "↓", "new", "dropped", "=")) for line in text.splitlines()[3:])
    panel.compare()
    dialog = panel.last_dialog
    assert dialog.isVisible() and dialog.findChild(QTextBrowser).toPlainText() == text
    (close,) = dialog.findChild(QDialogButtonBox).buttons()
    assert close.text() == "Close"
    close.click()
    assert not dialog.isVisible()
    dialogs.files = [tmp_path / "r.csv", tmp_path / "r.json"]
    panel.export()
    panel.export()
    settle(qloop, ctx)
    assert (tmp_path / "r.csv").read_text().splitlines()[0].startswith("rank,chunk_id,session_id,score")
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["query"] == "hotel" and doc["hits"][0]["explanation"].startswith("Rank 1 of 8")


def test_metrics_without_judgments_says_so(make_window, qloop):
    window, ctx, dialogs = make_window()
    search(window, ctx, qloop, "telegram:alice:tomatoes", "copper")
    window.search.tools.set_box.setCurrentText("empty set")
    window.search.metrics()
    settle(qloop, ctx)
    assert dialogs.infos[-1] == "The query set “empty set” has no judged queries yet: grade some hits (0–3) first."


@pytest.fixture(autouse=True)
def _no_real_dialog_windows(monkeypatch):
    monkeypatch.setattr(MetricsDialog, "show", lambda self: None)


def test_the_panel_opens_on_the_tuned_default_and_explains_its_steps(make_window, qloop):
    window, ctx, _ = make_window()
    panel = window.search
    assert panel.current_ranking().name == "tuned"
    assert [panel.controls.ranking.itemText(i) for i in range(panel.controls.ranking.count())] == [
        "oxmem tuned (default)",
        "oxmem hybrid",
        "Oxydra agent's own",
    ]
    # a fixed profile: tags yes, weights and mode no
    assert panel.controls.tags.isEnabled() and panel.controls.tag_mode.isEnabled()
    assert (
        not panel.controls.weight.isEnabled()
        and not panel.controls.mode.isEnabled()
        and not panel.controls.reset_button.isEnabled()
    )
    panel = search(window, ctx, qloop, "telegram:alice:lisbon-trip", "quiet hotel in Alfama", ranking="tuned")
    expected = qloop.run_until_complete(
        ctx.store.search("tuned", "telegram:alice:lisbon-trip", "quiet hotel in Alfama")
    )
    assert [(panel.model.hit(r).chunk_id, panel.model.hit(r).score) for r in range(panel.model.rowCount())] == [
        (h.chunk_id, h.score) for h in expected.hits
    ]
    assert panel.legs_label.text().startswith("FTS expression: <code>&quot;quie&quot;* OR &quot;hote&quot;*")
    pane = panel.explain_view.toPlainText()
    assert "neighbour context: the turn at sequence 10 weighted" in pane
    assert "update: restates no older candidate of its session → + 0" in pane
    assert "stopwords dropped from the query: in" in pane
    mark = "<b style='background-color:#ffe58a;color:#000'>"
    assert (
        highlight("Quieter hotels in alfama", panel.state.result)
        == f"{mark}Quieter</b> {mark}hotels</b> in {mark}alfama</b>"
    )
    # tags filter the profile too
    panel.controls.tags.input.setText("nothing-has-this")
    panel.controls.tags.commit()
    settle(qloop, ctx)
    assert panel.model.rowCount() == 0 and panel.state.result.retriever == "tuned"


def test_the_update_step_shows_what_superseded_what(make_window, qloop):
    """A preference stated, then changed: the Flags column says which statement updates which, the Parts bar has
    the lift, and the explanation names the older statement."""
    window, ctx, _ = make_window()
    old = "I prefer aisle seats on flights, and I'm vegetarian."
    new = "I prefer window seats on flights now, and I'm still vegetarian, thanks for asking."
    qloop.run_until_complete(ctx.store.store_many([("chat:prefs", 1, user(old)), ("chat:prefs", 2, user(new))]))
    panel = search(window, ctx, qloop, "chat:prefs", "which seats do I prefer on flights", ranking="tuned")
    m = panel.model
    assert [m.hit(r).text for r in range(m.rowCount())] == [new, old]  # the newer first
    assert [m.index(r, 6).data() for r in range(2)] == ["updates #1", "updated by #2"]
    newer = m.hit(0)
    assert newer.update_of == 1 and newer.update_overlap == pytest.approx(8 / 15)
    assert m.index(0, 3).data(BAR_ROLE)[3] == newer.update_score
    panel.view.selectRow(0)
    assert "update: restates the statement at sequence 1 (one role, the same query words matched, 53% of" in (
        panel.explain_view.toPlainText()
    )


def test_make_default_per_session_and_per_file_keeps_the_hybrids_tuning(make_window, qloop):
    window, ctx, _ = make_window()
    lisbon = "telegram:alice:lisbon-trip"
    panel = search(window, ctx, qloop, lisbon, "hotel")  # the contract's hybrid
    panel.controls.weight.setValue(55)
    panel.controls.mode.setCurrentText("phrase")
    settle(qloop, ctx)
    panel.make_default(for_session=True)
    settle(qloop, ctx)
    assert panel.state.default_choice == ("oxmem", "session")
    assert panel.controls.ranking.itemText(1) == "oxmem hybrid (session default)"
    assert panel.controls.ranking.toolTip().startswith("oxmem hybrid (session default)\n")
    found = qloop.run_until_complete(default_search(ctx.store, lisbon))
    assert (found[0].name, found[1], found[2]) == ("oxmem", "session", {"vector_weight": 0.55, "fts_mode": "phrase"})
    # another session keeps the ranking and the tuning in use; only the default's mark follows
    panel.controls.session.setCurrentText("memory:alice")
    panel.controls.session.activated.emit(panel.controls.session.currentIndex())
    settle(qloop, ctx)
    assert panel.state.default_choice == ("tuned", "built-in")
    assert (panel.current_ranking().name, panel.controls.weight.value(), panel.controls.mode.currentText()) == (
        "oxmem",
        55,
        "phrase",
    )
    assert [panel.controls.ranking.itemText(i) for i in (0, 1)] == ["oxmem tuned (default)", "oxmem hybrid"]
    # opening the file starts the session's searches with its default, tuning included
    panel.controls.weight.setValue(70)
    panel.controls.mode.setCurrentText("terms")
    use_ranking(panel, "tuned")
    panel.controls.session.setCurrentText(lisbon)
    panel._look_up_default(select=True)
    settle(qloop, ctx)
    assert (panel.current_ranking().name, panel.controls.weight.value(), panel.controls.mode.currentText()) == (
        "oxmem",
        55,
        "phrase",
    )
    use_ranking(panel, "oxydra")
    panel.make_default(for_session=False)
    settle(qloop, ctx)
    assert panel.state.default_choice == ("oxmem", "session")  # the session's own choice wins over the file's
    panel.controls.session.setCurrentText("memory:alice")
    panel._look_up_default(select=False)
    settle(qloop, ctx)
    assert panel.state.default_choice == ("oxydra", "file")
    assert qloop.run_until_complete(default_search(ctx.store, "memory:alice"))[2] == {}  # a fixed ranking: no tuning
    panel.forget_default()
    settle(qloop, ctx)
    assert panel.state.default_choice == ("tuned", "built-in")
    assert panel.controls.ranking.itemText(0) == "oxmem tuned (default)"


def test_make_default_is_off_on_the_demo_that_is_forgotten_when_it_closes(qloop, qtbot):
    ctx = StoreContext()
    window = MainWindow(ctx, dialogs=FakeDialogs())
    qtbot.addWidget(window)
    qloop.run_until_complete(ctx.open_demo("deterministic"))
    settle(qloop, ctx)
    assert not window.search.tools.default_button.isEnabled()
    assert window.search.tools.default_button.toolTip() == DEMO_DEFAULT_TIP
    qloop.run_until_complete(ctx.close())


def test_the_slider_shows_a_fixed_profile_and_gives_the_hybrid_its_setting_back(make_window, qloop):
    window, ctx, _ = make_window()
    panel = window.search
    assert (panel.controls.weight.value(), panel.controls.weight_label.text()) == (20, "0.20 / FTS 0.80 (fixed)")
    use_ranking(panel, "oxmem")
    assert (panel.controls.weight.value(), panel.controls.weight_label.text()) == (70, "0.70 / FTS 0.30")
    panel.controls.weight.setValue(25)
    use_ranking(panel, "tuned")
    assert panel.controls.weight.value() == 20 and not panel.controls.weight.isEnabled()
    use_ranking(panel, "oxydra")
    assert panel.controls.weight_label.text() == "as the agent weighs it"
    use_ranking(panel, "oxmem")
    assert (panel.controls.weight.value(), panel.controls.weight_label.text()) == (25, "0.25 / FTS 0.75")


def test_metrics_of_the_tuned_profile_and_apply_best_goes_to_the_hybrid(make_window, qloop):
    window, ctx, _ = make_window()
    panel = search(window, ctx, qloop, "cli:alice:invoice-rounding", "half up rounding", top_k=5, ranking="tuned")
    panel.tools.set_box.setCurrentText("tuned")
    first = panel.model.hit(0).chunk_id
    panel.model.setData(panel.model.index(0, GRADE_COLUMN), "3")
    settle(qloop, ctx)
    panel.metrics()
    settle(qloop, ctx)
    dialog = panel.last_dialog
    assert dialog.evaluation.current == evaluate(
        {"q": [panel.model.hit(r).chunk_id for r in range(5)]}, {"q": {first: 3}}, 5
    )
    assert dialog.evaluation.current.mrr == 1.0
    best = dialog.evaluation.best()
    panel.apply_best(best.vector_weight, best.fts_mode)
    settle(qloop, ctx)
    assert panel.current_ranking().name == "oxmem" and panel.vector_weight() == pytest.approx(best.vector_weight)
    assert panel.state.result.retriever == "oxmem"
    dialog.close()


def test_the_panel_alone_searches_and_reweights_without_a_new_query(alone, qloop, tmp_path):
    from oxmem_gui.core.api import rerank
    from oxmem_gui.core.retrieval.judgments import JudgmentStore
    from oxmem_gui.ui.search.panel import SearchPanel

    panel, ctx, _ = alone(lambda ctx, dialogs: SearchPanel(ctx, dialogs, JudgmentStore(tmp_path / "inspector.db")))
    use_ranking(panel, "oxmem")
    panel.controls.session.setCurrentText("telegram:alice:lisbon-trip")
    panel.controls.query.setText("quiet hotel in Alfama")
    panel.search()
    settle(qloop, ctx)
    fetched = panel.state.base
    assert panel.model.rowCount() == 8 and panel.state.result is fetched
    assert panel.results_label.text() == "8 hits for “quiet hotel in Alfama” in telegram:alice:lisbon-trip"
    panel.controls.weight.setValue(20)  # re-ranked from the fetched legs: nothing asked of the store
    assert panel.state.base is fetched and ctx.running == []
    expected = rerank(fetched, 0.2, 0.8)
    assert [panel.model.hit(r).chunk_id for r in range(8)] == [h.chunk_id for h in expected.hits]


def test_the_search_index_is_prepared_from_the_moment_the_file_opens(make_window, qloop):
    from oxmem_gui.core.api import ALL_SESSIONS

    window, ctx, _ = make_window()
    settle(qloop, ctx)
    assert window.search.controls.session.currentText() == "(all sessions)"
    cached = ctx.store._caches.vectors.cached_sessions()
    assert ALL_SESSIONS in cached  # built before any search was asked for
