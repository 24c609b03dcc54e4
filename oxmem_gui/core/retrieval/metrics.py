"""Ranking quality for judged queries: recall@k, MRR and nDCG@k, as search-relevance workbenches compute them.

Judgments are grades 0–3 per chunk; a chunk graded ≥ 1 is relevant. nDCG uses the gain ``2^grade − 1`` and the
discount ``log2(rank + 1)``; its ideal ranking orders the judged chunks by grade. A query without any relevant
chunk has nothing to find: it is left out of every mean and counted as skipped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


def recall_at_k(ranking: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    relevant = {c for c, g in grades.items() if g > 0}
    return len(relevant & set(ranking[:k])) / len(relevant)


def reciprocal_rank(ranking: Sequence[str], grades: Mapping[str, int]) -> float:
    for i, chunk in enumerate(ranking, 1):
        if grades.get(chunk, 0) > 0:
            return 1.0 / i
    return 0.0


def dcg(gains: Sequence[int], k: int) -> float:
    return sum((2**g - 1) / math.log2(i + 1) for i, g in enumerate(gains[:k], 1))


def ndcg_at_k(ranking: Sequence[str], grades: Mapping[str, int], k: int) -> float:
    ideal = dcg(sorted(grades.values(), reverse=True), k)
    return dcg([grades.get(c, 0) for c in ranking], k) / ideal


@dataclass
class Metrics:
    k: int
    recall: float
    mrr: float
    ndcg: float
    queries: int  # judged queries with at least one relevant chunk
    skipped: int  # judged queries without one


def evaluate(rankings: Mapping[str, Sequence[str]], judgments: Mapping[str, Mapping[str, int]], k: int) -> Metrics:
    """Means over the queries of ``judgments`` that have a relevant chunk (``rankings[q]``: chunk ids, best first)."""
    scored = [q for q, grades in judgments.items() if any(g > 0 for g in grades.values())]
    if not scored:
        return Metrics(k, 0.0, 0.0, 0.0, 0, len(judgments))
    n = len(scored)
    return Metrics(
        k,
        sum(recall_at_k(rankings.get(q, []), judgments[q], k) for q in scored) / n,
        sum(reciprocal_rank(rankings.get(q, []), judgments[q]) for q in scored) / n,
        sum(ndcg_at_k(rankings.get(q, []), judgments[q], k) for q in scored) / n,
        n,
        len(judgments) - n,
    )
