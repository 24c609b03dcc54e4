"""Hybrid retrieval with an exact per-hit breakdown (contract §6).

Two legs — vector cosine and FTS5 BM25 — each return ``top_k * 4`` candidates, are min–max normalized
separately, merged by chunk id and weighted. Every number that decided a rank is returned with the hit, and
each leg's statistics with the result, so a person can see *why* a hit ranked where it did.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import apsw
import numpy as np

from ..embeddings.backends import EmbeddingBackend
from ..embeddings.endpoint import UnusableAnswer, embed_sized
from ..embeddings.indexing import normalize
from ..errors import InvalidInputError, StoreBusyError
from ..store.events import require_session
from ..store.inputs import check_positive, check_text, parse_stored, shown
from ..store.tags import TAG_MODES, normalize_tags, tag_filter_sql
from .bm25 import Bm25Index
from .scope import AllSessions, Scope, scope_sql, shown_scope
from .vectors import Candidate, VectorIndex, candidate_key

CANDIDATE_FACTOR = 4
#: More hits than anyone reads; it bounds the candidates each leg fetches (4 × top_k).
MAX_TOP_K = 1000
#: FTS5 (and the BM25 index) cost grows with every OR-ed term; a question is far shorter than this.
MAX_QUERY_TERMS = 256
COLLAPSE_EPSILON = 1e-6
FTS_MODES = ("terms", "phrase")
#: what a result records as its mode when a profile built the FTS expression (:mod:`.ranking`)
KEYWORDS_MODE = "keywords"


@dataclass
class LegStats:
    """One leg's candidates: how many, the raw score range, and whether the range collapsed to 1.0."""

    candidates: int = 0
    min: float | None = None
    max: float | None = None
    collapsed: bool = False


@dataclass
class Hit:
    rank: int
    chunk_id: str
    session_id: str
    text: str
    score: float
    vector_score: float
    fts_score: float
    vector_raw: float | None
    fts_raw: float | None
    vector_rank: int | None
    fts_rank: int | None
    sequence_start: int | None
    sequence_end: int | None
    metadata: Any
    embedding_model: str | None
    #: steps of another agent's ranking that this hit went through, in words (a list it came from, a score
    #: transform); empty for the store's own hybrid
    notes: list[str] = field(default_factory=list)
    #: a profile's neighbour step: what it added to the weighted score, and the sequence of the neighbouring
    #: turn it came from (None: nothing added)
    context_score: float = 0.0
    context_sequence: int | None = None
    #: a profile's update step: what it added, the sequence of the older statement this one restates (it ranks
    #: just above it), the share of their words in common; and, on the older one, the sequence of the newer
    #: statement that updates it
    update_score: float = 0.0
    update_of: int | None = None
    update_overlap: float | None = None
    updated_by: int | None = None


@dataclass
class QueryResult:
    query: str
    #: the session searched; None for a search over many sessions (:mod:`.scope`)
    session_id: str | None
    top_k: int
    vector_weight: float
    fts_weight: float
    fts_mode: str
    tags: list[str]
    tag_mode: str
    fts_expression: str | None
    legs: dict[str, LegStats]
    hits: list[Hit]
    models: list[str] = field(default_factory=list)
    skipped_models: dict[str, str] = field(default_factory=dict)
    vector_errors: list[tuple[str, str]] = field(default_factory=list)
    #: every candidate of either leg, with its leg scores (``hits`` are the best ``top_k`` of these)
    pool: list[Hit] = field(default_factory=list, repr=False)
    #: which ranking made this result (:class:`~oxmem_gui.core.formats.base.Retriever` name)
    retriever: str = "oxmem"
    #: how that ranking works, step by step, in words (shown above the hits)
    steps: list[str] = field(default_factory=list)
    #: rankings that return several lists (aidaemon): each list's name and its chunk ids in order
    lists: dict[str, list[str]] = field(default_factory=dict)
    #: a ranking profile's settings (:class:`~oxmem_gui.core.ranking.RankingProfile`), empty for contract §6 as is
    profile: dict[str, Any] = field(default_factory=dict)
    #: query words a profile left out of the FTS expression (stopwords)
    dropped_terms: list[str] = field(default_factory=list)
    #: the whole pool, scored and ranked as ``hits`` are (``hits`` is its head); empty for the agents' rankings
    ranking: list[Hit] = field(default_factory=list, repr=False)


