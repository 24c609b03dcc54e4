"""Deleting an Omega conversation (``core/formats/omega_conversations.py``) on a file built from Omega's own
migrations: messages first, fact citations of them cleared, ``messages_fts`` kept right by the file's own trigger;
an open conversation, an unknown one and a read-only file are refused with nothing written."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from oxmem_gui.core import InvalidInputError, NotFoundError, ReadOnlyError
from oxmem_gui.core.check import check_store
from tests.cli._support import assert_one_error_line, build_demo, run_json
from tests.cli._support import run as cli
from tests.core.formats import fixtures as fx
from tests.core.formats.test_omega_facts import digest, rows, run, the_agent

C = fx.OMEGA_CONVERSATIONS


@pytest.fixture
def omega(tmp_path: Path) -> Path:
    return fx.make_omega(tmp_path / "memory.db")


def test_a_closed_conversation_goes_with_its_messages_and_the_index_follows(omega: Path) -> None:
    doomed = [r[0] for r in rows(omega, "SELECT rowid FROM messages WHERE conversation_id = ?", (C["dentist"],))]
    assert doomed == [1, 2, 3, 4]
    run(omega, lambda m: m.forget(C["dentist"]))
    assert rows(omega, "SELECT count(*) FROM conversations WHERE id = ?", (C["dentist"],)) == [(0,)]
    assert rows(omega, "SELECT count(*) FROM messages") == [(18,)]
    # the FTS index lost exactly the conversation's user messages (rowids 1 and 3), through Omega's trigger
    indexed = [r[0] for r in rows(omega, "SELECT id FROM messages_fts_docsize ORDER BY id")]
    assert indexed == [5, 7, 9, 11, 13, 15, 17, 19, 21]
    # the dentist fact cited message 3: it keeps its value and loses the citation; other citations stay
    assert rows(omega, "SELECT value, source_message_id FROM facts WHERE sender_id = '4242' AND key = 'dentist'") == [
        ("Dr. Moreau, Rue Oberkampf", None)
    ]
    assert rows(omega, "SELECT source_message_id FROM facts WHERE sender_id = '4242' AND key = 'home_airport'") == [
        (fx.OMEGA_MESSAGES[5],)
    ]
    report = asyncio.run(check_store(omega))
    found = {f.check: f.level for f in report.findings}
    assert report.ok and found["foreign keys"] == found["index sync"] == found["unique keys"] == "ok", found
    assert rows(omega, "PRAGMA foreign_key_check") == []


@pytest.mark.parametrize(
    ("conversation", "error", "message"),
    [
        (C["current"], InvalidInputError, "is still open"),
        ("no-such-conversation", NotFoundError, "no conversation 'no-such-conversation'"),
    ],
)
def test_an_open_or_unknown_conversation_is_refused(omega: Path, conversation: str, error, message: str) -> None:
    before = digest(omega)
    with pytest.raises(error, match=message):
        run(omega, lambda m: m.forget(conversation))
    assert digest(omega) == before


def test_read_only_until_editing_is_enabled(omega: Path) -> None:
    before = digest(omega)
    with pytest.raises(ReadOnlyError, match="enable editing"):
        run(omega, lambda m: m.forget(C["dentist"]), read_only=True)
    assert digest(omega) == before


# -- closing and reopening ----------------------------------------------------------------------------------------

#: Omega's own SQL (``store/conversations.rs`` at ce9f4b2): the conversation its next message continues, and /forget
OMEGA_ACTIVE = (
    "SELECT id FROM conversations WHERE channel = ? AND sender_id = ? AND project = ? AND status = 'active' "
    "AND datetime(last_activity) > datetime('now', ? || ' minutes') ORDER BY last_activity DESC LIMIT 1"
)
OMEGA_FORGET = (
    "UPDATE conversations SET status = 'closed', updated_at = datetime('now') "
    "WHERE channel = ? AND sender_id = ? AND project = ? AND status = 'active'"
)


def where(omega: Path, conversation: str) -> tuple:
    return rows(omega, "SELECT channel, sender_id, project FROM conversations WHERE id = ?", (conversation,))[0]


def test_closing_is_omegas_forget_and_a_reopened_conversation_is_the_one_omega_continues(omega: Path) -> None:
    place = where(omega, C["current"])
    assert where(omega, C["dentist"]) == place
    summary = rows(omega, "SELECT summary FROM conversations WHERE id = ?", (C["current"],))
    assert run(omega, lambda m: m.set_session_open(C["current"], False)) == "closed"
    assert rows(omega, "SELECT status, summary FROM conversations WHERE id = ?", (C["current"],)) == [
        ("closed", summary[0][0])
    ]
    assert rows(omega, OMEGA_ACTIVE, (*place, -120)) == []
    assert run(omega, lambda m: m.set_session_open(C["dentist"], True)) == "active"
    assert rows(omega, OMEGA_ACTIVE, (*place, -120)) == [(C["dentist"],)]
    fresh = rows(omega, "SELECT julianday('now') - julianday(last_activity) FROM conversations WHERE id = ?",
                 (C["dentist"],))[0][0]  # fmt: skip
    assert 0 <= fresh * 86400 < 60
    report = asyncio.run(check_store(omega))
    assert report.ok and rows(omega, "PRAGMA foreign_key_check") == []


@pytest.mark.parametrize(
    ("conversation", "open_", "error", "message"),
    [
        (C["dentist"], True, InvalidInputError, "already has an open conversation here"),
        (C["dentist"], False, InvalidInputError, "is already closed"),
        (C["current"], True, InvalidInputError, "is already open"),
        ("no-such-conversation", False, NotFoundError, "no conversation"),
    ],
)
def test_bad_close_or_reopen_writes_nothing(omega: Path, conversation: str, open_: bool, error, message: str) -> None:
    before = digest(omega)
    with pytest.raises(error, match=message):
        run(omega, lambda m: m.set_session_open(conversation, open_))
    assert digest(omega) == before


def test_omega_closing_it_meanwhile_is_said_and_nothing_is_written(omega: Path) -> None:
    the_agent(omega, OMEGA_FORGET, where(omega, C["current"]))  # the user sent /forget to Omega itself
    before = digest(omega)
    with pytest.raises(InvalidInputError, match="is already closed; nothing was changed"):
        run(omega, lambda m: m.set_session_open(C["current"], False))
    assert digest(omega) == before
    with pytest.raises(ReadOnlyError, match="enable editing"):
        run(omega, lambda m: m.set_session_open(C["dentist"], True), read_only=True)
    assert digest(omega) == before


def test_cli_closes_and_reopens_and_refuses_in_one_line(omega: Path, tmp_path: Path, capsys) -> None:
    db = ("--db", str(omega))
    assert run_json(capsys, *db, "close", C["current"]) == {"session": C["current"], "status": "closed"}
    assert run_json(capsys, *db, "reopen", C["dentist"]) == {"session": C["dentist"], "status": "active"}
    before = digest(omega)
    assert_one_error_line(*cli(capsys, *db, "reopen", C["current"]), f"open conversation here ({C['dentist']})")
    assert digest(omega) == before
    demo = build_demo(tmp_path / "demo")
    before = digest(demo)
    assert_one_error_line(*cli(capsys, "--db", str(demo), "close", "s1"), "sessions are never closed")
    assert digest(demo) == before


def test_a_file_from_before_omegas_status_column_refuses_closing_reopening_and_deleting(tmp_path: Path) -> None:
    """Before migration 003 Omega never closed a conversation, so none is known to be out of use."""
    import sqlite3

    path = tmp_path / "memory.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT (datetime('now')))")
    for name, sql in fx.OMEGA_MIGRATIONS[:2]:
        conn.executescript(sql)
        conn.execute("INSERT INTO _migrations (name) VALUES (?)", (name,))
    conn.execute("INSERT INTO conversations (id, channel, sender_id) VALUES ('c1', 'telegram', '4242')")
    conn.close()
    before = digest(path)
    for call in (lambda m: m.forget("c1"), lambda m: m.set_session_open("c1", False)):
        with pytest.raises(InvalidInputError, match="before Omega's migration 003"):
            run(path, call)
    assert run(path, lambda m: m.session_state("c1"), read_only=True) is None
    assert digest(path) == before
