"""Hybrid retrieval: orders and scores derived by hand from chosen vectors (contract §6)."""

import pytest

from oxmem_gui.core import InvalidInputError, NotFoundError
from tests.conftest import TableEmbedding, open_sync, user

X, Y, Z = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]


@pytest.fixture
def hand(tmp_path, loop):
    backend = TableEmbedding({"alpha apple": X, "beta banana": [0.6, 0.8, 0.0], "gamma apple": Y}, default=X)
    s = open_sync(loop, tmp_path / "hand.db", embedding=backend)
    s.store("h", 1, user("alpha apple"))
    s.store("h", 2, user("beta banana"))
    s.store("h", 3, user("gamma apple"))
    yield s
    s.aclose()


def ids(result):
    return [h.chunk_id.split(":")[2] for h in result.hits]  # the sequence part of chunk:h:SEQ:...


def test_both_legs_with_collapsed_fts_range(hand):
    # vector raw: seq1 1.0, seq2 0.6, seq3 0.0 -> normalized 1, 0.6, 0
    # FTS "apple": seq1 and seq3, identical bm25 (same length, one occurrence) -> range collapses, both 1.0
    r = hand.hybrid_query("h", "apple", 3, query_embedding=X)
    assert ids(r) == ["1", "2", "3"]
    assert [h.score for h in r.hits] == pytest.approx([1.0, 0.7 * 0.6, 0.3], abs=1e-6)
    assert [h.vector_raw for h in r.hits] == pytest.approx([1.0, 0.6, 0.0], abs=1e-6)
    assert [h.vector_rank for h in r.hits] == [1, 2, 3]
    assert [h.fts_rank for h in r.hits] == [2, None, 1]  # equal bm25 inside the leg: newer sequence_end first
    assert r.hits[1].fts_raw is None and r.hits[1].fts_score == 0.0
    assert r.legs["fts"].collapsed and r.legs["fts"].candidates == 2
    assert not r.legs["vector"].collapsed
    assert (r.legs["vector"].min, r.legs["vector"].max) == pytest.approx((0.0, 1.0), abs=1e-6)
    assert r.fts_expression == '"apple"'


def test_single_candidate_leg_scores_one(hand):
    # FTS "banana" has one candidate (seq2) -> 1.0; vector as above: seq1 0.7, seq2 0.42 + 0.3 = 0.72, seq3 0
    r = hand.hybrid_query("h", "banana", 3, query_embedding=X)
    assert ids(r) == ["2", "1", "3"]
    assert [h.score for h in r.hits] == pytest.approx([0.72, 0.7, 0.0], abs=1e-6)
    assert r.legs["fts"].candidates == 1 and r.legs["fts"].collapsed
    assert r.hits[0].fts_score == 1.0


def test_weights_change_the_order(hand):
    r = hand.hybrid_query("h", "banana", 3, vector_weight=0.2, fts_weight=0.8, query_embedding=X)
    # seq2: 0.2*0.6 + 0.8 = 0.92; seq1: 0.2; seq3: 0
    assert ids(r) == ["2", "1", "3"]
    assert [h.score for h in r.hits] == pytest.approx([0.92, 0.2, 0.0], abs=1e-6)


def test_ties_break_by_recency_then_chunk_id(tmp_path, loop):
    s = open_sync(loop, tmp_path / "tie.db", embedding=TableEmbedding({}, default=X))
    s.store("t", 1, user("short one"))
    s.store("t", 2, user("long " * 150))  # two chunks, both with sequence_end 2
    s.store("t", 3, {"role": "tool", "content": "a third", "tool_call_id": "c"})
    s.exec_sql("UPDATE chunks SET sequence_end = NULL WHERE sequence_start = 3")  # recency from sequence_start
    r = s.hybrid_query("t", "zzz", 8, vector_weight=1.0, fts_weight=0.0)
    # every cosine is 1.0 -> collapsed -> every score 1.0; recency 3, 2, 2, 1; chunk index 0 before 1
    assert [h.chunk_id.split(":")[2:4] for h in r.hits] == [["3", "0"], ["2", "0"], ["2", "1"], ["1", "0"]]
    assert all(h.score == 1.0 for h in r.hits)
    assert r.legs["vector"].collapsed
    s.aclose()


def test_top_k_limits_hits_and_candidates(store):
    for i in range(1, 31):
        store.store("s", i, user(f"note {i} about apples"))
    r = store.hybrid_query("s", "apples", 2)
    assert len(r.hits) == 2
    assert r.legs["vector"].candidates == 8 and r.legs["fts"].candidates == 8


def test_fts_special_characters_in_both_modes(store):
    store.store("s", 1, user('he said "AND" then (stopped): a*b'))
    store.store("s", 2, user("nothing here"))
    for q in ['"', "*", "AND", "(", ":", 'NEAR("a" b)', "a OR", '"AND" then (stopped)', "-", "^x"]:
        for mode in ("terms", "phrase"):
            store.hybrid_query("s", q, 4, fts_mode=mode)  # never a syntax error
    r = store.hybrid_query("s", "AND", 4, fts_mode="terms")
    assert [h.sequence_start for h in r.hits if h.fts_raw is not None] == [1]
    r = store.hybrid_query("s", '"AND" then (stopped)', 4, fts_mode="phrase")
    assert r.fts_expression == '"""AND"" then (stopped)"'
    assert [h.sequence_start for h in r.hits if h.fts_raw is not None] == [1]
    r = store.hybrid_query("s", "*:()", 4, fts_mode="terms")
    assert r.fts_expression is None and r.legs["fts"].candidates == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"query": "   "}, "query is empty"),
        ({"top_k": 0}, "top_k must be a positive integer"),
        ({"vector_weight": 0.5, "fts_weight": 0.6}, "must sum to 1"),
        ({"vector_weight": float("nan"), "fts_weight": 0.3}, "vector weight must be a number in"),
        ({"vector_weight": 1.5, "fts_weight": -0.5}, "vector weight must be a number in"),
        ({"fts_mode": "fuzzy"}, "fts mode must be one of terms, phrase"),
        ({"tag_mode": "some"}, "tag mode must be one of any, all"),
    ],
)
def test_bad_query_arguments(store, kwargs, message):
    store.store("s", 1, user("x"))
    args = {"query": "x"} | kwargs
    query = args.pop("query")
    with pytest.raises(InvalidInputError, match=message):
        store.hybrid_query("s", query, **args)


