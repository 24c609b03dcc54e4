"""The search caches follow another process's commits instead of being dropped, and every result equals a fresh
store's for the same file state (``retrieval/vectors.py`` and ``retrieval/bm25.py`` say how the change is found).

A real second process (``tests/agent.py serve``) interleaves, in a seeded random order, new turns, turns whose text
the session already holds (deduplicated: only ``sequence_end`` moves), forgets and re-imports; and a third
(``tests/core/retrieval/rewriter.py``) rewrites a chunk's text in place, under the same rowid — a word dropped,
doubled, swapped or added. After each commit the reader that has been searching all along and a store opened afresh
run the same queries, and every number of every hit — and each leg's candidate count, minimum and maximum — must be
equal, for each session and for the search over all of them."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from oxmem_gui.core.retrieval.scope import ALL_SESSIONS
from tests.conftest import open_sync, user
from tests.processes import ROOT

SESSIONS = ["alpha", "beta", "gamma"]
WORDS = "hotel booking alfama quiet flight seat aisle window tomato garden invoice rounding metrics weekly".split()
QUERIES = ["hotel seat", "quiet garden window", "invoice", "weekly metrics rounding", "flight"]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 7)))


def _numbers(result) -> tuple:
    legs = tuple(sorted((name, leg.candidates, leg.min, leg.max, leg.collapsed) for name, leg in result.legs.items()))
    hits = tuple(
        (h.rank, h.chunk_id, h.score, h.vector_raw, h.fts_raw, h.vector_rank, h.fts_rank, h.sequence_start,
         h.sequence_end)
        for h in result.hits
    )  # fmt: skip
    return legs, hits


class Writer:
    """The second process, one committed write per call."""

    def __init__(self, path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.agent", str(path), "serve"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def __call__(self, **step: object) -> None:
        self.proc.stdin.write(json.dumps(step) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        assert answer == "ok", (step, answer, self.proc.poll() is not None and self.proc.stderr.read())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def rewrite(path, seed: int) -> dict:
    """A chunk's text rewritten in place by another process (what it did, as it says)."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.core.retrieval.rewriter", str(path), "--random", str(seed)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cached_search_equals_a_fresh_store_while_another_process_writes(tmp_path, loop, seed):
    rng = random.Random(seed)
    path = tmp_path / "memory.db"
    seeded = open_sync(loop, path)
    said: dict[str, list[str]] = {}
    for sid in SESSIONS:
        said[sid] = [_sentence(rng) for _ in range(12)]
        seeded.store_many([(sid, i, user(text)) for i, text in enumerate(said[sid], 1)])
    seeded.aclose()
    reader = open_sync(loop, path, read_only=True)
    reader.inner._caches.bm25.min_rows = 0  # the reader's FTS leg takes the numpy BM25 path; a fresh store's, FTS5
    writer = Writer(path)
    follows = reader.inner._caches.vectors.follows
    bm25_follows = reader.inner._caches.bm25.follows
    kinds: dict[str, int] = {}
    try:
        for _ in range(45):
            sid = rng.choice(SESSIONS)
            kind = rng.choices(["new", "repeat", "forget", "reimport", "rewrite"], weights=[6, 3, 1, 1, 3])[0]
            kinds[kind] = kinds.get(kind, 0) + 1
            if kind == "rewrite":  # any session's chunk; ``said`` keeps the text stored (a repeat of it: deduplicated)
                rewrite(path, rng.randrange(1 << 30))
            elif kind == "forget" and said[sid]:
                writer(op="forget", session=sid)
                said[sid] = []
            elif kind == "reimport" and said[sid]:  # forgotten, then its turns stored again, one changed
                writer(op="forget", session=sid)
                again = [*said[sid][:-1], _sentence(rng)]
                for i, text in enumerate(again, 1):
                    writer(op="store", session=sid, sequence=i, text=text)
                said[sid] = again
            else:
                text = rng.choice(said[sid]) if kind == "repeat" and said[sid] else _sentence(rng)
                said[sid].append(text)
                writer(op="store", session=sid, sequence=len(said[sid]), text=text)
            fresh = open_sync(loop, path, read_only=True)
            try:
                for query_sid in [s for s in SESSIONS if said[s]] + [ALL_SESSIONS]:
                    for query in rng.sample(QUERIES, 2):
                        top_k = rng.choice([1, 3, 8])
                        got = reader.hybrid_query(query_sid, query, top_k=top_k)
                        want = fresh.hybrid_query(query_sid, query, top_k=top_k)
                        assert _numbers(got) == _numbers(want), (kind, query_sid, query)
            finally:
                fresh.aclose()
    finally:
        writer.close()
        reader.aclose()
    # the caches were followed, not thrown away; a forget or re-import dropped its session (or, when it held the
    # newest rows, whose rowids SQLite may give again, everything)
    assert follows["kept"] > 30 and follows["dropped"] + follows["cleared"] >= 1, (follows, kinds)
    assert bm25_follows["kept"] > 20, bm25_follows
    # a rewritten row was among what a query used: the postings were found not to be the file's, and built again
    assert kinds["rewrite"] >= 5 and reader.inner._caches.bm25.proofs["differed"] >= 1, kinds
