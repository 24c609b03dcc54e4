import json

import pytest

from oxmem_gui.core import InvalidInputError, NotFoundError, SequenceError
from oxmem_gui.core.embeddings.backends import deterministic_vector, to_blob
from oxmem_gui.core.embeddings.indexing import content_hash
from tests.conftest import user


def test_store_writes_event_chunk_vector_fts_file_and_state(store):
    result = store.store("s1", 1, {"role": "user", "content": "  The quick   brown fox  "})
    digest = content_hash("The quick brown fox")
    cid = f"chunk:s1:1:0:{digest[:16]}"
    assert (result.indexed, result.chunk_ids, result.new_chunks) == (True, [cid], 1)
    assert store.sql("SELECT payload_json FROM conversation_events") == [
        ('{"content":"  The quick   brown fox  ","role":"user"}',)
    ]
    (row,) = store.sql("SELECT chunk_text, sequence_start, sequence_end, metadata_json, content_hash FROM chunks")
    assert row[:3] == ("The quick brown fox", 1, 1)
    assert row[3] == (
        '{"chunk_count":1,"chunk_index":0,"role":"user","sequence_end":1,"sequence_start":1,'
        '"source":"user_message","tool_call_id":null}'
    )
    assert row[4] == digest
    assert store.sql("SELECT embedding_blob, embedding_model FROM chunks_vec") == [
        (to_blob(deterministic_vector("The quick brown fox")), "deterministic-hash-v1")
    ]
    assert store.sql("SELECT chunk_id FROM chunks_fts WHERE chunks_fts MATCH 'fox'") == [(cid,)]
    assert store.sql("SELECT source_uri, content_hash FROM files") == [("conversation://s1/user_message", digest)]
    assert json.loads(store.sql("SELECT state_json FROM session_state")[0][0]) == {"last_sequence": 1}


def test_duplicate_content_is_one_chunk_with_extended_range(store):
    store.store("s1", 1, {"role": "user", "content": "same words"})
    second = store.store("s1", 2, {"role": "user", "content": "same   words"})
    assert (second.new_chunks, second.deduplicated_chunks) == (0, 1)
    assert store.sql("SELECT count(*) FROM conversation_events") == [(2,)]
    assert store.sql(
        "SELECT sequence_start, sequence_end, json_extract(metadata_json, '$.sequence_end') FROM chunks"
    ) == [(1, 2, 2)]
    assert store.sql("SELECT count(*) FROM chunks_vec") == [(1,)]


def test_non_increasing_sequence_is_rejected_and_nothing_written(store):
    store.store("s1", 5, {"role": "user", "content": "five"})
    for bad in (5, 4):
        with pytest.raises(
            SequenceError, match=f"sequence {bad} of session 's1' is not greater than its last sequence 5"
        ):
            store.store("s1", bad, {"role": "user", "content": "again"})
    assert store.sql("SELECT count(*) FROM conversation_events") == [(1,)]
    assert store.sql("SELECT count(*) FROM chunks") == [(1,)]
    with pytest.raises(InvalidInputError, match="sequence must be an integer"):
        store.store("s1", "6", {"role": "user", "content": "x"})


def test_payload_that_is_not_a_message_is_stored_not_indexed(store):
    result = store.store("s1", 1, ["not", "a", "message"])
    assert (result.indexed, result.not_indexed_reason) == (False, "payload is a JSON list, not a message object")
    assert store.sql("SELECT payload_json FROM conversation_events") == [('["not","a","message"]',)]
    assert store.sql("SELECT count(*) FROM chunks") == [(0,)]
    assert [e.payload for e in store.recall("s1")] == [["not", "a", "message"]]


