"""Query by example: a memory's stored vector turned into search options (that vector as the query, the vector leg
limited to its model) and a line saying so; searched with, the memory is its own nearest neighbour."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from oxmem_gui.core.embeddings.backends import DETERMINISTIC_MODEL, DeterministicEmbedding
from oxmem_gui.core.embeddings.example import Example


def test_the_options_make_the_vector_the_query_of_its_own_model_only():
    example = Example("chunk-7", "potion-base-8M", np.array([0.5, -0.25, 1.0], dtype=np.float32), "tea")
    options = example.options()
    assert options == {
        "query_embedding": [0.5, -0.25, 1.0],
        "query_embedding_model": "potion-base-8M",
        "models": ["potion-base-8M"],
    }
    assert all(type(v) is float for v in options["query_embedding"])  # plain floats: JSON and the search take them


def test_the_line_names_the_memory_its_model_and_how_many_values():
    example = Example("note-abc", "text-embedding-3-small", np.zeros(1536, dtype=np.float32), "")
    assert example.said() == ("query by example: the stored vector of note-abc (text-embedding-3-small, 1536 values)")


def test_an_example_cannot_be_changed_once_made():
    example = Example("c", "m", np.ones(2, dtype=np.float32), "t")
    with pytest.raises(dataclasses.FrozenInstanceError):
        example.model = "other"


def test_a_notes_own_vector_finds_that_note_first_whatever_the_words(store):
    store.save_note("alice", "Prefers aisle seats on long flights")
    veggie = store.save_note("alice", "Alice is vegetarian and avoids fish")
    store.save_note("alice", "The spare key is under the blue pot")
    example = store.example(veggie.note_id)
    assert (example.model, example.text) == (DETERMINISTIC_MODEL, "Alice is vegetarian and avoids fish")
    assert np.array_equal(example.vector, DeterministicEmbedding().embed([example.text])[0])
    result = store.hybrid_query("memory:alice", "spare key", 3, **example.options())
    by_id = {hit.chunk_id: hit for hit in result.hits}
    assert result.models == [DETERMINISTIC_MODEL]
    assert by_id[example.item_id].vector_rank == 1
    assert by_id[example.item_id].vector_raw == pytest.approx(1.0, abs=1e-6)
    assert by_id[example.item_id].fts_raw is None  # "spare key" is not among its words


def test_an_example_of_another_model_scores_none_of_this_stores_vectors(store):
    note = store.save_note("alice", "Alice is vegetarian")
    other = Example("elsewhere", "potion-base-8M", np.ones(256, dtype=np.float32), "from another file")
    result = store.hybrid_query("memory:alice", "vegetarian", 3, **other.options())
    assert result.models == []
    assert result.skipped_models == {DETERMINISTIC_MODEL: "not selected for this query"}
    (hit,) = result.hits
    assert (hit.chunk_id, hit.vector_raw) == (store.example(note.note_id).item_id, None)
    assert hit.fts_raw is not None  # the keyword leg still searches
