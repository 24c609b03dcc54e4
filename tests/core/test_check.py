"""``oxmem check``: findings on a healthy store and on each kind of damage, and it never writes."""

from __future__ import annotations

import apsw
import pytest

from oxmem_gui.core.check import check_store
from tests.conftest import open_sync, user
from tests.core.test_database import corrupt_page_of, fingerprint


@pytest.fixture
def healthy(tmp_path, loop):
    path = tmp_path / "m.db"
    s = open_sync(loop, path)
    s.store_many([("s", i, user(f"message number {i} " + "word " * (150 if i == 3 else 2))) for i in range(1, 6)])
    s.save_note("u", "remember this", ["t"])
    s.schedules.create("u", "g", {"type": "interval", "every_secs": 3600})
    s.aclose()
    return path


def findings(report):
    return {f.check: (f.level, f.detail) for f in report.findings}


def test_a_healthy_store(healthy, loop):
    before = fingerprint(healthy)
    report = loop.run_until_complete(check_store(healthy))
    assert report.ok and report.format == "oxmem store" and report.journal_mode == "wal"
    assert findings(report) == {
        "integrity": ("ok", "SQLite integrity_check: ok — tables, indexes and the FTS5 index"),
        "text": ("ok", "every text value is valid UTF-8"),
        "schema": ("ok", "every table, index and trigger of 0001_initial is there"),
        "foreign keys": ("ok", "no row points at a missing parent"),
        "unique keys": ("ok", "11 unique keys hold, each read from its table's rows"),
        "index sync": ("ok", "chunks 7 = FTS rows 7 = vectors 7"),
        "payloads": ("ok", "every event holds JSON"),
        "vectors": ("ok", "deterministic-hash-v1 × 64 dims: 7"),
        "sequences": ("ok", "every session's state agrees with its events"),
        "schedules": ("ok", "1 schedules readable"),
    }
    assert report.counts == {
        "sessions": 2, "events": 6, "chunks": 7, "fts rows": 7, "vectors": 7, "notes": 1, "schedules": 1, "runs": 0
    }  # fmt: skip
    assert fingerprint(healthy) == before
    assert sorted(p.name for p in healthy.parent.iterdir()) == ["m.db"]


def damage(path, *statements):
    conn = apsw.Connection(str(path))
    for sql in statements:
        conn.execute(sql)
    conn.close()


def test_index_out_of_sync(healthy, loop):
    damage(
        healthy,
        "DROP TRIGGER trg_chunks_fts_ad",  # a writer without the trigger: chunks deleted, FTS rows left
        "DELETE FROM chunks WHERE sequence_start = 2",
        "DELETE FROM chunks_vec WHERE chunk_id IN (SELECT chunk_id FROM chunks WHERE sequence_start = 4)",
    )
    found = findings(loop.run_until_complete(check_store(healthy)))
    assert found["schema"] == (
        "problem",
        "trigger trg_chunks_fts_ad of migration 0001_initial is missing although it is recorded",
    )
    assert found["index sync"] == (
        "problem",
        "1 FTS rows without a chunk; 1 chunks without a vector; 1 vectors without a chunk",
    )


def test_a_corrupt_page(healthy, loop):
    corrupt_page_of(healthy, "chunks")
    report = loop.run_until_complete(check_store(healthy))
    assert not report.ok
    level, detail = findings(report)["integrity"]
    assert (level, detail) == ("problem", "SQLite integrity_check could not finish: database disk image is malformed")


def test_foreign_rows_are_warnings(healthy, loop):
    damage(
        healthy,
        "INSERT INTO conversation_events (session_id, sequence, payload_json) VALUES ('s', 9, 'not json {')",
        'UPDATE schedules SET cadence_json = \'{"type":"cron","expression":"0 0 31 2 *"}\'',
    )
    report = loop.run_until_complete(check_store(healthy))
    found = findings(report)
    assert report.ok  # warnings only
    assert found["payloads"] == ("warning", "1 events hold text that is not JSON (shown flagged, not indexed)")
    assert found["sequences"][0] == "warning" and "1 sessions record a last_sequence below" in found["sequences"][1]
    assert found["schedules"][0] == "warning" and "never fires: February has no day 31" in found["schedules"][1]


def test_another_programs_file_is_checked_table_by_table(tmp_path, loop):
    path = tmp_path / "omega.db"
    damage(
        path,
        "CREATE TABLE messages (id TEXT PRIMARY KEY, role TEXT, content TEXT)",
        "CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='rowid')",
        "INSERT INTO messages VALUES ('1', 'user', 'hello')",
    )
    report = loop.run_until_complete(check_store(path))
    found = findings(report)
    assert report.format == "not a memory store" and report.ok
    assert found["integrity"] == (
        "ok",
        "SQLite integrity_check: ok — each table and its indexes (the FTS index of another program's file is not "
        "checked)",
    )
    assert found["schema"][0] == "warning"
