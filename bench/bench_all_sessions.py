"""A search of all sessions at once against a one-session search of the same size.

The same 100k chunks (bench_vectors' synthetic text and random 384-dimension vectors) in two files: one session
holding them all (bench_vectors' file), and 1,000 sessions of 100 chunks each (a copy, the chunks dealt out
round-robin). The same queries, with precomputed query vectors, run on each: the one session of the first file,
every session of the second (``--all``), and one session of 100 chunks of the second. Caches are built by a first
query that is not timed (its time is shown apart). Prints p50/p95 and the ratio of all-sessions to one-session.

    python bench/bench_all_sessions.py [--chunks 100000] [--sessions 1000] [--queries 100]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

import apsw
import numpy as np

from oxmem_gui.core.api import SearchOptions

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_vectors import DIMS, MODEL, OUT, SESSION, pct, store, vocabulary  # noqa: E402
from report import table  # noqa: E402

from oxmem_gui.core import MemoryStore  # noqa: E402
from oxmem_gui.core.retrieval.scope import ALL_SESSIONS  # noqa: E402


def spread(one: Path, path: Path, sessions: int) -> None:
    """A copy of ``one`` whose chunks are dealt round-robin to ``sessions`` sessions."""
    shutil.copy(one, path)
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA synchronous = OFF")
    with conn:
        conn.executemany("INSERT INTO sessions (session_id) VALUES (?)", [(f"s{i:04d}",) for i in range(sessions)])
        conn.execute("UPDATE chunks SET session_id = printf('s%04d', (rowid - 1) % ?)", (sessions,))
        conn.execute("DELETE FROM sessions WHERE session_id = ?", (SESSION,))
    conn.execute("VACUUM")
    conn.close()


async def timings(path: Path, scope, texts: list[str], qvecs: np.ndarray, ranking: str) -> tuple[float, list[float]]:
    async with await MemoryStore.open(path, read_only=True, embedding="deterministic") as store:

        async def run(i: int) -> float:
            t = time.perf_counter()
            result = await store.search(
                ranking,
                scope,
                texts[i],
                8,
                options=SearchOptions(query_embedding=qvecs[i], query_embedding_model=MODEL),
            )
            assert len(result.hits) == 8
            return (time.perf_counter() - t) * 1000

        first = await run(0)
        return first, [await run(i) for i in range(len(texts))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=1_000)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    one = store(args.chunks)
    many = OUT / f"all-sessions-{args.chunks}-{args.sessions}.db"
    if not many.exists():
        print(f"building {many.name} …", file=sys.stderr)
        spread(one, many, args.sessions)
    rng = random.Random(1)
    words = vocabulary(random.Random(args.chunks))
    weights = [1 / (i + 1) for i in range(len(words))]
    texts = [" ".join(rng.choices(words, weights, k=rng.randint(2, 4))) for _ in range(args.queries)]
    qvecs = np.random.default_rng(7).standard_normal((args.queries, DIMS)).astype(np.float32)
    rows = []
    for ranking in ("oxmem", "tuned"):
        first_one, one_ms = asyncio.run(timings(one, SESSION, texts, qvecs, ranking))
        first_all, all_ms = asyncio.run(timings(many, ALL_SESSIONS, texts, qvecs, ranking))
        _, small_ms = asyncio.run(timings(many, "s0001", texts, qvecs, ranking))
        ratio = statistics.median(all_ms) / statistics.median(one_ms)
        for what, first, ms in (
            (f"one session of {args.chunks:,} chunks", first_one, one_ms),
            (f"all {args.sessions:,} sessions ({args.chunks:,} chunks)", first_all, all_ms),
            (f"one session of {args.chunks // args.sessions:,} chunks", None, small_ms),
        ):
            rows.append(
                (
                    ranking,
                    what,
                    f"{statistics.median(ms):.1f}",
                    f"{pct(ms, 0.95):.1f}",
                    "" if first is None else f"{first / 1000:.2f} s",
                    f"{ratio:.2f}×" if what.startswith("all") else "",
                )
            )
    headers = ("ranking", "scope", "p50 ms", "p95 ms", "first query (builds caches)", "all / one p50")
    print(table(headers, rows))


if __name__ == "__main__":
    main()
