"""Reading beside a live agent: another *process* commits while oxmem reads, and every read still succeeds."""

from __future__ import annotations

import pytest

from oxmem_gui.core.bm25 import MIN_ROWS
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
    agent = start_agent(big_store, "events", "--seconds", "4", ready=tmp_path / "ready")
    queries, errors, bm25_used = 0, [], 0
    while agent.poll() is None:
        try:
            result = reader.hybrid_query("big", "quiet hotel in alfama", 8, fts_mode="terms")
            assert len(result.hits) == 8 and result.legs["fts"].candidates == 32
            queries += 1
            bm25_used += reader.inner._bm25._usable is True
        except Exception as exc:  # noqa: BLE001 - every failure is counted and shown
            errors.append(f"{type(exc).__name__}: {exc}")
    report = agent_report(agent)
    assert errors == []
    assert queries >= 5 and bm25_used == queries  # the numpy BM25 path, not FTS5's fallback
    assert report["errors"] == [] and report["written"] > 50
    # events written = events found, read through the same read-only connection
    found = reader.recall("agent:live")
    assert [e.sequence for e in found] == list(range(1, report["written"] + 1))
    reader.aclose()
