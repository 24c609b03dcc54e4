"""Explanations of a search: each hit's derivation and flags, how ties are broken, and what moved between two
settings."""

from oxmem_gui.core.retrieval.explain import explain, hit_flags, moves
from oxmem_gui.core.retrieval.hybrid import rerank
from tests.conftest import user


def test_explanation_and_flags(filled):
    r = filled.hybrid_query("s", "banana", 3, vector_weight=0.2, fts_weight=0.8)
    top = r.hits[0]
    assert top.text == "banana bread"
    text = explain(r, top)
    assert text.splitlines()[0] == f"Rank 1 of 3 — score {top.score:.6f}"
    assert "FTS: −bm25" in text and "range collapsed (max − min ≤ 1e-06) → 1.0" in text
    assert f"score = 0.2 × {top.vector_score:.6f} + 0.8 × 1.000000" in text
    assert 'FTS expression (terms mode): "banana"' in text
    assert "FTS range collapsed (one candidate): every FTS score is 1.0" in hit_flags(r, top)
    other = r.hits[1]
    assert "not in FTS candidates" in hit_flags(r, other)
    assert "FTS: not among the leg's 1 candidates → contributes 0" in explain(r, other)


def test_tie_break_is_explained(store):
    store.store("t", 1, user("same words here"))
    store.store("t", 2, {"role": "assistant", "content": "same words here"})  # deduplicated into one chunk
    r = store.hybrid_query("t", "words", 4, vector_weight=1.0, fts_weight=0.0)
    assert len(r.hits) == 1 and "Tie-break" not in explain(r, r.hits[0])
    store.store("t", 3, user("other words there"))
    store.store("t", 4, user("third words"))
    r = store.hybrid_query("t", "zzz", 4, vector_weight=0.0, fts_weight=1.0)  # no FTS match: every score 0
    assert [h.score for h in r.hits] == [0.0, 0.0, 0.0]
    assert "Tie-break: tied at 0.000000 with rank 2: the newer one (sequence 4 > 3) ranks first" in explain(
        r, r.hits[0]
    )


def test_moves_between_settings(filled):
    a = filled.hybrid_query("s", "apple pie", 4, vector_weight=1.0, fts_weight=0.0)
    b = rerank(a, 0.0, 1.0)
    got = {m.chunk_id: m.label for m in moves(a, b)}
    old = {h.chunk_id: h.rank for h in a.hits}
    for h in b.hits:
        before = old.get(h.chunk_id)
        expected = (
            "new"
            if before is None
            else "="
            if before == h.rank
            else (f"↑{before - h.rank}" if h.rank < before else f"↓{h.rank - before}")
        )
        assert got[h.chunk_id] == expected
    assert all(got[c] == "dropped" for c in old if c not in {h.chunk_id for h in b.hits})


def test_a_ranking_without_vectors_flags_no_missing_vector():
    from oxmem_gui.core.formats.keywords import index, rank_keywords
    from oxmem_gui.core.store.events import Event

    events = [Event(1, "2037-01-01T00:00:00+00:00", {"role": "user", "content": "green tea"})]
    result = rank_keywords(index([("s", events)]), "tea", "s", 3)
    assert hit_flags(result, result.hits[0]) == []
