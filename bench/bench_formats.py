"""Other agents' files at scale: the first and next page of sessions and of a large session's events, and the agent's
own search, through the reader oxmem opens each format with.

Each file starts as the tests' fixture (the agent's own schema, from its migrations copied verbatim) and is then
filled with synthetic rows the way the agent writes them: an Omega file with ``--omega`` messages in
``--conversations`` conversations (its triggers index the user messages), a ZEKE file with ``--zeke`` memories
(with 1536-value embeddings), an aidaemon file with ``--aidaemon`` events in 500 sessions and an episode (with its
embedding) for every 50 events, which aidaemon's recall searches. Files are kept in
bench/out/ between runs. Goals (issue "search beside a live agent at quiet speed"): first page ≤ 200 ms, next page
≤ 50 ms, search p50 ≤ 100 ms. The search's baseline is the agent's own SQL run for every query; oxmem's answers
from cached postings where it can (``TableBm25``) and must find the very same hits.

    python bench/bench_formats.py [--omega 1000000] [--conversations 2000] [--zeke 200000] [--aidaemon 500000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the fixtures of tests/core/formats

from report import table  # noqa: E402

from oxmem_gui.core.api import SearchOptions  # noqa: E402
from oxmem_gui.core.memory import open_memory  # noqa: E402
from oxmem_gui.core.store.notes import note_cursor  # noqa: E402
from tests.core.formats import fixtures as fx  # noqa: E402

OUT = ROOT / "bench" / "out"
WORDS = (
    "invoice rounding flight hotel lisbon tomato blight copper schedule weekly metrics signup churn python test "
    "decimal banker aisle seat vegetarian breakfast castle alfama report growth warehouse query editor theme dark"
).split()
# one word each: Omega searches the whole query as one phrase
QUERIES = ["hotel", "invoice", "tomato", "weekly", "python", "seat"]


def text(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(5, 20)))


def build_omega(path: Path, messages: int, conversations: int) -> None:
    fx.make_omega(path)
    rng = random.Random(1)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO conversations (id, channel, sender_id, started_at, updated_at, last_activity, status) "
        "VALUES (?, 'telegram', ?, '2026-01-01 00:00:00', ?, ?, 'closed')",
        [(f"conv-{c:05d}", f"user-{c % 50}", f"2026-02-{1 + c % 28:02d} 10:00:00", "2026-03-01 00:00:00")
         for c in range(conversations)],
    )  # fmt: skip
    batch = []
    for i in range(messages):
        c = i % conversations if i >= messages // 4 else 0  # a quarter of the file in one long conversation
        role = "user" if i % 2 == 0 else "assistant"
        batch.append((f"msg-{i:08d}", f"conv-{c:05d}", role, text(rng), f"2026-02-01 {i // 3600 % 24:02d}:00:00"))
        if len(batch) == 50_000:
            conn.executemany("INSERT INTO messages (id, conversation_id, role, content, timestamp) VALUES "
                             "(?, ?, ?, ?, ?)", batch)  # fmt: skip
            batch.clear()
    conn.executemany("INSERT INTO messages (id, conversation_id, role, content, timestamp) VALUES (?, ?, ?, ?, ?)",
                     batch)  # fmt: skip
    conn.execute("COMMIT")
    conn.close()


def build_zeke(path: Path, memories: int) -> None:
    fx.make_zeke(path, extra_per_scope={"persona": memories})


def build_aidaemon(path: Path, events: int) -> None:
    fx.make_aidaemon(path)
    rng = random.Random(3)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    rows = []
    for i in range(events):
        session = "big-session" if i < events // 4 else f"session-{i % 500:03d}"
        kind = "user_message" if i % 2 == 0 else "assistant_response"
        data = json.dumps({"content": text(rng)})
        rows.append((session, kind, data, f"2026-02-{1 + i % 28:02d}T10:{i // 60 % 60:02d}:{i % 60:02d}+00:00"))
    conn.executemany("INSERT INTO events (session_id, event_type, data, created_at) VALUES (?, ?, ?, ?)", rows)
    # aidaemon consolidates a session's events into episodes (with a 384-value embedding each): here one per 50
    vectors = np.random.default_rng(3).standard_normal((events // 50, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    sessions = ["big-session"] * (events // 200)
    sessions += [f"session-{i % 500:03d}" for i in range(events // 50 - len(sessions))]
    episodes = []
    for i, sid in enumerate(sessions):
        when = f"2026-02-{1 + i % 28:02d}T11:{i // 60 % 60:02d}:{i % 60:02d}+00:00"
        episodes.append((sid, text(rng), json.dumps(rng.sample(WORDS, 2)), vectors[i].tobytes(),
                         round(rng.random(), 2), 50, when, when, when))  # fmt: skip
    conn.executemany(
        "INSERT INTO episodes (session_id, summary, topics, embedding, importance, message_count, start_time, "
        "end_time, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        episodes,
    )
    conn.execute("COMMIT")
    conn.close()


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


async def two_pages(first: Callable[[], Awaitable[list]], after: Callable[[Any], Awaitable[list]]) -> tuple:
    """Seconds to read the first page, and the page after its last row (nan when the first is empty)."""
    t = time.perf_counter()
    page = await first()
    took = time.perf_counter() - t
    if not page:
        return took, float("nan")
    t = time.perf_counter()
    await after(page[-1])
    return took, time.perf_counter() - t


async def search_p50(store: Any, retriever: str, scope: str, queries: list[str], options: dict) -> tuple:
    """The p50 of the queries' seconds, and every hit found (rank, id and score of each)."""
    times, hits = [], []
    for q in queries:
        t = time.perf_counter()
        found = await store.search(retriever, scope, q, 8, options=SearchOptions(**options))
        times.append(time.perf_counter() - t)
        hits.append([(h.rank, h.chunk_id, h.score) for h in found.hits])
    return statistics.median(times), hits


