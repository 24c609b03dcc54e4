"""SearchOptions (core/retrieval/options.py): its defaults are the hybrid's (contract §6), and it says what differs
from them, as the rankings take it."""

from __future__ import annotations

import inspect

import pytest

from oxmem_gui.core import api
from oxmem_gui.core.memory_store import MemoryStore
from oxmem_gui.core.retrieval.hybrid import hybrid_query


def test_search_options_defaults_are_the_hybrids():
    defaults = api.SearchOptions()
    for function in (MemoryStore.hybrid_query, hybrid_query):  # the store's (contract §6) and the ranking's
        params = inspect.signature(function).parameters
        for name in ("vector_weight", "fts_weight", "fts_mode", "tag_mode", "models", "query_embedding_model"):
            if name in params:
                assert getattr(defaults, name) == params[name].default, (function, name)
        assert tuple(params["tags"].default) == defaults.tags == ()
    assert inspect.signature(MemoryStore.hybrid_query).parameters["query_embedding"].default is None
    assert api.SEARCH_DEFAULTS.given() == {} and api.SEARCH_DEFAULTS.is_default()


def test_search_options_say_what_differs_from_the_defaults():
    options = api.SearchOptions(vector_weight=0.5, fts_weight=0.5, tags=["b", "a"], models=["m"])
    assert options.tags == ("b", "a") and options.models == ("m",)
    assert options.given() == {"vector_weight": 0.5, "fts_weight": 0.5, "tags": ["b", "a"], "models": ["m"]}
    vector = [0.25, 0.5]
    by_example = api.SearchOptions(query_embedding=vector, query_embedding_model="x")
    assert by_example.given() == {"query_embedding": vector, "query_embedding_model": "x"}
    assert api.SearchOptions.of(None) is api.SEARCH_DEFAULTS
    assert api.SearchOptions.of({"fts_mode": "phrase"}).given() == {"fts_mode": "phrase"}
    with pytest.raises(TypeError):
        api.SearchOptions.of({"fts_mood": "phrase"})
