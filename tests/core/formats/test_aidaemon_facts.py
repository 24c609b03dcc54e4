"""Editing aidaemon's facts (``core/formats/aidaemon_facts.py``) on files built from aidaemon's own schema strings
(``upstream/aidaemon``, commit 39a1955), plaintext, legacy and SQLCipher-encrypted: each edit keeps the agent's
invariants (one active version per key, history rows, integrity, foreign keys), a change the agent made meanwhile —
in a real second process, with aidaemon's own SQL — is a conflict and is kept, bad input writes nothing, and no
plaintext of an encrypted file is ever left on disk."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from oxmem_gui.core import ConflictError, InvalidInputError, NotFoundError
from oxmem_gui.core.embeddings.backends import choose_backend
from oxmem_gui.core.errors import EmbeddingError, KeyRequiredError, ReadOnlyError
from oxmem_gui.core.formats import base
from oxmem_gui.core.formats.aidaemon_facts import canonical_key, embedding_text
from tests.core.formats import fixtures as fx
from tests.core.formats.aidaemon_files import (
    ACTIVE,
    BACKFILL,
    INSERT,
    NOW,
    RECALL,
    SUPERSEDE,
    TG,
    digest,
    invariants,
    rows,
    run,
    the_agent,
)
from tests.semantic import model_dir_or_skip

# -- editing a fact: a new version, history kept ------------------------------------------------------------


def test_an_edit_supersedes_the_loaded_version_and_inserts_the_new_one(current):
    model_dir_or_skip()

    async def edit(m):
        (tz,) = [n for n in await m.list_notes("user") if n.details["key"] == "timezone"]
        return tz, await m.update_note("user", tz.note_id, "timezone: Asia/Tokyo", expected=tz)

    loaded, new = run(current, edit)
    assert (loaded.note_id, new.note_id, new.content) == ("fact:3", "fact:8", "timezone: Asia/Tokyo")
    assert [h["value"] for h in new.details["history"]] == ["Europe/Berlin", "America/New_York", "Europe/London"]
    assert rows(current, ACTIVE, ("timezone",)) == [(8, "Asia/Tokyo")]
    old = rows(current, "SELECT superseded_at IS NOT NULL, value FROM facts WHERE id = 3")
    assert old == [(1, "Europe/Berlin")]
    fresh = rows(current, "SELECT source, recall_count, privacy, channel_id, length(embedding) FROM facts WHERE id = 8")
    assert fresh == [("user", 0, "global", None, 1536)]
    # aidaemon's vector of build_fact_embedding_text, from the same model
    text = embedding_text("user", "timezone", "Asia/Tokyo")
    assert text == "user - timezone: Asia/Tokyo. The user's timezone is Asia/Tokyo."
    (hexed,) = rows(current, "SELECT hex(embedding) FROM facts WHERE id = 8")[0]
    stored = np.frombuffer(bytes.fromhex(hexed), dtype="<f4")
    expected = choose_backend("semantic").backend.embed([text])[0]
    assert np.allclose(stored, expected, atol=1e-6) and abs(float(np.linalg.norm(stored)) - 1) < 1e-4
    invariants(current)


def test_without_the_model_the_new_version_waits_for_aidaemons_backfill(current, monkeypatch):
    def missing(*args, **kwargs):
        raise EmbeddingError("the semantic model is not installed")

    monkeypatch.setattr(base, "choose_backend", missing)
    unembedded = rows(current, BACKFILL)
    new = run(current, lambda m: m.update_note("user", "fact:3", "timezone: Asia/Tokyo"))
    assert new.details["embedded"] is False
    assert rows(current, "SELECT embedding IS NULL FROM facts WHERE id = 8") == [(1,)]
    # aidaemon's startup backfill embeds this row next; the superseded one it no longer looks at
    assert sorted(rows(current, BACKFILL)) == sorted([*unembedded, (8, "user", "timezone", "Asia/Tokyo")])
    assert (3, "user", "timezone", "Europe/Berlin") not in unembedded
    invariants(current)


def test_the_same_text_writes_nothing(current):
    before = digest(current)
    note = run(current, lambda m: m.get_note("user", "fact:3"))
    again = run(current, lambda m: m.update_note("user", "fact:3", " timezone :  Europe/Berlin ", expected=note))
    assert again.note_id == "fact:3" and digest(current) == before


def test_a_rename_onto_an_active_key_is_refused(current):
    before = digest(current)
    for text in ("name: Sam", "Name: Sam", "NAME : Sam"):  # exactly, and as aidaemon's canonical key
        with pytest.raises(InvalidInputError, match="user already has a fact 'name'"):
            run(current, lambda m, t=text: m.update_note("user", "fact:3", t))
    with pytest.raises(InvalidInputError, match="already has a fact 'timezone'"):
        run(current, lambda m: m.save_note("user", "TimeZone: UTC"))
    assert digest(current) == before
    assert canonical_key(" Dog-Name ") == "dog_name" and canonical_key("ümlaut key") == "mlaut_key"


def test_delete_supersedes_and_keeps_the_history(current):
    run(current, lambda m: m.delete_notes("user", ["fact:3"]))
    assert rows(current, ACTIVE, ("timezone",)) == []
    assert rows(current, "SELECT count(*) FROM facts WHERE key = 'timezone' AND superseded_at IS NOT NULL") == [(3,)]
    assert [n.details["key"] for n in run(current, lambda m: m.list_notes("user"))] == ["name"]
    invariants(current)


def test_a_new_fact_is_inserted_as_aidaemon_does(current):
    note = run(current, lambda m: m.save_note("user", "diet: vegetarian"))
    assert note.note_id == "fact:8" and note.user == "user"
    assert rows(current, "SELECT category, key, value, source, superseded_at FROM facts WHERE id = 8") == [
        ("user", "diet", "vegetarian", "user", None)
    ]
    invariants(current)


def test_undo_writes_the_old_value_back_as_one_more_version(current):
    async def edit_then_undo(m):
        tz = await m.get_note("user", "fact:3")
        new = await m.update_note("user", "fact:3", "zone: Asia/Tokyo", expected=tz)  # a rename, too
        back = await m.restore_notes([tz], expected={tz.note_id: None, new.note_id: new})
        return back, await m.list_notes("user")

    back, notes = run(current, edit_then_undo)
    assert [n.content for n in back] == ["timezone: Europe/Berlin"] and back[0].note_id == "fact:9"
    assert sorted(n.content for n in notes) == ["name: Sam", "timezone: Europe/Berlin"]
    assert rows(current, "SELECT id, key, value, superseded_at IS NOT NULL FROM facts WHERE id >= 8") == [
        (8, "zone", "Asia/Tokyo", 1),
        (9, "timezone", "Europe/Berlin", 0),
    ]
    invariants(current)


# -- the agent meanwhile -----------------------------------------------------------------------------------------


def test_the_agent_superseding_meanwhile_is_a_conflict_and_is_kept(current):
    async def scenario(m):
        loaded = await m.get_note("user", "fact:3")
        the_agent(
            current,
            (SUPERSEDE, (NOW, 3)),
            (INSERT, ("user", "timezone", "Asia/Seoul", "agent", NOW, NOW, None, "global", None)),
        )
        with pytest.raises(ConflictError) as info:
            await m.update_note("user", "fact:3", "timezone: Asia/Tokyo", expected=loaded)
        return info.value

    error = run(current, scenario)
    assert "changed by another program" in str(error) and "Asia/Seoul" in str(error)
    assert error.current.note_id == "fact:8" and error.current.content == "timezone: Asia/Seoul"
    assert rows(current, ACTIVE, ("timezone",)) == [(8, "Asia/Seoul")]
    assert rows(current, "SELECT count(*) FROM facts") == [(8,)]


def test_the_agent_forgetting_meanwhile_is_a_conflict(current):
    async def scenario(m):
        loaded = await m.get_note("user", "fact:4")
        the_agent(current, (SUPERSEDE, (NOW, 4)))
        with pytest.raises(ConflictError, match="deleted by another program") as info:
            await m.delete_notes("user", ["fact:4"], expected=[loaded])
        return info.value.current

    assert run(current, scenario) is None
    assert rows(current, "SELECT superseded_at FROM facts WHERE id = 4") == [(NOW,)]


def test_the_agent_recalling_a_fact_is_no_conflict(current):
    async def scenario(m):
        loaded = await m.get_note("user", "fact:3")
        the_agent(current, (RECALL, (NOW, 3)))
        return await m.update_note("user", "fact:3", "timezone: Asia/Tokyo", expected=loaded)

    assert run(current, scenario).content == "timezone: Asia/Tokyo"
    assert rows(current, "SELECT recall_count FROM facts WHERE id = 3") == [(3,)]


# -- bad input, read-only, episodes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda m: m.update_note("user", "fact:3", "timezone:"), "written 'key: value'"),
        (lambda m: m.update_note("user", "fact:3", "   "), "key: value"),
        (lambda m: m.save_note("user", "x: y", ["tag"]), "aidaemon's facts have no tags"),
        (lambda m: m.update_note("user", "fact:1", "timezone: UTC"), "no active fact 'fact:1'"),
        (lambda m: m.update_note("user", "fact:99", "timezone: UTC"), "no active fact 'fact:99'"),
        (lambda m: m.delete_notes("user", ["note-1"]), "named fact:<id>"),
        (lambda m: m.save_note("episodes", "x: y"), "episodes only from its own consolidation"),
        (lambda m: m.delete_notes("episodes", ["episode:1"]), "episodes only from its own consolidation"),
        (lambda m: m.forget("no-such-session"), "no session 'no-such-session'"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(current, call, message):
    before = digest(current)
    with pytest.raises((InvalidInputError, NotFoundError), match=message):
        run(current, call)
    assert digest(current) == before


def test_read_only_refuses_and_a_read_only_folder_too(current, tmp_path):
    before = digest(current)
    with pytest.raises(ReadOnlyError, match="enable editing"):
        run(current, lambda m: m.update_note("user", "fact:3", "timezone: UTC"), read_only=True)
    current.chmod(0o400)
    try:
        if os.geteuid() != 0:  # root writes a 0400 file anyway; the refusal is then SQLite's, tested elsewhere
            with pytest.raises(ReadOnlyError, match="read-only"):
                run(current, lambda m: m.update_note("user", "fact:3", "timezone: UTC"))
    finally:
        current.chmod(0o600)
    assert digest(current) == before


# -- encrypted: edits go into the encrypted file itself (sqlcipher3 is a test dependency) ---------------------------


@pytest.fixture
def encrypted(tmp_path: Path) -> Path:
    folder = tmp_path / "agent"
    folder.mkdir()
    return fx.make_encrypted_aidaemon(folder / "aidaemon.db")


def test_an_encrypted_file_is_edited_in_place_with_its_key(encrypted, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    listing = sorted(os.listdir(encrypted.parent))

    async def edits(m):
        tz = await m.get_note("user", "fact:3")
        new = await m.update_note("user", "fact:3", "timezone: Asia/Tokyo", expected=tz)
        listed = [r.session_id for r in await m.sessions_page()]
        await m.forget(TG)
        assert TG in listed and [r.session_id for r in await m.sessions_page()] == [s for s in listed if s != TG]
        return new, await m.list_notes("user")

    new, notes = run(encrypted, edits, key=fx.AIDAEMON_KEY)
    assert new.note_id == "fact:8" and "timezone: Asia/Tokyo" in [n.content for n in notes]  # the snapshot follows
    assert not encrypted.read_bytes().startswith(b"SQLite format 3")
    assert rows(encrypted, ACTIVE, ("timezone",), key=fx.AIDAEMON_KEY) == [(8, "Asia/Tokyo")]
    assert rows(encrypted, "SELECT count(*) FROM events WHERE session_id = ?", (TG,), key=fx.AIDAEMON_KEY) == [(0,)]
    invariants(encrypted, key=fx.AIDAEMON_KEY)
    assert sorted(os.listdir(encrypted.parent)) == listing  # no plaintext copy or sidecar left beside it
    assert os.listdir(tmp_path / "tmp") == []
    assert (encrypted.stat().st_mode & 0o777) == 0o600


def test_an_encrypted_backup_stays_encrypted_under_the_same_key(encrypted, tmp_path):
    backup = run(encrypted, lambda m: m.backup_to(tmp_path / "backups" / "a.db"), read_only=True, key=fx.AIDAEMON_KEY)
    assert not backup.read_bytes().startswith(b"SQLite format 3") and (backup.stat().st_mode & 0o777) == 0o600
    assert rows(backup, "SELECT count(*) FROM facts", key=fx.AIDAEMON_KEY) == [(7,)]


def test_an_encrypted_conflict_and_a_wrong_key_write_nothing(encrypted):
    with pytest.raises(KeyRequiredError, match="wrong key"):
        run(encrypted, lambda m: m.update_note("user", "fact:3", "timezone: UTC"), key="0" * 64)

    async def scenario(m):
        loaded = await m.get_note("user", "fact:3")
        the_agent(encrypted, (SUPERSEDE, (NOW, 3)), key=fx.AIDAEMON_KEY)
        with pytest.raises(ConflictError, match="deleted by another program"):
            await m.update_note("user", "fact:3", "timezone: UTC", expected=loaded)

    run(encrypted, scenario, key=fx.AIDAEMON_KEY)
    assert rows(encrypted, "SELECT count(*), max(id) FROM facts", key=fx.AIDAEMON_KEY) == [(7, 7)]
    assert rows(encrypted, ACTIVE, ("timezone",), key=fx.AIDAEMON_KEY) == []


def test_check_names_two_active_facts_of_one_key_when_the_index_is_gone(tmp_path, capsys):
    """``check`` said nothing on an aidaemon file whose ``idx_facts_active_unique`` was dropped and two rows of one
    key were active: the key aidaemon relies on is read from the rows, index or not."""
    import sqlite3

    from tests.cli._support import run as cli
    from tests.core.formats.fixtures import make_aidaemon

    db = make_aidaemon(tmp_path / "aidaemon.db")
    conn = sqlite3.connect(db)
    conn.execute("DROP INDEX idx_facts_active_unique")
    conn.commit()
    code, out, _ = cli(capsys, "--db", str(db), "check")
    assert code == 0 and "idx_facts_active_unique is missing: nothing enforces one active fact per category" in out
    conn.execute("UPDATE facts SET superseded_at = NULL WHERE id = 2")
    conn.commit()
    conn.close()
    code, out, _ = cli(capsys, "--db", str(db), "check")
    assert code == 1 and "facts (category, key) where superseded_at IS NULL: 1 values held by more than one row" in out
