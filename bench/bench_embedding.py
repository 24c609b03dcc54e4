"""Indexing throughput with the semantic model against raw fastembed on the same texts, and peak memory.

Each side runs in its own process (so peak RSS is its own): raw fastembed embedding N texts in batches of 32,
and the store indexing the same N texts as N events with ``store_many`` (extract, chunk, hash, embed in batches
of 32, write in one transaction).

    python bench/bench_embedding.py [--texts 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import table

SUBJECTS = ["the invoice", "my flight", "the garden", "our weekly report", "the hotel", "this test", "the kitten"]
VERBS = ["needs", "should get", "was moved to", "depends on", "reminds me of", "is blocked by", "went well with"]
OBJECTS = [
    "a quiet room",
    "banker's rounding",
    "the Monday meeting",
    "copper fungicide",
    "an aisle seat",
    "the warehouse table",
    "a dark theme",
    "Lisbon in March",
    "the failing assertion",
    "the churn numbers",
]


def texts(n: int) -> list[str]:
    rng = random.Random(3)
    return [
        " ".join(f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}." for _ in range(rng.randint(1, 4)))
        for _ in range(n)
    ]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_raw(n: int) -> dict:
    from fastembed import TextEmbedding

    from oxmem_gui.core.embeddings.model_files import MODEL_NAME, locate_model

    model = TextEmbedding(model_name=MODEL_NAME, specific_model_path=str(locate_model().path))
    data = texts(n)
    list(model.embed(data[:32], batch_size=32))  # load and warm up
    t = time.perf_counter()
    list(model.embed(data, batch_size=32))
    return {"per_s": n / (time.perf_counter() - t), "rss_mb": peak_rss_mb()}


def run_store(n: int) -> dict:
    from oxmem_gui.core import MemoryStore

    data = texts(n)

    async def go() -> float:
        with tempfile.TemporaryDirectory() as tmp:
            async with await MemoryStore.open(Path(tmp) / "m.db", embedding="semantic") as store:
                await store.store_many(
                    [("warm", i + 1, {"role": "user", "content": x}) for i, x in enumerate(data[:32])]
                )
                records = [("bench", i + 1, {"role": "user", "content": x}) for i, x in enumerate(data)]
                t = time.perf_counter()
                await store.store_many(records)
                return time.perf_counter() - t

    return {"per_s": n / asyncio.run(go()), "rss_mb": peak_rss_mb()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--side", choices=("raw", "store"))
    args = parser.parse_args()
    if args.side:
        print(json.dumps((run_raw if args.side == "raw" else run_store)(args.texts)))
        return
    results = {}
    for side in ("raw", "store"):
        out = subprocess.run(
            [sys.executable, __file__, "--side", side, "--texts", str(args.texts)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        results[side] = json.loads(out.strip().splitlines()[-1])
    raw, store = results["raw"], results["store"]
    rows = [
        ("raw fastembed (batch 32)", f"{raw['per_s']:.0f} texts/s", f"{raw['rss_mb']:.0f} MB", "1.00 (baseline)"),
        (
            "store_many, semantic",
            f"{store['per_s']:.0f} events/s",
            f"{store['rss_mb']:.0f} MB",
            f"{store['per_s'] / raw['per_s']:.2f}",
        ),
    ]
    headers = ("measure", "throughput", "peak RSS", "ratio")
    print(f"{args.texts} texts")
    print(table(headers, rows))


if __name__ == "__main__":
    main()
