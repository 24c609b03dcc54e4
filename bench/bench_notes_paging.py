"""Scrolling one user's 100k notes a page at a time: the page read in SQL (``notes_page``) against the way pages
were read before, in the same run (every note of the user read, sorted, then sliced: ``page_after(list_notes)``).
Pages of 200, the Notes panel's; the first page, a page 50 pages down, and a page filtered by a tag and by text.

    python bench/bench_notes_paging.py [--notes 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_diff import _notes, _write  # noqa: E402
from report import table  # noqa: E402

from oxmem_gui.core import MemoryStore  # noqa: E402
from oxmem_gui.core.store import notes as note_rows  # noqa: E402

PAGE = 200
USER = "user000"


async def measure(path: Path) -> list[tuple[str, float, float]]:
    async with await MemoryStore.open(path, read_only=True, create=False, embedding="deterministic") as store:
        first = await store.notes_page(USER, None, PAGE)
        deep = first
        for _ in range(49):
            deep = await store.notes_page(USER, note_rows.note_cursor(deep[-1]), PAGE)
        cases = [
            ("first page", (None, PAGE)),
            ("page 51 (after 50 pages)", (note_rows.note_cursor(deep[-1]), PAGE)),
            ("first page, tag 'hotel'", (None, PAGE, ("hotel",))),
            ("first page, text 'alfama quiet'", (None, PAGE, (), "any", "alfama quiet")),
        ]
        out = []
        for label, args in cases:
            after, limit, *filters = args

            async def sql(after=after, limit=limit, filters=filters):
                return await store.notes_page(USER, after, limit, *filters)

            async def whole(after=after, limit=limit, filters=filters):
                return note_rows.page_after(await store.list_notes(USER, *filters), after, limit)

            assert await sql() == await whole(), label  # the same page either way
            out.append((label, await _p50(sql), await _p50(whole)))
        return out


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
    path = OUT / f"notes-one-user-{args.notes}.db"
    if not path.exists():
        print(f"building {path.name} …", file=sys.stderr)

        async def build() -> None:
            async with await MemoryStore.open(path, embedding="deterministic") as store:
                await _write(store, _notes(random.Random(args.notes), 1, args.notes))

        asyncio.run(build())
    rows = asyncio.run(measure(path))
    print(f"{args.notes:,} notes of one user, pages of {PAGE}, p50 of 7 (ms)")
    print(
        table(
            ["page", "in SQL", "read whole, sliced", "whole / SQL"],
            [(label, f"{sql:.1f}", f"{whole:.1f}", f"{whole / sql:.1f}×") for label, sql, whole in rows],
        )
    )


if __name__ == "__main__":
    main()
