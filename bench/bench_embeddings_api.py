"""A query embedded through an OpenAI-compatible endpoint against the same query from oxmem's cache on disk, and
against the deterministic model in process (the baseline), all in one run. The endpoint is a loopback stub that
answers each request after ``--latency`` milliseconds (a real API adds its own network time: 100–400 ms to
OpenAI is common) with a 1536-value vector.

    python bench/bench_embeddings_api.py [--runs 20] [--latency 0]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from report import table  # noqa: E402

from oxmem_gui.core.embeddings import endpoint  # noqa: E402
from oxmem_gui.core.embeddings.backends import DeterministicEmbedding  # noqa: E402
from tests.remote_server import StubServer, reply  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.0, help="milliseconds the stub waits before answering")
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    def answer(handler, body: bytes) -> None:
        time.sleep(args.latency / 1000)
        texts = json.loads(body)["input"]
        data = [{"index": i, "embedding": rng.standard_normal(1536).tolist()} for i in range(len(texts))]
        reply(handler, 200, json.dumps({"data": data}).encode(), "application/json")

    stub = StubServer(answer)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = tmp
        chosen = endpoint.endpoint_from(f"{stub.url}/v1", "sk-bench")
        cache = endpoint.QueryCache(Path(tmp) / "embeddings.db")
        remote = endpoint.ApiEmbedding(chosen, "text-embedding-3-small", cache)
        local = DeterministicEmbedding()
        queries = [f"query number {i} about the Berlin flat" for i in range(args.runs)]

        def timed(fn) -> float:
            started = time.perf_counter()
            fn()
            return time.perf_counter() - started

        baseline = [timed(lambda q=q: local.embed([q])) for q in queries]
        first = [timed(lambda q=q: remote.embed([q])) for q in queries]
        again = [timed(lambda q=q: remote.embed([q])) for q in queries]
    stub.stop()
    base = statistics.median(baseline)
    rows = [
        ("deterministic model, in process", f"{base * 1000:.3f} ms", "1.00 (baseline)"),
        (f"endpoint round trip (loopback, +{args.latency:g} ms)", f"{statistics.median(first) * 1000:.2f} ms",
         f"{statistics.median(first) / base:.0f}"),
        ("the same query again: oxmem's cache on disk", f"{statistics.median(again) * 1000:.2f} ms",
         f"{statistics.median(again) / base:.0f}"),
    ]  # fmt: skip
    print(table(("a query embedded by", f"median of {args.runs}", "ratio"), rows, rule=True))
    print(f"requests made: {remote.calls} for {2 * args.runs} embeddings")


if __name__ == "__main__":
    main()