def test_weights_within_tolerance_are_accepted(store):
    store.store("s", 1, user("x"))
    assert store.hybrid_query("s", "x", vector_weight=0.7, fts_weight=0.3 + 5e-7).hits


def test_unknown_session(store):
    with pytest.raises(NotFoundError):
        store.hybrid_query("missing", "x")


def test_chunks_of_an_unloaded_model_are_skipped_and_reported(store):
    store.store("s", 1, user("apples"))
    store.exec_sql("UPDATE chunks_vec SET embedding_model = 'mystery-model'")
    r = store.hybrid_query("s", "apples")
    assert list(r.skipped_models) == ["mystery-model"]  # looked up where the agents' libraries keep models
    assert r.skipped_models["mystery-model"].startswith(
        "the vectors were made by mystery-model, which is not on this machine (looked for mystery-model in "
    )
    assert r.legs["vector"].candidates == 0
    assert [h.fts_rank for h in r.hits] == [1]


def test_bad_vector_is_a_per_chunk_error(store):
    store.store("s", 1, user("apples"))
    store.store("s", 2, user("pears"))
    store.exec_sql("UPDATE chunks_vec SET embedding_blob = x'0000803f' WHERE chunk_id LIKE 'chunk:s:2:%'")
    r = store.hybrid_query("s", "fruit", vector_weight=1.0, fts_weight=0.0)
    assert [h.sequence_start for h in r.hits] == [1]
    assert r.vector_errors == [(r.vector_errors[0][0], "vector has 1 values where the model gives 64")]
    assert r.vector_errors[0][0].startswith("chunk:s:2:")


def test_second_connection_write_is_seen_by_next_query(store, tmp_path, loop):
    store.store("s", 1, user("first"))
    assert len(store.hybrid_query("s", "anything", vector_weight=1.0, fts_weight=0.0).hits) == 1
    other = open_sync(loop, tmp_path / "memory.db")
    other.store("s", 2, user("second"))
    other.aclose()
    assert len(store.hybrid_query("s", "anything", vector_weight=1.0, fts_weight=0.0).hits) == 2


REFERENCE_FTS = (
    "SELECT c.chunk_id, -bm25(chunks_fts) AS score FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
    "WHERE chunks_fts MATCH ? AND chunks_fts.session_id = ? "
    "ORDER BY score DESC, c.sequence_end DESC, c.sequence_start DESC, c.chunk_id ASC LIMIT ?"
)


def test_fts_leg_equals_one_filtered_ordered_query_across_windows_and_ties(store):
    """The FTS leg reads the best matches of the whole table in growing windows; its candidates must be
    exactly those of the plain session-filtered query, ties at the cut included."""
    records = [("small", i, user(f"apple tok{i}")) for i in range(1, 6)]
    records += [("big", i, user(f"apple tok{i}")) for i in range(1, 601)]  # 600 ties on "apple"
    records += [("big", i, user(f"apple apple banana w{i}")) for i in range(601, 611)]
    store.store_many(records)
    for session, top_k in (("small", 2), ("big", 3), ("big", 60), ("big", 200)):
        r = store.hybrid_query(session, "apple banana", top_k, vector_weight=0.0, fts_weight=1.0)
        limit = 4 * top_k
        expected = store.sql(REFERENCE_FTS, ('"apple" OR "banana"', session, limit))
        got = sorted((h.fts_rank, h.chunk_id, h.fts_raw) for h in r.hits if h.fts_rank is not None)
        assert r.legs["fts"].candidates == len(expected)
        assert [(cid, score) for _, cid, score in got] == [tuple(e) for e in expected[: len(got)]]


def test_restricting_the_vector_leg_to_one_model(tmp_path, loop):
    det = open_sync(loop, tmp_path / "mixed.db", embedding="deterministic")
    det.store("m", 1, user("first by hash"))
    det.aclose()
    table = open_sync(loop, tmp_path / "mixed.db", embedding=TableEmbedding({}, default=X))
    table.store("m", 2, user("second by table"))
    both = table.hybrid_query("m", "anything", 4, vector_weight=1.0, fts_weight=0.0)
    assert both.models == ["deterministic-hash-v1", "table-3d"] and len(both.hits) == 2
    one = table.hybrid_query("m", "anything", 4, vector_weight=1.0, fts_weight=0.0, models=["table-3d"])
    assert one.models == ["table-3d"] and one.skipped_models == {"deterministic-hash-v1": "not selected for this query"}
    assert [(h.sequence_start, h.embedding_model) for h in one.hits if h.vector_raw is not None] == [(2, "table-3d")]
    assert table.session_models("m") == ["deterministic-hash-v1", "table-3d"]
    table.aclose()
