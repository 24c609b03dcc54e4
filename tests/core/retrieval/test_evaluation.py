"""Re-ranking, explanations, metrics, judgments and the weight sweep."""

import json
import math

import pytest

from oxmem_gui.core import InvalidInputError
from oxmem_gui.core.retrieval.evaluation import (
    DEFAULT_SETTING,
    Evaluation,
    SweepPoint,
    evaluate_settings,
    metrics_json,
    result_rows,
    results_json,
    to_csv,
)
from oxmem_gui.core.retrieval.explain import explain, hit_flags, moves
from oxmem_gui.core.retrieval.hybrid import rerank
from oxmem_gui.core.retrieval.judgments import JudgedQuery, JudgmentStore
from oxmem_gui.core.retrieval.metrics import Metrics, evaluate, ndcg_at_k, recall_at_k, reciprocal_rank
from tests.conftest import user


@pytest.fixture
def filled(store):
    words = [
        "apple pie recipe",
        "apple tree",
        "pie chart",
        "banana bread",
        "tree house",
        "recipe book",
        "apple apple apple",
        "bread and butter",
        "chart of apples",
        "house of pies",
    ]
    store.store_many([("s", i, user(w)) for i, w in enumerate(words, 1)])
    return store


@pytest.mark.parametrize("mode", ["terms", "phrase"])
def test_rerank_equals_a_fresh_query(filled, mode):
    base = filled.hybrid_query("s", "apple pie", 5, fts_mode=mode)
    for w in (0.0, 0.1, 0.3, 0.5, 0.9, 1.0):
        again = rerank(base, w, round(1 - w, 10))
        fresh = filled.hybrid_query("s", "apple pie", 5, vector_weight=w, fts_weight=round(1 - w, 10), fts_mode=mode)

        def numbers(result):
            return [
                (h.chunk_id, h.rank, h.score, h.vector_score, h.fts_score, h.vector_raw, h.fts_raw) for h in result.hits
            ]

        assert numbers(again) == numbers(fresh)
    with pytest.raises(InvalidInputError, match="must sum to 1"):
        rerank(base, 0.5, 0.6)


def test_explanation_and_flags(filled):
    r = filled.hybrid_query("s", "banana", 3, vector_weight=0.2, fts_weight=0.8)
    top = r.hits[0]
    assert top.text == "banana bread"
    text = explain(r, top)
    assert text.splitlines()[0] == f"Rank 1 of 3 — score {top.score:.6f}"
    assert "FTS: −bm25" in text and "range collapsed (max − min ≤ 1e-06) → 1.0" in text
    assert f"score = 0.2 × {top.vector_score:.6f} + 0.8 × 1.000000" in text
    assert 'FTS expression (terms mode): "banana"' in text
    assert "FTS range collapsed (one candidate): every FTS score is 1.0" in hit_flags(r, top)
    other = r.hits[1]
    assert "not in FTS candidates" in hit_flags(r, other)
    assert "FTS: not among the leg's 1 candidates → contributes 0" in explain(r, other)


def test_tie_break_is_explained(store):
    store.store("t", 1, user("same words here"))
    store.store("t", 2, {"role": "assistant", "content": "same words here"})  # deduplicated into one chunk
    r = store.hybrid_query("t", "words", 4, vector_weight=1.0, fts_weight=0.0)
    assert len(r.hits) == 1 and "Tie-break" not in explain(r, r.hits[0])
    store.store("t", 3, user("other words there"))
    store.store("t", 4, user("third words"))
    r = store.hybrid_query("t", "zzz", 4, vector_weight=0.0, fts_weight=1.0)  # no FTS match: every score 0
    assert [h.score for h in r.hits] == [0.0, 0.0, 0.0]
    assert "Tie-break: tied at 0.000000 with rank 2: the newer one (sequence 4 > 3) ranks first" in explain(
        r, r.hits[0]
    )


