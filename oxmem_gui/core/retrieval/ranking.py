"""Named ranking profiles: contract §6's hybrid with fixed settings and a few measured extra steps.

contract §6 (retriever ``oxmem``) stays exact and tunable; a profile is another retriever beside it and beside the
agent's own. The ``tuned`` profile is what ``bench/bench_quality.py`` measured best on public
conversational-memory sets (LongMemEval, LoCoMo; figures in the README), with no language model:

1. **Keywords.** The query's terms (as contract §6's terms mode makes them) without English stopwords
   (:mod:`.stopwords`: first-person pronouns are kept); each remaining alphabetic term of four or more letters
   is searched as a prefix of its first ``max(4, n − 2)`` letters (``"painted"`` → ``"paint"*``), a crude
   stemmer that also matches ``painting``. The FTS leg's BM25 is FTS5's own for that expression.
2. **Both legs** as contract §6 (``top_k × 4`` candidates each, min–max normalized), weighted
   ``0.4 × vector + 0.6 × FTS``.
3. **Neighbour context.** A conversation's answer often spans turns: each candidate adds
   ``0.3 ×`` the best weighted score among the candidates of the turn just before or after it (sequence ± 1).
4. **Order** as contract §6: score, then recency, then chunk id.

Every step is in the result: the dropped stopwords, the expression, and per hit the neighbour's sequence and
what it added, so the explanation stays raw → normalized → weighted → final.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import apsw
import numpy as np

from ..embeddings.backends import EmbeddingBackend
from .bm25 import Bm25Index
from .hybrid import Hit, QueryResult, fts_terms, hybrid_query, order_key, recency
from .scope import Scope
from .stopwords import content_terms
from .vectors import VectorIndex

#: terms at least this long (letters only) are searched as prefixes
PREFIX_MIN_LETTERS = 4


@dataclass(frozen=True)
class RankingProfile:
    """A ranking's fixed settings. ``neighbour_weight`` 0 and both switches off is contract §6 as is."""

    name: str
    label: str
    vector_weight: float
    fts_weight: float
    drop_stopwords: bool
    prefixes: bool
    neighbour_weight: float
    #: the update step (:func:`with_updates`): the cosine at which a newer candidate restates an older one (0: off)
    update_similarity: float = 0.0

    def settings(self) -> dict[str, Any]:
        """The profile as recorded in results and ``--json`` output."""
        return asdict(self)

    def steps(self) -> list[str]:
        out = ["FTS leg: the query's words, OR-ed"]
        if self.drop_stopwords:
            out[0] += ", without English stopwords (all kept when every word is one)"
        if self.prefixes:
            out.append(
                f"each word of {PREFIX_MIN_LETTERS}+ letters matches as a prefix of its first max({PREFIX_MIN_LETTERS},"
                " n − 2) letters (painted → paint*)"
            )
        out.append(
            f"each leg min–max normalized to 0…1 (contract §6), then {self.vector_weight:g} × vector + "
            f"{self.fts_weight:g} × FTS"
        )
        if self.neighbour_weight:
            out.append(
                f"neighbour context: + {self.neighbour_weight:g} × the best weighted score of the turn just "
                "before or after (sequence ± 1) among the candidates"
            )
        if self.update_similarity:
            out.append(
                f"updates: a candidate that restates an older candidate of its session (their vectors' cosine ≥ "
                f"{self.update_similarity:g}, other words) ranks at least level with it, so the newer statement of a "
                "fact comes first"
            )
        out.append("order: score, then the newer turn, then chunk id (contract §6)")
        return out


TUNED = RankingProfile(
    name="tuned",
    label="oxmem tuned",
    vector_weight=0.4,
    fts_weight=0.6,
    drop_stopwords=True,
    prefixes=True,
    neighbour_weight=0.3,
)
PROFILES: dict[str, RankingProfile] = {TUNED.name: TUNED}


def keyword_terms(query: str, profile: RankingProfile) -> tuple[list[str], list[str]]:
    """``(terms, dropped)``: the FTS terms of ``query`` under ``profile`` (a prefix ends with ``*``) and the
    stopwords it left out."""
    terms = fts_terms(query)
    dropped: list[str] = []
    if profile.drop_stopwords:
        terms, dropped = content_terms(terms)
    if profile.prefixes:
        terms = [
            t[: max(PREFIX_MIN_LETTERS, len(t) - 2)] + "*" if t.isalpha() and len(t) >= PREFIX_MIN_LETTERS else t
            for t in terms
        ]
    return terms, dropped


def with_neighbours(pool: Sequence[Hit], weight: float, top_k: int) -> list[Hit]:
    """Rank ``pool`` (hits already carrying their weighted ``score``) with the neighbour step (:func:`neighboured`);
    the best ``top_k``, ranked."""
    return ranked(neighboured(pool, weight), top_k)


def ranked(hits: Sequence[Hit], top_k: int) -> list[Hit]:
    """The best ``top_k`` of ``hits`` by their ``score`` (contract §6's order), ranked from 1."""
    ordered = sorted(hits, key=lambda h: order_key(h.score, h))
    return [replace(h, rank=i) for i, h in enumerate(ordered[:top_k], 1)]


