"""Hybrid query latency at 10k, 100k and 1M chunks (384 dimensions), against the seed design's way.

Builds one session of N chunks with synthetic text (a Zipf-distributed vocabulary of 20,000 words) and random
unit vectors, then runs hybrid queries with a precomputed query vector (the time excludes embedding the query):
first the baseline of the seed design — every vector of the session fetched from SQLite and scored in memory for
each query, FTS5 scoring every matching row — then the store's way: the cached matrix and cached BM25 postings;
then the same queries through the tuned ranking profile (prefix terms, neighbour and update steps), and through
the tuned profile as it was before the update step (0.4/0.6, no update step), in the same run.
Stores are kept in bench/out/ between runs.

    python bench/bench_vectors.py [--sizes 10000,100000,1000000] [--queries 100]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import apsw
import numpy as np
from report import table

from oxmem_gui.core import MemoryStore
from oxmem_gui.core.api import SearchOptions
from oxmem_gui.core.retrieval import hybrid as retrieval
from oxmem_gui.core.retrieval.bm25 import MIN_ROWS
from oxmem_gui.core.retrieval.ranking import TUNED, RankingProfile

#: the tuned profile before the update step, for the latency ratio
PREVIOUS: RankingProfile = replace(TUNED, vector_weight=0.4, fts_weight=0.6, update_overlap=0.0)

DIMS = 384
MODEL = "bench-synthetic-384"
OUT = Path(__file__).resolve().parent / "out"
SESSION = "bench"


def vocabulary(rng: random.Random, n: int = 20_000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = set()
    while len(words) < n:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 9))))
    return sorted(words)


def store(n: int) -> Path:
    """The store of ``n`` chunks in ``bench/out``, built by :func:`build` the first time it is asked for."""
    OUT.mkdir(exist_ok=True)
    path = OUT / f"vectors-{n}.db"
    if not path.exists():
        print(f"building {path.name} …", file=sys.stderr)
        build(path, n)
    return path


def build(path: Path, n: int) -> None:
    """Write N chunks with vectors straight into a fresh store (FTS rows come from the schema's triggers)."""
    rng = random.Random(n)
    words = vocabulary(rng)
    weights = [1 / (i + 1) for i in range(len(words))]
    nprng = np.random.default_rng(n)
    asyncio.run(_init(path))
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("INSERT INTO sessions (session_id) VALUES (?)", (SESSION,))
    step = 20_000
    for start in range(0, n, step):
        count = min(step, n - start)
        vecs = nprng.standard_normal((count, DIMS)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        texts = [" ".join(rng.choices(words, weights, k=rng.randint(8, 30))) for _ in range(count)]
        conn.execute("BEGIN")
        for i in range(count):
            seq = start + i + 1
            cid = f"chunk:{SESSION}:{seq}:0:{seq:016x}"
            conn.execute(
                "INSERT INTO chunks (chunk_id, session_id, sequence_start, sequence_end, chunk_text, content_hash) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (cid, SESSION, seq, seq, texts[i], f"{seq:064x}"),
            )
            conn.execute(
                "INSERT INTO chunks_vec (chunk_id, embedding_blob, embedding_model) VALUES (?, ?, ?)",
                (cid, vecs[i].tobytes(), MODEL),
            )
        conn.execute("COMMIT")
        print(f"  built {start + count:,}/{n:,}", file=sys.stderr, end="\r")
    conn.close()
    print(file=sys.stderr)


async def _init(path: Path) -> None:
    async with await MemoryStore.open(path, embedding="deterministic"):
        pass


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(path: Path, n: int, queries: int, baseline_queries: int) -> tuple:
    rng = random.Random(1)
    words = vocabulary(random.Random(n))
    weights = [1 / (i + 1) for i in range(len(words))]
    qvecs = np.random.default_rng(7).standard_normal((queries, DIMS)).astype(np.float32)
    texts = [" ".join(rng.choices(words, weights, k=rng.randint(2, 4))) for _ in range(queries)]
    async with await MemoryStore.open(path, read_only=True, embedding="deterministic") as store:

        async def run(i: int) -> float:
            t = time.perf_counter()
            await store.hybrid_query(SESSION, texts[i], 8, query_embedding=qvecs[i], query_embedding_model=MODEL)
            return (time.perf_counter() - t) * 1000

        baseline = []
        store._caches.bm25.min_rows = 2**62  # the seed design: FTS5 scores every matching row…
        for i in range(baseline_queries):
            store._caches.vectors.clear()  # …and every vector is re-read from SQLite for each query
            baseline.append(await run(i))
        store._caches.bm25.min_rows = MIN_ROWS
        store._caches.vectors.clear()
        store._caches.bm25.clear()
        t = time.perf_counter()
        await run(0)  # builds the cached matrix, row lengths and postings
        build_s = time.perf_counter() - t
        cached = [await run(i) for i in range(queries)]

        async def timed(profile: RankingProfile | None, i: int) -> float:
            t = time.perf_counter()
            if profile is None:
                await store.search(
                    "tuned",
                    SESSION,
                    texts[i],
                    8,
                    options=SearchOptions(query_embedding=qvecs[i], query_embedding_model=MODEL),
                )
            else:
                await store.profile_query(
                    profile, SESSION, texts[i], 8, query_embedding=qvecs[i], query_embedding_model=MODEL
                )
            return (time.perf_counter() - t) * 1000

        # the tuned profile and the one before the update step, query by query, taking turns at going first (the
        # first to use a prefix reads its postings)
        profile, before = [], []
        for i in range(queries):
            pair = [(profile, None), (before, PREVIOUS)]
            for times, chosen in pair if i % 2 else pair[::-1]:
                times.append(await timed(chosen, i))
        legs = await store._db.run(_time_legs, store._caches.vectors, store._caches.bm25, texts, qvecs)
    return baseline, cached, profile, before, build_s, legs


def _time_legs(conn: apsw.Connection, index, bm25, texts: list[str], qvecs: np.ndarray) -> tuple[float, float, float]:
    """Median milliseconds of each leg alone (top 32 candidates, as for top_k 8): the vector leg, the FTS leg
    as the store runs it (cached postings), and the FTS leg with FTS5 scoring every matching row."""
    matrix = index.get(conn, SESSION, MODEL, DIMS)
    vec, fts, fts5 = [], [], []
    for text, q in zip(texts, qvecs, strict=True):
        t = time.perf_counter()
        matrix.top(q, 32)
        vec.append((time.perf_counter() - t) * 1000)
        expression, terms = retrieval.fts_expression(text, "terms"), retrieval.fts_terms(text)
        t = time.perf_counter()
        retrieval._fts_leg(conn, SESSION, expression, 32, "1", [], bm25, terms)
        fts.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        retrieval._fts_leg(conn, SESSION, expression, 32, "1", [])
        fts5.append((time.perf_counter() - t) * 1000)
    return statistics.median(vec), statistics.median(fts), statistics.median(fts5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        path = store(n)
        baseline_queries = 20 if n <= 100_000 else 3
        baseline, cached, profile, before, build_s, (vec_ms, fts_ms, fts5_ms) = asyncio.run(
            measure(path, n, args.queries, baseline_queries)
        )
        b50, c50, t50 = statistics.median(baseline), statistics.median(cached), statistics.median(profile)
        rows.append(
            (
                f"{n:,}",
                f"{b50:,.1f}",
                f"{pct(baseline, 0.95):,.1f}",
                f"{c50:.1f}",
                f"{pct(cached, 0.95):.1f}",
                f"{b50 / c50:,.1f}×",
                f"{t50:.1f} / {pct(profile, 0.95):.1f}",
                f"{t50 / c50:.2f}×",
                f"{statistics.median(before):.1f}",
                f"{t50 / statistics.median(before):.2f}×",
                f"{vec_ms:.1f}",
                f"{fts_ms:.1f}",
                f"{fts5_ms:.1f}",
                f"{build_s:.2f} s",
            )
        )
    headers = (
        "chunks",
        "baseline p50 ms",
        "baseline p95 ms",
        "cached p50 ms",
        "cached p95 ms",
        "speed-up",
        "tuned profile p50 / p95 ms",
        "tuned / cached p50",
        "tuned before the update step p50 ms",
        "tuned / before p50",
        "vector leg p50 ms",
        "FTS leg p50 ms",
        "FTS5-scored leg p50 ms",
        "first query (builds caches)",
    )
    print(table(headers, rows, right=True))


if __name__ == "__main__":
    main()
