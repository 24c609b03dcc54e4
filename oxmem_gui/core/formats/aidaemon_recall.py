"""aidaemon's legacy recall (``get_context`` in ``src/state/sqlite.rs``), reproduced exactly: three lists —
recency, salience, relevance — over a session's messages (or its episodes), merged without repeats, with a note
on each hit saying which list took it and why."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import apsw

from ..embeddings.model_files import MODEL_NAME
from ..errors import NotFoundError
from ..retrieval.hybrid import Hit, LegStats, QueryResult
from .aidaemon_rows import (
    cosine_similarity,
    decode_embedding,
    episode_topics,
    float_or_none,
    int_or_zero,
    select_list,
    session_exists,
    shown_or_none,
    table_names,
)
from .base import hit
from .times import parse_when, shown_time

#: the legacy ``get_context`` (aidaemon before v0.9): how many of each list, and the thresholds
RECENCY_COUNT = 10
SALIENCE_COUNT = 5
SALIENCE_MIN_IMPORTANCE = 0.8
RELEVANCE_COUNT = 5
RELEVANCE_MIN_COSINE = 0.65
#: the relevance leg reads the embeddings of this many newest messages of the session
RELEVANCE_CANDIDATES = 2000
LISTS = ("recency", "salience", "relevance")
#: ``query_vector(model, query, options)`` → (the query's vector or None, why not)
QueryVector = Callable[[str, str, Mapping[str, Any]], tuple[Any, str | None]]


def rank(
    conn: apsw.Connection, scope: str, query: str, top_k: int, query_vector: QueryVector, options: Mapping[str, Any]
) -> QueryResult:
    """The three lists of aidaemon's legacy ``get_context`` (``src/state/sqlite.rs``), exactly:

    1. recency — ``ORDER BY created_at DESC`` (as text, the agent's SQL; ties: the later row first), 10;
    2. salience — ``importance >= 0.8 ORDER BY created_at DESC LIMIT 5`` (the agent orders these by time,
       not by importance); rows already in recency are not added twice;
    3. relevance — the 2000 newest rows with an embedding, less those already taken, cosine with the query
       (float32 blob of 1536 bytes, or a legacy JSON array when the first byte is ``[``) above 0.65, the 5
       highest (a stable sort: equal cosines keep the newest first).

    The merged list keeps that order (the agent then sorts it by time for the prompt) and takes no limit,
    so ``top_k`` is not applied. Over episodes (no legacy messages) the same lists run on
    ``episodes.importance``, ``embedding`` and ``created_at`` — oxmem's choice for v0.9+ files.
    """
    tables = table_names(conn)
    items, source = _recall_items(conn, scope, tables)
    if source is None and not session_exists(conn, scope, tables):
        raise NotFoundError(f"no session {scope!r}")
    noun = "episodes" if source == "episodes" else "messages"
    newest = sorted(items, key=lambda it: (it.created_text, it.order), reverse=True)
    position = {it.hit_id: i for i, it in enumerate(newest, 1)}

    recency = [it.hit_id for it in newest[:RECENCY_COUNT]]
    important = [it for it in newest if it.importance is not None and it.importance >= SALIENCE_MIN_IMPORTANCE]
    salience = [it.hit_id for it in important[:SALIENCE_COUNT]]
    seen = set(recency) | set(salience)

    with_vectors = [it for it in newest if it.embedding is not None][:RELEVANCE_CANDIDATES]
    skipped: dict[str, str] = {}
    errors: list[tuple[str, str]] = []
    qvec = None
    if with_vectors:
        qvec, why = query_vector(MODEL_NAME, query, options)
        if qvec is None:
            skipped[MODEL_NAME] = why or "the query could not be embedded"
    cosines: dict[str, float] = {}
    for it in newest:
        if it.embedding is None:
            if it.hit_id not in seen:
                errors.append(
                    (it.hit_id, "no embedding (NULL)" + (f": {it.embedding_error}" if it.embedding_error else ""))
                )
            continue
        vec = decode_embedding(it.embedding)
        if isinstance(vec, str):
            if it.hit_id not in seen:
                errors.append((it.hit_id, vec))
            continue
        if qvec is None:
            continue
        if len(vec) != len(qvec):
            if it.hit_id not in seen:
                errors.append((it.hit_id, f"{len(vec)} dimensions; the query has {len(qvec)}"))
            continue
        cos = cosine_similarity(qvec, vec)
        if not math.isfinite(cos):
            if it.hit_id not in seen:
                errors.append((it.hit_id, "the embedding holds values that are not finite"))
            continue
        cosines[it.hit_id] = cos
    in_window = {it.hit_id for it in with_vectors}
    leg = [(it.hit_id, cosines[it.hit_id]) for it in with_vectors if it.hit_id not in seen and it.hit_id in cosines]
    passing = sorted(((h, c) for h, c in leg if c > RELEVANCE_MIN_COSINE), key=lambda hc: -hc[1])
    relevance = [h for h, _ in passing[:RELEVANCE_COUNT]]

    lists = {"recency": recency, "salience": salience, "relevance": relevance}
    merged: list[str] = []
    for name in LISTS:
        merged += [h for h in lists[name] if h not in merged]
    by_id = {it.hit_id: it for it in items}
    newest_time = parse_when(newest[0].created_text) if newest else None
    context = _Context(lists, position, len(newest), len(important), cosines, in_window, newest_time, noun)

    def make(rank: int, it: _Item) -> Hit:
        cos = cosines.get(it.hit_id)
        in_rel = it.hit_id in relevance
        return hit(
            rank,
            it.hit_id,
            scope,
            it.text,
            1.0,
            vector=(cos, cos, relevance.index(it.hit_id) + 1) if in_rel and cos is not None else (0.0, None, None),
            sequence=it.sequence,
            metadata={**it.metadata, "lists": [n for n in LISTS if it.hit_id in lists[n]], "cosine": cos},
            model=MODEL_NAME if cos is not None else None,
            notes=_hit_notes(it, context),
        )

    hits = [make(i, by_id[h]) for i, h in enumerate(merged, 1)]
    pool = [make(position[it.hit_id], it) for it in newest]
    leg_values = [c for _, c in leg]
    legs = {
        "vector": LegStats(len(leg_values), min(leg_values, default=None), max(leg_values, default=None)),
        "fts": LegStats(),
        "recency": LegStats(len(newest)),
        "salience": LegStats(
            len(important),
            min((it.importance for it in important), default=None),
            max((it.importance for it in important), default=None),
        ),
    }
    steps = []
    if source == "episodes":
        steps.append(
            "This session has no legacy messages (aidaemon v0.9+ keeps events): the three lists of the legacy "
            "recall are run over the session's episodes (importance, embedding, created_at) — oxmem's choice."
        )
    elif source is None:
        steps.append("This session has no legacy messages and no episodes: every list is empty.")
    steps += [
        f"Recency: the session's {RECENCY_COUNT} newest {noun} (created_at descending, compared as text as the "
        "agent's SQL does; ties: the later row first).",
        f"Salience: {noun} with importance ≥ {SALIENCE_MIN_IMPORTANCE}, the {SALIENCE_COUNT} newest (the agent "
        "orders them by created_at, not by importance); those already in recency are not added twice.",
        f"Relevance: the query embedded with {MODEL_NAME}; cosine with each embedding (1536-byte float32, or a "
        f"legacy JSON array) of the {RELEVANCE_CANDIDATES} newest {noun} that have one, less those already "
        f"taken; cosine > {RELEVANCE_MIN_COSINE}, the {RELEVANCE_COUNT} highest.",
        "Merged in the order recency, salience, relevance, each once (the agent then sorts them by time for the "
        "prompt). It takes no limit, so top_k is not applied; every hit scores 1.0 (there is no combined "
        "score: the lists decide).",
    ]
    if skipped:
        steps.append(f"Relevance left out: {skipped[MODEL_NAME]}.")
    return QueryResult(
        query,
        scope,
        top_k,
        0.0,
        0.0,
        "none",
        [],
        "any",
        None,
        legs,
        hits,
        [MODEL_NAME] if cosines else [],
        skipped,
        errors,
        pool,
        "aidaemon",
        steps,
        lists,
    )


@dataclass
class _Item:
    """One row the recall ranks: a legacy message or an episode."""

    hit_id: str
    text: str
    created_text: str
    order: int
    importance: float | None
    embedding: Any
    embedding_error: Any
    sequence: int | None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Context:
    lists: dict[str, list[str]]
    position: dict[str, int]
    total: int
    important: int
    cosines: dict[str, float]
    window: set[str]
    newest: datetime | None
    noun: str


def _recall_items(conn: apsw.Connection, session_id: str, tables: set[str]) -> tuple[list[_Item], str | None]:
    """The session's legacy messages, else its episodes; and which (None: neither has a row)."""
    if "messages" in tables:
        cols = select_list(
            conn,
            "messages",
            ["rowid", "id", "role", "content", "tool_calls_json", "created_at", "importance", "embedding",
             "embedding_error", "tool_call_id"],
        )  # fmt: skip
        rows = conn.execute(f"SELECT {cols} FROM messages WHERE session_id = ?", (session_id,)).fetchall()
        if rows:
            items = []
            for rowid, mid, role, content, calls, created, importance, embedding, error, call_id in rows:
                text = content if content is not None else (calls if calls is not None else "")
                items.append(
                    _Item(
                        str(mid) if mid is not None else f"rowid:{rowid}",
                        str(text),
                        "" if created is None else str(created),
                        int(rowid),
                        float_or_none(importance),
                        embedding,
                        error,
                        int(rowid),
                        {
                            "role": role,
                            "created_at": shown_or_none(created),
                            "importance": float_or_none(importance),
                            "tool_call_id": call_id,
                        },
                    )
                )
            return items, "messages"
    if "episodes" in tables:
        cols = select_list(
            conn,
            "episodes",
            ["id", "summary", "topics", "created_at", "importance", "embedding", "emotional_tone", "outcome"],
        )
        rows = conn.execute(f"SELECT {cols} FROM episodes WHERE session_id = ?", (session_id,)).fetchall()
        if rows:
            items = [
                _Item(
                    f"episode:{eid}",
                    str(summary or ""),
                    "" if created is None else str(created),
                    int_or_zero(eid),
                    float_or_none(importance),
                    embedding,
                    None,
                    None,
                    {
                        "episode_id": eid,
                        "topics": episode_topics(topics),
                        "created_at": shown_or_none(created),
                        "importance": float_or_none(importance),
                        "emotional_tone": tone,
                        "outcome": outcome,
                    },
                )
                for eid, summary, topics, created, importance, embedding, tone, outcome in rows
            ]
            return items, "episodes"
    return [], None


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _age(seconds: float) -> str:
    seconds = int(round(seconds))
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            parts.append(f"{seconds // size} {unit}")
            seconds %= size
    if seconds or not parts:
        parts.append(f"{seconds} s")
    return " ".join(parts[:2])


def _hit_notes(it: _Item, ctx: _Context) -> list[str]:
    """Why a row is (or is not) in each list, with its numbers."""
    lists, hid = ctx.lists, it.hit_id
    pos = ctx.position[hid]
    when = parse_when(it.created_text)
    age = ""
    if when is not None and ctx.newest is not None:
        age = "the newest" if when == ctx.newest else f"{_age((ctx.newest - when).total_seconds())} before the newest"
    created = f"created {shown_time(it.created_text)}" + (f", {age}" if age else "")
    noun = ctx.noun[:-1]
    notes = []
    if hid in lists["recency"]:
        notes.append(f"recency: {_ordinal(pos)} newest of {ctx.total} {ctx.noun} ({created})")
    else:
        notes.append(f"recency: {_ordinal(pos)} newest, not among the {RECENCY_COUNT} newest ({created})")
    imp = it.importance
    if imp is None:
        notes.append("salience: no importance")
    elif hid in lists["salience"]:
        k = lists["salience"].index(hid) + 1
        also = " (already in recency)" if hid in lists["recency"] else ""
        notes.append(
            f"salience: importance {imp:.6g} ≥ {SALIENCE_MIN_IMPORTANCE}, the {_ordinal(k)} newest of "
            f"{ctx.important} important {ctx.noun}{also}"
        )
    elif imp >= SALIENCE_MIN_IMPORTANCE:
        notes.append(
            f"salience: importance {imp:.6g} ≥ {SALIENCE_MIN_IMPORTANCE}, but not among the {SALIENCE_COUNT} newest "
            f"important {ctx.noun}"
        )
    else:
        notes.append(f"salience: importance {imp:.6g} < {SALIENCE_MIN_IMPORTANCE}")
    cos = ctx.cosines.get(hid)
    taken = [n for n in ("recency", "salience") if hid in lists[n]]
    if hid in lists["relevance"]:
        r = lists["relevance"].index(hid) + 1
        notes.append(f"relevance: cosine {cos:.6f} > {RELEVANCE_MIN_COSINE}, {_ordinal(r)} by cosine")
    elif cos is not None:
        cmp = ">" if cos > RELEVANCE_MIN_COSINE else "≤"
        if taken:
            notes.append(
                f"relevance: cosine {cos:.6f} {cmp} {RELEVANCE_MIN_COSINE}; already taken by {' and '.join(taken)}, "
                "so the relevance leg skipped it"
            )
        elif hid not in ctx.window:
            notes.append(
                f"relevance: cosine {cos:.6f}, but not among the {RELEVANCE_CANDIDATES} newest {ctx.noun} with an "
                "embedding"
            )
        elif cos > RELEVANCE_MIN_COSINE:
            notes.append(
                f"relevance: cosine {cos:.6f} > {RELEVANCE_MIN_COSINE}, but not among the {RELEVANCE_COUNT} highest"
            )
        else:
            notes.append(f"relevance: cosine {cos:.6f} ≤ {RELEVANCE_MIN_COSINE}")
    elif it.embedding is None:
        notes.append(f"relevance: this {noun} has no embedding")
    else:
        notes.append("relevance: no cosine (the embedding or the query vector could not be used)")
    found = [n for n in LISTS if hid in lists[n]]
    if found:
        notes.append(f"merged: from {found[0]}" + (f" (also in {', '.join(found[1:])})" if len(found) > 1 else ""))
    return notes
