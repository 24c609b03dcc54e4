"""Reading beside a live agent: another *process* commits while oxmem reads, and every read still succeeds."""

from __future__ import annotations

import pytest

from oxmem_gui.core.retrieval.bm25 import MIN_ROWS
from tests.conftest import open_sync, user
from tests.processes import agent_report, start_agent

WORDS = "hotel booking alfama quiet flight seat aisle window tomato garden invoice rounding metrics weekly".split()


@pytest.fixture(scope="module")
def big_store(tmp_path_factory):
    """A WAL store with more FTS rows than the BM25 cache's threshold, so terms searches take the numpy path."""
    import asyncio

    path = tmp_path_factory.mktemp("live") / "memory.db"
    loop = asyncio.new_event_loop()
    s = open_sync(loop, path)
    n = MIN_ROWS + 500
    s.store_many(
        [
            ("big", i, user(" ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 8)) + f" n{i}"))
            for i in range(1, n + 1)
        ]
    )
    s.aclose()
    loop.close()
    return path


def test_search_never_fails_while_another_process_commits(big_store, tmp_path, loop):
    reader = open_sync(loop, big_store, read_only=True)
    assert reader.sql("SELECT count(*) FROM chunks_fts") == [(MIN_ROWS + 500,)]
    stop = tmp_path / "stop"
    agent = start_agent(big_store, "events", "--seconds", "300", "--stop", str(stop), ready=tmp_path / "ready")
    queries, errors, bm25_used = 0, [], 0
    while queries + len(errors) < 12 and agent.poll() is None:  # a fixed amount of work, however slow the machine
        try:
            if queries % 2:  # the tuned profile: prefix terms, from the same BM25 postings
                result = reader.search("tuned", "big", "quiet hotel in alfama", 8)
                assert result.fts_expression == '"quie"* OR "hote"* OR "alfa"*'
            else:
                result = reader.hybrid_query("big", "quiet hotel in alfama", 8, fts_mode="terms")
            assert len(result.hits) == 8 and result.legs["fts"].candidates == 32
            queries += 1
            bm25_used += reader.inner._caches.bm25._usable is True
        except Exception as exc:  # noqa: BLE001 - every failure is counted and shown
            errors.append(f"{type(exc).__name__}: {exc}")
    stop.touch()
    report = agent_report(agent)
    assert errors == []
    assert queries == 12 and bm25_used == queries  # the numpy BM25 path, not FTS5's fallback
    assert report["errors"] == [] and report["written"] > 50
    # events written = events found, read through the same read-only connection
    found = reader.recall("agent:live")
    assert [e.sequence for e in found] == list(range(1, report["written"] + 1))
    reader.aclose()


def test_a_long_import_lets_the_agent_write_between_batches(tmp_path, loop):
    import json

    db = tmp_path / "memory.db"
    open_sync(loop, db).aclose()
    lines = [
        json.dumps({"session_id": f"import:{i % 7}", "sequence": i // 7 + 1, "payload": user(f"imported {i}")})
        for i in range(6000)
    ]
    (tmp_path / "big.jsonl").write_text("\n".join(lines))
    importer = start_agent(db, "import", str(tmp_path / "big.jsonl"), "100", ready=tmp_path / "ready")
    writer = open_sync(loop, db, busy_timeout_ms=2000)  # the agent: it gives up on a lock held for 2 s
    saved, errors = 0, []
    while importer.poll() is None:
        try:
            writer.save_note("agent", f"written during the import {saved}")
            saved += 1
        except Exception as exc:  # noqa: BLE001 - every failure is counted and shown
            errors.append(f"{type(exc).__name__}: {exc}")
    assert agent_report(importer) == {"stored": 6000, "skipped": 0}
    assert errors == [] and saved > 0
    assert writer.sql("SELECT count(*) FROM conversation_events WHERE session_id LIKE 'import:%'") == [(6000,)]
    assert len(writer.list_notes("agent")) == saved
    writer.aclose()


def test_a_lock_held_too_long_is_one_line_and_nothing_written(tmp_path, loop):
    from tests.processes import oxmem

    db = tmp_path / "memory.db"
    open_sync(loop, db).aclose()
    holder = start_agent(db, "hold", "5", ready=tmp_path / "ready")
    done = oxmem("--db", str(db), "--wait", "0.2", "notes", "add", "u", "hello")
    agent_report(holder)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"oxmem: error: {db} is busy: another program held its lock for more than 0.2 s; nothing was changed — "
        "try again (or wait longer with --wait SECONDS)\n"
    )
    reader = open_sync(loop, db, read_only=True)
    assert reader.list_sessions() == []
    reader.aclose()