def fts_terms(query: str) -> list[str]:
    """The maximal runs of alphanumeric characters (``str.isalnum``) of ``query``, in order."""
    return ["".join(g) for alnum, g in itertools.groupby(query, key=str.isalnum) if alnum]


def _check_term_count(count: int) -> None:
    if count > MAX_QUERY_TERMS:
        raise InvalidInputError(
            f"query has {count:,} words; terms mode searches at most {MAX_QUERY_TERMS} (shorten it, or use phrase mode)"
        )


def _quoted(term: str) -> str:
    """A term as an FTS5 string; ``word*`` (a prefix) becomes ``"word"*``."""
    return f'"{term[:-1]}"*' if term.endswith("*") else f'"{term}"'


def fts_expression(query: str, mode: str) -> str | None:
    """The FTS5 MATCH expression for ``query``: user text is always inside double quotes.

    ``terms``: each term quoted, joined with `` OR `` (None when there are no terms).
    ``phrase``: the whole stripped query as one phrase, inner ``"`` doubled (what the Oxydra agent does).
    """
    if mode == "terms":
        terms = fts_terms(query)
        _check_term_count(len(terms))
        return " OR ".join(_quoted(t) for t in terms) if terms else None
    if mode == "phrase":  # FTS5 ends a string at NUL: it is a separator like any other here
        return '"' + query.strip().replace("\x00", " ").replace('"', '""') + '"'
    raise InvalidInputError(f"fts mode must be one of {', '.join(FTS_MODES)}, got {shown(mode)}")


def validate_weights(vector_weight: float, fts_weight: float) -> tuple[float, float]:
    for name, w in (("vector weight", vector_weight), ("fts weight", fts_weight)):
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not 0 <= w <= 1 or not math.isfinite(w):
            raise InvalidInputError(f"{name} must be a number in [0, 1], got {shown(w)}")
    if abs(vector_weight + fts_weight - 1.0) > 1e-6:
        raise InvalidInputError(
            f"vector weight {vector_weight} and fts weight {fts_weight} must sum to 1 "
            f"(they sum to {vector_weight + fts_weight:g})"
        )
    return float(vector_weight), float(fts_weight)


#: Runs the vector leg's embedding and matrix product while the connection's thread runs the FTS leg
#: (numpy, onnxruntime and SQLite all release the GIL).
_VECTOR_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="oxmem-vector")


def _start_vector_leg(
    conn: apsw.Connection,
    index: VectorIndex,
    session_id: Scope,
    query: str,
    limit: int,
    backends: Mapping[str, EmbeddingBackend],
    query_embeddings: Mapping[str, Sequence[float]],
    allowed: set[str] | None,
    result: QueryResult,
    only_models: Sequence[str] | None = None,
) -> Future[list[Candidate]]:
    """Read what the vector leg needs from the database here, on the connection's thread (matrices are
    cached, so usually nothing), and compute it on another thread; returns the future candidates."""
    text = normalize(query)
    work = []
    for model in index.models(conn, session_id):
        if only_models is not None and model not in only_models:
            result.skipped_models[model] = "not selected for this query"
            continue
        if model in query_embeddings:
            qvec: np.ndarray | None = np.asarray(query_embeddings[model], dtype=np.float32)
            dims = len(qvec)
        elif model in backends:  # (a backend that cannot say its size, an endpoint's, gives the stored vectors')
            qvec, dims = None, backends[model].dimensions or _stored_size(conn, index, session_id, model)
        else:
            reason = getattr(backends, "reason", None)
            result.skipped_models[model] = reason(model) if reason else "no embedding backend for this model is loaded"
            continue
        matrix = index.get(conn, session_id, model, dims)
        result.models.append(model)
        result.vector_errors.extend(matrix.errors)
        mask = None
        if allowed is not None:
            mask = np.fromiter((cid in allowed for cid in matrix.chunk_ids), dtype=bool, count=len(matrix.chunk_ids))
        work.append((model, matrix, qvec, backends.get(model), mask))

    def compute() -> list[Candidate]:
        candidates: list[Candidate] = []
        for model, matrix, qvec, backend, mask in work:
            if qvec is None:
                try:
                    qvec = embed_sized(backend, text, matrix.dims)
                except UnusableAnswer as exc:  # an answer that does not fit the stored vectors: this model's left out
                    result.skipped_models[model] = f"{exc}; the vector part is left out"
                    result.models.remove(model)
                    continue
            candidates.extend(matrix.top(qvec, limit, mask))
        candidates.sort(key=candidate_key)
        return candidates  # cut to ``limit`` by ``VectorIndex.confirm``, on fresh sequence numbers

    return _VECTOR_POOL.submit(compute)


