"""The in-memory vector matrices: incremental updates, external writes, the memory bound."""

import numpy as np
import pytest

from oxmem_gui.core.retrieval import vectors
from oxmem_gui.core.retrieval.vectors import SessionMatrix, VectorIndex
from tests.conftest import open_sync, user


def test_own_writes_update_the_cached_matrix_without_reloading(store, monkeypatch):
    store.store("s", 1, user("first"))
    store.hybrid_query("s", "x", vector_weight=1.0, fts_weight=0.0)
    loads = []
    real = vectors.load_session_matrix
    monkeypatch.setattr(vectors, "load_session_matrix", lambda *a: loads.append(a) or real(*a))
    store.store("s", 2, user("second"))
    store.store("s", 3, user("first"))  # deduplicated: the sequence_end of chunk 1 becomes 3
    r = store.hybrid_query("s", "x", vector_weight=1.0, fts_weight=0.0)
    assert loads == []
    assert sorted((h.sequence_start, h.sequence_end) for h in r.hits) == [(1, 3), (2, 2)]
    (entry,) = store.inner._caches.vectors._entries.values()
    assert len(entry) == 2


def test_a_write_from_another_connection_is_seen(store, tmp_path, loop):
    store.store("s", 1, user("first"))
    assert [h.sequence_start for h in store.hybrid_query("s", "q", vector_weight=1.0, fts_weight=0.0).hits] == [1]
    other = open_sync(loop, tmp_path / "memory.db")
    other.store("s", 2, user("written by the agent"))
    other.aclose()
    hits = store.hybrid_query("s", "q", vector_weight=1.0, fts_weight=0.0).hits
    assert sorted(h.sequence_start for h in hits) == [1, 2]


def test_deletion_drops_the_session(store):
    note = store.save_note("u", "to be deleted", [])
    store.save_note("u", "kept", [])
    assert len(store.hybrid_query("memory:u", "x").hits) == 2
    store.delete_note("u", note.note_id)
    assert [h.text for h in store.hybrid_query("memory:u", "x").hits] == ["kept"]


def test_lru_keeps_memory_bounded(store):
    for sid in ("a", "b", "c"):
        store.store(sid, 1, user(f"text of {sid}"))
    index = store.inner._caches.vectors
    store.hybrid_query("a", "x")
    index.max_bytes = 2 * index.nbytes  # room for two sessions
    for sid in ("a", "b", "c"):
        store.hybrid_query(sid, "x")
    assert index.cached_sessions() == ["b", "c"]
    store.hybrid_query("b", "x")
    store.hybrid_query("a", "x")
    assert index.cached_sessions() == ["b", "a"]
    assert index.nbytes <= index.max_bytes


def test_top_keeps_ties_at_the_cut_and_breaks_them_by_recency_then_id():
    m = SessionMatrix("m", 2)
    ids = ["c:1", "c:2", "c:3", "c:4"]
    m.append(ids, [1, 2, 3, 4], [1, 2, 3, 4], np.array([[1, 0], [0, 1], [0, 1], [0, 1]], dtype=np.float32))
    top = m.top(np.array([0, 1], dtype=np.float32), 2)
    # three tied at 1.0 with the cut: all kept (the caller cuts once their sequences are confirmed), newest first
    assert [(c.chunk_id, c.raw) for c in top] == [("c:4", 1.0), ("c:3", 1.0), ("c:2", 1.0)]


def test_index_growth_keeps_rows():
    m = SessionMatrix("m", 3)
    for i in range(200):
        m.append([f"c{i}"], [i], [i], np.array([[i, 1, 0]], dtype=np.float32))
    scores = m.cosines(np.array([0, 1, 0], dtype=np.float32))
    assert len(scores) == 200
    assert scores[0] == 1.0 and abs(scores[199] - 1 / np.sqrt(199**2 + 1)) < 1e-7
    assert VectorIndex().nbytes == 0


def test_a_restored_matrix_finds_its_ids_by_their_kept_hashes_and_appended_ones_by_a_dict():
    m = SessionMatrix("m", 2)
    ids = [f"chunk:s:{i}:0:{i:016x}" for i in range(50)]
    starts = [None if i == 3 else i for i in range(50)]
    m.append(ids, starts, list(range(50)), np.ones((50, 2), dtype=np.float32), list(range(1, 51)))
    described, arrays = m.export()
    arrays = {k: (v.array if isinstance(v, vectors.Room) else v) for k, v in arrays.items()}
    restored = SessionMatrix.restored(described, arrays)
    assert restored._rows is None  # no dict of the ids it came with, no list of them either:
    assert isinstance(restored.chunk_ids, vectors.KeptColumn) and restored.chunk_ids[-1] == ids[-1]
    assert [restored.chunk_ids[7], restored.sequence_start[3], restored.sequence_start[4]] == [ids[7], None, 4]
    assert list(restored.sequence_start) == starts and restored.chunk_ids[48:] == ids[48:]
    assert restored.sequence_start._n == 0 and restored.sequence_start[4] == 4  # a list from then on
    restored.vector_rowids[3] = None  # (as ``_append`` marks a row)
    assert restored.vector_rowids[3] is None and list(restored.vector_rowids)[:5] == [1, 2, 3, None, 5]
    with pytest.raises(IndexError):
        restored.chunk_ids[50]
    assert [restored.row_of(c) for c in ids] == list(range(50))
    assert restored.row_of("chunk:s:50:0:x") is None
    restored.append(["chunk:s:50:0:x"], [50], [50], np.ones((1, 2), dtype=np.float32))
    assert restored.row_of("chunk:s:50:0:x") == 50 and restored._rows == {"chunk:s:50:0:x": 50}
    assert len(restored) == 51 and restored.chunk_ids[-1] == "chunk:s:50:0:x" and restored.vector_rowids[50] is None
    again = restored.export()[1]["ids"]
    assert bytes(again).decode().split("\x00") == [*ids, "chunk:s:50:0:x"]
    # ids of one hash (forced): each still found by its own id
    order = arrays["order"]
    arrays["hashes"] = np.zeros(50, dtype=np.uint64)
    arrays["order"] = np.arange(50, dtype=np.int64)[::-1].copy()
    clashing = SessionMatrix.restored(described, arrays)
    assert clashing.row_of(ids[7]) is None  # its hash (not 0) is not among them
    clashing._hashes = (np.full(50, vectors.id_hashes([ids[7]])[0], dtype=np.uint64), clashing._hashes[1])
    assert clashing.row_of(ids[7]) == 7  # after 42 rows of the same hash and other ids
    arrays["order"] = np.full(50, 50, dtype=np.int64)
    with pytest.raises(ValueError, match="hashes"):
        SessionMatrix.restored(described, arrays)
    arrays["order"], arrays["ends"] = order, arrays["ends"][:-1]
    with pytest.raises(ValueError, match="chunk ids"):
        SessionMatrix.restored(described, arrays)