async def measure(name: str, path: Path, big_session: str | None, big_group: str | None) -> tuple:
    store = await open_memory(path, read_only=True, embedding="deterministic")
    try:
        first_sessions, next_sessions = await two_pages(
            store.sessions_page, lambda last: store.sessions_page(after=(last.updated_at, last.session_id))
        )
        first_events = next_events = first_notes = next_notes = float("nan")
        if big_session is not None:
            first_events, next_events = await two_pages(
                lambda: store.events_page(big_session), lambda last: store.events_page(big_session, last.sequence)
            )
        if big_group is not None:
            first_notes, next_notes = await two_pages(
                lambda: store.notes_page(big_group), lambda last: store.notes_page(big_group, note_cursor(last))
            )
        baseline = search = ratio = "–"
        retrievers = store.retrievers()
        if retrievers:
            r = retrievers[0]
            scope = big_session if r.scope == "session" else big_group
            options = {}
            if name in ("ZEKE", "aidaemon"):  # the query's embedding, precomputed (1536 values for ZEKE's OpenAI model)
                size = 1536 if name == "ZEKE" else 384
                options = {"query_embedding": np.random.default_rng(7).standard_normal(size).astype(np.float32)}
            queries = (["filler memory", "persona", "memory for"] if name == "ZEKE" else QUERIES) * 3
            store._bm25_best = lambda *args: None  # the baseline: the agent's own SQL for every query
            sql_p50, sql_hits = await search_p50(store, r.name, scope, queries, options)
            del store._bm25_best
            p50, hits = await search_p50(store, r.name, scope, queries, options)
            if hits != sql_hits:
                raise SystemExit(f"{name}: the cached ranking found other hits than the agent's SQL")
            baseline, search, ratio = ms(sql_p50), ms(p50), f"{sql_p50 / p50:.1f}×"
        return (
            name, ms(first_sessions), ms(next_sessions), ms(first_events), ms(next_events), ms(first_notes),
            ms(next_notes), baseline, search, ratio
        )  # fmt: skip
    finally:
        await store.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--omega", type=int, default=1_000_000, help="Omega messages")
    parser.add_argument("--conversations", type=int, default=2_000)
    parser.add_argument("--zeke", type=int, default=200_000, help="ZEKE memories")
    parser.add_argument("--aidaemon", type=int, default=500_000, help="aidaemon events")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    files = [
        ("Omega", OUT / f"omega-{args.omega}.db", lambda p: build_omega(p, args.omega, args.conversations),
         "conv-00000", None),
        ("ZEKE", OUT / f"zeke-{args.zeke}.db", lambda p: build_zeke(p, args.zeke), None, "persona"),
        ("aidaemon", OUT / f"aidaemon-{args.aidaemon}.db", lambda p: build_aidaemon(p, args.aidaemon), "big-session",
         None),
    ]  # fmt: skip
    rows = []
    for name, path, build, big, group in files:
        if not path.exists():
            print(f"building {path.name} …", flush=True)
            build(path)
        rows.append(asyncio.run(measure(name, path, big, group)))
    header = ("file", "sessions: first page", "next page", "events: first page", "next page", "memories: first page",
              "next page", "search p50: agent's SQL (baseline)", "oxmem", "speed-up")  # fmt: skip
    print(table(header, rows, right=True, rule=True))


if __name__ == "__main__":
    main()
