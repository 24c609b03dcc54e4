"""The inspector stays responsive: event-loop stalls during a 10,000-event import and beside a live agent, and time
to first rows.

1. A 5 ms timer on the GUI thread records the longest gap between its ticks while 10,000 events are imported
   — through the inspector's operation (SQL and hashing on the store's worker thread), and, as the baseline, by
   the same work done on the GUI thread. Target: the longest stall ≤ 50 ms.
2. A store with 100,000 sessions and one session of 1,000,000 events: time from opening it to the first page of
   sessions on screen, and from selecting the big session to its first page of events.
3. Live refresh: a store of 100,000 chunks in one session, open read-only with that session selected and a search
   run, while ``tests.agent`` commits 2 events a second into it for 10 s (the window re-reads what it shows at
   each commit) — the longest stall and the refreshes, against the same 10 s with no writer. Target: ≤ 50 ms.

    QT_QPA_PLATFORM=offscreen python bench/bench_ui.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import apsw  # noqa: E402
import qasync  # noqa: E402
from PySide6.QtCore import QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402
from report import table  # noqa: E402

from oxmem_gui.core import MemoryStore  # noqa: E402
from oxmem_gui.core.store.events import store_records  # noqa: E402
from oxmem_gui.ui.context import StoreContext  # noqa: E402
from oxmem_gui.ui.main_window import MainWindow  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"


class StallMeter:
    def __init__(self) -> None:
        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self.tick)
        self.last = 0.0
        self.worst = 0.0

    def start(self) -> None:
        self.last, self.worst = time.perf_counter(), 0.0
        self.timer.start()

    def tick(self) -> None:
        now = time.perf_counter()
        self.worst = max(self.worst, now - self.last)
        self.last = now

    def stop(self) -> float:
        self.timer.stop()
        self.tick()
        return self.worst * 1000


def records(n: int) -> list[tuple[str, int, dict]]:
    return [
        (f"import-{i % 20}", i // 20 + 1, {"role": "user", "content": f"imported message {i} about topic {i % 97}"})
        for i in range(n)
    ]


async def import_stalls(tmp: Path) -> tuple[float, float, float, float]:
    ctx = StoreContext()
    meter = StallMeter()
    events = records(10_000)  # read before the clock starts, as the inspector reads a file on a thread
    # baseline: the same import done on the GUI thread (what the inspector must never do)
    store = await MemoryStore.open(tmp / "gui-thread.db", embedding="deterministic")
    meter.start()
    await asyncio.sleep(0.02)
    t = time.perf_counter()
    store_records(store._db.conn, events, store.backend)
    baseline_s = time.perf_counter() - t
    await asyncio.sleep(0.02)
    baseline = meter.stop()
    await store.aclose()
    # the inspector's way
    await ctx.set_store(await MemoryStore.open(tmp / "worker.db", embedding="deterministic"))
    meter.start()
    t = time.perf_counter()
    ctx.run(
        lambda progress, stop: ctx.store.store_many(records(10_000), lambda s, d, n: progress(d, n), stop),
        label="import",
        with_progress=True,
    )
    await ctx.wait_idle()
    worker_s = time.perf_counter() - t
    worst = meter.stop()
    await ctx.close()
    return baseline, baseline_s, worst, worker_s


def build_big(path: Path) -> None:
    if path.exists():
        return
    asyncio.run(_init(path))
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("BEGIN")
    conn.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) "
        "INSERT INTO sessions (session_id, updated_at) SELECT printf('session-%06d', i), "
        "datetime('2026-01-01', '+' || i || ' seconds') FROM n"
    )
    conn.execute("INSERT INTO sessions (session_id, updated_at) VALUES ('big', '2027-01-01 00:00:00')")
    conn.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000) "
        "INSERT INTO conversation_events (session_id, sequence, payload_json) SELECT 'big', i, "
        "json_object('role', 'user', 'content', 'message ' || i) FROM n"
    )
    conn.execute("COMMIT")
    conn.close()


async def _init(path: Path) -> None:
    async with await MemoryStore.open(path, embedding="deterministic"):
        pass


def build_chunks(path: Path, n: int = 100_000) -> None:
    if path.exists():
        return

    async def fill() -> None:
        async with await MemoryStore.open(path, embedding="deterministic") as store:
            words = "hotel flight seat aisle invoice rounding weekly metrics tomato garden report".split()

            def text(i: int) -> str:
                return f"turn {i} " + " ".join(words[(i * k) % 11] for k in range(1, 9))

            await store.store_many([("big", i, {"role": "user", "content": text(i)}) for i in range(1, n + 1)])

    asyncio.run(fill())


async def live_refresh(window: MainWindow, ctx: StoreContext, path: Path, tmp: Path) -> tuple[float, float, int]:
    """The longest stall over 10 s without and then with an agent writing 2 events/s; the refreshes it caused."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.processes import agent_report, start_agent

    await ctx.open(path, read_only=True, embedding="deterministic")
    await ctx.wait_idle()
    window.sessions.sessions_view.setCurrentIndex(window.sessions.sessions.index(0, 0))
    await ctx.wait_idle()
    window.show_panel("search")
    window.search.session.setCurrentText("big")
    window.search.query.setText("hotel seat")
    window.search.search()
    await ctx.wait_idle()
    window.show_panel("sessions")
    refreshes = 0

    def counted() -> None:
        nonlocal refreshes
        refreshes += 1

    ctx.external_change.connect(counted)
    meter = StallMeter()
    meter.start()
    await asyncio.sleep(10)
    quiet = meter.stop()
    agent = start_agent(path, "events", "--seconds", "10", "--rate", "2", "--session", "big", ready=tmp / "ready")
    meter.start()
    while agent.poll() is None:
        await asyncio.sleep(0.05)
    await ctx.wait_idle()
    live = meter.stop()
    agent_report(agent)
    await ctx.close()
    return quiet, live, refreshes