def _stored_size(conn: apsw.Connection, index: VectorIndex, session_id: Scope, model: str) -> int:
    """The values of the session's stored vectors of ``model``: as :meth:`VectorIndex.models` just read them, else
    its first one's (0: none)."""
    known = index.stored_dims(session_id, model)
    if known:
        return known
    where, args = scope_sql(session_id)
    row = conn.execute(
        f"SELECT length(v.embedding_blob) FROM chunks c JOIN chunks_vec v ON v.chunk_id = c.chunk_id WHERE {where} "
        "AND v.embedding_model = ? LIMIT 1",
        (*args, model),
    ).fetchone()
    return int(row[0]) // 4 if row and row[0] else 0


FTS_FIRST_WINDOW = 128


def _fts_leg(
    conn: apsw.Connection,
    session_id: Scope,
    expression: str | None,
    limit: int,
    tag_sql: str,
    tag_args: list[str],
    bm25: Bm25Index | None = None,
    terms: list[str] | None = None,
) -> list[Candidate]:
    """The FTS leg's candidates, in leg order.

    FTS5 scores every match of the expression; filtering by session inside that query would cost a read of
    the FTS content for each match, which dominates for common words. Instead the best-scored matches of the
    whole table are taken (FTS5's top-N sort), a window at a time, and only those are looked up in
    ``chunks`` for their session, tags and sequence range. The window grows until ``limit`` of them belong to
    the session and a lower score follows the last one kept — so every chunk tied with the last candidate is
    seen, and contract §6's tie-breaks order them exactly as one filtered, fully ordered query would.

    With ``bm25`` (terms mode, no tag filter, a large table) the same scores come from :mod:`.bm25` instead.
    """
    if expression is None:
        return []
    if bm25 is not None and terms and not tag_args:
        ranked = bm25.scores(conn, session_id, terms, limit)
        if ranked is not None:
            return _candidates_for_rows(conn, ranked, limit)
    window = max(FTS_FIRST_WINDOW, 4 * limit)
    while True:
        try:
            ranked = conn.execute(
                "SELECT rowid, -bm25(chunks_fts) AS score FROM chunks_fts WHERE chunks_fts MATCH ? "
                "ORDER BY score DESC LIMIT ?",
                (expression, window),
            ).fetchall()
        except apsw.SQLError as exc:
            raise InvalidInputError(f"full-text search rejected {expression!r}: {exc}") from exc
        found = _session_candidates(conn, ranked, session_id, limit, tag_sql, tag_args)
        cutoff = found[limit - 1].raw if len(found) >= limit else None
        if len(ranked) < window or (cutoff is not None and ranked[-1][1] < cutoff):
            found.sort(key=candidate_key)
            return found[:limit]
        window *= 4


def _candidates_for_rows(conn: apsw.Connection, ranked: list[tuple[int, float]], limit: int) -> list[Candidate]:
    found: list[Candidate] = []
    for start in range(0, len(ranked), 500):
        batch = ranked[start : start + 500]
        marks = ", ".join("?" * len(batch))
        rows = {
            r[0]: r[1:]
            for r in conn.execute(
                f"SELECT rowid, chunk_id, sequence_start, sequence_end FROM chunks WHERE rowid IN ({marks})",
                [rowid for rowid, _ in batch],
            )
        }
        for rowid, score in batch:
            if rowid in rows:
                cid, start_seq, end_seq = rows[rowid]
                found.append(Candidate(cid, score, start_seq, end_seq))
    found.sort(key=candidate_key)
    return found[:limit]