def test_moves_between_settings(filled):
    a = filled.hybrid_query("s", "apple pie", 4, vector_weight=1.0, fts_weight=0.0)
    b = rerank(a, 0.0, 1.0)
    got = {m.chunk_id: m.label for m in moves(a, b)}
    old = {h.chunk_id: h.rank for h in a.hits}
    for h in b.hits:
        before = old.get(h.chunk_id)
        expected = (
            "new"
            if before is None
            else "="
            if before == h.rank
            else (f"↑{before - h.rank}" if h.rank < before else f"↓{h.rank - before}")
        )
        assert got[h.chunk_id] == expected
    assert all(got[c] == "dropped" for c in old if c not in {h.chunk_id for h in b.hits})


def test_metrics_by_hand():
    ranking = ["a", "b", "c", "d"]
    grades = {"b": 3, "d": 1, "x": 2, "a": 0}
    assert recall_at_k(ranking, grades, 2) == pytest.approx(1 / 3)
    assert recall_at_k(ranking, grades, 4) == pytest.approx(2 / 3)
    assert reciprocal_rank(ranking, grades) == 0.5
    dcg = 7 / math.log2(3) + 1 / math.log2(5)  # b at rank 2 (2^3-1), d at rank 4 (2^1-1)
    ideal = 7 / math.log2(2) + 3 / math.log2(3) + 1 / math.log2(4)  # grades 3, 2, 1, 0
    assert ndcg_at_k(ranking, grades, 4) == pytest.approx(dcg / ideal)
    assert ndcg_at_k(ranking, grades, 4) == pytest.approx(0.5161, abs=1e-4)  # 4.84719 / 9.39279
    m = evaluate({"q1": ranking, "q2": ["y"], "q3": []}, {"q1": grades, "q2": {"y": 2}, "q3": {"z": 0}}, 4)
    assert (m.queries, m.skipped) == (2, 1)
    assert m.recall == pytest.approx((2 / 3 + 1) / 2)
    assert m.mrr == pytest.approx((0.5 + 1) / 2)
    assert m.ndcg == pytest.approx((dcg / ideal + 1) / 2)


def test_judgments_live_in_their_own_file(tmp_path, store):
    js = JudgmentStore(tmp_path / "inspector.db")
    db = store.path
    js.judge(db, "travel", "s", "apple pie", "chunk:1", 3)
    js.judge(db, "travel", "s", "apple pie", "chunk:2", 1)
    js.judge(db, "travel", "s", "apple pie", "chunk:2", 2)
    js.judge(db, "travel", "s", "banana", "chunk:4", 0)
    js.judge(db, "travel", "s", "apple pie", "chunk:9", None)
    assert js.sets(db) == ["travel"] and js.sets(tmp_path / "other.db") == []
    assert [(q.query, q.grades) for q in js.queries(db, "travel")] == [
        ("apple pie", {"chunk:1": 3, "chunk:2": 2}),
        ("banana", {"chunk:4": 0}),
    ]
    with pytest.raises(InvalidInputError, match="a grade is 0, 1, 2 or 3"):
        js.judge(db, "travel", "s", "q", "c", 4)
    assert store.sql("SELECT name FROM sqlite_master WHERE name LIKE '%judg%'") == []
    js.close()


def test_sweep_metrics_and_exports(filled):
    base = filled.hybrid_query("s", "apple pie", 3)
    judged = [
        JudgedQuery("s", "apple pie", {base.hits[0].chunk_id: 3, "chunk:none": 1}),
        JudgedQuery("gone", "anything", {"x": 1}),
    ]
    ev = filled.loop.run_until_complete(
        evaluate_settings(filled.inner, judged, top_k=3, k=3, vector_weight=0.7, fts_mode="terms")
    )
    assert ev.failed == ["gone: 'anything': no session 'gone' in this store"]
    assert len(ev.sweep) == 22 and {p.fts_mode for p in ev.sweep} == {"terms", "phrase"}
    current = next(p for p in ev.sweep if p.fts_mode == "terms" and p.vector_weight == 0.7)
    assert ev.current == current.metrics
    assert ev.current.recall == 0.5 and ev.current.mrr == 1.0  # one of two relevant found, at rank 1
    best = ev.best()
    assert best.metrics.ndcg == max(p.metrics.ndcg for p in ev.sweep)
    doc = json.loads(metrics_json(ev))
    assert len(doc["sweep"]) == 22 and doc["best"]["fts_mode"] == best.fts_mode
    rows = result_rows(base)
    assert rows[0]["vector_contribution"] + rows[0]["fts_contribution"] == pytest.approx(rows[0]["score"], abs=1e-12)
    assert to_csv(rows).splitlines()[0].startswith("rank,chunk_id,session_id,score,vector_raw")
    assert json.loads(results_json(base))["hits"][0]["explanation"].startswith("Rank 1 of 3")


