"""Other agents' big files through the command line: ``oxmem events … --limit 200`` (the newest 200), a session's
first page from its start (``--offset 0``) and the next (``--after``), ``oxmem sessions --limit 50`` and its next
page, ``oxmem notes list … --limit 200`` and its next page — each a whole ``oxmem`` process, timed (median of 3)
with its peak RSS (``wait4``'s, per process). Beside each, the way the command read before in the same run: a
process that opens the file and calls the whole-list method (``recall``, ``list_sessions``, ``list_notes``), then
slices.

The files are :mod:`bench_formats`' (the tests' fixtures filled the way each agent writes): an Omega file with
``--omega`` messages (a quarter of them in conversation ``conv-00000``), a ZEKE file with ``--zeke`` memories of
scope ``persona``, an aidaemon file with ``--aidaemon`` events (a quarter in ``big-session``), built in a temporary
folder (``--folder DIR`` keeps and reuses them). Goals (issue "Instant answers on a file you opened before, and a
million rows without a wait", item 5): first page ≤ 200 ms, next page ≤ 50 ms, memory growth for a page ≤ 100 MB.
A process's time includes Python's start and oxmem's imports, measured alone (``oxmem --help``) and taken off in
the "page" column; growth is the peak RSS above that of ``oxmem --help``.

    python bench/bench_cli_pages.py [--omega 1000000] [--zeke 200000] [--aidaemon 500000] [--folder DIR]
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from bench_formats import build_aidaemon, build_omega, build_zeke  # noqa: E402
from report import table  # noqa: E402

#: what each measured process runs first: its memory read from /proc (``ru_maxrss`` would count the bench's own
#: memory, which a child has before it starts Python) and ``open_memory`` timed
PROBE = """
import sys, time
def mem(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":")) / 1024
opened = [0.0]
def timing(real):
    async def open_memory(*args, **kwargs):
        t = time.perf_counter()
        try:
            return await real(*args, **kwargs)
        finally:
            opened[0] += time.perf_counter() - t
    return open_memory
def said(took):
    sys.stderr.write(f"@bench {took} {opened[0]} {mem('VmHWM')} {mem('VmHWM') - start_rss} "
                     f"{mem('RssAnon') - start_anon}\\n")
"""
#: ``oxmem`` as a process that says, last on standard error, how long ``main`` took once imported, how much of it
#: opening the file took, its peak RSS and that peak's growth over what it had once imported
OXMEM = [sys.executable, "-c", PROBE + """
from oxmem_gui.cli import main, running
running.open_memory = timing(running.open_memory)
start_rss, start_anon, t = mem("VmRSS"), mem("RssAnon"), time.perf_counter()
try:
    code = main(sys.argv[1:])
finally:
    said(time.perf_counter() - t)
sys.exit(code)
"""]
ENV = {**os.environ, "OXMEM_EMBEDDING": "deterministic", "PYTHONPATH": str(ROOT)}
RUNS = 3

#: the whole-list read a command made before, as a process: the file opened, then the call, then a slice
BEFORE = PROBE + """
import asyncio
from oxmem_gui.core import api
async def go(path, what, arg):
    async with await timing(api.open_memory)(path, read_only=True, embedding="deterministic") as m:
        if what == "events":
            rows = await m.recall(arg, 200)
        elif what == "sessions":
            rows = (await m.list_sessions())[:50]
        else:
            rows = (await m.list_notes(arg))[:200]
        print(len(rows))
