"""Why not this one? The story of a memory a ranking did not recall (Solr's ``explainOther``, for agent memory).

:func:`why_not` runs one of the store's rankings (contract §6's hybrid, a profile of :mod:`.ranking`, Oxydra's
own) for a query, exactly as a search does, and tells for one *target* — a chunk, an event of the session, or a
note — where it ranked and the first step that cut it:

1. it is in another session (or another user's notes);
2. its event was never chunked (nothing to index), or was merged by dedup into an earlier chunk of the same text
   (the story then follows that chunk, and says so);
3. the tag filter left it out;
4. neither leg took it as a candidate: the vector leg's cosine, rank among the scope's chunks and the last
   candidate's cosine; the FTS leg's — or which query words are absent from its text (FTS5's ``unicode61``
   folding, the stopwords a profile dropped, phrase mode needing the words in a row); a vector of another model
   than the query's;
5. it was a candidate but outranked within the top k — by which hits, by how much — or superseded by a newer
   statement (the profile's update step).

Then, what would bring it back: the smallest change the user controls — vector weight (re-ranked from the legs
already fetched), top k, the tag filter, FTS mode, one query word less or one word of its own text more — that
puts it in the top k, each checked by running the ranking with it (:class:`Change`).

Everything runs in one read transaction, so the story is of one snapshot even while the agent writes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import apsw
import numpy as np

from ..embeddings.backends import EmbeddingBackend
from ..embeddings.indexing import normalize
from ..errors import InvalidInputError, NotFoundError
from ..store.events import Event, prepare_event
from ..store.inputs import parse_stored
from ..store.summary import message_text
from ..store.tags import normalize_tags, tag_filter_sql
from .bm25 import Bm25Index
from .hybrid import CANDIDATE_FACTOR, Hit, QueryResult, fts_terms, rank_pool
from .ranking import PROFILES, fold, keyword_terms, matches, native_query, words_of
from .stopwords import content_terms
from .vectors import VectorIndex

#: vector weights tried, nearest the current first
_WEIGHTS = [round(0.05 * i, 2) for i in range(21)]
#: the memories *Why not…?* offers to pick from, at most (a session's first events)
CHOICES = 5000
#: the deepest top k a suggestion offers (a deeper one would hand the agent more than it reads)
SUGGEST_MAX_K = 200
#: query words tried left out, and words of the memory's own text tried added, at most
SUGGEST_WORDS = 2


@dataclass
class LegStory:
    """One leg's view of the target: its raw score (cosine, −bm25; None where the leg could not score it), its rank
    among every chunk of the scope the leg scores (``of``), whether it was among the leg's candidates (the best
    ``top_k × 4``) and the last candidate's raw score, the normalized and weighted score it got, and the story in
    words."""

    leg: str
    raw: float | None
    rank: int | None
    of: int
    candidate: bool
    cutoff: float | None
    normalized: float
    weighted: float
    words: str


@dataclass
class Change:
    """A change of one control that puts the target in the top k: which, to what, in words, and the rank it gets."""

    control: str
    value: Any
    words: str
    rank: int


@dataclass
class WhyNot:
    """The story of one target under one ranking (see the module)."""

    retriever: str
    query: str
    top_k: int
    target: str
    session_id: str | None
    sequence: int | None
    chunk_id: str | None
    text: str
    #: its rank among every candidate of the pool, scored as the hits are (None: not a candidate), and how many
    rank: int | None
    of: int
    score: float | None
    recalled: bool
    #: a short code of the first cut: recalled, other-session, not-chunked, tag-filter, not-a-candidate,
    #: outranked, superseded
    reason: str
    #: the first step that cut it, in words ("" when it was recalled)
    cut: str
    legs: dict[str, LegStory] = field(default_factory=dict)
    #: the hits of the top k that rank above it: (rank, chunk id, score)
    above: list[tuple[int, str, float]] = field(default_factory=list)
    #: what it lacks to the k-th hit's score (None: not a candidate, or recalled)
    short_by: float | None = None
    notes: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    #: the ranking itself, as a search with these options returns it
    result: QueryResult | None = field(default=None, repr=False)

    def lines(self) -> list[str]:
        """The story in words, one line each (the CLI prints these; the search panel shows them)."""
        where = f"#{self.rank} of {self.of} candidates" if self.rank else f"not among the {self.of} candidates"
        out = [f"Why not {self.target}? {where} for {self.query!r} (top {self.top_k}, ranking {self.retriever})"]
        out.append(f"target: chunk {self.chunk_id}" if self.chunk_id else "target: no chunk")
        if self.session_id is not None:
            out[-1] += f" · session {self.session_id}" + (f" · sequence {self.sequence}" if self.sequence else "")
        out.append("recalled: " + (f"yes, at rank {self.rank}" if self.recalled else f"no — {self.cut}"))
        out += [f"{leg.leg} leg: {leg.words}" for leg in self.legs.values()]
        if self.score is not None:
            out.append(f"score {self.score:.6f}" + (f", {self.short_by:.6f} short of the top {self.top_k}"
                                                     if self.short_by is not None else ""))  # fmt: skip
        if self.above:
            shown = ", ".join(f"#{r} {score:.4f}" for r, _, score in self.above[:5])
            more = f" and {len(self.above) - 5} more" if len(self.above) > 5 else ""
            out.append(f"outranked by {shown}{more}")
        out += self.notes
        if not self.recalled:
            if self.changes:
                out += [f"would bring it back: {c.words} → rank {c.rank}" for c in self.changes]
            else:
                out.append("would bring it back: nothing within these controls")
        return out


# -- the target -------------------------------------------------------------------------------------------


def event_choices(events: Sequence[Event]) -> list[tuple[str, str]]:
    """What *Why not…?* offers to pick among a session's events: ``("#12 user: …", "12")`` for each with text."""
    return [
        (f"#{e.sequence} {role}: {' '.join(text.split())}", str(e.sequence))
        for e in events
        for role, text in [message_text(e)]
        if text.strip()
    ]


