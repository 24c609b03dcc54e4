"""A remote memory over loopback: pulling an Oxydra memory of 100k chunks from a real libSQL server (``tursodb
--sync-server``, as the tests start it), then refreshing it after the agent wrote 100 events — against copying
the same database file locally with SQLite's backup API, measured in the same run (the baseline: what reading
it with no network and no JSON would cost).

The memory: 100 sessions of 1,000 events, one chunk per event with its vector (384 values zero-padded to
Oxydra's ``FLOAT32(512)``, 2 KiB), a summary per session — the agent's schema as its migrations make it, less
the FTS5 table and libSQL's vector index, which that server lacks (the snapshot builds the FTS table itself).
The file is written with APSW and then served. Goals: the pull ≤ 10 s, each refresh ≤ 0.5 s (after 100 new
events, after nothing, after 20 chunks edited in place).

    python bench/bench_remote.py [--chunks 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import apsw
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import table  # noqa: E402

from oxmem_gui.core.memory import open_remote, refresh_remote  # noqa: E402
from oxmem_gui.core.remote.snapshot import statements  # noqa: E402
from tests.core.formats.fixtures import OXYDRA_BOOKKEEPING_SQL, _oxydra_scripts  # noqa: E402
from tests.remote_server import NOT_ON_SERVER, TursoServer  # noqa: E402

START = datetime(2026, 6, 1, 8, 0)
WORDS = (
    "deploy release invoice berlin appointment starter hydration flour export order test garden tomato budget "
    "meeting train ticket museum report backup server migration schema cron reminder coffee recipe"
).split()


def build(path: Path, chunks: int) -> None:
    """The memory of the module's docstring, written straight into the server's file."""
    rng = np.random.default_rng(5)
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(OXYDRA_BOOKKEEPING_SQL)
    with conn:
        for version, sql in _oxydra_scripts(libsql=True):
            if version.startswith(NOT_ON_SERVER):
                continue
            for statement in statements(sql):
                conn.execute(statement)
            conn.execute("INSERT INTO memory_migrations (version) VALUES (?)", (version,))
    sessions = max(1, chunks // 1000)
    per = chunks // sessions
    with conn:
        for s in range(sessions):
            sid = f"telegram:user{s}:thread"
            conn.execute("INSERT INTO sessions (session_id, agent_identity) VALUES (?, 'ada')", (sid,))
            conn.execute(
                "INSERT INTO session_state (session_id, state_json) VALUES (?, ?)",
                (sid, json.dumps({"summary": f"thread {s}", "upper_sequence": per})),
            )
            vectors = rng.standard_normal((per, 384)).astype("<f4")
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            padded = np.zeros((per, 512), dtype="<f4")
            padded[:, :384] = vectors
            picks = rng.integers(0, len(WORDS), (per, 14))
            events, rows, vecs = [], [], []
            for i in range(per):
                text = " ".join(WORDS[w] for w in picks[i])
                role = "user" if i % 2 == 0 else "assistant"
                at = (START + timedelta(minutes=s * 1000 + i)).strftime("%Y-%m-%d %H:%M:%S")  # written over months
                events.append((sid, i + 1, json.dumps({"role": role, "content": text}), at))
                cid = f"chunk:{sid}:{i + 1}:0"
                rows.append((cid, sid, i + 1, i + 1, text, json.dumps({"role": role}), f"h{s}-{i}", at, at))
                vecs.append((cid, padded[i].tobytes(), "sentence-transformers/all-MiniLM-L6-v2", at, at))
            conn.executemany(
                "INSERT INTO conversation_events (session_id, sequence, payload_json, created_at) VALUES (?, ?, ?, ?)",
                events,
            )
            conn.executemany(
                "INSERT INTO chunks (chunk_id, session_id, sequence_start, sequence_end, chunk_text, metadata_json, "
                "content_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            conn.executemany(
                "INSERT INTO chunks_vec (chunk_id, embedding_blob, embedding_model, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?)",
                vecs,
            )
            conn.execute("UPDATE sessions SET created_at = ?, updated_at = ? WHERE session_id = ?", (at, at, sid))
            conn.execute("UPDATE session_state SET updated_at = ? WHERE session_id = ?", (at, sid))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def local_copy(source: Path, target: Path) -> float:
    """The baseline: SQLite's backup API, file to file."""
    start = time.perf_counter()
    src = apsw.Connection(str(source), flags=apsw.SQLITE_OPEN_READONLY)
    dst = apsw.Connection(str(target))
    with dst.backup("main", src, "main") as backup:
        backup.step(-1)
    dst.close()
    src.close()
    return time.perf_counter() - start


