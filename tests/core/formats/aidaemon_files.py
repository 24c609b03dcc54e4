"""aidaemon's files as the edit tests use them: aidaemon's own statements, and reading or writing the file from a
second process as the agent does (the files themselves: the `current` and `legacy` fixtures, conftest.py)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
from pathlib import Path

from oxmem_gui.core.memory import open_memory

TG = "telegram:123456789"
#: aidaemon's own statements (facts.rs at 39a1955): upsert_fact's supersede (line 480) and insert (line 489),
#: bump_fact_recall (line 72)
SUPERSEDE = "UPDATE facts SET superseded_at = ? WHERE id = ?"
INSERT = (
    "INSERT INTO facts (category, key, value, source, created_at, updated_at, recall_count, channel_id, privacy, "
    "embedding) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?)"
)
RECALL = "UPDATE facts SET recall_count = recall_count + 1, last_recalled_at = ? WHERE id IN (?)"
NOW = "2037-11-24T09:00:00.000000001+00:00"
#: what aidaemon reads: get_facts (facts.rs line 757) and backfill_fact_embeddings (mod.rs line 462)
ACTIVE = "SELECT id, value FROM facts WHERE category = 'user' AND key = ? AND superseded_at IS NULL"
BACKFILL = "SELECT id, category, key, value FROM facts WHERE embedding IS NULL AND superseded_at IS NULL"


def rows(path: Path, sql: str, args: tuple = (), key: str | None = None) -> list[tuple]:
    """Read ``path`` in a second process (sqlite3, or sqlcipher3 with ``key``): never a handle here."""
    code = (
        "import sys, json\n"
        "key = sys.argv[3] or None\n"
        "if key:\n    import sqlcipher3 as lib\nelse:\n    import sqlite3 as lib\n"
        "conn = lib.connect(sys.argv[1])\n"
        "if key: conn.execute(f\"PRAGMA key = '{key}'\")\n"
        "print(json.dumps(conn.execute(sys.argv[2], json.loads(sys.argv[4])).fetchall()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path), sql, key or "", json.dumps(list(args))],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return [tuple(r) for r in json.loads(done.stdout)]


def the_agent(path: Path, *statements: tuple[str, tuple], key: str | None = None) -> None:
    """aidaemon writing to its file from another process, in one transaction, foreign keys on."""
    code = (
        "import sys, json\n"
        "key = sys.argv[2] or None\n"
        "if key:\n    import sqlcipher3 as lib\nelse:\n    import sqlite3 as lib\n"
        "conn = lib.connect(sys.argv[1], isolation_level=None)\n"
        "if key: conn.execute(f\"PRAGMA key = '{key}'\")\n"
        "conn.execute('PRAGMA foreign_keys = ON'); conn.execute('BEGIN IMMEDIATE')\n"
        "for sql, args in json.loads(sys.argv[3]): conn.execute(sql, args)\n"
        "conn.execute('COMMIT'); conn.close()\n"
    )
    payload = json.dumps([[sql, list(args)] for sql, args in statements])
    subprocess.run([sys.executable, "-c", code, str(path), key or "", payload], check=True, timeout=60)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(path: Path, fn, read_only: bool = False, key: str | None = None):
    async def go():
        async with await open_memory(path, read_only=read_only, key=key, embedding="deterministic") as m:
            return await fn(m)

    return asyncio.run(go())


def invariants(path: Path, key: str | None = None) -> None:
    """What aidaemon relies on: the file is sound, one active version per (category, key), no foreign key broken."""
    assert rows(path, "PRAGMA integrity_check", key=key) == [("ok",)]
    assert rows(path, "PRAGMA foreign_key_check", key=key) == []
    assert rows(
        path,
        "SELECT count(*) FROM (SELECT 1 FROM facts WHERE superseded_at IS NULL GROUP BY category, key "
        "HAVING count(*) > 1)",
        key=key,
    ) == [(0,)]
