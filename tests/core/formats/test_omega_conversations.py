"""Deleting an Omega conversation (``core/formats/omega_conversations.py``) on a file built from Omega's own
migrations: messages first, fact citations of them cleared, ``messages_fts`` kept right by the file's own trigger;
an open conversation, an unknown one and a read-only file are refused with nothing written."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from oxmem_gui.core import InvalidInputError, NotFoundError, ReadOnlyError
from oxmem_gui.core.check import check_store
from tests.core.formats import fixtures as fx
from tests.core.formats.test_omega_facts import digest, rows, run

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
