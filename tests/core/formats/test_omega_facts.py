"""Editing Omega's facts (``core/formats/omega_facts.py``) on files built from Omega's own migration scripts: each
edit leaves the agent's invariants (its unique ``(sender_id, key)``, foreign keys, ``messages_fts`` untouched,
``_migrations`` as it was), a change the agent made meanwhile — in a real second process, with Omega's own SQL —
is a conflict and is kept, and bad input writes nothing."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from oxmem_gui.core import ConflictError, InvalidInputError, NotFoundError
from oxmem_gui.core.check import check_store
from oxmem_gui.core.memory import open_memory
from tests.core.formats import fixtures as fx

NAME = fx.OMEGA_FACTS[("4242", "name")]
DENTIST = fx.OMEGA_FACTS[("4242", "dentist")]
#: Omega's own writes (``store/facts.rs``: ``store_fact`` lines 16–18, ``delete_fact`` line 46), as the agent runs them
STORE_FACT = (
    "INSERT INTO facts (id, sender_id, key, value) VALUES (?, ?, ?, ?) "
    "ON CONFLICT(sender_id, key) DO UPDATE SET value = excluded.value, updated_at = datetime('now')"
)
DELETE_FACT = "DELETE FROM facts WHERE sender_id = ? AND key = ?"


@pytest.fixture
def omega(tmp_path: Path) -> Path:
    return fx.make_omega(tmp_path / "memory.db")


def rows(path: Path, sql: str, args: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def the_agent(path: Path, sql: str, args: tuple) -> None:
    """Omega writing to its file, as another process (Python's sqlite3, foreign keys on, as the agent sets)."""
    code = (
        "import sqlite3, sys, json; conn = sqlite3.connect(sys.argv[1]); conn.execute('PRAGMA foreign_keys = ON'); "
        "conn.execute(sys.argv[2], json.loads(sys.argv[3])); conn.commit(); conn.close()"
    )
    import json

    subprocess.run([sys.executable, "-c", code, str(path), sql, json.dumps(list(args))], check=True, timeout=60)


def invariants(path: Path, before_fts: list[tuple], before_migrations: list[tuple]) -> None:
    """What the agent relies on, after an edit."""
    report = asyncio.run(check_store(path))
    found = {f.check: (f.level, f.detail) for f in report.findings}
    assert report.ok, found
    assert found["unique keys"][0] == "ok" and found["foreign keys"][0] == "ok"
    assert rows(path, "SELECT id FROM messages_fts_docsize ORDER BY id") == before_fts
    assert rows(path, "SELECT name, applied_at FROM _migrations ORDER BY name") == before_migrations
    assert rows(path, "SELECT count(*) FROM (SELECT 1 FROM facts GROUP BY sender_id, key HAVING count(*) > 1)") == [
        (0,)
    ]


def run(path: Path, fn, read_only: bool = False):
    async def go():
        async with await open_memory(path, read_only=read_only) as m:
            return await fn(m)

    return asyncio.run(go())


def test_edit_add_delete_and_undo_keep_the_agents_invariants(omega: Path) -> None:
    fts = rows(omega, "SELECT id FROM messages_fts_docsize ORDER BY id")
    migrations = rows(omega, "SELECT name, applied_at FROM _migrations ORDER BY name")
    before = rows(omega, "SELECT * FROM facts WHERE id = ?", (DENTIST,))

    async def edit(m):
        loaded = await m.get_note("4242", DENTIST)
        return loaded, await m.update_note("4242", DENTIST, "dentist: Dr. Lemaire, Rue de Rivoli", expected=loaded)

    loaded, edited = run(omega, edit)
    assert (edited.note_id, edited.content, edited.created_at) == (
        DENTIST,
        "dentist: Dr. Lemaire, Rue de Rivoli",
        loaded.created_at,
    )
    fact = rows(omega, "SELECT id, sender_id, key, value, source_message_id, created_at FROM facts WHERE id = ?",
                (DENTIST,))  # fmt: skip
    assert fact == [(DENTIST, "4242", "dentist", "Dr. Lemaire, Rue de Rivoli", fx.OMEGA_MESSAGES[3],
                     "2026-02-02 08:12:45")]  # fmt: skip
    (updated,) = rows(omega, "SELECT updated_at FROM facts WHERE id = ?", (DENTIST,))[0]
    assert len(updated) == 19 and updated[10] == " "  # datetime('now'), as Omega's upsert writes it
    invariants(omega, fts, migrations)

    renamed = run(omega, lambda m: m.update_note("4242", DENTIST, "dentist_old: Dr. Moreau", expected=edited))
    assert rows(omega, "SELECT key, value FROM facts WHERE id = ?", (DENTIST,)) == [("dentist_old", "Dr. Moreau")]
    added = run(omega, lambda m: m.save_note("4242", "dentist: Dr. Petit"))
    assert rows(omega, "SELECT sender_id, key, value FROM facts WHERE id = ?", (added.note_id,)) == [
        ("4242", "dentist", "Dr. Petit")
    ]
    invariants(omega, fts, migrations)

    assert run(omega, lambda m: m.delete_notes("4242", [DENTIST], expected=[renamed])) == 1
    assert rows(omega, "SELECT count(*) FROM facts WHERE id = ?", (DENTIST,)) == [(0,)]
    invariants(omega, fts, migrations)

    # undo of the first edit: the fact back exactly as it was (id, key, value, source, both times)
    run(omega, lambda m: m.delete_notes("4242", [added.note_id], expected=[added]))
    run(omega, lambda m: m.restore_notes([loaded], expected={DENTIST: None}))
    assert rows(omega, "SELECT * FROM facts WHERE id = ?", (DENTIST,)) == before
    invariants(omega, fts, migrations)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.save_note("4242", "no colon here"), "a fact is written 'key: value'"),
        (lambda m: m.save_note("4242", "mood:   "), "a fact is written 'key: value'"),
        (lambda m: m.save_note("4242", "bike: blue", ["travel"]), "Omega's facts have no tags"),
        (lambda m: m.save_note("4242", "timezone: Europe/Lisbon"), "4242 already has a fact 'timezone'"),
        (lambda m: m.update_note("4242", DENTIST, "timezone: UTC"), "4242 already has a fact 'timezone'"),
        (lambda m: m.update_note("4242", "no-such-fact", "x: y"), "no fact 'no-such-fact' of '4242'"),
        (lambda m: m.update_note("77", DENTIST, "x: y"), "no fact"),  # another sender's fact
        (lambda m: m.set_note_tags("4242", [DENTIST], add=["x"]), "Omega's facts have no tags"),
        (lambda m: m.save_note("(all senders)", "x: y"), "is not a sender"),
    ],
)
def test_bad_input_is_refused_and_writes_nothing(omega: Path, call, message: str) -> None:
    before = digest(omega)
    with pytest.raises((InvalidInputError, NotFoundError), match=message.replace("(", r"\(").replace(")", r"\)")):
        run(omega, call)
    assert digest(omega) == before


