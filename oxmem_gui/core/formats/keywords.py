"""oxmem's own keyword search over a framework's sessions, for formats whose agent has no search of its own over
them (the OpenAI Agents SDK's sessions, Agno's runs): labelled as oxmem's, never passed off as the agent's.

The events whose text holds the query's words (split at whitespace, compared ignoring case, each counted once) are
ranked by how many of the words they hold, then the newest first (the highest sequence, then the session id);
score = words found / words asked. Over one session, or every session at once (each read whole: the cost grows
with the file).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import apsw

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


def rank_keywords(sessions: Iterable[tuple[str, list[Event]]], query: str, scope: Scope, top_k: int) -> QueryResult:
    """:data:`NAME`'s ranking of the events of ``sessions`` (see the module's docstring)."""
    words = list(dict.fromkeys(w.casefold() for w in query.split()))
    result = QueryResult(query, shown_scope(scope), top_k, 0.0, 1.0, "terms", [], "any", None, {}, [], retriever=NAME)
    result.steps.append(DESCRIPTION)
    result.steps.append(f"words asked: {', '.join(words)}")
    found: list[tuple[int, int, str, Event, str, list[str]]] = []
    for session_id, events in sessions:
        for event in events:
            text = event_text(event.payload)
            folded = text.casefold()
            held = [w for w in words if w in folded]
            if held:
                found.append((len(held), event.sequence, session_id, event, text, held))
    found.sort(key=lambda f: (-f[0], -f[1], f[2]))
    result.legs["fts"] = LegStats(len(found))  # (no normalization: the score is the share of words found)
    result.steps.append(f"{len(found):,} events hold at least one word; the first {min(len(found), top_k)} are hits")
    for rank, (count, sequence, session_id, event, text, held) in enumerate(found[:top_k], 1):
        score = count / len(words)
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
        if isinstance(scope, AllSessions):
            ids = [s.session_id for s in self._sessions(conn, None) if scope.admits(s.session_id)]
        else:
            ids = [scope]
        return rank_keywords(((sid, self._events(conn, sid)) for sid in ids), query, scope, top_k)

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