@dataclass
class _Target:
    chunk_ids: list[str]
    session_id: str | None
    sequence: int | None
    text: str
    notes: list[str]


def _chunk_row(conn: apsw.Connection, chunk_id: str) -> tuple | None:
    rows = conn.execute(
        "SELECT c.chunk_id, c.session_id, c.sequence_start, c.sequence_end, c.chunk_text, c.metadata_json, "
        "v.embedding_model FROM chunks c LEFT JOIN chunks_vec v ON v.chunk_id = c.chunk_id WHERE c.chunk_id = ?",
        (chunk_id,),
    ).fetchall()
    return rows[0] if rows else None


def resolve(conn: apsw.Connection, scope: str, target: str) -> _Target:
    """``target`` as a chunk id, an event's sequence number in ``scope`` (``12`` or ``#12``), or a note id."""
    if not isinstance(target, str) or not target.strip():
        raise InvalidInputError("say which memory: a chunk id, an event's sequence number, or a note id")
    target = target.strip()
    row = _chunk_row(conn, target)
    if row is not None:
        return _Target([row[0]], row[1], row[2], row[4], [])
    number = target.removeprefix("#")
    if number.isdigit():
        sequence = int(number)
        event = conn.execute(
            "SELECT payload_json FROM conversation_events WHERE session_id = ? AND sequence = ?", (scope, sequence)
        ).fetchall()
        if not event:
            raise NotFoundError(f"no event at sequence {sequence} in session {scope!r}")
        payload = parse_stored(event[0][0])
        text = payload.get("content") if isinstance(payload, dict) else None
        prepared = prepare_event(scope, sequence, payload)  # its chunks' texts, as the store made them
        if prepared.not_indexed:
            return _Target(
                [], scope, sequence, text if isinstance(text, str) else "", [f"not indexed: {prepared.not_indexed}"]
            )
        ids, notes = [], []
        for chunk in prepared.chunks:
            found = conn.execute(
                "SELECT chunk_id, sequence_start FROM chunks WHERE session_id = ? AND content_hash = ? "
                "AND sequence_start <= ? AND sequence_end >= ? ORDER BY sequence_start LIMIT 1",
                (scope, chunk.digest, sequence, sequence),
            ).fetchall()
            if found:
                cid, start = found[0]
                ids.append(cid)
                if start != sequence:
                    notes.append(f"merged by dedup: the same text was first stored at sequence {start}, as chunk "
                                 f"{cid}; that chunk stands for this event")  # fmt: skip
        return _Target(ids, scope, sequence, text if isinstance(text, str) else "", notes)
    rows = conn.execute(
        "SELECT chunk_id FROM chunks WHERE json_extract(metadata_json, '$.note_id') = ? ORDER BY chunk_id", (target,)
    ).fetchall()
    if rows:
        first = _chunk_row(conn, rows[0][0])
        return _Target([r[0] for r in rows], first[1], first[2], first[4], [])
    raise NotFoundError(f"no chunk, event or note {target!r} in this file")


