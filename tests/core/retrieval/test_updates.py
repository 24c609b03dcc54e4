"""The update step: a newer statement of a fact ranks at least level with the older one it restates (so, by
contract §6's order, just above it). Vectors are chosen by hand so the vector leg prefers the older statement, as a
sentence embedding prefers the real-world fact."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from oxmem_gui.core.retrieval.explain import explain
from oxmem_gui.core.retrieval.ranking import TUNED, with_updates
from oxmem_gui.core.retrieval.scope import ALL_SESSIONS
from tests.conftest import TableEmbedding, open_sync, user

OLD, NEW = "Ana plays for Porto", "Ana now plays for Benfica"
#: the query sits nearer the older statement; the newer one is at cosine 0.9 from the older
QUERY = [1.0, 0.0, 0.0, 0.0]
WITHOUT = replace(TUNED, update_overlap=0.0)


def _at(angle: float) -> list[float]:
    return [math.cos(angle), math.sin(angle), 0.0, 0.0]


VECTORS = {
    OLD: _at(math.acos(0.95)),
    NEW: _at(math.acos(0.95) + math.acos(0.9)),
    "Rui plays for Benfica": _at(math.acos(0.95) + math.acos(0.9)),
    "the weather was mild": [0.0, 0.0, 1.0, 0.0],
    "Ana likes tea": [0.6, 0.0, 0.8, 0.0],
    "Ana plays the cello": [0.6, 0.0, 0.0, 0.8],
}


@pytest.fixture
def store(tmp_path, loop):
    s = open_sync(loop, tmp_path / "m.db", embedding=TableEmbedding(VECTORS, default=[0.0, 0.0, 0.0, 1.0]))
    yield s
    s.aclose()


def search(store, session, profile=TUNED, query="Which team does Ana play for?", k=3):
    return store.profile_query(profile, session, query, k, query_embedding=QUERY)


def same(a, b) -> bool:
    return [(h.chunk_id, h.score) for h in a.hits] == [(h.chunk_id, h.score) for h in b.hits]


def test_the_newer_statement_of_a_fact_ranks_above_the_older(store):
    store.store_many([("s", 1, user(OLD)), ("s", 2, user("the weather was mild")), ("s", 3, user(NEW))])
    before = search(store, "s", WITHOUT)
    assert [h.text for h in before.hits[:2]] == [OLD, NEW]  # the vector leg prefers the older statement
    after = search(store, "s")
    assert [h.text for h in after.hits[:2]] == [NEW, OLD]
    new, old = after.hits[0], after.hits[1]
    assert new.score == old.score  # level: contract §6 puts the newer first
    # both match "ana" and "play*"; words {ana, plays, for} shared of {ana, now, plays, for, porto, benfica}
    assert new.update_of == 1 and new.update_overlap == 0.5 and old.updated_by == 3
    by_text = {h.text: h for h in before.hits}
    assert new.update_score == pytest.approx(by_text[OLD].score - by_text[NEW].score, abs=1e-12)
    lines = explain(after, new).splitlines()
    told = (
        "update: restates the statement at sequence 1 (one role, the same query words matched, 50% of their words "
        "shared ≥ 50%) and is newer; lifted level with it"
    )
    assert any(line.startswith(told) for line in lines)
    assert any(line.startswith("updated by the statement at sequence 3") for line in explain(after, old).splitlines())
    assert "updates: a candidate that restates an older candidate" in " ".join(after.steps)
    total = next(line for line in lines if line.startswith("score = "))
    weighted = new.score - new.context_score - new.update_score
    assert total == f"score = {weighted:.6f} + {new.context_score:.6f} + {new.update_score:.6f} = {new.score:.6f}"


def test_unrelated_facts_are_left_as_they_rank(store):
    store.store_many([("s", 1, user("Ana likes tea")), ("s", 2, user("Ana plays the cello"))])
    # both match "ana", but share 1 of their 6 words
    assert same(search(store, "s", query="Ana"), search(store, "s", WITHOUT, "Ana"))
    assert all(h.update_of is None and h.updated_by is None for h in search(store, "s", query="Ana").hits)


def test_the_same_words_about_someone_else_are_not_an_update(store):
    store.store_many([("s", 1, user(OLD)), ("s", 2, user("Rui plays for Benfica"))])
    # 3 of 5 words shared, but the newer does not match "ana": another subject
    assert same(search(store, "s"), search(store, "s", WITHOUT))
    assert all(h.update_of is None for h in search(store, "s").hits)


def test_the_assistant_repeating_a_fact_is_not_an_update(store):
    store.store_many([("s", 1, user(OLD)), ("s", 2, {"role": "assistant", "content": NEW})])
    assert same(search(store, "s"), search(store, "s", WITHOUT))


def test_an_update_in_another_session_does_not_interfere(store):
    store.store("a", 1, user(OLD))
    store.store("b", 1, user(NEW))
    plain, with_step = search(store, ALL_SESSIONS, WITHOUT), search(store, ALL_SESSIONS)
    assert same(plain, with_step)
    assert [h.text for h in with_step.hits[:2]] == [OLD, NEW]
    assert all(h.update_of is None for h in with_step.hits)


def test_a_chain_of_updates_carries_through(store):
    store.store_many([("s", 1, user(OLD)), ("s", 2, user(NEW)), ("s", 3, user("Ana now plays for Braga"))])
    hits = search(store, "s").hits
    assert [h.text for h in hits] == ["Ana now plays for Braga", NEW, OLD]
    assert hits[0].score == hits[1].score == hits[2].score
    assert (hits[0].update_of, hits[1].update_of, hits[1].updated_by, hits[2].updated_by) == (2, 1, 3, 2)


def test_words_fold_as_fts5_folds_them():
    from oxmem_gui.core.retrieval.hybrid import Hit

    def hit(seq: int, text: str, score: float) -> Hit:
        return Hit(0, f"c{seq}", "s", text, score, 0, 0, None, 1.0, None, seq, seq, seq, user(text), None)

    old, new = (
        hit(1, "Cédric Klapisch is a citizen of France", 0.9),
        hit(2, "CEDRIC klapisch is a citizen of Malaysia", 0.5),
    )
    out = with_updates([old, new], ["cedr*", "klapis*", "citizensh*"], 0.5)
    assert out[1].score == 0.9 and out[1].update_overlap == 6 / 8  # cedric klapisch is a citizen of
