"""The SQL console beside a live agent: how closely a statement keeps its time limit, how fast it stops when told
(Ctrl-C, Cancel), and what reading a file in a rollback journal mode through a copy costs against reading it in
place — all in one run, on a file of ``--mb`` megabytes of notes (the baseline: the same statement on the file).

    python bench/bench_console.py [--mb 100] [--runs 5]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import apsw

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from report import table  # noqa: E402

from oxmem_gui.core import InvalidInputError, OperationCancelled  # noqa: E402
from oxmem_gui.core.store.sql_console import console, run_sql  # noqa: E402

FOREVER = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c, notes"
COUNT = "SELECT count(*), sum(length(text)) FROM notes"


def build(path: Path, mb: int) -> None:
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    with conn:
        conn.executemany("INSERT INTO notes (text) VALUES (?)", (("note " * 100,) for _ in range(mb * 2_000)))
    conn.close()


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "journal.db"
        build(path, args.mb)
        size = path.stat().st_size / 2**20
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)

        def limit() -> None:
            with contextlib.suppress(InvalidInputError):  # stopped at its limit, as measured
                run_sql(conn, FOREVER, seconds=1.0)

        def told() -> float:
            stop = threading.Event()
            worker = threading.Thread(target=lambda: _cancelled(conn, stop))
            worker.start()
            time.sleep(0.3)
            stop.set()
            return timed(lambda: worker.join())

        in_place = [timed(lambda: run_sql(conn, COUNT)) for _ in range(args.runs)]
        through_copy = [timed(lambda: console(conn, COUNT)) for _ in range(args.runs)]
        limits = [timed(limit) for _ in range(args.runs)]
        stops = [told() for _ in range(args.runs)]
        conn.close()
    base = statistics.median(in_place)
    rows = [
        (f"count and sum in place ({size:.0f} MiB file)", f"{base * 1000:.0f} ms", "1.00 (baseline)"),
        ("the same through the copy (rollback journal)", f"{statistics.median(through_copy) * 1000:.0f} ms",
         f"{statistics.median(through_copy) / base:.2f}"),
        ("a statement with a 1 s limit, until it is stopped", f"{statistics.median(limits) * 1000:.0f} ms",
         f"{statistics.median(limits) / base:.2f}"),
        ("Ctrl-C / Cancel until the statement has stopped", f"{statistics.median(stops) * 1000:.1f} ms",
         f"{statistics.median(stops) / base:.3f}"),
    ]  # fmt: skip
    print(table(("what", f"median of {args.runs}", "ratio"), rows, rule=True))


def _cancelled(conn: apsw.Connection, stop: threading.Event) -> None:
    with contextlib.suppress(OperationCancelled):
        run_sql(conn, FOREVER, stop=stop)


if __name__ == "__main__":
    main()