# -- the story --------------------------------------------------------------------------------------------


def why_not(
    conn: apsw.Connection,
    index: VectorIndex,
    backends: Mapping[str, EmbeddingBackend],
    retriever: str,
    scope: str,
    query: str,
    target: str,
    top_k: int = 8,
    *,
    bm25: Bm25Index | None = None,
    suggest: bool = True,
    query_embeddings: Mapping[str, Sequence[float]] | None = None,
    **options: Any,
) -> WhyNot:
    """The story of ``target`` under ``retriever`` (one of the store's own, :func:`.ranking.native_query`) for
    ``query`` over the session ``scope``, with the search's ``options`` (weights, mode and models for ``oxmem``;
    tags for ``oxmem`` and the profiles). ``suggest``: also find what would bring it back."""
    if retriever != "oxmem":  # a fixed ranking: the hybrid's tuning does not apply (nor tags, to Oxydra's)
        kept = ("models",) if retriever == "oxydra" else ("tags", "tag_mode", "models")
        options = {k: v for k, v in options.items() if k in kept}
    embeddings = dict(query_embeddings or {})
    for model in index.models(conn, scope):  # embedded once: every run below reuses it
        # (not by a backend that cannot say its size, an endpoint's: each run has it checked against the stored
        # vectors', the repeats from its cache on disk)
        if model not in embeddings and model in backends and backends[model].dimensions:
            embeddings[model] = backends[model].embed([normalize(query)])[0]

    def run(k: int, text: str = query, **changed: Any) -> QueryResult:
        vectors = embeddings if text == query else None  # another query is embedded afresh
        return native_query(conn, index, backends, retriever, scope, text, k, bm25=bm25, query_embeddings=vectors,
                            **{**options, **changed})  # fmt: skip

    found = resolve(conn, scope, target)
    result = run(top_k)
    story = WhyNot(retriever, query, top_k, target, found.session_id, found.sequence, None, found.text, None,
                   len(result.ranking), None, False, "", "", result=result, notes=list(found.notes))  # fmt: skip
    if found.session_id != scope:
        story.reason, story.cut = "other-session", f"it is in session {found.session_id!r}, not in {scope!r}"
        if found.session_id and found.session_id.startswith("memory:") and scope.startswith("memory:"):
            owner, asked = found.session_id.removeprefix("memory:"), scope.removeprefix("memory:")
            story.cut = f"it is {owner!r}'s note, not {asked!r}'s"
        story.chunk_id = found.chunk_ids[0] if found.chunk_ids else None
        return story
    if not found.chunk_ids:
        story.reason = "not-chunked"
        why = next((n.removeprefix("not indexed: ") for n in found.notes if n.startswith("not indexed: ")), None)
        story.cut = f"the event at sequence {found.sequence} was never chunked: {why or 'it has no chunk'}"
        story.notes = []
        return story
    # a message of several chunks: its best-ranked chunk tells its story
    positions = {h.chunk_id: h for h in result.ranking}
    chosen = min(found.chunk_ids, key=lambda c: positions[c].rank if c in positions else math.inf)
    story.chunk_id = chosen
    row = _chunk_row(conn, chosen)
    story.text = row[4]
    hit = positions.get(chosen)
    terms = _fts_terms(query, retriever, options)
    tags = normalize_tags(options.get("tags", ()))
    if tags and not _tags_pass(conn, chosen, tags, options.get("tag_mode", "any")):
        story.reason = "tag-filter"
        story.cut = (f"the tag filter ({options.get('tag_mode', 'any')} of {', '.join(tags)}) left it out: its "
                     f"tags are {', '.join(_tags_of(conn, chosen)) or 'none'}")  # fmt: skip
        story.legs = _legs(conn, index, bm25, result, row, embeddings, terms, query, None)
    else:
        story.legs = _legs(conn, index, bm25, result, row, embeddings, terms, query, hit)
        _place(story, result, hit)
    if suggest and not story.recalled:
        story.changes = _changes(story, run, result, retriever, options, row[4])
    return story


