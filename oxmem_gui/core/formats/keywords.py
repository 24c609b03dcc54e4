"""oxmem's own keyword search over a framework's sessions, for formats whose agent has no search of its own over
them (the OpenAI Agents SDK's sessions, Agno's runs): labelled as oxmem's, never passed off as the agent's.

The events whose text holds the query's words (split at whitespace, compared ignoring case, each counted once) are
ranked by how many of the words they hold, then the newest first (the highest sequence, then the session id);
score = words found / words asked. Over one session, or every session at once: the scope's events are read whole
once per state of the file and kept, so the first search pays for reading them and the next ones only look.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import apsw
import numpy as np

from ..embeddings.indexing import PayloadNotIndexable, extract_text
from ..errors import NotFoundError
from ..retrieval.hybrid import LegStats, QueryResult
from ..retrieval.scope import AllSessions, Scope, shown_scope
from ..store.events import Event
from .base import ForeignReader, Retriever, hit, ranking

NAME = "oxmem-keywords"
DESCRIPTION = (
    "oxmem's own keyword search — the agent keeps no search of its own over these sessions, so this is not its "
    "recall: the events that hold the query's words (ignoring case), the most words first, then the newest; "
    "score = words found / words asked"
)


def event_text(payload: Any) -> str:
    """What an event says, as the store indexes a message (a tool call with its arguments), else its JSON."""
    try:
        return extract_text(payload).text
    except PayloadNotIndexable:
        return json.dumps(payload, ensure_ascii=False) if not isinstance(payload, str) else payload


SEPARATOR = "\x00"


@dataclass(frozen=True)
class KeywordIndex:
    """The events of a scope as the keyword search reads them, once per state of the file: each one's session,
    the event and its text, and all the texts case-folded in one string (``folded``, each starting at ``starts``),
    so a word is looked for by the regular-expression engine in one pass, not event by event."""

    sessions: list[str]
    events: list[Event]
    texts: list[str]
    folded: str
    starts: np.ndarray
    sequences: np.ndarray


def index(sessions: Iterable[tuple[str, list[Event]]]) -> KeywordIndex:
    """:class:`KeywordIndex` of the events of ``sessions``."""
    ids: list[str] = []
    events: list[Event] = []
    texts: list[str] = []
    for session_id, session_events in sessions:
        for event in session_events:
            ids.append(session_id)
            events.append(event)
            texts.append(event_text(event.payload))
    folded = [t.casefold().replace(SEPARATOR, " ") for t in texts]
    starts = np.cumsum([0, *(len(f) + 1 for f in folded[:-1])]) if folded else np.zeros(0, dtype=np.int64)
    sequences = np.array([e.sequence for e in events], dtype=np.int64)
    return KeywordIndex(ids, events, texts, SEPARATOR.join(folded), np.asarray(starts, dtype=np.int64), sequences)


def _holding(found: KeywordIndex, word: str) -> np.ndarray:
    """The events whose folded text holds ``word``: each match's place mapped to its event, once per event."""
    places = [m.start() for m in re.finditer(re.escape(word), found.folded)]
    return np.unique(np.searchsorted(found.starts, np.asarray(places, dtype=np.int64), side="right") - 1)


def rank_keywords(found: KeywordIndex, query: str, scope: Scope, top_k: int) -> QueryResult:
    """:data:`NAME`'s ranking of the events ``found`` (:func:`index`; see the module's docstring)."""
    words = [w for w in dict.fromkeys(w.casefold() for w in query.split()) if SEPARATOR not in w]
    result = QueryResult(query, shown_scope(scope), top_k, 0.0, 1.0, "terms", [], "any", None, {}, [], retriever=NAME)
    result.steps.append(DESCRIPTION)
    result.steps.append(f"words asked: {', '.join(words)}")
    counts = np.zeros(len(found.events), dtype=np.int64)
    for word in words:
        counts[_holding(found, word)] += 1
    candidates = np.nonzero(counts)[0]
    # the most words, then the newest (numpy); ties of both broken by session id, in Python, over the head only
    candidates = candidates[np.lexsort((-found.sequences[candidates], -counts[candidates]))]
    cut = min(top_k, len(candidates))
    while 0 < cut < len(candidates) and (
        counts[candidates[cut]] == counts[candidates[cut - 1]]
        and found.sequences[candidates[cut]] == found.sequences[candidates[cut - 1]]
    ):
        cut += 1
    head = sorted(
        (int(i) for i in candidates[:cut]), key=lambda i: (-counts[i], -found.sequences[i], found.sessions[i])
    )[:top_k]
    found_words = counts[candidates]  # the raw score: words found (no normalization: the score is their share)
    result.legs["fts"] = (
        LegStats(len(candidates), float(found_words.min()), float(found_words.max())) if len(candidates) else LegStats()
    )
    result.steps.append(
        f"{len(candidates):,} events hold at least one word; the first {min(len(candidates), top_k)} are hits"
    )
    for rank, i in enumerate(head, 1):
        event, session_id, text = found.events[i], found.sessions[i], found.texts[i]
        held = [w for w in words if w in text.casefold()]
        sequence, score = event.sequence, int(counts[i]) / len(words)
        missing = [w for w in words if w not in held]
        notes = [f"holds {', '.join(held)}" + (f"; not {', '.join(missing)}" if missing else "")]
        role = event.payload.get("role") if isinstance(event.payload, dict) else None
        metadata = {"created_at": event.created_at, "role": role}
        result.pool.append(
            hit(
                rank,
                f"{session_id}#{sequence}",
                session_id,
                text,
                score,
                fts=(score, None, rank),
                sequence=sequence,
                metadata=metadata,
                notes=notes,
            )
        )
    result.hits = list(result.pool)
    return result


class KeywordSearch(ForeignReader):
    """A reader whose sessions get :data:`NAME` (the format's agent searching none of them)."""

    def retrievers(self) -> list[Retriever]:
        return [Retriever(NAME, "oxmem keyword search", "session", False, DESCRIPTION, every=True)]

    @ranking(NAME)
    def _rank_keywords(
        self, conn: apsw.Connection, scope: Scope, query: str, top_k: int, **options: Any
    ) -> QueryResult:
        """Over the scope's events as read once per state of the file: a query then only looks for its words
        (at 100k messages the first search reads them in about 1.5 s, each next one takes milliseconds)."""

        def read() -> KeywordIndex:
            if isinstance(scope, AllSessions):
                ids = [s.session_id for s in self._sessions(conn, None) if scope.admits(s.session_id)]
            else:
                ids = [scope]
            return index((sid, self._events(conn, sid)) for sid in ids)

        return rank_keywords(self._per_state(conn, "keyword texts", scope, read), query, scope, top_k)

    def _event_target(self, conn: apsw.Connection, scope: str, sequence: int, every: QueryResult) -> str:
        """An event the keyword search does not return is still the session's: its id, to say why."""
        try:
            return super()._event_target(conn, scope, sequence, every)
        except NotFoundError:
            if every.retriever != NAME or not any(e.sequence == sequence for e in self._events(conn, scope)):
                raise
            return f"{scope}#{sequence}"

    def _why_unranked(
        self, conn: apsw.Connection, scope: str, query: str, target: str, label: str, every: QueryResult
    ) -> str:
        if every.retriever != NAME:
            return super()._why_unranked(conn, scope, query, target, label, every)
        words = ", ".join(dict.fromkeys(w.casefold() for w in query.split()))
        return f"{label} does not return it: it holds none of the words ({words})"