def test_rows_of_models_taking_turns_and_of_other_sizes_are_each_read_in_order():
    a, b = bytes(8), bytes(range(8))
    rows = [(1, "c1", 1, 1, "m", a), (2, "c2", 2, 2, "m", b), (3, "c3", 3, 3, "n", a), (4, "c4", 4, 4, "m", a),
            (5, "c5", 5, 5, "m", b"\x00" * 4), (6, "c6", 6, 6, "m", b), (7, "c7", 7, 7, "n", b)]  # fmt: skip
    reads = vectors.read_by_model(rows)
    m, n = reads["m"], reads["n"]
    assert m.rowids == [1, 2, 4, 5, 6] and m.chunk_ids == ["c1", "c2", "c4", "c5", "c6"] and m.ends == [1, 2, 4, 5, 6]
    assert m.blobs == [a, b, a, b"\x00" * 4, b]  # sizes differ: kept as read
    assert n.rowids == [3, 7] and n.blobs is None and bytes(n.buffer) == a + b and n.size == 8


def test_cache_bound_is_configurable(tmp_path, loop):
    s = open_sync(loop, tmp_path / "m.db", vector_cache_bytes=12_345)
    assert s.inner._caches.vectors.max_bytes == 12_345
    s.aclose()


def test_the_models_pass_hands_its_rows_to_the_first_load_only_while_the_file_is_unchanged(store, tmp_path, loop):
    """Listing a session's models reads its vectors of every model once; the first matrix of the session is made
    from those rows (no second pass: 15% of a first query at 100k chunks) — unless the file changed in between,
    when they are read again."""
    store.store("s", 1, user("first"))
    index, db = store.inner._caches.vectors, store.inner._db
    backend = store.inner.backend
    model, dims = backend.model_name, backend.dimensions
    index.clear()
    assert db.call(index.models, "s") == [model]
    queries = []
    db.call(lambda conn: conn.set_exec_trace(lambda _c, sql, _b: queries.append(sql) or True))
    assert len(db.call(index.get, "s", model, dims)) == 1
    db.call(lambda conn: conn.set_exec_trace(None))
    assert not any("FROM chunks c" in q for q in queries)
    index.clear()
    db.call(index.models, "s")
    other = open_sync(loop, tmp_path / "memory.db")
    other.store("s", 2, user("written by the agent meanwhile"))
    other.aclose()
    assert len(db.call(index.get, "s", model, dims)) == 2  # read again: the file changed since the models pass


def test_a_session_reads_in_rowid_order_by_either_plan_and_an_odd_blob_is_listed(store):
    """A session holding most of the file's vectors is read by scanning chunks_vec in rowid order, a smaller one
    through its index and sorted: both give rows in vector-rowid order, the same matrix a fresh read gives. A blob
    of another length turns that model's read into one blob at a time: it is listed as an error, the rest load."""
    for i in range(6):
        store.store("big", i + 1, user(f"big turn {i}"))
    for i in range(2):
        store.store("small", i + 1, user(f"small turn {i}"))
    db, model, dims = store.inner._db, store.inner.backend.model_name, store.inner.backend.dimensions
    big, small = db.call(vectors.read_session, "big")[model], db.call(vectors.read_session, "small")[model]
    big_rowids, small_rowids = big.rowids, small.rowids
    assert len(big_rowids) == 6 and big_rowids == sorted(big_rowids) and big.blobs is None
    assert len(small_rowids) == 2 and small_rowids == sorted(small_rowids) and small.size == dims * 4
    expected = store.sql("SELECT v.embedding_blob FROM chunks_vec v JOIN chunks c USING (chunk_id) "
                         "WHERE c.session_id = 'big' ORDER BY v.rowid")  # fmt: skip
    matrix = db.call(vectors.load_session_matrix, "big", model, dims)
    assert np.array_equal(matrix._matrix[:6], np.frombuffer(b"".join(b for (b,) in expected), "<f4").reshape(6, dims))
    odd = big.chunk_ids[2]
    store.exec_sql("UPDATE chunks_vec SET embedding_blob = x'00000000' WHERE chunk_id = ?", (odd,))
    read = db.call(vectors.read_session, "big")[model]
    assert read.blobs is not None and [len(b) for b in read.blobs] == [dims * 4] * 2 + [4] + [dims * 4] * 3
    matrix = db.call(vectors.load_session_matrix, "big", model, dims)
    assert [cid for cid, _ in matrix.errors] == [odd] and matrix.chunk_ids == [c for c in big.chunk_ids if c != odd]