def _tags_of(conn: apsw.Connection, chunk_id: str) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT DISTINCT t.value FROM chunks c, json_each(c.metadata_json, '$.tags') t WHERE c.chunk_id = ? "
        "ORDER BY t.value", (chunk_id,))]  # fmt: skip


def _tags_pass(conn: apsw.Connection, chunk_id: str, tags: list[str], mode: str) -> bool:
    tag_sql, tag_args = tag_filter_sql(tags, mode)
    return bool(
        conn.execute(f"SELECT 1 FROM chunks c WHERE c.chunk_id = ? AND {tag_sql}", (chunk_id, *tag_args)).fetchall()
    )


def _fts_terms(query: str, retriever: str, options: Mapping[str, Any]) -> tuple[list[str], list[str], str]:
    """``(terms, dropped stopwords, mode)`` as the ranking's FTS leg builds them (phrase: the query's words)."""
    if retriever in PROFILES:
        terms, dropped = keyword_terms(query, PROFILES[retriever])
        return terms, dropped, "keywords"
    mode = "phrase" if retriever == "oxydra" else options.get("fts_mode", "terms")
    return fts_terms(query), [], mode


def _absent(text: str, terms: Sequence[str]) -> list[str]:
    """The terms (``*``: a prefix) that no word of ``text`` matches, as FTS5 folds them."""
    words = words_of(text)
    return [t for t in terms if not matches(t, words)]


def _legs(
    conn: apsw.Connection,
    index: VectorIndex,
    bm25: Bm25Index | None,
    result: QueryResult,
    row: tuple,
    embeddings: Mapping[str, Sequence[float]],
    fts: tuple[list[str], list[str], str],
    query: str,
    hit: Hit | None,
) -> dict[str, LegStory]:
    chunk_id, session_id, _, _, text, _, model = row
    legs = {}
    # the vector leg: every chunk of the session with the query's model, by cosine
    cut = [h.vector_raw for h in result.pool if h.vector_raw is not None]
    cutoff = min(cut) if cut else None
    weight = result.vector_weight
    if model is None or model not in result.models or model not in embeddings:
        why = "no vector" if model is None else f"its vector is of {model}, which the query was not embedded for"
        legs["vector"] = LegStory("vector", None, None, 0, False, cutoff, 0.0, 0.0, why)
    else:
        q = np.asarray(embeddings[model], dtype=np.float32)
        matrix = index.get(conn, session_id, model, len(q))
        cosines = matrix.cosines(q)
        at = matrix.row_of(chunk_id)
        raw = float(cosines[at]) if at is not None else None
        rank = int(np.count_nonzero(cosines > cosines[at])) + 1 if at is not None else None
        taken = hit is not None and hit.vector_raw is not None
        normalized = hit.vector_score if taken else 0.0
        words = f"cosine {raw:.6f}, rank {rank} of {len(cosines)}; " if raw is not None else "not in the index; "
        words += (f"a candidate (normalized {normalized:.6f}, × {weight:g} = {weight * normalized:.6f})" if taken
                  else f"not among its {result.legs['vector'].candidates} candidates"
                  + (f" (the last has cosine {cutoff:.6f})" if cutoff is not None else ""))  # fmt: skip
        legs["vector"] = LegStory("vector", raw, rank, len(cosines), taken, cutoff, normalized, weight * normalized,
                                  words)  # fmt: skip
    # the FTS leg
    terms, dropped, mode = fts
    cut = [h.fts_raw for h in result.pool if h.fts_raw is not None]
    cutoff = min(cut) if cut else None
    weight = result.fts_weight
    taken = hit is not None and hit.fts_raw is not None
    expression = result.fts_expression
    dropped_words = f" (stopwords dropped from the query: {', '.join(dropped)})" if dropped else ""
    raw = hit.fts_raw if taken else _bm25_of(conn, expression, row)
    if raw is None:
        if expression is None:
            words = "the query has no words to search for"
        elif mode == "phrase":
            phrase = " ".join(fts_terms(query))
            missing = _absent(text, fts_terms(query))
            words = (f"phrase mode needs «{phrase}» in a row; " + (f"its text lacks {', '.join(missing)}" if missing
                     else "its text has the words, but not in that order"))  # fmt: skip
        else:
            missing = _absent(text, terms)
            words = f"no match: none of {', '.join(missing)} is in its text{dropped_words}"
        legs["fts"] = LegStory("fts", None, None, 0, False, cutoff, 0.0, 0.0, words)
        return legs
    rank, of = _fts_rank(conn, bm25, session_id, expression, terms if mode != "phrase" else None, raw)
    normalized = hit.fts_score if taken else 0.0
    missing = _absent(text, terms) if mode != "phrase" else []
    words = f"−bm25 {raw:.6f}, rank {rank} of {of} matching; "
    words += (f"a candidate (normalized {normalized:.6f}, × {weight:g} = {weight * normalized:.6f})" if taken
              else f"not among its {result.legs['fts'].candidates} candidates"
              + (f" (the last has −bm25 {cutoff:.6f})" if cutoff is not None else ""))  # fmt: skip
    if missing:
        words += f"; query words not in its text: {', '.join(missing)}"
    legs["fts"] = LegStory("fts", raw, rank, of, taken, cutoff, normalized, weight * normalized, words + dropped_words)
    return legs


