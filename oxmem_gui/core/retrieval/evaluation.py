"""Measuring retrieval settings on judged queries: metrics at the current settings, and a weight sweep.

A sweep runs each judged query once per FTS mode and re-ranks the legs it fetched for every vector weight from 0.0
to 1.0 in steps of 0.1 (:func:`retrieval.rerank` — the same numbers as fresh queries, 2 queries instead of 22).
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from ..errors import OxmemError
from .explain import explain, hit_flags
from .hybrid import FTS_MODES, LegStats, QueryResult, rerank
from .judgments import JudgedQuery
from .metrics import Metrics, evaluate
from .options import DEFAULTS as SEARCH_DEFAULTS
from .scope import scope_name

SWEEP_WEIGHTS = tuple(round(i / 10, 1) for i in range(11))


#: the hybrid's own settings (``hybrid_query``'s defaults): the last word between equally good sweep points
DEFAULT_SETTING = (SEARCH_DEFAULTS.vector_weight, SEARCH_DEFAULTS.fts_mode)


@dataclass
class SweepPoint:
    fts_mode: str
    vector_weight: float
    metrics: Metrics
    #: the legs this point weighs (weight > 0) that found no candidate for any judged query in its mode
    empty_legs: tuple[str, ...] = ()


@dataclass
class Evaluation:
    current: Metrics
    sweep: list[SweepPoint]
    failed: list[str]  # queries that could not run (a session deleted since they were judged…)
    #: the (vector weight, FTS mode) in use when measured; None when a fixed ranking was measured
    near: tuple[float, str] | None = None

    def best(self) -> SweepPoint:
        """The sweep point with the highest nDCG, then MRR, then recall. Among equals: one that weighs no leg
        that found nothing, then the one nearest the settings in use (:attr:`near`), then nearest the hybrid's
        defaults, then the lower vector weight — so a tie never moves the settings for nothing."""

        def distance(p: SweepPoint, to: tuple[float, str] | None) -> float:
            return 0.0 if to is None else abs(p.vector_weight - to[0]) + (p.fts_mode != to[1])

        top = max((p.metrics.ndcg, p.metrics.mrr, p.metrics.recall) for p in self.sweep)
        tied = [p for p in self.sweep if (p.metrics.ndcg, p.metrics.mrr, p.metrics.recall) == top]
        return min(
            tied,
            key=lambda p: (
                bool(p.empty_legs),
                round(distance(p, self.near), 9),
                round(distance(p, DEFAULT_SETTING), 9),
                p.vector_weight,
            ),
        )


async def evaluate_settings(
    store,
    judged: Sequence[JudgedQuery],
    *,
    top_k: int,
    k: int,
    vector_weight: float,
    fts_mode: str,
    progress: Callable[[int, int], None] | None = None,
    ranking: str | None = None,
) -> Evaluation:
    """Metrics at ``(vector_weight, fts_mode)`` — or, with ``ranking``, of that fixed ranking (a profile, the
    agent's own) as it runs — and of the tunable hybrid across the sweep, for the judged queries."""
    base: dict[str, dict[int, QueryResult]] = {mode: {} for mode in FTS_MODES}
    fixed: dict[str, list[str]] = {}
    failed = []
    total, done = len(judged) * (len(FTS_MODES) + (ranking is not None)), 0
    if ranking is not None:
        for i, q in enumerate(judged):
            try:
                fixed[str(i)] = [h.chunk_id for h in (await store.search(ranking, q.session_id, q.query, top_k)).hits]
            except OxmemError as exc:
                failed.append(f"{scope_name(q.session_id)}: {q.query!r}: {exc}")
            done += 1
            if progress:
                progress(done, total)
    for mode in FTS_MODES:
        for i, q in enumerate(judged):
            try:
                base[mode][i] = await store.hybrid_query(q.session_id, q.query, top_k, fts_mode=mode)
            except OxmemError as exc:
                if mode == FTS_MODES[0] and ranking is None:
                    failed.append(f"{scope_name(q.session_id)}: {q.query!r}: {exc}")
            done += 1
            if progress:
                progress(done, total)
    grades = {str(i): q.grades for i, q in enumerate(judged) if i in base[FTS_MODES[0]]}

    def measure(mode: str, weight: float) -> Metrics:
        rankings = {
            str(i): [h.chunk_id for h in rerank(r, weight, round(1.0 - weight, 10)).hits] for i, r in base[mode].items()
        }
        return evaluate(rankings, grades, k)

    def empty(mode: str, leg: str) -> bool:
        return all(not r.legs.get(leg, LegStats()).candidates for r in base[mode].values())

    def point(mode: str, w: float) -> SweepPoint:
        weighed = {"vector": w > 0, "fts": w < 1}
        empty_legs = tuple(leg for leg in ("vector", "fts") if weighed[leg] and empty(mode, leg))
        return SweepPoint(mode, w, measure(mode, w), empty_legs)

    def all_points() -> tuple[Metrics, list[SweepPoint]]:
        sweep = [point(mode, w) for mode in FTS_MODES for w in SWEEP_WEIGHTS]
        if ranking is not None:
            return evaluate(fixed, {i: g for i, g in grades.items() if i in fixed}, k), sweep
        return measure(fts_mode, vector_weight), sweep

    current, sweep = await asyncio.to_thread(all_points)  # re-ranking and arithmetic: off the caller's loop
    return Evaluation(current, sweep, failed, None if ranking is not None else (vector_weight, fts_mode))


# -- export -------------------------------------------------------------------------------------------------


def result_rows(result: QueryResult) -> list[dict]:
    """One flat record per hit: every number of the breakdown, the flags and the explanation."""
    rows = []
    for h in result.hits:
        rows.append(
            {
                "rank": h.rank,
                "chunk_id": h.chunk_id,
                "session_id": h.session_id,
                "score": h.score,
                "vector_raw": h.vector_raw,
                "vector_rank": h.vector_rank,
                "vector_score": h.vector_score,
                "vector_weight": result.vector_weight,
                "vector_contribution": result.vector_weight * h.vector_score,
                "fts_raw": h.fts_raw,
                "fts_rank": h.fts_rank,
                "fts_score": h.fts_score,
                "fts_weight": result.fts_weight,
                "fts_contribution": result.fts_weight * h.fts_score,
                "context_score": h.context_score,
                "context_sequence": h.context_sequence,
                "sequence_start": h.sequence_start,
                "sequence_end": h.sequence_end,
                "embedding_model": h.embedding_model,
                "text": h.text,
                "flags": "; ".join(hit_flags(result, h)),
                "explanation": explain(result, h),
            }
        )
    return rows


def to_csv(rows: Sequence[dict]) -> str:
    out = io.StringIO()
    if rows:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return out.getvalue()


def results_json(result: QueryResult) -> str:
    doc = {
        "query": result.query,
        "session_id": result.session_id,
        "retriever": result.retriever,
        "profile": result.profile,
        "dropped_terms": result.dropped_terms,
        "fts_mode": result.fts_mode,
        "fts_expression": result.fts_expression,
        "vector_weight": result.vector_weight,
        "fts_weight": result.fts_weight,
        "top_k": result.top_k,
        "legs": {k: asdict(v) for k, v in result.legs.items()},
        "models": result.models,
        "hits": result_rows(result),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


def metrics_rows(evaluation: Evaluation) -> list[dict]:
    return [
        {
            "fts_mode": p.fts_mode,
            "vector_weight": p.vector_weight,
            "fts_weight": round(1 - p.vector_weight, 10),
            "k": p.metrics.k,
            "recall": p.metrics.recall,
            "mrr": p.metrics.mrr,
            "ndcg": p.metrics.ndcg,
            "queries": p.metrics.queries,
        }
        for p in evaluation.sweep
    ]


def metrics_json(evaluation: Evaluation) -> str:
    best = evaluation.best()
    return json.dumps(
        {
            "current": asdict(evaluation.current),
            "best": asdict(best),
            "sweep": metrics_rows(evaluation),
            "failed": evaluation.failed,
        },
        indent=2,
    )
