"""Store and query throughput of the memory core with the deterministic backend.

Stores 10,000 short events (one transaction per event, as an agent does, and in one bulk transaction) and runs
200 hybrid queries over the resulting 10,000 chunks of one session, with the in-memory vector matrix (what the
store does) and against the baseline of re-reading every vector from SQLite for each query.

    python bench/bench_core.py [--events 10000] [--queries 200]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path

from report import table

from oxmem_gui.core import MemoryStore

WORDS = (
    "invoice rounding flight hotel lisbon tomato blight copper schedule weekly metrics signup churn python test "
    "decimal banker aisle seat vegetarian breakfast castle alfama report growth warehouse query editor theme dark "
    "light garden spring rotate budget token summary session memory agent note tag search vector keyword"
).split()


def make_events(n: int, rng: random.Random) -> list[tuple[str, int, dict]]:
    roles = ("user", "assistant")
    return [
        ("bench", i, {"role": roles[i % 2], "content": f"{i} " + " ".join(rng.choices(WORDS, k=rng.randint(6, 14)))})
        for i in range(1, n + 1)
    ]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def bench(n_events: int, n_queries: int) -> list[tuple[str, str, str]]:
    rng = random.Random(7)
    events = make_events(n_events, rng)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        one = await MemoryStore.open(Path(tmp) / "per-event.db")
        t0 = time.perf_counter()
        for sid, seq, payload in events:
            await one.store(sid, seq, payload)
        per_event = n_events / (time.perf_counter() - t0)
        await one.aclose()

        bulk = await MemoryStore.open(Path(tmp) / "bulk.db")
        t0 = time.perf_counter()
        await bulk.store_many(events)
        bulk_rate = n_events / (time.perf_counter() - t0)
        rows.append(("store, one transaction per event", f"{per_event:,.0f} events/s", "1.00× (baseline)"))
        rows.append(("store_many, one transaction", f"{bulk_rate:,.0f} events/s", f"{bulk_rate / per_event:.2f}×"))

        queries = [" ".join(rng.choices(WORDS, k=rng.randint(1, 4))) for _ in range(n_queries)]

        async def timed(clear_cache: bool) -> list[float]:
            out = []
            for q in queries:
                if clear_cache:
                    bulk._caches.vectors.clear()  # the baseline: every vector re-read from SQLite for this query
                t = time.perf_counter()
                await bulk.hybrid_query("bench", q, 8)
                out.append((time.perf_counter() - t) * 1000)
            return out

        await bulk.hybrid_query("bench", "warm up", 8)
        baseline = await timed(clear_cache=True)
        cached = await timed(clear_cache=False)
        await bulk.aclose()
    b50, c50 = statistics.median(baseline), statistics.median(cached)
    rows.append(
        (
            f"hybrid query, {n_events:,} chunks, vectors re-read per query",
            f"p50 {b50:.2f} ms  p95 {pct(baseline, 0.95):.2f} ms",
            "1.00× (baseline)",
        )
    )
    rows.append(
        (
            f"hybrid query, {n_events:,} chunks, cached vector matrix",
            f"p50 {c50:.2f} ms  p95 {pct(cached, 0.95):.2f} ms",
            f"{b50 / c50:.2f}× faster",
        )
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rows = asyncio.run(bench(args.events, args.queries))
    print(table(("measure", "result", "ratio"), rows, rule=True))


if __name__ == "__main__":
    main()
