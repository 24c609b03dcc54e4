"""Clearing an aidaemon session the way its ``/clear`` does (``core/formats/aidaemon_sessions.py``): its events and
summary go, its episodes and facts stay, the file stays sound; legacy messages too."""

from __future__ import annotations

from tests.core.formats.aidaemon_files import (
    NOW,
    TG,
    invariants,
    rows,
    run,
    the_agent,
)

# -- clearing a session (aidaemon's /clear) -------------------------------------------------------------------------


def test_forget_clears_events_and_the_summary_and_keeps_episodes_and_facts(current):
    the_agent(
        current,
        (
            "INSERT INTO conversation_summaries (session_id, summary, message_count, last_message_id, updated_at) "
            "VALUES (?, 's', 3, '3', ?)",
            (TG, NOW),
        ),
    )
    facts = rows(current, "SELECT id, key, value, superseded_at FROM facts")
    run(current, lambda m: m.forget(TG))
    assert rows(current, "SELECT count(*) FROM events WHERE session_id = ?", (TG,)) == [(0,)]
    assert rows(current, "SELECT count(*) FROM conversation_summaries") == [(0,)]
    assert rows(current, "SELECT count(*) FROM events") == [(10,)]
    assert rows(current, "SELECT count(*) FROM episodes WHERE session_id = ?", (TG,)) == [(1,)]
    assert rows(current, "SELECT id, key, value, superseded_at FROM facts") == facts
    assert TG not in [s.session_id for s in run(current, lambda m: m.sessions_page())]
    invariants(current)


def test_legacy_facts_are_edited_in_place_and_messages_cleared(legacy):
    note = run(legacy, lambda m: m.update_note("user", "fact:1", "name: Sam R."))
    assert note.note_id == "fact:1" and note.details["history"] == []
    assert rows(legacy, "SELECT key, value, source FROM facts WHERE id = 1") == [("name", "Sam R.", "user")]
    run(legacy, lambda m: m.delete_notes("user", ["fact:2"]))
    assert rows(legacy, "SELECT count(*) FROM facts WHERE id = 2") == [(0,)]
    (session,) = {r[0] for r in rows(legacy, "SELECT session_id FROM messages")}
    run(legacy, lambda m: m.forget(session))
    assert rows(legacy, "SELECT count(*) FROM messages") == [(0,)]
    assert rows(legacy, "SELECT count(*) FROM (SELECT 1 FROM facts GROUP BY category, key HAVING count(*) > 1)") == [
        (0,)
    ]
    assert rows(legacy, "PRAGMA integrity_check") == [("ok",)]
