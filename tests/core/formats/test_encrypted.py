"""SQLCipher files through ``formats.encrypted``: the decrypted in-memory snapshot (passphrase, raw hex and quoted
keys), wrong or missing keys, edits written through to the encrypted file, and encrypted backups."""

from __future__ import annotations

import hashlib
import os
import sys

import apsw
import pytest

from oxmem_gui.core.errors import KeyRequiredError, StoreOpenError
from oxmem_gui.core.formats.encrypted import decrypt_to_memory, encrypted_backup, need_key_message, write_through
from tests.core.formats import fixtures as fx

sqlcipher3 = pytest.importorskip("sqlcipher3")  # a test dependency (pyproject [test])

SQLITE_HEADER = b"SQLite format 3\x00"
FACT = (
    "INSERT INTO facts (category, key, value, created_at, updated_at) VALUES ('pref', ?, ?, '2026-01-01', '2026-01-01')"
)


@pytest.fixture
def encrypted(tmp_path):
    folder = tmp_path / "agent"
    folder.mkdir()
    return fx.make_encrypted_aidaemon(folder / "aidaemon.db")


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def agent_writes(path, key, *statements):
    """The agent, writing to its encrypted file with its own SQLCipher connection."""
    conn = sqlcipher3.connect(str(path), isolation_level=None)
    try:
        conn.execute("PRAGMA key = '" + key.replace("'", "''") + "'")
        for sql, args in statements:
            conn.execute(sql, args)
    finally:
        conn.close()


def test_the_snapshot_holds_the_plain_content_and_leaves_the_file_as_it_was(encrypted, tmp_path):
    plain = apsw.Connection(str(fx.make_aidaemon(tmp_path / "plain.db")))
    before, listing = digest(encrypted), sorted(os.listdir(encrypted.parent))
    snapshot = decrypt_to_memory(encrypted, fx.AIDAEMON_KEY)
    for table in ("events", "facts", "episodes"):
        query = f"SELECT * FROM {table} ORDER BY id"
        assert snapshot.execute(query).fetchall() == plain.execute(query).fetchall(), table
    assert snapshot.execute("SELECT count(*) FROM facts").fetchall() == [(7,)]
    assert snapshot.filename == ""  # in memory: no plaintext file behind it
    assert digest(encrypted) == before and sorted(os.listdir(encrypted.parent)) == listing  # no -wal, -shm left
    snapshot.close()
    plain.close()


def test_a_wrong_or_missing_key_is_a_key_error(encrypted):
    assert need_key_message(encrypted) == (
        "aidaemon.db is encrypted — provide the key (--key, or the OXMEM_DB_KEY environment variable); it looks "
        "like a SQLCipher database, such as aidaemon keeps"
    )
    with pytest.raises(KeyRequiredError) as caught:
        decrypt_to_memory(encrypted, "0" * 64)
    assert str(caught.value).startswith("wrong key for aidaemon.db: SQLCipher could not decrypt it (")
    for key in ("", fx.AIDAEMON_KEY + "\x00"):
        with pytest.raises(KeyRequiredError) as caught:
            decrypt_to_memory(encrypted, key)
        assert str(caught.value) == need_key_message(encrypted)


@pytest.mark.parametrize(
    ("pragma", "key"),
    [
        ("PRAGMA key = \"x'" + "ab" * 32 + "'\"", "x'" + "ab" * 32 + "'"),  # a raw key, as SQLCipher takes it
        ("PRAGMA key = 'it''s \"quoted\"'", 'it\'s "quoted"'),  # quotes in a passphrase
    ],
)
def test_raw_hex_keys_and_passphrases_with_quotes_open(tmp_path, pragma, key):
    path = tmp_path / "other.db"
    conn = sqlcipher3.connect(str(path), isolation_level=None)
    conn.execute(pragma)
    conn.execute("CREATE TABLE t (v TEXT)")
    conn.execute("INSERT INTO t VALUES ('secret value')")
    conn.close()
    assert not path.read_bytes().startswith(SQLITE_HEADER)
    snapshot = decrypt_to_memory(path, key)
    assert snapshot.execute("SELECT v FROM t").fetchall() == [("secret value",)]
    snapshot.close()


def test_an_edit_goes_into_the_encrypted_file_and_the_snapshot_follows(encrypted):
    snapshot = decrypt_to_memory(encrypted, fx.AIDAEMON_KEY)

    def edit(conn, key, value):
        conn.execute(FACT, (key, value))
        return conn.execute("PRAGMA foreign_keys").fetchall()[0][0]

    assert write_through(snapshot, encrypted, fx.AIDAEMON_KEY, edit, "pager", "less") == 1  # foreign keys on
    assert snapshot.execute("SELECT value FROM facts WHERE key = 'pager'").fetchall() == [("less",)]
    assert not encrypted.read_bytes().startswith(SQLITE_HEADER)
    again = decrypt_to_memory(encrypted, fx.AIDAEMON_KEY)
    assert again.execute("SELECT count(*) FROM facts").fetchall() == [(8,)]
    snapshot.close()
    again.close()


def test_a_refused_edit_still_refreshes_the_snapshot_with_the_agents_rows(encrypted):
    snapshot = decrypt_to_memory(encrypted, fx.AIDAEMON_KEY)
    agent_writes(encrypted, fx.AIDAEMON_KEY, (FACT, ("shell", "zsh")))
    assert snapshot.execute("SELECT count(*) FROM facts WHERE key = 'shell'").fetchall() == [(0,)]  # not followed

    def refused(conn):
        raise ValueError("changed by another program")

    with pytest.raises(ValueError, match="changed by another program"):
        write_through(snapshot, encrypted, fx.AIDAEMON_KEY, refused)
    assert snapshot.execute("SELECT value FROM facts WHERE key = 'shell'").fetchall() == [("zsh",)]
    snapshot.close()


def test_a_backup_is_encrypted_under_the_same_key_and_private(encrypted, tmp_path):
    target = tmp_path / "backups" / "nested" / "copy.db"
    assert encrypted_backup(encrypted, fx.AIDAEMON_KEY, target) == target
    assert (target.stat().st_mode & 0o777) == 0o600
    assert not target.read_bytes().startswith(SQLITE_HEADER)
    copy = decrypt_to_memory(target, fx.AIDAEMON_KEY)
    assert copy.execute("SELECT count(*), max(id) FROM facts").fetchall() == [(7, 7)]
    copy.close()
    with pytest.raises(KeyRequiredError, match="^wrong key for copy.db"):
        decrypt_to_memory(target, "f" * 64)


def test_without_the_sqlcipher_binding_the_error_says_what_to_install(encrypted, monkeypatch):
    monkeypatch.setitem(sys.modules, "sqlcipher3", None)  # import sqlcipher3 raises ImportError
    with pytest.raises(StoreOpenError) as caught:
        decrypt_to_memory(encrypted, fx.AIDAEMON_KEY)
    assert str(caught.value) == (
        "aidaemon.db is encrypted: opening it needs the optional SQLCipher binding "
        "(pip install 'oxmem-gui[sqlcipher]', or pip install sqlcipher3)"
    )
    assert not isinstance(caught.value, KeyRequiredError)