start_rss, start_anon, t = mem("VmRSS"), mem("RssAnon"), time.perf_counter()
asyncio.run(go(*sys.argv[1:4]))
said(time.perf_counter() - t)
"""


def timed(argv: list[str]) -> tuple[float, float, float, float, float, float, str]:
    """One process: its seconds; the seconds of its work once imported and of opening the file in it (the
    ``@bench`` line); its peak RSS, that peak's growth over what it had once imported and the growth of its
    anonymous memory (its heap: the rest is the file's pages, mapped or cached) (MB); its standard error."""
    start = time.perf_counter()
    done = subprocess.run(argv, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{shlex.join(argv[3:])} failed: {done.stderr}")
    said = [line for line in done.stderr.splitlines() if line.startswith("@bench ")]
    work, opened, peak, growth, anon = (float(v) for v in said[-1].split()[1:])
    return took, work, opened, peak, growth, anon, done.stderr


def median_of(argv: list[str]) -> tuple[float, float, float, float, float, float, str]:
    """:func:`timed`: the medians of :data:`RUNS` processes (the largest peak and growth)."""
    runs = [timed(argv) for _ in range(RUNS)]
    took, work, opened = (statistics.median(r[i] for r in runs) for i in range(3))
    return took, work, opened, max(r[3] for r in runs), max(r[4] for r in runs), max(r[5] for r in runs), runs[-1][6]


def cursor(err: str) -> list[str]:
    """The ``--after CURSOR`` of the ``more:`` line."""
    for line in err.splitlines():
        if line.startswith("more: "):
            return shlex.split(line.removeprefix("more: "))
    raise SystemExit(f"no more: line in {err!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--omega", type=int, default=1_000_000, help="Omega messages")
    parser.add_argument("--conversations", type=int, default=2_000)
    parser.add_argument("--zeke", type=int, default=200_000, help="ZEKE memories")
    parser.add_argument("--aidaemon", type=int, default=500_000, help="aidaemon events")
    parser.add_argument("--folder", type=Path, default=None, help="build (or reuse) the files here (default: a temp)")
    args = parser.parse_args()
    temp = None if args.folder else tempfile.TemporaryDirectory(prefix="oxmem-cli-pages-")
    folder = args.folder or Path(temp.name)  # type: ignore[union-attr]
    folder.mkdir(parents=True, exist_ok=True)
    try:
        run(folder, args)
    finally:
        if temp is not None:
            temp.cleanup()


def run(folder: Path, args: argparse.Namespace) -> None:
    omega, zeke, aidaemon = (folder / f"omega-{args.omega}.db", folder / f"zeke-{args.zeke}.db",
                             folder / f"aidaemon-{args.aidaemon}.db")  # fmt: skip
    builds = (
        (omega, lambda p: build_omega(p, args.omega, args.conversations)),
        (zeke, lambda p: build_zeke(p, args.zeke)),
        (aidaemon, lambda p: build_aidaemon(p, args.aidaemon)),
    )
    for path, build in builds:
        if not path.exists():
            t = time.perf_counter()
            print(f"building {path.name} …", file=sys.stderr, flush=True)
            build(path)
            print(f"  {time.perf_counter() - t:.0f} s, {path.stat().st_size / 2**20:,.0f} MiB", file=sys.stderr)
    start, _, _, start_rss, _, _, _ = median_of([*OXMEM, "--help"])
    rows = []

    def case(file: str, label: str, goal: float, path: Path, argv: list[str], before: tuple[str, str] | None) -> str:
        took, work, opened, peak, growth, anon, err = median_of([*OXMEM, "--db", str(path), *argv])
        page = work - opened
        was = ratio = "–"
        if before is not None:
            whole = [sys.executable, "-c", BEFORE, str(path), *before]
            _, old, old_opened, _, old_growth, old_anon, _ = median_of(whole)
            old -= old_opened
            was, ratio = f"{old * 1000:,.0f} ms, +{old_growth:,.0f} MB (heap +{old_anon:,.0f})", f"{old / page:,.1f}×"
        ok = "yes" if page * 1000 <= goal else "no"
        rows.append((file, label, shlex.join(["oxmem", *argv])[:58], f"{took * 1000:,.0f}",
                     f"{opened * 1000:,.0f}", f"{page * 1000:,.1f}", f"{goal:.0f}", f"{peak:,.0f}",
                     f"+{growth:,.0f}", f"+{anon:,.0f}", "yes" if growth <= 100 else "no", ok, was, ratio))  # fmt: skip
        return err

    for name, path, session in (("Omega", omega, "conv-00000"), ("aidaemon", aidaemon, "big-session")):
        case(name, "events: newest 200", 200, path, ["events", session, "--limit", "200"], ("events", session))
        err = case(name, "events: first page", 200, path, ["events", session, "--offset", "0", "--limit", "200"], None)
        case(name, "events: next page", 50, path, ["events", session, *cursor(err), "--limit", "200"], None)
        err = case(name, "sessions: first page", 200, path, ["sessions", "--limit", "50"], ("sessions", ""))
        case(name, "sessions: next page", 50, path, ["sessions", *cursor(err), "--limit", "50"], None)
    err = case("ZEKE", "notes: first page", 200, zeke, ["notes", "list", "persona", "--limit", "200"],
               ("notes", "persona"))  # fmt: skip
    case("ZEKE", "notes: next page", 50, zeke, ["notes", "list", "persona", *cursor(err), "--limit", "200"], None)
    case("ZEKE", "notes: --json first page", 200, zeke, ["--json", "notes", "list", "persona", "--limit", "200"], None)

    print(f"Omega {args.omega:,} messages, aidaemon {args.aidaemon:,} events, ZEKE {args.zeke:,} memories; median "
          f"of {RUNS} processes. process: the whole oxmem process, Python's start and oxmem's imports included "
          f"(alone, oxmem --help: {start * 1000:,.0f} ms, {start_rss:,.0f} MB); open: opening the file in it; page: "
          "the rest of the command — reading the page and printing it; growth: the peak RSS over what the process "
          "had once imported; heap: its anonymous memory's growth (the rest is the file's pages, mapped or "
          "cached)")  # fmt: skip
    header = ("file", "page", "command", "process ms", "open ms", "page ms", "goal ms", "peak MB", "growth", "heap",
              "growth ≤ 100 MB", "page ≤ goal", "before: page, growth (heap)", "speed-up")  # fmt: skip
    print(table(header, rows, rule=True))


if __name__ == "__main__":
    main()
