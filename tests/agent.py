"""A stand-in for a live agent, run as its own process: ``python -m tests.agent DB MODE [options]``.

It writes to the store through its own connection, as the agent beside the inspector would, and prints one JSON
line when it stops: what it wrote and any error. Modes:

* ``events``: store one event per transaction in session ``--session`` (default ``agent:live``) for
  ``--seconds``, starting after the session's last sequence, ``--rate`` events a second (default: at full speed);
* ``note USER NOTE_ID TEXT``: update one note (what the agent's own memory tool does), once;
* ``run SCHEDULE_ID``: record a run of a schedule and reschedule it, once;
* ``hold SECONDS``: hold the write lock (``BEGIN IMMEDIATE``) that long, then commit — a slow agent transaction;
* ``import FILE``: import a JSON Lines file in batches (for the crash tests; it is killed midway);
* ``serve``: one write per line of standard input, a JSON object ``{"op": "store", "session", "sequence",
  "text"}`` or ``{"op": "forget", "session"}``, each answered by one line ``ok`` once committed (or the error),
  until standard input closes — a writer a test drives step by step.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from datetime import datetime, timedelta, timezone

import apsw

from oxmem_gui.core import MemoryStore, OxmemError
from oxmem_gui.core.store.jsonl import read_jsonl


async def main(argv: list[str]) -> dict:
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("mode", choices=("events", "note", "run", "hold", "import", "notes", "serve"))
    parser.add_argument("args", nargs="*")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rate", type=float, default=0.0, help="events mode: events per second (0: as fast as it can)")
    parser.add_argument("--session", default="agent:live")
    parser.add_argument("--ready", help="a file to create once the agent has started writing")
    parser.add_argument("--stop", help="events mode: stop (and report) as soon as this file exists")
    args = parser.parse_args(argv)
    if args.mode == "hold":
        conn = apsw.Connection(args.db)
        conn.execute("BEGIN IMMEDIATE")  # the write lock, on any SQLite file
        _ready(args.ready)
        time.sleep(float(args.args[0]))
        conn.execute("COMMIT")
        conn.close()
        return {"held": float(args.args[0])}
    store = await MemoryStore.open(args.db, embedding="deterministic")
    try:
        if args.mode == "events":
            return await _events(store, args)
        if args.mode == "note":
            user, note_id, text = args.args
            note = await store.update_note(user, note_id, text, ["agent"])
            return {"note_id": note.note_id, "updated_at": note.updated_at}
        if args.mode == "notes":
            return await _notes(store, args)
        if args.mode == "serve":
            return await _serve(store)
        if args.mode == "run":
            now = datetime.now(timezone.utc)
            run, schedule = await store.schedules.record_run(
                args.args[0], started_at=now - timedelta(seconds=3), finished_at=now, status="success", output="ok"
            )
            return {"run_id": run.run_id, "updated_at": schedule.updated_at}
        records = await asyncio.to_thread(read_jsonl, args.args[0])
        _ready(args.ready)
        result = await store.import_events(records, batch_events=int(args.args[1]) if len(args.args) > 1 else 500)
        return {"stored": result.stored, "skipped": result.skipped}
    finally:
        await store.aclose()


async def _events(store: MemoryStore, args: argparse.Namespace) -> dict:
    sessions = {s.session_id: s.last_sequence for s in await store.list_sessions()}
    sequence = sessions.get(args.session) or 0
    written, errors = 0, []
    deadline = time.monotonic() + args.seconds
    while time.monotonic() < deadline and not (args.stop and os.path.exists(args.stop)):
        sequence += 1
        try:
            await store.store(
                args.session, sequence, {"role": "user", "content": f"live event {sequence} hotel booking alfama"}
            )
            written += 1
        except OxmemError as exc:
            errors.append(str(exc))
            sequence -= 1
        if written == 1:
            _ready(args.ready)
        if args.rate:
            await asyncio.sleep(1 / args.rate)
    return {"written": written, "last_sequence": sequence, "errors": errors}


async def _notes(store: MemoryStore, args: argparse.Namespace) -> dict:
    """Save and rewrite notes of user ``args.args[0]`` in a loop (the crash tests kill it midway)."""
    user = args.args[0]
    saved = 0
    deadline = time.monotonic() + args.seconds
    note = await store.save_note(user, "note 0 " + "word " * 300, ["t0"])
    _ready(args.ready)
    while time.monotonic() < deadline:
        saved += 1
        note = await store.update_note(user, note.note_id, f"note {saved} " + "word " * 300, [f"t{saved}"])
        if saved % 3 == 0:
            note = await store.save_note(user, f"another note {saved}", ["x"])
    return {"saved": saved}


async def _serve(store: MemoryStore) -> dict:
    done = 0
    for line in sys.stdin:
        step = json.loads(line)
        try:
            if step["op"] == "store":
                await store.store(step["session"], step["sequence"], {"role": "user", "content": step["text"]})
            else:
                await store.forget(step["session"])
            print("ok", flush=True)
        except OxmemError as exc:
            print(f"error: {exc}", flush=True)
        done += 1
    return {"steps": done}


def _ready(path: str | None) -> None:
    if path:
        open(path, "w").close()


if __name__ == "__main__":
    try:
        report = asyncio.run(main(sys.argv[1:]))
    except OxmemError as exc:
        report = {"error": str(exc)}
    print(json.dumps(report), flush=True)