def _session_candidates(
    conn: apsw.Connection, ranked: list[tuple], session_id: Scope, limit: int, tag_sql: str, tag_args: list[str]
) -> list[Candidate]:
    """The rows of ``ranked`` (best first) that are chunks of the session passing the tag filter, up to the
    ``limit``-th and every row tied with it."""
    found: list[Candidate] = []
    scope_where, scope_args = scope_sql(session_id)
    for start in range(0, len(ranked), 500):
        batch = ranked[start : start + 500]
        if len(found) >= limit and batch[0][1] < found[limit - 1].raw:
            break
        marks = ", ".join("?" * len(batch))
        chunks = {
            row[0]: row[1:]
            for row in conn.execute(
                f"SELECT c.rowid, c.chunk_id, c.sequence_start, c.sequence_end FROM chunks c "
                f"WHERE c.rowid IN ({marks}) AND {scope_where} AND {tag_sql}",
                (*(r[0] for r in batch), *scope_args, *tag_args),
            )
        }
        for rowid, score in batch:
            if len(found) >= limit and score < found[limit - 1].raw:
                return found
            if rowid in chunks:
                cid, start_seq, end_seq = chunks[rowid]
                found.append(Candidate(cid, float(score), start_seq, end_seq))
    return found


def _normalized(candidates: list[Candidate]) -> tuple[dict[str, float], LegStats]:
    if not candidates:
        return {}, LegStats()
    raws = [c.raw for c in candidates]
    lo, hi = min(raws), max(raws)
    collapsed = hi - lo <= COLLAPSE_EPSILON
    scores = {c.chunk_id: 1.0 if collapsed else (c.raw - lo) / (hi - lo) for c in candidates}
    return scores, LegStats(len(candidates), lo, hi, collapsed)


