"""Re-embedding stored chunks (core/embeddings/reindex.py): what counts as pending, batches and progress, a session's
chunks only, stopping and resuming, and the vectors written."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from oxmem_gui.core.embeddings.backends import DeterministicEmbedding, to_blob
from oxmem_gui.core.embeddings.reindex import ReindexResult, count_pending, reindex
from tests.conftest import TableEmbedding, user

DETERMINISTIC = "deterministic-hash-v1"


@pytest.fixture
def chats(store):
    """A deterministic store: session ``a`` (3 chunks), ``b`` (2) and one note (``memory:alice``), in that order."""
    for i in range(1, 4):
        store.store("a", i, user(f"alpha message {i}"))
    for i in range(1, 3):
        store.store("b", i, user(f"beta message {i}"))
    store.save_note("alice", "a note")
    return store


def run(store, backend, **options) -> ReindexResult:
    return store.inner._db.call(lambda conn: reindex(conn, backend, **options))


def pending(store, model, session_id=None) -> int:
    return store.inner._db.call(lambda conn: count_pending(conn, model, session_id))


def models(store) -> list[tuple[str, str | None]]:
    return store.sql(
        "SELECT c.session_id, v.embedding_model FROM chunks c LEFT JOIN chunks_vec v USING (chunk_id) ORDER BY c.rowid"
    )


@pytest.fixture
def table():
    return TableEmbedding({"alpha message 1": [1.0, 0.0, 0.0]}, [0.0, 0.0, 1.0])


def test_pending_is_every_chunk_without_a_vector_of_the_model(chats):
    assert (pending(chats, DETERMINISTIC), pending(chats, "table-3d"), pending(chats, "table-3d", "a")) == (0, 6, 3)
    chats.exec_sql("DELETE FROM chunks_vec WHERE chunk_id IN (SELECT chunk_id FROM chunks WHERE session_id = 'b')")
    assert (pending(chats, DETERMINISTIC), pending(chats, DETERMINISTIC, "b"), pending(chats, DETERMINISTIC, "a")) == (
        2,
        2,
        0,
    )


def test_a_session_is_reembedded_in_batches_reporting_progress(chats, table):
    seen = []
    result = run(chats, table, session_id="a", progress=lambda done, total: seen.append((done, total)), batch=2)
    assert result == ReindexResult("table-3d", reembedded=3, remaining=0, sessions={"a"}, stopped=False)
    assert seen == [(2, 3), (3, 3)]
    assert models(chats) == [
        ("a", "table-3d"),
        ("a", "table-3d"),
        ("a", "table-3d"),
        ("b", DETERMINISTIC),
        ("b", DETERMINISTIC),
        ("memory:alice", DETERMINISTIC),
    ]


def test_the_stored_vector_is_the_backends_as_little_endian_float32(chats, table):
    run(chats, table, session_id="a")
    blobs = chats.sql(
        "SELECT c.chunk_text, v.embedding_blob FROM chunks c JOIN chunks_vec v USING (chunk_id) "
        "WHERE c.session_id = 'a' ORDER BY c.rowid"
    )
    assert [(text, np.frombuffer(blob, dtype="<f4").tolist()) for text, blob in blobs] == [
        ("alpha message 1", [1.0, 0.0, 0.0]),
        ("alpha message 2", [0.0, 0.0, 1.0]),
        ("alpha message 3", [0.0, 0.0, 1.0]),
    ]
    assert chats.sql("SELECT count(*) FROM chunks_vec") == [(6,)]  # replaced, never added beside the old one


def test_a_stop_set_before_it_starts_changes_nothing(chats, table):
    stop = threading.Event()
    stop.set()
    result = run(chats, table, stop=stop)
    assert result == ReindexResult("table-3d", reembedded=0, remaining=6, sessions=set(), stopped=True)
    assert {model for _, model in models(chats)} == {DETERMINISTIC}


def test_a_stopped_run_keeps_its_batches_and_the_next_run_does_the_rest(chats, table):
    stop = threading.Event()
    first = run(chats, table, progress=lambda done, total: stop.set(), stop=stop, batch=4)
    assert (first.reembedded, first.remaining, first.sessions, first.stopped) == (4, 2, {"a", "b"}, True)
    rest = run(chats, table, batch=4)
    assert (rest.reembedded, rest.remaining, rest.sessions, rest.stopped) == (2, 0, {"b", "memory:alice"}, False)
    seen = []
    again = run(chats, table, progress=lambda done, total: seen.append(done))
    assert (again.reembedded, again.remaining, again.sessions, seen) == (0, 0, set(), [])


def test_chunks_that_lost_their_vector_get_the_deterministic_one_back(chats):
    before = chats.sql("SELECT chunk_id, embedding_blob FROM chunks_vec ORDER BY chunk_id")
    chats.exec_sql("DELETE FROM chunks_vec WHERE chunk_id IN (SELECT chunk_id FROM chunks WHERE session_id = 'b')")
    result = run(chats, DeterministicEmbedding())
    assert result == ReindexResult(DETERMINISTIC, reembedded=2, remaining=0, sessions={"b"})
    after = chats.sql("SELECT chunk_id, embedding_blob FROM chunks_vec ORDER BY chunk_id")
    assert after == before
    [(text, blob)] = chats.sql(
        "SELECT c.chunk_text, v.embedding_blob FROM chunks c JOIN chunks_vec v USING (chunk_id) "
        "WHERE c.session_id = 'b' ORDER BY c.rowid LIMIT 1"
    )
    assert (text, blob) == ("beta message 1", to_blob(DeterministicEmbedding().embed([text])[0]))