async def open_times(window: MainWindow, ctx: StoreContext, path: Path) -> tuple[float, float]:
    t = time.perf_counter()
    await ctx.open(path, read_only=True, embedding="deterministic")
    while not window.sessions.sessions.rows:
        await asyncio.sleep(0.001)
    first_sessions = time.perf_counter() - t
    await ctx.wait_idle()
    t = time.perf_counter()
    window.sessions.sessions_view.setCurrentIndex(window.sessions.sessions.index(0, 0))
    while not window.sessions.events.rows:
        await asyncio.sleep(0.001)
    first_events = time.perf_counter() - t
    await ctx.wait_idle()
    await ctx.close()
    return first_sessions, first_events


def main() -> None:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    OUT.mkdir(exist_ok=True)
    big = OUT / "ui-100k-sessions-1m-events.db"
    build_big(big)
    with tempfile.TemporaryDirectory() as tmp:
        baseline, baseline_s, worst, worker_s = loop.run_until_complete(import_stalls(Path(tmp)))
        ctx = StoreContext()
        window = MainWindow(ctx, QSettings(str(Path(tmp) / "s.ini"), QSettings.Format.IniFormat))
        window.show()
        first_sessions, first_events = loop.run_until_complete(open_times(window, ctx, big))
        chunks = OUT / "ui-100k-chunks.db"
        build_chunks(chunks)
        quiet, live, refreshes = loop.run_until_complete(live_refresh(window, ctx, chunks, Path(tmp)))
        window.close()
    loop.close()  # qasync's executor threads end before Qt's objects go (else Qt aborts at exit)
    rows = [
        (
            "longest stall, 10,000-event import on the GUI thread",
            f"{baseline:,.0f} ms",
            f"import {baseline_s:.2f} s",
            "1.00 (baseline)",
        ),
        (
            "longest stall, 10,000-event import as an operation",
            f"{worst:,.0f} ms",
            f"import {worker_s:.2f} s",
            f"{worst / baseline:.3f}",
        ),
        ("open 100,000 sessions → first page on screen", f"{first_sessions * 1000:,.0f} ms", "", ""),
        ("select a 1,000,000-event session → first events", f"{first_events * 1000:,.0f} ms", "", ""),
        ("longest stall, 10 s open on 100,000 chunks, no writer", f"{quiet:,.0f} ms", "", "1.00 (baseline)"),
        (
            "longest stall, 10 s beside an agent writing 2 events/s",
            f"{live:,.0f} ms",
            f"{refreshes} refreshes",
            f"{live / quiet:.2f}",
        ),
    ]
    headers = ("measure", "result", "", "ratio")
    print(table(headers, rows))


if __name__ == "__main__":
    main()