def _bm25_of(conn: apsw.Connection, expression: str | None, row: tuple) -> float | None:
    """The target's −bm25 for ``expression`` (None: it does not match)."""
    if expression is None:
        return None
    rowid = conn.execute("SELECT rowid FROM chunks WHERE chunk_id = ?", (row[0],)).fetchall()[0][0]
    found = conn.execute(
        "SELECT -bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid = ?", (expression, rowid)
    ).fetchall()
    return float(found[0][0]) if found else None


def _fts_rank(
    conn: apsw.Connection, bm25: Bm25Index | None, session_id: str, expression: str, terms: list[str] | None, raw: float
) -> tuple[int, int]:
    """The target's rank (by −bm25 ``raw``) among the session's chunks that match, and how many match."""
    scored = bm25.scores(conn, session_id, terms, 1 << 62) if bm25 is not None and terms else None
    if scored is not None:
        values = np.fromiter((s for _, s in scored), dtype=np.float64, count=len(scored))
    else:
        values = np.fromiter(
            (r[0] for r in conn.execute(
                "SELECT -bm25(chunks_fts) FROM chunks_fts f JOIN chunks c ON c.rowid = f.rowid "
                "WHERE chunks_fts MATCH ? AND c.session_id = ?", (expression, session_id))),
            dtype=np.float64,
        )  # fmt: skip
    return int(np.count_nonzero(values > raw + 1e-12)) + 1, len(values)


def _place(story: WhyNot, result: QueryResult, hit: Hit | None) -> None:
    """Its rank in the pool, the first cut, and what outranked it."""
    top = result.hits
    if hit is None:
        story.reason = "not-a-candidate"
        story.cut = "neither leg took it as a candidate: " + "; ".join(
            f"{leg.leg}: {leg.words}" for leg in story.legs.values()
        )
        return
    story.rank, story.score = hit.rank, hit.score
    if hit.rank <= story.top_k:
        story.recalled, story.reason = True, "recalled"
        return
    story.above = [(h.rank, h.chunk_id, h.score) for h in top]
    story.short_by = top[-1].score - hit.score if top else None
    if hit.updated_by is not None:
        story.reason = "superseded"
        story.cut = (f"superseded: the newer statement at sequence {hit.updated_by} restates it and ranks at least "
                     f"level with it (the update step); it is #{hit.rank}")  # fmt: skip
        return
    story.reason = "outranked"
    story.cut = (f"outranked within the top {story.top_k}: #{hit.rank} with {hit.score:.6f}, the #{story.top_k} hit "
                 f"scores {top[-1].score:.6f} ({story.short_by:.6f} more)")  # fmt: skip