def test_read_only_until_editing_is_enabled(omega: Path) -> None:
    before = digest(omega)
    with pytest.raises(Exception, match="is open read-only; enable editing to change it"):
        run(omega, lambda m: m.save_note("4242", "bike: blue"), read_only=True)
    assert digest(omega) == before


def test_the_agent_changing_a_fact_meanwhile_is_a_conflict_and_is_kept(omega: Path) -> None:
    loaded = run(omega, lambda m: m.get_note("4242", NAME), read_only=True)
    the_agent(omega, STORE_FACT, ("ignored-new-id", "4242", "name", "Marta Ribeiro"))
    with pytest.raises(ConflictError) as exc:
        run(omega, lambda m: m.update_note("4242", NAME, "name: Marta R.", expected=loaded))
    assert exc.value.current.content == "name: Marta Ribeiro"  # theirs, to show beside mine
    assert rows(omega, "SELECT value FROM facts WHERE id = ?", (NAME,)) == [("Marta Ribeiro",)]
    with pytest.raises(ConflictError):
        run(omega, lambda m: m.delete_notes("4242", [NAME], expected=[loaded]))
    assert rows(omega, "SELECT value FROM facts WHERE id = ?", (NAME,)) == [("Marta Ribeiro",)]


def test_a_fact_the_agent_deleted_meanwhile_is_a_conflict(omega: Path) -> None:
    loaded = run(omega, lambda m: m.get_note("4242", NAME), read_only=True)
    the_agent(omega, DELETE_FACT, ("4242", "name"))
    with pytest.raises(ConflictError, match="deleted by another program") as exc:
        run(omega, lambda m: m.update_note("4242", NAME, "name: Marta R.", expected=loaded))
    assert exc.value.current is None
    assert rows(omega, "SELECT count(*) FROM facts WHERE sender_id = '4242' AND key = 'name'") == [(0,)]
    # "save mine again" writes it back under its id
    mine = run(omega, lambda m: m.restore_notes([loaded], expected={NAME: None}))
    assert [n.content for n in mine] == ["name: Marta"]


def test_a_file_from_before_migration_003_keeps_one_set_of_facts(tmp_path: Path) -> None:
    """Omega's 001 facts: no sender, a unique key; the group is the shared one."""
    path = tmp_path / "old.db"
    conn = apsw.Connection(str(path))
    conn.execute((fx.OMEGA_UPSTREAM / "001_init.sql").read_text(encoding="utf-8"))
    conn.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT (datetime('now')))")
    conn.execute("INSERT INTO _migrations (name) VALUES ('001_init')")
    conn.execute("INSERT INTO facts (id, key, value) VALUES ('f1', 'name', 'Marta')")
    conn.close()
    added = run(path, lambda m: m.save_note("(all senders)", "city: Paris"))
    assert rows(path, "SELECT key, value FROM facts WHERE id = ?", (added.note_id,)) == [("city", "Paris")]
    with pytest.raises(InvalidInputError, match="already has a fact 'name'"):
        run(path, lambda m: m.save_note("(all senders)", "name: Other"))
    with pytest.raises(InvalidInputError, match="one set of facts for all senders"):
        run(path, lambda m: m.save_note("4242", "x: y"))
