"""A chunk's text rewritten in place by another program — the same rowid, other words: ``UPDATE chunks SET
chunk_text = …`` (tests/core/retrieval/rewriter.py, a real process) — is seen by the BM25 cache, which proves what a
query uses against FTS5 in the query's snapshot (core/retrieval/bm25.py): the next search, in the process that has
been searching all along or in a new one restoring the cache kept on disk, answers exactly as a cold store — every
hit's every number, and each leg's candidates, minimum and maximum.

Each way of rewriting is one the cache's cheaper checks would miss: a word dropped (the row is no longer a match), a
word's count changed, a row that keeps its words made shorter or longer (its score alone changes), a word moved
from one row to another (as many rows and instances of it as before)."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

from oxmem_gui.core.retrieval import persisted
from oxmem_gui.core.retrieval.scope import ALL_SESSIONS
from tests.conftest import open_sync, user
from tests.processes import ROOT

SESSIONS = ("a", "b")
WORDS = "hotel quiet garden invoice seat window tomato flight river bridge".split()
QUERIES = ("uniqtok", "hotel", "uniqtok hotel garden", "quiet window")
RARE = "uniqtok"
#: rows each session holds (more than the restore's sample: most rows are not checked when a cache is restored)
ROWS = 300

Row = tuple[int, str, str]  # rowid, session, text


def fill(loop, path: Path) -> None:
    """Two sessions of short sentences; three rows hold the rare word."""
    rng = random.Random(3)
    records = []
    for sid in SESSIONS:
        for i in range(1, ROWS + 1):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
            if (sid, i) in (("a", 50), ("a", 150), ("b", 100)):
                text += f" {RARE}"
            records.append((sid, i, user(text)))
    store = open_sync(loop, path, keep_caches=False)
    store.store_many(records)
    store.aclose()


def rows(path: Path) -> list[Row]:
    """(Through APSW, the SQLite the stores use: another SQLite library in this process closing the file would drop
    the POSIX locks of the reader's connection — SQLite would then take it for the last one and remove the WAL.)"""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute("SELECT rowid, session_id, chunk_text FROM chunks ORDER BY rowid").fetchall()
    finally:
        conn.close()


def rewrite(path: Path, changes: list[tuple[int, str]]) -> None:
    """The rows' new texts, written by another process in one transaction."""
    args = [str(part) for change in changes for part in change]
    done = subprocess.run(
        [sys.executable, "-m", "tests.core.retrieval.rewriter", str(path), *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def unsampled(found: list[Row]) -> list[Row]:
    """The rows a restore does not check (with no random ones, :func:`persisted._sample` is the evenly spaced
    rows): a rewrite there is for the query-time proof alone to find."""
    sampled = {found[i][0] for i in persisted._sample(len(found))}
    return [r for r in found if r[0] not in sampled]


def holding(found: list[Row], word: str, count: int = 1) -> list[Row]:
    return [r for r in unsampled(found) if r[2].split().count(word) == count]


def drop(found: list[Row]) -> list[tuple[int, str]]:
    rowid, _, text = holding(found, RARE)[1]
    return [(rowid, text.replace(RARE, "othertok"))]


def count(found: list[Row]) -> list[tuple[int, str]]:
    rowid, _, text = holding(found, RARE)[1]
    return [(rowid, text.replace(RARE, f"{RARE} {RARE} {RARE}"))]


def shorten(found: list[Row]) -> list[tuple[int, str]]:
    """The longest row holding ``hotel`` once becomes the shortest: the best for ``hotel``, from far down."""
    rowid, _, _ = max(holding(found, "hotel"), key=lambda r: (len(r[2].split()), r[0]))
    return [(rowid, "hotel")]


def lengthen(found: list[Row]) -> list[tuple[int, str]]:
    """A row holding the rare word (and a few others) grows, keeping each word it held as often."""
    rowid, _, text = holding(found, RARE)[1]
    return [(rowid, f"{text} seat seat seat tomato tomato tomato bridge bridge bridge")]


def move(found: list[Row]) -> list[tuple[int, str]]:
    """The rare word leaves a row for another of the same length: as many rows and instances hold it as before."""
    rowid, _, text = holding(found, RARE)[1]
    other_id, _, other = next(r for r in holding(found, "river") if RARE not in r[2] and r[0] != rowid)
    return [(rowid, text.replace(RARE, "river")), (other_id, other.replace("river", RARE, 1))]


KINDS: dict[str, Callable[[list[Row]], list[tuple[int, str]]]] = {
    "a word dropped": drop,
    "a word's count changed": count,
    "a row shortened": shorten,
    "a row lengthened": lengthen,
    "a word moved to another row": move,
}


def numbers(result) -> tuple:
    legs = tuple(sorted((name, leg.candidates, leg.min, leg.max, leg.collapsed) for name, leg in result.legs.items()))
    hits = tuple(
        (h.rank, h.chunk_id, h.score, h.vector_score, h.fts_score, h.vector_raw, h.fts_raw, h.vector_rank, h.fts_rank,
         h.sequence_start, h.sequence_end)
        for h in result.hits
    )  # fmt: skip
    return legs, hits


def answers(store) -> list[tuple]:
    """Every query over each session and over both, in both native rankings (``tuned``: the words as prefixes)."""
    return [
        (ranking, str(scope), query, top_k, numbers(store.search(ranking, scope, query, top_k)))
        for scope in (*SESSIONS, ALL_SESSIONS)
        for ranking in ("oxmem", "tuned")
        for query in QUERIES
        for top_k in (1, 3)
    ]


def cold(loop, path: Path) -> list[tuple]:
    """What a store opened afresh answers (nothing kept; FTS5 itself scores, the table being small)."""
    store = open_sync(loop, path, read_only=True, keep_caches=False)
    try:
        return answers(store)
    finally:
        store.aclose()


@pytest.fixture(autouse=True)
def kept_in_the_tests_folder(monkeypatch, tmp_path):
    """Caches of any size kept, in the test's folder; a restore checks only its evenly spaced sample of rows."""
    monkeypatch.setattr(persisted, "MIN_ROWS", 0)
    monkeypatch.setattr(persisted, "SAMPLE_RANDOM", 0)
    monkeypatch.setenv(persisted.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(persisted.MAX_ENV, raising=False)


@pytest.mark.parametrize("kind", KINDS)
def test_a_reader_following_another_programs_commits_sees_a_row_rewritten_in_place(tmp_path, loop, kind):
    path = tmp_path / "memory.db"
    fill(loop, path)
    reader = open_sync(loop, path, read_only=True, keep_caches=False)
    bm25 = reader.inner._caches.bm25
    bm25.min_rows = 0  # the numpy BM25 from cached postings (a cold store's FTS leg is FTS5's own)
    try:
        assert answers(reader) == cold(loop, path)  # every query's postings are cached now
        rewrite(path, KINDS[kind](rows(path)))
        assert answers(reader) == cold(loop, path)
        assert bm25.follows["kept"] == 1 and bm25.proofs["differed"] == 1, (bm25.follows, bm25.proofs)
        assert answers(reader) == cold(loop, path)  # the cache built again is used, and proved no more
        assert bm25.proofs["differed"] == 1
    finally:
        reader.aclose()


def kept_answers(loop, path: Path) -> tuple[list[tuple], str, dict[str, int]]:
    """What a store restoring the cache kept on disk answers, what the restore did, and what the proofs found."""
    store = open_sync(loop, path, read_only=True)
    store.inner._caches.bm25.min_rows = 0
    try:
        return answers(store), store.inner._disk.said, dict(store.inner._caches.bm25.proofs)
    finally:
        store.aclose()


@pytest.mark.parametrize("kind", [*KINDS, "a copy with a word dropped written over it"])
def test_a_new_process_restoring_the_kept_cache_sees_a_row_rewritten_in_place(tmp_path, loop, kind):
    path = tmp_path / "memory.db"
    fill(loop, path)
    found, said, _ = kept_answers(loop, path)
    assert said.startswith("nothing restored") and found == cold(loop, path)
    if kind in KINDS:
        rewrite(path, KINDS[kind](rows(path)))
    else:  # ``cp B.db A.db``: B is A with a row edited; the same inode, the same rows, a newer change counter
        copy = tmp_path / "copy.db"
        shutil.copyfile(path, copy)
        rewrite(copy, drop(rows(copy)))
        shutil.copyfile(copy, path)
    found, said, proofs = kept_answers(loop, path)
    assert found == cold(loop, path)
    assert said == "restored" and proofs["differed"] == 1, (said, proofs)  # the kept cache, proved wrong at the query
    found, said, proofs = kept_answers(loop, path)  # the cache built again was kept in its place
    assert found == cold(loop, path)
    assert said == "restored" and proofs["differed"] == 0, (said, proofs)


def test_words_that_are_fts5_syntax_are_proved_as_words(tmp_path, loop):
    """The proof asks FTS5 for each word quoted: ``AND``, ``NEAR``, ``NOT``, ``OR`` are words there as in the query;
    a posting that is right is proved so (nothing built again), one that is not is found."""
    path = tmp_path / "memory.db"
    texts = [f"w{i} and NEAR " * (i % 3 + 1) + ("not or" if i % 2 else "plain") for i in range(1, 80)]
    store = open_sync(loop, path, keep_caches=False)
    store.store_many([("a", i, user(text)) for i, text in enumerate([*texts, "filler one", "filler two"], 1)])
    store.aclose()
    reader = open_sync(loop, path, read_only=True, keep_caches=False)
    bm25 = reader.inner._caches.bm25
    bm25.min_rows = 0
    query = "AND near NOT or* w1*"

    def same_as_cold() -> None:
        for ranking in ("oxmem", "tuned"):
            fresh = open_sync(loop, path, read_only=True, keep_caches=False)
            try:
                assert numbers(reader.search(ranking, "a", query, 3)) == numbers(fresh.search(ranking, "a", query, 3))
            finally:
                fresh.aclose()

    try:
        same_as_cold()
        rewrite(path, [(80, "other filler words")])  # none of the query's words, before or after
        same_as_cold()
        assert bm25.proofs["proved"] >= 5 and bm25.proofs["differed"] == 0, bm25.proofs
        rewrite(path, [(81, "w10 and near")])  # (was "filler two")
        same_as_cold()
        assert bm25.proofs["differed"] == 1, bm25.proofs
    finally:
        reader.aclose()
