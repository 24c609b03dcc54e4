import json

import pytest

from oxmem_gui.core import InvalidInputError, NotFoundError
from oxmem_gui.core.api import SearchOptions
from oxmem_gui.core.store import notes as notes_api
from oxmem_gui.core.store.tags import normalize_tags


def test_tag_normalization():
    assert normalize_tags([" Preferences ", "PREFERENCES", "theme"]) == ["preferences", "theme"]
    assert normalize_tags(["", "  ", "A" * 70]) == ["a" * 64]
    assert normalize_tags([f"t{i}" for i in range(20)]) == [f"t{i}" for i in range(16)]
    with pytest.raises(InvalidInputError, match="not one string"):
        normalize_tags("theme")


def test_save_writes_event_and_note_metadata(store):
    note = store.save_note("alice", "Prefers dark mode", [" Preferences ", "PREFERENCES", "theme"])
    assert note.note_id.startswith("note-") and len(note.note_id) == 41
    assert note.tags == ["preferences", "theme"] and note.sequence == 1
    (payload,) = store.sql("SELECT payload_json FROM conversation_events WHERE session_id = 'memory:alice'")
    assert json.loads(payload[0]) == {"content": "Prefers dark mode", "role": "user", "tool_call_id": note.note_id}
    (meta,) = store.sql("SELECT metadata_json FROM chunks")
    m = json.loads(meta[0])
    assert m == {
        "chunk_count": 1,
        "chunk_index": 0,
        "created_at": note.created_at,
        "note_id": note.note_id,
        "role": "user",
        "schema_version": 1,
        "sequence_end": 1,
        "sequence_start": 1,
        "source": "memory_save",
        "tags": ["preferences", "theme"],
        "tool_call_id": note.note_id,
        "updated_at": note.created_at,
    }
    assert list(m) == sorted(m)


def test_update_keeps_id_and_created_at(store):
    old = store.save_note("alice", "Prefers dark mode", ["theme"])
    new = store.update_note("alice", old.note_id, "Prefers light mode", ["Theme", "ui"])
    assert (new.note_id, new.created_at) == (old.note_id, old.created_at)
    assert new.updated_at > old.updated_at
    (got,) = store.list_notes("alice")
    assert (got.content, got.tags, got.created_at, got.updated_at) == (
        "Prefers light mode",
        ["theme", "ui"],
        old.created_at,
        new.updated_at,
    )
    assert store.sql("SELECT json_extract(metadata_json, '$.source') FROM chunks") == [("memory_update",)]
    assert store.sql("SELECT count(*) FROM conversation_events") == [(1,)]
    assert store.sql("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'dark'") == [(0,)]


def test_update_is_atomic(store, monkeypatch):
    old = store.save_note("alice", "Original content", ["keep"])

    def crash(*args, **kwargs):
        raise RuntimeError("simulated crash between delete and store")

    monkeypatch.setattr(notes_api, "write_event_rows", crash)
    with pytest.raises(RuntimeError, match="simulated crash"):
        store.update_note("alice", old.note_id, "New content", ["new"])
    (got,) = store.list_notes("alice")
    assert (got.note_id, got.content, got.tags) == (old.note_id, "Original content", ["keep"])
    assert store.sql("SELECT count(*) FROM chunks_vec") == [(1,)]
    assert store.sql("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'original'") == [(1,)]


def test_delete_removes_event_chunks_vectors_fts(store):
    keep = store.save_note("alice", "keep me", [])
    gone = store.save_note("alice", "remove me please", [])
    store.delete_note("alice", gone.note_id)
    assert [n.note_id for n in store.list_notes("alice")] == [keep.note_id]
    assert store.sql("SELECT count(*) FROM conversation_events") == [(1,)]
    assert store.sql("SELECT count(*) FROM chunks_vec") == [(1,)]
    assert store.sql("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'please'") == [(0,)]


def test_unknown_note_and_bad_content(store):
    store.save_note("alice", "x", [])
    with pytest.raises(NotFoundError, match="no note 'note-missing' for user 'alice'"):
        store.update_note("alice", "note-missing", "y", [])
    with pytest.raises(NotFoundError, match="no note 'note-missing'"):
        store.delete_note("alice", "note-missing")
    with pytest.raises(InvalidInputError, match="note content is empty"):
        store.save_note("alice", "   ", [])
    with pytest.raises(InvalidInputError, match="user must be a non-empty string"):
        store.save_note("", "text", [])


@pytest.fixture
def tagged(store):
    a = store.save_note("u", "aisle seats on flights", ["travel", "preferences"])
    b = store.save_note("u", "vegetarian breakfast", ["travel", "food"])
    c = store.save_note("u", "dark mode everywhere", ["preferences", "ui"])
    return store, a, b, c


def test_list_filters_any_all_and_text(tagged):
    store, a, b, c = tagged
    assert {n.note_id for n in store.list_notes("u", ["travel"])} == {a.note_id, b.note_id}
    assert {n.note_id for n in store.list_notes("u", ["food", "ui"], "any")} == {b.note_id, c.note_id}
    assert [n.note_id for n in store.list_notes("u", ["TRAVEL", "preferences"], "all")] == [a.note_id]
    assert store.list_notes("u", ["food", "ui"], "all") == []
    assert [n.note_id for n in store.list_notes("u", contains="VEGETARIAN")] == [b.note_id]
    assert [n.note_id for n in store.list_notes("u")] == [c.note_id, b.note_id, a.note_id]


def test_search_notes_with_tag_filter(tagged):
    store, a, b, c = tagged
    hits = store.search_notes("u", "breakfast", 5, options=SearchOptions(tags=["travel"], tag_mode="all"))
    assert {h.note_id for h in hits} == {a.note_id, b.note_id}
    best = max(hits, key=lambda h: h.hit.fts_score)
    assert (best.note_id, best.hit.fts_rank, best.tags) == (b.note_id, 1, ["travel", "food"])
    hits = store.search_notes(
        "u", "breakfast", 5, options=SearchOptions(tags=["ui"], vector_weight=0.0, fts_weight=1.0)
    )
    assert [(h.note_id, h.score) for h in hits] == [(c.note_id, 0.0)]
