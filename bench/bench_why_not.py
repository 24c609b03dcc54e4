"""Why not this one? at 100k chunks: the story of a memory against one search of the same query.

bench_vectors' store of one session of 100k chunks (synthetic text, random 384-dimension vectors). For each of
the queries (precomputed query vectors), a search with the tuned ranking, then the story of a random chunk of the
session that it did not recall: without the suggestions (where it ranked and what cut it) and with them (each
suggestion checked by running the ranking with it). Caches are built by a first query that is not timed. Prints
p50/p95 and the ratios to the search's p50, measured in the same run.

    python bench/bench_why_not.py [--chunks 100000] [--queries 50]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from oxmem_gui.core.api import SearchOptions

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_vectors import DIMS, MODEL, SESSION, pct, store, vocabulary  # noqa: E402
from report import table  # noqa: E402

from oxmem_gui.core import MemoryStore  # noqa: E402


async def measure(path: Path, queries: int) -> dict[str, list[float]]:
    rng = random.Random(3)
    words = vocabulary(random.Random(7))
    weights = [1 / (i + 1) for i in range(len(words))]
    texts = [" ".join(rng.choices(words, weights, k=rng.randint(2, 4))) for _ in range(queries)]
    qvecs = np.random.default_rng(11).standard_normal((queries, DIMS)).astype(np.float32)
    times: dict[str, list[float]] = {"search": [], "story": [], "story and suggestions": []}
    async with await MemoryStore.open(path, read_only=True, embedding="deterministic") as store:
        ids = [r[0] for r in (await store.sql("SELECT chunk_id FROM chunks LIMIT 100000", 100_000)).rows]
        options = {"query_embedding_model": MODEL}
        await store.search(
            "tuned", SESSION, texts[0], 8, options=SearchOptions(query_embedding=qvecs[0], **options)
        )  # builds the caches
        for i in range(queries):
            t = time.perf_counter()
            await store.search(
                "tuned", SESSION, texts[i], 8, options=SearchOptions(query_embedding=qvecs[i], **options)
            )
            times["search"].append((time.perf_counter() - t) * 1000)
            target = rng.choice(ids)
            for name, suggest in (("story", False), ("story and suggestions", True)):
                t = time.perf_counter()
                asked = SearchOptions(query_embedding=qvecs[i], **options)
                await store.why_not("tuned", SESSION, texts[i], target, 8, asked, suggest=suggest)
                times[name].append((time.perf_counter() - t) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    times = asyncio.run(measure(store(args.chunks), args.queries))
    base = statistics.median(times["search"])
    rows = [(name, f"{statistics.median(t):.1f}", f"{pct(t, 0.95):.1f}", f"{statistics.median(t) / base:.2f}×")
            for name, t in times.items()]  # fmt: skip
    headers = ("what", "p50 ms", "p95 ms", "p50 / search p50")
    print(f"{args.chunks:,} chunks, {args.queries} queries, tuned ranking, top 8")
    print(table(headers, rows))


if __name__ == "__main__":
    main()
