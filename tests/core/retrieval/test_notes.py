"""``note_hits``: a hybrid result over ``memory:U`` folded to one hit per note (its best-ranked chunk), with the
note's tags and dates from the chunk's metadata and the models the ranking skipped."""

from __future__ import annotations

from oxmem_gui.core.retrieval.hybrid import Hit, QueryResult
from oxmem_gui.core.retrieval.notes import NoteHits, note_hits


def hit(rank: int, chunk_id: str, score: float, metadata) -> Hit:
    return Hit(
        rank=rank,
        chunk_id=chunk_id,
        session_id="memory:alice",
        text=f"text of {chunk_id}",
        score=score,
        vector_score=score,
        fts_score=0.0,
        vector_raw=None,
        fts_raw=None,
        vector_rank=rank,
        fts_rank=None,
        sequence_start=rank,
        sequence_end=rank,
        metadata=metadata,
        embedding_model="deterministic-hash-v1",
    )


def result(hits: list[Hit], skipped: dict[str, str] | None = None) -> QueryResult:
    return QueryResult(
        query="q",
        session_id="memory:alice",
        top_k=8,
        vector_weight=0.7,
        fts_weight=0.3,
        fts_mode="terms",
        tags=[],
        tag_mode="any",
        fts_expression=None,
        legs={},
        hits=hits,
        skipped_models=dict(skipped or {}),
    )


def test_each_note_keeps_only_its_best_ranked_chunk_in_rank_order():
    hits = [
        hit(1, "c1", 0.9, {"note_id": "note-b", "chunk_index": 1}),
        hit(2, "c2", 0.8, {"note_id": "note-a", "chunk_index": 0}),
        hit(3, "c3", 0.7, {"note_id": "note-b", "chunk_index": 0}),
        hit(4, "c4", 0.6, {"note_id": "note-a", "chunk_index": 1}),
    ]
    found = note_hits(result(hits))
    assert [(h.note_id, h.hit.chunk_id, h.text, h.score) for h in found] == [
        ("note-b", "c1", "text of c1", 0.9),
        ("note-a", "c2", "text of c2", 0.8),
    ]
    assert found[0].hit is hits[0]


def test_tags_and_dates_come_from_the_metadata_and_default_to_empty():
    meta = {"note_id": "note-a", "tags": ["travel", "food"], "created_at": "2026-01-02", "updated_at": "2026-01-03"}
    full, bare = note_hits(result([hit(1, "c1", 0.5, meta), hit(2, "c2", 0.4, {"note_id": "note-b", "tags": None})]))
    assert (full.tags, full.created_at, full.updated_at) == (["travel", "food"], "2026-01-02", "2026-01-03")
    assert (bare.tags, bare.created_at, bare.updated_at) == ([], None, None)
    assert full.tags is not meta["tags"]  # a copy: editing the hit's tags leaves the result's metadata alone


def test_chunks_that_are_not_notes_are_left_out():
    hits = [
        hit(1, "plain", 0.9, {"role": "user"}),
        hit(2, "empty-id", 0.8, {"note_id": ""}),
        hit(3, "not-a-dict", 0.7, "note_id"),
        hit(4, "no-metadata", 0.6, None),
        hit(5, "note", 0.5, {"note_id": "note-a"}),
    ]
    assert [(h.note_id, h.hit.chunk_id) for h in note_hits(result(hits))] == [("note-a", "note")]


def test_skipped_models_are_carried_as_a_copy():
    skipped = {"text-embedding-3-small": "no embedding backend for this model is loaded"}
    query = result([], skipped)
    found = note_hits(query)
    assert isinstance(found, NoteHits) and list(found) == []
    assert found.skipped_models == skipped
    found.skipped_models.clear()
    assert query.skipped_models == skipped
    assert NoteHits([]).skipped_models == {}


def test_a_note_long_enough_for_several_chunks_is_one_search_hit(store):
    long_note = " ".join(["harbour lighthouse keeper"] * 60)  # 1,559 characters: three 640-character chunks
    short = store.save_note("alice", "harbour cafe opens at nine", ["food"])
    long = store.save_note("alice", long_note, ["places"])
    chunks = store.sql(
        "SELECT count(*) FROM chunks WHERE json_extract(metadata_json, '$.note_id') = ?", (long.note_id,)
    )
    assert chunks == [(3,)]
    found = store.search_notes("alice", "harbour lighthouse", 8)
    assert sorted((h.note_id, tuple(h.tags)) for h in found) == sorted(
        [(long.note_id, ("places",)), (short.note_id, ("food",))]
    )
    assert found[0].note_id == long.note_id and found[0].hit.rank == 1
