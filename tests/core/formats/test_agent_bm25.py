"""Omega's recall and ZEKE's keyword leg from cached postings (``TableBm25``): the very rows, bm25 values and
order — ties included — that the agents' own SQL gives, on files large enough to use the cache (≥ 20,000 FTS
rows) and full of exact ties (a few words, so many rows have the same length and counts). The SQL is run on a
second connection, once with SQLite's sorter kept in memory and once made to spill to disk (a tiny cache), so
the tie order is checked against both of the sorter's ways of merging."""

from __future__ import annotations

import asyncio
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from oxmem_gui.core.formats.omega import _RECALL_SQL, phrase
from oxmem_gui.core.formats.zeke import _KEYWORD_SQL, fts_query, like_prefix
from oxmem_gui.core.memory import open_memory

from .fixtures import make_omega, make_zeke

WORDS = ["hotel", "lisbon", "invoice", "tomato", "seat", "quiet"]
SENDERS = ["s-a", "s-b", "s-c"]


def run(coro):
    return asyncio.run(coro)


def agent_sql(path: Path, sql: str, args: tuple, cache_pages: int) -> list[tuple]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        conn.execute(f"PRAGMA cache_size = {cache_pages}")
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def omega(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = make_omega(tmp_path_factory.mktemp("omega") / "memory.db")
    rng = random.Random(22)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO conversations (id, channel, sender_id, started_at, updated_at, last_activity, status) "
        "VALUES (?, 'telegram', ?, '2026-01-01 00:00:00', '2026-01-02 00:00:00', '2026-01-02 00:00:00', 'closed')",
        [(f"conv-{c:02d}", SENDERS[c % 3]) for c in range(12)],
    )
    conn.executemany(
        "INSERT INTO messages (id, conversation_id, role, content, timestamp) VALUES (?, ?, ?, ?, '2026-01-01')",
        [
            (f"m-{i:06d}", f"conv-{rng.randrange(12):02d}", "user" if i % 4 else "assistant",
             " ".join(rng.choices(WORDS, k=rng.randint(1, 3))))
            for i in range(28_000)
        ],
    )  # fmt: skip
    conn.execute("COMMIT")
    conn.close()
    return path


def omega_hits(store, scope: str, query: str) -> list[tuple]:
    found = run(store.search("omega-recall", scope, query, top_k=5))
    return [(h.sequence_start, h.chunk_id, h.fts_raw) for h in found.hits]


def omega_expected(path: Path, scope: str, query: str, cache_pages: int) -> list[tuple]:
    sender = agent_sql(path, "SELECT sender_id FROM conversations WHERE id = ?", (scope,), 2000)[0][0]
    rows = agent_sql(path, _RECALL_SQL, (phrase(query), scope, sender, 5), cache_pages)
    return [(r[0], r[1], r[-1]) for r in rows]


def test_omega_recall_from_postings_is_omegas_sql_ties_included(omega: Path) -> None:
    store = run(open_memory(omega, read_only=True))
    try:
        queries = [*WORDS, "Hotel", "seat*", "hotel lisbon", "nothing", "quiet seat"]
        scopes = ["conv-00", "conv-01", "conv-05", "conv-10"]
        tied = 0
        for query in queries:
            for scope in scopes:
                omega_hits(store, scope, query)  # the first query at a state of the file is Omega's SQL
                got = omega_hits(store, scope, query)
                for pages in (2000, 2):
                    assert got == omega_expected(omega, scope, query, pages), (query, scope, pages)
                ranks = [raw for _, _, raw in got]
                tied += len(ranks) - len(set(ranks))
        index = store._bm25["messages_fts"]
        assert index._usable is True and set(WORDS) | {"nothing"} == set(index._postings)
        assert tied > 20  # the comparison is about ties: many hits share their rank
    finally:
        run(store.aclose())


def test_omega_after_the_agent_commits_the_new_message_is_found(omega: Path, tmp_path: Path) -> None:
    path = tmp_path / "copy.db"
    src, dst = sqlite3.connect(omega), sqlite3.connect(path)
    src.backup(dst)
    src.close(), dst.close()
    store = run(open_memory(path, read_only=True))
    try:
        omega_hits(store, "conv-00", "hotel")
        before = omega_hits(store, "conv-00", "hotel")
        assert store._bm25["messages_fts"]._usable is True
        # the agent, a second process, stores the best match: 4 × hotel (the file's messages have 3 words at most)
        subprocess.run(
            [sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(\"INSERT INTO "
             "messages (id, conversation_id, role, content, timestamp) VALUES ('m-new', 'conv-03', 'user', "
             "'hotel hotel hotel hotel', '2026-01-03')\"); c.commit()", str(path)],
            check=True,
        )  # fmt: skip
        after = omega_hits(store, "conv-00", "hotel")  # answered by Omega's SQL: the file just changed
        assert after[0][1] == "m-new" and [h[1] for h in after[1:]] == [h[1] for h in before[:4]]
        assert omega_hits(store, "conv-00", "hotel") == after == omega_expected(path, "conv-00", "hotel", 2000)
        assert store._bm25["messages_fts"]._usable is True
    finally:
        run(store.aclose())


@pytest.fixture(scope="module")
def zeke(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_zeke(
        tmp_path_factory.mktemp("zeke") / "memory.db", extra_per_scope={"persona:zeke": 12_000, "notes": 9_000}
    )


def test_zeke_keyword_leg_from_postings_is_zekes_sql_ties_included(zeke: Path) -> None:
    store = run(open_memory(zeke, read_only=True))
    try:
        queries = ["filler", "memory for", "Dana invoice", "persona", "filler-memory", "notes deploy", "zzz", "for"]
        tied = 0
        for query in queries:
            for scope in ["persona", "notes", "", "task:"]:
                for k in (3, 40):
                    run(store.search("zeke", scope, query, top_k=k))  # the first at a state of the file: ZEKE's SQL
                    found = run(store.search("zeke", scope, query, top_k=k))
                    got = sorted((h.fts_rank, h.chunk_id, h.fts_raw) for h in found.pool if h.fts_rank is not None)
                    for pages in (2000, 2):
                        rows = agent_sql(zeke, _KEYWORD_SQL, (fts_query(query), like_prefix(scope), 2 * k), pages)
                        assert got == [(i, r[1], r[-1]) for i, r in enumerate(rows, 1)], (query, scope, k, pages)
                    tied += len(got) - len({raw for *_, raw in got})
        index = store._bm25["memories_fts"]
        assert index._usable is True and {"filler", "memory", "for", "dana"} <= set(index._postings)
        assert tied > 100
    finally:
        run(store.aclose())
