"""The search caches kept on disk between processes (core/retrieval/persisted.py): a store opened again answers
exactly as a cold one, whatever another process wrote between the opens; a damaged or foreign cache is rebuilt;
nothing is ever written beside the store file."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import shutil
from pathlib import Path

import apsw
import numpy as np
import pytest

from oxmem_gui.core import MemoryStore
from oxmem_gui.core.embeddings.backends import deterministic_vector, to_blob
from oxmem_gui.core.retrieval import persisted
from oxmem_gui.core.retrieval.scope import ALL_SESSIONS
from tests.core.retrieval import cache_reader
from tests.core.retrieval.cache_writer import WORDS, write


@pytest.fixture(autouse=True)
def small_caches_are_kept(monkeypatch, tmp_path):
    """Keep caches of any size, in the test's folder."""
    monkeypatch.setattr(persisted, "MIN_ROWS", 0)
    monkeypatch.setenv(persisted.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(persisted.MAX_ENV, raising=False)


async def answers(db: Path, keep: bool) -> tuple[list, str]:
    """Every query's hits over each session and over all of them (ids and every number), and what the restore
    did (:func:`.cache_reader.answers`, in this process)."""
    report = await cache_reader.answers(db, keep)
    return report["found"], report["said"]


def same_as_cold(db: Path) -> str:
    warm, said = asyncio.run(answers(db, keep=True))
    cold, _ = asyncio.run(answers(db, keep=False))
    assert warm == cold, said
    return said


#: another file's content put in the store's place: the same inode written over, or a new one renamed there
REPLACEMENTS = ("a rewritten copy written over it", "its backup written over it", "a copy vacuumed into its place")


def rewritten_copy(db: Path, copy: Path) -> Path:
    """A copy of ``db`` whose biggest session holds other words (and so other vectors) under the same rowids and
    chunk ids: the same newest rows, other content — what a copy of a store restored from elsewhere may be."""
    shutil.copyfile(db, copy)
    conn = apsw.Connection(str(copy))
    try:
        with conn:
            (session,) = conn.execute(
                "SELECT session_id FROM chunks GROUP BY session_id ORDER BY count(*) DESC, session_id LIMIT 1"
            ).fetchone()
            rows = conn.execute("SELECT rowid, chunk_id, chunk_text FROM chunks WHERE session_id = ?", (session,))
            for rowid, chunk_id, text in rows.fetchall():
                other = " ".join(WORDS[(WORDS.index(w) + 7) % len(WORDS)] if w in WORDS else w for w in text.split())
                conn.execute("UPDATE chunks SET chunk_text = ? WHERE rowid = ?", (other, rowid))
                vector = to_blob(deterministic_vector(other))
                conn.execute("UPDATE chunks_vec SET embedding_blob = ? WHERE chunk_id = ?", (vector, chunk_id))
    finally:
        conn.close()
    return copy


def replace(db: Path, how: str, backup: Path) -> None:
    """``db``'s content replaced as ``how`` (one of :data:`REPLACEMENTS`) says, as a user's ``cp`` or a tool does."""
    assert not Path(f"{db}-wal").exists()  # (a file closed by every program: nothing of the old one left to replay)
    if how == REPLACEMENTS[0]:
        shutil.copyfile(rewritten_copy(db, db.with_name("copy.db")), db)  # into the same inode
    elif how == REPLACEMENTS[1]:
        shutil.copyfile(backup, db)
    else:
        vacuumed = db.with_name("vacuumed.db")
        vacuumed.unlink(missing_ok=True)
        conn = apsw.Connection(str(db))
        conn.execute("VACUUM INTO ?", (str(vacuumed),))
        conn.close()
        os.replace(vacuumed, db)


def test_reopened_after_each_write_of_another_process_the_answers_are_a_cold_stores(tmp_path):
    db = tmp_path / "memory.db"
    write(db, "fill", 3, 30)
    backup = tmp_path / "backup.db"
    shutil.copyfile(db, backup)
    assert same_as_cold(db).startswith("nothing restored")  # the first open keeps what it built
    rng = random.Random(47)
    steps = ["append", "append", "forget", "reindex", "drop-newest", "append", "replace", "append", "forget",
             *REPLACEMENTS]  # fmt: skip
    said = []
    for i, step in enumerate(rng.sample(steps, len(steps)) + ["append", "drop-newest", "append"]):
        if step == "append":
            write(db, step, rng.choice(["s0", "s1", "s2", "new"]), rng.randint(1, 12), i)
        elif step == "forget":
            write(db, step, rng.choice(["s0", "s1", "s2"]))
        elif step == "replace":
            write(db, step, i)
        elif step in REPLACEMENTS:
            replace(db, step, backup)
        else:
            write(db, step)
        said.append((step, same_as_cold(db)))
    restored = [step for step, what in said if what == "restored"]
    assert "append" in restored, said  # what was appended is read on top of what was kept
    assert ("replace", "nothing restored: kept for another file of that name") in said
    assert same_as_cold(db) == "restored"  # nothing changed since: all of it kept


@pytest.mark.parametrize("how", REPLACEMENTS)
def test_a_file_whose_content_changed_under_its_name_answers_as_a_cold_store(tmp_path, how):
    """The same path — and for ``cp``, the same inode — but another content: what was kept is not used."""
    db = tmp_path / "memory.db"
    write(db, "fill", 3, 30)
    backup = tmp_path / "backup.db"
    shutil.copyfile(db, backup)
    write(db, "forget", "s1")  # the newest rows stay: the backup holds them too, under the same rowids
    assert same_as_cold(db).startswith("nothing restored")
    assert same_as_cold(db) == "restored"
    inode = db.stat().st_ino
    replace(db, how, backup)
    assert (db.stat().st_ino == inode) is (how != REPLACEMENTS[2])
    assert same_as_cold(db) != "restored"


def test_the_first_query_reads_only_what_was_appended_since(tmp_path):
    db = tmp_path / "memory.db"
    write(db, "fill", 2, 40)
    asyncio.run(answers(db, keep=True))
    write(db, "append", "s1", 20, 9)

    async def first() -> tuple[int, int]:
        store = await MemoryStore.open(db, read_only=True, embedding="deterministic")
        store._caches.bm25.min_rows = 0
        await store.search("oxmem", ALL_SESSIONS, "quiet hotel", 5)
        vectors, bm25 = store._caches.vectors.follows, store._caches.bm25.follows
        await store.aclose()
        return vectors["kept"], vectors["cleared"] + vectors["dropped"] + bm25["cleared"]

    assert asyncio.run(first()) == (1, 0)  # followed from the kept state: nothing dropped, nothing rebuilt


def test_large_arrays_are_used_mapped_where_they_lie_and_rows_appended_since_go_into_their_room(tmp_path, monkeypatch):
    monkeypatch.setattr(persisted, "SMALL", 0)  # every array "large": mapped copy-on-write, not read
    db = tmp_path / "memory.db"
    write(db, "fill", 2, 40)
    same_as_cold(db)
    files = {p: p.read_bytes() for p in kept_files(tmp_path)}
    write(db, "append", "s1", 20, 9)

    async def mapped() -> tuple[str, bool]:
        store = await MemoryStore.open(db, read_only=True, embedding="deterministic")
        store._caches.bm25.min_rows = 0
        await store.search("oxmem", ALL_SESSIONS, "quiet hotel", 5)
        matrices = [e._matrix for e in store._caches.vectors._entries.values()]
        said = store._disk.said
        await store.aclose()
        return said, all(isinstance(m, np.memmap) for m in matrices)

    assert asyncio.run(mapped()) == ("restored", True)
    assert all(p.read_bytes() == data for p, data in files.items())  # the rows appended went into the map only
    assert same_as_cold(db) == "restored"


def kept_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache").rglob("*.npy"))


@pytest.mark.parametrize("damage", ["truncated", "flipped", "version", "not json", "pointer"])
def test_a_damaged_or_foreign_cache_is_rebuilt_never_trusted(tmp_path, damage):
    db = tmp_path / "memory.db"
    write(db, "fill", 2, 30)
    cold = asyncio.run(answers(db, keep=False))[0]
    asyncio.run(answers(db, keep=True))
    files = kept_files(tmp_path)
    matrix = next(p for p in files if p.name.startswith("vectors-matrix"))
    meta = matrix.parent / "meta.json"
    if damage == "truncated":
        matrix.write_bytes(matrix.read_bytes()[:-100])
    elif damage == "flipped":  # a vector changed, the file's size the same: only the hash tells
        data = bytearray(matrix.read_bytes())
        data[-4:] = np.float32(0.5).tobytes()
        matrix.write_bytes(bytes(data))
    elif damage == "version":
        meta.write_text(json.dumps({**json.loads(meta.read_text()), "format": 999}))
    elif damage == "not json":
        meta.write_text("{")
    else:
        (matrix.parent.parent / "current").write_text("../../elsewhere")
    warm, said = asyncio.run(answers(db, keep=True))
    assert warm == cold
    assert said.startswith(("nothing restored", "vectors not restored")), said


def test_nothing_is_written_beside_the_store_and_a_read_only_file_is_left_as_found(tmp_path):
    folder = tmp_path / "agent"
    folder.mkdir()
    db = folder / "memory.db"
    write(db, "fill", 2, 30)
    (folder / "memory.db").chmod(0o444)
    folder.chmod(0o555)
    try:
        before = sorted(p.name for p in folder.iterdir()), hashlib.sha256(db.read_bytes()).hexdigest()
        asyncio.run(answers(db, keep=True))
        asyncio.run(answers(db, keep=True))
        after = sorted(p.name for p in folder.iterdir()), hashlib.sha256(db.read_bytes()).hexdigest()
    finally:
        folder.chmod(0o755)
    assert after == before
    assert all(tmp_path / "cache" in p.parents for p in kept_files(tmp_path))


def test_the_caches_are_bounded_least_recently_used_first_and_can_be_removed(tmp_path, monkeypatch):
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    write(first, "fill", 2, 30)
    write(second, "fill", 2, 30)
    root = tmp_path / "cache"
    asyncio.run(answers(first, keep=True))
    asyncio.run(answers(second, keep=True))
    a, b = persisted.DiskCache(first, root).folder, persisted.DiskCache(second, root).folder
    assert sorted(f.name for f in root.iterdir()) == sorted([a.name, b.name])
    persisted._bound(root, persisted.cached_bytes(root) - 1, keep=b)
    assert [f.name for f in root.iterdir()] == [b.name]  # the least recently used went first
    assert persisted.clear_all(root) > 0 and persisted.cached_bytes(root) == 0
    monkeypatch.setenv(persisted.MAX_ENV, "0")
    asyncio.run(answers(first, keep=True))
    assert persisted.cached_bytes(root) == 0  # 0: nothing kept


def test_keeping_nothing_neither_uses_nor_leaves_what_was_kept_before(tmp_path, monkeypatch):
    """``$OXMEM_CACHE_MAX_MB=0`` is how a user rules a kept cache out: it used to be restored and left on disk."""
    db = tmp_path / "memory.db"
    write(db, "fill", 2, 30)
    asyncio.run(answers(db, keep=True))
    assert persisted.cached_bytes(tmp_path / "cache") > 0
    monkeypatch.setenv(persisted.MAX_ENV, "0")
    _, said = asyncio.run(answers(db, keep=True))
    assert said == "nothing restored: $OXMEM_CACHE_MAX_MB is 0"
    assert persisted.cached_bytes(tmp_path / "cache") == 0


def test_prepare_search_builds_ahead_of_the_first_query_and_a_new_process_restores_it(tmp_path):
    db = tmp_path / "memory.db"
    write(db, "fill", 2, 30)

    async def prepared() -> tuple[int, int, str]:
        store = await MemoryStore.open(db, read_only=True, embedding="deterministic")
        store._caches.bm25.min_rows = 0
        held = await store.prepare_search(ALL_SESSIONS)
        entries = len(store._caches.vectors._entries)
        said = store._disk.said
        await store.aclose()
        return held, entries, said

    held, entries, said = asyncio.run(prepared())
    assert (held, entries) == (60, 1) and said.startswith("nothing restored")  # 2 sessions × 30 events, 1 chunk each
    assert asyncio.run(prepared()) == (60, 1, "restored")
