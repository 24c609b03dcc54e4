"""Named ranking profiles: contract §6's hybrid with fixed settings and a few measured extra steps.

contract §6 (retriever ``oxmem``) stays exact and tunable; a profile is another retriever beside it and beside the
agent's own. The ``tuned`` profile is what ``bench/bench_quality.py`` measured best on public
conversational-memory sets (LongMemEval, LoCoMo; figures in the README), with no language model:

1. **Keywords.** The query's terms (as contract §6's terms mode makes them) without English stopwords
   (:mod:`.stopwords`: first-person pronouns are kept); each remaining alphabetic term of four or more letters
   is searched as a prefix of its first ``max(4, n − 2)`` letters (``"painted"`` → ``"paint"*``), a crude
   stemmer that also matches ``painting``. The FTS leg's BM25 is FTS5's own for that expression.
2. **Both legs** as contract §6 (``top_k × 4`` candidates each, min–max normalized), weighted
   ``0.2 × vector + 0.8 × FTS``.
3. **Neighbour context.** A conversation's answer often spans turns: each candidate adds
   ``0.3 ×`` the best weighted score among the candidates of the turn just before or after it (sequence ± 1).
4. **Updates.** A newer statement of a fact (the same query words matched, half its words shared with an older
   candidate of its session and role) scores at least what the older one scores (:func:`with_updates`).
5. **Order** as contract §6: score, then recency, then chunk id: the newer of two equal scores first.

Every step is in the result: the dropped stopwords, the expression, and per hit the neighbour's sequence and
what it added, and what it updates or is updated by, so the explanation stays raw → normalized → weighted → final.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import apsw

from ..embeddings.backends import EmbeddingBackend
from ..errors import InvalidInputError
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
    #: the update step (:func:`with_updates`): the share of words at which a newer candidate restates an older one
    #: (0: off)
    update_overlap: float = 0.0

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
        if self.update_overlap:
            out.append(
                f"updates: a candidate that restates an older candidate of its session (one role, the same query "
                f"words matched, ≥ {self.update_overlap:.0%} of their words shared, not the same text) ranks at least "
                "level with it, so the newer statement of a fact comes first"
            )
        out.append("order: score, then the newer turn, then chunk id (contract §6)")
        return out


TUNED = RankingProfile(
    name="tuned",
    label="oxmem tuned",
    vector_weight=0.2,
    fts_weight=0.8,
    drop_stopwords=True,
    prefixes=True,
    neighbour_weight=0.3,
    update_overlap=0.5,
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


def with_updates(hits: Sequence[Hit], terms: Sequence[str], overlap: float) -> list[Hit]:
    """The update step: a hit that restates an older hit of its session scores at least what that older one
    scores, so the newer statement ranks first (contract §6's order puts the newer of two equal scores first).

    "Restates": both are one role's (a user's restatement, not the assistant's reply about it), their texts
    differ, both are FTS candidates and the same FTS ``terms`` of the query occur in both (at least one; a term
    ending in ``*`` is a prefix; words as FTS5's ``unicode61`` folds them), and at least ``overlap`` of their
    distinct words are shared (Jaccard): "Ana plays for Porto" then "Ana plays for Benfica" asked "which team does
    Ana play for". Of several older ones, the best-scoring (then the newest) counts; a chain (a fact updated twice)
    carries through. Sets ``update_of`` / ``update_overlap`` / ``update_score`` on the newer hit and ``updated_by``
    on the older one.

    Why words, not vectors: a sentence embedding puts "… plays for Porto" and "… plays for Benfica" at cosine
    0.6–0.85, no nearer than two facts about other people in the same words; what marks an update is the same
    subject matched by the query in the same wording (measured in ``bench/bench_quality.py``)."""
    out = {h.chunk_id: h for h in hits}
    groups: dict[tuple[str, object, frozenset[str]], list[tuple[Hit, frozenset[str]]]] = {}
    for h in hits:
        if h.fts_raw is None:  # not matched by the FTS leg
            continue
        words = words_of(h.text)
        matched = frozenset(t for t in terms if matches(t, words))
        if matched:
            groups.setdefault((h.session_id, _role(h), matched), []).append((h, words))
    for group in groups.values():
        group.sort(key=lambda hw: (recency(hw[0]), hw[0].chunk_id))
        for i, (h, words) in enumerate(group):
            best: tuple[float, float, Hit] | None = None
            for older, theirs in group[:i]:
                if recency(older) >= recency(h) or older.text == h.text:
                    continue
                shared = len(words & theirs) / len(words | theirs)
                score = out[older.chunk_id].score
                if shared >= overlap and (best is None or score >= best[0]):  # a tie: the newest
                    best = (score, shared, older)
            if best is None:
                continue
            score, shared, older = best
            mine = out[h.chunk_id]
            lift = max(0.0, score - mine.score)
            out[h.chunk_id] = replace(mine, score=mine.score + lift, update_score=lift, update_of=recency(older),
                                      update_overlap=shared)  # fmt: skip
            out[older.chunk_id] = replace(out[older.chunk_id], updated_by=recency(h))
    return [out[h.chunk_id] for h in hits]


#: a word of a text (FTS5's ``unicode61`` splits on what is not a letter or digit)
_WORD = re.compile(r"[^\W_]+")


def words_of(text: str) -> frozenset[str]:
    """The distinct words of ``text`` as FTS5's ``unicode61`` folds them."""
    return frozenset(_WORD.findall(fold(text)))


def matches(term: str, words: frozenset[str]) -> bool:
    """Whether the FTS ``term`` (``word*``: a prefix) matches one of ``words`` (:func:`words_of`)."""
    if term.endswith("*"):
        prefix = fold(term[:-1])
        return any(w.startswith(prefix) for w in words)
    return fold(term) in words


def fold(text: str) -> str:
    """``text`` as FTS5's ``unicode61`` compares it: case folded, diacritics removed."""
    if text.isascii():
        return text.lower()
    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))


