"""What the session browser's right side shows, without Qt: which session (or that the one shown was deleted), its
state as the agent records it, and the words of its header, its event line, its summary and its actions.

:class:`~.panel.SessionsPanel` is a thin view of it; the lists themselves are its table models, which page through
the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...core.api import NATIVE_FORMATS, Capabilities, Event, SessionStats
from ..words import plural

NO_SESSION = "No session selected"
NO_EVENT = "Select an event to see it in full"


@dataclass
class SessionsState:
    """The session the right side shows (None: none); the one shown until it was deleted (by the agent, as a
    rule), for the header to say so; the one this panel was last asked to delete; the shown session's state as
    the agent records it (``active``, ``closed``; None: unknown)."""

    shown: str | None = None
    gone: str | None = None
    deleting: str | None = None
    lifecycle: str | None = None

    def show(self, session_id: str | None) -> None:
        self.shown, self.gone, self.lifecycle = session_id, None, None

    def lost(self, session_id: str) -> None:
        """``session_id``, shown, is no longer in the file: nothing is shown, and the header says it went unless
        this panel deleted it."""
        self.show(None)
        self.gone = session_id if session_id != self.deleting else None

    def header(self, noun: str, stats: SessionStats | None, chunks: bool = True) -> str:
        """The right side's header: the session and its counts (its chunks where the format has any: ``chunks``),
        none, or the one deleted since it was shown."""
        if self.shown is None:
            if self.gone:
                return f"{noun.capitalize()} {self.gone} is no longer in the file: it was deleted since it was shown"
            return NO_SESSION.replace("session", noun)
        counts = f" · {plural(stats.event_count, 'event')}" if stats else ""
        if stats and chunks:
            counts += f" · {plural(stats.chunk_count, 'chunk')}"
        return f"{noun.capitalize()} {self.shown}{counts}"

    def event_line(self, event: Event | None, role: str) -> str:
        """The line above an event's JSON (``role``: how the list names its kind)."""
        if event is None:
            return NO_EVENT if self.shown is not None else ""
        return f"Event {event.sequence} of {self.shown} · {role} · {event.created_at}"

    def open_action(self, noun: str) -> tuple[str, str, str, str | None]:
        """For agents whose sessions open and close: the button's text, its accessible name, its tooltip and why
        it cannot act (None: it can)."""
        reopen = self.lifecycle == "closed"
        refusal = None if self.lifecycle is not None else f"This {noun} has no open or closed state in the file."
        if reopen:
            return (
                "Reopen",
                f"Reopen {noun}",
                f"Reopen it: the agent continues this {noun} with the sender's next message",
                refusal,
            )
        tip = f"Close it, as the agent's /forget does: the sender's next message starts a new {noun}"
        return "Close", f"Close {noun}", tip, refusal


def summary_fields(session_id: str | None, state: dict[str, Any] | None) -> tuple[str, str, str]:
    """The summary tab's epoch, upper sequence and text."""
    if not state:
        return "—", "—", "No rolling summary for this session." if session_id else ""
    return str(state.get("epoch")), str(state.get("upper_sequence")), str(state.get("summary", ""))


def delete_question(caps: Capabilities, session_id: str, stats: SessionStats, backup: str | None) -> str:
    """What deleting a session asks, in the format's words, with what goes and the backup taken."""
    if caps.format in NATIVE_FORMATS:
        text = (
            f"Delete session “{session_id}”?\n\nThis removes {plural(stats.event_count, 'event')} and "
            f"{plural(stats.chunk_count, 'chunk')} with their vectors and full-text rows, and its summary state."
        )
    else:  # another agent's: its own words, and what its schema keeps
        messages = plural(stats.event_count, "message")
        text = f"Delete {caps.session_noun} “{session_id}”?\n\nThis removes it with its {messages}"
        text += (
            "; what else the agent keeps that cites them stays, without the citation."
            if caps.format in CITING_FORMATS
            else "."
        )
    return text + _backup_line(backup)


#: formats whose other rows may cite a message of a deleted session (Omega's facts, aidaemon's facts and episodes)
CITING_FORMATS = ("omega", "aidaemon", "aidaemon-legacy")


def _backup_line(backup: str | None) -> str:
    return f"\n\nA backup was taken when editing was enabled: {backup}" if backup else ""


def turn_question(session_noun: str, session_id: str, lines: list[str], backup: str | None) -> str:
    """What deleting a turn asks: each item that goes (``lines``: seq, role and text, already cut), and the
    backup."""
    shown = lines[:12] + ([f"… and {len(lines) - 12} more"] if len(lines) > 12 else [])
    return (
        f"Delete {plural(len(lines), 'item')} of {session_noun} “{session_id}”?\n\nThe user's message, what answered "
        "it, and each tool call with its output:\n" + "\n".join(shown) + _backup_line(backup)
    )