def test_long_event_chunk_metadata(store):
    text = "word " * 200  # 999 characters after normalization -> 2 chunks
    result = store.store("s1", 1, {"role": "assistant", "content": text})
    assert result.new_chunks == 2
    rows = store.sql(
        "SELECT json_extract(metadata_json, '$.chunk_index'), json_extract(metadata_json, "
        "'$.chunk_count'), length(chunk_text) FROM chunks ORDER BY 1"
    )
    assert rows == [(0, 2, 639), (1, 2, 454)]  # windows [0,640) and [544,999), edge spaces trimmed


def test_state_keeps_other_keys(store):
    store.store("s1", 1, user("a"))
    store.store("s1", 2, user("b"))
    store.exec_sql('UPDATE session_state SET state_json = \'{"agent_key":7,"last_sequence":2}\'')
    store.store("s1", 3, user("c"))
    assert json.loads(store.sql("SELECT state_json FROM session_state")[0][0]) == {"agent_key": 7, "last_sequence": 3}


def test_recall_order_limit_and_unknown(store):
    for seq in (1, 2, 7):
        store.store("s1", seq, user(f"m{seq}"))
    assert [e.sequence for e in store.recall("s1")] == [1, 2, 7]
    assert [e.sequence for e in store.recall("s1", 2)] == [2, 7]
    with pytest.raises(NotFoundError, match="no session 'nope'"):
        store.recall("nope")


def test_forget_cascades_to_chunks_vectors_and_fts(store):
    store.store("s1", 1, user("alpha beta"))
    store.store("s1", 2, {"role": "assistant", "content": "gamma " * 150})
    store.store("s2", 1, user("alpha kept"))
    assert store.sql("SELECT count(*) FROM chunks_vec") == [(4,)]
    store.forget("s1")
    for table in ("sessions", "conversation_events", "session_state", "files", "chunks"):
        assert store.sql(f"SELECT DISTINCT session_id FROM {table}") == [("s2",)], table
    assert store.sql("SELECT chunk_id FROM chunks_vec") == store.sql("SELECT chunk_id FROM chunks")
    assert store.sql("SELECT session_id FROM chunks_fts WHERE chunks_fts MATCH 'alpha OR gamma'") == [("s2",)]
    assert store.sql("SELECT count(*) FROM chunks_fts") == [(1,)]
    with pytest.raises(NotFoundError):
        store.forget("s1")


def test_list_sessions_most_recent_first(store):
    store.store("b", 1, user("x"))
    store.store("a", 1, user("y"))
    store.store("c", 1, user("z"))
    store.exec_sql(
        "UPDATE sessions SET updated_at = CASE session_id WHEN 'c' THEN '2020-01-01 00:00:00' "
        "ELSE '2026-01-01 00:00:00' END"
    )
    sessions = store.list_sessions()
    assert [(s.session_id, s.last_sequence, s.event_count) for s in sessions] == [("a", 1, 1), ("b", 1, 1), ("c", 1, 1)]


def test_store_many_is_all_or_nothing(store):
    records = [("s1", 1, user("one")), ("s1", 2, user("two")), ("s1", 2, user("dup sequence"))]
    with pytest.raises(SequenceError):
        store.store_many(records)
    assert store.sql("SELECT count(*) FROM conversation_events") == [(0,)]
    assert store.sql("SELECT count(*) FROM sessions") == [(0,)]


def test_bulk_import_of_10000_events_reports_progress(store):
    seen = []
    records = [(f"s{i % 10}", i // 10 + 1, user(f"event number {i} about topic {i % 37}")) for i in range(10_000)]
    results = store.store_many(records, progress=lambda stage, done, total: seen.append((stage, done, total)))
    assert len(results) == 10_000
    assert store.sql("SELECT count(*) FROM conversation_events") == [(10_000,)]
    assert store.sql("SELECT count(*) FROM chunks_vec") == [(10_000,)]
    storing = [s for s in seen if s[0] == "storing"]
    assert storing[-1] == ("storing", 10_000, 10_000)
    assert len(storing) == 100
    assert seen[0][0] == "embedding" and ("embedding", 10_000, 10_000) in seen
