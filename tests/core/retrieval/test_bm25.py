"""The numpy BM25 gives FTS5's own scores, bit for bit, and stays current."""

import random

import pytest

from oxmem_gui.core.retrieval import hybrid as retrieval
from oxmem_gui.core.retrieval.bm25 import Bm25Index
from tests.conftest import open_sync, user

WORDS = [f"w{i}" for i in range(300)]
WEIGHTS = [1 / (i + 1) for i in range(300)]


@pytest.fixture
def corpus(tmp_path, loop):
    rng = random.Random(5)
    s = open_sync(loop, tmp_path / "bm25.db")
    records = []
    for sid, n in (("a", 700), ("b", 250), ("c", 40)):
        for i in range(1, n + 1):
            text = " ".join(rng.choices(WORDS, WEIGHTS, k=rng.randint(3, 40)))
            records.append((sid, i, user(text)))
    records += [("a", 701 + i, user(f"tie{i} w0 w1")) for i in range(30)]  # equal scores for "w0 w1"
    s.store_many(records)
    yield s, rng
    s.aclose()


def both(conn, session, query, limit, index):
    expression = retrieval.fts_expression(query, "terms")
    terms = retrieval.fts_terms(query)
    fast = retrieval._fts_leg(conn, session, expression, limit, "1", [], index, terms)
    slow = retrieval._fts_leg(conn, session, expression, limit, "1", [])
    return [(c.chunk_id, c.raw) for c in fast], [(c.chunk_id, c.raw) for c in slow]


def test_scores_and_candidates_equal_fts5_exactly(corpus):
    s, rng = corpus
    index = Bm25Index(min_rows=0)
    conn = s.inner._db.conn
    queries = ["w0 w1", "w0 w0 w7", "w299", "nothing-here", "W3 and w12"]
    queries += [" ".join(rng.choices(WORDS, WEIGHTS, k=rng.randint(1, 4))) for _ in range(25)]

    def check():
        compared = 0
        for q in queries:
            for session in ("a", "b", "c"):
                for limit in (1, 8, 32, 400):
                    fast, slow = both(conn, session, q, limit, index)
                    assert fast == slow, (q, session, limit)
                    compared += len(fast)
        return compared

    assert s.inner._db.call(lambda c: check()) > 10_000
    assert index._usable is True and len(index._postings) > 20


def test_own_and_foreign_writes_are_seen(corpus, tmp_path, loop):
    s, _ = corpus
    index = s.inner._caches.bm25
    index.min_rows = 0
    first = s.hybrid_query("c", "zebra w0", 8, vector_weight=0.0, fts_weight=1.0)
    assert index._usable and not any("zebra" in h.text for h in first.hits)
    s.store("c", 100, user("zebra crossing"))
    hits = s.hybrid_query("c", "zebra", 8, vector_weight=0.0, fts_weight=1.0).hits
    assert [h.text for h in hits if h.fts_raw is not None] == ["zebra crossing"]
    other = open_sync(loop, tmp_path / "bm25.db")
    other.store("c", 101, user("zebra zebra stripes"))
    other.aclose()
    hits = s.hybrid_query("c", "zebra", 8, vector_weight=0.0, fts_weight=1.0).hits
    assert [h.text for h in hits if h.fts_raw is not None] == ["zebra zebra stripes", "zebra crossing"]
    expected = s.sql("SELECT -bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH '\"zebra\"' ORDER BY rowid DESC")
    assert [h.fts_raw for h in hits if h.fts_raw is not None] == [row[0] for row in expected]


def test_rows_another_program_appends_join_each_cached_posting_when_it_is_next_used(corpus, tmp_path, loop):
    s, _ = corpus
    index = Bm25Index(min_rows=0)
    conn = s.inner._db.conn
    queries = ["w0 w1", "w1*", "w12 w0", "w2*", "w299"]

    def check():
        for q in queries:
            for session in ("a", "c"):
                fast, slow = both(conn, session, q, 400, index)
                assert fast == slow, (q, session)

    s.inner._db.call(lambda c: check())
    other = open_sync(loop, tmp_path / "bm25.db")
    other.store_many([("c", 500 + i, user(f"w0 w1 w12 w13 w1{i} w2{i} w12")) for i in range(5)])
    other.aclose()

    def follow_then_check():
        index._sync(conn)
        assert index.follows["kept"] == 1
        assert {"w0", "w12"} <= set(index._tails) and "w299" not in index._tails  # nothing copied yet
        kept = len(index._postings["w0"][0])
        _, arrays = index.export()  # what is kept on disk has them
        assert len(arrays[f"positions{list(index._postings).index('w0')}"]) == kept + 5
        check()
        assert not index._tails
        # each posting used was proved the file's (the rows kept are, nothing was rewritten): nothing built again
        assert index.proofs["proved"] == len(index._postings) and index.proofs["differed"] == 0, index.proofs

    s.inner._db.call(lambda c: follow_then_check())


def test_falls_back_to_fts5_when_it_cannot_be_exact(corpus, monkeypatch):
    s, _ = corpus
    index = Bm25Index(min_rows=0)
    conn = s.inner._db.conn
    assert s.inner._db.call(lambda c: index.scores(c, "a", [], 8)) is None
    monkeypatch.setattr(index, "_token", lambda term: None)  # a term of several tokens
    assert s.inner._db.call(lambda c: index.scores(c, "a", ["w1"], 8)) is None
    small = Bm25Index()  # the default threshold: a 1,000-row table is left to FTS5
    assert s.inner._db.call(lambda c: small.scores(c, "a", ["w1"], 8)) is None
    fast, slow = s.inner._db.call(lambda c: both(conn, "a", "w1 w2", 8, small))
    assert fast == slow


def test_row_lengths_sum_each_rows_varints_in_both_paths():
    """FTS5's docsize: a varint per column; one-byte varints are summed in numpy, longer ones one row at a time."""
    from oxmem_gui.core.retrieval.bm25 import _row_lengths

    short = [b"\x00\x00\x05", b"\x00\x01\x7f", b"\x03"]
    assert _row_lengths(short).tolist() == [5.0, 128.0, 3.0]
    long = [*short, b"\x00\x00\x81\x05"]  # 0x81 0x05: 133 tokens in the text column
    assert _row_lengths(long).tolist() == [5.0, 128.0, 3.0, 133.0]
    assert _row_lengths([]).tolist() == []