#: the refreshes measured, each after what the agent did: (label, what it writes to the server, rows changed)
REFRESHES = ("100 new events", "nothing changed", "20 chunks edited in place (same length, time bumped)")


def agent_writes(server: TursoServer, what: str, step: int) -> int:
    """Write as the agent, to the server; the rows of the copy that must change."""
    if what == REFRESHES[0]:
        base = 1_000_000 + step * 100
        events = [
            ("telegram:user0:thread", base + i, json.dumps({"role": "user", "content": f"new {i}"})) for i in range(100)
        ]
        server.insert("conversation_events", ["session_id", "sequence", "payload_json"], events)
        return 100
    if what == REFRESHES[2]:
        at = (START + timedelta(days=400, minutes=step)).strftime("%Y-%m-%d %H:%M:%S")
        rowids = [1 + (step * 7919 + i * 4999) % 90_000 for i in range(20)]
        server.transaction(
            ("UPDATE chunks SET chunk_text = 'Z' || substr(chunk_text, 2), updated_at = ? WHERE rowid = ?", (at, r))
            for r in rowids
        )
        return len(set(rowids))
    return 0


async def measure(server: TursoServer, folder: Path, runs: int) -> dict[str, Any]:
    times: dict[str, list[float]] = {"pull": [], **{what: [] for what in REFRESHES}}
    facts: dict[str, Any] = {}
    for run in range(runs):
        start = time.perf_counter()
        memory = await open_remote(server.url, folder=folder / f"cache{run}", embedding="deterministic")
        times["pull"].append(time.perf_counter() - start)
        report = memory.remote.report
        facts.update(rows=report.total, requests=report.requests, mib=report.bytes / 2**20)
        async with memory:
            for r in range(2):
                for what in REFRESHES:
                    expected = agent_writes(server, what, run * 2 + r)
                    start = time.perf_counter()
                    refreshed = await refresh_remote(memory)
                    times[what].append(time.perf_counter() - start)
                    changed = sum(refreshed.changed.values())
                    assert changed == expected, (what, refreshed.changed)
                    facts[what] = (refreshed.requests, refreshed.bytes / 2**20, refreshed.total)
    times["facts"] = facts
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        served = folder / "server.db"
        start = time.perf_counter()
        build(served, args.chunks)
        size = served.stat().st_size / 2**20
        print(f"built {args.chunks:,} chunks in {time.perf_counter() - start:.1f} s ({size:.0f} MiB)")
        baseline = statistics.median(local_copy(served, folder / f"copy{i}.db") for i in range(args.runs))
        server = TursoServer(folder, file=served)
        try:
            times = asyncio.run(measure(server, folder, args.runs))
        finally:
            server.stop()
    facts = times.pop("facts")
    pull = statistics.median(times.pop("pull"))
    print(f"pulled {facts['rows']:,.0f} rows in {facts['requests']:.0f} requests, {facts['mib']:.0f} MiB of JSON")
    rows = [
        ("local copy (backup API)", f"{baseline:.2f} s", args.runs, "", "1×", ""),
        ("pull (open remote)", f"{pull:.2f} s", args.runs, "", f"{pull / baseline:.1f}×", "≤ 10 s"),
    ]
    for what, seconds in times.items():
        requests, mib, received = facts[what]
        median = statistics.median(seconds)
        moved = f"{requests} req., {received:,} rows, {mib:.1f} MiB"
        rows.append(
            (f"refresh: {what}", f"{median * 1000:.0f} ms", len(seconds), moved, f"{median / baseline:.2f}×", "≤ 0.5 s")
        )
    print(table(("what", "median", "runs", "moved", "ratio to a local copy", "goal"), rows, rule=True))


if __name__ == "__main__":
    main()
