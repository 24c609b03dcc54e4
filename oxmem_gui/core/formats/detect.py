"""Which agent wrote a database: decided from the file's first bytes and its ``sqlite_master``, never its name.

Formats (their names are what ``oxmem info`` prints): ``oxmem`` (this project's store), ``oxydra`` (the Oxydra
agent's own file: the same tables plus its gateway tables or migrations this project does not know),
``oxydra-libsql`` (newer Oxydra, with libSQL's vector index), ``omega``, ``zeke``, ``aidaemon``,
``aidaemon-legacy`` (before v0.9: ``messages`` and ``scheduled_tasks``, no ``events``), ``openai-agents`` (the
OpenAI Agents SDK's ``SQLiteSession`` tables, found by their columns and foreign key), ``sqlite-unknown``
(readable SQLite of some other program), ``encrypted`` (not SQLite's header, bytes that look random: SQLCipher),
``not-sqlite``.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import apsw

from ..database import read_head
from ..store.migrations import available_migrations

SQLITE_HEADER = b"SQLite format 3\x00"

LABELS = {
    "oxmem": "oxmem store",
    "oxydra": "Oxydra memory",
    "oxydra-libsql": "Oxydra memory (libSQL vector index)",
    "omega": "Omega memory",
    "zeke": "ZEKE memory",
    "aidaemon": "aidaemon memory",
    "aidaemon-legacy": "aidaemon memory (before v0.9)",
    "openai-agents": "OpenAI Agents session store",
    "agno": "Agno memory",
    "mem0-history": "mem0 history",
    "langgraph-store": "LangGraph store",
    "langgraph-checkpoints": "LangGraph checkpoints",
    "sqlite-unknown": "SQLite database",
    "encrypted": "encrypted database",
    "not-sqlite": "not a SQLite database",
}
NATIVE_TABLES = ("sessions", "conversation_events", "session_state", "chunks", "chunks_vec", "chunks_fts")


def article(label: str) -> str:
    """``a`` or ``an`` before a format's label."""
    return "an" if label[:1].lower() in "aeiou" else "a"


def sniff_file(path: str | os.PathLike[str]) -> str | None:
    """``"not-sqlite"`` or ``"encrypted"`` from the first bytes; None for SQLite, an empty or a missing file."""
    p = Path(path).expanduser()
    try:
        head = read_head(p, 1024)  # never open-and-close a file SQLite holds locks on here
        size = p.stat().st_size
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    except OSError:
        return None
    if not head or head.startswith(SQLITE_HEADER):
        return None
    # SQLCipher encrypts every page, header included: whole pages of bytes that look random
    if size >= 1024 and size % 512 == 0 and _entropy(head) > 7.0:
        return "encrypted"
    return "not-sqlite"


def _entropy(data: bytes) -> float:
    """Shannon entropy in bits per byte (8.0 for random bytes; text is under 5)."""
    counts = Counter(data)
    n = len(data)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def quoted(name: str) -> str:
    """A table's name as SQL takes it."""
    return '"' + name.replace('"', '""') + '"'


def column_set(conn: apsw.Connection, table: str) -> set[str]:
    """The names of a table's columns (none for a table the file lacks)."""
    return {str(r[1]) for r in conn.execute(f"PRAGMA table_info({quoted(table)})").fetchall()}


#: the columns that tell the OpenAI Agents SDK's two session tables apart (their names are the program's choice)
AGENT_MESSAGE_COLUMNS = {"id", "session_id", "message_data", "created_at"}
AGENT_SESSION_COLUMNS = {"session_id", "created_at", "updated_at"}


def session_tables(conn: apsw.Connection) -> tuple[str, str] | None:
    """``(sessions, messages)``: the OpenAI Agents SDK's ``SQLiteSession`` tables in this file — a messages table
    of :data:`AGENT_MESSAGE_COLUMNS` whose foreign key on ``session_id`` names a table of
    :data:`AGENT_SESSION_COLUMNS` — or None."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    for messages in tables:
        if not column_set(conn, messages) >= AGENT_MESSAGE_COLUMNS:
            continue
        for row in conn.execute(f"PRAGMA foreign_key_list({quoted(messages)})").fetchall():
            sessions, column = str(row[2]), str(row[3])
            if column == "session_id" and sessions in tables and column_set(conn, sessions) >= AGENT_SESSION_COLUMNS:
                return sessions, messages
    return None


#: the columns of Agno's ``SqliteDb`` tables (``agno/db/sqlite/schemas.py``); their names are the program's choice
AGNO_COLUMNS = {
    "sessions": {"session_id", "session_type", "session_data", "agent_data", "created_at", "updated_at"},
    "runs": {"run_id", "session_id", "run_type", "run_index", "run_data", "created_at"},
    "memories": {"memory_id", "memory", "user_id", "topics", "created_at", "updated_at"},
}


@dataclass(frozen=True)
class AgnoTables:
    """Agno's tables in a file, each None where the file has none (Agno creates a table when first used)."""

    sessions: str | None
    runs: str | None
    memories: str | None


