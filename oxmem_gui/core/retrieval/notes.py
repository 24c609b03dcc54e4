"""A hybrid query over a user's notes (contract §7): one hit per note, its best-ranked chunk, with the breakdown."""

from __future__ import annotations

from dataclasses import dataclass

from .hybrid import Hit, QueryResult


@dataclass
class NoteHit:
    note_id: str
    text: str
    score: float
    tags: list[str]
    created_at: str | None
    updated_at: str | None
    hit: Hit


class NoteHits(list[NoteHit]):
    """Hits, one per note, and what the ranking left out: ``skipped_models`` maps a model whose vectors were not
    searched to why (its query could not be embedded here), as :class:`.hybrid.QueryResult` does."""

    def __init__(self, hits: list[NoteHit], skipped_models: dict[str, str] | None = None) -> None:
        super().__init__(hits)
        self.skipped_models = dict(skipped_models or {})


def note_hits(result: QueryResult) -> NoteHits:
    """One entry per note (its best-ranked chunk) from a hybrid query on ``memory:U``."""
    seen: dict[str, NoteHit] = {}
    for hit in result.hits:
        meta = hit.metadata if isinstance(hit.metadata, dict) else {}
        note_id = meta.get("note_id")
        if note_id and note_id not in seen:
            seen[note_id] = NoteHit(
                note_id,
                hit.text,
                hit.score,
                list(meta.get("tags") or []),
                meta.get("created_at"),
                meta.get("updated_at"),
                hit,
            )
    return NoteHits(list(seen.values()), result.skipped_models)