def test_judgments_from_many_threads(tmp_path):
    import threading

    js = JudgmentStore(tmp_path / "inspector.db")

    def work(t):
        for i in range(50):
            js.judge("/db", "set", "s", f"q{t}", f"c{i}", i % 4)
            js.queries("/db", "set")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(len(q.grades) for q in js.queries("/db", "set")) == [50, 50, 50, 50]
    js.close()


def _sweep(good: dict[tuple[str, float], tuple[str, ...]]) -> list[SweepPoint]:
    """A whole sweep where the points in ``good`` (with their empty legs) tie at the top and the rest score less."""
    low, high = Metrics(3, 0.5, 0.5, 0.4, 2, 0), Metrics(3, 1.0, 1.0, 0.9, 2, 0)
    return [
        SweepPoint(mode, w, high if (mode, w) in good else low, good.get((mode, w), ()))
        for mode in ("terms", "phrase")
        for w in (i / 10 for i in range(11))
    ]


def test_a_tie_goes_to_the_point_nearest_the_settings_in_use_never_to_one_weighing_an_empty_leg():
    assert DEFAULT_SETTING == (0.7, "terms")
    # the case users met: vector 0.1 with phrase FTS ties only because the phrase leg found nothing
    tie = {("phrase", 0.1): ("fts",), ("terms", 0.4): (), ("phrase", 1.0): ()}
    best = Evaluation(Metrics(3, 1, 1, 0.9, 2, 0), _sweep(tie), [], near=(0.4, "terms")).best()
    assert (best.fts_mode, best.vector_weight) == ("terms", 0.4)  # what is in use already: nothing to apply
    best = Evaluation(Metrics(3, 1, 1, 0.9, 2, 0), _sweep(tie), [], near=(0.2, "phrase")).best()
    assert (best.fts_mode, best.vector_weight) == ("phrase", 1.0)  # 0.1 is nearer, but weighs the empty leg
    tie = {("terms", 0.5): (), ("terms", 0.9): (), ("phrase", 0.7): ()}
    best = Evaluation(Metrics(3, 1, 1, 0.9, 2, 0), _sweep(tie), [], near=None).best()  # a fixed ranking measured
    assert (best.fts_mode, best.vector_weight) == ("terms", 0.5)  # then nearest the defaults (0.7, terms)…
    best = Evaluation(Metrics(3, 1, 1, 0.9, 2, 0), _sweep(tie), [], near=(0.7, "phrase")).best()
    assert (best.fts_mode, best.vector_weight) == ("phrase", 0.7)
    better = _sweep(tie)
    better[3].metrics = Metrics(3, 1.0, 1.0, 0.95, 2, 0)  # a higher nDCG wins whatever the distance
    assert Evaluation(better[3].metrics, better, [], near=(0.7, "phrase")).best() is better[3]


def test_the_sweep_marks_points_that_weigh_a_leg_with_no_candidates(filled):
    chunk = filled.hybrid_query("s", "apple pie", 3).hits[0].chunk_id
    judged = [JudgedQuery("s", "zzqx nothing matches", {chunk: 3})]
    ev = filled.loop.run_until_complete(
        evaluate_settings(filled.inner, judged, top_k=3, k=3, vector_weight=0.7, fts_mode="terms")
    )
    assert ev.near == (0.7, "terms")
    marks = {(p.fts_mode, p.vector_weight): p.empty_legs for p in ev.sweep}
    assert marks[("terms", 1.0)] == () and marks[("terms", 0.0)] == ("fts",) and marks[("phrase", 0.5)] == ("fts",)
