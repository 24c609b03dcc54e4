"""The update step: a newer statement of a fact ranks at least level with the older one it restates (so, by
contract §6's order, just above it). Vectors are chosen by hand so every cosine is known."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from oxmem_gui.core.retrieval.explain import explain
from oxmem_gui.core.retrieval.ranking import TUNED
from oxmem_gui.core.retrieval.scope import ALL_SESSIONS
from tests.conftest import TableEmbedding, open_sync, user

OLD, NEW = "Ana plays for Porto", "Ana now plays for Benfica"
#: the query sits nearer the older statement (general knowledge); the newer one is at cosine 0.9 from the older
QUERY = [1.0, 0.0, 0.0, 0.0]


def _at(angle: float) -> list[float]:
    return [math.cos(angle), math.sin(angle), 0.0, 0.0]


VECTORS = {
    OLD: _at(math.acos(0.95)),
    NEW: _at(math.acos(0.95) + math.acos(0.9)),
    "the weather was mild": [0.0, 0.0, 1.0, 0.0],
    "Ana likes tea": [0.6, 0.0, 0.8, 0.0],  # cosine 0.36 with the next: not the same fact
    "Ana plays the cello": [0.6, 0.0, 0.0, 0.8],
}


@pytest.fixture
def store(tmp_path, loop):
    s = open_sync(loop, tmp_path / "m.db", embedding=TableEmbedding(VECTORS, default=[0.0, 0.0, 0.0, 1.0]))
    yield s
    s.aclose()


def search(store, session, profile, query="Which team does Ana play for?", k=3):
    return store.profile_query(profile, session, query, k, query_embedding=QUERY)


UPDATES = replace(TUNED, update_similarity=0.8)


def test_the_newer_statement_of_a_fact_ranks_above_the_older(store):
    store.store_many([("s", 1, user(OLD)), ("s", 2, user("the weather was mild")), ("s", 3, user(NEW))])
    before = search(store, "s", TUNED)
    assert [h.text for h in before.hits[:2]] == [OLD, NEW]  # the vector leg prefers the older statement
    after = search(store, "s", UPDATES)
    assert [h.text for h in after.hits[:2]] == [NEW, OLD]
    new, old = after.hits[0], after.hits[1]
    assert new.score == old.score  # level: contract §6 puts the newer first
    assert new.update_of == 1 and new.update_cosine == pytest.approx(0.9, abs=1e-6) and old.updated_by == 3
    by_text = {h.text: h for h in before.hits}
    assert new.update_score == pytest.approx(by_text[OLD].score - by_text[NEW].score, abs=1e-12)
    lines = explain(after, new).splitlines()
    told = "update: restates the statement at sequence 1 (cosine 0.900000 ≥ 0.8) and is newer; lifted level with it"
    assert any(line.startswith(told) for line in lines)
    assert any(line.startswith("updated by the statement at sequence 3") for line in explain(after, old).splitlines())
    assert "updates: a candidate that restates an older candidate" in " ".join(after.steps)


def test_unrelated_facts_are_left_as_they_rank(store):
    store.store_many([("s", 1, user("Ana likes tea")), ("s", 2, user("Ana plays the cello"))])
    plain, with_step = search(store, "s", TUNED, "Ana"), search(store, "s", UPDATES, "Ana")
    assert [(h.chunk_id, h.score) for h in with_step.hits] == [(h.chunk_id, h.score) for h in plain.hits]
    assert all(h.update_of is None and h.updated_by is None for h in with_step.hits)


def test_an_update_in_another_session_does_not_interfere(store):
    store.store("a", 1, user(OLD))
    store.store("b", 1, user(NEW))
    plain, with_step = search(store, ALL_SESSIONS, TUNED), search(store, ALL_SESSIONS, UPDATES)
    assert [(h.chunk_id, h.score) for h in with_step.hits] == [(h.chunk_id, h.score) for h in plain.hits]
    assert [h.text for h in with_step.hits[:2]] == [OLD, NEW]
    assert all(h.update_of is None for h in with_step.hits)
