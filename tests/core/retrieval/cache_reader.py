"""The inspector's searches in their own process, for the persisted-cache tests (a child a test can time out, limit
or put in another mount namespace): ``python -m tests.core.retrieval.cache_reader DB keep|cold [--list FOLDER]``
prints one JSON line: ``found``, every query's hits (ids and every number) over each session and over all of them;
``said``, what the restore did; with ``--list``, ``listed``: what FOLDER holds afterwards (paths relative to it,
a folder's ending in ``/``, a link's as ``name -> target``). The caches of any size are kept (the tests' stores are
small); what :mod:`oxmem_gui.core.retrieval.persisted` logs goes to stderr."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from pathlib import Path

from oxmem_gui.core import MemoryStore
from oxmem_gui.core.retrieval import persisted
from oxmem_gui.core.retrieval.scope import ALL_SESSIONS

QUERIES = ("quiet hotel in alfama", "invoice rounding", "garden tomato", "train ticket berlin", "castle")


async def answers(db: Path, keep: bool) -> dict:
    store = await MemoryStore.open(db, read_only=True, embedding="deterministic", keep_caches=keep)
    store._caches.bm25.min_rows = 0  # the BM25 postings too, small as the store is
    try:
        sessions = [s.session_id for s in await store.list_sessions()]
        found = []
        for scope in [*sessions, ALL_SESSIONS]:
            for ranking in ("oxmem", "tuned"):
                for query in QUERIES:
                    result = await store.search(ranking, scope, query, 5)
                    found.append([[h.chunk_id, h.score, h.vector_score, h.fts_score] for h in result.hits])
        said = store._disk.said if store._disk is not None else "-"
    finally:
        await store.aclose()
    return {"found": found, "said": said}


def listing(folder: Path) -> list[str]:
    """What ``folder`` holds, no link followed."""
    out = []
    for top, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(top, name)
            shown = str(path.relative_to(folder))
            if path.is_symlink():
                out.append(f"{shown} -> {os.readlink(path)}")
            else:
                out.append(shown + "/" if path.is_dir() else shown)
    return sorted(out)


def main(argv: list[str]) -> None:
    persisted.MIN_ROWS = 0
    handler = logging.StreamHandler(sys.stderr)
    logging.getLogger(persisted.__name__).addHandler(handler)
    logging.getLogger(persisted.__name__).setLevel(logging.INFO)
    db, mode, *rest = argv
    report = asyncio.run(answers(Path(db), keep=mode == "keep"))
    if rest[:1] == ["--list"]:
        report["listed"] = listing(Path(rest[1]))
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
