"""Deleting an Omega conversation, the only edit of its conversations oxmem makes.

Omega (``omgagi/omega`` ce9f4b2) never deletes a conversation itself: it closes one after 120 idle minutes
(``store/conversations.rs``, ``close_conversation`` lines 111–127) and keeps it. Its schema decides how a deletion
must go (``migrations/001_init.sql``): ``messages.conversation_id`` references ``conversations(id)`` without a
cascade, so the messages go first; ``facts.source_message_id`` references ``messages(id)``, so a fact that cites a
deleted message keeps its value and loses the citation (NULL, as a fact stored without one); ``messages_fts``
follows through the file's own delete trigger (``004_fts5_recall.sql``: user rows only) — never a ``'rebuild'``.
A conversation Omega still has open (``status = 'active'``) is refused: the running agent appends to it, and a
message whose conversation is gone would fail its foreign key there. One transaction.
"""

from __future__ import annotations

import apsw

from ..database import write_transaction
from ..errors import InvalidInputError, NotFoundError


def delete_conversation(conn: apsw.Connection, conversation_id: str) -> int:
    """Delete a closed conversation and its messages; returns how many messages went with it."""
    with write_transaction(conn):
        found = conn.execute("SELECT status FROM conversations WHERE id = ?", (conversation_id,)).fetchall()
        if not found:
            raise NotFoundError(f"no conversation {conversation_id!r}")
        if found[0][0] == "active":
            raise InvalidInputError(
                f"conversation {conversation_id} is still open (Omega is using it; it closes after 120 idle "
                "minutes): delete it once it is closed; nothing was changed"
            )
        ids = "SELECT id FROM messages WHERE conversation_id = ?"
        conn.execute(
            f"UPDATE facts SET source_message_id = NULL WHERE source_message_id IN ({ids})", (conversation_id,)
        )
        count = conn.execute("SELECT count(*) FROM messages WHERE conversation_id = ?", (conversation_id,)).fetchall()
        conn.execute("DELETE FROM messages WHERE conversation_id = ?", (conversation_id,))
        conn.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
    return int(count[0][0])
