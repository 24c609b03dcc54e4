"""Retrieval metrics by hand: recall@k, reciprocal rank, nDCG@k."""

import math

import pytest

from oxmem_gui.core.retrieval.metrics import evaluate, ndcg_at_k, recall_at_k, reciprocal_rank


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
