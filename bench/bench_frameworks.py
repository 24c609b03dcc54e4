"""The frameworks' files at scale: the first and next page of sessions, of a large session's events and of a large
notes group, and the framework's own search, through the reader oxmem opens each with.

Each file starts as the framework's own code writes it (the tests' writers: the OpenAI Agents SDK's
``SQLiteSession``, Agno's ``SqliteDb``, LangGraph's ``SqliteStore``, mem0's ``SQLiteManager``), then is filled with
``--rows`` synthetic rows the way that code writes them: the SDK's items in one session, Agno's runs (10 messages
each) in one session and its memories for one user, LangGraph's items with 64-value vectors in one namespace,
mem0's changes (an ADD and three UPDATEs per memory). Files are kept in bench/out/ between runs. Goals (issue "Open
the memory of the agents most people run"): at 100k messages or memories, first page ≤ 200 ms, search p50 ≤ 100 ms.

    python bench/bench_frameworks.py [--rows 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the tests' writers
sys.path.insert(0, str(ROOT / "bench"))

from bench_formats import OUT, WORDS, ms, search_p50, text, two_pages  # noqa: E402
from report import table  # noqa: E402

from oxmem_gui.core.memory import open_memory  # noqa: E402
from oxmem_gui.core.store.notes import note_cursor  # noqa: E402

QUERIES = ["hotel", "invoice", "tomato", "weekly", "python", "seat"] * 3
T0 = 2_130_000_000  # 2037, seconds since 1970


def fill(path: Path, statements: list[tuple[str, list[tuple]]]) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    for sql, rows in statements:
        conn.executemany(sql, rows)
    conn.execute("COMMIT")
    conn.close()


def build_openai_agents(path: Path, rows: int) -> None:
    from tests.core.formats.test_openai_agents import HELLO, write

    write(path, {"hello": HELLO})
    rng = random.Random(1)
    items = []
    for i in range(rows):
        role = "user" if i % 4 == 0 else "assistant"
        items.append(("big", json.dumps({"role": role, "content": text(rng)})))
    fill(
        path,
        [
            ("INSERT INTO agent_sessions (session_id) VALUES (?)", [("big",)]),
            ("INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)", items),
        ],
    )


def build_agno(path: Path, rows: int) -> None:
    from tests.core.formats.test_agno import write

    write(path)
    rng = random.Random(2)
    runs = []
    for r in range(rows // 10):
        messages = [
            {"id": f"m{r}-{i}", "role": "user" if i % 2 == 0 else "assistant", "content": text(rng)} for i in range(10)
        ]
        data = {"run_id": f"r{r}", "session_id": "big", "messages": messages, "metrics": {"input_tokens": 10}}
        runs.append((f"r{r}", "big", "agent", "helper", "ana", "COMPLETED", r, json.dumps(data), T0 + r))
    memories = [
        (f"mem-{i:07d}", json.dumps(text(rng)), json.dumps(rng.sample(WORDS, 2)), "big", T0 + i, T0 + i)
        for i in range(rows)
    ]
    fill(
        path,
        [
            (
                "INSERT INTO agno_sessions (session_id, session_type, agent_id, user_id, created_at, updated_at) "
                "VALUES ('big', 'agent', 'helper', 'ana', ?, ?)",
                [(T0, T0 + rows)],
            ),
            (
                "INSERT INTO agno_runs (run_id, session_id, run_type, agent_id, user_id, status, run_index, run_data, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                runs,
            ),
            (
                "INSERT INTO agno_memories (memory_id, memory, topics, user_id, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                memories,
            ),
        ],
    )


def build_langgraph(path: Path, rows: int) -> None:
    from tests.core.formats.test_langgraph_store import write

    write(path, {("docs",): {"seed": {"text": "the namespace LangGraph made"}}})
    rng = random.Random(3)
    vectors = np.random.default_rng(3).standard_normal((rows, 64)).astype(np.float32)
    items, rows_v = [], []
    for i in range(rows):
        key = f"doc-{i:07d}"
        items.append(("docs.big", key, json.dumps({"text": text(rng)}).encode()))
        rows_v.append(("docs.big", key, "$", vectors[i].tobytes()))
    fill(
        path,
        [
            ("INSERT INTO store (prefix, key, value) VALUES (?, ?, ?)", items),
            ("INSERT INTO store_vectors (prefix, key, field_name, embedding) VALUES (?, ?, ?, ?)", rows_v),
        ],
    )


def build_mem0(path: Path, rows: int) -> None:
    import os
    import tempfile

    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-home-"))
    from mem0.memory.storage import SQLiteManager

    SQLiteManager(str(path)).close()
    rng = random.Random(4)
    changes = []
    for i in range(rows):
        memory, step = i // 4, i % 4
        old, new = (None, text(rng)) if step == 0 else (text(rng), text(rng))
        when = f"2037-01-{1 + memory % 28:02d}T10:00:{step:02d}+00:00"
        event = "ADD" if step == 0 else "UPDATE"
        changes.append((f"h{i}", f"mem-{memory:07d}", old, new, event, when, when, 0, "big", "user"))
    fill(
        path,
        [
            (
                "INSERT INTO history (id, memory_id, old_memory, new_memory, event, created_at, updated_at, "
                "is_deleted, actor_id, role) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                changes,
            )
        ],
    )


async def measure(name: str, path: Path, big_session: str | None, big_group: str | None) -> tuple:
    store = await open_memory(path, read_only=True, embedding="deterministic")
    try:
        first_sessions, next_sessions = await two_pages(
            store.sessions_page, lambda last: store.sessions_page(after=(last.updated_at, last.session_id))
        )
        first_events = next_events = first_notes = next_notes = float("nan")
        if big_session is not None:
            first_events, next_events = await two_pages(
                lambda: store.events_page(big_session), lambda last: store.events_page(big_session, last.sequence)
            )
        if big_group is not None:
            first_notes, next_notes = await two_pages(
                lambda: store.notes_page(big_group), lambda last: store.notes_page(big_group, note_cursor(last))
            )
        searches = []
        for r in store.retrievers():  # the framework's own search, and oxmem's keyword search over a session
            scope = big_group if r.scope == "notes" else big_session
            if scope is not None:
                t = time.perf_counter()
                await store.search(r.name, scope, QUERIES[0], 8)
                first = time.perf_counter() - t
                p50, _ = await search_p50(store, r.name, scope, QUERIES, {})
                searches.append(f"{r.name}: {ms(p50)} (first {ms(first)})")
        return (
            name, ms(first_sessions), ms(next_sessions), ms(first_events), ms(next_events), ms(first_notes),
            ms(next_notes), "; ".join(searches) or "–"
        )  # fmt: skip
    finally:
        await store.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="messages, memories or items per file")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    n = args.rows
    files: list[tuple[str, str, Callable[[Path, int], None], str | None, str | None]] = [
        ("OpenAI Agents SDK", "openai-agents", build_openai_agents, "big", None),
        ("Agno", "agno", build_agno, "big", "big"),
        ("LangGraph store", "langgraph", build_langgraph, None, "docs.big"),
        ("mem0 history", "mem0", build_mem0, "mem-0000000", "big"),
    ]
    rows: list[Any] = []
    for name, stem, build, session, group in files:
        path = OUT / f"{stem}-{n}.db"
        if not path.exists():
            print(f"building {path.name} …", flush=True)
            build(path, n)
        rows.append(asyncio.run(measure(name, path, session, group)))
    header = ("file", "sessions: first page", "next page", "events: first page", "next page", "notes: first page",
              "next page", "search p50 (the first query of a new reader)")  # fmt: skip
    print(table(header, rows, right=True, rule=True))


if __name__ == "__main__":
    main()