def neighboured(pool: Sequence[Hit], weight: float) -> list[Hit]:
    """Every hit of ``pool`` (carrying its weighted ``score``) with the neighbour step: each adds ``weight ×`` the
    best score among the pool's chunks of its session whose ``sequence_start`` is one before or after its own
    (``context_score`` / ``context_sequence`` say what and whence)."""
    best: dict[tuple[str, int], float] = {}  # by session and sequence: a pool may span sessions
    for h in pool:
        if h.sequence_start is not None:
            key = (h.session_id, h.sequence_start)
            best[key] = max(best.get(key, 0.0), h.score)
    scored = []
    for h in pool:
        extra, source = 0.0, None
        if weight and h.sequence_start is not None:
            for seq in (h.sequence_start - 1, h.sequence_start + 1):
                if best.get((h.session_id, seq), 0.0) > extra:
                    extra, source = best[(h.session_id, seq)], seq
        added = weight * extra
        scored.append(replace(h, score=h.score + added, context_score=added, context_sequence=source))
    return scored


def with_updates(hits: Sequence[Hit], vectors: Mapping[str, np.ndarray], similarity: float) -> list[Hit]:
    """The update step: a hit that restates an older hit of its session — their unit ``vectors`` (by chunk id, one
    model) at cosine ≥ ``similarity``, their texts different — scores at least what that older one scores, so the
    newer statement ranks first (contract §6's order puts the newer of two equal scores first). Of several older
    ones, the best-scoring counts; a chain (a fact updated twice) carries through, oldest first. Sets
    ``update_of`` / ``update_cosine`` / ``update_score`` on the newer hit and ``updated_by`` on the older one. Only
    statements of one role are compared (a user's restatement, not the assistant's reply about it).

    Not part of the tuned profile yet: on LongMemEval's 72 knowledge-update questions (``bench_quality.py --sets
    lme-ku``) it moves nDCG@10 by −0.004 … +0.001 at cosine 0.8–0.9 (0.668 without it; without the role test, and
    at 0.5–0.7, it costs up to −0.5)."""
    out = {h.chunk_id: h for h in hits}
    sessions: dict[str, list[Hit]] = {}
    for h in hits:
        sessions.setdefault(h.session_id, []).append(h)
    for group in sessions.values():
        group = sorted((h for h in group if h.chunk_id in vectors), key=lambda h: (recency(h), h.chunk_id))
        for i, h in enumerate(group):
            best: tuple[float, float, Hit] | None = None
            for older in group[:i]:
                if recency(older) >= recency(h) or older.text == h.text or _role(older) != _role(h):
                    continue
                cosine = float(vectors[h.chunk_id] @ vectors[older.chunk_id])
                score = out[older.chunk_id].score
                if cosine >= similarity and (best is None or score > best[0]):
                    best = (score, cosine, older)
            if best is None:
                continue
            score, cosine, older = best
            mine = out[h.chunk_id]
            lift = max(0.0, score - mine.score)
            out[h.chunk_id] = replace(mine, score=mine.score + lift, update_score=lift, update_of=recency(older),
                                      update_cosine=cosine)  # fmt: skip
            out[older.chunk_id] = replace(out[older.chunk_id], updated_by=recency(h))
    return [out[h.chunk_id] for h in hits]


def _role(hit: Hit) -> object:
    return hit.metadata.get("role") if isinstance(hit.metadata, dict) else None


def unit_vectors(conn: apsw.Connection, hits: Sequence[Hit], model: str | None) -> dict[str, np.ndarray]:
    """The stored vectors of ``model`` of the hits' chunks, scaled to unit length, by chunk id (a vector that is
    not ``model``'s, or cannot be read, is left out)."""
    found: dict[str, np.ndarray] = {}
    ids = [h.chunk_id for h in hits]
    for start in range(0, len(ids), 500):
        batch = ids[start : start + 500]
        marks = ", ".join("?" * len(batch))
        for cid, blob in conn.execute(
            f"SELECT chunk_id, embedding_blob FROM chunks_vec WHERE embedding_model = ? AND chunk_id IN ({marks})",
            (model, *batch),
        ):
            if isinstance(blob, bytes) and blob and len(blob) % 4 == 0:
                v = np.frombuffer(blob, dtype="<f4").astype(np.float64)
                norm = float(np.linalg.norm(v))
                if norm > 0 and np.isfinite(norm):
                    found[cid] = v / norm
    return found


def profile_query(
    conn: apsw.Connection,
    index: VectorIndex,
    backends: Mapping[str, EmbeddingBackend],
    session_id: Scope,
    query: str,
    top_k: int,
    profile: RankingProfile,
    *,
    tags: Sequence[str] = (),
    tag_mode: str = "any",
    query_embeddings: Mapping[str, Sequence[float]] | None = None,
    bm25: Bm25Index | None = None,
    models: Sequence[str] | None = None,
) -> QueryResult:
    """``profile``'s ranking of ``session_id`` for ``query``: contract §6's legs with the profile's FTS terms and
    weights, then its neighbour step; the result names the profile and lists its steps."""
    terms, dropped = keyword_terms(query, profile) if isinstance(query, str) else ([], [])
    result = hybrid_query(
        conn,
        index,
        backends,
        session_id,
        query,
        top_k,
        vector_weight=profile.vector_weight,
        fts_weight=profile.fts_weight,
        tags=tags,
        tag_mode=tag_mode,
        query_embeddings=query_embeddings,
        bm25=bm25,
        models=models,
        fts_terms_override=terms,
    )
    weighted = [
        replace(h, score=profile.vector_weight * h.vector_score + profile.fts_weight * h.fts_score) for h in result.pool
    ]
    scored = neighboured(weighted, profile.neighbour_weight)
    if profile.update_similarity and result.models:
        vectors = unit_vectors(conn, scored, result.models[0])
        scored = with_updates(scored, vectors, profile.update_similarity)
    result.hits = ranked(scored, top_k)
    result.retriever = profile.name
    result.steps = profile.steps()
    result.profile = profile.settings()
    result.dropped_terms = dropped
    return result
