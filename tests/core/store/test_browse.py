"""Paged reads for the inspector, backups, bulk note edits, and cancelling an import."""

import threading

import apsw
import pytest

from oxmem_gui.core import NotFoundError, OperationCancelled
from oxmem_gui.core.store.notes import Note
from tests.conftest import user


def test_sessions_page_keyset_order_and_filter(store):
    for sid in ("b", "a", "c", "memory:zed"):
        store.store(sid, 1, user("x"))
    store.exec_sql(
        "UPDATE sessions SET updated_at = CASE session_id WHEN 'c' THEN '2020-01-01 00:00:00' "
        "ELSE '2026-01-01 00:00:00' END"
    )
    first = store.sessions_page(limit=2)
    assert [s.session_id for s in first] == ["a", "b"]
    rest = store.sessions_page(after=(first[-1].updated_at, first[-1].session_id), limit=10)
    assert [s.session_id for s in rest] == ["memory:zed", "c"]
    assert [s.session_id for s in store.sessions_page(contains="ZED")] == ["memory:zed"]
    assert store.sessions_page(contains="%") == []
    stats = store.session_stats(["a", "c"])
    assert (stats["a"].event_count, stats["a"].last_sequence, stats["a"].chunk_count) == (1, 1, 1)


def test_events_and_chunks_pages(store):
    store.store_many([("s", i, user(f"message {i} " + "word " * (200 if i == 3 else 1))) for i in range(1, 8)])
    page = store.events_page("s", None, 3)
    assert [e.sequence for e in page] == [1, 2, 3]
    assert [e.sequence for e in store.events_page("s", 3, 10)] == [4, 5, 6, 7]
    chunks = store.chunks_page("s", None, 4)
    assert [(c.sequence_start, c.dimensions, c.embedding_model) for c in chunks] == [
        (1, 64, "deterministic-hash-v1"),
        (2, 64, "deterministic-hash-v1"),
        (3, 64, "deterministic-hash-v1"),
        (3, 64, "deterministic-hash-v1"),
    ]
    assert chunks[2].metadata["chunk_count"] == 2
    assert len(store.chunks_page("s", chunks[-1].rowid, 100)) == 4
    with pytest.raises(NotFoundError):
        store.events_page("nope")


def test_backup_includes_uncheckpointed_wal(store, tmp_path):
    store.store("s", 1, user("kept in the backup"))
    target = store.backup_to(tmp_path / "backups" / "copy.db")
    copy = apsw.Connection(str(target))
    assert copy.execute("SELECT chunk_text FROM chunks").fetchall() == [("kept in the backup",)]
    copy.close()


def test_note_users_and_tags(store):
    store.save_note("alice", "one", ["travel", "food"])
    store.save_note("alice", "two", ["travel"])
    store.save_note("bob", "three", [])
    store.store("memoryless", 1, user("x"))
    assert store.note_users() == ["alice", "bob"]
    assert store.note_tags("alice") == [("travel", 2), ("food", 1)]


def test_bulk_tags_and_bulk_delete(store):
    a = store.save_note("u", "alpha", ["keep", "old"])
    b = store.save_note("u", "beta", ["old"])
    c = store.save_note("u", "gamma", ["x"])
    changed = store.set_note_tags("u", [a.note_id, b.note_id], add=["New"], remove=["OLD"])
    assert [n.tags for n in changed] == [["keep", "new"], ["new"]]
    assert changed[0].updated_at > a.updated_at and changed[0].created_at == a.created_at
    assert store.sql("SELECT count(*) FROM chunks_vec") == [(3,)]
    with pytest.raises(NotFoundError):
        store.delete_notes("u", [a.note_id, "note-missing"])
    assert len(store.list_notes("u")) == 3
    assert store.delete_notes("u", [a.note_id, b.note_id]) == 2
    assert [n.note_id for n in store.list_notes("u")] == [c.note_id]


def test_restore_notes_undoes_an_edit_and_a_delete(store):
    original = store.save_note("u", "first version", ["a"])
    store.update_note("u", original.note_id, "second version", ["b"])
    (restored,) = store.restore_notes([original])
    (now,) = store.list_notes("u")
    assert (now.note_id, now.content, now.tags, now.created_at, now.updated_at) == (
        original.note_id,
        "first version",
        ["a"],
        original.created_at,
        original.updated_at,
    )
    store.delete_note("u", original.note_id)
    store.restore_notes(
        [Note(original.note_id, "u", "first version", ["a"], original.created_at, original.updated_at, 0)]
    )
    assert [n.content for n in store.list_notes("u")] == ["first version"]
    assert restored.sequence > original.sequence


def test_cancelled_import_writes_nothing(store):
    stop = threading.Event()
    seen = []

    def progress(stage, done, total):
        seen.append(stage)
        if stage == "storing" and done >= 500:
            stop.set()

    with pytest.raises(OperationCancelled, match="cancelled; nothing was written"):
        store.store_many([("s", i, user(f"m{i}")) for i in range(1, 2001)], progress, stop)
    assert store.sql("SELECT count(*) FROM conversation_events") == [(0,)]
    assert "embedding" in seen and "storing" in seen


def test_note_files_round_trip_and_errors():
    from oxmem_gui.core import InvalidInputError
    from oxmem_gui.core.store.note_files import notes_json, notes_markdown, parse_notes_json

    note = Note(
        "note-1", "u", "First line\nsecond", ["A", "b"], "2026-01-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00", 3
    )
    (back,) = parse_notes_json(notes_json([note]))
    assert (back.note_id, back.user, back.content, back.tags, back.created_at, back.updated_at) == (
        "note-1",
        "u",
        "First line\nsecond",
        ["a", "b"],
        "2026-01-01T00:00:00+00:00",
        "2026-02-01T00:00:00+00:00",
    )
    assert notes_markdown("u", [note]).splitlines()[:4] == ["# Notes of u", "", "## First line", ""]
    for text, message in [
        ("{", "the file is not JSON"),
        ("{}", "a JSON list of notes"),
        ("[1]", "note 1 is not an object"),
        ('[{"note_id": "n", "user": "u"}]', "note 1 has no content"),
        ('[{"note_id": "n", "user": "u", "content": "c", "tags": "x"}]', "tags must be a list"),
    ]:
        with pytest.raises(InvalidInputError, match=message):
            parse_notes_json(text)