def hybrid_query(
    conn: apsw.Connection,
    index: VectorIndex,
    backends: Mapping[str, EmbeddingBackend],
    session_id: Scope,
    query: str,
    top_k: int = 8,
    *,
    vector_weight: float = 0.7,
    fts_weight: float = 0.3,
    fts_mode: str = "terms",
    tags: Sequence[str] = (),
    tag_mode: str = "any",
    query_embeddings: Mapping[str, Sequence[float]] | None = None,
    bm25: Bm25Index | None = None,
    models: Sequence[str] | None = None,
    fts_terms_override: Sequence[str] | None = None,
) -> QueryResult:
    """Run both legs on ``session_id`` — a session, or many (:mod:`.scope`: one ranking over their chunks) — and
    return the ``top_k`` best hits with their full breakdown.

    ``fts_terms_override`` (used by ranking profiles, :mod:`.ranking`): the FTS leg searches these terms, OR-ed,
    instead of the query's — a term ending in ``*`` is a prefix; ``fts_mode`` is then recorded as ``keywords``.

    ``backends`` maps model names to the backends able to embed the query for that model's vectors;
    ``query_embeddings`` maps model names to precomputed query vectors (used instead of embedding).
    Chunks of a model with neither are skipped and listed in ``skipped_models``; so are those of a model not in
    ``models``, when given (to compare one model's vectors with another's in a mixed store).
    """
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("query is empty")
    check_text(query, "query")
    if not isinstance(session_id, AllSessions):
        check_text(session_id, "session id")
        require_session(conn, session_id)
    check_positive(top_k, "top_k", MAX_TOP_K)
    vector_weight, fts_weight = validate_weights(vector_weight, fts_weight)
    if tag_mode not in TAG_MODES:
        raise InvalidInputError(f"tag mode must be one of {', '.join(TAG_MODES)}, got {shown(tag_mode)}")
    tag_list = normalize_tags(tags)
    if fts_terms_override is not None:
        fts_mode, terms = KEYWORDS_MODE, list(fts_terms_override)
        _check_term_count(len(terms))
        expression = " OR ".join(_quoted(t) for t in terms) or None
    else:
        expression = fts_expression(query, fts_mode)
        terms = fts_terms(query) if fts_mode == "terms" else None
    limit = top_k * CANDIDATE_FACTOR
    tag_sql, tag_args = tag_filter_sql(tag_list, tag_mode)

    scope = shown_scope(session_id)
    result = QueryResult(
        query, scope, top_k, vector_weight, fts_weight, fts_mode, tag_list, tag_mode, expression, {}, []
    )
    allowed = None
    if tag_list:
        scope_where, scope_args = scope_sql(session_id)
        allowed = {
            r[0]
            for r in conn.execute(
                f"SELECT c.chunk_id FROM chunks c WHERE {scope_where} AND {tag_sql}", (*scope_args, *tag_args)
            )
        }

    def vector_leg() -> Future[list[Candidate]]:
        return _start_vector_leg(
            conn, index, session_id, query, limit, backends, query_embeddings or {}, allowed, result, models
        )

    pending = vector_leg()
    try:
        fts = _fts_leg(conn, session_id, expression, limit, tag_sql, tag_args, bm25, terms)
    finally:
        vec = pending.result()
    if not index.confirm(conn, session_id, vec, limit):  # the cache was stale: read again, in this snapshot
        result.models.clear()
        result.vector_errors.clear()
        result.skipped_models.clear()
        vec = vector_leg().result()
        if not index.confirm(conn, session_id, vec, limit):
            raise StoreBusyError("the vector index changed while it was read; try the search again")
    vec_scores, result.legs["vector"] = _normalized(vec)
    fts_scores, result.legs["fts"] = _normalized(fts)

    merged: dict[str, dict[str, Any]] = {}
    for leg, cands in (("vector", vec), ("fts", fts)):
        for rank, c in enumerate(cands, 1):
            entry = merged.setdefault(c.chunk_id, {"start": c.sequence_start, "end": c.sequence_end})
            entry[f"{leg}_raw"] = c.raw
            entry[f"{leg}_rank"] = rank
    details = {}
    ids = list(merged)
    for start in range(0, len(ids), 500):
        batch = ids[start : start + 500]
        marks = ", ".join("?" * len(batch))
        for cid, sid, text, meta, model in conn.execute(
            "SELECT c.chunk_id, c.session_id, c.chunk_text, c.metadata_json, v.embedding_model FROM chunks c "
            f"LEFT JOIN chunks_vec v ON v.chunk_id = c.chunk_id WHERE c.chunk_id IN ({marks})",
            batch,
        ):
            details[cid] = (sid, text, parse_stored(meta), model)
    result.pool = [
        Hit(
            0,
            cid,
            *details[cid][:2],
            0.0,
            vec_scores.get(cid, 0.0),
            fts_scores.get(cid, 0.0),
            e.get("vector_raw"),
            e.get("fts_raw"),
            e.get("vector_rank"),
            e.get("fts_rank"),
            e["start"],
            e["end"],
            *details[cid][2:],
        )
        for cid, e in merged.items()
        if cid in details
    ]
    result.ranking = rank_pool(result.pool, vector_weight, fts_weight)
    result.hits = result.ranking[:top_k]
    return result


def recency(hit: Hit) -> int:
    """contract §6's recency: ``sequence_end``, else ``sequence_start``, else 0."""
    if hit.sequence_end is not None:
        return hit.sequence_end
    return hit.sequence_start if hit.sequence_start is not None else 0


def order_key(score: float, hit: Hit) -> tuple[float, int, str]:
    """contract §6 step 6: score descending, then recency descending, then chunk id ascending."""
    return -score, -recency(hit), hit.chunk_id


def rank_pool(pool: Sequence[Hit], vector_weight: float, fts_weight: float) -> list[Hit]:
    """Every merged candidate scored with the weights, ranked (contract §6 steps 5–6); the hits are its head."""
    scored = [(vector_weight * h.vector_score + fts_weight * h.fts_score, h) for h in pool]
    scored.sort(key=lambda sh: order_key(*sh))
    return [replace(h, rank=i, score=score) for i, (score, h) in enumerate(scored, 1)]


def rerank(result: QueryResult, vector_weight: float, fts_weight: float) -> QueryResult:
    """The same query with other weights, from the legs already fetched: the candidates of each leg do not
    depend on the weights, so this equals a fresh :func:`hybrid_query` with those weights, number for number."""
    vector_weight, fts_weight = validate_weights(vector_weight, fts_weight)
    ranking = rank_pool(result.pool, vector_weight, fts_weight)
    return replace(
        result, vector_weight=vector_weight, fts_weight=fts_weight, hits=ranking[: result.top_k], ranking=ranking
    )
