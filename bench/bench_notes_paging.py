"""Scrolling one group's 100k notes a page at a time — the store's notes, Omega's facts of one sender, aidaemon's
facts of one category: the page read in SQL (``notes_page``) against the way pages were read before, in the same
run (every note of the group read, sorted, then sliced: ``page_after(list_notes)``). Pages of 200, the Notes
panel's; the first page, a page 50 pages down, and a page filtered by text (and by a tag, for the store).

    python bench/bench_notes_paging.py [--notes 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' fixtures: each agent's own schema

from bench_diff import WORDS, _notes, _write  # noqa: E402
from report import table  # noqa: E402

from oxmem_gui.core import MemoryStore  # noqa: E402
from oxmem_gui.core.memory import open_memory  # noqa: E402
from oxmem_gui.core.store import notes as note_rows  # noqa: E402
from tests.core.formats import fixtures  # noqa: E402

PAGE = 200
USER = "user000"


async def measure(path: Path, group: str, text: str, tag: str | None) -> list[tuple[str, float, float]]:
    async with await open_memory(path, read_only=True, create=False, embedding="deterministic") as store:
        first = await store.notes_page(group, None, PAGE)
        deep = first
        for _ in range(49):
            deep = await store.notes_page(group, note_rows.note_cursor(deep[-1]), PAGE)
        cases = [
            ("first page", (None, PAGE)),
            ("page 51 (after 50 pages)", (note_rows.note_cursor(deep[-1]), PAGE)),
            *([(f"first page, tag '{tag}'", (None, PAGE, (tag,)))] if tag else []),
            (f"first page, text '{text}'", (None, PAGE, (), "any", text)),
        ]
        out = []
        for label, args in cases:
            after, limit, *filters = args

            async def sql(after=after, limit=limit, filters=filters):
                return await store.notes_page(group, after, limit, *filters)

            async def whole(after=after, limit=limit, filters=filters):
                return note_rows.page_after(await store.list_notes(group, *filters), after, limit)

            assert await sql() == await whole(), label  # the same page either way
            out.append((label, await _p50(sql), await _p50(whole)))
        return out


def _omega(path: Path, n: int) -> None:
    """Omega's fixture and ``n`` more facts of one sender, written with Omega's own column defaults."""
    fixtures.make_omega(path)
    rng = random.Random(n)
    with sqlite3.connect(path) as conn:
        conn.executemany(
            "INSERT INTO facts (id, sender_id, key, value, created_at, updated_at) VALUES (?, '4242', ?, ?, ?, ?)",
            [
                (f"fact-{i}", f"key_{i}", " ".join(rng.choice(WORDS) for _ in range(6)), t, t)
                for i in range(n)
                for t in [f"2026-0{1 + i % 9}-{1 + i % 28:02d} {i % 24:02d}:{i % 60:02d}:00"]
            ],
        )


def _aidaemon(path: Path, n: int) -> None:
    """aidaemon's fixture and ``n`` more facts of one category, a tenth of them superseded versions."""
    fixtures.make_aidaemon(path)
    rng = random.Random(n)
    with sqlite3.connect(path) as conn:
        conn.executemany(
            "INSERT INTO facts (category, key, value, created_at, updated_at, superseded_at) VALUES "
            "('project', ?, ?, ?, ?, ?)",
            [
                (f"key_{i // 10 if i % 10 == 0 else i}", " ".join(rng.choice(WORDS) for _ in range(6)), t, t,
                 t if i % 10 == 0 else None)
                for i in range(n)
                for t in [f"2026-0{1 + i % 9}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"]
            ],
        )  # fmt: skip


async def _p50(call, runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        await call()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=100_000)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    store = OUT / f"notes-one-user-{args.notes}.db"
    if not store.exists():
        print(f"building {store.name} …", file=sys.stderr)

        async def build() -> None:
            async with await MemoryStore.open(store, embedding="deterministic") as memory:
                await _write(memory, _notes(random.Random(args.notes), 1, args.notes))

        asyncio.run(build())
    files = [("oxmem store, a user's notes", store, USER, "alfama quiet", "hotel")]
    for name, build in (("omega", _omega), ("aidaemon", _aidaemon)):
        path = OUT / f"{name}-facts-{args.notes}.db"
        if not path.exists():
            print(f"building {path.name} …", file=sys.stderr)
            build(path, args.notes)
        group = "4242" if name == "omega" else "project"
        files.append((f"{name}, the facts of {'a sender' if name == 'omega' else 'a category'}", path, group,
                      "alfama quiet", None))  # fmt: skip
    print(f"{args.notes:,} notes (facts) in one group, pages of {PAGE}, p50 of 7 (ms)")
    rows = []
    for label, path, group, text, tag in files:
        for case, sql, whole in asyncio.run(measure(path, group, text, tag)):
            rows.append((label, case, f"{sql:.1f}", f"{whole:.1f}", f"{whole / sql:.1f}×"))
    print(table(["file", "page", "in SQL", "read whole, sliced", "whole / SQL"], rows))


if __name__ == "__main__":
    main()
