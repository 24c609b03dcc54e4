"""Clearing an aidaemon session, the way aidaemon's ``/clear`` does.

aidaemon (``davo20019/aidaemon`` at 39a1955, ``src/state/sqlite/messages.rs`` lines 146–182, ``clear_session``)
deletes a session's rows from its canonical tables, ``DELETE FROM events WHERE session_id = ?`` and
``DELETE FROM conversation_summaries WHERE session_id = ?``, skipping a table the file lacks; before v0.9
(commit 164e7a3, ``clear_session`` in ``src/state.rs``) it was ``DELETE FROM messages WHERE session_id = ?``.
Episodes and facts learnt from the session stay, as they do in aidaemon. oxmem runs the statements for every
table of both layouts the file has, in one ``BEGIN IMMEDIATE`` transaction.
"""

from __future__ import annotations

from typing import Any

from ..database import write_transaction
from ..errors import NotFoundError
from .aidaemon_rows import table_names

CLEARED_TABLES = ("events", "conversation_summaries", "messages")


def clear_session(conn: Any, session_id: str) -> int:
    """Delete ``session_id``'s events (or legacy messages) and its conversation summary; the rows deleted."""
    with write_transaction(conn):
        tables = table_names(conn) & set(CLEARED_TABLES)
        if not any(
            conn.execute(f"SELECT 1 FROM {t} WHERE session_id = ? LIMIT 1", (session_id,)).fetchall()
            for t in tables & {"events", "messages"}
        ):
            raise NotFoundError(f"no session {session_id!r}")
        deleted = 0
        for table in CLEARED_TABLES:
            if table in tables:
                deleted += conn.execute(f"SELECT count(*) FROM {table} WHERE session_id = ?", (session_id,)).fetchall()[
                    0
                ][0]
                conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
    return int(deleted)
