"""The program that writes a store between the inspector's opens in the persisted-cache tests, run as its own
process: ``python -m tests.core.retrieval.cache_writer DB STEP [ARGS]``. Steps:

* ``fill SESSIONS EVENTS``: a new store of that many sessions (``s0``, ``s1``…) and events each;
* ``append SESSION N SEED``: N more events at the end of the session (a new session if it has none);
* ``forget SESSION``: the session (else the first there is) and all it indexed deleted, as ``oxmem forget`` does;
* ``reindex``: every vector deleted and written again (a re-embedding);
* ``drop-newest``: the newest chunk deleted (its vector and FTS row with it): the next rows reuse its rowid;
* ``replace SEED``: the file replaced by another store of the same name (one session ``other``).
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
from pathlib import Path

from oxmem_gui.core import MemoryStore

WORDS = ("lisbon hotel quiet alfama flight aisle seat invoice rounding ledger tomato blight garden report kpi "
         "monday berlin coffee train ticket museum river bridge castle tram").split()  # fmt: skip


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9)))


async def append(store: MemoryStore, session: str, n: int, seed: int) -> None:
    rng = random.Random(seed)
    last = {s.session_id: s.last_sequence for s in await store.list_sessions()}.get(session, 0) or 0
    for i in range(1, n + 1):
        await store.store(session, last + i, {"role": "user" if i % 2 else "assistant", "content": text(rng)})


async def main(db: str, step: str, *args: str) -> None:
    if step == "replace":
        fresh = db + ".new"
        store = await MemoryStore.open(fresh, embedding="deterministic", keep_caches=False)
        await append(store, "other", 30, int(args[0]))
        await store.aclose()
        os.replace(fresh, db)
        return
    store = await MemoryStore.open(db, embedding="deterministic", keep_caches=False)
    try:
        if step == "fill":
            for s in range(int(args[0])):
                await append(store, f"s{s}", int(args[1]), s)
        elif step == "append":
            await append(store, args[0], int(args[1]), int(args[2]))
        elif step == "forget":  # that session, else (gone already) the first one there is
            sessions = [s.session_id for s in await store.list_sessions()]
            if sessions:
                await store.forget(args[0] if args[0] in sessions else sessions[0])
        elif step == "reindex":
            await store.reindex(model="deterministic")
        elif step == "drop-newest":
            await store._db.run(lambda conn: conn.execute(
                "DELETE FROM chunks WHERE rowid = (SELECT max(rowid) FROM chunks)"))  # fmt: skip
        else:
            raise SystemExit(f"unknown step {step}")
    finally:
        await store.aclose()


def write(db: Path, *step: object) -> None:
    """One step of this other program, in its own process (what the tests call)."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "tests.core.retrieval.cache_writer", str(db), *map(str, step)],
        cwd=Path(__file__).resolve().parents[3], capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
    Path(sys.argv[1]).exists() or sys.exit(1)
