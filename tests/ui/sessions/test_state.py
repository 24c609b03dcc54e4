"""The session browser's state without Qt (ui/sessions/state.py): the session shown, one deleted since it was
shown (and not by this panel), the header, the event line, the summary tab's fields, the open/close action and
what deleting asks, in each format's words."""

from __future__ import annotations

from oxmem_gui.core.api import Capabilities, Event, SessionStats
from oxmem_gui.ui.sessions.state import NO_EVENT, NO_SESSION, SessionsState, delete_question, summary_fields

STATS = SessionStats(event_count=12, last_sequence=12, chunk_count=1)
EVENT = Event(7, "2020-03-01T10:00:00Z", {"role": "user", "content": "hi"})


def test_the_header_names_the_session_shown_with_its_counts_in_the_formats_noun():
    state = SessionsState()
    assert state.header("session", None) == NO_SESSION and state.header("conversation", None) == (
        "No conversation selected"
    )
    state.show("cli:alice:1")
    assert state.header("session", STATS) == "Session cli:alice:1 · 12 events · 1 chunk"
    assert state.header("conversation", STATS, chunks=False) == "Conversation cli:alice:1 · 12 events"
    assert state.header("conversation", None) == "Conversation cli:alice:1"


def test_a_session_deleted_elsewhere_is_said_one_deleted_here_is_not():
    state = SessionsState()
    state.show("a")
    state.lifecycle = "closed"
    state.lost("a")
    assert (state.shown, state.gone, state.lifecycle) == (None, "a", None)
    assert state.header("session", None) == "Session a is no longer in the file: it was deleted since it was shown"
    state.show("b")
    assert state.gone is None
    state.deleting = "b"
    state.lost("b")
    assert state.gone is None and state.header("session", None) == NO_SESSION


def test_the_event_line_and_the_summary_fields():
    state = SessionsState()
    assert state.event_line(None, "") == ""
    state.show("s")
    assert state.event_line(None, "") == NO_EVENT
    assert state.event_line(EVENT, "user") == "Event 7 of s · user · 2020-03-01T10:00:00Z"
    assert summary_fields("s", None) == ("—", "—", "No rolling summary for this session.")
    assert summary_fields(None, None) == ("—", "—", "")
    assert summary_fields("s", {"epoch": 2, "upper_sequence": 40, "summary": "Alice flies to Lisbon"}) == (
        "2",
        "40",
        "Alice flies to Lisbon",
    )


def test_the_open_action_follows_the_agents_state():
    state = SessionsState()
    state.show("c")
    assert state.open_action("conversation")[0] == "Close"
    assert state.open_action("conversation")[3] == "This conversation has no open or closed state in the file."
    state.lifecycle = "active"
    text, name, tip, refusal = state.open_action("conversation")
    assert (text, name, refusal) == ("Close", "Close conversation", None) and tip.startswith("Close it, as the agent")
    state.lifecycle = "closed"
    assert state.open_action("conversation")[:2] == ("Reopen", "Reopen conversation")


def test_deleting_asks_in_the_formats_words_and_names_the_backup():
    native = delete_question(Capabilities(format="oxmem", label="oxmem store"), "s1", STATS, None)
    assert native == (
        "Delete session “s1”?\n\nThis removes 12 events and 1 chunk with their vectors and full-text rows, and its "
        "summary state."
    )
    omega = Capabilities(format="omega", label="Omega memory", session_noun="conversation")
    asked = delete_question(omega, "c1", SessionStats(1, 1, 0), "/backups/m.db")
    assert asked.startswith("Delete conversation “c1”?\n\nThis removes it with its 1 message; ")
    assert asked.endswith("\n\nA backup was taken when editing was enabled: /backups/m.db")