# -- what would bring it back -----------------------------------------------------------------------------


def _rank_in(result: QueryResult, chunk_id: str) -> int | None:
    return next((h.rank for h in result.hits if h.chunk_id == chunk_id), None)


def _changes(
    story: WhyNot,
    run: Callable[..., QueryResult],
    result: QueryResult,
    retriever: str,
    options: Mapping[str, Any],
    text: str,
) -> list[Change]:
    """The changes that put the target in the top k, smallest first: vector weight (re-ranked from the legs
    already fetched), then top k (up to :data:`SUGGEST_MAX_K`), the tag filter, the FTS mode, one query word less
    (one it lacks), one word of its own more (the longest) — each but the first checked by running the ranking."""
    k, target = story.top_k, story.chunk_id
    out: list[Change] = []
    tunable = retriever == "oxmem"
    if tunable and story.rank is not None and story.reason != "tag-filter":
        now = result.vector_weight
        for w in sorted(_WEIGHTS, key=lambda w: (abs(w - now), w)):
            ranking = rank_pool(result.pool, w, round(1 - w, 2))
            rank = next(h.rank for h in ranking if h.chunk_id == target)
            if rank <= k:
                out.append(Change("vector_weight", w, f"vector weight {w:g} / FTS {1 - w:g} (now {now:g})", rank))
                break
    if story.reason == "tag-filter":
        rank = _rank_in(run(k, tags=()), target)
        if rank is not None:
            out.append(Change("tags", [], "no tag filter", rank))
    else:
        bigger, tries = _bigger_k(story), 0
        while bigger is not None and bigger <= SUGGEST_MAX_K and tries < 3:
            tries += 1
            deeper = run(bigger)
            rank = _rank_in(deeper, target)
            if rank is not None:
                out.append(Change("top_k", bigger, f"top {bigger} (now {k})", rank))
                break
            # next: its rank among that run's candidates, else twice as deep
            place = next((h.rank for h in deeper.ranking if h.chunk_id == target), None)
            bigger = place if place is not None and place > bigger else bigger * 2
    if tunable:
        other = "phrase" if options.get("fts_mode", "terms") == "terms" else "terms"
        rank = _rank_in(run(k, fts_mode=other), target)
        if rank is not None:
            out.append(Change("fts_mode", other, f"FTS mode {other}", rank))
    words = fts_terms(story.query)
    absent = set(_absent(text, words))  # dropping a word it has would not help it
    if len(words) > 1:
        for i, word in [(i, w) for i, w in enumerate(words) if w in absent][:SUGGEST_WORDS]:
            shorter = " ".join(words[:i] + words[i + 1 :])
            rank = _rank_in(run(k, shorter), target)
            if rank is not None:
                out.append(Change("query", shorter, f"without «{word}»: {shorter!r}", rank))
                break
    asked = {fold(w) for w in words}
    own = sorted(w for w in words_of(text) - asked if w.isalpha() and len(w) >= 4)
    own, _ = content_terms(own)
    for word in sorted(own, key=lambda w: (-len(w), w))[:SUGGEST_WORDS]:
        longer = f"{story.query} {word}"
        rank = _rank_in(run(k, longer), target)
        if rank is not None:
            out.append(Change("query", longer, f"with «{word}» from its own text: {longer!r}", rank))
            break
    return out


def _bigger_k(story: WhyNot) -> int | None:
    """The first top k worth trying: its rank in the pool, or deep enough for its better leg to take it."""
    if story.rank is not None:
        return max(story.rank, story.top_k + 1)
    ranks = [leg.rank for leg in story.legs.values() if leg.rank is not None]
    if not ranks:
        return None
    return max(story.top_k + 1, -(-min(ranks) // CANDIDATE_FACTOR))
