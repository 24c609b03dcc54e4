"""Re-ranking and the weight sweep over judged queries: metrics by setting, exports, the tie rule."""

import json

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
from oxmem_gui.core.retrieval.hybrid import rerank
from oxmem_gui.core.retrieval.judgments import JudgedQuery
from oxmem_gui.core.retrieval.metrics import Metrics


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