def _role(hit: Hit) -> object:
    return hit.metadata.get("role") if isinstance(hit.metadata, dict) else None


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
    if profile.update_overlap:
        scored = with_updates(scored, terms, profile.update_overlap)
    result.ranking = ranked(scored, len(scored))
    result.hits = result.ranking[:top_k]
    result.retriever = profile.name
    result.steps = profile.steps()
    result.profile = profile.settings()
    result.dropped_terms = dropped
    return result


#: the Oxydra agent's own ranking (retriever ``oxydra``): contract §6 with the agent's fixed settings
OXYDRA_SETTINGS: dict[str, Any] = {"vector_weight": 0.7, "fts_weight": 0.3, "fts_mode": "phrase"}
OXYDRA_STEPS = (
    "FTS leg: the whole query as one quoted phrase (the agent's phrase mode)",
    "vector leg: cosine similarity (the agent stores cosine − 1; min–max normalizing makes that the same score)",
    "each leg min–max normalized to 0…1, then 0.7 × vector + 0.3 × FTS",
    "the agent's ANN index picks vector candidates over all sessions before filtering by session, so it can miss "
    "some that this exact search finds",
)


def native_query(
    conn: apsw.Connection,
    index: VectorIndex,
    backends: Mapping[str, EmbeddingBackend],
    retriever: str,
    session_id: Scope,
    query: str,
    top_k: int,
    *,
    bm25: Bm25Index | None = None,
    query_embeddings: Mapping[str, Sequence[float]] | None = None,
    **options: Any,
) -> QueryResult:
    """One of the store's own rankings: ``oxmem`` (contract §6 with ``options``), a profile of :data:`PROFILES`
    (``options``: tags, tag mode, models) or ``oxydra`` (the agent's own, :data:`OXYDRA_SETTINGS`: of
    ``options`` only ``models`` applies)."""
    if retriever == "oxmem":
        return hybrid_query(conn, index, backends, session_id, query, top_k, bm25=bm25,
                            query_embeddings=query_embeddings, **options)  # fmt: skip
    if retriever in PROFILES:
        return profile_query(conn, index, backends, session_id, query, top_k, PROFILES[retriever], bm25=bm25,
                             query_embeddings=query_embeddings, **options)  # fmt: skip
    if retriever != "oxydra":
        known = ", ".join([*PROFILES, "oxmem", "oxydra"])
        raise InvalidInputError(f"no ranking {retriever!r} for this store (known: {known})")
    result = hybrid_query(conn, index, backends, session_id, query, top_k, bm25=bm25, models=options.get("models"),
                          query_embeddings=query_embeddings, **OXYDRA_SETTINGS)  # fmt: skip
    result.retriever = "oxydra"
    result.steps = list(OXYDRA_STEPS)
    return result
