"""Closing, reopening and deleting an Omega conversation.

Omega (``omgagi/omega`` ce9f4b2) never deletes a conversation itself: it closes one after 120 idle minutes
(``store/conversations.rs``, ``close_conversation`` lines 111–127) and keeps it. Its schema decides how a deletion
must go (``migrations/001_init.sql``): ``messages.conversation_id`` references ``conversations(id)`` without a
cascade, so the messages go first; ``facts.source_message_id`` references ``messages(id)``, so a fact that cites a
deleted message keeps its value and loses the citation (NULL, as a fact stored without one); ``messages_fts``
follows through the file's own delete trigger (``004_fts5_recall.sql``: user rows only) — never a ``'rebuild'``.
A conversation Omega still has open (``status = 'active'``) is refused: the running agent appends to it, and a
message whose conversation is gone would fail its foreign key there. One transaction.

Closing is Omega's own ``/forget`` (``close_current_conversation``, lines 129–147): ``UPDATE conversations SET
status = 'closed', updated_at = datetime('now') WHERE id = ? AND status = 'active'`` — the summary stays as it is
(Omega writes one only when its idle sweep closes a conversation). Reopening is the other half of Omega's own
lifecycle: a conversation it continues is ``status = 'active'`` with ``last_activity`` and ``updated_at`` set to
``datetime('now')`` (``get_or_create_conversation``, lines 12–60), so the sender's next message lands in it (its
idle sweep closes it again after 120 minutes, as any other). Refused when the same channel, sender and project
already have an open conversation: Omega continues only one. A file from before Omega's migration 003 has no
status: Omega did not close conversations then, so none of them is closed, reopened or deleted here.
"""

from __future__ import annotations

import apsw

from ..database import write_transaction
from ..errors import InvalidInputError, NotFoundError


def delete_conversation(conn: apsw.Connection, conversation_id: str) -> int:
    """Delete a closed conversation and its messages; returns how many messages went with it."""
    with write_transaction(conn):
        if _conversation(conn, conversation_id)[0] == "active":
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


def _has_status(conn: apsw.Connection) -> bool:
    return "status" in {r[1] for r in conn.execute("PRAGMA table_info(conversations)")}


def _conversation(conn: apsw.Connection, conversation_id: str) -> tuple:
    """``(status, channel, sender_id, project)`` of a conversation. A file from before migration 003 is refused:
    Omega did not close conversations then, so any of them may still be in use."""
    if not _has_status(conn):
        raise InvalidInputError(
            "this file's conversations have no status (before Omega's migration 003): none is known to be closed; "
            "nothing was changed"
        )
    found = conn.execute(
        "SELECT status, channel, sender_id, project FROM conversations WHERE id = ?", (conversation_id,)
    ).fetchall()
    if not found:
        raise NotFoundError(f"no conversation {conversation_id!r}")
    return found[0]


def conversation_status(conn: apsw.Connection, conversation_id: str) -> str | None:
    """``status`` of the conversation (None: none such, or no status column before migration 003)."""
    if not _has_status(conn):
        return None
    found = conn.execute("SELECT status FROM conversations WHERE id = ?", (conversation_id,)).fetchall()
    return str(found[0][0]) if found and found[0][0] is not None else None


def set_conversation_open(conn: apsw.Connection, conversation_id: str, open_: bool) -> str:
    """Close (Omega's ``/forget``) or reopen a conversation; returns its new status. One transaction."""
    with write_transaction(conn):
        status, channel, sender, project = _conversation(conn, conversation_id)
        if open_ == (status == "active"):
            raise InvalidInputError(
                f"conversation {conversation_id} is already {'open' if open_ else 'closed'}; nothing was changed"
            )
        if not open_:
            conn.execute(
                "UPDATE conversations SET status = 'closed', updated_at = datetime('now') "
                "WHERE id = ? AND status = 'active'",
                (conversation_id,),
            )
            return "closed"
        other = conn.execute(
            "SELECT id FROM conversations WHERE channel = ? AND sender_id = ? AND project = ? AND status = 'active' "
            "AND id != ?",
            (channel, sender, project, conversation_id),
        ).fetchall()
        if other:
            raise InvalidInputError(
                f"{sender} already has an open conversation here ({other[0][0]}); Omega continues only one: close "
                "it first; nothing was changed"
            )
        conn.execute(
            "UPDATE conversations SET status = 'active', last_activity = datetime('now'), "
            "updated_at = datetime('now') WHERE id = ?",
            (conversation_id,),
        )
        return "active"
