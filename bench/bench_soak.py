"""Soak: reading beside a writing agent, importing beside a note writer, and a long SIGKILL loop.

1. **Reader beside a writer.** For each of ``--chunks`` (default 21,000 and 100,000; ≥ 20,000, so terms searches
   take the numpy BM25 path), a store is opened read-only and searched without pause for ``--seconds`` quiet (the
   baseline), then beside ``tests.agent`` committing one event per transaction in another process: 2 events a
   second into another session, 2 a second into the searched session, and at full speed. Reported: queries run,
   p50/p95 with their ratios to the quiet run, errors (must be 0), and how the search caches followed the
   commits (kept, a session dropped, everything dropped).
2. **Import beside a note writer.** ``--events`` events are imported while another process saves and rewrites
   notes with a busy timeout of ``--busy-ms`` (a write that times out counts one busy error and is retried; its
   wait runs from its first try to its commit). Batched import (the core's ``import_events``) against the
   baseline of the old one-transaction ``store_many`` import, which holds the write lock for nearly its whole
   length. Waits and busy errors are reported, not judged.
3. **SIGKILL loop.** ``--kills`` kills of imports, note edits and both at once (rounds of ``tests/core/
   test_crash.py``), the store audited after each: integrity, half notes, sequence gaps, index mismatches.

Exits non-zero when any error or integrity count is not zero.

    python bench/bench_soak.py [--parts 123] [--seconds 15] [--chunks 21000 100000] [--kills 70] [--events 20000]
                               [--busy-ms 500]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.agent and the crash rounds of tests/core/test_crash.py

from report import table  # noqa: E402

from oxmem_gui.core import MemoryStore, OxmemError  # noqa: E402
from oxmem_gui.core.errors import StoreBusyError  # noqa: E402
from oxmem_gui.core.retrieval.bm25 import MIN_ROWS  # noqa: E402
from tests.core.test_crash import (  # noqa: E402
    CATEGORIES,
    CrashRound,
    audit_store,
    crash_round,
    write_import_file,
)
from tests.processes import agent_report, start_agent  # noqa: E402

WORDS = (
    "invoice rounding flight hotel lisbon tomato blight copper schedule weekly metrics signup churn python test "
    "decimal banker aisle seat vegetarian breakfast castle alfama report growth warehouse query editor theme dark "
    "light garden spring rotate budget token summary session memory agent note tag search vector keyword"
).split()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


def titled(title: str, header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    print(f"\n{title}")
    print(table(header, rows, rule=True))


def ratio(value: float, baseline: float) -> str:
    return f"{value / baseline:.2f}×" if baseline else "–"


# -- 1. reader beside a writer ----------------------------------------------------------------------------


#: part 1's writers: (label, events a second (0: full speed), the session it writes)
WRITERS = [
    ("2 events/s into another session", 2.0, "agent:live"),
    ("2 events/s into the searched session", 2.0, "big"),
    ("full speed into another session", 0.0, "agent:live"),
]


async def reader_beside_writer(tmp: Path, seconds: float, n_chunks: int, rng: random.Random) -> int:
    db = tmp / f"reader-{n_chunks}.db"
    store = await MemoryStore.open(db, embedding="deterministic")
    await store.store_many(
        [
            ("big", i, {"role": "user", "content": f"n{i} " + " ".join(rng.choices(WORDS, k=rng.randint(6, 14)))})
            for i in range(1, n_chunks + 1)
        ]
    )
    await store.aclose()
    queries = [" ".join(rng.choices(WORDS, k=rng.randint(1, 4))) for _ in range(50)]
    reader = await MemoryStore.open(db, read_only=True, embedding="deterministic")
    await reader.hybrid_query("big", "warm up", 8, fts_mode="terms")
    errors: list[str] = []

    async def phase(writer: tuple[str, float, str] | None) -> tuple[list[float], dict]:
        """Queries without pause for ``seconds``, beside ``writer`` (None: quiet)."""
        agent = None
        if writer is not None:
            _, rate, session = writer
            agent = start_agent(
                db, "events", "--seconds", str(seconds + 60), "--rate", str(rate), "--session", session,
                "--stop", str(tmp / "stop"), ready=tmp / f"ready-{session}-{rate}",
            )  # fmt: skip
        times: list[float] = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            t = time.perf_counter()
            try:
                await reader.hybrid_query("big", queries[len(times) % len(queries)], 8, fts_mode="terms")
            except Exception as exc:  # noqa: BLE001 - every failure is counted and shown
                errors.append(f"{type(exc).__name__}: {exc}")
            times.append((time.perf_counter() - t) * 1000)
        report: dict = {}
        if agent is not None:
            (tmp / "stop").touch()
            report = agent_report(agent)
            (tmp / "stop").unlink()
            errors.extend(report.get("errors", []))
        return times, report

    quiet, _ = await phase(None)
    q50, q95 = pct(quiet, 0.5), pct(quiet, 0.95)
    rows = [("quiet (baseline)", f"{len(quiet):,}", f"{q50:.2f} ms", f"{q95:.2f} ms", "", "", "")]
    follows_before = dict(reader._caches.vectors.follows)
    for writer in WRITERS:
        times, report = await phase(writer)
        p50, p95 = pct(times, 0.5), pct(times, 0.95)
        rows.append(
            (writer[0], f"{len(times):,}", f"{p50:.2f} ms", f"{p95:.2f} ms", ratio(p50, q50), ratio(p95, q95),
             f"{report.get('written', 0):,}")
        )  # fmt: skip
    written = sum(1 for _ in await reader.recall("agent:live"))
    follows = {k: v - follows_before.get(k, 0) for k, v in reader._caches.vectors.follows.items()}
    await reader.aclose()
    titled(
        f"1. Reader beside a writer: {n_chunks:,} chunks, read-only, hybrid queries (terms, top 8) without pause, "
        f"{seconds:g} s each; the writer is tests.agent, one event per transaction",
        ("writer", "queries", "p50", "p95", "p50 ratio", "p95 ratio", "events written"),
        rows,
    )
    print(
        f"  errors: {len(errors)}; events of agent:live found by the reader: {written:,}; the caches followed "
        f"{follows['kept']:,} commits, dropped a session {follows['dropped']} times, everything {follows['cleared']}"
    )
    for e in errors[:5]:
        print(f"  error: {e}")
    return len(errors)


# -- 2. import beside a note writer ------------------------------------------------------------------------


async def note_writer(db: str, ready: str, stop: str, busy_ms: int, pause: float) -> dict:
    """The other writer of part 2 (run as its own process): save and rewrite notes until ``stop`` exists."""
    store = await MemoryStore.open(db, embedding="deterministic", busy_timeout_ms=busy_ms)
    writes: list[tuple[float, float, int]] = []  # (wall clock at its first try, seconds to commit, busy errors)
    errors: list[str] = []
    try:
        note = await store.save_note("soak", "soak note 0 " + "word " * 300, ["soak"])
        Path(ready).touch()
        n = 0
        while not os.path.exists(stop):
            n += 1
            started, t0, busy = time.time(), time.perf_counter(), 0
            while True:
                try:
                    if n % 3:
                        text = f"soak note {n} " + "word " * 300
                        note = await store.update_note("soak", note.note_id, text, [f"t{n % 5}"])
                    else:
                        await store.save_note("soak", f"short note {n}", ["short"])
                    break
                except StoreBusyError:
                    busy += 1
                except OxmemError as exc:
                    errors.append(str(exc))
                    break
            writes.append((started, time.perf_counter() - t0, busy))
            await asyncio.sleep(pause)
    finally:
        await store.aclose()
    return {"writes": writes, "errors": errors}


def import_records(n: int) -> list[tuple[str, int, dict]]:
    return [
        (f"import-{i % 20}", i // 20 + 1, {"role": "user", "content": f"imported message {i} about topic {i % 97}"})
        for i in range(n)
    ]


async def import_beside_writer(tmp: Path, n_events: int, busy_ms: int) -> int:
    records = import_records(n_events)
    rows, failures, baseline_wait = [], 0, None
    for label, how in (
        ("one-transaction store_many (baseline)", "store_many"),
        ("batched import_events (500 per transaction)", "import"),
        ("no import (the writer alone, 3 s)", "none"),
    ):
        db = tmp / f"import-{how}.db"
        store = await MemoryStore.open(db, embedding="deterministic")
        stop, ready = tmp / f"stop-{how}", tmp / f"ready-{how}"
        writer = subprocess.Popen(
            [sys.executable, __file__, "--note-writer", str(db), str(ready), str(stop), "--busy-ms", str(busy_ms)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        while not ready.exists():
            if writer.poll() is not None:
                raise SystemExit(f"the note writer did not start: {writer.communicate()}")
            await asyncio.sleep(0.01)
        started = time.time()
        if how == "store_many":
            await store.store_many(records)
        elif how == "import":
            result = await store.import_events(records)
            assert result.stored == n_events, result
        else:
            await asyncio.sleep(3)
        ended = time.time()
        stop.touch()
        out, err = writer.communicate(timeout=120)
        await store.aclose()
        if writer.returncode != 0:
            print(f"  note writer failed: {err.strip()[-2000:]}")
            failures += 1
            continue
        report = json.loads(out.strip().splitlines()[-1])
        during = [(w, b) for s, w, b in report["writes"] if started <= s <= ended]
        waits = [w * 1000 for w, _ in during]
        longest = max(waits, default=0.0)
        found = await asyncio.to_thread(audit_store, db)  # it runs its own event loop
        problems = sum(len(v) for v in found.values())
        failures += len(report["errors"]) + problems
        for e in report["errors"][:3] + [p for v in found.values() for p in v][:3]:
            print(f"  error: {e}")
        if baseline_wait is None:
            baseline_wait = longest
        rows.append(
            (
                label,
                f"{ended - started:.2f} s" if how != "none" else "–",
                f"{len(during):,}",
                f"{sum(b for _, b in during):,}",
                f"{len(report['errors'])}",
                f"{longest:.0f} ms",
                f"{pct(waits, 0.95):.0f} ms",
                "1.00× (baseline)" if how == "store_many" else ratio(longest, baseline_wait),
                f"{problems}",
            )
        )
    titled(
        f"2. Import of {n_events:,} events while another process writes notes (busy timeout {busy_ms} ms; "
        "a busy write is retried, its wait runs to its commit)",
        (
            "import",
            "import time",
            "note writes done",
            "busy errors",
            "other errors",
            "longest wait",
            "p95 wait",
            "longest wait vs baseline",
            "audit problems",
        ),
        rows,
    )
    return failures


# -- 3. SIGKILL loop ---------------------------------------------------------------------------------------


def kill_loop(tmp: Path, kills: int, per_round: int, seed: int) -> int:
    rng = random.Random(seed)
    source = write_import_file(tmp / "kill.jsonl", sessions=6, per_session=1000)
    totals: dict[str, dict] = {}
    failures = 0
    modes = ("import", "notes", "both")
    done, n = 0, 0
    while done < kills:
        mode = modes[n % len(modes)]
        todo = min(per_round, kills - done)
        round_dir = tmp / f"round-{n}"
        round_dir.mkdir()
        t0 = time.perf_counter()
        try:
            result = crash_round(
                round_dir, round_dir / "memory.db", rng, todo, mode, source if mode != "notes" else None
            )
        except AssertionError as exc:  # an agent that died of something else than the kill, or no kill landing
            print(f"  round {n} ({mode}) failed: {exc}")
            result = CrashRound(kills=todo)
            failures += 1
        row = totals.setdefault(
            mode, {"rounds": 0, "kills": 0, "finished": 0, "audits": 0, "resumed": 0, "seconds": 0.0, "mid": 0}
        )
        row["rounds"] += 1
        row["kills"] += result.kills
        row["finished"] += result.finished
        row["audits"] += result.audits
        row["seconds"] += time.perf_counter() - t0
        row["mid"] += sum(0 < s < len(source) for s in result.stored_after_kill)
        row["resumed"] += bool(result.resumed) and result.resumed.get("stored", 0) + result.resumed.get(
            "skipped", 0
        ) == len(source)
        for c in CATEGORIES:
            row[c] = row.get(c, 0) + len(result.problems[c])
            for p in result.problems[c][:3]:
                print(f"  {c}: {p}")
        failures += result.problem_count
        done += todo
        n += 1
    rows = []
    for mode, r in totals.items():
        rows.append(
            (
                {"import": "import (batches of 50)", "notes": "note edits", "both": "import + note edits"}[mode],
                f"{r['rounds']}",
                f"{r['kills']}",
                f"{r['mid']}" if mode != "notes" else "–",
                f"{r['audits']}",
                *(f"{r[c]}" for c in CATEGORIES),
                f"{r['resumed']} of {r['rounds']}" if mode != "notes" else "–",
                f"{r['seconds']:.0f} s",
            )
        )
    all_rounds = list(totals.values())
    rows.append(
        (
            "all",
            f"{sum(r['rounds'] for r in all_rounds)}",
            f"{sum(r['kills'] for r in all_rounds)}",
            f"{sum(r['mid'] for r in all_rounds)}",
            f"{sum(r['audits'] for r in all_rounds)}",
            *(f"{sum(r[c] for r in all_rounds)}" for c in CATEGORIES),
            "",
            f"{sum(r['seconds'] for r in all_rounds):.0f} s",
        )
    )
    titled(
        f"3. SIGKILL loop: {kills} kills at seeded random moments (seed {seed}), the store audited after each "
        f"(import file: {len(source):,} events in 6 sessions)",
        (
            "writer killed",
            "rounds",
            "kills",
            "mid-import",
            "audits",
            "integrity failures",
            "half notes",
            "sequence gaps",
            "index mismatches",
            "import resumed to the full file",
            "time",
        ),
        rows,
    )
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="part 1: how long each setting runs")
    parser.add_argument("--kills", type=int, default=70, help="part 3: SIGKILLs in all")
    parser.add_argument("--kills-per-round", type=int, default=10)
    parser.add_argument("--events", type=int, default=20_000, help="part 2: events imported")
    parser.add_argument(
        "--chunks", type=int, nargs="+", default=[MIN_ROWS + 1_000, 100_000], help="part 1: chunks of each store"
    )
    parser.add_argument("--parts", default="123", help="the parts to run (default: all three)")
    parser.add_argument("--busy-ms", type=int, default=500, help="part 2: the note writer's busy timeout")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--note-writer", nargs=3, metavar=("DB", "READY", "STOP"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.note_writer:
        report = asyncio.run(note_writer(*args.note_writer, args.busy_ms, pause=0.01))
        print(json.dumps(report), flush=True)
        return 0
    if min(args.chunks) < MIN_ROWS:
        parser.error(f"--chunks must be at least {MIN_ROWS:,} (the numpy BM25 path's threshold)")
    failures = {}
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        for n in args.chunks if "1" in args.parts else ():
            failures[f"reader beside a writer, {n:,} chunks"] = asyncio.run(
                reader_beside_writer(t, args.seconds, n, random.Random(args.seed))
            )
        if "2" in args.parts:
            failures["import beside a note writer"] = asyncio.run(import_beside_writer(t, args.events, args.busy_ms))
        if "3" in args.parts:
            failures["SIGKILL loop"] = kill_loop(t, args.kills, args.kills_per_round, args.seed)
    bad = {k: v for k, v in failures.items() if v}
    print("\n" + ("FAILED: " + ", ".join(f"{k}: {v}" for k, v in bad.items()) if bad else "all counts zero: ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