def agno_tables(conn: apsw.Connection) -> AgnoTables | None:
    """Agno's ``SqliteDb`` tables, found by :data:`AGNO_COLUMNS` (the first of each kind by name), or None when
    there are neither sessions nor memories."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    found: dict[str, str | None] = dict.fromkeys(AGNO_COLUMNS)
    for table in tables:
        columns = column_set(conn, table)
        for kind, wanted in AGNO_COLUMNS.items():
            if found[kind] is None and columns >= wanted:
                found[kind] = table
    if found["sessions"] is None and found["memories"] is None:
        return None
    return AgnoTables(found["sessions"], found["runs"], found["memories"])


#: the columns that tell mem0's change log apart (its table's name, ``history``, is fixed in mem0)
MEM0_HISTORY_COLUMNS = frozenset({"memory_id", "old_memory", "new_memory", "event", "is_deleted"})
#: the columns of LangGraph's ``store`` table and of its ``store_vectors`` (langgraph-checkpoint-sqlite 3.1.2,
#: ``store/sqlite/base.py`` 44–52, 77–86; their names are fixed in its SQL)
LANGGRAPH_STORE_COLUMNS = frozenset({"prefix", "key", "value", "created_at", "updated_at"})
LANGGRAPH_VECTOR_COLUMNS = frozenset({"prefix", "key", "field_name", "embedding"})


def mem0_history_tables(conn: apsw.Connection) -> bool:
    """Whether the file has mem0's change log: a ``history`` table with :data:`MEM0_HISTORY_COLUMNS`."""
    return column_set(conn, "history") >= MEM0_HISTORY_COLUMNS


def langgraph_store_tables(conn: apsw.Connection) -> bool:
    """Whether the file holds LangGraph's ``store`` table: :data:`LANGGRAPH_STORE_COLUMNS` — and, where
    ``store_vectors`` exists, :data:`LANGGRAPH_VECTOR_COLUMNS` (the columns tell its table from another ``store``)."""
    if not column_set(conn, "store") >= LANGGRAPH_STORE_COLUMNS:
        return False
    vectors = column_set(conn, "store_vectors")
    return not vectors or vectors >= LANGGRAPH_VECTOR_COLUMNS


#: the columns of ``SqliteSaver``'s ``checkpoints`` and ``writes`` tables (langgraph-checkpoint-sqlite 3.1.2,
#: ``checkpoint/sqlite/__init__.py`` 147–168; their names are fixed in its SQL). ``writes.task_path`` came later
#: (the ``ALTER TABLE`` of line 175): an older file lacks it, so it is not required.
LANGGRAPH_CHECKPOINT_COLUMNS = frozenset(
    {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint", "metadata"}
)
LANGGRAPH_WRITES_COLUMNS = frozenset(
    {"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "value"}
)


def langgraph_checkpoint_tables(conn: apsw.Connection) -> bool:
    """Whether the file holds LangGraph's ``SqliteSaver`` tables: ``checkpoints`` with
    :data:`LANGGRAPH_CHECKPOINT_COLUMNS` and, where ``writes`` exists, :data:`LANGGRAPH_WRITES_COLUMNS`."""
    if not column_set(conn, "checkpoints") >= LANGGRAPH_CHECKPOINT_COLUMNS:
        return False
    writes = column_set(conn, "writes")
    return not writes or writes >= LANGGRAPH_WRITES_COLUMNS


def detect_schema(conn: apsw.Connection) -> str:
    """The format of an open SQLite database, from its tables and their columns."""
    rows = conn.execute("SELECT type, name, coalesce(sql, '') FROM sqlite_master").fetchall()
    tables = {str(name) for kind, name, _ in rows if kind == "table"}

    def has(table: str, *columns: str) -> bool:
        return table in tables and set(columns) <= column_set(conn, table)

    if set(NATIVE_TABLES) <= tables or "memory_migrations" in tables:  # a store missing a table is damaged
        libsql = "libsql_vector_meta_shadow" in tables or any("libsql_vector_idx" in str(sql) for _, _, sql in rows)
        if libsql:
            return "oxydra-libsql"
        return "oxydra" if _oxydra_marks(conn, tables) else "oxmem"
    if has("conversations", "channel", "sender_id") and has("messages", "conversation_id") and "facts" in tables:
        return "omega"
    if has("memories", "scope", "ttl_seconds", "text"):
        return "zeke"
    if has("events", "session_id", "event_type", "data"):
        return "aidaemon"
    if has("messages", "session_id", "role", "content") and ("scheduled_tasks" in tables or "facts" in tables):
        return "aidaemon-legacy"
    if session_tables(conn) is not None:
        return "openai-agents"
    if agno_tables(conn) is not None:
        return "agno"
    if mem0_history_tables(conn):
        return "mem0-history"
    if langgraph_checkpoint_tables(conn):  # before the store: one file may hold both (the threads win)
        return "langgraph-checkpoints"
    if langgraph_store_tables(conn):
        return "langgraph-store"
    return "sqlite-unknown"


def _oxydra_marks(conn: apsw.Connection, tables: set[str]) -> bool:
    """The agent's own file rather than one this project made: its gateway tables, or migrations it recorded
    that this project does not have."""
    if {"gateway_sessions", "channel_session_mappings"} & tables:
        return True
    if "memory_migrations" not in tables:
        return True
    recorded = {r[0] for r in conn.execute("SELECT version FROM memory_migrations").fetchall()}
    return bool(recorded - {version for version, _ in available_migrations()})
