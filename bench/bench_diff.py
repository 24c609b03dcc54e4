"""``oxmem diff`` of two files of 100k notes: a backup, and the file after 1% of the notes were changed, 1% deleted
and 1% added. The baseline, measured in the same run, is only reading every note of both files through the same
reader interface (what the diff cannot do without); the diff's own work is the rest.

    python bench/bench_diff.py [--notes 100000] [--users 100]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sys
import time
import uuid
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"

from oxmem_gui.core import MemoryStore  # noqa: E402
from oxmem_gui.core.compare import _all_notes, diff_files  # noqa: E402
from oxmem_gui.core.memory import open_memory  # noqa: E402
from oxmem_gui.core.store import notes as note_rows  # noqa: E402
from oxmem_gui.core.store.events import embed_prepared, write_events  # noqa: E402

WORDS = "hotel booking alfama quiet flight seat aisle window tomato garden invoice rounding metrics weekly".split()


def _notes(rng: random.Random, users: int, n: int) -> list:
    """Prepared note events (as :func:`notes.save_note` makes them), ``n`` spread over ``users``."""
    now = note_rows.utc_now_text()
    events = []
    for i in range(n):
        user = f"user{i % users:03d}"
        note_id = f"note-{uuid.UUID(int=rng.getrandbits(128), version=4)}"
        event = note_rows._note_event(user, note_id, " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 15))))
        tags = sorted({rng.choice(WORDS) for _ in range(2)})
        event.extra_metadata = note_rows._note_metadata(note_id, "memory_save", tags, now, now)
        events.append(event)
    return events


async def _write(store: MemoryStore, events: list) -> None:
    for start in range(0, len(events), 5000):
        batch = events[start : start + 5000]
        embed_prepared(batch, store.backend)
        await store._db.run(write_events, batch, store.backend.model_name)


async def build(backup: Path, edited: Path, n: int, users: int) -> None:
    rng = random.Random(n)
    async with await MemoryStore.open(backup, embedding="deterministic") as store:
        await _write(store, _notes(rng, users, n))
    shutil.copy(backup, edited)
    async with await MemoryStore.open(edited, embedding="deterministic") as store:
        every = [(u, note) for u in await store.note_users() for note in await store.list_notes(u)]
        chosen = rng.sample(every, 2 * n // 100)
        for user, note in chosen[: n // 100]:
            await store.update_note(user, note.note_id, note.content + " changed", [*note.tags, "edited"])
        for user, note in chosen[n // 100 :]:
            await store.delete_note(user, note.note_id)
        await _write(store, _notes(rng, users, n // 100))


async def read_both(a: Path, b: Path) -> int:
    count = 0
    for path in (a, b):
        m = await open_memory(path, read_only=True, create=False, embedding="deterministic")
        try:
            count += len(await _all_notes(m))
        finally:
            await m.aclose()
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=100)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    backup, edited = OUT / f"notes-{args.notes}-backup.db", OUT / f"notes-{args.notes}-edited.db"
    if not (backup.exists() and edited.exists()):
        print(f"building {backup.name} and {edited.name} …", file=sys.stderr)
        backup.unlink(missing_ok=True)
        asyncio.run(build(backup, edited, args.notes, args.users))
    rows = []
    for _ in range(2):  # the second run with a warm page cache
        t = time.perf_counter()
        read = asyncio.run(read_both(backup, edited))
        read_s = time.perf_counter() - t
        t = time.perf_counter()
        diff = asyncio.run(diff_files(backup, edited, embedding="deterministic"))
        diff_s = time.perf_counter() - t
        rows.append((read, read_s, diff_s, diff.counts()))
    read, read_s, diff_s, counts = rows[-1]
    print(f"{'notes read (both files)':<26}{'read only s':>12}{'diff s':>9}{'diff / read':>13}  changes found")
    print(f"{read:<26,}{read_s:>12.2f}{diff_s:>9.2f}{diff_s / read_s:>12.2f}×  {counts}")


if __name__ == "__main__":
    main()
